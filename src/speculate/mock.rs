//! Models for tests and the format tests' sample report: deterministic, instant, and with a
//! virtual cost.
//!
//! - [`HashModel`]: knows nothing; its logits are a pseudo-random function of the whole prefix
//!   (like the random-weight fixtures: chaotic, any id can win). Optionally near-ties that a
//!   multi-position pass flips, to exercise divergence diagnostics.
//! - [`OracleModel`]: has "memorised" texts and continues them with the tokenizer's canonical
//!   tokens, as a trained model continues natural text; with an error rate it is a draft that is
//!   right about that often.
//! - [`Charged`]: wraps any model and advances a [`VirtualClock`] per pass, so reports made with
//!   mocks have exact, known timings.

use std::cell::RefCell;

use super::clock::{Clock, VirtualClock};
use super::lm::{ForwardError, LanguageModel, Logits};
use super::tokens::{TextTokenizer, Token, bytes_of};

/// SplitMix64 finaliser: a good 64-bit mix for hashing ids and positions.
pub fn mix(mut x: u64) -> u64 {
    x = x.wrapping_add(0x9E37_79B9_7F4A_7C15);
    x = (x ^ (x >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
    x = (x ^ (x >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
    x ^ (x >> 31)
}

fn unit(h: u64) -> f32 {
    (h >> 40) as f32 / (1u64 << 24) as f32
}

fn prefix_hashes(seed: u64, prev: Option<&u64>, tokens: &[u32]) -> Vec<u64> {
    let mut h = prev.copied().unwrap_or(seed);
    tokens
        .iter()
        .map(|&t| {
            h = mix(h ^ mix(t as u64 + 1));
            h
        })
        .collect()
}

/// Logits that depend pseudo-randomly on the whole prefix.
#[derive(Clone, Debug)]
pub struct HashModel {
    pub vocab: usize,
    pub seed: u64,
    /// One position in this many has a near-tie: runner-up 1e-6 below the winner.
    pub near_tie_every: u64,
    /// Added to the runner-up of a near-tie in passes over several positions (numerics that
    /// differ between a k+1-row pass and a single-row pass).
    pub batch_noise: f32,
}

impl HashModel {
    pub fn new(vocab: usize, seed: u64) -> HashModel {
        HashModel { vocab, seed, near_tie_every: 0, batch_noise: 0.0 }
    }

    fn row(&self, h: u64, batched: bool, out: &mut Vec<f32>) {
        let start = out.len();
        out.extend((0..self.vocab as u64).map(|j| unit(mix(h ^ j.wrapping_mul(0xA24B_AED4_963E_E407))) * 8.0 - 4.0));
        if self.near_tie_every > 0 && mix(h ^ 0x7135).is_multiple_of(self.near_tie_every) {
            let row = &mut out[start..];
            let w = (mix(h ^ 1) % self.vocab as u64) as usize;
            let r = (mix(h ^ 2) % self.vocab as u64) as usize;
            if w != r {
                row[w] = 10.0;
                row[r] = 10.0 - 1e-6 + if batched { self.batch_noise } else { 0.0 };
            }
        }
    }
}

impl LanguageModel for HashModel {
    type State = Vec<u64>;

    fn new_state(&self) -> Vec<u64> {
        Vec::new()
    }

    fn vocab_size(&self) -> usize {
        self.vocab
    }

    fn forward(&self, state: &mut Vec<u64>, tokens: &[u32], all_rows: bool) -> Result<Logits, ForwardError> {
        if tokens.is_empty() {
            return Err("forward over no tokens".into());
        }
        if let Some(&bad) = tokens.iter().find(|&&t| t as usize >= self.vocab) {
            return Err(format!("token id {bad} is outside the vocabulary of {}", self.vocab).into());
        }
        let hs = prefix_hashes(self.seed, state.last(), tokens);
        let batched = tokens.len() > 1;
        let mut data = Vec::with_capacity(if all_rows { hs.len() } else { 1 } * self.vocab);
        for (i, &h) in hs.iter().enumerate() {
            if all_rows || i + 1 == hs.len() {
                self.row(h, batched, &mut data);
            }
        }
        state.extend(hs);
        Ok(Logits::new(self.vocab, data))
    }

    fn len(&self, state: &Vec<u64>) -> usize {
        state.len()
    }

    fn trim(&self, state: &mut Vec<u64>, len: usize) {
        state.truncate(len);
    }
}

/// A model that continues memorised texts with canonical tokens.
pub struct OracleModel<'t, T: TextTokenizer + ?Sized> {
    tok: &'t T,
    vocab: usize,
    scripts: Vec<Script>,
    /// Share of positions where the model picks a pseudo-random token instead.
    pub error_rate: f32,
    pub seed: u64,
    /// What it predicts at the end of a text.
    pub eos: u32,
}

struct Script {
    text: Vec<u8>,
    ids: Vec<u32>,
    ends: Vec<usize>,
}

impl<'t, T: TextTokenizer + ?Sized> OracleModel<'t, T> {
    /// `texts` are whole texts (prompt and continuation); `vocab` is the logits width.
    pub fn new(tok: &'t T, vocab: usize, texts: &[&str], eos: u32) -> Result<Self, ForwardError> {
        let mut scripts = Vec::new();
        for t in texts {
            let ids = tok.encode(t, false)?;
            let mut ends = Vec::with_capacity(ids.len());
            let mut n = 0;
            for &id in &ids {
                n += match tok.token(id) {
                    Token::Text(b) => b.len(),
                    _ => 0,
                };
                ends.push(n);
            }
            // The text as the tokens spell it (with a SentencePiece word-start space in front).
            scripts.push(Script { text: bytes_of(tok, &ids), ids, ends });
        }
        Ok(OracleModel { tok, vocab, scripts, error_rate: 0.0, seed: 1, eos })
    }

    fn next(&self, ids: &[u32], h: u64) -> u32 {
        let random = || (mix(h ^ 0xE) % self.vocab as u64) as u32;
        if self.error_rate > 0.0 && unit(mix(h ^ 0xE44)) < self.error_rate {
            return random();
        }
        let seen = bytes_of(self.tok, ids);
        for s in &self.scripts {
            if !s.text.starts_with(&seen) {
                continue;
            }
            let pos = seen.len();
            if pos == s.text.len() {
                return self.eos;
            }
            if pos == 0 {
                return s.ids[0];
            }
            return match s.ends.binary_search(&pos) {
                Ok(i) => s.ids[i + 1],
                Err(i) => std::str::from_utf8(&s.text[pos..s.ends[i]])
                    .ok()
                    .and_then(|rest| self.tok.encode_continuation(rest).ok())
                    .and_then(|v| v.first().copied())
                    .unwrap_or_else(random),
            };
        }
        random()
    }
}

impl<T: TextTokenizer + ?Sized> LanguageModel for OracleModel<'_, T> {
    type State = (Vec<u32>, Vec<u64>);

    fn new_state(&self) -> Self::State {
        (Vec::new(), Vec::new())
    }

    fn vocab_size(&self) -> usize {
        self.vocab
    }

    fn forward(&self, state: &mut Self::State, tokens: &[u32], all_rows: bool) -> Result<Logits, ForwardError> {
        if tokens.is_empty() {
            return Err("forward over no tokens".into());
        }
        let hs = prefix_hashes(self.seed, state.1.last(), tokens);
        let mut data = Vec::new();
        for (i, &t) in tokens.iter().enumerate() {
            state.0.push(t);
            if all_rows || i + 1 == tokens.len() {
                let h = hs[i];
                let start = data.len();
                data.extend(
                    (0..self.vocab as u64).map(|j| unit(mix(h ^ j.wrapping_mul(0x9FB2_1C65_1E98_DF25))) * 2.0 - 1.0),
                );
                let w = self.next(&state.0, h) as usize;
                data[start + w.min(self.vocab - 1)] = 10.0;
            }
        }
        state.1.extend(hs);
        Ok(Logits::new(self.vocab, data))
    }

    fn len(&self, state: &Self::State) -> usize {
        state.0.len()
    }

    fn trim(&self, state: &mut Self::State, len: usize) {
        state.0.truncate(len);
        state.1.truncate(len);
    }
}

/// Any model, with each pass charged to a virtual clock: `per_pass` seconds plus `per_position`
/// for every position after the first (a verification pass over k+1 positions costs a bit more),
/// twice that from the virtual time `slower_from` on (a machine that slows down; never by default),
/// and twice that for its first `cold_passes` passes (a model that starts cold; none by default).
pub struct Charged<M> {
    pub inner: M,
    pub clock: VirtualClock,
    pub per_pass: f64,
    pub per_position: f64,
    pub slower_from: f64,
    pub cold_passes: usize,
    /// Passes made, by number of positions (for tests).
    pub log: RefCell<Vec<usize>>,
}

impl<M> Charged<M> {
    pub fn new(inner: M, clock: VirtualClock, per_pass: f64, per_position: f64) -> Charged<M> {
        Charged {
            inner,
            clock,
            per_pass,
            per_position,
            slower_from: f64::INFINITY,
            cold_passes: 0,
            log: RefCell::new(Vec::new()),
        }
    }
}

impl<M: LanguageModel> LanguageModel for Charged<M> {
    type State = M::State;

    fn new_state(&self) -> M::State {
        self.inner.new_state()
    }

    fn vocab_size(&self) -> usize {
        self.inner.vocab_size()
    }

    fn output_id(&self, index: u32) -> u32 {
        self.inner.output_id(index)
    }

    fn forward(&self, state: &mut M::State, tokens: &[u32], all_rows: bool) -> Result<Logits, ForwardError> {
        let slow =
            if self.clock.now() >= self.slower_from || self.log.borrow().len() < self.cold_passes { 2.0 } else { 1.0 };
        self.clock.advance(slow * (self.per_pass + self.per_position * tokens.len().saturating_sub(1) as f64));
        self.log.borrow_mut().push(tokens.len());
        self.inner.forward(state, tokens, all_rows)
    }

    fn len(&self, state: &M::State) -> usize {
        self.inner.len(state)
    }

    fn trim(&self, state: &mut M::State, len: usize) {
        self.inner.trim(state, len)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::speculate::lm::top2;
    use crate::speculate::testutil::tok;

    #[test]
    fn hash_model_depends_on_the_whole_prefix_and_trims_exactly() {
        let m = HashModel::new(50, 7);
        let mut s = m.new_state();
        let a = m.forward(&mut s, &[1, 2, 3], true).unwrap();
        assert_eq!(a.rows(), 3);
        m.trim(&mut s, 1);
        let b = m.forward(&mut s, &[2], false).unwrap();
        assert_eq!(b.last(), a.row(1), "after a trim, re-feeding gives the same row");
        let mut s2 = m.new_state();
        let c = m.forward(&mut s2, &[9, 2], true).unwrap();
        assert_ne!(c.row(1), a.row(1));
        assert!(m.forward(&mut s2, &[50], false).is_err());
    }

    #[test]
    fn oracle_continues_its_text_with_canonical_tokens() {
        let t = tok("mistral-tiny");
        let text = "Ala ma kota, a kot ma Alę.";
        let m = OracleModel::new(t, t.len(), &[text], 2).unwrap();
        let ids = t.encode(text, true).unwrap();
        let mut s = m.new_state();
        let l = m.forward(&mut s, &ids[..3], true).unwrap();
        assert_eq!(top2(l.row(1)).id, ids[2]);
        assert_eq!(top2(l.row(2)).id, ids[3]);
        let mut s = m.new_state();
        let l = m.forward(&mut s, &ids, false).unwrap();
        assert_eq!(top2(l.last()).id, 2, "EOS at the end of the text");
    }

    #[test]
    fn charged_passes_advance_the_clock() {
        let clock = VirtualClock::new();
        let m = Charged::new(HashModel::new(10, 1), clock.clone(), 0.01, 0.001);
        let mut s = m.new_state();
        m.forward(&mut s, &[1, 2, 3], true).unwrap();
        assert!((crate::speculate::clock::Clock::now(&clock) - 0.012).abs() < 1e-12);
        assert_eq!(*m.log.borrow(), vec![3]);
    }
}
