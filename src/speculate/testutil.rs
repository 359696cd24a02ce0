//! Shared by the unit tests: the fixture tokenizers, loaded once per test process.

use std::path::{Path, PathBuf};
use std::sync::OnceLock;

use super::hf::HfTokenizer;

pub const MODELS: [&str; 3] = ["llama3-tiny", "mistral-tiny", "qwen2-tiny"];

pub fn fixture_dir(model: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/llm").join(model)
}

/// The tokenizer of a fixture model (loading the 9 MB files takes a while, so once).
pub fn tok(model: &str) -> &'static HfTokenizer {
    static TOKS: OnceLock<Vec<HfTokenizer>> = OnceLock::new();
    let all = TOKS.get_or_init(|| {
        MODELS
            .iter()
            .map(|m| HfTokenizer::from_file(&fixture_dir(m).join("tokenizer.json")).expect("fixture tokenizer loads"))
            .collect()
    });
    let i = MODELS.iter().position(|m| *m == model).expect("a fixture model name");
    &all[i]
}
