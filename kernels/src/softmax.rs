//! Marian's softmax of one row (`tensors/cpu/tensor_operators.cpp` `Softmax` over
//! `float32x8`/`float32x4`/`float`), as attention runs it on every query's scores.
//!
//! A row whose length is a multiple of 8 runs 8 lanes (Bergamot's native build is compiled for
//! AVX), a multiple of 4 runs 4 lanes, anything else is scalar: lane `l` sums the exponentials of
//! elements `l, l+lanes, ...`, the lane sums are added left to right at the end. The SIMD paths use
//! the Cephes `exp_ps` polynomial ([`crate::cephes::exp_ps`]), the scalar path libm's `expf`.
//!
//! [`softmax`] is the specification. The vector forms run the same code ([`body`], one simple
//! loop per pass, so each pass vectorizes at the width it is compiled for) with
//! [`crate::expf::lane`] in place of libm's `expf` where that is the same function
//! ([`crate::expf::matches_libm`]): the exponentials are independent, so lanes take 16 (8) of
//! them at once, and only the sums keep Marian's order.

use crate::cephes::exp_ps;

/// How many lanes Marian uses for a row of `n` values.
#[inline]
pub fn lanes_for(n: usize) -> usize {
    if n.is_multiple_of(8) {
        8
    } else if n.is_multiple_of(4) {
        4
    } else {
        1
    }
}

/// In-place softmax of one row: the specification (libm's `expf` on the scalar path).
pub fn softmax(row: &mut [f32]) {
    body(row, f32::exp, false);
}

/// The passes of [`softmax`] with the scalar path's exponential `exp1`.
///
/// The maximum runs in 16 lanes of `m < v ? v : m` from the first value and then over the lanes
/// in order; Marian's one running maximum gives the same value: a NaN first value stays (every
/// comparison with it is false), later NaNs are skipped, and of equal values only zeros have
/// two encodings, whose difference no later step sees (`x − ±0` is `x` for `x ≠ 0`, and both
/// exponentials give 1 for ±0).
#[inline(always)]
fn body(row: &mut [f32], exp1: impl Fn(f32) -> f32, pad1: bool) {
    let Some(&first) = row.first() else { return };
    let mut lanes = [first; 16];
    let chunks = row.chunks_exact(16);
    let tail = chunks.remainder();
    for c in chunks {
        for (m, &v) in lanes.iter_mut().zip(c) {
            *m = if *m < v { v } else { *m };
        }
    }
    let mut max = first;
    for &v in lanes.iter().chain(tail) {
        if max < v {
            max = v;
        }
    }
    let width = lanes_for(row.len());
    if width == 1 {
        exp_pass(row, max, exp1, pad1);
    } else {
        exp_pass(row, max, exp_ps, true);
    }
    let mut acc = [0f32; 8];
    match width {
        8 => lane_sums::<8>(row, &mut acc),
        4 => lane_sums::<4>(row, &mut acc),
        _ => {
            for &e in row.iter() {
                acc[0] += e;
            }
        }
    }
    let mut sum = 0f32;
    for &a in &acc[..width] {
        sum += a;
    }
    for v in row.iter_mut() {
        *v /= sum;
    }
}

/// `v = exp(v − max)` over the row, 16 values at a time; with `pad`, the last few in a padded
/// block too, so that a short row (most attention rows are) runs no scalar tail (for a vector
/// `exp`; a call per value had better not be made for the padding).
#[inline(always)]
fn exp_pass(row: &mut [f32], max: f32, exp: impl Fn(f32) -> f32, pad: bool) {
    let mut chunks = row.chunks_exact_mut(16);
    for c in &mut chunks {
        for v in c.iter_mut() {
            *v = exp(*v - max);
        }
    }
    let rest = chunks.into_remainder();
    if !pad {
        for v in rest.iter_mut() {
            *v = exp(*v - max);
        }
    } else if !rest.is_empty() {
        let mut block = [max; 16];
        block[..rest.len()].copy_from_slice(rest);
        for v in block.iter_mut() {
            *v = exp(*v - max);
        }
        rest.copy_from_slice(&block[..rest.len()]);
    }
}

/// `acc[l] += row[l + W·i]` in order over `i`.
#[inline(always)]
fn lane_sums<const W: usize>(row: &[f32], acc: &mut [f32; 8]) {
    let mut a = [0f32; W];
    for c in row.chunks_exact(W) {
        for (a, &e) in a.iter_mut().zip(c) {
            *a += e;
        }
    }
    acc[..W].copy_from_slice(&a);
}

/// Rows shorter than this run the specification as compiled for the baseline: a padded block
/// of 16 vector exponentials cost more than 7 calls to libm (AMX Xeon, rows of 7: 52 against
/// 42 ns in ymm code), and calls to libm from the vector code cost more than from the baseline
/// (68 ns in zmm code).
#[cfg(target_arch = "x86_64")]
const SHORT: usize = 8;

/// [`softmax`] compiled for AVX2 and FMA; with `GLIBC`, glibc's `expf` on 8 lanes in place of
/// libm's.
///
/// # Safety
/// The CPU has AVX2 and FMA.
#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx2,fma")]
pub(crate) unsafe fn softmax_ymm<const GLIBC: bool>(row: &mut [f32]) {
    // SAFETY: the CPU has AVX2 and FMA (this function's contract).
    unsafe { if row.len() < SHORT { softmax(row) } else { ymm_body::<GLIBC>(row) } }
}

/// [`body`] in ymm code with glibc's `expf` on vector lanes (`LANES`) or libm's; a function of
/// its own for each, so that neither slows the other (one function holding both ran the
/// 8-lane rows of 64 values at 100 ns instead of 65).
///
/// # Safety
/// The CPU has AVX2 and FMA.
#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx2,fma")]
#[inline(never)]
unsafe fn ymm_body<const LANES: bool>(row: &mut [f32]) {
    if LANES { body(row, crate::expf::lane, true) } else { body(row, f32::exp, false) }
}

/// As [`ymm_body`] in zmm code.
///
/// # Safety
/// The CPU has AVX-512F, AVX2 and FMA.
#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx512f,avx2,fma")]
#[inline(never)]
unsafe fn zmm_body<const LANES: bool>(row: &mut [f32]) {
    if LANES { body(row, crate::expf::lane, true) } else { body(row, f32::exp, false) }
}

/// [`softmax`] compiled for AVX-512; with `GLIBC`, glibc's `expf` on 16 lanes in place of libm's.
///
/// # Safety
/// The CPU has AVX-512F, AVX2 and FMA.
#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx512f,avx2,fma")]
pub(crate) unsafe fn softmax_zmm<const GLIBC: bool>(row: &mut [f32]) {
    if row.len() < SHORT {
        softmax(row);
    } else {
        // SAFETY: the CPU has AVX-512F, AVX2 and FMA (this function's contract).
        unsafe { zmm_body::<GLIBC>(row) }
    }
}

/// [`crate::expf::in_place`] compiled for AVX2 and FMA.
///
/// # Safety
/// The CPU has AVX2 and FMA.
#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx2,fma")]
pub(crate) unsafe fn expf_ymm(x: &mut [f32]) {
    crate::expf::in_place(x);
}

/// [`crate::expf::in_place`] compiled for AVX-512.
///
/// # Safety
/// The CPU has AVX-512F, AVX2 and FMA.
#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx512f,avx2,fma")]
pub(crate) unsafe fn expf_zmm(x: &mut [f32]) {
    crate::expf::in_place(x);
}

/// The specification as a table entry.
pub(crate) unsafe fn softmax_scalar(row: &mut [f32]) {
    softmax(row);
}

/// libm's `expf` over a slice, in place (the reference's exponential, and any table's where
/// [`crate::expf::matches_libm`] fails).
pub(crate) unsafe fn expf_libm(x: &mut [f32]) {
    for v in x.iter_mut() {
        *v = v.exp();
    }
}
