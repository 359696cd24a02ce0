//! Linear layers `y = x·W + b`. The weight format (int8 with activation scales, or float32) belongs
//! here and nowhere else: the model code only says which weights form a layer.
//!
//! int8 follows browsermt Marian's shifted arithmetic (`tensors/cpu/intgemm_interface.h`):
//! activations quantized with the layer's activation multiplier `qA` and shifted by +127, weights
//! as stored (multiplier `qB`), and the shift cancelled in float through a prepared bias:
//! `c = -(((127/qA) · (127/qB)) / 127)`, `bprep = (float)colsum · c + bias`,
//! `um = 1 / (qA · qB)`, `y = (float)acc · um + bprep`. Several weights that read the same input
//! with the same `qA` are fused into one product (each column keeps its own `um` and `bprep`).

use std::ops::Range;

use crate::pack;
use crate::profile::{self, Read};
use reseam_kernels::{Arithmetic, Epilogue, GemmTask, Kernels, Output, PackedB, QuantizedA, Scale, ShapeError};

/// A product with at least this many multiply-adds is cut by columns when no thread waits for
/// its halves: in rounds (a thread done with its part takes halves of the others'), and in
/// latency mode beside a batch encoded in the background, where the others may be parked: below
/// it, waking a second thread costs more than it saves (on the 2-core Xeon VM a 256 × 256
/// product of one row takes about a microsecond, the wake-up tens).
pub const COLUMN_SPLIT_MACS: usize = 1 << 20;

/// The same in latency mode while the other threads spin for the step's halves: a half is taken
/// at once, so a product of a few microseconds is worth cutting: the decoder's FFN products at
/// one row (256 × 1536), not its 256 × 256 ones. Measured on a 2-vCPU AMD EPYC Zen 3 (`bench
/// translate --clients 1 --latency-requests 300`, tiny, 2 threads, runs alternated in pairs),
/// idle p50 / p99 against `COLUMN_SPLIT_MACS` here: saturating 0.92 / 0.90 (20 pairs) and
/// 0.97 / 1.04 (12), exact 0.89 / 0.83 (12). Cutting every product (2^15) was slower than 2^17
/// (1.09 / 1.08).
pub const SPINNING_SPLIT_MACS: usize = 1 << 18;

/// A pool to cut products by columns over, and the smallest product worth cutting
/// ([`COLUMN_SPLIT_MACS`] or [`SPINNING_SPLIT_MACS`]).
#[derive(Clone, Copy, Debug)]
pub struct Columns<'k> {
    pub pool: &'k rayon::ThreadPool,
    pub min_macs: usize,
}

/// How the products of a forward pass run: the kernels, the arithmetic, and, in latency mode
/// or in rounds (the scheduler's choice), a pool over which each large product's columns are
/// split. The output is the same either way: every column's sums are computed whole by one
/// thread.
#[derive(Clone, Copy)]
pub struct Products<'k> {
    pub kernels: &'k Kernels,
    pub arith: Arithmetic,
    pub columns: Option<Columns<'k>>,
}

impl<'k> Products<'k> {
    /// The pool to cut a product of `macs` multiply-adds over by columns, if it is to be cut.
    pub fn split_over(&self, macs: usize) -> Option<&'k rayon::ThreadPool> {
        self.columns.filter(|c| c.pool.current_num_threads() > 1 && macs >= c.min_macs).map(|c| c.pool)
    }

    /// `out = epilogue(a · b)`.
    pub fn gemm(&self, a: &QuantizedA, b: &PackedB, ep: &Epilogue, out: &mut Output) -> Result<(), ShapeError> {
        profile::read(Read::Weights, b.k_padded() * b.n());
        let macs = a.rows * b.n() * b.k();
        profile::macs(macs);
        match self.split_over(macs) {
            Some(pool) => {
                let task = self.kernels.task(self.arith, a, b, ep, out)?;
                let (threads, grain) = (pool.current_num_threads(), self.kernels.column_grain());
                pool.install(move || run_split(task, threads, grain));
                Ok(())
            }
            _ => self.kernels.gemm(self.arith, a, b, ep, out),
        }
    }
}

/// Runs `task` cut by columns into `parts` pieces, halving recursively with `rayon::join`
/// (which allocates nothing).
fn run_split(task: GemmTask, parts: usize, grain: usize) {
    if parts <= 1 {
        return task.run();
    }
    let half = parts / 2;
    match task.split_columns(half, parts, grain) {
        (l, Some(r)) => {
            rayon::join(move || run_split(l, half, grain), move || run_split(r, parts - half, grain));
        }
        (l, None) => l.run(),
    }
}

/// How the activations of an int8 product are scaled.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum ActScale {
    /// Precomputed multiplier from the model file (`<weight>_QuantMultA`, `int8shiftAlphaAll`).
    Fixed(f32),
    /// `127 / max|A|`, computed per sentence (`int8shiftAll`, models without multipliers).
    Dynamic,
}

/// One int8 weight as read from a model: packed `k × n`, its multiplier, its bias.
pub struct Int8Weight {
    pub b: PackedB,
    pub qb: f32,
    pub act: ActScale,
    pub bias: Option<Vec<f32>>,
}

/// Marian's unquantization multiplier `1.0f / (qA · qB)`.
#[inline]
pub fn unquant_mult(qa: f32, qb: f32) -> f32 {
    1.0f32 / (qa * qb)
}

/// Marian's prepared bias for one column: `(float)colsum · c + bias` (or without bias).
#[inline]
pub fn prepared_bias(colsum: i32, qa: f32, qb: f32, bias: Option<f32>) -> f32 {
    let c = -(((127.0f32 / qa) * (127.0f32 / qb)) / 127.0f32);
    let x = colsum as f32 * c;
    match bias {
        Some(b) => x + b,
        None => x,
    }
}

/// Column ranges of the weights that make up a fused product.
struct Part {
    cols: Range<usize>,
    qb: f32,
    bias: Option<Vec<f32>>,
}

/// An int8 product of one or more weights sharing an input.
pub struct Int8Linear {
    b: PackedB,
    act: ActScale,
    parts: Vec<Part>,
    /// Per column, valid for a fixed activation scale.
    um: Vec<f32>,
    bprep: Vec<f32>,
}

/// Buffers an int8 product needs; owned by the caller's workspace and reused.
#[derive(Default)]
pub struct Int8Scratch {
    pub a: Vec<u8>,
    um: Vec<f32>,
    bprep: Vec<f32>,
}

impl Int8Linear {
    /// Fuses weights side by side, or gives them back if they cannot share one product (different
    /// activation multipliers or inner dimensions, or no weights).
    pub fn fuse(weights: Vec<Int8Weight>) -> Result<Int8Linear, Vec<Int8Weight>> {
        let Some(first) = weights.first() else { return Err(weights) };
        let (k, act) = (first.b.k(), first.act);
        let same = |w: &Int8Weight| {
            w.b.k() == k
                && match (w.act, act) {
                    (ActScale::Fixed(a), ActScale::Fixed(b)) => a.to_bits() == b.to_bits(),
                    (ActScale::Dynamic, ActScale::Dynamic) => true,
                    _ => false,
                }
        };
        if !weights.iter().all(same) || (weights.len() > 1 && act == ActScale::Dynamic) {
            return Err(weights);
        }
        let b = if weights.len() == 1 {
            weights[0].b.clone()
        } else {
            PackedB::concat(&weights.iter().map(|w| &w.b).collect::<Vec<_>>())
        };
        let mut parts = Vec::new();
        let mut at = 0;
        for w in weights {
            let n = w.b.n();
            parts.push(Part { cols: at..at + n, qb: w.qb, bias: w.bias });
            at += n;
        }
        let mut lin = Int8Linear { b, act, parts, um: Vec::new(), bprep: Vec::new() };
        if let ActScale::Fixed(qa) = act {
            let (um, bprep) = lin.prepare(qa);
            lin.um = um;
            lin.bprep = bprep;
        }
        Ok(lin)
    }

    /// A single weight as its own product.
    pub fn single(w: Int8Weight) -> Int8Linear {
        match Int8Linear::fuse(vec![w]) {
            Ok(l) => l,
            // One weight always shares its own inner dimension and multiplier.
            Err(_) => unreachable!("a single weight always fuses"),
        }
    }

    fn prepare(&self, qa: f32) -> (Vec<f32>, Vec<f32>) {
        let mut um = vec![0f32; self.b.n()];
        let mut bprep = vec![0f32; self.b.n()];
        let sums = self.b.col_sums();
        for p in &self.parts {
            for (i, j) in p.cols.clone().enumerate() {
                um[j] = unquant_mult(qa, p.qb);
                bprep[j] = prepared_bias(sums[j], qa, p.qb, p.bias.as_ref().map(|b| b[i]));
            }
        }
        (um, bprep)
    }

    pub fn k(&self) -> usize {
        self.b.k()
    }

    pub fn n(&self) -> usize {
        self.b.n()
    }

    /// The activation multiplier (`None` when computed per sentence).
    pub fn act_scale(&self) -> Option<f32> {
        match self.act {
            ActScale::Fixed(q) => Some(q),
            ActScale::Dynamic => None,
        }
    }

    pub fn packed(&self) -> &PackedB {
        &self.b
    }

    /// Quantizes rows of `x` (stride `k`) into `a` (stride `k_padded`).
    pub fn quantize(&self, kern: &Kernels, x: &[f32], rows: usize, qa: f32, a: &mut Vec<u8>) {
        let (k, kp) = (self.k(), self.b.k_padded());
        if a.len() < rows * kp {
            a.resize(rows * kp, 0);
        }
        for r in 0..rows {
            kern.quantize(&x[r * k..(r + 1) * k], qa, &mut a[r * kp..r * kp + k]);
        }
    }

    /// `out = x·W + b` for `rows` rows (`out` has stride `n`). `groups` are the row ranges of the
    /// sentences, used only for per-sentence activation scales.
    #[allow(clippy::too_many_arguments)]
    pub fn forward(
        &self,
        p: &Products,
        x: &[f32],
        rows: usize,
        groups: &[Range<usize>],
        relu: bool,
        out: &mut [f32],
        s: &mut Int8Scratch,
    ) -> Result<(), ShapeError> {
        let (k, n) = (self.k(), self.n());
        match self.act {
            ActScale::Fixed(qa) => {
                self.quantize(p.kernels, x, rows, qa, &mut s.a);
                let a = QuantizedA { data: &s.a, rows, stride: self.b.k_padded() };
                let ep = Epilogue { zero_fix: None, scale: Scale::Columns(&self.um), bias: Some(&self.bprep), relu };
                p.gemm(&a, &self.b, &ep, &mut Output::F32 { data: &mut out[..rows * n], stride: n })
            }
            ActScale::Dynamic => {
                for g in groups {
                    let xs = &x[g.start * k..g.end * k];
                    let qa = dynamic_scale(xs);
                    let (um, bprep) = self.prepare(qa);
                    s.um = um;
                    s.bprep = bprep;
                    self.quantize(p.kernels, xs, g.len(), qa, &mut s.a);
                    let a = QuantizedA { data: &s.a, rows: g.len(), stride: self.b.k_padded() };
                    let ep = Epilogue { zero_fix: None, scale: Scale::Columns(&s.um), bias: Some(&s.bprep), relu };
                    let o = &mut out[g.start * n..g.end * n];
                    p.gemm(&a, &self.b, &ep, &mut Output::F32 { data: o, stride: n })?;
                }
                Ok(())
            }
        }
    }

    /// A product whose output is requantized for the next product (`next_qa`, stride
    /// `next_stride`): the hidden layer of a feed-forward block, which never exists in float.
    /// Only for fixed activation scales.
    #[allow(clippy::too_many_arguments)]
    pub fn forward_requantized(
        &self,
        p: &Products,
        x: &[f32],
        rows: usize,
        relu: bool,
        next_qa: f32,
        next_stride: usize,
        out: &mut [u8],
        s: &mut Int8Scratch,
    ) -> Result<(), ShapeError> {
        let qa = self.act_scale().unwrap_or(1.0);
        self.quantize(p.kernels, x, rows, qa, &mut s.a);
        let a = QuantizedA { data: &s.a, rows, stride: self.b.k_padded() };
        let ep = Epilogue { zero_fix: None, scale: Scale::Columns(&self.um), bias: Some(&self.bprep), relu };
        p.gemm(&a, &self.b, &ep, &mut Output::U8 { data: out, stride: next_stride, scale: next_qa })
    }

    /// A product over activations that are already quantized with this layer's fixed multiplier.
    pub fn forward_quantized(&self, p: &Products, a: &[u8], rows: usize, out: &mut [f32]) -> Result<(), ShapeError> {
        let n = self.n();
        let a = QuantizedA { data: a, rows, stride: self.b.k_padded() };
        let ep = Epilogue { zero_fix: None, scale: Scale::Columns(&self.um), bias: Some(&self.bprep), relu: false };
        p.gemm(&a, &self.b, &ep, &mut Output::F32 { data: &mut out[..rows * n], stride: n })
    }
}

/// intgemm's `127 / MaxAbsolute(A)` over a sentence's rows.
pub fn dynamic_scale(x: &[f32]) -> f32 {
    let m = x.iter().fold(0f32, |m, v| m.max(v.abs()));
    // All-zero input quantizes to zero with any multiplier; avoid 127/0.
    if m > 0.0 { 127.0f32 / m } else { 1.0 }
}

/// A float32 layer, weights stored transposed (`n` rows of `k`).
pub struct FloatLinear {
    pub wt: Vec<f32>,
    pub bias: Option<Vec<f32>>,
    pub k: usize,
    pub n: usize,
}

impl FloatLinear {
    /// From Marian's `[k, n]` row-major matrix.
    pub fn from_rows(w: &[f32], k: usize, n: usize, bias: Option<Vec<f32>>) -> FloatLinear {
        let mut wt = vec![0f32; k * n];
        for kk in 0..k {
            for j in 0..n {
                wt[j * k + kk] = w[kk * n + j];
            }
        }
        FloatLinear { wt, bias, k, n }
    }

    /// `out = x·W + b`, optionally with relu. Dot products in 8 lanes (the float path is compared
    /// with Marian within a tolerance, not bit for bit: MKL's order for large products is not
    /// reproduced).
    pub fn forward(&self, x: &[f32], rows: usize, relu: bool, out: &mut [f32]) {
        let k = self.k;
        // Four rows at a time share each weight load; every row's sum keeps dot8's order.
        for r0 in (0..rows).step_by(4) {
            let m = (rows - r0).min(4);
            let xs: [&[f32]; 4] = std::array::from_fn(|i| {
                let r = r0 + i.min(m - 1);
                &x[r * k..(r + 1) * k]
            });
            for (j, w) in self.wt.chunks_exact(k).enumerate() {
                let v = dot8_rows4(xs, w);
                for (i, &v) in v.iter().enumerate().take(m) {
                    let v = match &self.bias {
                        Some(b) => v + b[j],
                        None => v,
                    };
                    out[(r0 + i) * self.n + j] = if relu { v.max(0.0) } else { v };
                }
            }
        }
    }
}

/// A dot product in 8 lanes, written so the compiler vectorizes it.
#[inline]
pub fn dot8(a: &[f32], b: &[f32]) -> f32 {
    let mut acc = [0f32; 8];
    let (ca, cb) = (a.chunks_exact(8), b.chunks_exact(8));
    let (ra, rb) = (ca.remainder(), cb.remainder());
    for (x, y) in ca.zip(cb) {
        for l in 0..8 {
            acc[l] += x[l] * y[l];
        }
    }
    let mut s = ((acc[0] + acc[4]) + (acc[2] + acc[6])) + ((acc[1] + acc[5]) + (acc[3] + acc[7]));
    for (x, y) in ra.iter().zip(rb) {
        s += x * y;
    }
    s
}

/// [`dot8`] of four rows with one vector, each row summed in exactly `dot8`'s order.
#[inline]
pub fn dot8_rows4(x: [&[f32]; 4], w: &[f32]) -> [f32; 4] {
    let mut acc = [[0f32; 8]; 4];
    let full = w.len() / 8 * 8;
    let it = w[..full]
        .chunks_exact(8)
        .zip(x[0][..full].chunks_exact(8))
        .zip(x[1][..full].chunks_exact(8))
        .zip(x[2][..full].chunks_exact(8))
        .zip(x[3][..full].chunks_exact(8));
    for ((((wc, x0), x1), x2), x3) in it {
        for l in 0..8 {
            acc[0][l] += x0[l] * wc[l];
            acc[1][l] += x1[l] * wc[l];
            acc[2][l] += x2[l] * wc[l];
            acc[3][l] += x3[l] * wc[l];
        }
    }
    std::array::from_fn(|i| {
        let a = &acc[i];
        let mut s = ((a[0] + a[4]) + (a[2] + a[6])) + ((a[1] + a[5]) + (a[3] + a[7]));
        for t in full..w.len() {
            s += x[i][t] * w[t];
        }
        s
    })
}

impl Int8Linear {
    /// Writes the product's packed weights, column sums and biases as `<name>.*` blobs; the
    /// returned description (activation scale, parts) goes into the pack's table.
    pub fn write_pack(&self, w: &mut pack::Writer, name: &str) -> Result<serde_json::Value, pack::Error> {
        let (k, n) = (self.k(), self.n());
        w.add(&format!("{name}.b"), pack::Dtype::PackedI8, &[k, n], self.b.as_bytes())?;
        w.add_i32(&format!("{name}.col_sums"), &[n], self.b.col_sums())?;
        let mut parts = Vec::new();
        for (i, p) in self.parts.iter().enumerate() {
            if let Some(b) = &p.bias {
                w.add_f32(&format!("{name}.bias{i}"), &[b.len()], b)?;
            }
            parts.push(serde_json::json!({
                "cols": [p.cols.start, p.cols.end],
                "qb": p.qb.to_bits(),
                "bias": p.bias.is_some(),
            }));
        }
        let act = match self.act {
            ActScale::Fixed(q) => serde_json::json!(q.to_bits()),
            ActScale::Dynamic => serde_json::Value::Null,
        };
        Ok(serde_json::json!({ "k": k, "n": n, "act": act, "parts": parts }))
    }

    /// The product [`Int8Linear::write_pack`] wrote, its weights borrowed from the map.
    pub fn read_pack(f: &pack::PackFile, name: &str, desc: &serde_json::Value) -> Result<Int8Linear, pack::Error> {
        let bad = |why: &str| pack::Error::Format { path: f.path().to_path_buf(), why: format!("{name}: {why}") };
        let num = |v: &serde_json::Value, what: &str| v.as_u64().ok_or_else(|| bad(what));
        let (k, n) = (num(&desc["k"], "k")? as usize, num(&desc["n"], "n")? as usize);
        let sums = f.i32s(&format!("{name}.col_sums"), &[n])?;
        let b = f.packed(&format!("{name}.b"), k, n, sums)?;
        let act = match &desc["act"] {
            serde_json::Value::Null => ActScale::Dynamic,
            v => ActScale::Fixed(f32::from_bits(num(v, "act")? as u32)),
        };
        let mut parts = Vec::new();
        for (i, p) in desc["parts"].as_array().ok_or_else(|| bad("parts"))?.iter().enumerate() {
            let (a, e) = (num(&p["cols"][0], "cols")? as usize, num(&p["cols"][1], "cols")? as usize);
            if a > e || e > n {
                return Err(bad("columns outside the product"));
            }
            let bias = if p["bias"].as_bool() == Some(true) {
                Some(f.f32s(&format!("{name}.bias{i}"), &[e - a])?)
            } else {
                None
            };
            parts.push(Part { cols: a..e, qb: f32::from_bits(num(&p["qb"], "qb")? as u32), bias });
        }
        let mut lin = Int8Linear { b, act, parts, um: Vec::new(), bprep: Vec::new() };
        if let ActScale::Fixed(qa) = act {
            (lin.um, lin.bprep) = lin.prepare(qa);
        }
        Ok(lin)
    }
}

/// A linear layer in whichever format the model has.
pub enum Linear {
    Int8(Int8Linear),
    Float(FloatLinear),
}

impl Linear {
    pub fn n(&self) -> usize {
        match self {
            Linear::Int8(l) => l.n(),
            Linear::Float(l) => l.n,
        }
    }

    pub fn k(&self) -> usize {
        match self {
            Linear::Int8(l) => l.k(),
            Linear::Float(l) => l.k,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn prepared_bias_cancels_the_shift() {
        // One weight column [2, -3], qA = qB = 10: y = x·W reconstructs to within quantization.
        let bt: Vec<i8> = vec![20, -30];
        let w = Int8Weight {
            b: PackedB::from_transposed(&bt, 2, 1),
            qb: 10.0,
            act: ActScale::Fixed(10.0),
            bias: Some(vec![0.5]),
        };
        let lin = Int8Linear::single(w);
        let kern = Kernels::reference();
        let mut out = vec![0f32; 1];
        let mut s = Int8Scratch::default();
        let groups = vec![0..1usize; 1];
        lin.forward(
            &Products { kernels: &kern, arith: Arithmetic::Exact, columns: None },
            &[1.0, 2.0],
            1,
            &groups,
            false,
            &mut out,
            &mut s,
        )
        .unwrap();
        assert!((out[0] - (1.0 * 2.0 + 2.0 * -3.0 + 0.5)).abs() < 1e-3, "{}", out[0]);
    }

    #[test]
    fn fusing_needs_equal_scales() {
        let mk = |q: f32| Int8Weight {
            b: PackedB::from_transposed(&[1, 2], 2, 1),
            qb: 1.0,
            act: ActScale::Fixed(q),
            bias: None,
        };
        assert!(Int8Linear::fuse(vec![mk(1.0), mk(1.0)]).is_ok());
        assert_eq!(Int8Linear::fuse(vec![mk(1.0), mk(2.0)]).err().map(|w| w.len()), Some(2));
    }
}
