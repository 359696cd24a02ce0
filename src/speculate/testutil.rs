//! Shared by the unit tests: the fixture tokenizers, loaded once per test process.

use std::path::{Path, PathBuf};
use std::sync::OnceLock;

use crate::llm::Tokenizer;

pub const MODELS: [&str; 3] = ["llama3-tiny", "mistral-tiny", "qwen2-tiny"];

pub fn fixture_dir(model: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/llm").join(model)
}

/// The tokenizer of a fixture model (loading the 9 MB files takes a while, so once).
pub fn tok(model: &str) -> &'static Tokenizer {
    static TOKS: OnceLock<Vec<Tokenizer>> = OnceLock::new();
    let all = TOKS.get_or_init(|| {
        MODELS.iter().map(|m| Tokenizer::from_dir(&fixture_dir(m)).expect("fixture tokenizer loads")).collect()
    });
    let i = MODELS.iter().position(|m| *m == model).expect("a fixture model name");
    &all[i]
}
