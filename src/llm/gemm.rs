//! Float products for the f32 and bf16 precisions: `out[i][j] = Σ_k x[i][k] · w[j][k]` with
//! weights stored as Hugging Face does (`[out, in]`, row-major).
//!
//! Every output element is summed in one fixed order that depends neither on how many rows the
//! call has nor on how the work is split over threads: 8 running lane sums over `k` in steps of
//! 8, added pairwise in a fixed tree, then the tail. So a 5-token verification forward gives the
//! same bits as 5 single-token forwards (batch invariance), which speculative decoding relies
//! on. The loops are written so the compiler vectorises them (8 lanes = two SSE or one AVX
//! register); this path is for checking against Transformers, int8 is the fast one.

use rayon::prelude::*;

/// Weight elements: f32, or bf16 bits widened on the fly (exactly).
pub trait WeightElem: Copy + Send + Sync {
    fn widen(self) -> f32;
}

impl WeightElem for f32 {
    #[inline(always)]
    fn widen(self) -> f32 {
        self
    }
}

/// bf16 as its bit pattern.
impl WeightElem for u16 {
    #[inline(always)]
    fn widen(self) -> f32 {
        f32::from_bits((self as u32) << 16)
    }
}

const LANES: usize = 8;
/// Weight rows per unit of parallel work (sized so a block of a 2048-wide matrix stays in L2).
const BLOCK_ROWS: usize = 64;

#[inline(always)]
fn reduce(acc: [f32; LANES]) -> f32 {
    ((acc[0] + acc[4]) + (acc[1] + acc[5])) + ((acc[2] + acc[6]) + (acc[3] + acc[7]))
}

/// One dot product in the fixed order.
#[inline(always)]
pub fn dot<W: WeightElem>(x: &[f32], w: &[W]) -> f32 {
    let mut acc = [0f32; LANES];
    let (xc, wc) = (x.chunks_exact(LANES), w.chunks_exact(LANES));
    let (xt, wt) = (xc.remainder(), wc.remainder());
    for (xs, ws) in xc.zip(wc) {
        let xs: &[f32; LANES] = xs.try_into().expect("chunk of LANES");
        let ws: &[W; LANES] = ws.try_into().expect("chunk of LANES");
        for l in 0..LANES {
            acc[l] += xs[l] * ws[l].widen();
        }
    }
    let mut s = reduce(acc);
    for (a, b) in xt.iter().zip(wt) {
        s += a * b.widen();
    }
    s
}

/// Four dot products of one activation row with four weight rows: the same operations per
/// element as [`dot`] (so the results are bit-identical), with the activation loaded once.
#[inline(always)]
fn dot4<W: WeightElem>(x: &[f32], w: [&[W]; 4]) -> [f32; 4] {
    let mut a0 = [0f32; LANES];
    let mut a1 = [0f32; LANES];
    let mut a2 = [0f32; LANES];
    let mut a3 = [0f32; LANES];
    let xc = x.chunks_exact(LANES);
    let xt = xc.remainder();
    let it = xc
        .zip(w[0].chunks_exact(LANES))
        .zip(w[1].chunks_exact(LANES))
        .zip(w[2].chunks_exact(LANES))
        .zip(w[3].chunks_exact(LANES));
    for ((((xs, w0), w1), w2), w3) in it {
        let xs: &[f32; LANES] = xs.try_into().expect("chunk of LANES");
        let (w0, w1): (&[W; LANES], &[W; LANES]) = (w0.try_into().expect("chunk"), w1.try_into().expect("chunk"));
        let (w2, w3): (&[W; LANES], &[W; LANES]) = (w2.try_into().expect("chunk"), w3.try_into().expect("chunk"));
        for l in 0..LANES {
            a0[l] += xs[l] * w0[l].widen();
            a1[l] += xs[l] * w1[l].widen();
            a2[l] += xs[l] * w2[l].widen();
            a3[l] += xs[l] * w3[l].widen();
        }
    }
    let full = x.len() - xt.len();
    let mut out = [reduce(a0), reduce(a1), reduce(a2), reduce(a3)];
    for (r, o) in out.iter_mut().enumerate() {
        for (a, b) in xt.iter().zip(&w[r][full..]) {
            *o += a * b.widen();
        }
    }
    out
}

/// Computes rows × `n` outputs for weight rows `j0..j0+out_cols` into `out` (row stride
/// `out_cols`), plus the bias.
fn block<W: WeightElem>(x: &[f32], rows: usize, k: usize, w: &[W], j0: usize, bias: Option<&[f32]>, out: &mut [f32]) {
    let nb = out.len() / rows.max(1);
    for i in 0..rows {
        let xr = &x[i * k..(i + 1) * k];
        let orow = &mut out[i * nb..(i + 1) * nb];
        let mut j = 0;
        while j + 4 <= nb {
            let g = |r: usize| &w[(j0 + j + r) * k..(j0 + j + r + 1) * k];
            let d = dot4(xr, [g(0), g(1), g(2), g(3)]);
            orow[j..j + 4].copy_from_slice(&d);
            j += 4;
        }
        while j < nb {
            orow[j] = dot(xr, &w[(j0 + j) * k..(j0 + j + 1) * k]);
            j += 1;
        }
        if let Some(b) = bias {
            for (o, bv) in orow.iter_mut().zip(&b[j0..j0 + nb]) {
                *o += bv;
            }
        }
    }
}

/// `out (rows × n) = x (rows × k) · wᵀ + bias`, `w` being `n × k`. Threads split the weight
/// rows, so each weight is read from memory once per call whatever the number of rows.
pub fn matmul<W: WeightElem>(
    x: &[f32],
    rows: usize,
    k: usize,
    w: &[W],
    n: usize,
    bias: Option<&[f32]>,
    out: &mut [f32],
) {
    assert_eq!(x.len(), rows * k, "activations must be rows × k");
    assert_eq!(w.len(), n * k, "weights must be n × k");
    assert_eq!(out.len(), rows * n, "output must be rows × n");
    if rows == 0 || n == 0 {
        return;
    }
    if rows == 1 {
        out.par_chunks_mut(BLOCK_ROWS).enumerate().for_each(|(b, o)| block(x, 1, k, w, b * BLOCK_ROWS, bias, o));
        return;
    }
    let blocks: Vec<(usize, Vec<f32>)> = (0..n.div_ceil(BLOCK_ROWS))
        .into_par_iter()
        .map(|b| {
            let j0 = b * BLOCK_ROWS;
            let nb = BLOCK_ROWS.min(n - j0);
            let mut o = vec![0f32; rows * nb];
            block(x, rows, k, w, j0, bias, &mut o);
            (j0, o)
        })
        .collect();
    for (j0, o) in blocks {
        let nb = o.len() / rows;
        for i in 0..rows {
            out[i * n + j0..i * n + j0 + nb].copy_from_slice(&o[i * nb..(i + 1) * nb]);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn data(len: usize, seed: u32) -> Vec<f32> {
        (0..len)
            .map(|i| (((i as u32).wrapping_mul(2654435761).wrapping_add(seed) >> 8) % 2001) as f32 / 1000.0 - 1.0)
            .collect()
    }

    #[test]
    fn matches_a_plain_product_and_is_batch_invariant() {
        for &(rows, k, n) in &[(1, 1, 1), (3, 7, 5), (5, 64, 70), (2, 100, 131), (9, 33, 4)] {
            let x = data(rows * k, 1);
            let w = data(n * k, 2);
            let bias = data(n, 3);
            let mut out = vec![0f32; rows * n];
            matmul(&x, rows, k, &w, n, Some(&bias), &mut out);
            for i in 0..rows {
                for j in 0..n {
                    let want: f64 =
                        (0..k).map(|t| x[i * k + t] as f64 * w[j * k + t] as f64).sum::<f64>() + bias[j] as f64;
                    assert!((out[i * n + j] as f64 - want).abs() < 1e-4, "{rows}x{k}x{n} at {i},{j}");
                }
                // One row alone gives the same bits as inside the batch.
                let mut one = vec![0f32; n];
                matmul(&x[i * k..(i + 1) * k], 1, k, &w, n, Some(&bias), &mut one);
                assert_eq!(one, out[i * n..(i + 1) * n], "{rows}x{k}x{n} row {i}");
            }
        }
    }

    #[test]
    fn bf16_weights_widen_exactly() {
        let (k, n) = (19, 6);
        let x = data(k, 4);
        let wf: Vec<f32> = data(n * k, 5).iter().map(|v| half::bf16::from_f32(*v).to_f32()).collect();
        let wb: Vec<u16> = wf.iter().map(|v| half::bf16::from_f32(*v).to_bits()).collect();
        let (mut a, mut b) = (vec![0f32; n], vec![0f32; n]);
        matmul(&x, 1, k, &wf, n, None, &mut a);
        matmul(&x, 1, k, &wb, n, None, &mut b);
        assert_eq!(a, b);
    }
}
