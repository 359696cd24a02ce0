//! What speculative decoding needs from a language model: a forward over new positions that
//! returns logits, and a cache that can be cut back to any length.
//!
//! The engine's Llama/Mistral/Qwen2 models implement [`LanguageModel`] through an adapter; the
//! tests implement it with the models in [`super::mock`].

/// A model's failure, passed through unchanged (its message names the model file or setting).
pub type ForwardError = Box<dyn std::error::Error + Send + Sync>;

pub use crate::llm::Logits;
/// The greedy pick lives with the models; speculative decoding uses it for every choice.
pub use crate::llm::pick::{Top2, top2};

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

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn rows_are_sliced_by_width() {
        let l = Logits::new(2, vec![0.0, 1.0, 2.0, 3.0, 4.0, 5.0]);
        assert_eq!(l.rows(), 3);
        assert_eq!(l.row(1), &[2.0, 3.0]);
        assert_eq!(l.last(), &[4.0, 5.0]);
    }
}
