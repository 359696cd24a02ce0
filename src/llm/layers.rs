//! Parts the Llama-family architectures share: the decoder's shape ([`DecoderSpec`]), RoPE
//! (with `linear` and `llama3` frequency scaling), RMSNorm, SwiGLU and causal grouped-query
//! attention over a KV cache. All in f32, in Transformers' order of operations (eager
//! attention), one row at a time so that results never depend on how many rows a call has.

use std::path::Path;

use rayon::prelude::*;
use serde_json::Value;

use super::{Error, Result};

/// How RoPE frequencies are scaled for long contexts.
#[derive(Clone, Debug, PartialEq)]
pub enum RopeScaling {
    None,
    /// Position interpolation: every frequency divided by `factor`.
    Linear {
        factor: f32,
    },
    /// Llama 3.1+: low frequencies divided by `factor`, high ones kept, a smooth band between.
    Llama3 {
        factor: f32,
        low_freq_factor: f32,
        high_freq_factor: f32,
        original_max_positions: f32,
    },
}

/// RoPE parameters as read from `config.json`.
#[derive(Clone, Debug, PartialEq)]
pub struct RopeSpec {
    pub theta: f64,
    pub scaling: RopeScaling,
}

fn num(v: &Value, key: &str, path: &Path, field: &str) -> Result<f32> {
    v.get(key).and_then(Value::as_f64).map(|x| x as f32).ok_or_else(|| Error::Field {
        path: path.to_path_buf(),
        field: format!("{field}.{key}"),
        msg: "missing or not a number".into(),
    })
}

impl RopeSpec {
    /// Reads `rope_theta` + `rope_scaling` (Transformers 4 layout) or `rope_parameters`
    /// (Transformers 5 layout, which holds `rope_theta` itself).
    pub fn from_config(
        theta: Option<f64>,
        scaling: Option<&Value>,
        parameters: Option<&Value>,
        path: &Path,
    ) -> Result<RopeSpec> {
        let (params, field) = match (parameters, scaling) {
            (Some(p), _) if p.is_object() => (Some(p), "rope_parameters"),
            (_, Some(s)) if s.is_object() => (Some(s), "rope_scaling"),
            _ => (None, "rope_scaling"),
        };
        let theta = params.and_then(|p| p.get("rope_theta")).and_then(Value::as_f64).or(theta).unwrap_or(10000.0);
        let Some(p) = params else {
            return Ok(RopeSpec { theta, scaling: RopeScaling::None });
        };
        let kind = p.get("rope_type").or_else(|| p.get("type")).and_then(Value::as_str).unwrap_or("default");
        let scaling = match kind {
            "default" => RopeScaling::None,
            "linear" => RopeScaling::Linear { factor: num(p, "factor", path, field)? },
            "llama3" => RopeScaling::Llama3 {
                factor: num(p, "factor", path, field)?,
                low_freq_factor: num(p, "low_freq_factor", path, field)?,
                high_freq_factor: num(p, "high_freq_factor", path, field)?,
                original_max_positions: num(p, "original_max_position_embeddings", path, field)?,
            },
            other => {
                return Err(Error::Field {
                    path: path.to_path_buf(),
                    field: format!("{field}.rope_type"),
                    msg: format!("{other:?} is not supported (reseam runs default, linear and llama3 RoPE)"),
                });
            }
        };
        Ok(RopeSpec { theta, scaling })
    }

    /// The inverse frequencies, computed in f32 as Transformers' RoPE initialisers do.
    pub fn inv_freq(&self, head_dim: usize) -> Vec<f32> {
        let base = self.theta;
        let mut inv: Vec<f32> = (0..head_dim / 2)
            .map(|i| {
                let e = (2 * i) as f32 / head_dim as f32;
                // torch: base ** exponent in float32 (a correctly rounded pow), then 1/x.
                1.0f32 / (base.powf(e as f64) as f32)
            })
            .collect();
        match self.scaling {
            RopeScaling::None => {}
            RopeScaling::Linear { factor } => inv.iter_mut().for_each(|f| *f /= factor),
            RopeScaling::Llama3 { factor, low_freq_factor, high_freq_factor, original_max_positions } => {
                let old = original_max_positions;
                let low_wavelen = old / low_freq_factor;
                let high_wavelen = old / high_freq_factor;
                let two_pi = (2.0 * std::f64::consts::PI) as f32;
                for f in inv.iter_mut() {
                    let wavelen = two_pi / *f;
                    let llama = if wavelen > low_wavelen { *f / factor } else { *f };
                    let smooth = (old / wavelen - low_freq_factor) / (high_freq_factor - low_freq_factor);
                    let smoothed = (1.0 - smooth) * llama / factor + smooth * llama;
                    // Transformers: ~(wavelen < high) * ~(wavelen > low), i.e. high <= wavelen <= low.
                    let medium = wavelen >= high_wavelen && wavelen <= low_wavelen;
                    *f = if medium { smoothed } else { llama };
                }
            }
        }
        inv
    }
}

/// The shape of a Llama-family decoder, whichever architecture's config it came from.
#[derive(Clone, Debug, PartialEq)]
pub struct DecoderSpec {
    pub hidden: usize,
    pub intermediate: usize,
    pub layers: usize,
    pub heads: usize,
    pub kv_heads: usize,
    pub head_dim: usize,
    /// Rows of the embedding and of the output layer (may exceed the tokenizer's size).
    pub vocab: usize,
    pub rms_norm_eps: f32,
    pub rope: RopeSpec,
    pub max_positions: usize,
    pub tied_embeddings: bool,
    pub qkv_bias: bool,
    pub o_bias: bool,
    pub mlp_bias: bool,
    /// Each query sees only this many latest positions (itself included); `None`: all.
    pub sliding_window: Option<usize>,
}

impl DecoderSpec {
    pub fn q_dim(&self) -> usize {
        self.heads * self.head_dim
    }
    pub fn kv_dim(&self) -> usize {
        self.kv_heads * self.head_dim
    }

    /// Checks what the forward pass relies on.
    pub fn validate(&self, path: &Path) -> Result<()> {
        let bad = |field: &str, msg: String| Err(Error::Field { path: path.to_path_buf(), field: field.into(), msg });
        for (field, v) in [
            ("hidden_size", self.hidden),
            ("intermediate_size", self.intermediate),
            ("num_hidden_layers", self.layers),
            ("num_attention_heads", self.heads),
            ("num_key_value_heads", self.kv_heads),
            ("head_dim", self.head_dim),
            ("vocab_size", self.vocab),
            ("max_position_embeddings", self.max_positions),
        ] {
            if v == 0 || v > 1 << 24 {
                return bad(field, format!("{v} is not a usable size"));
            }
        }
        if !self.heads.is_multiple_of(self.kv_heads) {
            return bad(
                "num_key_value_heads",
                format!("{} does not divide num_attention_heads {}", self.kv_heads, self.heads),
            );
        }
        if !self.head_dim.is_multiple_of(2) {
            return bad("head_dim", format!("{} is odd; RoPE rotates pairs", self.head_dim));
        }
        if self.rms_norm_eps.is_nan() || self.rms_norm_eps < 0.0 {
            return bad("rms_norm_eps", "must be a non-negative number".into());
        }
        if self.rope.theta.is_nan() || self.rope.theta <= 1.0 {
            return bad("rope_theta", format!("{} must be above 1", self.rope.theta));
        }
        Ok(())
    }
}

/// `x · rsqrt(mean(x²) + eps) · weight` per row of `x`, as Transformers' `LlamaRMSNorm`.
pub fn rms_norm(x: &[f32], weight: &[f32], eps: f32, out: &mut [f32]) {
    let d = weight.len();
    for (xr, or) in x.chunks_exact(d).zip(out.chunks_exact_mut(d)) {
        let mut acc = [0f32; 8];
        let chunks = xr.chunks_exact(8);
        let tail = chunks.remainder();
        for c in chunks {
            for l in 0..8 {
                acc[l] += c[l] * c[l];
            }
        }
        let mut ss = ((acc[0] + acc[4]) + (acc[1] + acc[5])) + ((acc[2] + acc[6]) + (acc[3] + acc[7]));
        for v in tail {
            ss += v * v;
        }
        let inv = 1.0 / (ss / d as f32 + eps).sqrt();
        for ((o, v), w) in or.iter_mut().zip(xr).zip(weight) {
            *o = w * (v * inv);
        }
    }
}

/// `silu(gate) · up` for rows holding `[gate | up]` (width `2·inter`), into rows of `inter`.
pub fn swiglu(gate_up: &[f32], inter: usize, out: &mut [f32]) {
    for (gu, o) in gate_up.chunks_exact(2 * inter).zip(out.chunks_exact_mut(inter)) {
        let (g, u) = gu.split_at(inter);
        for ((o, g), u) in o.iter_mut().zip(g).zip(u) {
            *o = (g / (1.0 + (-g).exp())) * u;
        }
    }
}

/// cos and sin of `position · inv_freq` for the given positions, `[positions × head_dim/2]`.
pub fn rope_tables(inv_freq: &[f32], positions: std::ops::Range<usize>) -> (Vec<f32>, Vec<f32>) {
    let mut cos = Vec::with_capacity(positions.len() * inv_freq.len());
    let mut sin = Vec::with_capacity(cos.capacity());
    for p in positions {
        for f in inv_freq {
            // The angle is rounded to f32 as torch computes it; cos/sin of it are then taken
            // in f64 and rounded once (torch's f32 cos is within an ulp of that).
            let angle = (p as f32 * f) as f64;
            cos.push(angle.cos() as f32);
            sin.push(angle.sin() as f32);
        }
    }
    (cos, sin)
}

/// Rotates each head of each row in place: `x·cos + rotate_half(x)·sin` (halves, not pairs).
pub fn apply_rope(x: &mut [f32], rows: usize, heads: usize, head_dim: usize, cos: &[f32], sin: &[f32]) {
    let half = head_dim / 2;
    for r in 0..rows {
        let (c, s) = (&cos[r * half..(r + 1) * half], &sin[r * half..(r + 1) * half]);
        for h in 0..heads {
            let v = &mut x[(r * heads + h) * head_dim..(r * heads + h + 1) * head_dim];
            for i in 0..half {
                let (a, b) = (v[i], v[i + half]);
                v[i] = a * c[i] + (-b) * s[i];
                v[i + half] = b * c[i] + a * s[i];
            }
        }
    }
}

/// Causal attention of new queries (at positions `past..`) over the cached keys and values of
/// every position up to each query's own. `q` is `rows × heads × head_dim`; `k`/`v` are
/// `positions × kv_heads × head_dim`; `out` is shaped like `q`.
#[allow(clippy::too_many_arguments)]
pub fn attention(
    q: &[f32],
    k: &[f32],
    v: &[f32],
    past: usize,
    heads: usize,
    kv_heads: usize,
    head_dim: usize,
    window: Option<usize>,
    out: &mut [f32],
) {
    let group = heads / kv_heads;
    let kv_dim = kv_heads * head_dim;
    let scaling = (head_dim as f64).powf(-0.5) as f32;
    out.par_chunks_mut(head_dim).enumerate().for_each(|(idx, o)| {
        let (r, h) = (idx / heads, idx % heads);
        let kvh = h / group;
        let pos = past + r;
        let first = window.map_or(0, |w| (pos + 1).saturating_sub(w));
        let qv = &q[idx * head_dim..(idx + 1) * head_dim];
        let mut scores: Vec<f32> = (first..=pos)
            .map(|j| {
                let kr = &k[j * kv_dim + kvh * head_dim..j * kv_dim + (kvh + 1) * head_dim];
                super::gemm::dot(qv, kr) * scaling
            })
            .collect();
        let max = scores.iter().fold(f32::NEG_INFINITY, |m, s| m.max(*s));
        let mut sum = 0f32;
        for s in scores.iter_mut() {
            *s = (*s - max).exp();
            sum += *s;
        }
        o.iter_mut().for_each(|x| *x = 0.0);
        for (j, s) in (first..=pos).zip(&scores) {
            let w = s / sum;
            let vr = &v[j * kv_dim + kvh * head_dim..j * kv_dim + (kvh + 1) * head_dim];
            for (x, vv) in o.iter_mut().zip(vr) {
                *x += w * vv;
            }
        }
    });
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn llama3_scaling_keeps_high_divides_low_and_smooths_between() {
        let spec = RopeSpec {
            theta: 500000.0,
            scaling: RopeScaling::Llama3 {
                factor: 32.0,
                low_freq_factor: 1.0,
                high_freq_factor: 4.0,
                original_max_positions: 8192.0,
            },
        };
        let plain = RopeSpec { theta: 500000.0, scaling: RopeScaling::None }.inv_freq(16);
        let scaled = spec.inv_freq(16);
        // The fixture README: of 8 frequencies, 4 unchanged, the 5th smoothed, the last 3 / 32.
        assert_eq!(&scaled[..4], &plain[..4]);
        assert!(scaled[4] < plain[4] && scaled[4] > plain[4] / 32.0);
        for i in 5..8 {
            assert_eq!(scaled[i], plain[i] / 32.0);
        }
    }

    #[test]
    fn rope_config_layouts_and_errors() {
        let p = Path::new("config.json");
        let v: Value = serde_json::json!({"rope_type": "llama3", "factor": 8.0, "low_freq_factor": 1.0,
            "high_freq_factor": 4.0, "original_max_position_embeddings": 8192, "rope_theta": 5e5});
        let s = RopeSpec::from_config(None, None, Some(&v), p).unwrap();
        assert_eq!(s.theta, 5e5);
        assert!(matches!(s.scaling, RopeScaling::Llama3 { .. }));
        let y = serde_json::json!({"type": "yarn", "factor": 4.0});
        let e = RopeSpec::from_config(Some(1e4), Some(&y), None, p).unwrap_err().to_string();
        assert!(e.contains("rope_scaling.rope_type") && e.contains("yarn"), "{e}");
        let missing = serde_json::json!({"rope_type": "linear"});
        assert!(RopeSpec::from_config(Some(1e4), Some(&missing), None, p).is_err());
    }

    #[test]
    fn attention_over_one_position_returns_its_value() {
        let (hd, heads, kvh) = (4, 2, 1);
        let q = vec![0.3f32; heads * hd];
        let k = vec![1.0f32; kvh * hd];
        let v = vec![0.5, -1.0, 2.0, 4.0];
        let mut out = vec![0f32; heads * hd];
        attention(&q, &k, &v, 0, heads, kvh, hd, None, &mut out);
        assert_eq!(out, [v.clone(), v].concat());
    }

    #[test]
    fn rms_norm_matches_definition() {
        let x = [1.0f32, 2.0, 3.0, 4.0];
        let w = [1.0f32, 0.5, 2.0, 1.0];
        let mut o = [0f32; 4];
        rms_norm(&x, &w, 0.0, &mut o);
        let r = (30.0f32 / 4.0).sqrt();
        for i in 0..4 {
            assert!((o[i] - w[i] * x[i] / r).abs() < 1e-6);
        }
    }
}
