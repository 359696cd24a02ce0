//! Marian's layer normalization, in the order of operations of Bergamot's native build.
//!
//! Marian's `LayerNormalizationImpl` (`tensors/cpu/tensor_operators.cpp`) is compiled with
//! `-ffast-math` for AVX. Read from the `bergamot` 0.4.5 wheel's machine code, it computes, per row
//! of `n` values:
//! - the sum in 8 lanes (lane `l` adds elements `l, l+8, ...` in order), reduced as
//!   `((l0+l4)+(l2+l6)) + ((l1+l5)+(l3+l7))`;
//! - `mean = sum * (1/n)` (a reciprocal, not a division);
//! - the sum of `(x-mean)²` the same way, `var = sqsum * (1/n)`;
//! - `sigma = sqrtf(var + eps)` with `eps = 1e-6` (marian `layers/generic.h` `layerNorm` passes
//!   `1e-6f` for every transformer layer norm, in mainline Marian and the browsermt fork alike);
//! - `y = (gamma * (1/sigma)) * (x - mean) + beta`.
//!
//! [`add_layer_norm`] is the specification; the vector forms compile the same code ([`body`]:
//! each pass one simple loop over independent lanes, never a reordered sum) for AVX2 and
//! AVX-512, where the residual add and the last pass run 8 or 16 outputs per instruction. Rows
//! go eight or four at a time, their sums side by side ([`lane_sums`]).

/// Marian's epsilon for transformer layer norms.
pub const EPS: f32 = 1e-6;

/// `(x − shift)²` with `SQUARE`, else `x`.
#[inline(always)]
fn term<const SQUARE: bool>(v: f32, shift: f32) -> f32 {
    if SQUARE {
        let d = v - shift;
        d * d
    } else {
        v
    }
}

/// How the 8 lane sums of whole blocks of 8 are accumulated: plain code ([`Plain`], the
/// specification) or one ymm register per row ([`Ymm`]). Both add the same terms in the same
/// order per lane.
trait Lanes {
    /// Lane `l` of row `r`: the sum over `i` of `term(rows[r][l + 8·i])` for the whole blocks.
    fn accumulate<const R: usize, const SQUARE: bool>(rows: [&[f32]; R], shift: [f32; R]) -> [[f32; 8]; R];
}

struct Plain;

impl Lanes for Plain {
    #[inline(always)]
    fn accumulate<const R: usize, const SQUARE: bool>(rows: [&[f32]; R], shift: [f32; R]) -> [[f32; 8]; R] {
        let full = rows[0].len() / 8 * 8;
        let mut l = [[0f32; 8]; R];
        let mut i = 0;
        while i < full {
            for (r, l) in l.iter_mut().enumerate() {
                for (a, &v) in l.iter_mut().zip(&rows[r][i..i + 8]) {
                    *a += term::<SQUARE>(v, shift[r]);
                }
            }
            i += 8;
        }
        l
    }
}

/// [`Plain`] with one ymm register of lane sums per row: the compiler splits the plain form's
/// 8 lanes into 2-wide pieces (for the reduction's pairing), this keeps them in one register.
#[cfg(target_arch = "x86_64")]
struct Ymm;

#[cfg(target_arch = "x86_64")]
impl Lanes for Ymm {
    #[inline(always)]
    fn accumulate<const R: usize, const SQUARE: bool>(rows: [&[f32]; R], shift: [f32; R]) -> [[f32; 8]; R] {
        // SAFETY: only the AVX2 and AVX-512 tables call this (their entry points check the CPU).
        unsafe { ymm_accumulate::<R, SQUARE>(rows, shift) }
    }
}

/// # Safety
/// The CPU has AVX.
#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx")]
#[inline]
unsafe fn ymm_accumulate<const R: usize, const SQUARE: bool>(rows: [&[f32]; R], shift: [f32; R]) -> [[f32; 8]; R] {
    use std::arch::x86_64::*;
    let full = rows[0].len() / 8 * 8;
    let shift = shift.map(|s| _mm256_set1_ps(s));
    let mut acc = [_mm256_setzero_ps(); R];
    let mut i = 0;
    while i < full {
        for (r, a) in acc.iter_mut().enumerate() {
            let block = &rows[r][i..i + 8];
            // SAFETY: `block` holds 8 floats.
            let v = unsafe { _mm256_loadu_ps(block.as_ptr()) };
            let t = if SQUARE {
                let d = _mm256_sub_ps(v, shift[r]);
                _mm256_mul_ps(d, d)
            } else {
                v
            };
            *a = _mm256_add_ps(*a, t);
        }
        i += 8;
    }
    let mut l = [[0f32; 8]; R];
    for (l, a) in l.iter_mut().zip(&acc) {
        // SAFETY: `l` holds 8 floats.
        unsafe { _mm256_storeu_ps(l.as_mut_ptr(), *a) };
    }
    l
}

/// The 8-lane sums of `x` (or, with `SQUARE`, of `(x − shift)²`) over `R` rows of one length,
/// each reduced like gcc's vectorized reduction. Each row's sum is its own chain in Marian's
/// order; the rows only run side by side, so that `R` chains of additions are in flight instead
/// of one (a row of 256 values is 32 dependent additions per lane).
#[inline(always)]
fn lane_sums<L: Lanes, const R: usize, const SQUARE: bool>(rows: [&[f32]; R], shift: [f32; R]) -> [f32; R] {
    let full = rows[0].len() / 8 * 8;
    let l = L::accumulate::<R, SQUARE>(rows, shift);
    let mut out = [0f32; R];
    for (r, (o, l)) in out.iter_mut().zip(&l).enumerate() {
        let f = |v: f32| term::<SQUARE>(v, shift[r]);
        let h = [l[0] + l[4], l[1] + l[5], l[2] + l[6], l[3] + l[7]];
        let mut s = (h[0] + h[2]) + (h[1] + h[3]);
        // gcc's epilogue: one 4-wide step, then scalars (models have rows of a multiple of 8,
        // so this only matters for odd test shapes).
        let mut rest = &rows[r][full..];
        if rest.len() >= 4 {
            let v = [f(rest[0]), f(rest[1]), f(rest[2]), f(rest[3])];
            s += (v[0] + v[2]) + (v[1] + v[3]);
            rest = &rest[4..];
        }
        for &v in rest {
            s += f(v);
        }
        *o = s;
    }
    out
}

/// Normalizes `R` rows of `n = gamma.len()` values at once (rows of `x` from `first`).
#[inline(always)]
fn rows<L: Lanes, const R: usize>(x: &[f32], first: usize, gamma: &[f32], beta: &[f32], out: &mut [f32]) {
    let n = gamma.len();
    let rn = 1.0f32 / n as f32;
    let row: [&[f32]; R] = std::array::from_fn(|r| &x[(first + r) * n..(first + r + 1) * n]);
    let mean = lane_sums::<L, R, false>(row, [0.0; R]).map(|s| s * rn);
    let var = lane_sums::<L, R, true>(row, mean).map(|s| s * rn);
    for r in 0..R {
        let sigma = (var[r] + EPS).sqrt();
        let rs = 1.0f32 / sigma;
        let o = &mut out[(first + r) * n..(first + r + 1) * n];
        for (((o, &g), &v), &b) in o.iter_mut().zip(gamma).zip(row[r]).zip(beta) {
            *o = (g * rs) * (v - mean[r]) + b;
        }
    }
}

/// Normalizes each row of `x` (rows of `gamma.len()` values) into `out`, eight or four rows at
/// a time (a vector add has a latency of 3 or 4 cycles and two of them issue per cycle: eight
/// chains keep the adders busy, four leave half of the slots empty).
#[inline(always)]
fn body<L: Lanes>(x: &[f32], gamma: &[f32], beta: &[f32], out: &mut [f32]) {
    let count = x.len() / gamma.len();
    let mut first = 0;
    while first + 8 <= count {
        rows::<L, 8>(x, first, gamma, beta, out);
        first += 8;
    }
    while first + 4 <= count {
        rows::<L, 4>(x, first, gamma, beta, out);
        first += 4;
    }
    while first < count {
        rows::<L, 1>(x, first, gamma, beta, out);
        first += 1;
    }
}

/// `a = layer_norm(a + b)` over `R` rows, their sum kept in `scratch`.
#[inline(always)]
fn add_rows<L: Lanes, const R: usize>(a: &mut [f32], b: &[f32], gamma: &[f32], beta: &[f32], scratch: &mut Vec<f32>) {
    scratch.clear();
    scratch.extend(a.iter().zip(b).map(|(x, y)| x + y));
    rows::<L, R>(scratch, 0, gamma, beta, a);
}

/// `a = layer_norm(a + b)`, eight, four or one row at a time, each group's sum kept in
/// `scratch`: the group's passes then read it from L1, where the sum of every row first (64
/// rows of 256 values are 64 KiB) sent each pass to L2.
#[inline(always)]
fn add_body<L: Lanes>(a: &mut [f32], b: &[f32], gamma: &[f32], beta: &[f32], scratch: &mut Vec<f32>) {
    let n = gamma.len();
    let count = a.len() / n;
    let mut first = 0;
    while first < count {
        let r = if first + 8 <= count {
            8
        } else if first + 4 <= count {
            4
        } else {
            1
        };
        let (a, b) = (&mut a[first * n..(first + r) * n], &b[first * n..(first + r) * n]);
        match r {
            8 => add_rows::<L, 8>(a, b, gamma, beta, scratch),
            4 => add_rows::<L, 4>(a, b, gamma, beta, scratch),
            _ => add_rows::<L, 1>(a, b, gamma, beta, scratch),
        }
        first += r;
    }
}

/// Checks what every form relies on: whole rows, and gamma, beta as long as a row.
pub(crate) fn check(a: &[f32], b: &[f32], gamma: &[f32], beta: &[f32]) {
    let n = gamma.len();
    assert!(n > 0 && beta.len() == n, "layer norm: gamma {n} and beta {} values", beta.len());
    assert!(
        a.len().is_multiple_of(n) && b.len() >= a.len(),
        "layer norm: {} and {} values in rows of {n}",
        a.len(),
        b.len()
    );
}

/// Normalizes each row of `x` into `out` (the specification of the layer norm alone).
pub fn layer_norm(x: &[f32], gamma: &[f32], beta: &[f32], out: &mut [f32]) {
    body::<Plain>(x, gamma, beta, out);
}

/// `a = layer_norm(a + b)` for a residual connection, in rows of `gamma.len()` values: the
/// specification.
pub fn add_layer_norm(a: &mut [f32], b: &[f32], gamma: &[f32], beta: &[f32], scratch: &mut Vec<f32>) {
    check(a, b, gamma, beta);
    add_body::<Plain>(a, b, gamma, beta, scratch);
}

/// The specification as a table entry.
pub(crate) unsafe fn add_layer_norm_scalar(
    a: &mut [f32],
    b: &[f32],
    gamma: &[f32],
    beta: &[f32],
    scratch: &mut Vec<f32>,
) {
    add_body::<Plain>(a, b, gamma, beta, scratch);
}

/// [`add_layer_norm`] compiled for AVX2.
///
/// # Safety
/// The CPU has AVX2 and FMA (FMA is not used: Rust never fuses on its own).
#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx2,fma")]
pub(crate) unsafe fn add_layer_norm_ymm(a: &mut [f32], b: &[f32], gamma: &[f32], beta: &[f32], scratch: &mut Vec<f32>) {
    add_body::<Ymm>(a, b, gamma, beta, scratch);
}

/// [`add_layer_norm`] compiled for AVX-512.
///
/// # Safety
/// The CPU has AVX-512F, AVX2 and FMA.
#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx512f,avx2,fma")]
pub(crate) unsafe fn add_layer_norm_zmm(a: &mut [f32], b: &[f32], gamma: &[f32], beta: &[f32], scratch: &mut Vec<f32>) {
    add_body::<Ymm>(a, b, gamma, beta, scratch);
}
