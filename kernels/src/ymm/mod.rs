//! AVX2 pieces shared by the avx2 and avx_vnni kernels: the fused epilogue on one block of 16
//! columns (two ymm of int32 accumulators) and activation quantization.
//!
//! The float steps are [`crate::scalar::epilogue_one`]'s lane by lane, for the reasons given in
//! `zmm.rs`. AVX2 has no masked loads of bytes, so the tail block goes through padded copies.

use std::arch::x86_64::*;

use crate::Scale;
use crate::lanes::first_lanes;
use crate::pack::{N_BLOCK, block_values};
use crate::part::{Out, Part};

mod marian;
pub(crate) use marian::*;

/// The epilogue's column vectors for one block (columns 0–7 and 8–15), loaded once.
pub(crate) struct BlockEp<'a> {
    j0: usize,
    valid: usize,
    zero_fix: Option<[__m256i; 2]>,
    scale: [__m256; 2],
    row_scales: Option<&'a [f32]>,
    bias: Option<[__m256; 2]>,
    relu: bool,
}

impl<'a> BlockEp<'a> {
    /// # Safety
    /// `p` satisfies [`Part`]'s invariants and `nb` is one of its blocks (the CPU has AVX2).
    #[target_feature(enable = "avx2")]
    #[inline]
    pub unsafe fn new(p: &Part<'a>, nb: usize) -> BlockEp<'a> {
        let j0 = nb * N_BLOCK;
        let valid = (p.b.n() - j0).min(N_BLOCK);
        let f = |v: &[f32]| {
            let v = block_values(v, j0);
            // SAFETY: `v` is a 16-element array.
            unsafe { [_mm256_loadu_ps(v.as_ptr()), _mm256_loadu_ps(v.as_ptr().add(8))] }
        };
        let zero_fix = p.ep.zero_fix.map(|z| {
            let z = block_values(z, j0);
            // SAFETY: `z` is a 16-element array.
            unsafe { [_mm256_loadu_si256(z.as_ptr().cast()), _mm256_loadu_si256(z.as_ptr().add(8).cast())] }
        });
        let (scale, row_scales) = match p.ep.scale {
            Scale::Uniform(s) => ([_mm256_set1_ps(s); 2], None),
            Scale::Columns(c) => (f(c), None),
            Scale::RowsColumns { rows, cols } => (f(cols), Some(rows)),
        };
        BlockEp { j0, valid, zero_fix, scale, row_scales, bias: p.ep.bias.map(f), relu: p.ep.relu }
    }

    /// Finishes row `i` of the block from its accumulators (columns 0–7, 8–15) and writes it.
    ///
    /// # Safety
    /// The CPU has AVX2; `out` is the output of the part this was made from, `i` one of its rows.
    #[target_feature(enable = "avx2")]
    #[inline]
    pub unsafe fn store(&self, acc: [__m256i; 2], i: usize, out: Out) {
        let mut x = [_mm256_setzero_ps(); 2];
        for h in 0..2 {
            let a = match self.zero_fix {
                Some(z) => _mm256_sub_epi32(acc[h], z[h]),
                None => acc[h],
            };
            let scale = match self.row_scales {
                Some(rows) => _mm256_mul_ps(_mm256_set1_ps(rows[i]), self.scale[h]),
                None => self.scale[h],
            };
            x[h] = _mm256_mul_ps(_mm256_cvtepi32_ps(a), scale);
            if let Some(b) = self.bias {
                x[h] = _mm256_add_ps(x[h], b[h]);
            }
            if self.relu {
                x[h] = _mm256_max_ps(x[h], _mm256_setzero_ps());
            }
        }
        match out {
            Out::F32 { ptr, stride, col0 } => {
                // SAFETY: the output holds row `i`, columns `j0 .. j0 + valid`.
                let dst = unsafe { ptr.add(i * stride + self.j0 - col0) };
                if self.valid == N_BLOCK {
                    // SAFETY: 16 writable floats at `dst`.
                    unsafe {
                        _mm256_storeu_ps(dst, x[0]);
                        _mm256_storeu_ps(dst.add(8), x[1]);
                    }
                } else {
                    let mut tmp = [0f32; N_BLOCK];
                    // SAFETY: `tmp` holds 16 floats; `valid` writable floats at `dst`.
                    unsafe {
                        _mm256_storeu_ps(tmp.as_mut_ptr(), x[0]);
                        _mm256_storeu_ps(tmp.as_mut_ptr().add(8), x[1]);
                        std::ptr::copy_nonoverlapping(tmp.as_ptr(), dst, self.valid);
                    }
                }
            }
            Out::U8 { ptr, stride, scale, col0 } => {
                let q = quantize16(x, _mm256_set1_ps(scale));
                // SAFETY: the output holds row `i`, columns `j0 .. j0 + valid`.
                let dst = unsafe { ptr.add(i * stride + self.j0 - col0) };
                if self.valid == N_BLOCK {
                    // SAFETY: 16 writable bytes at `dst`.
                    unsafe { _mm_storeu_si128(dst.cast(), q) };
                } else {
                    let mut tmp = [0u8; N_BLOCK];
                    // SAFETY: `tmp` holds 16 bytes; `valid` writable bytes at `dst`.
                    unsafe {
                        _mm_storeu_si128(tmp.as_mut_ptr().cast(), q);
                        std::ptr::copy_nonoverlapping(tmp.as_ptr(), dst, self.valid);
                    }
                }
            }
        }
    }
}

/// [`crate::scalar::quantize_one`] on 16 lanes (two ymm), packed to 16 bytes in order.
#[target_feature(enable = "avx2")]
#[inline]
fn quantize16(x: [__m256; 2], scale: __m256) -> __m128i {
    // See zmm.rs: cvtps2dq already behaves as the reference emulates; one clamp to [−127, 127].
    let q = |x| {
        let i = _mm256_cvtps_epi32(_mm256_mul_ps(x, scale));
        let i = _mm256_max_epi32(_mm256_min_epi32(i, _mm256_set1_epi32(127)), _mm256_set1_epi32(-127));
        _mm256_add_epi32(i, _mm256_set1_epi32(127))
    };
    // packs interleaves 128-bit lanes: [a0..3 b0..3 a4..7 b4..7]; the permute puts them in order.
    let w = _mm256_permute4x64_epi64::<0b11_01_10_00>(_mm256_packs_epi32(q(x[0]), q(x[1])));
    _mm_packus_epi16(_mm256_castsi256_si128(w), _mm256_extracti128_si256::<1>(w))
}

/// [`crate::scalar::quantize`], 16 values per step, the tail through a padded copy.
///
/// # Safety
/// The CPU has AVX2; `dst` is at least as long as `src`.
#[target_feature(enable = "avx2")]
pub(crate) unsafe fn quantize(src: &[f32], scale: f32, dst: &mut [u8]) {
    let s = _mm256_set1_ps(scale);
    let mut i = 0;
    while i + 16 <= src.len() {
        // SAFETY: 16 floats readable at `src[i..]`, 16 bytes writable at `dst[i..]`.
        unsafe {
            let x = [_mm256_loadu_ps(src.as_ptr().add(i)), _mm256_loadu_ps(src.as_ptr().add(i + 8))];
            _mm_storeu_si128(dst.as_mut_ptr().add(i).cast(), quantize16(x, s));
        }
        i += 16;
    }
    if i < src.len() {
        let tail = block_values(src, i);
        let mut out = [0u8; 16];
        // SAFETY: both are 16-element arrays.
        unsafe {
            let x = [_mm256_loadu_ps(tail.as_ptr()), _mm256_loadu_ps(tail.as_ptr().add(8))];
            _mm_storeu_si128(out.as_mut_ptr().cast(), quantize16(x, s));
        }
        dst[i..src.len()].copy_from_slice(&out[..src.len() - i]);
    }
}

/// [`crate::scalar::fma_vv`] with `vfmadd231ps ymm`: the same single rounding per element.
///
/// # Safety
/// The CPU has AVX2 and FMA; `a` and `b` are at least as long as `acc`.
#[target_feature(enable = "avx2,fma")]
pub(crate) unsafe fn fma_vv(acc: &mut [f32], a: &[f32], b: &[f32]) {
    let whole = acc.len() / 8 * 8;
    for i in (0..whole).step_by(8) {
        // SAFETY: 8 floats at `i` in each slice (`i + 8 <= acc.len() <= a.len(), b.len()`).
        unsafe {
            let c = acc.as_mut_ptr().add(i);
            let r = _mm256_fmadd_ps(
                _mm256_loadu_ps(a.as_ptr().add(i)),
                _mm256_loadu_ps(b.as_ptr().add(i)),
                _mm256_loadu_ps(c),
            );
            _mm256_storeu_ps(c, r);
        }
    }
    for i in whole..acc.len() {
        // With FMA enabled this is one `vfmadd` (the scalar form), not a library call.
        acc[i] = a[i].mul_add(b[i], acc[i]);
    }
}

/// [`crate::scalar::fma_sv`] with `vfmadd231ps ymm`.
///
/// # Safety
/// The CPU has AVX2 and FMA; `b` is at least as long as `acc`.
#[target_feature(enable = "avx2,fma")]
pub(crate) unsafe fn fma_sv(acc: &mut [f32], s: f32, b: &[f32]) {
    let whole = acc.len() / 8 * 8;
    let sv = _mm256_set1_ps(s);
    for i in (0..whole).step_by(8) {
        // SAFETY: 8 floats at `i` in both slices (`i + 8 <= acc.len() <= b.len()`).
        unsafe {
            let c = acc.as_mut_ptr().add(i);
            _mm256_storeu_ps(c, _mm256_fmadd_ps(sv, _mm256_loadu_ps(b.as_ptr().add(i)), _mm256_loadu_ps(c)));
        }
    }
    for i in whole..acc.len() {
        acc[i] = s.mul_add(b[i], acc[i]);
    }
}

/// [`crate::scalar::block_scores`] with ymm registers, one head at a time: a block of 16
/// positions is two registers, four blocks at a time so the fused multiply-adds' latency is
/// hidden. With several heads the blocks go in runs of about 32 KB of keys that every head
/// passes over while they are in L1.
///
/// # Safety
/// The CPU has AVX2 and FMA; lengths as [`crate::scalar::check_block_scores`] checks them (the
/// caller did).
#[target_feature(enable = "avx2,fma")]
pub(crate) unsafe fn block_scores(q: &[f32], hd: usize, keys: &[f32], blocks: usize, out: &mut [f32]) {
    const G: usize = 4;
    const KB: usize = crate::scalar::KEY_BLOCK;
    let run = if q.len() > hd { crate::scalar::l1_key_blocks(hd) } else { blocks.max(1) };
    let mut r0 = 0;
    while r0 < blocks {
        let r1 = (r0 + run).min(blocks);
        for (h, qh) in q.chunks_exact(hd).enumerate() {
            let oh = out.as_mut_ptr().wrapping_add(h * blocks * KB);
            let mut b = r0;
            while b < r1 {
                let g = (r1 - b).min(G);
                let mut acc = [[_mm256_setzero_ps(); 2]; G];
                let base = keys.as_ptr().wrapping_add(b * hd * KB);
                for (d, &qd) in qh.iter().enumerate() {
                    let qv = _mm256_set1_ps(qd);
                    for (i, a) in acc.iter_mut().enumerate().take(g) {
                        // SAFETY: block b+i < blocks, and keys holds hd·16 floats per block.
                        unsafe {
                            let k = base.add((i * hd + d) * KB);
                            a[0] = _mm256_fmadd_ps(qv, _mm256_loadu_ps(k), a[0]);
                            a[1] = _mm256_fmadd_ps(qv, _mm256_loadu_ps(k.add(8)), a[1]);
                        }
                    }
                }
                for (i, a) in acc.iter().enumerate().take(g) {
                    // SAFETY: the 16 scores of block b+i of head h inside `out`.
                    unsafe {
                        _mm256_storeu_ps(oh.add((b + i) * KB), a[0]);
                        _mm256_storeu_ps(oh.add((b + i) * KB + 8), a[1]);
                    }
                }
                b += g;
            }
        }
        r0 = r1;
    }
}

/// [`crate::scalar::weighted_rows`] with ymm registers: one head at a time, 64 dimensions
/// (eight registers) at a time, then 8, then one by one; every element with the scalar's fused
/// multiply-adds in its order. With several heads the rows go in runs of about 32 KB that every
/// head passes over while they are in L1, the sums continued from `out` between runs.
///
/// # Safety
/// The CPU has AVX2 and FMA; lengths as [`crate::scalar::check_weighted_rows`] checks them (the
/// caller did).
#[target_feature(enable = "avx2,fma")]
pub(crate) unsafe fn weighted_rows(
    w: &[f32],
    n: usize,
    w_stride: usize,
    rows: &[f32],
    out: &mut [f32],
    d: usize,
    continued: bool,
) {
    let run = if out.len() > d { crate::scalar::l1_value_rows(d) } else { n.max(1) };
    // At least one pass, so `n = 0` still writes zeros when not continued.
    let mut j0 = 0;
    loop {
        let j1 = (j0 + run).min(n);
        let cont = continued || j0 > 0;
        for (h, o) in out.chunks_exact_mut(d).enumerate() {
            let wh = &w[h * w_stride + j0..h * w_stride + j1];
            let mut d0 = 0;
            while d0 + 8 <= d {
                let g = ((d - d0) / 8).min(8);
                let mut acc = [_mm256_setzero_ps(); 8];
                if cont {
                    for (i, a) in acc.iter_mut().enumerate().take(g) {
                        // SAFETY: 8 floats at d0 + 8i inside this head's output.
                        *a = unsafe { _mm256_loadu_ps(o.as_ptr().add(d0 + i * 8)) };
                    }
                }
                for (j, &wj) in wh.iter().enumerate() {
                    let wv = _mm256_set1_ps(wj);
                    let row = rows.as_ptr().wrapping_add((j0 + j) * d + d0);
                    for (i, a) in acc.iter_mut().enumerate().take(g) {
                        // SAFETY: dimensions d0 + 8i .. d0 + 8i + 8 ≤ d of row j0 + j < n, inside
                        // `rows`.
                        *a = _mm256_fmadd_ps(wv, unsafe { _mm256_loadu_ps(row.add(i * 8)) }, *a);
                    }
                }
                for (i, a) in acc.iter().enumerate().take(g) {
                    // SAFETY: 8 floats at d0 + 8i inside this head's output.
                    unsafe { _mm256_storeu_ps(o.as_mut_ptr().add(d0 + i * 8), *a) };
                }
                d0 += g * 8;
            }
        }
        j0 = j1;
        if j0 >= n {
            break;
        }
    }
    let d0 = d / 8 * 8;
    for (h, o) in out.chunks_exact_mut(d).enumerate() {
        crate::scalar::weighted_rows_tail(&w[h * w_stride..h * w_stride + n], rows, o, d, d0, continued);
    }
}

/// [`crate::scalar::exp`] on 8 lanes, one instruction per operation of the reference, as
/// `zmm::exp16` (see there).
#[target_feature(enable = "avx2,fma")]
#[inline]
fn exp8(x: __m256) -> __m256 {
    use crate::scalar::{EXP_MAX, EXP_MIN, EXP_ROUND, EXP_TAYLOR, LN2_HI, LN2_LO, LOG2E};
    // `f32::clamp` passes NaN on; vmaxps and vminps return their second operand for NaN.
    let x = _mm256_min_ps(_mm256_set1_ps(EXP_MAX), _mm256_max_ps(_mm256_set1_ps(EXP_MIN), x));
    let round = _mm256_set1_ps(EXP_ROUND);
    let t = _mm256_fmadd_ps(x, _mm256_set1_ps(LOG2E), round);
    let n = _mm256_sub_ps(t, round);
    let r = _mm256_fnmadd_ps(n, _mm256_set1_ps(LN2_LO), _mm256_fnmadd_ps(n, _mm256_set1_ps(LN2_HI), x));
    let mut p = _mm256_set1_ps(EXP_TAYLOR[0]);
    for &c in &EXP_TAYLOR[1..] {
        p = _mm256_fmadd_ps(p, r, _mm256_set1_ps(c));
    }
    let bits = _mm256_sub_epi32(_mm256_castps_si256(t), _mm256_set1_epi32(EXP_ROUND.to_bits() as i32));
    let two_n = _mm256_slli_epi32::<23>(_mm256_add_epi32(bits, _mm256_set1_epi32(127)));
    _mm256_mul_ps(p, _mm256_castsi256_ps(two_n))
}

/// The reference's sum of eight lanes: `((s0 + s4) + (s1 + s5)) + ((s2 + s6) + (s3 + s7))`.
#[target_feature(enable = "avx2")]
#[inline]
pub(crate) fn sum_tree(s: __m256) -> f32 {
    let v = _mm_add_ps(_mm256_castps256_ps128(s), _mm256_extractf128_ps::<1>(s));
    // [v0 + v1, v1 + v0, v2 + v3, v3 + v2]; addition is commutative to the bit.
    let w = _mm_add_ps(v, _mm_shuffle_ps::<0b10_11_00_01>(v, v));
    _mm_cvtss_f32(_mm_add_ss(w, _mm_movehl_ps(w, w)))
}

/// [`crate::scalar::softmax_scaled`] with ymm registers, in the three passes of
/// `zmm::softmax_scaled` (see there): four independent running maxima, then the exponentials
/// with the reference's eight-lane sum (one register), then the multiply by its reciprocal; the
/// last partial block through `vmaskmovps`.
///
/// # Safety
/// The CPU has AVX2 and FMA.
#[target_feature(enable = "avx2,fma")]
pub(crate) unsafe fn softmax_scaled(s: &mut [f32], scaling: f32) {
    let len = s.len();
    let whole = len / 8 * 8;
    let p = s.as_mut_ptr();
    let sc = _mm256_set1_ps(scaling);
    let neg_inf = _mm256_set1_ps(f32::NEG_INFINITY);
    // vmaxps returns its second operand when the first is NaN: the accumulators (never NaN)
    // skip NaN scores as `f32::max` does.
    let mut acc = [neg_inf; 4];
    let mut i = 0;
    while i + 32 <= len {
        for (k, a) in acc.iter_mut().enumerate() {
            // SAFETY: 32 floats readable at `s[i..]`.
            *a = _mm256_max_ps(_mm256_mul_ps(unsafe { _mm256_loadu_ps(p.add(i + 8 * k)) }, sc), *a);
        }
        i += 32;
    }
    let mut k = 0;
    while i < whole {
        // SAFETY: 8 floats readable at `s[i..]`.
        acc[k] = _mm256_max_ps(_mm256_mul_ps(unsafe { _mm256_loadu_ps(p.add(i)) }, sc), acc[k]);
        k += 1;
        i += 8;
    }
    let tail = first_lanes(len - whole);
    if whole < len {
        // SAFETY: the mask keeps the load inside `s`; lanes past the end become −∞.
        let x = _mm256_mul_ps(unsafe { _mm256_maskload_ps(p.add(whole), tail) }, sc);
        acc[3] = _mm256_max_ps(_mm256_blendv_ps(neg_inf, x, _mm256_castsi256_ps(tail)), acc[3]);
    }
    let m = _mm256_max_ps(_mm256_max_ps(acc[0], acc[1]), _mm256_max_ps(acc[2], acc[3]));
    let m = _mm_max_ps(_mm256_castps256_ps128(m), _mm256_extractf128_ps::<1>(m));
    let m = _mm_max_ps(m, _mm_movehl_ps(m, m));
    let m = _mm_max_ss(m, _mm_movehdup_ps(m));
    let max = _mm256_broadcastss_ps(m);
    let mut sum = _mm256_setzero_ps();
    i = 0;
    while i < whole {
        // SAFETY: 8 floats readable and writable at `s[i..]`.
        unsafe {
            let e = exp8(_mm256_sub_ps(_mm256_mul_ps(_mm256_loadu_ps(p.add(i)), sc), max));
            _mm256_storeu_ps(p.add(i), e);
            sum = _mm256_add_ps(sum, e);
        }
        i += 8;
    }
    if whole < len {
        // SAFETY: the mask keeps the load and the store inside `s`.
        unsafe {
            let e = exp8(_mm256_sub_ps(_mm256_mul_ps(_mm256_maskload_ps(p.add(whole), tail), sc), max));
            _mm256_maskstore_ps(p.add(whole), tail, e);
        }
    }
    let mut total = sum_tree(sum);
    for x in &s[whole..] {
        total += *x;
    }
    let inv = _mm256_set1_ps(1.0 / total);
    let p = s.as_mut_ptr();
    i = 0;
    while i < whole {
        // SAFETY: 8 floats readable and writable at `s[i..]`.
        unsafe { _mm256_storeu_ps(p.add(i), _mm256_mul_ps(_mm256_loadu_ps(p.add(i)), inv)) };
        i += 8;
    }
    if whole < len {
        // SAFETY: the mask keeps the load and the store inside `s`.
        unsafe {
            let x = _mm256_mul_ps(_mm256_maskload_ps(p.add(whole), tail), inv);
            _mm256_maskstore_ps(p.add(whole), tail, x);
        }
    }
}

/// [`crate::scalar::silu_mul`] with ymm registers, the last partial block through `vmaskmovps`.
///
/// # Safety
/// The CPU has AVX2 and FMA.
#[target_feature(enable = "avx2,fma")]
pub(crate) unsafe fn silu_mul(g: &[f32], u: &[f32], out: &mut [f32]) {
    assert!(g.len() >= out.len() && u.len() >= out.len(), "silu_mul: operands shorter than the output");
    let len = out.len();
    let whole = len / 8 * 8;
    let one = _mm256_set1_ps(1.0);
    let sign = _mm256_set1_ps(-0.0);
    let silu = |gv: __m256, uv: __m256| {
        let e = exp8(_mm256_xor_ps(gv, sign));
        _mm256_mul_ps(_mm256_div_ps(gv, _mm256_add_ps(one, e)), uv)
    };
    let mut i = 0;
    while i < whole {
        // SAFETY: `g` and `u` are at least as long as `out`, which has 8 floats at `i`.
        unsafe {
            let o = silu(_mm256_loadu_ps(g.as_ptr().add(i)), _mm256_loadu_ps(u.as_ptr().add(i)));
            _mm256_storeu_ps(out.as_mut_ptr().add(i), o);
        }
        i += 8;
    }
    if whole < len {
        let m = first_lanes(len - whole);
        // SAFETY: the mask keeps the loads and the store inside the slices.
        unsafe {
            let o = silu(_mm256_maskload_ps(g.as_ptr().add(i), m), _mm256_maskload_ps(u.as_ptr().add(i), m));
            _mm256_maskstore_ps(out.as_mut_ptr().add(i), m, o);
        }
    }
}

/// [`crate::scalar::absmax`] with ymm registers: four independent running maxima (see
/// `zmm::absmax` for the NaN rule), the last partial block through `vmaskmovps`.
///
/// # Safety
/// The CPU has AVX2 and FMA.
#[target_feature(enable = "avx2,fma")]
pub(crate) unsafe fn absmax(x: &[f32]) -> f32 {
    let len = x.len();
    let whole = len / 8 * 8;
    let p = x.as_ptr();
    let abs = |v: __m256| _mm256_andnot_ps(_mm256_set1_ps(-0.0), v);
    let mut acc = [_mm256_setzero_ps(); 4];
    let mut i = 0;
    while i + 32 <= len {
        for (k, a) in acc.iter_mut().enumerate() {
            // SAFETY: 32 floats readable at `x[i..]`.
            *a = _mm256_max_ps(abs(unsafe { _mm256_loadu_ps(p.add(i + 8 * k)) }), *a);
        }
        i += 32;
    }
    let mut k = 0;
    while i < whole {
        // SAFETY: 8 floats readable at `x[i..]`.
        acc[k] = _mm256_max_ps(abs(unsafe { _mm256_loadu_ps(p.add(i)) }), acc[k]);
        k += 1;
        i += 8;
    }
    if whole < len {
        // Lanes past the end load as 0, which changes no maximum of absolute values.
        // SAFETY: the mask keeps the load inside `x`.
        let v = abs(unsafe { _mm256_maskload_ps(p.add(whole), first_lanes(len - whole)) });
        acc[3] = _mm256_max_ps(v, acc[3]);
    }
    let m = _mm256_max_ps(_mm256_max_ps(acc[0], acc[1]), _mm256_max_ps(acc[2], acc[3]));
    let m = _mm_max_ps(_mm256_castps256_ps128(m), _mm256_extractf128_ps::<1>(m));
    let m = _mm_max_ps(m, _mm_movehl_ps(m, m));
    _mm_cvtss_f32(_mm_max_ss(m, _mm_movehdup_ps(m)))
}
