//! The output layer: logits = `x · Eᵀ + b` over the tied target embedding `E`.
//!
//! int8 models (browsermt `layers/generic.cpp` `Output::applyAsLogits`, `intgemm_interface.h`):
//! `E` was dequantized at load; its multiplier is recomputed as `127 / max|E|` and `E` is
//! requantized with it (which gives back the file's int8 values); the activations use
//! `Wemb_QuantMultA` as loaded; the bias is prepared over the whole vocabulary and, with a
//! shortlist, indexed afterwards. Float models compute in float.

use std::borrow::Cow;
use std::sync::Arc;

use reseam_kernels::{Epilogue, Output, PackedB, QuantizedA, Scale, ShapeError, scalar};

use crate::marian::layers::linear::{ActScale, Products, dot8, dot8_rows4, dynamic_scale, prepared_bias, unquant_mult};
use crate::pack::F32s;

pub enum OutputLayer {
    Int8 {
        b: PackedB,
        qb: f32,
        act: ActScale,
        /// Read in the forward pass only with dynamic activation scales; a pack's stays in
        /// its map (and untouched).
        bias: Option<F32s>,
        /// Prepared bias over the full vocabulary (fixed activation scale only).
        bprep: F32s,
    },
    Float {
        /// The embedding table, `V` rows of `d`.
        emb: Arc<Vec<f32>>,
        bias: Option<Vec<f32>>,
    },
}

/// One sentence's slice of the output layer under a shortlist.
pub struct ShortOutput {
    pub ids: Vec<u32>,
    b: Option<PackedB>,
    bprep: Vec<f32>,
}

/// intgemm's `PrepareBTransposed` quantization of one float: round half to even, saturate, and
/// keep −128 out (as for activations, without the shift).
fn quantize_b(x: f32, q: f32) -> i8 {
    let i = scalar::cvt_rne(x * q);
    i.clamp(i16::MIN as i32, i16::MAX as i32).clamp(-128, 127).max(-127) as i8
}

impl OutputLayer {
    /// An int8 output layer from the dequantized embedding table (`V` rows of `d`).
    pub fn int8(emb: &[f32], d: usize, act: ActScale, bias: Option<Vec<f32>>) -> OutputLayer {
        let maxabs = emb.iter().fold(0f32, |m, v| m.max(v.abs()));
        let qb = 127.0f32 / maxabs;
        let bt: Vec<i8> = emb.iter().map(|&v| quantize_b(v, qb)).collect();
        let v = emb.len() / d;
        let b = PackedB::from_transposed(&bt, d, v);
        let bprep = match act {
            ActScale::Fixed(qa) => Self::prepare(&b, qa, qb, bias.as_deref()),
            ActScale::Dynamic => Vec::new(),
        };
        OutputLayer::Int8 { b, qb, act, bias: bias.map(F32s::from), bprep: bprep.into() }
    }

    /// An int8 layer from its packed weights (a pack's), with the prepared bias the pack holds
    /// or, without one, preparing it as [`OutputLayer::int8`] does.
    pub fn from_parts(b: PackedB, qb: f32, act: ActScale, bias: Option<F32s>, bprep: Option<F32s>) -> OutputLayer {
        let bprep = match (bprep, act) {
            (Some(p), ActScale::Fixed(_)) => p,
            (None, ActScale::Fixed(qa)) => Self::prepare(&b, qa, qb, bias.as_deref()).into(),
            (_, ActScale::Dynamic) => Vec::new().into(),
        };
        OutputLayer::Int8 { b, qb, act, bias, bprep }
    }

    fn prepare(b: &PackedB, qa: f32, qb: f32, bias: Option<&[f32]>) -> Vec<f32> {
        b.col_sums().iter().enumerate().map(|(j, &s)| prepared_bias(s, qa, qb, bias.map(|b| b[j]))).collect()
    }

    /// Number of output columns.
    pub fn vocab(&self, d: usize) -> usize {
        match self {
            OutputLayer::Int8 { b, .. } => b.n(),
            OutputLayer::Float { emb, .. } => emb.len() / d,
        }
    }

    /// The int8 values the layer multiplies with (tests compare them with the file's).
    pub fn int8_weights(&self) -> Option<(&PackedB, f32)> {
        match self {
            OutputLayer::Int8 { b, qb, .. } => Some((b, *qb)),
            OutputLayer::Float { .. } => None,
        }
    }

    /// The layer restricted to a sentence's candidate ids.
    pub fn shortlisted(&self, ids: Vec<u32>) -> ShortOutput {
        match self {
            OutputLayer::Int8 { b, bprep, .. } => {
                let sel = b.select_columns(&ids);
                let bprep =
                    if bprep.is_empty() { Vec::new() } else { ids.iter().map(|&i| bprep[i as usize]).collect() };
                ShortOutput { ids, b: Some(sel), bprep }
            }
            OutputLayer::Float { bias, .. } => {
                let bprep = bias.as_ref().map(|b| ids.iter().map(|&i| b[i as usize]).collect()).unwrap_or_default();
                ShortOutput { ids, b: None, bprep }
            }
        }
    }

    /// Logits of `rows` rows of `x` (width `d`) over the full vocabulary or, for a row `r` with
    /// `short(r)`, over that shortlist's ids; row `r` goes to `out[r * stride ..]`.
    #[allow(clippy::too_many_arguments)]
    pub fn forward<'s>(
        &self,
        p: &Products,
        x: &[f32],
        d: usize,
        rows: usize,
        short: &dyn Fn(usize) -> Option<&'s ShortOutput>,
        out: &mut [f32],
        stride: usize,
        a_buf: &mut Vec<u8>,
    ) -> Result<(), ShapeError> {
        match self {
            OutputLayer::Int8 { b, qb, act, bias, bprep } => {
                if rows == 0 {
                    return Ok(());
                }
                let kp = b.k_padded();
                if a_buf.len() < rows * kp {
                    a_buf.resize(rows * kp, 0);
                }
                // Computed again where needed rather than kept: a step allocates nothing.
                let scale_of = |r: usize| match act {
                    ActScale::Fixed(q) => *q,
                    ActScale::Dynamic => dynamic_scale(&x[r * d..(r + 1) * d]),
                };
                for r in 0..rows {
                    p.kernels.quantize(&x[r * d..(r + 1) * d], scale_of(r), &mut a_buf[r * kp..r * kp + d]);
                }
                let per_row = matches!(act, ActScale::Dynamic) || (0..rows).any(|r| short(r).is_some());
                if !per_row {
                    let a = QuantizedA { data: a_buf, rows, stride: kp };
                    let ep = Epilogue {
                        zero_fix: None,
                        scale: Scale::Uniform(unquant_mult(scale_of(0), *qb)),
                        bias: Some(bprep),
                        relu: false,
                    };
                    return p.gemm(&a, b, &ep, &mut Output::F32 { data: &mut out[..rows * stride], stride });
                }
                for r in 0..rows {
                    let a = QuantizedA { data: &a_buf[r * kp..(r + 1) * kp], rows: 1, stride: kp };
                    let qa = scale_of(r);
                    // Dynamic activation scales (the old int8shiftAll models) prepare the bias per
                    // row, which allocates; the shipped alphas models never take that path.
                    let (bm, prep): (&PackedB, Cow<[f32]>) = match (short(r), act) {
                        (Some(s), ActScale::Fixed(_)) => (s.b.as_ref().unwrap_or(b), Cow::Borrowed(&s.bprep)),
                        (Some(s), ActScale::Dynamic) => {
                            let full = Self::prepare(b, qa, *qb, bias.as_deref());
                            (s.b.as_ref().unwrap_or(b), s.ids.iter().map(|&i| full[i as usize]).collect())
                        }
                        (None, ActScale::Fixed(_)) => (b, Cow::Borrowed(&bprep[..])),
                        (None, ActScale::Dynamic) => (b, Cow::Owned(Self::prepare(b, qa, *qb, bias.as_deref()))),
                    };
                    let ep = Epilogue {
                        zero_fix: None,
                        scale: Scale::Uniform(unquant_mult(qa, *qb)),
                        bias: Some(&prep),
                        relu: false,
                    };
                    let o = &mut out[r * stride..r * stride + bm.n()];
                    p.gemm(&a, bm, &ep, &mut Output::F32 { data: o, stride: bm.n() })?;
                }
                Ok(())
            }
            OutputLayer::Float { emb, bias } => {
                // Four sentence rows per pass over the vocabulary, so each embedding row is read
                // once per four sentences; shortlisted rows are scored on their own.
                let mut r0 = 0;
                while r0 < rows {
                    if let Some(s) = short(r0) {
                        let xr = &x[r0 * d..(r0 + 1) * d];
                        for (c, &id) in s.ids.iter().enumerate() {
                            let id = id as usize;
                            let mut v = dot8(xr, &emb[id * d..(id + 1) * d]);
                            if !s.bprep.is_empty() {
                                v += s.bprep[c];
                            }
                            out[r0 * stride + c] = v;
                        }
                        r0 += 1;
                        continue;
                    }
                    let m = (r0..rows.min(r0 + 4)).take_while(|&r| short(r).is_none()).count();
                    let xs: [&[f32]; 4] = std::array::from_fn(|i| {
                        let r = r0 + i.min(m - 1);
                        &x[r * d..(r + 1) * d]
                    });
                    for (j, e) in emb.chunks_exact(d).enumerate() {
                        let v = dot8_rows4(xs, e);
                        for (i, &v) in v.iter().enumerate().take(m) {
                            out[(r0 + i) * stride + j] = match bias {
                                Some(b) => v + b[j],
                                None => v,
                            };
                        }
                    }
                    r0 += m;
                }
                Ok(())
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn requantization_gives_back_the_int8_values() {
        let q = 50.0f32;
        let r = 1.0f32 / q;
        let ints: Vec<i8> = (0..64i32).map(|i| ((i * 29) % 255) as i8).map(|v| v.max(-127)).collect();
        let emb: Vec<f32> = ints.iter().map(|&i| i as f32 * r).collect();
        let layer = OutputLayer::int8(&emb, 8, ActScale::Fixed(10.0), None);
        let (b, _) = layer.int8_weights().unwrap();
        assert_eq!(b.unpack_transposed(), ints);
    }
}
