//! The engine as `speculate`'s [`LanguageModel`]: a [`Model`] with a [`KvCache`] per sequence.

use super::{KvCache, LogitRows, Model};
use crate::speculate::model::{LanguageModel, Logits, ModelError};

impl LanguageModel for Model {
    type State = KvCache;

    fn new_state(&self) -> KvCache {
        self.new_cache()
    }

    fn vocab_size(&self) -> usize {
        Model::vocab_size(self)
    }

    fn forward(&self, state: &mut KvCache, tokens: &[u32], all_rows: bool) -> Result<Logits, ModelError> {
        let keep = if all_rows { LogitRows::All } else { LogitRows::Last };
        let l = Model::forward(self, state, tokens, keep)?;
        Ok(Logits::new(l.vocab, l.data))
    }

    fn len(&self, state: &KvCache) -> usize {
        state.len()
    }

    fn trim(&self, state: &mut KvCache, len: usize) {
        state.truncate(len);
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::llm::{LoadOptions, Precision};
    use crate::speculate::model::argmax;

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
        assert_eq!(argmax(again.last()), crate::llm::argmax(all.row(3)).0);
        // Ids past the embedding (a draft id in another vocabulary) are an error, not a panic.
        assert!(lm.forward(&mut s, &[151936], false).is_err());
    }
}
