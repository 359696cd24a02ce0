//! Scaled dot-product attention for one sentence and one head, with the two float products in the
//! order of operations of the BLAS Bergamot's native build uses.
//!
//! Marian computes `softmax(alpha · Q·Kᵀ + mask) · V` with `cblas_sgemm_batch` (static MKL in the
//! `bergamot` 0.4.5 wheel). MKL's summation order depends on the shapes, so it was measured on that
//! binary (through its exported `cblas_sgemm_batch`, with inputs built to expose the order of
//! additions, then confirmed bit for bit on random data for head size 32, 1–128 keys, 1–128
//! queries, batched as Marian batches them). "fma" below is one fused multiply-add.
//!
//! `Q·Kᵀ` (inner dimension = head size `k`), per output element, then `× alpha`. A "chunk" is 16
//! consecutive elements, accumulated into 16 lanes that are reduced by halving
//! (`l + l+8`, `l + l+4`, `l + l+2`, `l + l+1`):
//! - one query row (the decoder), keys in blocks of 4 ("carry"): the first product goes to lane 0,
//!   every full chunk from element 1 on is fma'd into the same lanes, the lanes are reduced; the
//!   remaining partial chunk is fma'd into fresh lanes with that sum in lane 0, reduced again;
//! - one query row, keys past the last block of 4 ("tail"): chunks from element 1 into one set
//!   of lanes, reduced, then added to the first product; on the 1st, 3rd, ... tail key the
//!   second chunk, when full, is multiplied and added instead of fma'd;
//! - 2–3 keys (a source of 1–2 pieces), several queries: chunks from element 0 into one set of
//!   lanes, reduced; on even query rows the second chunk, when full, is not fused; except
//!   - exactly two queries at head size 48 or 64: the chunks into one set of lanes (at 64 in
//!     reverse order, the last one multiplied), reduced in four interleaved groups
//!     (`l, l+4, l+8, l+12` in turn, then `(g0 + g1) + (g2 + g3)`);
//!   - three or more queries at head size 64, even rows: chunks 0 and 2 into one set of lanes,
//!     1 (multiplied) and 3 into another, the two added lane by lane, then reduced;
//! - otherwise a plain fma chain over `t = 0..k`.
//!
//! `weights·V` (inner dimension = number of keys), per output element:
//! - one query row: blocks of 8 keys combined as `((c·fma 6, fma 4) + (5,7)) + ((0,2) + (1,3))`
//!   with the carry `c` of the previous blocks, where `(p,q)` is `fma(w_p, v_p, w_q·v_q)`, then a
//!   plain fma chain over the leftover keys;
//! - several query rows: a plain fma chain.
//!
//! All of this was confirmed for head sizes 32, 48 and 64 (tiny, base-memory and base models) on
//! 1–129 keys; the orders were read off MKL by absorption probes (one product 1, two others
//! ±2^25: the 1 survives only if the two large ones meet first, which gives the whole summation
//! tree) and fused/unfused steps by random inputs, on an Intel Xeon (AVX-512, Sapphire Rapids).
//!
//! These are MKL's orders on Intel CPUs. On AMD CPUs the same binary takes MKL's generic code
//! path with Zen kernels (`mkl_serv_intel_cpu_true` is false there), whose orders differ (e.g.
//! 4- and 8-lane accumulators for one query row); reseam does not reproduce those, so Bergamot
//! run on an AMD CPU can part from reseam at a near-tie (see tests/architectures.rs).
//!
//! Padding is never part of a product here: each sentence attends over its own keys, so the
//! result does not depend on which other sentences share the batch.

use reseam_kernels::Kernels;

use super::softmax::softmax;

/// A read-only matrix view: element `(row, t)` is `data[row * stride + col + t]`.
#[derive(Clone, Copy)]
pub struct View<'a> {
    pub data: &'a [f32],
    pub stride: usize,
    pub col: usize,
}

impl View<'_> {
    #[inline]
    fn row(&self, r: usize, len: usize) -> &[f32] {
        let s = r * self.stride + self.col;
        &self.data[s..s + len]
    }

    #[inline]
    fn at(&self, r: usize, t: usize) -> f32 {
        self.data[r * self.stride + self.col + t]
    }
}

#[inline]
fn fma(a: f32, b: f32, c: f32) -> f32 {
    a.mul_add(b, c)
}

#[inline]
fn halve16(mut v: [f32; 16]) -> f32 {
    let mut h = 8;
    while h > 0 {
        for i in 0..h {
            v[i] += v[i + h];
        }
        h /= 2;
    }
    v[0]
}

fn chain(a: &[f32], b: &[f32]) -> f32 {
    let mut acc = 0f32;
    for (&x, &y) in a.iter().zip(b) {
        acc = fma(x, y, acc);
    }
    acc
}

/// The fused multiply-add of whole lanes: `acc[l] = fma(a[l], b[l], acc[l])`. The specification
/// passes [`fma_lanes`]; the engine passes its kernels' vector form, which gives the same bits.
trait FmaLanes: Fn(&mut [f32], &[f32], &[f32]) {}
impl<F: Fn(&mut [f32], &[f32], &[f32])> FmaLanes for F {}

fn fma_lanes(acc: &mut [f32], a: &[f32], b: &[f32]) {
    for ((c, &x), &y) in acc.iter_mut().zip(a).zip(b) {
        *c = fma(x, y, *c);
    }
}

fn one_row_carry(a: &[f32], b: &[f32], f: &impl FmaLanes) -> f32 {
    let k = a.len();
    let mut carry = a[0] * b[0];
    let full = (k - 1) / 16;
    let mut i = 1;
    if full > 0 {
        let mut lanes = [0f32; 16];
        lanes[0] = carry;
        for _ in 0..full {
            f(&mut lanes, &a[i..i + 16], &b[i..i + 16]);
            i += 16;
        }
        carry = halve16(lanes);
    }
    if i < k {
        let mut lanes = [0f32; 16];
        lanes[0] = carry;
        f(&mut lanes[..k - i], &a[i..k], &b[i..k]);
        carry = halve16(lanes);
    }
    carry
}

/// Chunks of 16 from `start` into one set of lanes, halved; the second chunk, when full, is
/// multiplied and added instead of fused if `second_unfused`.
fn lanes16(a: &[f32], b: &[f32], start: usize, second_unfused: bool, f: &impl FmaLanes) -> f32 {
    let k = a.len();
    let mut lanes = [0f32; 16];
    let (mut i, mut c) = (start, 0);
    while i < k {
        let end = k.min(i + 16);
        if c == 1 && i + 16 <= k && second_unfused {
            for (l, lane) in lanes.iter_mut().enumerate() {
                *lane += a[i + l] * b[i + l];
            }
        } else {
            f(&mut lanes[..end - i], &a[i..end], &b[i..end]);
        }
        i += 16;
        c += 1;
    }
    halve16(lanes)
}

/// The 16 lanes reduced in four interleaved groups, `g, g+4, g+8, g+12` in turn, then
/// `(g0 + g1) + (g2 + g3)`.
fn split16(v: [f32; 16]) -> f32 {
    let g: [f32; 4] = std::array::from_fn(|g| ((v[g] + v[g + 4]) + v[g + 8]) + v[g + 12]);
    (g[0] + g[1]) + (g[2] + g[3])
}

/// Two queries over 2–3 keys at head size 48 or 64 (`k` a multiple of 16): the chunks fma'd into
/// one set of lanes, in reverse order at 64 (the last chunk multiplied, not fused), then
/// [`split16`].
fn two_rows(a: &[f32], b: &[f32], f: &impl FmaLanes) -> f32 {
    let mut lanes = [0f32; 16];
    let chunk = |c: usize| c * 16..c * 16 + 16;
    if a.len() == 64 {
        for (l, lane) in lanes.iter_mut().enumerate() {
            *lane = a[48 + l] * b[48 + l];
        }
        for c in (0..3).rev() {
            f(&mut lanes, &a[chunk(c)], &b[chunk(c)]);
        }
    } else {
        for c in 0..a.len() / 16 {
            f(&mut lanes, &a[chunk(c)], &b[chunk(c)]);
        }
    }
    split16(lanes)
}

/// An even query row of three or more over 2–3 keys at head size 64: chunks 0 and 2 into one set
/// of lanes, chunks 1 and 3 into another (chunk 1 multiplied, not fused), added, halved.
fn even_row_64(a: &[f32], b: &[f32], f: &impl FmaLanes) -> f32 {
    let (mut x, mut y) = ([0f32; 16], [0f32; 16]);
    f(&mut x, &a[..16], &b[..16]);
    for (l, lane) in y.iter_mut().enumerate() {
        *lane = a[16 + l] * b[16 + l];
    }
    f(&mut x, &a[32..48], &b[32..48]);
    f(&mut y, &a[48..], &b[48..]);
    halve16(std::array::from_fn(|l| x[l] + y[l]))
}

fn one_row_tail(a: &[f32], b: &[f32], tail_index: usize, f: &impl FmaLanes) -> f32 {
    a[0] * b[0] + lanes16(a, b, 1, tail_index.is_multiple_of(2), f)
}

/// One element of `Q·Kᵀ` before scaling, for a product of `m` queries by `n` keys.
#[inline]
fn qk(m: usize, n: usize, i: usize, j: usize, q: &[f32], k: &[f32], f: &impl FmaLanes) -> f32 {
    if m == 1 {
        let blocks = n / 4 * 4;
        if j < blocks { one_row_carry(q, k, f) } else { one_row_tail(q, k, j - blocks, f) }
    } else if n < 4 {
        match (m, q.len()) {
            (2, 48 | 64) => two_rows(q, k, f),
            (_, 64) if i.is_multiple_of(2) => even_row_64(q, k, f),
            _ => lanes16(q, k, 0, i.is_multiple_of(2), f),
        }
    } else {
        chain(q, k)
    }
}

/// One element of `weights·V` for a single query row: `w` are the weights, `v(j)` the values.
fn wv_one_row(w: &[f32], v: impl Fn(usize) -> f32) -> f32 {
    let n = w.len();
    let pair = |p: usize, q: usize| fma(w[p], v(p), w[q] * v(q));
    let mut c = 0f32;
    let mut b = 0;
    while b + 8 <= n {
        let mut s = fma(w[b + 4], v(b + 4), fma(w[b + 6], v(b + 6), c));
        s += pair(b + 5, b + 7);
        let t = pair(b, b + 2) + pair(b + 1, b + 3);
        c = s + t;
        b += 8;
    }
    for (j, &wj) in w.iter().enumerate().skip(b) {
        c = fma(wj, v(j), c);
    }
    c
}

/// Attention of `m` query rows over `n` keys of one head of size `dk`; writes `m` rows of `dk`
/// values at `out[row * out_stride + out_col ..]`. `scratch` is working memory.
///
/// Each output element gets the operations [`attend_reference`] gives it, in the same order;
/// only the grouping into vector instructions differs: the encoder's plain chains run across
/// keys (over a transposed copy of the keys), the value sums across the head's dimensions.
#[allow(clippy::too_many_arguments)]
pub fn attend(
    kern: &Kernels,
    q: View,
    m: usize,
    k: View,
    keys_t: Option<View>,
    v: View,
    n: usize,
    dk: usize,
    scale: f32,
    scratch: &mut Vec<f32>,
    out: &mut [f32],
    out_stride: usize,
    out_col: usize,
) {
    let chains = m > 1 && n >= 4;
    // One query row over transposed keys: the carry sums of all keys whose block of 4 is full
    // run side by side, one vector lane per key ([`one_row_carry`] for each).
    let carried = if m == 1 && keys_t.is_some() { n / 4 * 4 } else { 0 };
    scratch.clear();
    scratch.resize(m * n + if chains { dk * n } else { 0 }, 0.0);
    let (scores, kt) = scratch.split_at_mut(m * n);
    let f = |acc: &mut [f32], a: &[f32], b: &[f32]| kern.fma_vv(acc, a, b);
    if chains {
        for j in 0..n {
            for (t, &x) in k.row(j, dk).iter().enumerate() {
                kt[t * n + j] = x;
            }
        }
    }
    if chains {
        // `chain(q_i, k_j)` for every query and key at once: fma over t from 0, starting at 0.
        kern.chain_products(&q.data[q.col..], q.stride, kt, n, m, n, dk, scores, n);
        for s in scores.iter_mut() {
            *s *= scale;
        }
    }
    for i in 0..m {
        let qi = q.row(i, dk);
        let row = &mut scores[i * n..(i + 1) * n];
        if chains {
            // Computed for all rows at once, below the loop.
        } else {
            if let Some(kt) = keys_t
                && carried > 0
            {
                kern.carry_scores(qi, &kt.data[kt.col..], kt.stride, carried, row);
                for s in &mut row[..carried] {
                    *s *= scale;
                }
            }
            for (j, s) in row.iter_mut().enumerate().skip(carried) {
                *s = qk(m, n, i, j, qi, k.row(j, dk), &f) * scale;
            }
        }
        softmax(row);
    }
    if m == 1 {
        // [`wv_one_row`] for all dimensions at once.
        kern.one_row_values(&scores[..n], &v.data[v.col..], v.stride, dk, &mut out[out_col..out_col + dk]);
    } else {
        // A plain chain over the keys for every row and dimension at once.
        let out = &mut out[out_col..];
        kern.chain_products(scores, n, &v.data[v.col..], v.stride, m, dk, n, out, out_stride);
    }
}

/// The specification of [`attend`]: every element computed on its own, in scalar code.
#[allow(clippy::too_many_arguments)]
pub fn attend_reference(
    q: View,
    m: usize,
    k: View,
    v: View,
    n: usize,
    dk: usize,
    scale: f32,
    scores: &mut Vec<f32>,
    out: &mut [f32],
    out_stride: usize,
    out_col: usize,
) {
    scores.clear();
    scores.resize(m * n, 0.0);
    for i in 0..m {
        let qi = q.row(i, dk);
        let row = &mut scores[i * n..(i + 1) * n];
        for (j, s) in row.iter_mut().enumerate() {
            *s = qk(m, n, i, j, qi, k.row(j, dk), &fma_lanes) * scale;
        }
        softmax(row);
    }
    for i in 0..m {
        let w = &scores[i * n..(i + 1) * n];
        let o = &mut out[i * out_stride + out_col..i * out_stride + out_col + dk];
        for (t, o) in o.iter_mut().enumerate() {
            *o = if m == 1 {
                wv_one_row(w, |j| v.at(j, t))
            } else {
                let mut acc = 0f32;
                for (j, &wj) in w.iter().enumerate() {
                    acc = fma(wj, v.at(j, t), acc);
                }
                acc
            };
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// `((i·37 + seed·11) mod 101 − 50) / 7` (float division): reproducible here and in numpy.
    fn sample(rows: usize, cols: usize, seed: usize) -> Vec<f32> {
        (0..rows * cols).map(|i| ((i * 37 + seed * 11) % 101) as f32 - 50.0).map(|v| v / 7.0).collect()
    }

    fn bits(v: &[f32]) -> Vec<u32> {
        v.iter().map(|x| x.to_bits()).collect()
    }

    /// Bit patterns produced by MKL's `cblas_sgemm_batch` inside the bergamot 0.4.5 wheel on the
    /// same inputs (an Intel AVX-512 CPU); each shape exercises a different summation order. The
    /// product is batched eight times, as Marian batches its heads: a batch of one can take yet
    /// another kernel (two queries at head size 48).
    /// (queries, keys, head size, (seed of Q, seed of K), MKL's bits).
    type QkCase = (usize, usize, usize, (usize, usize), &'static [u32]);

    #[test]
    fn equals_bergamot_mkl_bit_for_bit() {
        let qk_cases: [QkCase; 9] = [
            // Two queries at head sizes 48 and 64 (a source of one piece, as one decoder query of a
            // two-position source), and three queries over two keys at 64: their own kernels.
            (2, 3, 48, (5, 6), &[0x42529466, 0xc20e1c53, 0xc1aad93b, 0xc26a6a7e, 0x42243704, 0xc1db102d]),
            (2, 3, 64, (1, 2), &[0x4267758d, 0xc286b82a, 0x430b87d6, 0xc2394687, 0x42610fac, 0xc2863978]),
            (3, 2, 64, (1, 2), &[0x4267758e, 0xc286b82a, 0xc2394688, 0x42610fac, 0xbfeb1a26, 0xc23d7054]),
            (1, 6, 32, (1, 2), &[0x42393bac, 0x41140075, 0xc23df002, 0xc16950fc, 0x42c381ff, 0xc1e49ca7]),
            (2, 2, 32, (1, 2), &[0x42393bae, 0x41140074, 0xc2338fd4, 0x420e1980]),
            (1, 6, 64, (1, 2), &[0x4267758d, 0xc286b82a, 0x430b87d6, 0xc2863978, 0x426f9f59, 0xc2498000]),
            (1, 7, 48, (1, 2), &[0x42527940, 0xc20463d4, 0xc1c4042c, 0x41fff161, 0xc2665cdd, 0x42d40464, 0xc24ed22d]),
            (
                3,
                3,
                48,
                (1, 2),
                &[
                    0x42527940, 0xc20463d4, 0xc1c4042c, 0xc26c9884, 0x422bdca2, 0xc1f860e1, 0x427ce72a, 0xc2704ba9,
                    0x4274b9cf,
                ],
            ),
            (
                5,
                5,
                32,
                (1, 2),
                &[
                    0x42393bac, 0x41140076, 0xc23df002, 0xc16950fd, 0x42c38200, 0xc2338fd4, 0x420e197f, 0x41b54772,
                    0xc23f1b3f, 0xc1e49caa, 0xc1f071f6, 0xc22b1afc, 0x420cee42, 0x4196f217, 0xc23375f9, 0x4270d202,
                    0xc20dcbe9, 0xc2217e99, 0x42315a9c, 0x41923dc2, 0xc00d4e51, 0x42853b5e, 0xc1fb8e8b, 0xc21f7967,
                    0x420c994b,
                ],
            ),
        ];
        for (m, n, dk, (sq, sk), want) in qk_cases {
            let alpha = 1.0f32 / (dk as f32).sqrt();
            let (q, k) = (sample(m, dk, sq), sample(n, dk, sk));
            let got: Vec<f32> = (0..m * n)
                .map(|e| qk(m, n, e / n, e % n, &q[e / n * dk..][..dk], &k[e % n * dk..][..dk], &fma_lanes) * alpha)
                .collect();
            assert_eq!(bits(&got), want, "q·kᵀ {m}×{n}, head size {dk}");
        }
        let wv_cases: [(usize, usize, &[u32]); 2] = [
            (1, 21, &[0x3f9883cb, 0x40428304, 0xc13208d8, 0xbe778f7b]),
            (
                3,
                3,
                &[
                    0xc0667afb, 0x3f7e6479, 0x3fa76277, 0xc087d634, 0xc0677c2f, 0x3f9147f0, 0x3fcd9047, 0xc0728972,
                    0xc0687d64, 0x3fa35da4, 0x3ff3be18, 0xc055667b,
                ],
            ),
        ];
        for (m, n, want) in wv_cases {
            let w: Vec<f32> = sample(m, n, 3).iter().map(|x| x / 13.0).collect();
            let v = sample(n, 32, 4);
            let mut got = Vec::new();
            for i in 0..m {
                let wi = &w[i * n..(i + 1) * n];
                for t in 0..4 {
                    got.push(if m == 1 {
                        wv_one_row(wi, |j| v[j * 32 + t])
                    } else {
                        wi.iter().enumerate().fold(0f32, |acc, (j, &x)| fma(x, v[j * 32 + t], acc))
                    });
                }
            }
            assert_eq!(bits(&got), want, "weights·v {m}×{n}");
        }
    }

    /// Every kernel table this CPU runs gives the specification's bits, on the shapes that
    /// take each path (one query row with and without a tail of keys, 2–3 keys, plain chains)
    /// and head sizes with partial chunks.
    #[test]
    fn vector_forms_equal_the_specification_bit_for_bit() {
        let mut seed = 0x2545_F491_4F6C_DD1Du64;
        let mut rnd = move || {
            seed ^= seed << 13;
            seed ^= seed >> 7;
            seed ^= seed << 17;
            (seed >> 40) as f32 / (1u64 << 24) as f32 * 6.0 - 3.0
        };
        let mut ran = Vec::new();
        for kern in Kernels::candidates() {
            ran.push(kern.name());
            for dk in [32, 48, 64, 20, 1] {
                for m in [1, 2, 3, 7] {
                    for n in [1, 2, 3, 4, 5, 8, 9, 16, 17, 31, 40, 129] {
                        let stride = 3 * dk + 5;
                        let data: Vec<f32> = (0..n.max(m) * stride).map(|_| rnd()).collect();
                        let view = |col| View { data: &data, stride, col };
                        let (qv, kv, vv) = (view(1), view(dk + 2), view(2 * dk + 3));
                        let (mut want, mut got) = (vec![0f32; m * (dk + 4)], vec![0f32; m * (dk + 4)]);
                        let mut scratch = Vec::new();
                        attend_reference(qv, m, kv, vv, n, dk, 0.17, &mut scratch, &mut want, dk + 4, 2);
                        attend(&kern, qv, m, kv, None, vv, n, dk, 0.17, &mut scratch, &mut got, dk + 4, 2);
                        assert_eq!(bits(&got), bits(&want), "{}: m={m} n={n} dk={dk}", kern.name());
                        // The same over transposed keys (the decoder's cross-attention).
                        let kt: Vec<f32> =
                            (0..dk).flat_map(|t| (0..n).map(move |j| (t, j))).map(|(t, j)| kv.at(j, t)).collect();
                        let ktv = View { data: &kt, stride: n, col: 0 };
                        got.fill(0.0);
                        attend(&kern, qv, m, kv, Some(ktv), vv, n, dk, 0.17, &mut scratch, &mut got, dk + 4, 2);
                        assert_eq!(bits(&got), bits(&want), "{}: transposed keys, m={m} n={n} dk={dk}", kern.name());
                    }
                }
            }
        }
        eprintln!("attention vector forms checked on: {}", ran.join(", "));
    }

    #[test]
    fn uniform_keys_average_values() {
        let (n, dk) = (5, 4);
        let q = vec![0.0; dk];
        let k = vec![1.0; n * dk];
        let v: Vec<f32> = (0..n * dk).map(|i| (i / dk) as f32).collect();
        let mut out = vec![0.0; dk];
        let mut scratch = Vec::new();
        let (qv, kv, vv) = (
            View { data: &q, stride: dk, col: 0 },
            View { data: &k, stride: dk, col: 0 },
            View { data: &v, stride: dk, col: 0 },
        );
        attend(&Kernels::reference(), qv, 1, kv, None, vv, n, dk, 0.5, &mut scratch, &mut out, dk, 0);
        for o in out {
            assert!((o - 2.0).abs() < 1e-6);
        }
    }
}
