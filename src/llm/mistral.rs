//! Mistral (Mistral-7B v0.1–v0.3, and models continued from it such as Bielik-11B-v2): the
//! Llama decoder without biases, with an optional sliding attention window (`sliding_window`;
//! `null` in v0.2+ and Bielik). Jiang et al. 2023, arXiv 2310.06825.
//! The forward pass is the shared decoder; this file reads `MistralForCausalLM`'s `config.json`.

use std::path::Path;

use serde::Deserialize;

use super::Result;
use super::config::DecoderSpec;
use super::{ArchitectureSpec, CommonConfig};

/// `config.json` of `MistralForCausalLM`, with Transformers' defaults for absent keys.
#[derive(Debug, Deserialize)]
pub struct Config {
    #[serde(flatten)]
    pub common: CommonConfig,
    #[serde(default = "default_max_positions")]
    pub max_position_embeddings: usize,
    pub sliding_window: Option<usize>,
}

fn default_max_positions() -> usize {
    4096 * 32
}

impl Config {
    pub fn spec(&self, path: &Path) -> Result<DecoderSpec> {
        let arch = ArchitectureSpec {
            max_positions: self.max_position_embeddings,
            qkv_bias: false,
            o_bias: false,
            mlp_bias: false,
            sliding_window: self.sliding_window,
        };
        self.common.spec(arch, path)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn bielik_layout_has_no_window_and_untied_head() {
        let path = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/llm/mistral-tiny/config.json");
        let c: Config = serde_json::from_str(&std::fs::read_to_string(&path).unwrap()).unwrap();
        let s = c.spec(&path).unwrap();
        assert_eq!((s.hidden, s.heads, s.kv_heads, s.head_dim), (64, 4, 2, 16));
        assert_eq!(s.sliding_window, None);
        assert!(!s.tied_embeddings);
    }

    #[test]
    fn mistral_7b_v01_keeps_its_window() {
        let c: Config = serde_json::from_value(serde_json::json!({"hidden_size": 64, "intermediate_size": 8,
            "num_hidden_layers": 1, "num_attention_heads": 4, "num_key_value_heads": 2, "vocab_size": 10,
            "sliding_window": 4096, "rope_theta": 10000.0}))
        .unwrap();
        assert_eq!(c.spec(Path::new("config.json")).unwrap().sliding_window, Some(4096));
    }
}
