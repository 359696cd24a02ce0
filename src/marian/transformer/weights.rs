//! Turning a model file's items into layers: name lookup, shape checks, and the weight formats
//! (browsermt `intgemm8` with or without `*_QuantMultA`, or float32).

use std::collections::HashMap;

use reseam_kernels::PackedB;

use crate::marian::binary::{Item, ItemType};
use crate::marian::layers::linear::{ActScale, FloatLinear, Int8Linear, Int8Weight, Linear};

/// A problem with one item, named; the caller adds the file.
#[derive(Debug, thiserror::Error, PartialEq, Eq)]
pub enum WeightError {
    #[error("parameter {0} is missing")]
    Missing(String),
    #[error("parameter {name} has shape {found:?}, the model.yml architecture needs {expected:?}")]
    Shape { name: String, expected: Vec<usize>, found: Vec<usize> },
    #[error("parameter {name}: {message}")]
    Bad { name: String, message: String },
}

crate::error::fault!(WeightError);

impl WeightError {
    /// A damaged model file, never the caller's fault.
    pub fn is_usage(&self) -> bool {
        false
    }
}

/// A layer-norm's scale and bias.
pub struct Norm {
    pub gamma: Vec<f32>,
    pub beta: Vec<f32>,
}

/// The items of a model by name.
pub struct Items<'a> {
    map: HashMap<String, Item<'a>>,
}

impl<'a> Items<'a> {
    pub fn new(items: Vec<Item<'a>>) -> Items<'a> {
        Items { map: items.into_iter().map(|i| (i.name.clone(), i)).collect() }
    }

    pub fn get(&self, name: &str) -> Result<&Item<'a>, WeightError> {
        self.map.get(name).ok_or_else(|| WeightError::Missing(name.into()))
    }

    pub fn has(&self, name: &str) -> bool {
        self.map.contains_key(name)
    }

    /// Whether any parameter is stored as int8 (the model runs the int8 path).
    pub fn any_int8(&self) -> bool {
        self.map.values().any(|i| i.ty == ItemType::Intgemm8 && !i.name.contains("QuantMult"))
    }

    fn check_shape(item: &Item, rows: usize, cols: usize) -> Result<(), WeightError> {
        if item.rows_cols() != (rows, cols) || item.shape.is_empty() {
            return Err(WeightError::Shape {
                name: item.name.clone(),
                expected: vec![rows, cols],
                found: item.shape.clone(),
            });
        }
        Ok(())
    }

    /// A float vector of `n` values (biases, layer-norm parameters; shape `[1, n]` or `[n]`).
    pub fn vector(&self, name: &str, n: usize) -> Result<Vec<f32>, WeightError> {
        let item = self.get(name)?;
        Self::check_shape(item, 1, n)?;
        item.f32s().map_err(|e| WeightError::Bad { name: name.into(), message: e.0 })
    }

    pub fn norm(&self, prefix: &str, n: usize) -> Result<Norm, WeightError> {
        Ok(Norm {
            gamma: self.vector(&format!("{prefix}_ln_scale"), n)?,
            beta: self.vector(&format!("{prefix}_ln_bias"), n)?,
        })
    }

    /// The activation multiplier of weight `name`, if the file has one. `Wemb_QuantMultA` is
    /// stored as intgemm8 by marian-conv (its name contains "Wemb"); Marian dequantizes it at load
    /// like the embeddings, `int8 · (1/q)`, and that value is what the output layer uses.
    pub fn alpha(&self, name: &str) -> Result<Option<f32>, WeightError> {
        let key = format!("{name}_QuantMultA");
        let Some(item) = self.map.get(&key) else { return Ok(None) };
        let bad = |message: String| WeightError::Bad { name: key.clone(), message };
        if item.elements() != 1 {
            return Err(bad(format!("has {} values, expected 1", item.elements())));
        }
        let v = match item.ty {
            ItemType::Float32 => item.f32s().map_err(|e| bad(e.0))?[0],
            ItemType::Intgemm8 => {
                let (q, m) = item.intgemm8().map_err(|e| bad(e.0))?;
                (q[0] as i8) as f32 * (1.0f32 / m)
            }
            ItemType::Int8 => return Err(bad("is int8".into())),
        };
        if !(v.is_finite() && v > 0.0) {
            return Err(bad(format!("{v} is not a positive multiplier")));
        }
        Ok(Some(v))
    }

    /// An embedding matrix `[rows, cols]` as floats (intgemm8 is dequantized as Marian does:
    /// `int8 · (1.0f / q)`, the reciprocal rounded first).
    pub fn embedding(&self, name: &str, rows: usize, cols: usize) -> Result<Vec<f32>, WeightError> {
        let item = self.get(name)?;
        Self::check_shape(item, rows, cols)?;
        let bad = |message: String| WeightError::Bad { name: name.into(), message };
        match item.ty {
            ItemType::Float32 => item.f32s().map_err(|e| bad(e.0)),
            ItemType::Intgemm8 => {
                let (q, m) = item.intgemm8().map_err(|e| bad(e.0))?;
                if !(m.is_finite() && m > 0.0) {
                    return Err(bad(format!("quantization multiplier {m}")));
                }
                let r = 1.0f32 / m;
                Ok(q.iter().map(|&b| (b as i8) as f32 * r).collect())
            }
            ItemType::Int8 => Err(bad("is plain int8, expected float32 or intgemm8".into())),
        }
    }

    /// An embedding matrix kept in its file's form (see [`Embedding`]).
    pub fn embedding_table(&self, name: &str, rows: usize, cols: usize) -> Result<Embedding, WeightError> {
        let item = self.get(name)?;
        Self::check_shape(item, rows, cols)?;
        if item.ty != ItemType::Intgemm8 {
            return Ok(Embedding::F32(std::sync::Arc::new(self.embedding(name, rows, cols)?)));
        }
        let bad = |message: String| WeightError::Bad { name: name.into(), message };
        let (q, m) = item.intgemm8().map_err(|e| bad(e.0))?;
        if !(m.is_finite() && m > 0.0) {
            return Err(bad(format!("quantization multiplier {m}")));
        }
        Ok(Embedding::Int8 { rows: crate::pack::Bytes::from_vec(q.to_vec()), recip: 1.0f32 / m, cols })
    }

    /// Weight `name` (`[k, n]` in Marian's orientation) with optional bias, as an int8 part (to be
    /// fused) or a float layer.
    pub fn weight(&self, name: &str, bias: Option<&str>, k: usize, n: usize) -> Result<Weight, WeightError> {
        let item = self.get(name)?;
        Self::check_shape(item, k, n)?;
        let bias = match bias {
            Some(b) => Some(self.vector(b, n)?),
            None => None,
        };
        let bad = |message: String| WeightError::Bad { name: name.into(), message };
        match item.ty {
            ItemType::Intgemm8 => {
                let (q, qb) = item.intgemm8().map_err(|e| bad(e.0))?;
                if !(qb.is_finite() && qb > 0.0) {
                    return Err(bad(format!("quantization multiplier {qb}")));
                }
                // Stored transposed: n rows of k (marian-conv transposes every non-embedding
                // matrix and keeps the original shape in the header).
                let bt: Vec<i8> = q.iter().map(|&b| b as i8).collect();
                let act = match self.alpha(name)? {
                    Some(a) => ActScale::Fixed(a),
                    None => ActScale::Dynamic,
                };
                Ok(Weight::Int8(Int8Weight { b: PackedB::from_transposed(&bt, k, n), qb, act, bias }))
            }
            ItemType::Float32 => {
                let w = item.f32s().map_err(|e| bad(e.0))?;
                Ok(Weight::Float(FloatLinear::from_rows(&w, k, n, bias)))
            }
            ItemType::Int8 => Err(bad("is plain int8, expected float32 or intgemm8".into())),
        }
    }
}

/// An embedding table `rows × cols`: int8 rows with Marian's dequantization multiplier
/// (`int8 · (1.0f / q)`, formed per lookup exactly as Marian forms it at load; a quarter of the
/// floats' size and what a pack maps), or floats.
#[derive(Clone)]
pub enum Embedding {
    Int8 { rows: crate::pack::Bytes, recip: f32, cols: usize },
    F32(std::sync::Arc<Vec<f32>>),
}

impl Embedding {
    /// `out = scale · row(id)`.
    pub fn scaled_row(&self, id: usize, scale: f32, out: &mut [f32]) {
        let d = out.len();
        match self {
            Embedding::Int8 { rows, recip, .. } => {
                for (o, &b) in out.iter_mut().zip(&rows[id * d..(id + 1) * d]) {
                    *o = scale * ((b as i8) as f32 * recip);
                }
            }
            Embedding::F32(v) => {
                for (o, &e) in out.iter_mut().zip(&v[id * d..(id + 1) * d]) {
                    *o = scale * e;
                }
            }
        }
    }

    /// The whole table as floats (building an output layer).
    pub fn to_f32(&self) -> std::sync::Arc<Vec<f32>> {
        match self {
            Embedding::Int8 { rows, recip, .. } => {
                std::sync::Arc::new(rows.iter().map(|&b| (b as i8) as f32 * recip).collect())
            }
            Embedding::F32(v) => v.clone(),
        }
    }
}

/// One weight before fusion.
pub enum Weight {
    Int8(Int8Weight),
    Float(FloatLinear),
}

impl Weight {
    pub fn into_linear(self) -> Linear {
        match self {
            Weight::Int8(w) => Linear::Int8(Int8Linear::single(w)),
            Weight::Float(f) => Linear::Float(f),
        }
    }
}

/// Weights that read the same input, fused into one product when the format allows (all int8
/// with one activation multiplier), else kept apart.
pub enum Fused {
    One(Linear),
    Apart(Vec<Linear>),
}

impl Fused {
    pub fn new(weights: Vec<Weight>) -> Fused {
        if !weights.iter().all(|w| matches!(w, Weight::Int8(_))) {
            return Fused::Apart(weights.into_iter().map(Weight::into_linear).collect());
        }
        let parts: Vec<Int8Weight> =
            weights.into_iter().filter_map(|w| if let Weight::Int8(i) = w { Some(i) } else { None }).collect();
        match Int8Linear::fuse(parts) {
            Ok(l) => Fused::One(Linear::Int8(l)),
            Err(parts) => Fused::Apart(parts.into_iter().map(|p| Linear::Int8(Int8Linear::single(p))).collect()),
        }
    }

    pub fn is_fused(&self) -> bool {
        matches!(self, Fused::One(_))
    }
}
