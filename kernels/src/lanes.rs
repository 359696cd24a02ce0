//! One lane type per register width, so that a float kernel is written once for ymm and zmm
//! registers ([`crate::marian_lanes`], the scan of `scan::top2_lanes`): [`Ymm`] (AVX2 and FMA,
//! 8 floats) and [`Zmm`] (AVX-512F, 16 floats), each with the few operations the bodies use and
//! the tuning that was measured for its width.
//!
//! Every method is `#[inline(always)]` without target features of its own (inline(always) and
//! `#[target_feature]` do not go together): the generic bodies are `#[inline(always)]` too, and
//! inline into a `#[target_feature]` entry point in `ymm`/`zmm`, where each operation becomes its
//! one instruction. Called from anywhere else an operation would be a call per instruction.
//! A value of a lane type exists only where the CPU has its features ([`Ymm::new`],
//! [`Zmm::new`]), which is what makes the arithmetic safe to call.

use std::arch::x86_64::*;

/// A register of `N` floats, its mask of lanes and its operations.
pub(crate) trait Lanes: Copy {
    /// Floats per register.
    const N: usize;
    /// Registers side by side in one block of [`crate::marian_lanes::row_values`] over
    /// all heads (4 or 8).
    const ROW_VALUES_REGS: usize;
    /// Units of [`crate::marian_lanes::zen_carry_scores`] side by side (2 or 4), four
    /// registers each.
    const ZEN_UNITS: usize;
    /// Registers of one head's dimensions at once in [`crate::marian_lanes::row_values`]
    /// when a head's size is not a multiple of `N` (4 or 8).
    const ZEN_VALUE_REGS: usize;
    /// The register.
    type F: Copy;
    /// A register of `N` 32-bit integers.
    type I: Copy;
    /// A set of lanes of [`Self::F`] (and of [`Self::I`]).
    type M: Copy;

    /// All lanes 0.
    fn zero(self) -> Self::F;
    /// All lanes `x`.
    fn splat(self, x: f32) -> Self::F;
    /// `a + b` lane by lane.
    fn add(self, a: Self::F, b: Self::F) -> Self::F;
    /// `a · b` lane by lane.
    fn mul(self, a: Self::F, b: Self::F) -> Self::F;
    /// `a · b + c` lane by lane, rounded once (`vfmadd231ps` into `c`).
    fn fmadd(self, a: Self::F, b: Self::F, c: Self::F) -> Self::F;
    /// `vminps`: lane by lane the smaller, `b` where either is NaN.
    fn min(self, a: Self::F, b: Self::F) -> Self::F;
    /// `vmaxps`: lane by lane the larger, `b` where either is NaN.
    fn max(self, a: Self::F, b: Self::F) -> Self::F;
    /// The lanes where `a > b` (none where either is NaN).
    fn gt(self, a: Self::F, b: Self::F) -> Self::M;
    /// `a` with the lanes of `m` from `b`.
    fn blend(self, a: Self::F, b: Self::F, m: Self::M) -> Self::F;
    /// All lanes `x`.
    fn splat_i(self, x: i32) -> Self::I;
    /// `a` with the lanes of `m` from `b`.
    fn blend_i(self, a: Self::I, b: Self::I, m: Self::M) -> Self::I;
    /// The lanes of a register of floats `from .. from + N` that lie before `to` (`from ≤ to`).
    fn mask(self, from: usize, to: usize) -> Self::M;
    /// `N` floats from `p`.
    ///
    /// # Safety
    /// `N` floats are readable at `p`.
    unsafe fn load(self, p: *const f32) -> Self::F;
    /// `v` to the `N` floats at `p`.
    ///
    /// # Safety
    /// `N` floats are writable at `p`.
    unsafe fn store(self, p: *mut f32, v: Self::F);
    /// `v` to the `N` integers at `p`.
    ///
    /// # Safety
    /// `N` integers are writable at `p`.
    unsafe fn store_i(self, p: *mut u32, v: Self::I);
    /// The lanes of `m` from `p`, the others 0 (their memory is not touched).
    ///
    /// # Safety
    /// The floats at `p` of the lanes of `m` are readable.
    unsafe fn load_masked(self, p: *const f32, m: Self::M) -> Self::F;
    /// The lanes of `m` of `v` to `p` (the others' memory is not touched).
    ///
    /// # Safety
    /// The floats at `p` of the lanes of `m` are writable.
    unsafe fn store_masked(self, p: *mut f32, m: Self::M, v: Self::F);
}

/// ymm registers: 8 floats, AVX2 and FMA.
#[derive(Clone, Copy)]
pub(crate) struct Ymm(());

impl Ymm {
    /// The lane type.
    ///
    /// # Safety
    /// The CPU has AVX2 and FMA.
    #[inline(always)]
    pub(crate) unsafe fn new() -> Self {
        Ymm(())
    }
}

impl Lanes for Ymm {
    const N: usize = 8;
    const ROW_VALUES_REGS: usize = 4;
    // Sixteen registers hold no more than two units of four and their operands.
    const ZEN_UNITS: usize = 2;
    const ZEN_VALUE_REGS: usize = 8;
    type F = __m256;
    type I = __m256i;
    type M = __m256i;

    #[inline(always)]
    fn zero(self) -> __m256 {
        // SAFETY: a `Ymm` exists only where the CPU has AVX2 and FMA (`Ymm::new`).
        unsafe { _mm256_setzero_ps() }
    }
    #[inline(always)]
    fn splat(self, x: f32) -> __m256 {
        // SAFETY: as in `zero`.
        unsafe { _mm256_set1_ps(x) }
    }
    #[inline(always)]
    fn add(self, a: __m256, b: __m256) -> __m256 {
        // SAFETY: as in `zero`.
        unsafe { _mm256_add_ps(a, b) }
    }
    #[inline(always)]
    fn mul(self, a: __m256, b: __m256) -> __m256 {
        // SAFETY: as in `zero`.
        unsafe { _mm256_mul_ps(a, b) }
    }
    #[inline(always)]
    fn fmadd(self, a: __m256, b: __m256, c: __m256) -> __m256 {
        // SAFETY: as in `zero`.
        unsafe { _mm256_fmadd_ps(a, b, c) }
    }
    #[inline(always)]
    fn min(self, a: __m256, b: __m256) -> __m256 {
        // SAFETY: as in `zero`.
        unsafe { _mm256_min_ps(a, b) }
    }
    #[inline(always)]
    fn max(self, a: __m256, b: __m256) -> __m256 {
        // SAFETY: as in `zero`.
        unsafe { _mm256_max_ps(a, b) }
    }
    #[inline(always)]
    fn gt(self, a: __m256, b: __m256) -> __m256i {
        // SAFETY: as in `zero`.
        unsafe { _mm256_castps_si256(_mm256_cmp_ps::<_CMP_GT_OQ>(a, b)) }
    }
    #[inline(always)]
    fn blend(self, a: __m256, b: __m256, m: __m256i) -> __m256 {
        // SAFETY: as in `zero`.
        unsafe { _mm256_blendv_ps(a, b, _mm256_castsi256_ps(m)) }
    }
    #[inline(always)]
    fn splat_i(self, x: i32) -> __m256i {
        // SAFETY: as in `zero`.
        unsafe { _mm256_set1_epi32(x) }
    }
    #[inline(always)]
    fn blend_i(self, a: __m256i, b: __m256i, m: __m256i) -> __m256i {
        // SAFETY: as in `zero`.
        unsafe { _mm256_blendv_epi8(a, b, m) }
    }
    #[inline(always)]
    fn mask(self, from: usize, to: usize) -> __m256i {
        // SAFETY: as in `zero`.
        unsafe { first_lanes((to - from).min(8)) }
    }
    #[inline(always)]
    unsafe fn load(self, p: *const f32) -> __m256 {
        // SAFETY: the CPU as in `zero`; the caller makes 8 floats readable.
        unsafe { _mm256_loadu_ps(p) }
    }
    #[inline(always)]
    unsafe fn store(self, p: *mut f32, v: __m256) {
        // SAFETY: the CPU as in `zero`; the caller makes 8 floats writable.
        unsafe { _mm256_storeu_ps(p, v) }
    }
    #[inline(always)]
    unsafe fn store_i(self, p: *mut u32, v: __m256i) {
        // SAFETY: the CPU as in `zero`; the caller makes 8 integers writable.
        unsafe { _mm256_storeu_si256(p.cast(), v) }
    }
    #[inline(always)]
    unsafe fn load_masked(self, p: *const f32, m: __m256i) -> __m256 {
        // SAFETY: the CPU as in `zero`; the caller makes the lanes of `m` readable.
        unsafe { _mm256_maskload_ps(p, m) }
    }
    #[inline(always)]
    unsafe fn store_masked(self, p: *mut f32, m: __m256i, v: __m256) {
        // SAFETY: the CPU as in `zero`; the caller makes the lanes of `m` writable.
        unsafe { _mm256_maskstore_ps(p, m, v) }
    }
}

/// zmm registers: 16 floats, AVX-512F.
#[derive(Clone, Copy)]
pub(crate) struct Zmm(());

impl Zmm {
    /// The lane type.
    ///
    /// # Safety
    /// The CPU has AVX-512F.
    #[inline(always)]
    pub(crate) unsafe fn new() -> Self {
        Zmm(())
    }
}

impl Lanes for Zmm {
    const N: usize = 16;
    const ROW_VALUES_REGS: usize = 8;
    // Thirty-two registers: four units of four keep sixteen chains and their loads in flight.
    const ZEN_UNITS: usize = 4;
    const ZEN_VALUE_REGS: usize = 4;
    type F = __m512;
    type I = __m512i;
    type M = __mmask16;

    #[inline(always)]
    fn zero(self) -> __m512 {
        // SAFETY: a `Zmm` exists only where the CPU has AVX-512F (`Zmm::new`).
        unsafe { _mm512_setzero_ps() }
    }
    #[inline(always)]
    fn splat(self, x: f32) -> __m512 {
        // SAFETY: as in `zero`.
        unsafe { _mm512_set1_ps(x) }
    }
    #[inline(always)]
    fn add(self, a: __m512, b: __m512) -> __m512 {
        // SAFETY: as in `zero`.
        unsafe { _mm512_add_ps(a, b) }
    }
    #[inline(always)]
    fn mul(self, a: __m512, b: __m512) -> __m512 {
        // SAFETY: as in `zero`.
        unsafe { _mm512_mul_ps(a, b) }
    }
    #[inline(always)]
    fn fmadd(self, a: __m512, b: __m512, c: __m512) -> __m512 {
        // SAFETY: as in `zero`.
        unsafe { _mm512_fmadd_ps(a, b, c) }
    }
    #[inline(always)]
    fn min(self, a: __m512, b: __m512) -> __m512 {
        // SAFETY: as in `zero`.
        unsafe { _mm512_min_ps(a, b) }
    }
    #[inline(always)]
    fn max(self, a: __m512, b: __m512) -> __m512 {
        // SAFETY: as in `zero`.
        unsafe { _mm512_max_ps(a, b) }
    }
    #[inline(always)]
    fn gt(self, a: __m512, b: __m512) -> __mmask16 {
        // SAFETY: as in `zero`.
        unsafe { _mm512_cmp_ps_mask::<_CMP_GT_OQ>(a, b) }
    }
    #[inline(always)]
    fn blend(self, a: __m512, b: __m512, m: __mmask16) -> __m512 {
        // SAFETY: as in `zero`.
        unsafe { _mm512_mask_mov_ps(a, m, b) }
    }
    #[inline(always)]
    fn splat_i(self, x: i32) -> __m512i {
        // SAFETY: as in `zero`.
        unsafe { _mm512_set1_epi32(x) }
    }
    #[inline(always)]
    fn blend_i(self, a: __m512i, b: __m512i, m: __mmask16) -> __m512i {
        // SAFETY: as in `zero`.
        unsafe { _mm512_mask_mov_epi32(a, m, b) }
    }
    #[inline(always)]
    fn mask(self, from: usize, to: usize) -> __mmask16 {
        lanes(from, to)
    }
    #[inline(always)]
    unsafe fn load(self, p: *const f32) -> __m512 {
        // SAFETY: the CPU as in `zero`; the caller makes 16 floats readable.
        unsafe { _mm512_loadu_ps(p) }
    }
    #[inline(always)]
    unsafe fn store(self, p: *mut f32, v: __m512) {
        // SAFETY: the CPU as in `zero`; the caller makes 16 floats writable.
        unsafe { _mm512_storeu_ps(p, v) }
    }
    #[inline(always)]
    unsafe fn store_i(self, p: *mut u32, v: __m512i) {
        // SAFETY: the CPU as in `zero`; the caller makes 16 integers writable.
        unsafe { _mm512_storeu_si512(p.cast(), v) }
    }
    #[inline(always)]
    unsafe fn load_masked(self, p: *const f32, m: __mmask16) -> __m512 {
        // SAFETY: the CPU as in `zero`; the caller makes the lanes of `m` readable.
        unsafe { _mm512_maskz_loadu_ps(m, p) }
    }
    #[inline(always)]
    unsafe fn store_masked(self, p: *mut f32, m: __mmask16, v: __m512) {
        // SAFETY: the CPU as in `zero`; the caller makes the lanes of `m` writable.
        unsafe { _mm512_mask_storeu_ps(p, m, v) }
    }
}

/// The `vmaskmovps` mask of the first `r <= 8` lanes.
#[target_feature(enable = "avx2")]
#[inline]
pub(crate) fn first_lanes(r: usize) -> __m256i {
    const ONES_THEN_ZEROS: [i32; 16] = [-1, -1, -1, -1, -1, -1, -1, -1, 0, 0, 0, 0, 0, 0, 0, 0];
    // SAFETY: 8 − r ≤ 8, so eight ints are readable from there.
    unsafe { _mm256_loadu_si256(ONES_THEN_ZEROS.as_ptr().add(8 - r).cast()) }
}

/// The lanes of a 16-float block starting at `i` that lie before `len`.
#[inline]
pub(crate) fn lanes(i: usize, len: usize) -> __mmask16 {
    if len - i >= 16 { 0xffff } else { (1u16 << (len - i)) - 1 }
}
