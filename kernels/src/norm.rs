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
//! go four at a time, their sums side by side ([`lane_sums`]).

/// Marian's epsilon for transformer layer norms.
pub const EPS: f32 = 1e-6;

/// The 8-lane sums of `x` (or, with `SQUARE`, of `(x − shift)²`) over `R` rows of one length,
/// each reduced like gcc's vectorized reduction. Each row's sum is its own chain in Marian's
/// order; the rows only run side by side, so that `R` chains of additions are in flight instead
/// of one (a row of 256 values is 32 dependent additions per lane).
#[inline(always)]
fn lane_sums<const R: usize, const SQUARE: bool>(rows: [&[f32]; R], shift: [f32; R]) -> [f32; R] {
    let n = rows[0].len();
    let f = |r: usize, v: f32| {
        if SQUARE {
            let d = v - shift[r];
            d * d
        } else {
            v
        }
    };
    let mut l = [[0f32; 8]; R];
    let full = n / 8 * 8;
    let mut i = 0;
    while i < full {
        for (r, l) in l.iter_mut().enumerate() {
            let c = &rows[r][i..i + 8];
            for (a, &v) in l.iter_mut().zip(c) {
                *a += f(r, v);
            }
        }
        i += 8;
    }
    let mut out = [0f32; R];
    for (r, (o, l)) in out.iter_mut().zip(&l).enumerate() {
        let h = [l[0] + l[4], l[1] + l[5], l[2] + l[6], l[3] + l[7]];
        let mut s = (h[0] + h[2]) + (h[1] + h[3]);
        // gcc's epilogue: one 4-wide step, then scalars (models have rows of a multiple of 8,
        // so this only matters for odd test shapes).
        let mut rest = &rows[r][full..];
        if rest.len() >= 4 {
            let v = [f(r, rest[0]), f(r, rest[1]), f(r, rest[2]), f(r, rest[3])];
            s += (v[0] + v[2]) + (v[1] + v[3]);
            rest = &rest[4..];
        }
        for &v in rest {
            s += f(r, v);
        }
        *o = s;
    }
    out
}

/// Normalizes `R` rows of `n = gamma.len()` values at once (rows of `x` from `first`).
#[inline(always)]
fn rows<const R: usize>(x: &[f32], first: usize, gamma: &[f32], beta: &[f32], out: &mut [f32]) {
    let n = gamma.len();
    let rn = 1.0f32 / n as f32;
    let row: [&[f32]; R] = std::array::from_fn(|r| &x[(first + r) * n..(first + r + 1) * n]);
    let mean = lane_sums::<R, false>(row, [0.0; R]).map(|s| s * rn);
    let var = lane_sums::<R, true>(row, mean).map(|s| s * rn);
    for r in 0..R {
        let sigma = (var[r] + EPS).sqrt();
        let rs = 1.0f32 / sigma;
        let o = &mut out[(first + r) * n..(first + r + 1) * n];
        for (((o, &g), &v), &b) in o.iter_mut().zip(gamma).zip(row[r]).zip(beta) {
            *o = (g * rs) * (v - mean[r]) + b;
        }
    }
}

/// Normalizes each row of `x` (rows of `gamma.len()` values) into `out`, four rows at a time.
#[inline(always)]
fn body(x: &[f32], gamma: &[f32], beta: &[f32], out: &mut [f32]) {
    let count = x.len() / gamma.len();
    let mut first = 0;
    while first + 4 <= count {
        rows::<4>(x, first, gamma, beta, out);
        first += 4;
    }
    while first < count {
        rows::<1>(x, first, gamma, beta, out);
        first += 1;
    }
}

/// `a = layer_norm(a + b)`, the sum kept in `scratch`.
#[inline(always)]
fn add_body(a: &mut [f32], b: &[f32], gamma: &[f32], beta: &[f32], scratch: &mut Vec<f32>) {
    scratch.clear();
    scratch.extend(a.iter().zip(b).map(|(x, y)| x + y));
    body(scratch, gamma, beta, a);
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
    body(x, gamma, beta, out);
}

/// `a = layer_norm(a + b)` for a residual connection, in rows of `gamma.len()` values: the
/// specification.
pub fn add_layer_norm(a: &mut [f32], b: &[f32], gamma: &[f32], beta: &[f32], scratch: &mut Vec<f32>) {
    check(a, b, gamma, beta);
    add_body(a, b, gamma, beta, scratch);
}

/// The specification as a table entry.
pub(crate) unsafe fn add_layer_norm_scalar(
    a: &mut [f32],
    b: &[f32],
    gamma: &[f32],
    beta: &[f32],
    scratch: &mut Vec<f32>,
) {
    add_body(a, b, gamma, beta, scratch);
}

/// [`add_layer_norm`] compiled for AVX2.
///
/// # Safety
/// The CPU has AVX2 and FMA (FMA is not used: Rust never fuses on its own).
#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx2,fma")]
pub(crate) unsafe fn add_layer_norm_ymm(a: &mut [f32], b: &[f32], gamma: &[f32], beta: &[f32], scratch: &mut Vec<f32>) {
    add_body(a, b, gamma, beta, scratch);
}

/// [`add_layer_norm`] compiled for AVX-512.
///
/// # Safety
/// The CPU has AVX-512F, AVX2 and FMA.
#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx512f,avx2,fma")]
pub(crate) unsafe fn add_layer_norm_zmm(a: &mut [f32], b: &[f32], gamma: &[f32], beta: &[f32], scratch: &mut Vec<f32>) {
    add_body(a, b, gamma, beta, scratch);
}
