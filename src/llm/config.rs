//! A checkpoint's `config.json`, read into the decoder's shape: the keys the three
//! architectures share ([`CommonConfig`]), what each sets itself ([`ArchitectureSpec`]), RoPE
//! parameters with `linear` and `llama3` frequency scaling ([`RopeSpec`]), and the checked
//! shape the decoder is built from ([`DecoderSpec`]).

use std::path::Path;

use serde_json::Value;

use super::{Error, Result};

/// The `config.json` keys the three architectures share, with Transformers' defaults for absent
/// keys; each architecture's file flattens it into its own `Config` beside what differs.
#[derive(Debug, serde::Deserialize)]
pub struct CommonConfig {
    pub hidden_size: usize,
    pub intermediate_size: usize,
    pub num_hidden_layers: usize,
    pub num_attention_heads: usize,
    pub num_key_value_heads: Option<usize>,
    pub head_dim: Option<usize>,
    #[serde(default = "default_eps")]
    pub rms_norm_eps: f64,
    pub rope_theta: Option<f64>,
    pub rope_scaling: Option<serde_json::Value>,
    pub rope_parameters: Option<serde_json::Value>,
    pub vocab_size: usize,
    #[serde(default)]
    pub tie_word_embeddings: bool,
    #[serde(default = "default_act")]
    pub hidden_act: String,
}

fn default_eps() -> f64 {
    1e-6
}

fn default_act() -> String {
    "silu".into()
}

/// What an architecture sets itself in its [`DecoderSpec`].
pub struct ArchitectureSpec {
    pub max_positions: usize,
    pub qkv_bias: bool,
    pub o_bias: bool,
    pub mlp_bias: bool,
    pub sliding_window: Option<usize>,
}

impl CommonConfig {
    /// The decoder's shape, checked; `path` names the file in errors.
    pub fn spec(&self, arch: ArchitectureSpec, path: &Path) -> Result<DecoderSpec> {
        if self.hidden_act != "silu" && self.hidden_act != "swish" {
            return Err(Error::Field {
                path: path.to_path_buf(),
                field: "hidden_act".into(),
                msg: format!("{:?} is not supported (these architectures use silu)", self.hidden_act),
            });
        }
        let spec = DecoderSpec {
            hidden: self.hidden_size,
            intermediate: self.intermediate_size,
            layers: self.num_hidden_layers,
            heads: self.num_attention_heads,
            kv_heads: self.num_key_value_heads.unwrap_or(self.num_attention_heads),
            head_dim: self.head_dim.unwrap_or(self.hidden_size / self.num_attention_heads.max(1)),
            vocab: self.vocab_size,
            rms_norm_eps: self.rms_norm_eps as f32,
            rope: RopeSpec::from_config(
                self.rope_theta,
                self.rope_scaling.as_ref(),
                self.rope_parameters.as_ref(),
                path,
            )?,
            max_positions: arch.max_positions,
            tied_embeddings: self.tie_word_embeddings,
            qkv_bias: arch.qkv_bias,
            o_bias: arch.o_bias,
            mlp_bias: arch.mlp_bias,
            sliding_window: arch.sliding_window,
        };
        spec.validate(path)?;
        Ok(spec)
    }
}

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
}
