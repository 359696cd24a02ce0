//! What speculative decoding needs from a language model: a forward over new positions that
//! returns logits, and a cache that can be cut back to any length.
//!
//! The engine's Llama/Mistral/Qwen2 models implement [`LanguageModel`] through an adapter; the
//! tests implement it with the models in [`super::mock`].

/// A model's failure, passed through unchanged (its message names the model file or setting).
pub type ForwardError = Box<dyn std::error::Error + Send + Sync>;

pub use crate::llm::Logits;

/// A causal language model whose per-sequence state (the KV cache) lives outside the model, so one
/// loaded model serves any number of sequences.
pub trait LanguageModel {
    /// One sequence in flight: the cached positions.
    type State;

    /// An empty sequence.
    fn new_state(&self) -> Self::State;

    /// The width of a logits row (embedding rows; may exceed the tokenizer's vocabulary).
    fn vocab_size(&self) -> usize;

    /// Appends `tokens` at positions `len(state)..` and returns the logits of every new position
    /// (`all_rows`) or of the last one only (prefill, where only the next token matters).
    fn forward(&self, state: &mut Self::State, tokens: &[u32], all_rows: bool) -> Result<Logits, ForwardError>;

    /// The vocabulary id of logits column `index`: the identity unless the model computes only
    /// some rows of its output layer (a draft's frequent tokens).
    fn output_id(&self, index: u32) -> u32 {
        index
    }

    /// How many positions the state holds.
    fn len(&self, state: &Self::State) -> usize;

    /// Forgets every position from `len` on (no-op when `len` is not shorter).
    fn trim(&self, state: &mut Self::State, len: usize);
}

/// The two best entries of a logits row: what greedy decoding picked and what it beat.
#[derive(Clone, Copy, Debug, PartialEq, serde::Serialize)]
pub struct Top2 {
    pub id: u32,
    pub logit: f32,
    pub runner_up: u32,
    pub runner_up_logit: f32,
}

impl Top2 {
    /// How far the winner is ahead; a near-tie (tiny margin) can flip under other arithmetic.
    pub fn margin(&self) -> f32 {
        self.logit - self.runner_up_logit
    }
}

/// Greedy choice with the rule every path shares: the first index holding the maximum wins, and
/// NaN never wins. Both the baseline and every verification use this one function, so ties break
/// the same way (a `>` against `>=` mismatch is a known cause of false divergences).
pub fn top2(row: &[f32]) -> Top2 {
    let mut best: Option<(u32, f32)> = None;
    let mut second: Option<(u32, f32)> = None;
    for (i, &v) in row.iter().enumerate() {
        if v.is_nan() {
            continue;
        }
        let i = i as u32;
        match best {
            Some((_, b)) if v <= b => {
                if second.is_none_or(|(_, s)| v > s) {
                    second = Some((i, v));
                }
            }
            _ => {
                second = best;
                best = Some((i, v));
            }
        }
    }
    let (id, logit) = best.unwrap_or((0, f32::NEG_INFINITY));
    let (runner_up, runner_up_logit) = second.unwrap_or((id, f32::NEG_INFINITY));
    Top2 { id, logit, runner_up, runner_up_logit }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn first_maximum_wins_ties() {
        let t = top2(&[1.0, 3.0, 3.0, 2.0]);
        assert_eq!((t.id, t.runner_up), (1, 2));
        assert_eq!(t.margin(), 0.0);
    }

    #[test]
    fn runner_up_is_second_largest() {
        let t = top2(&[5.0, 1.0, 4.0, 4.5]);
        assert_eq!((t.id, t.logit, t.runner_up, t.runner_up_logit), (0, 5.0, 3, 4.5));
    }

    #[test]
    fn nan_never_wins() {
        let t = top2(&[f32::NAN, -1.0, f32::NAN, -2.0]);
        assert_eq!((t.id, t.runner_up), (1, 3));
    }

    #[test]
    fn rows_are_sliced_by_width() {
        let l = Logits::new(2, vec![0.0, 1.0, 2.0, 3.0, 4.0, 5.0]);
        assert_eq!(l.rows(), 3);
        assert_eq!(l.row(1), &[2.0, 3.0]);
        assert_eq!(l.last(), &[4.0, 5.0]);
    }
}
