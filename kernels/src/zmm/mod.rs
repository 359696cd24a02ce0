//! AVX-512 pieces shared by the avx512bw, avx512_vnni and amx kernels: the fused epilogue on one
//! block of 16 columns (one zmm of int32 accumulators) and activation quantization.
//!
//! Float steps are exactly [`crate::scalar::epilogue_one`]'s, lane by lane: `vcvtdq2ps` rounds
//! to nearest even as `as f32` does, multiplies and adds are separate instructions (no FMA), and
//! `vmaxps(x, 0)` returns its second operand for NaN and for zeros, which is `x > 0 ? x : 0`.
//! Quantization uses `vcvtps2dq` under the default MXCSR, the very instruction the reference
//! emulates.

use std::arch::x86_64::*;

use crate::Scale;
use crate::lanes::lanes;
use crate::pack::N_BLOCK;
use crate::part::{Out, Part};

mod marian;
pub(crate) use marian::*;

/// The epilogue's column vectors for one block, loaded once and reused for every row.
pub(crate) struct BlockEp<'a> {
    j0: usize,
    mask: __mmask16,
    zero_fix: Option<__m512i>,
    /// The uniform scale broadcast, or the block's column scales.
    scale: __m512,
    row_scales: Option<&'a [f32]>,
    bias: Option<__m512>,
    relu: bool,
}

impl<'a> BlockEp<'a> {
    /// # Safety
    /// The CPU has AVX-512F; `p` satisfies [`Part`]'s invariants and `nb` is one of its blocks.
    #[target_feature(enable = "avx512f")]
    #[inline]
    pub unsafe fn new(p: &Part<'a>, nb: usize) -> BlockEp<'a> {
        let j0 = nb * N_BLOCK;
        let valid = (p.b.n() - j0).min(N_BLOCK);
        let mask: __mmask16 = if valid == N_BLOCK { 0xffff } else { (1u16 << valid) - 1 };
        // SAFETY: every epilogue vector holds at least `n` entries and `j0 < n`, so the pointer
        // is in bounds; the mask keeps the load from touching entries at or past `n`.
        let ld = |v: &[f32]| unsafe { _mm512_maskz_loadu_ps(mask, v.as_ptr().add(j0)) };
        // SAFETY: as above, for the int32 vector.
        let zero_fix = p.ep.zero_fix.map(|z| unsafe { _mm512_maskz_loadu_epi32(mask, z.as_ptr().add(j0).cast()) });
        let (scale, row_scales) = match p.ep.scale {
            Scale::Uniform(s) => (_mm512_set1_ps(s), None),
            Scale::Columns(c) => (ld(c), None),
            Scale::RowsColumns { rows, cols } => (ld(cols), Some(rows)),
        };
        let bias = p.ep.bias.map(ld);
        BlockEp { j0, mask, zero_fix, scale, row_scales, bias, relu: p.ep.relu }
    }

    /// Finishes row `i` of the block from its accumulators and writes it.
    ///
    /// # Safety
    /// The CPU has AVX-512F; `out` is the output of the part this was made from and `i` one of
    /// its rows.
    #[target_feature(enable = "avx512f")]
    #[inline]
    pub unsafe fn store(&self, acc: __m512i, i: usize, out: Out) {
        let acc = match self.zero_fix {
            Some(z) => _mm512_sub_epi32(acc, z),
            None => acc,
        };
        let scale = match self.row_scales {
            Some(rows) => _mm512_mul_ps(_mm512_set1_ps(rows[i]), self.scale),
            None => self.scale,
        };
        let mut x = _mm512_mul_ps(_mm512_cvtepi32_ps(acc), scale);
        if let Some(b) = self.bias {
            x = _mm512_add_ps(x, b);
        }
        if self.relu {
            x = _mm512_max_ps(x, _mm512_setzero_ps());
        }
        match out {
            // SAFETY: the output holds row `i`, columns `j0 .. n`; the mask stops at `n`.
            Out::F32 { ptr, stride, col0 } => unsafe {
                _mm512_mask_storeu_ps(ptr.add(i * stride + self.j0 - col0), self.mask, x)
            },
            Out::U8 { ptr, stride, scale, col0 } => {
                let q = quantize16(x, _mm512_set1_ps(scale));
                // SAFETY: as above.
                unsafe { _mm512_mask_cvtepi32_storeu_epi8(ptr.add(i * stride + self.j0 - col0).cast(), self.mask, q) }
            }
        }
    }
}

/// [`crate::scalar::quantize_one`] on 16 lanes, as int32 in `0..=254`.
#[target_feature(enable = "avx512f")]
#[inline]
fn quantize16(x: __m512, scale: __m512) -> __m512i {
    // cvtps2dq gives INT_MIN for NaN and out-of-range values, exactly what the reference
    // emulates; saturating to int16 then int8 and raising −128 is one clamp to [−127, 127].
    let i = _mm512_cvtps_epi32(_mm512_mul_ps(x, scale));
    let i = _mm512_max_epi32(_mm512_min_epi32(i, _mm512_set1_epi32(127)), _mm512_set1_epi32(-127));
    _mm512_add_epi32(i, _mm512_set1_epi32(127))
}

/// [`crate::scalar::quantize`], 64 values per step, then 16 at a time with masks.
///
/// # Safety
/// The CPU has AVX-512F and AVX-512BW (every zmm table does); `dst` is at least as long as
/// `src`.
#[target_feature(enable = "avx512f,avx512bw")]
pub(crate) unsafe fn quantize(src: &[f32], scale: f32, dst: &mut [u8]) {
    let s = _mm512_set1_ps(scale);
    // The packs saturate int32 to int16 to int8, the reference's clamps in its order, but
    // within 128-bit lanes: lane L of the packed result holds ints 4L .. 4L + 4 of the first
    // register, then of the second, third, fourth. Output dword k (register k / 4, its ints
    // 4·(k % 4) ..) is therefore packed dword (k % 4) · 4 + k / 4.
    let order = _mm512_setr_epi32(0, 4, 8, 12, 1, 5, 9, 13, 2, 6, 10, 14, 3, 7, 11, 15);
    let mut i = 0;
    while i + 64 <= src.len() {
        // SAFETY: 64 floats readable at `src[i..]`, 64 bytes writable at `dst[i..]`.
        unsafe {
            let c = |k: usize| _mm512_cvtps_epi32(_mm512_mul_ps(_mm512_loadu_ps(src.as_ptr().add(i + 16 * k)), s));
            let ab = _mm512_packs_epi32(c(0), c(1));
            let cd = _mm512_packs_epi32(c(2), c(3));
            let q = _mm512_permutexvar_epi32(order, _mm512_packs_epi16(ab, cd));
            let q = _mm512_add_epi8(_mm512_max_epi8(q, _mm512_set1_epi8(-127)), _mm512_set1_epi8(127));
            _mm512_storeu_si512(dst.as_mut_ptr().add(i).cast(), q);
        }
        i += 64;
    }
    while i < src.len() {
        let left = src.len() - i;
        let mask: __mmask16 = if left >= 16 { 0xffff } else { (1u16 << left) - 1 };
        // SAFETY: `i < src.len() <= dst.len()`; the mask keeps both accesses inside the slices.
        unsafe {
            let x = _mm512_maskz_loadu_ps(mask, src.as_ptr().add(i));
            _mm512_mask_cvtepi32_storeu_epi8(dst.as_mut_ptr().add(i).cast(), mask, quantize16(x, s));
        }
        i += 16;
    }
}

/// [`crate::scalar::block_scores`] with zmm registers: a block of 16 positions is one register.
/// Each key register is loaded once for up to four heads (keys come from L2 for long contexts,
/// so loads, not multiply-adds, were the limit), four blocks at a time for four heads, eight for
/// one or two, so the fused multiply-adds' latency is hidden. With more heads (several query
/// rows of a prefill) the blocks go in runs of about 32 KB of keys, and every head passes over a
/// run while it is in L1.
///
/// # Safety
/// The CPU has AVX-512F; lengths as [`crate::scalar::check_block_scores`] checks them (the caller
/// did).
#[target_feature(enable = "avx512f")]
pub(crate) unsafe fn block_scores(q: &[f32], hd: usize, keys: &[f32], blocks: usize, out: &mut [f32]) {
    let heads = q.len() / hd;
    let run = if heads > 4 { crate::scalar::l1_key_blocks(hd) } else { blocks.max(1) };
    let mut r0 = 0;
    while r0 < blocks {
        let r1 = (r0 + run).min(blocks);
        let mut h = 0;
        while h < heads {
            let hg = (heads - h).min(4);
            let g_max = if hg > 2 { 4 } else { 8 };
            let mut b = r0;
            while b < r1 {
                let g = (r1 - b).min(g_max);
                macro_rules! call {
                    ($hg:literal, $g:literal) => {
                        // SAFETY: heads h .. h + hg and blocks b .. b + g are in range.
                        unsafe { scores_tile::<$hg, $g>(q, hd, keys, blocks, out, h, b) }
                    };
                }
                by_shape!(call, hg, g, [1 2 3 4], [1 2 3 4 5 6 7 8]);
                b += g;
            }
            h += hg;
        }
        r0 = r1;
    }
}

/// Heads `h0 .. h0 + HG`, blocks `b0 .. b0 + G` of [`block_scores`].
///
/// # Safety
/// As [`block_scores`], and the heads and blocks are in range.
#[target_feature(enable = "avx512f")]
#[inline]
#[allow(clippy::too_many_arguments)]
unsafe fn scores_tile<const HG: usize, const G: usize>(
    q: &[f32],
    hd: usize,
    keys: &[f32],
    blocks: usize,
    out: &mut [f32],
    h0: usize,
    b0: usize,
) {
    const KB: usize = crate::scalar::KEY_BLOCK;
    let mut acc = [[_mm512_setzero_ps(); G]; HG];
    let base = keys.as_ptr().wrapping_add(b0 * hd * KB);
    let qp = q.as_ptr().wrapping_add(h0 * hd);
    for d in 0..hd {
        // SAFETY: dimension d of blocks b0 .. b0 + G < blocks, inside `keys`.
        let k: [__m512; G] = std::array::from_fn(|i| unsafe { _mm512_loadu_ps(base.add((i * hd + d) * KB)) });
        for (hh, a) in acc.iter_mut().enumerate() {
            // SAFETY: query dimension d of head h0 + hh < heads, inside `q`.
            let qv = _mm512_set1_ps(unsafe { *qp.add(hh * hd + d) });
            for i in 0..G {
                a[i] = _mm512_fmadd_ps(qv, k[i], a[i]);
            }
        }
    }
    for (hh, a) in acc.iter().enumerate() {
        for (i, v) in a.iter().enumerate() {
            // SAFETY: the 16 scores of block b0 + i of head h0 + hh inside `out`.
            unsafe { _mm512_storeu_ps(out.as_mut_ptr().add(((h0 + hh) * blocks + b0 + i) * KB), *v) };
        }
    }
}

/// [`crate::scalar::weighted_rows`] with zmm registers. Each value row is loaded once for up to
/// four heads, which also gives the fused multiply-adds enough independent chains: 128
/// dimensions (eight registers) for two heads, 64 for four, then 16 at a time, then one by one;
/// every element with the scalar's fused multiply-adds in its order. With more heads (several
/// query rows of a prefill) the rows go in runs of about 32 KB that every head passes over while
/// they are in L1, the sums continued from `out` between runs.
///
/// # Safety
/// The CPU has AVX-512F; lengths as [`crate::scalar::check_weighted_rows`] checks them (the
/// caller did).
#[target_feature(enable = "avx512f")]
pub(crate) unsafe fn weighted_rows(
    w: &[f32],
    n: usize,
    w_stride: usize,
    rows: &[f32],
    out: &mut [f32],
    d: usize,
    continued: bool,
) {
    let heads = out.len() / d;
    let run = if heads > 4 { crate::scalar::l1_value_rows(d) } else { n.max(1) };
    let mut e0 = 0;
    while e0 + 16 <= d {
        let left = (d - e0) / 16;
        let dc = if left >= 8 {
            8
        } else if left >= 4 {
            4
        } else {
            1
        };
        // At least one pass, so `n = 0` still writes zeros when not continued.
        let mut j0 = 0;
        loop {
            let j1 = (j0 + run).min(n);
            let cont = continued || j0 > 0;
            let (wj, rj) = (&w[j0.min(w.len())..], &rows[j0 * d..]);
            let mut h = 0;
            while h < heads {
                let hg = (heads - h).min(if dc == 8 { 2 } else { 4 });
                macro_rules! call {
                    ($hg:literal, $dc:literal) => {
                        // SAFETY: heads h .. h + hg, dimensions e0 .. e0 + 16·dc and positions
                        // j0 .. j1 are in range.
                        unsafe { weighted_tile::<$hg, $dc>(wj, j1 - j0, w_stride, rj, out, d, h, e0, cont) }
                    };
                }
                by_shape!(call, hg, dc, [1 2 3 4], [1 4 8]);
                h += hg;
            }
            j0 = j1;
            if j0 >= n {
                break;
            }
        }
        e0 += 16 * dc;
    }
    for (h, o) in out.chunks_exact_mut(d).enumerate() {
        crate::scalar::weighted_rows_tail(&w[h * w_stride..h * w_stride + n], rows, o, d, e0, continued);
    }
}

/// Heads `h0 .. h0 + HG`, dimensions `e0 .. e0 + 16·DC` of [`weighted_rows`].
///
/// # Safety
/// As [`weighted_rows`], and the heads and dimensions are in range.
#[target_feature(enable = "avx512f")]
#[inline]
#[allow(clippy::too_many_arguments)]
unsafe fn weighted_tile<const HG: usize, const DC: usize>(
    w: &[f32],
    n: usize,
    w_stride: usize,
    rows: &[f32],
    out: &mut [f32],
    d: usize,
    h0: usize,
    e0: usize,
    continued: bool,
) {
    let mut acc = [[_mm512_setzero_ps(); DC]; HG];
    if continued {
        for (hh, a) in acc.iter_mut().enumerate() {
            for (c, v) in a.iter_mut().enumerate() {
                // SAFETY: 16 floats at dimension e0 + 16c of head h0 + hh, inside `out`.
                *v = unsafe { _mm512_loadu_ps(out.as_ptr().add((h0 + hh) * d + e0 + 16 * c)) };
            }
        }
    }
    let wp = w.as_ptr();
    for j in 0..n {
        let row = rows.as_ptr().wrapping_add(j * d + e0);
        // SAFETY: dimensions e0 .. e0 + 16·DC ≤ d of row j < n, inside `rows`.
        let v: [__m512; DC] = std::array::from_fn(|c| unsafe { _mm512_loadu_ps(row.add(16 * c)) });
        for (hh, a) in acc.iter_mut().enumerate() {
            // SAFETY: weight j < n of head h0 + hh < heads, inside `w`.
            let wv = _mm512_set1_ps(unsafe { *wp.add((h0 + hh) * w_stride + j) });
            for c in 0..DC {
                a[c] = _mm512_fmadd_ps(wv, v[c], a[c]);
            }
        }
    }
    for (hh, a) in acc.iter().enumerate() {
        for (c, v) in a.iter().enumerate() {
            // SAFETY: 16 floats at dimension e0 + 16c of head h0 + hh, inside `out`.
            unsafe { _mm512_storeu_ps(out.as_mut_ptr().add((h0 + hh) * d + e0 + 16 * c), *v) };
        }
    }
}

/// [`crate::scalar::exp`] on 16 lanes, one instruction per operation of the reference (a fused
/// multiply-add where it has one), hence its bits in every lane.
#[target_feature(enable = "avx512f")]
#[inline]
fn exp16(x: __m512) -> __m512 {
    use crate::scalar::{EXP_MAX, EXP_MIN, EXP_ROUND, EXP_TAYLOR, LN2_HI, LN2_LO, LOG2E};
    // `f32::clamp` passes NaN on; vmaxps and vminps return their second operand for NaN.
    let x = _mm512_min_ps(_mm512_set1_ps(EXP_MAX), _mm512_max_ps(_mm512_set1_ps(EXP_MIN), x));
    let round = _mm512_set1_ps(EXP_ROUND);
    let t = _mm512_fmadd_ps(x, _mm512_set1_ps(LOG2E), round);
    let n = _mm512_sub_ps(t, round);
    let r = _mm512_fnmadd_ps(n, _mm512_set1_ps(LN2_LO), _mm512_fnmadd_ps(n, _mm512_set1_ps(LN2_HI), x));
    let mut p = _mm512_set1_ps(EXP_TAYLOR[0]);
    for &c in &EXP_TAYLOR[1..] {
        p = _mm512_fmadd_ps(p, r, _mm512_set1_ps(c));
    }
    let bits = _mm512_sub_epi32(_mm512_castps_si512(t), _mm512_set1_epi32(EXP_ROUND.to_bits() as i32));
    let two_n = _mm512_slli_epi32::<23>(_mm512_add_epi32(bits, _mm512_set1_epi32(127)));
    _mm512_mul_ps(p, _mm512_castsi512_ps(two_n))
}

/// [`crate::scalar::softmax_scaled`] with zmm registers, in three passes over the row (it is
/// in L1): the maximum of the scaled scores in four independent registers (the maximum is exact
/// in any order, and one chain of vmaxps would wait on its latency), then the exponentials with
/// their sum, then the multiply by its reciprocal. The sum keeps the reference's order: eight
/// lanes over blocks of eight in sequence (the low then the high half of each register), the
/// same tree, then the leftover elements one by one. Tails go through masks, so short rows stay vectorised.
///
/// # Safety
/// The CPU has AVX-512F.
#[target_feature(enable = "avx512f")]
pub(crate) unsafe fn softmax_scaled(s: &mut [f32], scaling: f32) {
    let len = s.len();
    let p = s.as_mut_ptr();
    let sc = _mm512_set1_ps(scaling);
    // vmaxps returns its second operand when the first is NaN: the accumulators (never NaN)
    // skip NaN scores as `f32::max` does.
    let mut acc = [_mm512_set1_ps(f32::NEG_INFINITY); 4];
    let mut i = 0;
    while i + 64 <= len {
        for (k, a) in acc.iter_mut().enumerate() {
            // SAFETY: 64 floats readable at `s[i..]`.
            *a = _mm512_max_ps(_mm512_mul_ps(unsafe { _mm512_loadu_ps(p.add(i + 16 * k)) }, sc), *a);
        }
        i += 64;
    }
    let mut k = 0;
    while i < len {
        let m = lanes(i, len);
        // SAFETY: the mask keeps the load inside `s`.
        let x = _mm512_mul_ps(unsafe { _mm512_maskz_loadu_ps(m, p.add(i)) }, sc);
        acc[k] = _mm512_mask_max_ps(acc[k], m, x, acc[k]);
        k += 1;
        i += 16;
    }
    let max = _mm512_reduce_max_ps(_mm512_max_ps(_mm512_max_ps(acc[0], acc[1]), _mm512_max_ps(acc[2], acc[3])));
    let max = _mm512_set1_ps(max);
    let mut sum = _mm256_setzero_ps();
    i = 0;
    while i < len {
        let m = lanes(i, len);
        // SAFETY: the mask keeps the load and the store inside `s`.
        let e = unsafe {
            let e = exp16(_mm512_sub_ps(_mm512_mul_ps(_mm512_maskz_loadu_ps(m, p.add(i)), sc), max));
            _mm512_mask_storeu_ps(p.add(i), m, e);
            e
        };
        if len - i >= 8 {
            sum = _mm256_add_ps(sum, _mm512_castps512_ps256(e));
        }
        if len - i >= 16 {
            sum = _mm256_add_ps(sum, _mm256_castpd_ps(_mm512_extractf64x4_pd::<1>(_mm512_castps_pd(e))));
        }
        i += 16;
    }
    let mut total = crate::ymm::sum_tree(sum);
    for x in &s[len / 8 * 8..] {
        total += *x;
    }
    let inv = _mm512_set1_ps(1.0 / total);
    let p = s.as_mut_ptr();
    i = 0;
    while i < len {
        let m = lanes(i, len);
        // SAFETY: the mask keeps the load and the store inside `s`.
        unsafe { _mm512_mask_storeu_ps(p.add(i), m, _mm512_mul_ps(_mm512_maskz_loadu_ps(m, p.add(i)), inv)) };
        i += 16;
    }
}

/// [`crate::scalar::silu_mul`] with zmm registers, the tail through a mask.
///
/// # Safety
/// The CPU has AVX-512F.
#[target_feature(enable = "avx512f")]
pub(crate) unsafe fn silu_mul(g: &[f32], u: &[f32], out: &mut [f32]) {
    assert!(g.len() >= out.len() && u.len() >= out.len(), "silu_mul: operands shorter than the output");
    let len = out.len();
    let one = _mm512_set1_ps(1.0);
    let mut i = 0;
    while i < len {
        let m = lanes(i, len);
        // SAFETY: the mask keeps the loads inside `g` and `u` and the store inside `out`, which
        // are at least `len` long.
        unsafe {
            let gv = _mm512_maskz_loadu_ps(m, g.as_ptr().add(i));
            let neg = _mm512_castsi512_ps(_mm512_xor_si512(_mm512_castps_si512(gv), _mm512_set1_epi32(i32::MIN)));
            let silu = _mm512_div_ps(gv, _mm512_add_ps(one, exp16(neg)));
            let o = _mm512_mul_ps(silu, _mm512_maskz_loadu_ps(m, u.as_ptr().add(i)));
            _mm512_mask_storeu_ps(out.as_mut_ptr().add(i), m, o);
        }
        i += 16;
    }
}

/// [`crate::scalar::absmax`] with zmm registers: four independent running maxima, the tail
/// through a mask. vmaxps returns its second operand (the accumulator, never NaN) when the first
/// is NaN, which is `f32::max`'s NaN rule here.
///
/// # Safety
/// The CPU has AVX-512F.
#[target_feature(enable = "avx512f")]
pub(crate) unsafe fn absmax(x: &[f32]) -> f32 {
    let len = x.len();
    let p = x.as_ptr();
    let mut acc = [_mm512_setzero_ps(); 4];
    let mut i = 0;
    while i + 64 <= len {
        for (k, a) in acc.iter_mut().enumerate() {
            // SAFETY: 64 floats readable at `x[i..]`.
            *a = _mm512_max_ps(_mm512_abs_ps(unsafe { _mm512_loadu_ps(p.add(i + 16 * k)) }), *a);
        }
        i += 64;
    }
    let mut k = 0;
    while i < len {
        // Lanes past the end load as 0, which changes no maximum of absolute values.
        // SAFETY: the mask keeps the load inside `x`.
        let v = _mm512_abs_ps(unsafe { _mm512_maskz_loadu_ps(lanes(i, len), p.add(i)) });
        acc[k] = _mm512_max_ps(v, acc[k]);
        k += 1;
        i += 16;
    }
    _mm512_reduce_max_ps(_mm512_max_ps(_mm512_max_ps(acc[0], acc[1]), _mm512_max_ps(acc[2], acc[3])))
}
