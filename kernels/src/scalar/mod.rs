//! The specification. Obvious Rust, every tail included; every other kernel file has these
//! functions with these arguments and must give the same bits.

use crate::part::{Out, Part};
use crate::{Epilogue, Output, PackedB, QuantizedA, Scale};

mod marian;
pub use marian::*;

/// Marian's activation quantization (intgemm `Int8Shift::PrepareA`, gemmology `Shift::PrepareA`):
/// `t = x · scale` in float; convert to int32 rounding half to even, where NaN and values outside
/// int32 become `i32::MIN` as `cvtps2dq` makes them; saturate to int16, then int8; raise −128 to
/// −127; add 127. The result is in `0..=254`.
pub fn quantize(src: &[f32], scale: f32, dst: &mut [u8]) {
    assert!(dst.len() >= src.len(), "quantize: destination shorter than source");
    for (d, &x) in dst.iter_mut().zip(src) {
        *d = quantize_one(x, scale);
    }
}

/// One element of [`quantize`].
#[inline]
pub fn quantize_one(x: f32, scale: f32) -> u8 {
    let t = x * scale;
    let i = cvt_rne(t);
    let i = i.clamp(i16::MIN as i32, i16::MAX as i32).clamp(-128, 127).max(-127);
    (i + 127) as u8
}

/// `cvtps2dq` under the default rounding mode: half to even; NaN and out-of-range give `i32::MIN`.
#[inline]
pub fn cvt_rne(t: f32) -> i32 {
    if (-2_147_483_648.0..2_147_483_648.0).contains(&t) { t.round_ties_even() as i32 } else { i32::MIN }
}

/// `acc[i] = a[i] · b[i] + acc[i]` with one rounding (a fused multiply-add) per element. The
/// float side of the engines (attention as MKL orders it) is built from this and [`fma_sv`],
/// so that CPUs with FMA units run it at vector speed with the same bits.
pub fn fma_vv(acc: &mut [f32], a: &[f32], b: &[f32]) {
    assert!(a.len() >= acc.len() && b.len() >= acc.len(), "fma_vv: operands shorter than the accumulator");
    for ((c, &x), &y) in acc.iter_mut().zip(a).zip(b) {
        *c = x.mul_add(y, *c);
    }
}

/// `acc[i] = s · b[i] + acc[i]` with one rounding per element.
pub fn fma_sv(acc: &mut [f32], s: f32, b: &[f32]) {
    assert!(b.len() >= acc.len(), "fma_sv: operand shorter than the accumulator");
    for (c, &y) in acc.iter_mut().zip(b) {
        *c = s.mul_add(y, *c);
    }
}

/// `expf` is a call per element; softmax and SiLU make tens of millions of them in a long
/// prefill). Inputs are clamped to `[-87.3, 88]`, so results stay finite and normal: below, the
/// true value is under 1e-38 and vanishes next to what it is added to; softmax only takes
/// `x <= 0` and SiLU's `1 + e^-g` is then already far past any `g` it divides.
#[inline(always)]
pub fn exp(x: f32) -> f32 {
    let x = x.clamp(EXP_MIN, EXP_MAX);
    // Fused multiply-adds throughout (one instruction per step on every vector table, and one
    // rounding, which only makes the steps more exact).
    let t = x.mul_add(LOG2E, EXP_ROUND);
    let n = t - EXP_ROUND;
    let r = (-n).mul_add(LN2_LO, (-n).mul_add(LN2_HI, x));
    let mut p = EXP_TAYLOR[0];
    for &c in &EXP_TAYLOR[1..] {
        p = p.mul_add(r, c);
    }
    // 2^n straight from t's bits: its mantissa holds 0x400000 + n. Integer operations only,
    // because `n as i32` (saturating, NaN to 0) would not vectorise.
    let two_n = f32::from_bits(t.to_bits().wrapping_sub(EXP_ROUND.to_bits()).wrapping_add(127) << 23);
    p * two_n
}

// The constants of [`exp`], shared with the vector forms in ymm.rs and zmm.rs, which repeat its
// steps one instruction per operation.
/// [`exp`]'s input range: below, the result would be subnormal; above, infinite.
pub(crate) const EXP_MIN: f32 = -87.3;
pub(crate) const EXP_MAX: f32 = 88.0;
pub(crate) const LOG2E: f32 = std::f32::consts::LOG2_E;
/// ln 2 split so that n · LN2_HI is exact for |n| < 2^9 (Cody and Waite).
pub(crate) const LN2_HI: f32 = 0.693_359_4;
pub(crate) const LN2_LO: f32 = -2.121_944_4e-4;
/// Adding and subtracting 1.5 · 2^23 rounds to the nearest integer (ties to even) without
/// SSE4.1's round instruction, exactly for |t| < 2^22.
pub(crate) const EXP_ROUND: f32 = 12_582_912.0;
/// e^r on |r| <= ln2/2 by Horner's rule, highest power first: Taylor terms to r^7 (remainder
/// below 2e-9 relative).
pub(crate) const EXP_TAYLOR: [f32; 8] = [1.0 / 5040.0, 1.0 / 720.0, 1.0 / 120.0, 1.0 / 24.0, 1.0 / 6.0, 0.5, 1.0, 1.0];

/// `softmax(s · scaling)` in place, as Transformers' eager attention: scale, subtract the
/// maximum, exponentiate ([`exp`]), multiply by the reciprocal of the sum. Plain code that vectorises where it is
/// compiled (`#[inline(always)]`: NEON's table takes it as is); the x86 tables repeat its
/// operations with intrinsics (ymm.rs, zmm.rs: masked tails, independent maxima), and the
/// equivalence tests hold every table to these bits.
#[inline(always)]
pub fn softmax_scaled(s: &mut [f32], scaling: f32) {
    // Each pass is one simple loop so it vectorises at the table's full width. The maximum is
    // exact in any order; the sum runs in eight lanes in one fixed order.
    for x in s.iter_mut() {
        *x *= scaling;
    }
    let mut max = [f32::NEG_INFINITY; 8];
    let chunks = s.chunks_exact(8);
    let tail = chunks.remainder();
    for c in chunks {
        for l in 0..8 {
            max[l] = max[l].max(c[l]);
        }
    }
    let m = tail.iter().fold(max.iter().fold(f32::NEG_INFINITY, |a, &b| a.max(b)), |a, &b| a.max(b));
    for x in s.iter_mut() {
        *x = exp(*x - m);
    }
    let mut sum = [0f32; 8];
    let chunks = s.chunks_exact(8);
    let tail = chunks.remainder();
    for c in chunks {
        for l in 0..8 {
            sum[l] += c[l];
        }
    }
    let mut total = ((sum[0] + sum[4]) + (sum[1] + sum[5])) + ((sum[2] + sum[6]) + (sum[3] + sum[7]));
    for x in tail {
        total += *x;
    }
    // Times the reciprocal, as torch's CPU softmax does (`x * (1 / sum)`): a multiply per
    // element instead of a division.
    let inv = 1.0 / total;
    for x in s.iter_mut() {
        *x *= inv;
    }
}

/// `max |x|` over `x` (0 for an empty slice), ignoring NaN as `f32::max` does: the absolute
/// maximum is the same in any order, so the running maxima are kept in 16 lanes to let each
/// table vectorise the loop at its width. Vector forms as for [`softmax_scaled`].
#[inline(always)]
pub fn absmax(x: &[f32]) -> f32 {
    let mut m = [0f32; 16];
    let chunks = x.chunks_exact(16);
    let tail = chunks.remainder();
    for c in chunks {
        for l in 0..16 {
            m[l] = m[l].max(c[l].abs());
        }
    }
    tail.iter().fold(m.iter().fold(0f32, |a, &b| a.max(b)), |a, &b| a.max(b.abs()))
}

/// `out[i] = silu(g[i]) · u[i]` with `silu(g) = g / (1 + e^-g)` ([`exp`]): the SwiGLU
/// activation of LLM feed-forward blocks. Vector forms as for [`softmax_scaled`].
#[inline(always)]
pub fn silu_mul(g: &[f32], u: &[f32], out: &mut [f32]) {
    assert!(g.len() >= out.len() && u.len() >= out.len(), "silu_mul: operands shorter than the output");
    for ((o, g), u) in out.iter_mut().zip(g).zip(u) {
        *o = (g / (1.0 + exp(-g))) * u;
    }
}

/// Attention scores of the query heads that share one KV head (grouped-query attention) over
/// keys kept in blocks of [`KEY_BLOCK`] positions (per block, `hd` rows of 16 lanes, one lane per
/// position). `q` holds the heads' queries (`hd` each); `out` holds per head `blocks · 16`
/// scores: `out[h·16·blocks + 16b + l] = Σ_d q[h·hd + d] · keys[(b·hd + d)·16 + l]`, summed over
/// `d` in order from 0, each step one fused multiply-add (a single rounding), starting from 0.
pub fn block_scores(q: &[f32], hd: usize, keys: &[f32], blocks: usize, out: &mut [f32]) {
    check_block_scores(q, hd, keys, blocks, out);
    let span = blocks * KEY_BLOCK;
    for (qh, oh) in q.chunks_exact(hd).zip(out.chunks_exact_mut(span.max(1))) {
        for (block, o) in keys.chunks_exact(hd * KEY_BLOCK).zip(oh.chunks_exact_mut(KEY_BLOCK)) {
            let mut acc = [0f32; KEY_BLOCK];
            for (k, &qd) in block.chunks_exact(KEY_BLOCK).zip(qh) {
                for l in 0..KEY_BLOCK {
                    acc[l] = qd.mul_add(k[l], acc[l]);
                }
            }
            o.copy_from_slice(&acc);
        }
    }
}

/// The lengths [`block_scores`] needs; every ISA's entry point checks them the same way.
pub fn check_block_scores(q: &[f32], hd: usize, keys: &[f32], blocks: usize, out: &[f32]) {
    assert!(hd > 0 && q.len().is_multiple_of(hd), "block_scores: queries not whole heads of {hd}");
    assert!(out.len() == q.len() / hd * blocks * KEY_BLOCK, "block_scores: output is not heads × blocks");
    assert!(keys.len() >= blocks * KEY_BLOCK * hd, "block_scores: fewer keys than blocks");
}

/// Positions per block of [`block_scores`]' key layout: one zmm register, two ymm.
pub const KEY_BLOCK: usize = 16;

/// Bytes of keys or values the vector forms of [`block_scores`] and [`weighted_rows`] pass over
/// with every head before moving on, when there are more heads than one register tile takes
/// (several query rows of a prefill): a run that stays in L1 (32–48 KB on current x86 cores).
#[cfg(target_arch = "x86_64")]
const L1_RUN_BYTES: usize = 32 << 10;

/// Key blocks of `hd` dimensions per run of [`L1_RUN_BYTES`].
#[cfg(target_arch = "x86_64")]
pub(crate) fn l1_key_blocks(hd: usize) -> usize {
    (L1_RUN_BYTES / (hd * KEY_BLOCK * 4)).max(1)
}

/// Value rows of `d` floats per run of [`L1_RUN_BYTES`] (at least 16, so short rows still make
/// long runs).
#[cfg(target_arch = "x86_64")]
pub(crate) fn l1_value_rows(d: usize) -> usize {
    (L1_RUN_BYTES / (d * 4)).max(16)
}

/// Attention's weighted sums of value rows, for the heads that share them (grouped-query
/// attention): rows are `d` floats each, contiguous; head `h` has weights `w[h·w_stride ..][..n]`
/// and output `out[h·d ..][..d]`, with `out[h·d + e] = Σ_j w[h·w_stride + j] · rows[j·d + e]`,
/// summed over `j < n` in order, each step one fused multiply-add, starting from 0 — or, when
/// `continued`, from the values already in `out`: a sum over `0..n` then continued over `n..m`
/// gives the bits of one sum over `0..m` (so rows of different lengths can share the first part).
pub fn weighted_rows(w: &[f32], n: usize, w_stride: usize, rows: &[f32], out: &mut [f32], d: usize, continued: bool) {
    check_weighted_rows(w, n, w_stride, rows, out, d);
    for (h, o) in out.chunks_exact_mut(d).enumerate() {
        if !continued {
            o.fill(0.0);
        }
        for (j, &wj) in w[h * w_stride..h * w_stride + n].iter().enumerate() {
            for (x, &v) in o.iter_mut().zip(&rows[j * d..(j + 1) * d]) {
                *x = wj.mul_add(v, *x);
            }
        }
    }
}

/// Dimensions `e0 ..` of one head's [`weighted_rows`] (`wh`: its `n` weights; `o`: its `d`
/// outputs), one element at a time: the vector forms' tail, with the same fused steps in the
/// same order.
#[cfg(target_arch = "x86_64")]
#[inline(always)]
pub(crate) fn weighted_rows_tail(wh: &[f32], rows: &[f32], o: &mut [f32], d: usize, e0: usize, continued: bool) {
    for (e, x) in o.iter_mut().enumerate().skip(e0) {
        let mut acc = if continued { *x } else { 0.0 };
        for (j, &wj) in wh.iter().enumerate() {
            acc = wj.mul_add(rows[j * d + e], acc);
        }
        *x = acc;
    }
}

/// The lengths [`weighted_rows`] needs; every ISA's entry point checks them the same way.
pub fn check_weighted_rows(w: &[f32], n: usize, w_stride: usize, rows: &[f32], out: &[f32], d: usize) {
    assert!(d > 0 && out.len().is_multiple_of(d), "weighted_rows: output not whole rows of {d}");
    let heads = out.len() / d;
    assert!(heads < 2 || w_stride >= n, "weighted_rows: weight stride shorter than the weights");
    assert!(heads == 0 || w.len() >= (heads - 1) * w_stride + n, "weighted_rows: fewer weights than heads");
    assert!(rows.len() >= n * d, "weighted_rows: fewer rows than weights");
}

/// The exact int32 dot product of row `i` of `a` with column `j` of `b`.
#[inline]
fn dot_exact(a: &[u8], b: &PackedB, j: usize) -> i32 {
    let mut acc = 0i32;
    for (kk, &av) in a.iter().enumerate().take(b.k()) {
        acc = acc.wrapping_add(av as i32 * b.get(kk, j) as i32);
    }
    acc
}

/// The pair-saturating dot product: adjacent inner indices `(2p, 2p+1)` are multiplied and added
/// with int16 saturation (`maddubs`), then the pair sums are added in int32 (`madd` with ones).
#[inline]
fn dot_saturating(a: &[u8], b: &PackedB, j: usize) -> i32 {
    let mut acc = 0i32;
    let mut kk = 0;
    while kk < b.k() {
        let lo = a[kk] as i32 * b.get(kk, j) as i32;
        let hi = if kk + 1 < b.k() { a[kk + 1] as i32 * b.get(kk + 1, j) as i32 } else { 0 };
        acc = acc.wrapping_add((lo + hi).clamp(i16::MIN as i32, i16::MAX as i32));
        kk += 2;
    }
    acc
}

/// The float epilogue of one element, in the documented order of operations.
#[inline]
pub fn epilogue_one(acc: i32, i: usize, j: usize, ep: &Epilogue) -> f32 {
    let acc = match ep.zero_fix {
        Some(z) => acc.wrapping_sub(z[j]),
        None => acc,
    };
    let scale = match ep.scale {
        Scale::Uniform(s) => s,
        Scale::Columns(c) => c[j],
        Scale::RowsColumns { rows, cols } => rows[i] * cols[j],
    };
    let mut x = acc as f32 * scale;
    if let Some(bias) = ep.bias {
        x += bias[j];
    }
    if ep.relu {
        // Not `f32::max`: its answer for −0.0 is unspecified. This is Marian's ReLU and what
        // `maxps(x, 0)` computes: NaN and −0.0 become +0.0.
        x = if x > 0.0 { x } else { 0.0 };
    }
    x
}

fn gemm(a: &QuantizedA, b: &PackedB, ep: &Epilogue, out: &mut Output, dot: fn(&[u8], &PackedB, usize) -> i32) {
    for i in 0..a.rows {
        let row = &a.data[i * a.stride..];
        for j in 0..b.n() {
            let x = epilogue_one(dot(row, b, j), i, j, ep);
            match out {
                Output::F32 { data, stride } => data[i * *stride + j] = x,
                Output::U8 { data, stride, scale } => data[i * *stride + j] = quantize_one(x, *scale),
            }
        }
    }
}

/// The product in the exact arithmetic. Arguments are checked by the caller
/// ([`crate::Kernels::gemm`]).
pub fn gemm_exact(a: &QuantizedA, b: &PackedB, ep: &Epilogue, out: &mut Output) {
    gemm(a, b, ep, out, dot_exact)
}

/// The product in the pair-saturating arithmetic.
pub fn gemm_saturating(a: &QuantizedA, b: &PackedB, ep: &Epilogue, out: &mut Output) {
    gemm(a, b, ep, out, dot_saturating)
}

/// [`gemm_exact`] restricted to one part: the specification of every kernel's entry point.
///
/// # Safety
/// `p` must satisfy [`Part`]'s invariants (the safe entry points in `dispatch` check them).
pub(crate) unsafe fn gemm_exact_part(p: &Part) {
    // SAFETY: passed on from the caller.
    unsafe { part(p, dot_exact) }
}

/// [`gemm_saturating`] restricted to one part.
///
/// # Safety
/// As [`gemm_exact_part`].
pub(crate) unsafe fn gemm_saturating_part(p: &Part) {
    // SAFETY: passed on from the caller.
    unsafe { part(p, dot_saturating) }
}

/// # Safety
/// As [`gemm_exact_part`].
unsafe fn part(p: &Part, dot: fn(&[u8], &PackedB, usize) -> i32) {
    let cols = p.cols();
    for i in p.rows.clone() {
        let row = &p.a.data[i * p.a.stride..];
        for j in cols.clone() {
            let x = epilogue_one(dot(row, p.b, j), i, j, &p.ep);
            // SAFETY: `Part` guarantees the output holds element (i, j) for every row in
            // `p.rows` and column below `n`, and that no one else writes it now.
            unsafe {
                match p.out {
                    Out::F32 { ptr, stride, col0 } => *ptr.add(i * stride + j - col0) = x,
                    Out::U8 { ptr, stride, scale, col0 } => *ptr.add(i * stride + j - col0) = quantize_one(x, scale),
                }
            }
        }
    }
}

/// Plain float product `c[i][j] = Σ_k a[i][k] · bt[j][k]` (row-major `a`: m × k, `bt`: n × k),
/// summed in order of `k`. Used by float models and the attention products.
pub fn sgemm_nt(a: &[f32], bt: &[f32], c: &mut [f32], m: usize, n: usize, k: usize) {
    for i in 0..m {
        for j in 0..n {
            let mut s = 0.0f32;
            for kk in 0..k {
                s += a[i * k + kk] * bt[j * k + kk];
            }
            c[i * n + j] = s;
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn quantize_matches_cvtps_saturation() {
        let s = 1.0;
        assert_eq!(quantize_one(0.0, s), 127);
        assert_eq!(quantize_one(0.5, s), 127); // half to even
        assert_eq!(quantize_one(1.5, s), 129);
        assert_eq!(quantize_one(-2.5, s), 125);
        assert_eq!(quantize_one(127.0, s), 254);
        assert_eq!(quantize_one(300.0, s), 254);
        assert_eq!(quantize_one(-128.0, s), 0);
        assert_eq!(quantize_one(-1e6, s), 0);
        // cvtps turns these into INT_MIN, which ends at -127 → 0, not +127.
        assert_eq!(quantize_one(f32::NAN, s), 0);
        assert_eq!(quantize_one(3e9, s), 0);
        assert_eq!(quantize_one(f32::INFINITY, s), 0);
    }

    #[test]
    fn saturating_differs_from_exact_only_on_large_same_sign_pairs() {
        let (k, n) = (4, 2);
        // column 0: two large products of one sign saturate; column 1 does not.
        let bt: Vec<i8> = vec![127, 127, 1, 1, 127, -127, 1, 1];
        let b = PackedB::from_transposed(&bt, k, n);
        let mut a = vec![0u8; b.k_padded()];
        a[..4].copy_from_slice(&[254, 254, 3, 3]);
        let qa = QuantizedA { data: &a, rows: 1, stride: b.k_padded() };
        let ep = Epilogue { zero_fix: None, scale: Scale::Uniform(1.0), bias: None, relu: false };
        let (mut e, mut s) = (vec![0f32; 2], vec![0f32; 2]);
        gemm_exact(&qa, &b, &ep, &mut Output::F32 { data: &mut e, stride: 2 });
        gemm_saturating(&qa, &b, &ep, &mut Output::F32 { data: &mut s, stride: 2 });
        assert_eq!(e, vec![2.0 * 254.0 * 127.0 + 6.0, 6.0]);
        assert_eq!(s, vec![32767.0 + 6.0, 6.0]);
    }
}
