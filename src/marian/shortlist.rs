//! Binary lexical shortlists (`lex.50.50.<pair>.s2t.bin`) and the per-sentence candidate set.
//!
//! Layout (marian-dev `data/shortlist.h`): six `u64` (magic, checksum, firstNum, bestNum,
//! wordToOffsetSize, shortListsSize), `u64 wordToOffset[]`, `u32 shortLists[]`. Unlike Bergamot,
//! which skips the checks for shortlists passed as memory, every file is verified: magic, exact
//! size, Marian's checksum, and offsets and ids within bounds.

use super::binary::FormatError;
use crate::pack::Bytes;

pub const MAGIC: u64 = 0xF11A_48D5_0134_17F5;
const HEADER: usize = 48;

/// A verified shortlist table, read in place from the file's bytes (in memory or in a pack's map).
#[derive(Clone, Debug)]
pub struct Shortlist {
    first_num: usize,
    best_num: usize,
    bytes: Bytes,
    n_off: usize,
}

fn err<T>(msg: impl Into<String>) -> Result<T, FormatError> {
    Err(FormatError(msg.into()))
}

fn u64_at(b: &[u8], i: usize) -> u64 {
    let mut w = [0u8; 8];
    w.copy_from_slice(&b[i..i + 8]);
    u64::from_le_bytes(w)
}

/// Marian's `util::hashMem` over `u64` words with `std::hash<uint64_t>` (the identity in
/// libstdc++) and boost's `hash_combine`.
pub fn checksum(words: impl Iterator<Item = u64>) -> u64 {
    let mut seed = 0u64;
    for v in words {
        seed ^= v.wrapping_add(0x9e37_79b9).wrapping_add(seed << 6).wrapping_add(seed >> 2);
    }
    seed
}

/// A shortlist file in Marian's layout: `lists[s]` are source id `s`'s candidate target ids
/// (each sorted, as `marian-conv` writes them), `first_num` and `best_num` as in the header.
pub fn write(first_num: u64, best_num: u64, lists: &[Vec<u32>]) -> Vec<u8> {
    let mut offsets = Vec::with_capacity(lists.len() + 1);
    offsets.push(0u64);
    let mut n = 0u64;
    for l in lists {
        n += l.len() as u64;
        offsets.push(n);
    }
    let mut body = Vec::with_capacity(32 + 8 * offsets.len() + 4 * n as usize);
    for v in [first_num, best_num, offsets.len() as u64, n] {
        body.extend_from_slice(&v.to_le_bytes());
    }
    offsets.iter().for_each(|o| body.extend_from_slice(&o.to_le_bytes()));
    lists.iter().flatten().for_each(|t| body.extend_from_slice(&t.to_le_bytes()));
    let words = body.len() / 8;
    let sum = checksum((0..words).map(|i| u64_at(&body, 8 * i)));
    let mut out = MAGIC.to_le_bytes().to_vec();
    out.extend_from_slice(&sum.to_le_bytes());
    out.extend_from_slice(&body);
    out
}

impl Shortlist {
    /// Reads and verifies a shortlist for a model with the given vocabulary sizes.
    pub fn parse(b: &[u8], src_vocab: usize, trg_vocab: usize) -> Result<Shortlist, FormatError> {
        if b.len() < HEADER {
            return err(format!("{} bytes is too short for the 48-byte header", b.len()));
        }
        if u64_at(b, 0) != MAGIC {
            return err("wrong magic number: this is not a binary Marian shortlist (lex.*.s2t.bin)");
        }
        let (sum, first, best, n_off, n_list) =
            (u64_at(b, 8), u64_at(b, 16), u64_at(b, 24), u64_at(b, 32), u64_at(b, 40));
        let expected = n_off
            .checked_mul(8)
            .and_then(|o| n_list.checked_mul(4).and_then(|l| o.checked_add(l)))
            .and_then(|x| x.checked_add(HEADER as u64));
        if expected != Some(b.len() as u64) {
            return err(format!(
                "header promises {n_off} offsets and {n_list} entries, which does not match the file size {} (truncated?)",
                b.len()
            ));
        }
        let words = (b.len() - 16) / 8;
        let actual = checksum((0..words).map(|i| u64_at(b, 16 + 8 * i)));
        if actual != sum {
            return err("checksum mismatch: the shortlist is corrupted");
        }
        let n_off = n_off as usize;
        let n_list = n_list as usize;
        if n_off != src_vocab + 1 {
            return err(format!(
                "made for a source vocabulary of {} pieces, the model's has {src_vocab}",
                n_off.saturating_sub(1)
            ));
        }
        let offsets: Vec<u64> = (0..n_off).map(|i| u64_at(b, HEADER + 8 * i)).collect();
        let base = HEADER + 8 * n_off;
        let lists: Vec<u32> = (0..n_list)
            .map(|i| {
                let at = base + 4 * i;
                u32::from_le_bytes([b[at], b[at + 1], b[at + 2], b[at + 3]])
            })
            .collect();
        if offsets.windows(2).any(|w| w[0] > w[1]) || offsets.last() != Some(&(n_list as u64)) {
            return err("offsets are out of order or do not end at the list size");
        }
        if let Some(bad) = lists.iter().find(|&&id| id as usize >= trg_vocab) {
            return err(format!("target id {bad} is outside the target vocabulary of {trg_vocab} pieces"));
        }
        if first as usize > trg_vocab {
            return err(format!("firstNum {first} exceeds the target vocabulary of {trg_vocab}"));
        }
        Ok(Shortlist { first_num: first as usize, best_num: best as usize, bytes: Bytes::from_vec(b.to_vec()), n_off })
    }

    /// A table [`Shortlist::parse`] verified when it was packed: the pack's checksum vouches for
    /// the rest, so only the header and the size are checked again.
    pub fn from_packed(bytes: Bytes, src_vocab: usize) -> Result<Shortlist, FormatError> {
        let b = &bytes[..];
        if b.len() < HEADER || u64_at(b, 0) != MAGIC {
            return err("the packed shortlist has no shortlist header");
        }
        let (first, best, n_off, n_list) = (u64_at(b, 16), u64_at(b, 24), u64_at(b, 32), u64_at(b, 40));
        if n_off != src_vocab as u64 + 1 || (HEADER as u64 + 8 * n_off + 4 * n_list) != b.len() as u64 {
            return err("the packed shortlist does not fit the model");
        }
        Ok(Shortlist { first_num: first as usize, best_num: best as usize, bytes, n_off: n_off as usize })
    }

    /// The file's bytes (what a pack stores).
    pub fn bytes(&self) -> &[u8] {
        &self.bytes
    }

    fn offset(&self, i: usize) -> usize {
        u64_at(&self.bytes, HEADER + 8 * i) as usize
    }

    fn list(&self, w: usize) -> impl Iterator<Item = u32> + '_ {
        let base = HEADER + 8 * self.n_off;
        let b = &self.bytes[base + 4 * self.offset(w)..base + 4 * self.offset(w + 1)];
        b.chunks_exact(4).map(|c| u32::from_le_bytes([c[0], c[1], c[2], c[3]]))
    }

    pub fn first_num(&self) -> usize {
        self.first_num
    }

    pub fn best_num(&self) -> usize {
        self.best_num
    }

    /// The candidate target ids of one sentence, sorted (marian-dev
    /// `BinaryShortlistGenerator::generate`, applied to this sentence alone so that the result
    /// never depends on the batch): ids `0..firstNum`, the source ids themselves when source and
    /// target share a vocabulary, every listed target of each source id, then the smallest unused
    /// ids from `firstNum` up until the count is a multiple of 8.
    pub fn candidates(&self, src: &[u32], shared_vocab: bool, trg_vocab: usize) -> Vec<u32> {
        let mut selected = vec![false; trg_vocab];
        for s in selected.iter_mut().take(self.first_num) {
            *s = true;
        }
        for &w in src {
            let w = w as usize;
            if shared_vocab && w < trg_vocab {
                selected[w] = true;
            }
            if w + 1 < self.n_off {
                for t in self.list(w) {
                    selected[t as usize] = true;
                }
            }
        }
        let mut count = selected.iter().filter(|&&s| s).count();
        if count == 0 {
            // Only a shortlist with firstNum 0 and no entries gets here; `</s>` keeps the search
            // able to stop.
            selected[0] = true;
            count = 1;
        }
        for s in selected.iter_mut().skip(self.first_num) {
            if count % 8 == 0 {
                break;
            }
            if !*s {
                *s = true;
                count += 1;
            }
        }
        selected.iter().enumerate().filter(|(_, s)| **s).map(|(i, _)| i as u32).collect()
    }
}

#[cfg(test)]
pub(crate) mod tests {
    use super::*;

    /// A valid shortlist file for `lists[src]` (for tests of readers and of the generator).
    pub(crate) fn build(first: u64, lists: &[Vec<u32>]) -> Vec<u8> {
        write(first, 50, lists)
    }

    #[test]
    fn candidates_follow_marian() {
        let lists = vec![vec![], vec![], vec![30, 31], vec![5], vec![]];
        let sl = Shortlist::parse(&build(3, &lists), 5, 40).unwrap();
        // first 3, source ids 2 and 4 (shared vocab), lists of 2: 30, 31 → {0,1,2,4,30,31}, then
        // pad with 3, 5 → 8 ids.
        assert_eq!(sl.candidates(&[2, 4, 0], true, 40), vec![0, 1, 2, 3, 4, 5, 30, 31]);
        let c = sl.candidates(&[3], false, 40);
        assert_eq!(c.len() % 8, 0);
        assert!(c.contains(&5) && !c.contains(&30));
    }

    #[test]
    fn corruption_is_detected() {
        let good = build(3, &[vec![1], vec![2, 3], vec![]]);
        assert!(Shortlist::parse(&good, 3, 10).is_ok());
        assert!(Shortlist::parse(&good, 4, 10).unwrap_err().0.contains("source vocabulary"));
        assert!(Shortlist::parse(&good, 3, 3).unwrap_err().0.contains("outside"));
        for cut in 0..good.len() {
            assert!(Shortlist::parse(&good[..cut], 3, 10).is_err(), "cut {cut}");
        }
        for at in 8..good.len() {
            let mut bad = good.clone();
            bad[at] ^= 0x10;
            assert!(Shortlist::parse(&bad, 3, 10).is_err(), "flip at {at}");
        }
    }
}
