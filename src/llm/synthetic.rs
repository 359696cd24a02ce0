//! Random-weight models at real shapes, generated in memory when needed (benchmarks, the
//! speculative-decoding cost model): nothing is downloaded or committed. Weights are uniform
//! with the variance of the fixtures' generator (`N(0, (2)^2/fan_in)` for the input projections,
//! `(4)^2/fan_in` for the output projections, 1 for embeddings), so the residual stream and
//! the logits have realistic ranges. Each row comes from its own seed: generation runs on all
//! cores and the same seed gives the same model.

use super::config::{DecoderSpec, RopeScaling, RopeSpec};
use super::decoder::{Embedding, RowFn, Source};
pub use super::seeded::fill_row;
use super::seeded::mix;
use super::{Error, Result};

/// Llama-3.2-1B's shape (its config.json: 16 layers, hidden 2048, 32 heads over 8 KV heads,
/// vocabulary 128,256), for benchmarks at a real size without downloading it.
pub fn llama_3_2_1b() -> DecoderSpec {
    DecoderSpec {
        hidden: 2048,
        intermediate: 8192,
        layers: 16,
        heads: 32,
        kv_heads: 8,
        head_dim: 64,
        vocab: 128256,
        rms_norm_eps: 1e-5,
        rope: RopeSpec {
            theta: 500000.0,
            scaling: RopeScaling::Llama3 {
                factor: 32.0,
                low_freq_factor: 1.0,
                high_freq_factor: 4.0,
                original_max_positions: 8192.0,
            },
        },
        max_positions: 131072,
        tied_embeddings: true,
        qkv_bias: false,
        o_bias: false,
        mlp_bias: false,
        sliding_window: None,
    }
}

/// Qwen2.5-1.5B's shape (q/k/v biases, tied embeddings, 151,936 rows).
pub fn qwen2_5_1_5b() -> DecoderSpec {
    DecoderSpec {
        hidden: 1536,
        intermediate: 8960,
        layers: 28,
        heads: 12,
        kv_heads: 2,
        head_dim: 128,
        vocab: 151936,
        rms_norm_eps: 1e-6,
        rope: RopeSpec { theta: 1e6, scaling: RopeScaling::None },
        max_positions: 32768,
        tied_embeddings: true,
        qkv_bias: true,
        o_bias: false,
        mlp_bias: false,
        sliding_window: None,
    }
}

/// A small Llama shape for tests and quick runs (about 5M parameters).
pub fn test_shape() -> DecoderSpec {
    DecoderSpec {
        hidden: 256,
        intermediate: 768,
        layers: 2,
        heads: 4,
        kv_heads: 2,
        head_dim: 64,
        vocab: 4096,
        max_positions: 4096,
        ..llama_3_2_1b()
    }
}

/// Shapes by name, for command lines.
pub const SHAPES: [&str; 3] = ["llama-3.2-1b", "qwen2.5-1.5b", "test"];

pub fn shape(name: &str) -> Option<DecoderSpec> {
    match name {
        "llama-3.2-1b" => Some(llama_3_2_1b()),
        "qwen2.5-1.5b" => Some(qwen2_5_1_5b()),
        "test" => Some(test_shape()),
        _ => None,
    }
}

/// A shape about `1/ratio` of `base`'s non-embedding size with the same vocabulary (a draft for
/// cost-model experiments): fewer layers and a narrower stream.
pub fn shrunk(base: &DecoderSpec, ratio: usize) -> DecoderSpec {
    let r = ratio.max(1);
    // Halve the width (a quarter of the per-layer size) and cut layers for the rest.
    let (hidden, inter, heads, kv_heads) = if r >= 4 {
        (base.hidden / 2, base.intermediate / 2, (base.heads / 2).max(1), (base.kv_heads / 2).max(1))
    } else {
        (base.hidden, base.intermediate, base.heads, base.kv_heads)
    };
    let width_gain = if r >= 4 { 4 } else { 1 };
    let layers = (base.layers * width_gain / r).max(1);
    DecoderSpec { hidden, intermediate: inter, heads, kv_heads, layers, ..base.clone() }
}

fn name_seed(seed: u64, name: &str) -> u64 {
    name.bytes().fold(mix(seed), |h, b| mix(h ^ b as u64))
}

/// Weights made from a seed.
pub struct RandomSource {
    pub seed: u64,
}

impl Source for RandomSource {
    fn rows(&self, name: &str, _rows: usize, cols: usize) -> Result<RowFn<'_>> {
        let gain = if name.contains("o_proj") || name.contains("down_proj") { 4.0 } else { 2.0 };
        let std = if name.contains("embed_tokens") || name.starts_with("lm_head") {
            1.0
        } else {
            gain / (cols as f32).sqrt()
        };
        let seed = name_seed(self.seed, name);
        Ok(Box::new(move |j, out| fill_row(seed, std, j, out)))
    }

    fn vector(&self, name: &str, len: usize) -> Result<Vec<f32>> {
        if name.ends_with(".bias") {
            let mut v = vec![0f32; len];
            fill_row(name_seed(self.seed, name), 0.5, 0, &mut v);
            return Ok(v);
        }
        // Norm weights: around 1, as in the fixtures ([0.75, 1.25]).
        let mut v = vec![0f32; len];
        fill_row(name_seed(self.seed, name), 0.25 / 3f32.sqrt(), 0, &mut v);
        v.iter_mut().for_each(|x| *x += 1.0);
        Ok(v)
    }

    fn embedding(&self, name: &str, rows: usize, cols: usize) -> Result<Embedding> {
        if rows == 0 || cols == 0 {
            return Err(Error::Synthetic(format!("embedding {name} of {rows}×{cols}")));
        }
        Ok(Embedding::Random { seed: name_seed(self.seed, name), std: 1.0, rows, cols })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn rows_are_deterministic_and_have_the_asked_spread() {
        let (mut a, mut b) = (vec![0f32; 4096], vec![0f32; 4096]);
        fill_row(7, 0.5, 3, &mut a);
        fill_row(7, 0.5, 3, &mut b);
        assert_eq!(a, b);
        fill_row(7, 0.5, 4, &mut b);
        assert_ne!(a, b);
        let var = a.iter().map(|x| x * x).sum::<f32>() / a.len() as f32;
        assert!((var.sqrt() - 0.5).abs() < 0.03, "{}", var.sqrt());
    }

    #[test]
    fn shapes() {
        let s = llama_3_2_1b();
        assert_eq!((s.q_dim(), s.kv_dim()), (2048, 512));
        let small = shrunk(&s, 10);
        let size = |s: &DecoderSpec| {
            s.layers * (s.hidden * (s.q_dim() + 2 * s.kv_dim()) + s.q_dim() * s.hidden + 3 * s.hidden * s.intermediate)
        };
        let r = size(&s) as f64 / size(&small) as f64;
        assert!((8.0..=13.0).contains(&r), "{r}");
    }
}
