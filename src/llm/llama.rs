//! Llama (Llama 2, 3, 3.1, 3.2): pre-norm decoder with RMSNorm, RoPE (optionally with `llama3`
//! or `linear` frequency scaling), grouped-query attention, SwiGLU feed-forward; embeddings tied
//! or not. Touvron et al. 2023, arXiv 2302.13971; Llama 3: arXiv 2407.21783.
//! The forward pass is the shared decoder in `layers.rs`/`decoder.rs`; this file reads
//! `LlamaForCausalLM`'s `config.json`.

use std::path::Path;

use serde::Deserialize;

use super::Result;
use super::config::DecoderSpec;
use super::{ArchitectureSpec, CommonConfig};

/// `config.json` of `LlamaForCausalLM`, with Transformers' defaults for absent keys.
#[derive(Debug, Deserialize)]
pub struct Config {
    #[serde(flatten)]
    pub common: CommonConfig,
    #[serde(default = "default_max_positions")]
    pub max_position_embeddings: usize,
    #[serde(default)]
    pub attention_bias: bool,
    #[serde(default)]
    pub mlp_bias: bool,
}

fn default_max_positions() -> usize {
    2048
}

impl Config {
    pub fn spec(&self, path: &Path) -> Result<DecoderSpec> {
        let arch = ArchitectureSpec {
            max_positions: self.max_position_embeddings,
            qkv_bias: self.attention_bias,
            o_bias: self.attention_bias,
            mlp_bias: self.mlp_bias,
            sliding_window: None,
        };
        self.common.spec(arch, path)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::llm::config::RopeScaling;

    #[test]
    fn llama_3_2_config_reads_scaling_head_dim_and_tying() {
        let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/llm/llama3-tiny/config.json");
        let c: Config = serde_json::from_str(&std::fs::read_to_string(&dir).unwrap()).unwrap();
        let s = c.spec(&dir).unwrap();
        assert_eq!((s.hidden, s.heads, s.kv_heads, s.head_dim, s.vocab), (32, 2, 1, 16, 128256));
        assert!(s.tied_embeddings && !s.qkv_bias);
        assert_eq!(s.rope.theta, 500000.0);
        assert!(matches!(s.rope.scaling, RopeScaling::Llama3 { factor: 32.0, .. }));
    }

    #[test]
    fn other_activations_are_refused_by_name() {
        let c: Config = serde_json::from_value(serde_json::json!({"hidden_size": 8, "intermediate_size": 8,
            "num_hidden_layers": 1, "num_attention_heads": 2, "vocab_size": 10, "hidden_act": "gelu"}))
        .unwrap();
        let e = c.spec(Path::new("x/config.json")).unwrap_err().to_string();
        assert!(e.contains("hidden_act") && e.contains("gelu"), "{e}");
    }
}
