//! Log-softmax (and, from the kernels, softmax) in the order Marian's CPU code computes them
//! (`tensors/cpu/tensor_operators.cpp` `Softmax`/`LogSoftmax` over `float32x8`/`float32x4`/`float`).
//!
//! A row whose length is a multiple of 8 runs 8 lanes (Bergamot's native build is compiled for
//! AVX), a multiple of 4 runs 4 lanes, anything else is scalar: lane `l` sums the exponentials of
//! elements `l, l+lanes, ...`, the lane sums are added left to right at the end. The SIMD paths use
//! the Cephes `exp_ps`/`log_ps` polynomials, the scalar path libm's `expf`/`logf`.

use reseam_kernels::Kernels;
use reseam_kernels::cephes::{exp_ps, log_ps};
/// Marian's softmax lives with the kernels: its exponentials run on vector lanes there
/// ([`Kernels::marian_softmax`]); this is the specification.
pub use reseam_kernels::softmax::{lanes_for, softmax};

/// `Ops<T>::max` over the row, as `maxReduce` after a lane-wise max (max is exact, so the order
/// does not matter).
#[inline]
fn row_max(x: &[f32]) -> f32 {
    let mut m = x[0];
    for &v in &x[1..] {
        // Ops<float>::max(x, y) = x < y ? y : x
        if m < v {
            m = v;
        }
    }
    m
}

/// Marian's log-softmax of a row is `(x − max) − log_sum` per element; this gives `(max,
/// log_sum)` without writing the row, the 8-lane reductions through the kernels' vector forms
/// (the same bits as the scalar ones). The row is not empty.
pub fn max_and_log_sum(kern: &Kernels, row: &[f32]) -> (f32, f32) {
    match lanes_for(row.len()) {
        8 => {
            let (max, sum) = kern.max_and_exp_sum8(row);
            // The SIMD paths broadcast the sum and take log_ps of it.
            (max, log_ps(sum))
        }
        4 => {
            let max = row_max(row);
            let mut acc = [0f32; 4];
            for chunk in row.chunks_exact(4) {
                for (a, &v) in acc.iter_mut().zip(chunk) {
                    *a += exp_ps(v - max);
                }
            }
            let mut sum = 0f32;
            for a in acc {
                sum += a;
            }
            (max, log_ps(sum))
        }
        _ => {
            let max = row_max(row);
            let mut sum = 0f32;
            for &v in row {
                sum += (v - max).exp();
            }
            (max, sum.ln())
        }
    }
}

/// In-place log-softmax of one row (the scalar kernels; the engine's search uses
/// [`max_and_log_sum`] and never writes the row).
pub fn log_softmax(row: &mut [f32]) {
    if row.is_empty() {
        return;
    }
    let (max, log_sum) = max_and_log_sum(&Kernels::reference(), row);
    for v in row.iter_mut() {
        *v = (*v - max) - log_sum;
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sums_to_one_and_matches_log() {
        for n in [1usize, 3, 4, 7, 8, 12, 17, 64] {
            let x: Vec<f32> = (0..n).map(|i| ((i * 37) % 11) as f32 * 0.7 - 3.0).collect();
            let mut p = x.clone();
            softmax(&mut p);
            let s: f32 = p.iter().sum();
            assert!((s - 1.0).abs() < 1e-5, "{n}: {s}");
            let mut l = x.clone();
            log_softmax(&mut l);
            for (a, b) in l.iter().zip(&p) {
                assert!((a.exp() - b).abs() < 1e-5);
            }
        }
    }

    #[test]
    fn lane_choice() {
        assert_eq!((lanes_for(16), lanes_for(12), lanes_for(13)), (8, 4, 1));
    }
}
