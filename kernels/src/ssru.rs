//! The SSRU cell of Marian's decoder (`rnn/cells.h` `SSRU`), one step over a row:
//! `c = σ(f)·c' + (1 − σ(f))·x̃`, output `relu(c)`, with Marian's SIMD sigmoid
//! ([`crate::cephes::sigmoid_ps`]).
//!
//! [`ssru_row`] is the specification; the vector forms compile the same loop (its elements are
//! independent, and Rust never fuses a multiply and an add) for ymm and zmm registers, where
//! the baseline build ran it 4 lanes at a time.

use crate::cephes::sigmoid_ps;

/// One SSRU step: `c[i] = s·c[i] + (1 − s)·xw[i]` with `s = sigmoid_ps(f[i])`, and
/// `h[i] = max(c[i], 0)` (a NaN cell gives 0), over `c.len()` values.
#[inline(always)]
pub fn ssru_row(c: &mut [f32], xw: &[f32], f: &[f32], h: &mut [f32]) {
    let n = c.len();
    let (xw, f, h) = (&xw[..n], &f[..n], &mut h[..n]);
    for i in 0..n {
        let s = sigmoid_ps(f[i]);
        let next = s * c[i] + (1.0 - s) * xw[i];
        c[i] = next;
        h[i] = if next > 0.0 { next } else { 0.0 };
    }
}

/// The specification as a table entry.
pub(crate) unsafe fn ssru_scalar(c: &mut [f32], xw: &[f32], f: &[f32], h: &mut [f32]) {
    ssru_row(c, xw, f, h);
}

/// [`ssru_row`] compiled for AVX2.
///
/// # Safety
/// The CPU has AVX2 and FMA (FMA is not used: Rust never fuses on its own).
#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx2,fma")]
pub(crate) unsafe fn ssru_ymm(c: &mut [f32], xw: &[f32], f: &[f32], h: &mut [f32]) {
    ssru_row(c, xw, f, h);
}

/// [`ssru_row`] compiled for AVX-512.
///
/// # Safety
/// The CPU has AVX-512F, AVX2 and FMA.
#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx512f,avx2,fma")]
pub(crate) unsafe fn ssru_zmm(c: &mut [f32], xw: &[f32], f: &[f32], h: &mut [f32]) {
    ssru_row(c, xw, f, h);
}
