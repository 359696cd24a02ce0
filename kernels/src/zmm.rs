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
use crate::pack::N_BLOCK;
use crate::part::{Out, Part};

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
            Out::F32 { ptr, stride } => unsafe { _mm512_mask_storeu_ps(ptr.add(i * stride + self.j0), self.mask, x) },
            Out::U8 { ptr, stride, scale } => {
                let q = quantize16(x, _mm512_set1_ps(scale));
                // SAFETY: as above.
                unsafe { _mm512_mask_cvtepi32_storeu_epi8(ptr.add(i * stride + self.j0).cast(), self.mask, q) }
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

/// [`crate::scalar::quantize`], 16 values per step.
///
/// # Safety
/// The CPU has AVX-512F; `dst` is at least as long as `src`.
#[target_feature(enable = "avx512f")]
pub(crate) unsafe fn quantize(src: &[f32], scale: f32, dst: &mut [u8]) {
    let s = _mm512_set1_ps(scale);
    let mut i = 0;
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
