//! The output layer: logits = `x · Eᵀ + b` over the tied target embedding `E`.
//!
//! int8 models (browsermt `layers/generic.cpp` `Output::applyAsLogits`, `intgemm_interface.h`):
//! `E` was dequantized at load; its multiplier is recomputed as `127 / max|E|` and `E` is
//! requantized with it (which gives back the file's int8 values); the activations use
//! `Wemb_QuantMultA` as loaded; the bias is prepared over the whole vocabulary and, with a
//! shortlist, indexed afterwards. Float models compute in float.

use std::borrow::Cow;
use std::ops::Range;
use std::sync::Arc;

use reseam_kernels::scan::{self, Top2};
use reseam_kernels::{Epilogue, Kernels, Output, PackedB, QuantizedA, Scale, ShapeError, scalar};

use crate::marian::layers::linear::{ActScale, Products, dot8, dot8_rows4, dynamic_scale, prepared_bias, unquant_mult};
use crate::pack::F32s;
use crate::profile::{self, Kind, Read};

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

/// What the greedy choice needs from one row of logits over the full vocabulary, gathered by
/// [`OutputLayer::tops`] without the row ever existing whole: the [`Top2`] of the columns before
/// `<unk>` and of those after it (each `at` counted from its side's first column), and the logit
/// of `<unk>` itself. These are exactly what scanning the row's two sides gives.
#[derive(Clone, Copy, Debug)]
pub struct RowTops {
    pub before: Top2,
    pub after: Top2,
    pub unk: Option<f32>,
}

impl Default for RowTops {
    /// The tops of no columns yet.
    fn default() -> RowTops {
        let empty = scan::top2(&[]);
        RowTops { before: empty, after: empty, unk: None }
    }
}

impl RowTops {
    /// Takes the row's columns `c0 .. c0 + piece.len()`, which follow every column taken so
    /// far; `unk` is the column of `<unk>`, if the row has it.
    pub fn take(&mut self, kern: &Kernels, piece: &[f32], c0: usize, unk: Option<usize>) {
        // A piece whose values are finite and none above the runner-up so far leaves the tops
        // as they are (`then` would keep the maximum and the runner-up), so only pieces that
        // fail the quick pass are scanned: after the first slices of a row, few do.
        let then = |t: Top2, piece: &[f32], offset: usize| {
            let l = kern.largest(piece);
            if l.finite && l.max <= t.second { t } else { t.then(kern.top2(piece), offset) }
        };
        let c1 = c0 + piece.len();
        match unk {
            Some(u) if u >= c1 => self.before = then(self.before, piece, c0),
            Some(u) if u >= c0 => {
                let (left, right) = (&piece[..u - c0], &piece[u - c0 + 1..]);
                self.before = then(self.before, left, c0);
                self.after = then(self.after, right, 0);
                self.unk = Some(piece[u - c0]);
            }
            Some(u) => self.after = then(self.after, piece, c0 - u - 1),
            None => self.before = then(self.before, piece, c0),
        }
    }

    /// These tops followed by `later`, the tops of the columns after them gathered from none
    /// (their `at`s counted as [`RowTops::take`] counts them, from each side's first column).
    fn merge(&mut self, later: &RowTops) {
        self.before = self.before.then(later.before, 0);
        self.after = self.after.then(later.after, 0);
        self.unk = self.unk.or(later.unk);
    }
}

/// Output columns per slice in [`OutputLayer::tops`]: a slice's weights (`d × 512` bytes) and
/// logits (512 floats a row) stay in L2 for a batch's rows while the slice is scanned.
const TOPS_SLICE: usize = 512;

/// The product and scan of [`OutputLayer::tops`], by slices of [`TOPS_SLICE`] columns.
struct TopsJob<'a> {
    p: &'a Products<'a>,
    a: &'a QuantizedA<'a>,
    b: &'a PackedB,
    ep: &'a Epilogue<'a>,
    rows: usize,
    unk: Option<usize>,
}

impl TopsJob<'_> {
    /// `slices` cut into `pieces` runs, halving with `rayon::join` (which allocates nothing);
    /// `tops` has `rows` places per piece and `slice` a slice's logits per piece. The merged
    /// tops end in `tops[..rows]`.
    fn split(
        &self,
        slices: Range<usize>,
        pieces: usize,
        tops: &mut [RowTops],
        slice: &mut [f32],
    ) -> Result<(), ShapeError> {
        if pieces <= 1 || slices.len() <= 1 {
            return self.run(slices, tops, slice);
        }
        let half = pieces / 2;
        let mid = slices.start + slices.len() * half / pieces;
        let (first, later) = tops.split_at_mut(self.rows * half);
        let (first_slice, later_slice) = slice.split_at_mut(self.rows * TOPS_SLICE * half);
        let (a, b) = rayon::join(
            || self.split(slices.start..mid, half, first, first_slice),
            || self.split(mid..slices.end, pieces - half, later, later_slice),
        );
        a?;
        b?;
        for (t, l) in first[..self.rows].iter_mut().zip(&later[..self.rows]) {
            t.merge(l);
        }
        Ok(())
    }

    /// The tops of the columns of `slices` alone into `tops[..rows]`.
    fn run(&self, slices: Range<usize>, tops: &mut [RowTops], slice: &mut [f32]) -> Result<(), ShapeError> {
        let (rows, n) = (self.rows, self.b.n());
        let tops = &mut tops[..rows];
        tops.fill(RowTops::default());
        for s in slices {
            let (c0, c1) = (s * TOPS_SLICE, ((s + 1) * TOPS_SLICE).min(n));
            let w = c1 - c0;
            {
                let _t = profile::time(Kind::OutputProduct);
                let mut out = Output::F32 { data: &mut slice[..rows * w], stride: w };
                self.p.kernels.gemm_columns(self.p.arith, self.a, self.b, self.ep, &mut out, c0..c1)?;
            }
            let _t = profile::time(Kind::Argmax);
            for (r, t) in tops.iter_mut().enumerate() {
                t.take(self.p.kernels, &slice[r * w..(r + 1) * w], c0, self.unk);
            }
        }
        Ok(())
    }
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

    /// Whether [`OutputLayer::tops`] can take this layer's rows: int8 weights with a fixed
    /// activation scale (every shipped model), so that each logit is its own product's
    /// epilogue whatever columns are computed beside it.
    pub fn has_tops(&self) -> bool {
        matches!(self, OutputLayer::Int8 { act: ActScale::Fixed(_), .. })
    }

    /// [`RowTops`] of `rows` rows of `x` (width `d`) over the full vocabulary, `unk` being the
    /// column of `<unk>` (if any). The product runs a slice of [`TOPS_SLICE`] columns at a
    /// time into `slice`, and each row's part of the slice is scanned while it is in cache:
    /// the logits never go to memory, and the weights are still read once for all rows. Each
    /// logit is the same integer product and epilogue as in [`OutputLayer::forward`], so the
    /// tops equal a scan of its rows. Given a pool (`p.columns`), a large product's slices are
    /// cut over its threads, each piece's tops merged in column order: the same tops.
    /// `Ok(false)` (nothing computed) when not [`OutputLayer::has_tops`].
    #[allow(clippy::too_many_arguments)]
    pub fn tops(
        &self,
        p: &Products,
        x: &[f32],
        d: usize,
        rows: usize,
        unk: Option<usize>,
        tops: &mut Vec<RowTops>,
        slice: &mut Vec<f32>,
        a_buf: &mut Vec<u8>,
    ) -> Result<bool, ShapeError> {
        let OutputLayer::Int8 { b, qb, act: ActScale::Fixed(qa), bprep, .. } = self else { return Ok(false) };
        tops.clear();
        tops.resize(rows, RowTops::default());
        if rows == 0 {
            return Ok(true);
        }
        let (kp, n) = (b.k_padded(), b.n());
        if a_buf.len() < rows * kp {
            a_buf.resize(rows * kp, 0);
        }
        for r in 0..rows {
            p.kernels.quantize(&x[r * d..(r + 1) * d], *qa, &mut a_buf[r * kp..r * kp + d]);
        }
        if slice.len() < rows * TOPS_SLICE {
            slice.resize(rows * TOPS_SLICE, 0.0);
        }
        let a = QuantizedA { data: a_buf, rows, stride: kp };
        let ep =
            Epilogue { zero_fix: None, scale: Scale::Uniform(unquant_mult(*qa, *qb)), bias: Some(bprep), relu: false };
        let unk = unk.filter(|&u| u < n);
        // Counted here, on the thread timing the decoder step, not on the pool's.
        profile::read(Read::Weights, kp * n);
        let macs = rows * n * b.k();
        profile::output_macs(macs);
        let slices = n.div_ceil(TOPS_SLICE);
        // Cut by columns over the pool's threads as `Products::gemm` cuts a large product: each
        // piece gathers the tops of its own columns, merged in column order afterwards.
        let pool = p.split_over(macs);
        let pieces = pool.map_or(1, |pool| pool.current_num_threads().min(slices));
        tops.resize(rows * pieces, RowTops::default());
        if slice.len() < rows * TOPS_SLICE * pieces {
            slice.resize(rows * TOPS_SLICE * pieces, 0.0);
        }
        let job = TopsJob { p, a: &a, b, ep: &ep, rows, unk };
        let (all_tops, all_slices) = (&mut tops[..], &mut slice[..rows * TOPS_SLICE * pieces]);
        match pool {
            Some(pool) => pool.install(|| job.split(0..slices, pieces, all_tops, all_slices))?,
            None => job.run(0..slices, all_tops, all_slices)?,
        }
        tops.truncate(rows);
        Ok(true)
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
                        profile::read(Read::Weights, s.ids.len() * d * size_of::<f32>());
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
                    profile::read(Read::Weights, size_of_val(&emb[..]));
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
    use crate::marian::layers::linear::{COLUMN_SPLIT_MACS, Columns};

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

    /// The tops gathered a slice of columns at a time equal the scan of the whole logits'
    /// two sides, for `<unk>` anywhere (first column, slice edges, last column, none), on
    /// every table and in both arithmetics, alone and cut over pools of 2 and 3 threads (the
    /// pieces' edges at slice edges); rows copied across slices make exact ties.
    #[test]
    fn tops_equal_the_scan_of_the_logits() {
        // Wide enough that the product is cut over a pool (`COLUMN_SPLIT_MACS`).
        let (d, v, rows) = (192, 2 * TOPS_SLICE + 276, 6);
        assert!(rows * v * d >= COLUMN_SPLIT_MACS);
        let pools: Vec<rayon::ThreadPool> =
            [2, 3].map(|n| rayon::ThreadPoolBuilder::new().num_threads(n).build().unwrap()).into();
        let mut seed = 0x5DEE_CE66u64;
        let mut rnd = move || {
            seed ^= seed << 13;
            seed ^= seed >> 7;
            seed ^= seed << 17;
            (seed % 2001) as f32 / 1000.0 - 1.0
        };
        let mut emb: Vec<f32> = (0..v * d).map(|_| rnd()).collect();
        for j in [TOPS_SLICE - 1, TOPS_SLICE, 2 * TOPS_SLICE + 7, v - 1] {
            emb.copy_within(3 * d..4 * d, j * d);
        }
        let mut bias: Vec<f32> = (0..v).map(|_| rnd() / 8.0).collect();
        for j in [TOPS_SLICE - 1, TOPS_SLICE, 2 * TOPS_SLICE + 7, v - 1] {
            bias[j] = bias[3];
        }
        let layer = OutputLayer::int8(&emb, d, ActScale::Fixed(30.0), Some(bias));
        assert!(layer.has_tops());
        // Half the rows lean towards the copied row, so that its ties are the maximum.
        let x: Vec<f32> = (0..rows * d).map(|i| if (i / d) % 2 == 0 { emb[3 * d + i % d] } else { rnd() }).collect();
        for k in Kernels::candidates() {
            for arith in [reseam_kernels::Arithmetic::Exact, reseam_kernels::Arithmetic::Saturating] {
                let p = Products { kernels: &k, arith, columns: None };
                let mut logits = vec![0f32; rows * v];
                layer.forward(&p, &x, d, rows, &|_| None, &mut logits, v, &mut Vec::new()).unwrap();
                let unks = [None, Some(0), Some(1), Some(TOPS_SLICE - 1), Some(TOPS_SLICE), Some(v - 1), Some(v + 5)];
                for (unk, pool) in
                    unks.into_iter().flat_map(|u| [None].into_iter().chain(pools.iter().map(Some)).map(move |p| (u, p)))
                {
                    let cut = Products { columns: pool.map(|pool| Columns { pool, min_macs: COLUMN_SPLIT_MACS }), ..p };
                    let mut tops = Vec::new();
                    let done = layer.tops(&cut, &x, d, rows, unk, &mut tops, &mut Vec::new(), &mut Vec::new()).unwrap();
                    assert_eq!(tops.len(), rows);
                    assert!(done);
                    for (r, got) in tops.iter().enumerate() {
                        let row = &logits[r * v..(r + 1) * v];
                        let (before, after, unk_x) = match unk {
                            Some(u) if u < v => (&row[..u], &row[u + 1..], Some(row[u])),
                            _ => (row, &row[..0], None),
                        };
                        let same = |a: Top2, b: Top2| {
                            a.finite == b.finite
                                && a.max.to_bits() == b.max.to_bits()
                                && a.at == b.at
                                && a.second == b.second
                        };
                        let threads = pool.map(|p| p.current_num_threads());
                        let what = format!("{} {:?} row {r} unk {unk:?} pool {threads:?}", k.name(), arith);
                        assert!(same(got.before, k.top2(before)), "{what}: {:?} {:?}", got.before, k.top2(before));
                        assert!(same(got.after, k.top2(after)), "{what}: {:?} {:?}", got.after, k.top2(after));
                        assert_eq!(got.unk.map(f32::to_bits), unk_x.map(f32::to_bits), "{what}");
                    }
                }
            }
        }
    }
}
