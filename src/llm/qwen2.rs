//! Qwen2 / Qwen2.5: the Llama decoder with biases on the query, key and value projections (not
//! on the output projection), usually tied embeddings, and an embedding padded past the
//! tokenizer's size. Sliding-window attention only when `use_sliding_window` is true, and then
//! only in layers from `max_window_layers` on. Qwen2 technical report, arXiv 2407.10671.
//! The forward pass is the shared decoder; this file reads `Qwen2ForCausalLM`'s `config.json`.

use std::path::Path;

use serde::Deserialize;

use super::config::DecoderSpec;
use super::{ArchitectureSpec, CommonConfig};
use super::{Error, Result};

/// `config.json` of `Qwen2ForCausalLM`, with Transformers' defaults for absent keys.
#[derive(Debug, Deserialize)]
pub struct Config {
    #[serde(flatten)]
    pub common: CommonConfig,
    #[serde(default = "default_max_positions")]
    pub max_position_embeddings: usize,
    #[serde(default)]
    pub use_sliding_window: bool,
}

fn default_max_positions() -> usize {
    32768
}

impl Config {
    pub fn spec(&self, path: &Path) -> Result<DecoderSpec> {
        if self.use_sliding_window {
            // Per-layer windows (max_window_layers) are not implemented; no released Qwen2.5
            // checkpoint turns them on.
            return Err(Error::Field {
                path: path.to_path_buf(),
                field: "use_sliding_window".into(),
                msg: "true is not supported (reseam runs Qwen2 with full attention)".into(),
            });
        }
        let arch = ArchitectureSpec {
            max_positions: self.max_position_embeddings,
            qkv_bias: true,
            o_bias: false,
            mlp_bias: false,
            sliding_window: None,
        };
        self.common.spec(arch, path)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn qwen_has_qkv_bias_derived_head_dim_and_padded_vocab() {
        let path = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/llm/qwen2-tiny/config.json");
        let c: Config = serde_json::from_str(&std::fs::read_to_string(&path).unwrap()).unwrap();
        let s = c.spec(&path).unwrap();
        assert_eq!((s.hidden, s.heads, s.head_dim, s.vocab), (32, 2, 16, 151936));
        assert!(s.qkv_bias && !s.o_bias && s.tied_embeddings);
        assert_eq!(s.sliding_window, None);
    }
}
