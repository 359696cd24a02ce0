//! Marian's softmax of one row (`tensors/cpu/tensor_operators.cpp` `Softmax` over
//! `float32x8`/`float32x4`/`float`), as attention runs it on every query's scores.
//!
//! A row whose length is a multiple of 8 runs 8 lanes (Bergamot's native build is compiled for
//! AVX), a multiple of 4 runs 4 lanes, anything else is scalar: lane `l` sums the exponentials of
//! elements `l, l+lanes, ...`, the lane sums are added left to right at the end. The SIMD paths use
//! the Cephes `exp_ps` polynomial ([`crate::cephes::exp_ps`]), the scalar path libm's `expf`.
//!
//! [`softmax`] is the specification, [`softmax_rows`] the same on several rows. The vector forms
//! run the same passes ([`rows_body`], one simple loop per pass, so each pass vectorizes at the
//! width it is compiled for) with [`crate::expf::lane`] in place of libm's `expf` where that is
//! the same function ([`crate::expf::matches_libm`]): the exponentials are independent, so lanes
//! take 16 (8) of them at once, and only the sums keep Marian's order, each row's its own, so
//! the sums of several rows run side by side.

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
    if row.is_empty() {
        return;
    }
    let max = running_max(row);
    let width = lanes_for(row.len());
    if width == 1 {
        exp_pass(row, max, f32::exp, false);
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

/// In-place softmax of every row of `n` values in `buf`: [`softmax`] on each row, the
/// specification of [`Kernels::marian_softmax_rows`](crate::Kernels::marian_softmax_rows).
pub fn softmax_rows(buf: &mut [f32], n: usize) {
    if n > 0 {
        for row in buf.chunks_exact_mut(n) {
            softmax(row);
        }
    }
}

/// Marian's running maximum of a row: `max = first; if max < v { max = v }` over the row (the
/// specification's).
#[inline(always)]
fn running_max(row: &[f32]) -> f32 {
    let mut max = row[0];
    for &v in row {
        if max < v {
            max = v;
        }
    }
    max
}

/// [`running_max`] without its chain of dependent comparisons: 16 lanes of `m < v ? v : m` from
/// the first value (the last values in a block padded with it), then the lanes halved. The value
/// is the same: a NaN first value stays in every lane and comes out (every comparison with it is
/// false); otherwise no lane is NaN (a lane takes only values it is below), later NaNs are
/// skipped, so each lane is the maximum of its values and any order of the halving gives the
/// largest; of equal values only zeros have two encodings, whose difference no later step sees
/// (`x − ±0` is `x` for `x ≠ 0`, and both exponentials give 1 for ±0). The padding changes no
/// lane (every lane is at least the first value).
#[cfg(target_arch = "x86_64")]
#[inline(always)]
fn row_max(row: &[f32]) -> f32 {
    let first = row[0];
    let mut lanes = [first; 16];
    let fold = |lanes: &mut [f32; 16], c: &[f32]| {
        for (m, &v) in lanes.iter_mut().zip(c) {
            *m = if *m < v { v } else { *m };
        }
    };
    let chunks = row.chunks_exact(16);
    let mut last = [first; 16];
    for (l, &v) in last.iter_mut().zip(chunks.remainder()) {
        *l = v;
    }
    for c in chunks {
        fold(&mut lanes, c);
    }
    fold(&mut lanes, &last);
    let mut h = 8;
    while h > 0 {
        for i in 0..h {
            lanes[i] = if lanes[i] < lanes[i + h] { lanes[i + h] } else { lanes[i] };
        }
        h /= 2;
    }
    lanes[0]
}

/// [`softmax_rows`] with the rows side by side: the maximum of each row, then the exponentials
/// of the whole buffer in one pass (`exp(x − max)` of each value, as [`softmax`] computes it), then
/// the sums of up to [`SIDE`] rows at once, each row's lane sums a chain of its own in Marian's
/// order (a row of the decoder's attention has 1 lane, one dependent add per value: several rows
/// side by side keep the adder busy), then the divisions.
///
/// `one_lane` takes the exponentials of the whole buffer when its rows have 1 lane
/// ([`glibc_one_lane`] or [`libm_one_lane`]); wider rows take [`exp_ps`].
#[cfg(target_arch = "x86_64")]
#[inline(always)]
fn rows_body(buf: &mut [f32], n: usize, one_lane: impl Fn(&mut [f32])) {
    for row in buf.chunks_exact_mut(n) {
        let max = row_max(row);
        for v in row.iter_mut() {
            *v -= max;
        }
    }
    let width = lanes_for(n);
    if width == 1 {
        one_lane(buf);
    } else {
        exp_pass(buf, 0.0, exp_ps, true);
    }
    let mut groups = buf.chunks_exact_mut(SIDE * n);
    for g in &mut groups {
        side_by_side::<SIDE>(g, n, width);
    }
    for row in groups.into_remainder().chunks_exact_mut(n) {
        side_by_side::<1>(row, n, width);
    }
}

/// How many rows [`rows_body`] sums side by side (the heads of a query in the tiny and base
/// models).
#[cfg(target_arch = "x86_64")]
const SIDE: usize = 8;

/// The sums and divisions of `G` rows of `n` exponentials, each row in Marian's lane order.
#[cfg(target_arch = "x86_64")]
#[inline(always)]
fn side_by_side<const G: usize>(g: &mut [f32], n: usize, width: usize) {
    let rows: [&[f32]; G] = std::array::from_fn(|r| &g[r * n..][..n]);
    let sums: [f32; G] = match width {
        8 => lane_sums_side::<G, 8>(&rows, n),
        4 => lane_sums_side::<G, 4>(&rows, n),
        _ => {
            let mut acc = [0f32; G];
            for j in 0..n {
                for (a, row) in acc.iter_mut().zip(&rows) {
                    *a += row[j];
                }
            }
            acc.map(|a| 0f32 + a)
        }
    };
    for (row, sum) in g.chunks_exact_mut(n).zip(sums) {
        for v in row.iter_mut() {
            *v /= sum;
        }
    }
}

/// For each of `G` rows, [`lane_sums`] in `W` lanes then the lanes added left to right from 0.
#[cfg(target_arch = "x86_64")]
#[inline(always)]
fn lane_sums_side<const G: usize, const W: usize>(rows: &[&[f32]; G], n: usize) -> [f32; G] {
    let mut acc = [[0f32; W]; G];
    for i in (0..n).step_by(W) {
        for (a, row) in acc.iter_mut().zip(rows) {
            for (a, &e) in a.iter_mut().zip(&row[i..i + W]) {
                *a += e;
            }
        }
    }
    acc.map(|a| {
        let mut sum = 0f32;
        for l in a {
            sum += l;
        }
        sum
    })
}

/// glibc's `expf` over rows whose maxima are subtracted, 16 values at a time: padding with 0
/// is padding with the maximum.
#[cfg(target_arch = "x86_64")]
#[inline(always)]
fn glibc_one_lane(buf: &mut [f32]) {
    in_blocks(buf, 0.0, crate::expf::lanes16);
}

/// libm's `expf` over rows whose maxima are subtracted, value by value.
#[cfg(target_arch = "x86_64")]
#[inline(always)]
fn libm_one_lane(buf: &mut [f32]) {
    exp_pass(buf, 0.0, f32::exp, false);
}

/// `v = exp(v − max)` over the row; with `pad` (a vector `exp`; a call per value had better not
/// be made for the padding), 16 values at a time ([`in_blocks`]), the last few too, so that a
/// short row (most attention rows are) runs no scalar tail.
#[inline(always)]
fn exp_pass(row: &mut [f32], max: f32, exp: impl Fn(f32) -> f32, pad: bool) {
    if pad {
        in_blocks(row, max, |c| {
            for v in c.iter_mut() {
                *v = exp(*v - max);
            }
        });
    } else {
        for v in row.iter_mut() {
            *v = exp(*v - max);
        }
    }
}

/// `f` on every 16 values of `row` in place, the last few from a copy of the last 16 taken
/// before the pass (each value is computed on its own, so a block overlapping the one before
/// gives the same; a padded block there was a call to `memset` per call), or, in a row shorter
/// than 16, in a block padded with `fill`.
#[inline(always)]
fn in_blocks(row: &mut [f32], fill: f32, f: impl Fn(&mut [f32; 16])) {
    let n = row.len();
    let tail = (n >= 16 && !n.is_multiple_of(16)).then(|| {
        let mut last: [f32; 16] = row[n - 16..].try_into().expect("16 values");
        f(&mut last);
        last
    });
    let mut chunks = row.chunks_exact_mut(16);
    for c in &mut chunks {
        f(c.try_into().expect("16 values"));
    }
    let rest = chunks.into_remainder();
    if let Some(last) = tail {
        rest.copy_from_slice(&last[16 - rest.len()..]);
    } else if !rest.is_empty() {
        let mut block = [fill; 16];
        block[..rest.len()].copy_from_slice(rest);
        f(&mut block);
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

/// Calls of fewer values than this (all their rows together) run the specification as compiled
/// for the baseline: a padded block of 16 vector exponentials cost more than 7 calls to libm
/// (AMX Xeon, rows of 7: 52 against 42 ns in ymm code), and calls to libm from the vector code
/// cost more than from the baseline (68 ns in zmm code).
#[cfg(target_arch = "x86_64")]
const SHORT: usize = 8;

/// [`softmax_rows`] compiled for AVX2 and FMA; with `GLIBC`, glibc's `expf` on 8 lanes in place
/// of libm's.
///
/// # Safety
/// The CPU has AVX2 and FMA; `n > 0` divides `buf.len()`.
#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx2,fma")]
pub(crate) unsafe fn softmax_ymm<const GLIBC: bool>(buf: &mut [f32], n: usize) {
    // SAFETY: the CPU has AVX2 and FMA (this function's contract).
    unsafe { if buf.len() < SHORT { softmax_rows(buf, n) } else { ymm_rows::<GLIBC>(buf, n) } }
}

/// [`rows_body`] in ymm code with glibc's `expf` on vector lanes (`LANES`) or libm's; a function
/// of its own for each, so that neither slows the other (one function holding both ran the
/// 8-lane rows of 64 values at 100 ns instead of 65).
///
/// # Safety
/// The CPU has AVX2 and FMA; `n > 0`.
#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx2,fma")]
#[inline(never)]
unsafe fn ymm_rows<const LANES: bool>(buf: &mut [f32], n: usize) {
    if LANES { rows_body(buf, n, glibc_one_lane) } else { rows_body(buf, n, libm_one_lane) }
}

/// As [`ymm_rows`] in zmm code.
///
/// # Safety
/// The CPU has AVX-512F, AVX2 and FMA; `n > 0`.
#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx512f,avx2,fma")]
#[inline(never)]
unsafe fn zmm_rows<const LANES: bool>(buf: &mut [f32], n: usize) {
    if LANES { rows_body(buf, n, glibc_one_lane) } else { rows_body(buf, n, libm_one_lane) }
}

/// [`softmax_rows`] compiled for AVX-512; with `GLIBC`, glibc's `expf` on 16 lanes in place of
/// libm's.
///
/// # Safety
/// The CPU has AVX-512F, AVX2 and FMA; `n > 0` divides `buf.len()`.
#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx512f,avx2,fma")]
pub(crate) unsafe fn softmax_zmm<const GLIBC: bool>(buf: &mut [f32], n: usize) {
    // SAFETY: the CPU has AVX-512F, AVX2 and FMA (this function's contract).
    unsafe { if buf.len() < SHORT { softmax_rows(buf, n) } else { zmm_rows::<GLIBC>(buf, n) } }
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
pub(crate) unsafe fn softmax_scalar(buf: &mut [f32], n: usize) {
    softmax_rows(buf, n);
}

/// libm's `expf` over a slice, in place (the reference's exponential, and any table's where
/// [`crate::expf::matches_libm`] fails).
pub(crate) unsafe fn expf_libm(x: &mut [f32]) {
    for v in x.iter_mut() {
        *v = v.exp();
    }
}
