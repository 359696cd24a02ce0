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
//! These are MKL's orders on Intel CPUs ([`Mkl::Intel`]). On AMD CPUs with AVX2 the same binary
//! takes MKL's generic code path with its Zen kernels ([`Mkl::Zen`]; `mkl_serv_intel_cpu_true`
//! is false there, `mkl_serv_cpuiszen` true), whose orders are, with `p_t = q_t·k_t` rounded
//! and every addition unfused unless said:
//!
//! `Q·Kᵀ`:
//! - one query row (the decoder): `s = ((p0 + p1) + p2) + p3`; keys in blocks of 4: 4 lanes over
//!   elements 4.. (lane `l` holds `4 + l, 8 + l, ...`, lane 0 starting from `s`), reduced as
//!   `(l0 + l2) + (l1 + l3)`; keys past the last block of 4: on the 1st and 3rd, 8 lanes over
//!   elements `4..k-4` halved (`l + l+4`, `l + l+2`, `l + l+1`), on the 2nd 4 lanes over them,
//!   then the last four products added in turn; the sum times `alpha`;
//! - 2–3 query rows, or fewer than 12 keys: keys in blocks of 4 in 4 lanes from element 0
//!   (`(l0 + l2) + (l1 + l3)`), the others in 8 lanes halved; times `alpha`;
//! - 4 or more query rows over 12 or more keys (the encoder's sentences of 12 positions or
//!   more): a plain fma chain over `q_t · (alpha·k_t)`: MKL scales the keys as it packs them.
//!
//! `weights·V`: 1–3 query rows: the rounded products added in turn; 4 or more: a plain fma chain.
//!
//! They were read off the bergamot wheel's MKL on this Xeon with `mkl_zen_shim.c` preloaded
//! (which makes it take its AMD path, and gives back the AMD references of base-memory-enes
//! 300/300), with one absorption probe per pair of elements (`tests/fixtures/
//! base-memory-enes-xeon/tools/mkl_check_trees.py`: trees and fused steps of every output
//! element, for head sizes 32, 48 and 64, 1–130 keys, one query row and as many as keys, and all
//! `m, n` up to 16), then held bit for bit on random inputs at all those shapes
//! (`tools/mkl_cases.py`, test `orders_equal_mkl_on_every_marian_shape`). MKL's AMD path does not
//! depend on the instruction sets beyond AVX2: `mkl_serv_cpu_detect` reports the generic path
//! there with or without `MKL_ENABLE_INSTRUCTIONS=AVX2` (or `AVX`, `SSE4_2`), and all 1554
//! random products come out byte for byte the same under `MKL_ENABLE_INSTRUCTIONS=AVX2`, so Zen 3
//! (AVX2) and Zen 4 (AVX-512) sum alike. (`MKL_CBWR=COMPATIBLE` turns the Zen kernels off: not
//! reproduced; Firefox does not set it.)
//!
//! Padding is never part of a product here: each sentence attends over its own keys, so the
//! result does not depend on which other sentences share the batch.

use reseam_kernels::Kernels;
use reseam_kernels::scalar::{Chain, RowScores, RowValues, halve16};
use reseam_kernels::transpose::Transpose;

use super::softmax::softmax;

mod zen;
pub use zen::{MKL_VAR, Mkl};
use zen::{qk_zen, wv_zen_unfused, zen_chains, zen_fused_values};

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

    /// The same rows from `by` columns further.
    fn shifted(self, by: usize) -> Self {
        View { col: self.col + by, ..self }
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

/// One attention call's operands: `m` query rows over `n` keys and values in each of `heads`
/// heads of size `dk`, scores scaled by `scale`. Head `h` reads its queries, keys and values at
/// column `col + h·dk` of its view, and its transposed keys (where the caller keeps them: the
/// decoder's cross-attention) from row `h·dk` of `keys_t`.
#[derive(Clone, Copy)]
pub struct Heads<'a> {
    pub heads: usize,
    pub dk: usize,
    pub q: View<'a>,
    pub m: usize,
    pub k: View<'a>,
    pub keys_t: Option<View<'a>>,
    pub v: View<'a>,
    pub n: usize,
    pub scale: f32,
}

/// Where attention writes: row `i` of head `h` at `data[i · stride + col + h·dk ..]` (`dk`
/// values).
pub struct Rows<'a> {
    pub data: &'a mut [f32],
    pub stride: usize,
    pub col: usize,
}

/// Attention of `a`'s query rows in the orders of `mkl`, every head, into `out`. `scratch` is
/// working memory; afterwards its first `m · n` values are the first head's softmax weights.
///
/// Each output element gets the operations [`attend_reference`] gives it, in the same order;
/// only the grouping into vector instructions differs: the encoder's plain chains run across
/// keys (over a transposed copy of the keys), the value sums across the head's dimensions, the
/// softmax of every row of every head side by side.
pub fn attend(kern: &Kernels, mkl: Mkl, a: &Heads, scratch: &mut Vec<f32>, out: Rows) {
    let Heads { heads, dk, q, m, k, keys_t, v, n, scale } = *a;
    let Rows { data: out, stride: out_stride, col: out_col } = out;
    if m == 0 || n == 0 || heads == 0 {
        return;
    }
    let zen = mkl == Mkl::Zen;
    let chains = if zen { zen_chains(m, n) } else { m > 1 && n >= 4 };
    let size = m * n;
    // The transposed keys' rows padded to a multiple of 8: the transposition stores whole
    // registers.
    let ldkt = n.next_multiple_of(8);
    let need = heads * size + if chains { heads * dk * ldkt } else { 0 };
    // Every value is written before it is read (the carried sums, then the rest of each row;
    // the transposed keys whole), so the scratch only grows and is never filled.
    if scratch.len() < need {
        scratch.resize(need, 0.0);
    }
    let (scores, kt) = scratch[..need].split_at_mut(heads * size);
    if chains {
        // The keys of all heads transposed at once (Zen: scaled, as MKL packs them), head `h`'s
        // from row `h·dk`: one vector then holds one dimension of many keys.
        let s = if zen { scale } else { 1.0 };
        let t = Transpose { src: &k.data[k.col..], lds: k.stride, rows: n, cols: heads * dk, scale: s, ldd: ldkt };
        kern.transpose_scaled(&t, kt);
    }
    match keys_t {
        // One query row over transposed keys (the decoder's): the scores of every key of all
        // heads in one call, a vector lane per key, the keys past the last block of 4 in their
        // own orders ([`qk`], Zen: [`qk_zen`], for each); `k` is not read.
        Some(kt) if m == 1 => {
            let (q, kt, ldkt) = (q.row(0, heads * dk), &kt.data[kt.col..], kt.stride);
            kern.row_scores(mkl.into(), &RowScores { q, heads, kt, ldkt, n, ldo: n }, scores);
            for s in scores.iter_mut() {
                *s *= scale;
            }
        }
        _ => {
            for (h, hs) in scores.chunks_exact_mut(size).enumerate() {
                let col = |x: View<'_>| x.col + h * dk;
                let (q, k) = (View { col: col(q), ..q }, View { col: col(k), ..k });
                let kt = if chains { &kt[h * dk * ldkt..(h + 1) * dk * ldkt] } else { &[][..] };
                head_scores(kern, zen, chains, q, m, k, n, dk, scale, hs, kt, ldkt);
            }
        }
    }
    kern.marian_softmax_rows(scores, n);
    if m == 1 {
        // One query row: the weights of all heads are consecutive rows, and the value sums of
        // all heads run in one call (each dimension still its own chain over the keys).
        let out = &mut out[out_col..out_col + heads * dk];
        let (vd, ldv) = (&v.data[v.col..], v.stride);
        if zen {
            // [`wv_zen_unfused`] for every dimension of every head.
            kern.zen_row_values(&RowValues { w: scores, heads, v: vd, ldv, dk }, out);
        } else {
            // [`wv_one_row`] for every dimension of every head.
            kern.one_row_values(&RowValues { w: scores, heads, v: vd, ldv, dk }, out);
        }
        return;
    }
    for (h, w) in scores.chunks_exact(size).enumerate() {
        let v = View { col: v.col + h * dk, ..v };
        head_values(kern, zen, w, m, v, n, dk, out, out_stride, out_col + h * dk);
    }
}

/// Asks the caches for the operands of a later [`attend`] of one query row over `n` keys in
/// `width` columns (all heads): the transposed keys and the value rows (a hint, see
/// [`Kernels::prefetch_rows`]).
pub fn prefetch_one_row(kern: &Kernels, keys_t: View, v: View, n: usize, width: usize) {
    kern.prefetch_rows(&keys_t.data[keys_t.col..], keys_t.stride, n, width);
    kern.prefetch_rows(&v.data[v.col..], v.stride, width, n);
}

/// The scores of one head, `scale · Q·Kᵀ` (`m` rows of `n`), before the softmax; `kt` holds
/// the head's keys transposed (`dk` rows of `ldkt`, Zen: scaled) where the products are plain
/// chains.
#[allow(clippy::too_many_arguments)]
fn head_scores(
    kern: &Kernels,
    zen: bool,
    chains: bool,
    q: View,
    m: usize,
    k: View,
    n: usize,
    dk: usize,
    scale: f32,
    scores: &mut [f32],
    kt: &[f32],
    ldkt: usize,
) {
    let f = |acc: &mut [f32], a: &[f32], b: &[f32]| kern.fma_vv(acc, a, b);
    if chains {
        // `chain(q_i, k_j)` for every query and key at once: fma over t from 0, starting at 0
        // (Zen: over keys already scaled).
        kern.chain_products(
            &Chain { a: &q.data[q.col..], lda: q.stride, b: kt, ldb: ldkt, m, n, k: dk, ldc: n },
            scores,
        );
        if !zen {
            for s in scores.iter_mut() {
                *s *= scale;
            }
        }
        return;
    }
    for (i, row) in scores.chunks_exact_mut(n).enumerate() {
        let qi = q.row(i, dk);
        for (j, s) in row.iter_mut().enumerate() {
            let kj = k.row(j, dk);
            *s = if zen { qk_zen(m, n, j, qi, kj, scale) } else { qk(m, n, i, j, qi, kj, &f) * scale };
        }
    }
}

/// `weights·V` of one head: `m ≥ 2` rows of softmax weights `w` over `n` values.
#[allow(clippy::too_many_arguments)]
fn head_values(
    kern: &Kernels,
    zen: bool,
    w: &[f32],
    m: usize,
    v: View,
    n: usize,
    dk: usize,
    out: &mut [f32],
    out_stride: usize,
    out_col: usize,
) {
    if zen && !zen_fused_values(m) {
        // [`wv_zen_unfused`] for all dimensions at once.
        for i in 0..m {
            let o = &mut out[i * out_stride + out_col..i * out_stride + out_col + dk];
            let p = RowValues { w: &w[i * n..(i + 1) * n], heads: 1, v: &v.data[v.col..], ldv: v.stride, dk };
            kern.zen_row_values(&p, o);
        }
    } else {
        // A plain chain over the keys for every row and dimension at once.
        let out = &mut out[out_col..];
        let p = Chain { a: w, lda: n, b: &v.data[v.col..], ldb: v.stride, m, n: dk, k: n, ldc: out_stride };
        kern.chain_products(&p, out);
    }
}

/// The specification of [`attend`]: every element computed on its own, in scalar code, head
/// after head (`keys_t` is not read). `scores` is working memory.
pub fn attend_reference(mkl: Mkl, a: &Heads, scores: &mut Vec<f32>, out: Rows) {
    let Heads { heads, dk, m, n, scale, .. } = *a;
    let Rows { data: out, stride, col } = out;
    for h in 0..heads {
        let (q, k, v) = (a.q.shifted(h * dk), a.k.shifted(h * dk), a.v.shifted(h * dk));
        scores.clear();
        scores.resize(m * n, 0.0);
        for i in 0..m {
            let qi = q.row(i, dk);
            let row = &mut scores[i * n..(i + 1) * n];
            for (j, s) in row.iter_mut().enumerate() {
                let kj = k.row(j, dk);
                *s = match mkl {
                    Mkl::Intel => qk(m, n, i, j, qi, kj, &fma_lanes) * scale,
                    Mkl::Zen => qk_zen(m, n, j, qi, kj, scale),
                };
            }
            softmax(row);
        }
        for i in 0..m {
            let w = &scores[i * n..(i + 1) * n];
            let at = i * stride + col + h * dk;
            for (t, o) in out[at..at + dk].iter_mut().enumerate() {
                *o = if mkl == Mkl::Zen && !zen_fused_values(m) {
                    wv_zen_unfused(w, |j| v.at(j, t))
                } else if m == 1 {
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
}

#[cfg(test)]
mod tests;
