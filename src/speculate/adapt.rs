//! The engine's checkpoints as `speculate` sees them: a [`Model`] with a [`KvCache`] per
//! sequence is a [`LanguageModel`], its [`Tokenizer`] a [`TextTokenizer`].

use super::lm::{ForwardError, LanguageModel, Logits};
use super::tokens::{TextTokenizer, Token, TokenizerError};
use crate::llm::{KvCache, LogitRows, Model, Tokenizer};

impl LanguageModel for Model {
    type State = KvCache;

    fn new_state(&self) -> KvCache {
        self.new_cache()
    }

    fn vocab_size(&self) -> usize {
        Model::vocab_size(self)
    }

    fn forward(&self, state: &mut KvCache, tokens: &[u32], all_rows: bool) -> Result<Logits, ForwardError> {
        let keep = if all_rows { LogitRows::All } else { LogitRows::Last };
        Ok(Model::forward(self, state, tokens, keep)?)
    }

    fn output_id(&self, index: u32) -> u32 {
        Model::output_id(self, index)
    }

    fn len(&self, state: &KvCache) -> usize {
        state.len()
    }

    fn trim(&self, state: &mut KvCache, len: usize) {
        state.truncate(len);
    }
}

impl TextTokenizer for Tokenizer {
    fn encode(&self, text: &str, add_special: bool) -> Result<Vec<u32>, TokenizerError> {
        Ok(Tokenizer::encode(self, text, add_special)?)
    }

    fn encode_continuation(&self, text: &str) -> Result<Vec<u32>, TokenizerError> {
        Ok(Tokenizer::encode_continuation(self, text)?)
    }

    fn decode(&self, ids: &[u32]) -> Result<String, TokenizerError> {
        Ok(Tokenizer::decode(self, ids, true)?)
    }

    fn token(&self, id: u32) -> Token<'_> {
        Tokenizer::token(self, id)
    }

    fn special_id(&self, content: &str) -> Option<u32> {
        Tokenizer::special_id(self, content)
    }

    fn len(&self) -> usize {
        Tokenizer::len(self)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::llm::{LoadOptions, Precision};
    use crate::speculate::lm::top2;

    #[test]
    fn speculate_sees_the_same_logits_and_trims() {
        let dir = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/llm/qwen2-tiny");
        let m = Model::load(&dir, &LoadOptions { precision: Precision::F32, pack_dir: None, no_pack: true }).unwrap();
        let lm: &dyn LanguageModel<State = KvCache> = &m;
        let mut s = lm.new_state();
        let all = lm.forward(&mut s, &[9707, 11, 1879, 0], true).unwrap();
        assert_eq!((all.rows(), lm.len(&s), lm.vocab_size()), (4, 4, 151936));
        lm.trim(&mut s, 2);
        let again = lm.forward(&mut s, &[1879, 0], false).unwrap();
        assert_eq!(again.last(), all.row(3));
        assert_eq!(top2(again.last()).id, crate::llm::argmax(all.row(3)).0);
        // Ids past the embedding (a draft id in another vocabulary) are an error, not a panic.
        assert!(lm.forward(&mut s, &[151936], false).is_err());
    }
}
