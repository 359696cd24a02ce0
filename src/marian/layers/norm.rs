//! Layer normalization, in the order of operations of Bergamot's native build.
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

/// Marian's epsilon for transformer layer norms.
pub const EPS: f32 = 1e-6;

/// The 8-lane sum of `f(x)` over a row, reduced like gcc's vectorized reduction.
#[inline]
fn lane_sum(x: &[f32], f: impl Fn(f32) -> f32) -> f32 {
    let mut l = [0f32; 8];
    let chunks = x.chunks_exact(8);
    let tail = chunks.remainder();
    for c in chunks {
        for (a, &v) in l.iter_mut().zip(c) {
            *a += f(v);
        }
    }
    let h = [l[0] + l[4], l[1] + l[5], l[2] + l[6], l[3] + l[7]];
    let mut s = (h[0] + h[2]) + (h[1] + h[3]);
    // gcc's epilogue: one 4-wide step, then scalars (models have rows of a multiple of 8, so this
    // only matters for odd test shapes).
    let mut rest = tail;
    if rest.len() >= 4 {
        let v: Vec<f32> = rest[..4].iter().map(|&v| f(v)).collect();
        s += (v[0] + v[2]) + (v[1] + v[3]);
        rest = &rest[4..];
    }
    for &v in rest {
        s += f(v);
    }
    s
}

/// Normalizes each row of `x` (rows of `gamma.len()` values) into `out`.
pub fn layer_norm(x: &[f32], gamma: &[f32], beta: &[f32], out: &mut [f32]) {
    let n = gamma.len();
    let rn = 1.0f32 / n as f32;
    for (row, o) in x.chunks_exact(n).zip(out.chunks_exact_mut(n)) {
        let mean = lane_sum(row, |v| v) * rn;
        let var = lane_sum(row, |v| {
            let d = v - mean;
            d * d
        }) * rn;
        let sigma = (var + EPS).sqrt();
        let rs = 1.0f32 / sigma;
        for i in 0..n {
            o[i] = (gamma[i] * rs) * (row[i] - mean) + beta[i];
        }
    }
}

/// `layer_norm(a + b)` for a residual connection, in place in `a`.
pub fn add_layer_norm(a: &mut [f32], b: &[f32], gamma: &[f32], beta: &[f32], scratch: &mut Vec<f32>) {
    let _t = crate::profile::time(crate::profile::Kind::LayerNorm);
    scratch.clear();
    scratch.extend(a.iter().zip(b).map(|(x, y)| x + y));
    layer_norm(scratch, gamma, beta, a);
}

#[cfg(test)]
mod tests {
    use super::*;

    fn sample(n: usize, seed: usize, div: f32) -> Vec<f32> {
        (0..n).map(|i| ((i * 37 + seed * 11) % 101) as f32 - 50.0).map(|v| v / div).collect()
    }

    /// Output of `marian::cpu::LayerNormalizationImpl<1,1,true>` exported by the bergamot 0.4.5
    /// wheel, called on the same inputs (FNV-1a of all 768 result bits, and the first four).
    /// The two were also compared on 51,200 random values without a difference.
    #[test]
    fn equals_bergamot_bit_for_bit() {
        let x = sample(3 * 256, 5, 7.0);
        let g: Vec<f32> = sample(256, 6, 90.0).iter().map(|v| v + 1.0).collect();
        let b = sample(256, 7, 300.0);
        let mut out = vec![0f32; x.len()];
        layer_norm(&x, &g, &b, &mut out);
        let first: Vec<u32> = out[..4].iter().map(|v| v.to_bits()).collect();
        assert_eq!(first, vec![0x3e96353a, 0x3f0c8722, 0xbf291b30, 0x3f499df2]);
        let hash = out.iter().fold(0xcbf29ce484222325u64, |h, v| (h ^ v.to_bits() as u64).wrapping_mul(0x100000001b3));
        assert_eq!(hash, 0xe871bc95f1e2e6e2);
    }

    #[test]
    fn normalizes() {
        let x: Vec<f32> = (0..512).map(|i| (i % 17) as f32 * 0.3 - 1.0).collect();
        let g = vec![1.0; 256];
        let b = vec![0.5; 256];
        let mut out = vec![0.0; 512];
        layer_norm(&x, &g, &b, &mut out);
        for row in out.chunks(256) {
            let mean: f32 = row.iter().sum::<f32>() / 256.0;
            let var: f32 = row.iter().map(|v| (v - mean) * (v - mean)).sum::<f32>() / 256.0;
            assert!((mean - 0.5).abs() < 1e-5 && (var - 1.0).abs() < 1e-3, "{mean} {var}");
        }
    }
}
