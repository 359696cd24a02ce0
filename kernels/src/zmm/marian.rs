//! Marian's float side with zmm registers: the log-softmax reductions over Cephes
//! exponentials, and the entry points of attention's products in MKL's orders, whose bodies
//! [`crate::marian_lanes`] writes once for both widths ([`crate::cephes`] and [`crate::scalar`]
//! are their specifications).

use std::arch::x86_64::*;

use crate::lanes::{Zmm, lanes};
use crate::marian_lanes;
use crate::scalar::{Chain, RowScores, RowValues};

/// [`crate::cephes::exp_ps`] on 16 lanes, as [`crate::ymm::cephes_exp8`] on 8 (the same
/// instructions, twice as wide, so every lane gives the same bits).
#[target_feature(enable = "avx512f")]
#[inline]
fn cephes_exp16(x: __m512) -> __m512 {
    use crate::cephes::c::*;
    let one = _mm512_set1_ps(1.0);
    let x = _mm512_min_ps(x, _mm512_set1_ps(EXP_HI));
    let mut x = _mm512_max_ps(x, _mm512_set1_ps(EXP_LO));
    let fx = _mm512_add_ps(_mm512_mul_ps(x, _mm512_set1_ps(LOG2EF)), _mm512_set1_ps(0.5));
    let tmp = _mm512_roundscale_ps::<{ _MM_FROUND_TO_NEG_INF | _MM_FROUND_NO_EXC }>(fx);
    let gt = _mm512_cmp_ps_mask::<_CMP_GT_OS>(tmp, fx);
    let fx = _mm512_mask_sub_ps(tmp, gt, tmp, one);
    x = _mm512_sub_ps(x, _mm512_mul_ps(fx, _mm512_set1_ps(EXP_C1)));
    x = _mm512_sub_ps(x, _mm512_mul_ps(fx, _mm512_set1_ps(EXP_C2)));
    let z = _mm512_mul_ps(x, x);
    let mut y = _mm512_set1_ps(EXP_P[0]);
    for &p in &EXP_P[1..] {
        y = _mm512_add_ps(_mm512_mul_ps(y, x), _mm512_set1_ps(p));
    }
    y = _mm512_add_ps(_mm512_add_ps(_mm512_mul_ps(y, z), x), one);
    let n = _mm512_add_epi32(_mm512_cvttps_epi32(fx), _mm512_set1_epi32(0x7f));
    _mm512_mul_ps(y, _mm512_castsi512_ps(_mm512_slli_epi32::<23>(n)))
}

/// [`crate::cephes::max_and_exp_sum8`] with zmm registers: the maximum in four registers, then
/// sixteen exponentials per [`cephes_exp16`], added to the eight lane sums as their low then
/// their high half, which is the order of two steps of eight.
///
/// # Safety
/// The CPU has AVX-512F; the row is not empty and its length a multiple of 8.
#[target_feature(enable = "avx512f")]
pub(crate) unsafe fn max_and_exp_sum8(row: &[f32]) -> (f32, f32) {
    let n = row.len();
    if row[0].is_nan() {
        return crate::cephes::max_and_exp_sum8(row);
    }
    let p = row.as_ptr();
    let mut m = [_mm512_set1_ps(row[0]); 4];
    let mut i = 0;
    while i + 64 <= n {
        for (k, mk) in m.iter_mut().enumerate() {
            // SAFETY: 64 floats readable at `row[i..]`.
            *mk = _mm512_max_ps(unsafe { _mm512_loadu_ps(p.add(i + 16 * k)) }, *mk);
        }
        i += 64;
    }
    while i < n {
        let k = lanes(i, n);
        // SAFETY: the mask keeps the load inside `row`.
        m[0] = _mm512_mask_max_ps(m[0], k, unsafe { _mm512_maskz_loadu_ps(k, p.add(i)) }, m[0]);
        i += 16;
    }
    let max = _mm512_reduce_max_ps(_mm512_max_ps(_mm512_max_ps(m[0], m[1]), _mm512_max_ps(m[2], m[3])));
    let mv = _mm512_set1_ps(max);
    let mut acc = _mm256_setzero_ps();
    let mut i = 0;
    while i + 16 <= n {
        // SAFETY: 16 floats readable at `row[i..]`.
        let e = cephes_exp16(_mm512_sub_ps(unsafe { _mm512_loadu_ps(p.add(i)) }, mv));
        acc = _mm256_add_ps(acc, _mm512_castps512_ps256(e));
        acc = _mm256_add_ps(acc, _mm256_castpd_ps(_mm512_extractf64x4_pd::<1>(_mm512_castps_pd(e))));
        i += 16;
    }
    if i < n {
        // SAFETY: `n` is a multiple of 8: the last 8 floats are readable.
        let x = unsafe { _mm256_loadu_ps(p.add(i)) };
        acc = _mm256_add_ps(acc, crate::ymm::cephes_exp8(_mm256_sub_ps(x, _mm512_castps512_ps256(mv))));
    }
    (max, crate::ymm::sum_left_to_right(acc))
}

/// [`crate::scalar::chain_products`] with zmm registers ([`marian_lanes::chain_products`]).
///
/// # Safety
/// The CPU has AVX-512F; lengths as [`crate::scalar::Chain::check`] checks them.
#[target_feature(enable = "avx512f")]
pub(crate) unsafe fn chain_products(p: &Chain, c: &mut [f32]) {
    // SAFETY: the CPU has AVX-512F, and they are enabled here, where the body inlines; lengths
    // checked.
    unsafe { marian_lanes::chain_products(Zmm::new(), p, c) }
}

/// [`crate::scalar::carry_scores`] with zmm registers, head by head
/// ([`marian_lanes::carry_scores_head`]).
///
/// # Safety
/// The CPU has AVX-512F; lengths as [`crate::scalar::RowScores::check`] checks them.
#[target_feature(enable = "avx512f")]
pub(crate) unsafe fn carry_scores(s: &RowScores, out: &mut [f32]) {
    // SAFETY: `each_head` passes each head's query, keys and output, inside the checked operands.
    s.each_head(out, |q, kt, ldkt, n, out| unsafe { carry_scores_head(q, kt, ldkt, n, out) });
}

/// One head of [`carry_scores`], a function with the features of its own: the closure that
/// `each_head` calls need not inline for the body to.
///
/// # Safety
/// As [`carry_scores`], for one head.
#[target_feature(enable = "avx512f")]
unsafe fn carry_scores_head(q: &[f32], kt: &[f32], ldkt: usize, n: usize, out: &mut [f32]) {
    // SAFETY: as `chain_products`; one head's operands, inside the checked ones.
    unsafe { marian_lanes::carry_scores_head(Zmm::new(), q, kt, ldkt, n, out) }
}

/// [`crate::scalar::one_row_values`] with zmm registers ([`marian_lanes::row_values`]).
///
/// # Safety
/// The CPU has AVX-512F; lengths as [`crate::scalar::RowValues::check`] checks them.
#[target_feature(enable = "avx512f")]
pub(crate) unsafe fn one_row_values(p: &RowValues, out: &mut [f32]) {
    // SAFETY: as `chain_products`.
    unsafe { marian_lanes::row_values::<_, false>(Zmm::new(), p, out) }
}

/// [`crate::scalar::zen_carry_scores`] with zmm registers ([`marian_lanes::zen_carry_scores`]).
///
/// # Safety
/// The CPU has AVX-512F; lengths as [`crate::scalar::RowScores::check`] checks them.
#[target_feature(enable = "avx512f")]
pub(crate) unsafe fn zen_carry_scores(s: &RowScores, out: &mut [f32]) {
    // SAFETY: as `chain_products`.
    unsafe { marian_lanes::zen_carry_scores(Zmm::new(), s, out) }
}

/// [`crate::scalar::zen_row_values`] with zmm registers ([`marian_lanes::row_values`]).
///
/// # Safety
/// The CPU has AVX-512F; lengths as [`crate::scalar::RowValues::check`] checks them.
#[target_feature(enable = "avx512f")]
pub(crate) unsafe fn zen_row_values(p: &RowValues, out: &mut [f32]) {
    // SAFETY: as `chain_products`.
    unsafe { marian_lanes::row_values::<_, true>(Zmm::new(), p, out) }
}
