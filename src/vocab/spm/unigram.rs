//! The unigram model's best segmentation (unigram_model.cc, `EncodeOptimized`): Viterbi over
//! the pieces that start at each character, the best path to each byte position kept as it
//! is found, a later candidate replacing it only when strictly better.
//!
//! Ties that only rounding breaks (`ll`+`l` against `l`+`ll`) depend on the library's
//! version, so both arithmetics are here. sentencepiece 0.2.3 (PyPI's, the goldens' maker)
//! sums in `f32`, gives user-defined symbols `0.1 * (length - 1)`, and rebases path scores past
//! ±100,000 to zero; 0.2.0–0.2.1 (what the `sentencepiece` crate vendors) computes a piece's
//! candidate in `f64` (its score expression is a double there, for the user-defined bonus
//! `length * max_score - 0.1`) and stores it as `f32`. They differ on 36 of the fixture
//! corpora's 12,579 texts.

use super::{PieceType, SentencePiece};

/// What the library subtracts from the lowest piece score for an unknown character.
const UNK_PENALTY: f32 = 10.0;

/// Past this magnitude 0.2.3 rebases the path scores ahead of the current position to zero.
const SCORE_RESET: f32 = 100_000.0;

/// Which version's arithmetic breaks rounding ties (see the module's comment).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum Arithmetic {
    /// sentencepiece 0.2.3 (PyPI's wheels): the goldens' maker.
    V023,
    /// sentencepiece 0.2.0–0.2.1 (the `sentencepiece` crate's vendored library), and the double
    /// candidate of the `EncodeOptimized` loop that Bergamot's older fork shares: the default,
    /// because it is what the engine ran (through the C++ crate) when it was shown equal to
    /// Bergamot on every fixture.
    #[default]
    V021,
}

#[derive(Clone, Copy)]
struct Best {
    id: u32,
    score: f32,
    /// Where the last piece of the best path to here starts; u32::MAX before any.
    from: u32,
}

impl SentencePiece {
    /// (length in bytes, id) of each piece of the best segmentation of a normalized text.
    pub(super) fn unigram(&self, text: &str) -> Vec<(usize, u32)> {
        let bytes = text.as_bytes();
        let size = bytes.len();
        if size == 0 {
            return Vec::new();
        }
        let unk_score = self.min_score - UNK_PENALTY;
        let mut best = vec![Best { id: 0, score: 0.0, from: u32::MAX }; size + 1];
        let legacy = self.arithmetic == Arithmetic::V021;
        let mut frontier = 0;
        let mut start = 0;
        while start < size {
            let mut here = best[start].score;
            if !legacy && !(-SCORE_RESET..=SCORE_RESET).contains(&here) {
                for (i, b) in best.iter_mut().enumerate().take(frontier.max(start) + 1).skip(start) {
                    if i == start || b.from != u32::MAX {
                        b.score -= here;
                    }
                }
                here = 0.0;
            }
            let mblen = char_len(bytes[start]).min(size - start);
            let mut has_single = false;
            self.trie.prefixes(&bytes[start..], |len, id| {
                let p = &self.pieces[id as usize];
                if p.kind == PieceType::Unused {
                    return;
                }
                let end = start + len;
                frontier = frontier.max(end);
                let user = p.kind == PieceType::UserDefined;
                let target = &mut best[end];
                let better = if legacy {
                    // User-defined symbols get a bonus that always selects them.
                    let score = if user { f64::from(len as f32 * self.max_score) - 0.1 } else { f64::from(p.score) };
                    let candidate = score + f64::from(here);
                    (target.from == u32::MAX || candidate > f64::from(target.score)).then_some(candidate as f32)
                } else {
                    let score = if user { (0.1 * (len as f64 - 1.0)) as f32 } else { p.score };
                    let candidate = score + here;
                    (target.from == u32::MAX || candidate > target.score).then_some(candidate)
                };
                if let Some(score) = better {
                    *target = Best { id, score, from: start as u32 };
                }
                if len == mblen {
                    has_single = true;
                }
            });
            if !has_single {
                frontier = frontier.max(start + mblen);
                let candidate = unk_score + here;
                let target = &mut best[start + mblen];
                if target.from == u32::MAX || candidate > target.score {
                    *target = Best { id: self.unk, score: candidate, from: start as u32 };
                }
            }
            start += mblen;
        }
        let mut out = Vec::new();
        let mut end = size;
        while end > 0 {
            let b = best[end];
            let from = b.from as usize;
            out.push((end - from, b.id));
            end = from;
        }
        out.reverse();
        out
    }
}

/// The length of the UTF-8 sequence a lead byte starts (OneCharLen).
pub(super) fn char_len(lead: u8) -> usize {
    const LEN: [usize; 16] = [1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 2, 2, 3, 4];
    LEN[(lead >> 4) as usize]
}
