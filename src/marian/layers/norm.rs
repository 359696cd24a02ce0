//! Layer normalization, in the order of operations of Bergamot's native build: the kernels own
//! it ([`reseam_kernels::norm`], where the order is described), so that each instruction set
//! runs it at its width.

use reseam_kernels::Kernels;
pub use reseam_kernels::norm::{EPS, layer_norm};

/// `layer_norm(a + b)` for a residual connection, in place in `a`.
pub fn add_layer_norm(kern: &Kernels, a: &mut [f32], b: &[f32], gamma: &[f32], beta: &[f32], scratch: &mut Vec<f32>) {
    let _t = crate::profile::time(crate::profile::Kind::LayerNorm);
    kern.add_layer_norm(a, b, gamma, beta, scratch);
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
