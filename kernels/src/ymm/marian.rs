//! Marian's float side with ymm registers: the log-softmax reductions over Cephes
//! exponentials, and the entry points of attention's products in MKL's orders, whose bodies
//! [`crate::marian_lanes`] writes once for both widths ([`crate::cephes`] and [`crate::scalar`]
//! are their specifications).

use std::arch::x86_64::*;

use crate::lanes::Ymm;
use crate::marian_lanes;
use crate::scalar::{Chain, RowScores, RowValues};

/// [`crate::cephes::exp_ps`] on 8 lanes: `exp256_ps` of `avx_mathfun.h` instruction for
/// instruction (multiplies and adds, never fused; `vroundps` for its floor).
#[target_feature(enable = "avx2,fma")]
#[inline]
pub(crate) fn cephes_exp8(x: __m256) -> __m256 {
    use crate::cephes::c::*;
    let one = _mm256_set1_ps(1.0);
    let x = _mm256_min_ps(x, _mm256_set1_ps(EXP_HI));
    let mut x = _mm256_max_ps(x, _mm256_set1_ps(EXP_LO));
    let fx = _mm256_add_ps(_mm256_mul_ps(x, _mm256_set1_ps(LOG2EF)), _mm256_set1_ps(0.5));
    let tmp = _mm256_round_ps::<{ _MM_FROUND_TO_NEG_INF | _MM_FROUND_NO_EXC }>(fx);
    let mask = _mm256_and_ps(_mm256_cmp_ps::<_CMP_GT_OS>(tmp, fx), one);
    let fx = _mm256_sub_ps(tmp, mask);
    x = _mm256_sub_ps(x, _mm256_mul_ps(fx, _mm256_set1_ps(EXP_C1)));
    x = _mm256_sub_ps(x, _mm256_mul_ps(fx, _mm256_set1_ps(EXP_C2)));
    let z = _mm256_mul_ps(x, x);
    let mut y = _mm256_set1_ps(EXP_P[0]);
    for &p in &EXP_P[1..] {
        y = _mm256_add_ps(_mm256_mul_ps(y, x), _mm256_set1_ps(p));
    }
    y = _mm256_add_ps(_mm256_add_ps(_mm256_mul_ps(y, z), x), one);
    let n = _mm256_add_epi32(_mm256_cvttps_epi32(fx), _mm256_set1_epi32(0x7f));
    _mm256_mul_ps(y, _mm256_castsi256_ps(_mm256_slli_epi32::<23>(n)))
}

/// The maximum of 8 lanes (none NaN), in any order: the maximum is exact.
#[target_feature(enable = "avx2,fma")]
#[inline]
pub(crate) fn max_of_lanes(m: __m256) -> f32 {
    let m = _mm_max_ps(_mm256_castps256_ps128(m), _mm256_extractf128_ps::<1>(m));
    let m = _mm_max_ps(m, _mm_movehl_ps(m, m));
    let m = _mm_max_ss(m, _mm_shuffle_ps::<0b01>(m, m));
    _mm_cvtss_f32(m)
}

/// The eight lanes of `acc` added left to right from 0, as [`crate::cephes::max_and_exp_sum8`]
/// ends.
#[target_feature(enable = "avx2,fma")]
#[inline]
pub(crate) fn sum_left_to_right(acc: __m256) -> f32 {
    let mut lanes = [0f32; 8];
    // SAFETY: 8 floats of room.
    unsafe { _mm256_storeu_ps(lanes.as_mut_ptr(), acc) };
    let mut sum = 0f32;
    for a in lanes {
        sum += a;
    }
    sum
}

/// [`crate::cephes::max_and_exp_sum8`] with ymm registers: four running maxima (vmaxps keeps its
/// second operand, the accumulator, when the value is NaN, as the running comparison skips it),
/// then one register of eight lane sums, one [`cephes_exp8`] per eight values.
///
/// # Safety
/// The CPU has AVX2 and FMA; the row is not empty and its length a multiple of 8.
#[target_feature(enable = "avx2,fma")]
pub(crate) unsafe fn max_and_exp_sum8(row: &[f32]) -> (f32, f32) {
    let n = row.len();
    if row[0].is_nan() {
        // A NaN first value is the maximum; nothing here is fast then.
        return crate::cephes::max_and_exp_sum8(row);
    }
    let p = row.as_ptr();
    let mut m = [_mm256_set1_ps(row[0]); 4];
    let mut i = 0;
    while i + 32 <= n {
        for (k, mk) in m.iter_mut().enumerate() {
            // SAFETY: 32 floats readable at `row[i..]`.
            *mk = _mm256_max_ps(unsafe { _mm256_loadu_ps(p.add(i + 8 * k)) }, *mk);
        }
        i += 32;
    }
    while i < n {
        // SAFETY: `n` is a multiple of 8, so 8 floats are readable at `row[i..]`.
        m[0] = _mm256_max_ps(unsafe { _mm256_loadu_ps(p.add(i)) }, m[0]);
        i += 8;
    }
    let max = max_of_lanes(_mm256_max_ps(_mm256_max_ps(m[0], m[1]), _mm256_max_ps(m[2], m[3])));
    let mv = _mm256_set1_ps(max);
    let mut acc = _mm256_setzero_ps();
    for i in (0..n).step_by(8) {
        // SAFETY: as above.
        acc = _mm256_add_ps(acc, cephes_exp8(_mm256_sub_ps(unsafe { _mm256_loadu_ps(p.add(i)) }, mv)));
    }
    (max, sum_left_to_right(acc))
}

/// [`crate::scalar::chain_products`] with ymm registers ([`marian_lanes::chain_products`]).
///
/// # Safety
/// The CPU has AVX2 and FMA; lengths as [`crate::scalar::Chain::check`] checks them.
#[target_feature(enable = "avx2,fma")]
pub(crate) unsafe fn chain_products(p: &Chain, c: &mut [f32]) {
    // SAFETY: the CPU has AVX2 and FMA, and they are enabled here, where the body inlines; lengths
    // checked.
    unsafe { marian_lanes::chain_products(Ymm::new(), p, c) }
}

/// [`crate::scalar::carry_scores`] with ymm registers, head by head
/// ([`marian_lanes::carry_scores_head`]).
///
/// # Safety
/// The CPU has AVX2 and FMA; lengths as [`crate::scalar::RowScores::check`] checks them.
#[target_feature(enable = "avx2,fma")]
pub(crate) unsafe fn carry_scores(s: &RowScores, out: &mut [f32]) {
    // SAFETY: `each_head` passes each head's query, keys and output, inside the checked operands.
    s.each_head(out, |q, kt, ldkt, n, out| unsafe { carry_scores_head(q, kt, ldkt, n, out) });
}

/// One head of [`carry_scores`], a function with the features of its own: the closure that
/// `each_head` calls need not inline for the body to.
///
/// # Safety
/// As [`carry_scores`], for one head.
#[target_feature(enable = "avx2,fma")]
unsafe fn carry_scores_head(q: &[f32], kt: &[f32], ldkt: usize, n: usize, out: &mut [f32]) {
    // SAFETY: as `chain_products`; one head's operands, inside the checked ones.
    unsafe { marian_lanes::carry_scores_head(Ymm::new(), q, kt, ldkt, n, out) }
}

/// [`crate::scalar::one_row_values`] with ymm registers ([`marian_lanes::row_values`]).
///
/// # Safety
/// The CPU has AVX2 and FMA; lengths as [`crate::scalar::RowValues::check`] checks them.
#[target_feature(enable = "avx2,fma")]
pub(crate) unsafe fn one_row_values(p: &RowValues, out: &mut [f32]) {
    // SAFETY: as `chain_products`.
    unsafe { marian_lanes::row_values::<_, false>(Ymm::new(), p, out) }
}

/// [`crate::scalar::zen_carry_scores`] with ymm registers ([`marian_lanes::zen_carry_scores`]).
///
/// # Safety
/// The CPU has AVX2 and FMA; lengths as [`crate::scalar::RowScores::check`] checks them.
#[target_feature(enable = "avx2,fma")]
pub(crate) unsafe fn zen_carry_scores(s: &RowScores, out: &mut [f32]) {
    // SAFETY: as `chain_products`.
    unsafe { marian_lanes::zen_carry_scores(Ymm::new(), s, out) }
}

/// [`crate::scalar::zen_row_values`] with ymm registers ([`marian_lanes::row_values`]).
///
/// # Safety
/// The CPU has AVX2 and FMA; lengths as [`crate::scalar::RowValues::check`] checks them.
#[target_feature(enable = "avx2,fma")]
pub(crate) unsafe fn zen_row_values(p: &RowValues, out: &mut [f32]) {
    // SAFETY: as `chain_products`.
    unsafe { marian_lanes::row_values::<_, true>(Ymm::new(), p, out) }
}
