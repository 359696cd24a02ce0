//! Larger SentencePiece vocabularies for synthetic models: a real model proto with more pieces.
//!
//! Firefox's vocabularies have 32,000 pieces; the repository's fixture has 8,000. A serialized
//! `ModelProto` is a protobuf message whose field 1 is the repeated `SentencePiece {piece = 1,
//! score = 2, type = 3}`, field 2 the trainer spec and field 3 the normalizer spec (sentencepiece
//! `sentencepiece_model.proto`). [`extend`] copies the fixture's pieces, appends new NORMAL
//! pieces with scores below every existing one (so real text still encodes mostly into the
//! real pieces), keeps the normalizer (`nmt_nfkc`, byte fallback, the user symbols) and sets
//! the trainer spec's `vocab_size` (field 4) to the new count.

use std::collections::HashSet;
use std::path::Path;

use super::{Vocab, VocabError};

/// The repository's es→en vocabulary (8,000 pieces, Firefox's training options): the base every
/// synthetic vocabulary grows from, built into the binary so that `bench models --synthetic`
/// needs no file.
pub const BASE: &[u8] = include_bytes!("../../tests/fixtures/tiny-esen/vocab.esen.spm");

fn bad(reason: impl Into<String>) -> VocabError {
    VocabError::Parse { path: "<synthetic vocabulary>".into(), reason: reason.into() }
}

fn varint(b: &[u8], at: &mut usize) -> Result<u64, VocabError> {
    let mut v = 0u64;
    for shift in (0..64).step_by(7) {
        let byte = *b.get(*at).ok_or_else(|| bad("a varint runs past the end"))?;
        *at += 1;
        v |= u64::from(byte & 0x7f) << shift;
        if byte < 0x80 {
            return Ok(v);
        }
    }
    Err(bad("a varint longer than 10 bytes"))
}

fn put_varint(out: &mut Vec<u8>, mut v: u64) {
    while v >= 0x80 {
        out.push((v as u8 & 0x7f) | 0x80);
        v >>= 7;
    }
    out.push(v as u8);
}

/// One field of a message: its number, wire type, and its bytes (the whole field as written,
/// and the payload of a length-delimited one).
struct Field<'a> {
    number: u64,
    wire: u8,
    whole: &'a [u8],
    payload: &'a [u8],
}

fn fields(b: &[u8]) -> Result<Vec<Field<'_>>, VocabError> {
    let mut out = Vec::new();
    let mut at = 0;
    while at < b.len() {
        let start = at;
        let key = varint(b, &mut at)?;
        let (number, wire) = (key >> 3, (key & 7) as u8);
        let payload = match wire {
            0 => {
                varint(b, &mut at)?;
                &b[at..at]
            }
            1 | 5 => {
                let n = if wire == 1 { 8 } else { 4 };
                let end = at.checked_add(n).filter(|&e| e <= b.len()).ok_or_else(|| bad("a fixed field is cut"))?;
                at = end;
                &b[end..end]
            }
            2 => {
                let n = varint(b, &mut at)? as usize;
                let end = at.checked_add(n).filter(|&e| e <= b.len()).ok_or_else(|| bad("a field is cut"))?;
                let p = &b[at..end];
                at = end;
                p
            }
            w => return Err(bad(format!("wire type {w}"))),
        };
        out.push(Field { number, wire, whole: &b[start..at], payload });
    }
    Ok(out)
}

fn put_bytes_field(out: &mut Vec<u8>, number: u64, bytes: &[u8]) {
    put_varint(out, number << 3 | 2);
    put_varint(out, bytes.len() as u64);
    out.extend_from_slice(bytes);
}

/// `base` (a serialized SentencePiece model) grown to `total` pieces: new pieces come from
/// `next` (candidates that already exist are skipped, so `next` should rarely repeat itself).
/// The result is checked to load, to have `total` pieces and to encode and decode a sentence.
pub fn extend(base: &[u8], total: usize, mut next: impl FnMut() -> String) -> Result<Vec<u8>, VocabError> {
    let top = fields(base)?;
    let mut pieces: Vec<&[u8]> = Vec::new();
    let mut seen = HashSet::new();
    let mut lowest = 0f32;
    for f in top.iter().filter(|f| f.number == 1 && f.wire == 2) {
        for g in fields(f.payload)? {
            match (g.number, g.wire) {
                (1, 2) => {
                    seen.insert(String::from_utf8_lossy(g.payload).into_owned());
                }
                (2, 5) => {
                    let s = &g.whole[g.whole.len() - 4..];
                    lowest = lowest.min(f32::from_le_bytes([s[0], s[1], s[2], s[3]]));
                }
                _ => {}
            }
        }
        pieces.push(f.whole);
    }
    if pieces.len() > total {
        return Err(bad(format!("the base has {} pieces, more than {total}", pieces.len())));
    }
    let mut out = Vec::with_capacity(base.len() + (total - pieces.len()) * 16);
    pieces.iter().for_each(|p| out.extend_from_slice(p));
    let mut added = 0usize;
    let mut tries = 0usize;
    while pieces.len() + added < total {
        tries += 1;
        if tries > 100 * total {
            return Err(bad("the piece generator keeps repeating itself"));
        }
        let piece = next();
        if piece.is_empty() || !seen.insert(piece.clone()) {
            continue;
        }
        // Below every real piece, and in a fixed order, so that ties never decide.
        let score = lowest - 1.0 - added as f32 * 1e-3;
        let mut msg = Vec::with_capacity(piece.len() + 8);
        put_bytes_field(&mut msg, 1, piece.as_bytes());
        put_varint(&mut msg, 2 << 3 | 5);
        msg.extend_from_slice(&score.to_le_bytes());
        put_bytes_field(&mut out, 1, &msg);
        added += 1;
    }
    for f in top.iter().filter(|f| f.number != 1) {
        if f.number == 2 && f.wire == 2 {
            // The trainer spec with `vocab_size` (field 4) set to the new count.
            let mut spec = Vec::with_capacity(f.payload.len() + 4);
            for g in fields(f.payload)?.iter().filter(|g| g.number != 4) {
                spec.extend_from_slice(g.whole);
            }
            put_varint(&mut spec, 4 << 3);
            put_varint(&mut spec, total as u64);
            put_bytes_field(&mut out, 2, &spec);
        } else {
            out.extend_from_slice(f.whole);
        }
    }
    let v = Vocab::from_bytes(&out, Path::new("<synthetic vocabulary>"))?;
    if v.len() != total {
        return Err(bad(format!("SentencePiece reads {} pieces, {total} were written", v.len())));
    }
    let ids = v.encode("Hola, mundo.")?;
    if ids.is_empty() || v.decode(&ids)? != "Hola, mundo." {
        return Err(bad("the grown vocabulary does not encode and decode a sentence back"));
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn letters(seed: &mut u64) -> String {
        *seed = seed.wrapping_mul(6364136223846793005).wrapping_add(1442695040888963407);
        let len = 2 + (*seed >> 60) as usize % 7;
        let mut s = String::from("▁");
        for i in 0..len {
            s.push((b'a' + ((*seed >> (8 + 5 * i)) % 26) as u8) as char);
        }
        s
    }

    #[test]
    fn grows_the_fixture_to_32000_pieces_that_sentencepiece_reads() {
        let mut seed = 1;
        let bytes = extend(BASE, 32_000, || letters(&mut seed)).unwrap();
        let v = Vocab::from_bytes(&bytes, Path::new("v.spm")).unwrap();
        assert_eq!((v.len(), v.eos(), v.unk()), (32_000, 0, 1));
        let base = Vocab::from_bytes(BASE, Path::new("base.spm")).unwrap();
        // The real pieces keep their ids and still win: the fixture's sentence encodes the same.
        let s = "Espero que esto pueda entrar en vigor en julio de 2010.";
        assert_eq!(v.encode(s).unwrap(), base.encode(s).unwrap());
        // A new piece decodes to its text.
        let last = v.decode(&[31_999]).unwrap();
        assert!(!last.is_empty() && last.chars().all(|c| c.is_ascii_lowercase()), "{last:?}");
        // The same generator gives the same file.
        let mut seed = 1;
        assert_eq!(extend(BASE, 32_000, || letters(&mut seed)).unwrap(), bytes);
    }

    #[test]
    fn bad_bases_and_generators_are_errors() {
        assert!(extend(&BASE[..BASE.len() / 2], 32_000, || "▁x".into()).is_err());
        assert!(extend(BASE, 100, || "▁x".into()).is_err());
        // A generator that only repeats itself cannot fill the vocabulary.
        let e = extend(BASE, 8_010, || "▁zzzq".into()).unwrap_err();
        assert!(e.to_string().contains("repeating"), "{e}");
    }
}
