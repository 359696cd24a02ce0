//! The compute the Llama-family architectures share (their shape is [`super::config`]): RoPE
//! rotation, RMSNorm, SwiGLU and causal grouped-query attention over a KV cache. All in f32,
//! in Transformers' order of operations (eager attention), one row at a time so that results
//! never depend on how many rows a call has.

use rayon::prelude::*;
use reseam_kernels::Kernels;

use super::cache::{BLOCK, key_index, value_index};

/// `x · rsqrt(mean(x²) + eps) · weight` per row of `x`, as Transformers' `LlamaRMSNorm`.
pub fn rms_norm(x: &[f32], weight: &[f32], eps: f32, out: &mut [f32]) {
    let d = weight.len();
    let row = |(xr, or): (&[f32], &mut [f32])| rms_norm_row(xr, weight, eps, or);
    if x.len() >= PARALLEL_ELEMENTS {
        x.par_chunks_exact(d).zip(out.par_chunks_exact_mut(d)).for_each(row);
    } else {
        x.chunks_exact(d).zip(out.chunks_exact_mut(d)).for_each(row);
    }
}

/// [`rms_norm`] of one row.
#[inline]
pub fn rms_norm_row(xr: &[f32], weight: &[f32], eps: f32, or: &mut [f32]) {
    let mut acc = [0f32; 8];
    let chunks = xr.chunks_exact(8);
    let tail = chunks.remainder();
    for c in chunks {
        for l in 0..8 {
            acc[l] += c[l] * c[l];
        }
    }
    let mut ss = ((acc[0] + acc[4]) + (acc[1] + acc[5])) + ((acc[2] + acc[6]) + (acc[3] + acc[7]));
    for v in tail {
        ss += v * v;
    }
    let inv = 1.0 / (ss / weight.len() as f32 + eps).sqrt();
    for ((o, v), w) in or.iter_mut().zip(xr).zip(weight) {
        *o = w * (v * inv);
    }
}

/// Elements from which the per-row steps (norms, RoPE, residual adds) of a forward run on every
/// thread: a prefill's, not a decode step's.
pub const PARALLEL_ELEMENTS: usize = 1 << 15;

/// `h += o`, row by row (on every thread for a prefill).
pub fn add_residual(h: &mut [f32], o: &[f32]) {
    if h.len() >= PARALLEL_ELEMENTS {
        h.par_chunks_mut(4096)
            .zip(o.par_chunks(4096))
            .for_each(|(a, b)| a.iter_mut().zip(b).for_each(|(a, b)| *a += b));
    } else {
        h.iter_mut().zip(o).for_each(|(a, b)| *a += b);
    }
}

pub use reseam_kernels::scalar::exp;

/// cos and sin of `position · inv_freq` for the given positions, `[positions × head_dim/2]`.
pub fn rope_tables(inv_freq: &[f32], positions: std::ops::Range<usize>) -> (Vec<f32>, Vec<f32>) {
    let mut cos = Vec::with_capacity(positions.len() * inv_freq.len());
    let mut sin = Vec::with_capacity(cos.capacity());
    for p in positions {
        for f in inv_freq {
            // The angle is rounded to f32 as torch computes it; cos/sin of it are then taken
            // in f64 and rounded once (torch's f32 cos is within an ulp of that).
            let angle = (p as f32 * f) as f64;
            cos.push(angle.cos() as f32);
            sin.push(angle.sin() as f32);
        }
    }
    (cos, sin)
}

/// Rotates each head of one row in place: `x·cos + rotate_half(x)·sin` (halves, not pairs),
/// with that row's `cos` and `sin` (`head_dim / 2` each).
#[inline]
pub fn rope_row(x: &mut [f32], head_dim: usize, cos: &[f32], sin: &[f32]) {
    let half = head_dim / 2;
    let (c, s) = (&cos[..half], &sin[..half]);
    for v in x.chunks_exact_mut(head_dim) {
        let (lo, hi) = v.split_at_mut(half);
        for i in 0..half {
            let (a, b) = (lo[i], hi[i]);
            lo[i] = a * c[i] + (-b) * s[i];
            hi[i] = b * c[i] + a * s[i];
        }
    }
}

/// The KV cache of one layer as attention reads it (layout: `cache.rs`).
pub struct KvView<'a> {
    pub kt: &'a [f32],
    pub v: &'a [f32],
    /// Positions the layout has room for.
    pub cap: usize,
}

/// Causal attention of new queries at positions `past..` (`q`: rows × heads × head_dim) over
/// the cached keys and values of every position up to each query's own (and, with a window,
/// no further back than `window` positions). Each task takes up to [`QUERY_ROWS`] consecutive
/// rows and one KV head with the query heads that share it, so each key and value is loaded
/// once for all of them. Every output element is summed in a fixed order (scores over
/// dimensions, outputs over positions, the rows' common positions first and each row's own
/// continuing the same sum), so a row's result does not depend on the other rows of the call.
#[allow(clippy::too_many_arguments)]
pub fn attention(
    kern: &Kernels,
    q: &[f32],
    kv: &KvView,
    past: usize,
    heads: usize,
    kv_heads: usize,
    head_dim: usize,
    window: Option<usize>,
    out: &mut [f32],
) {
    let hd = head_dim;
    let gh = heads / kv_heads * hd;
    let rows = q.len() / (heads * hd);
    let at = Attend { kern, q, kv, past, heads, group: heads / kv_heads, hd, window };
    // Each row's output for one KV head's group of query heads, gathered head-major: a thread's
    // runs of rows keep one head's keys and values in its cache.
    let mut slots: Vec<Vec<&mut [f32]>> = (0..kv_heads).map(|_| Vec::with_capacity(rows)).collect();
    for row in out.chunks_exact_mut(heads * hd) {
        for (g, slot) in row.chunks_exact_mut(gh).enumerate() {
            slots[g].push(slot);
        }
    }
    slots.par_iter_mut().enumerate().for_each(|(g, head)| {
        head.par_chunks_mut(QUERY_ROWS)
            .enumerate()
            .for_each_init(Scratch::default, |scratch, (c, run)| at.rows(scratch, c * QUERY_ROWS, g, run))
    });
}

/// Query rows that share one pass over the keys and values: with the four query heads of a
/// typical KV head, 32 query vectors per key and value loaded (a 512-token prefill's attention
/// took 15% less time than one row at a time; 4 rows gave 12%).
const QUERY_ROWS: usize = 8;

/// One attention call's operands.
struct Attend<'a> {
    kern: &'a Kernels,
    q: &'a [f32],
    kv: &'a KvView<'a>,
    past: usize,
    heads: usize,
    group: usize,
    hd: usize,
    window: Option<usize>,
}

/// A task's working buffers, kept across its calls.
#[derive(Default)]
struct Scratch {
    scores: Vec<f32>,
    queries: Vec<f32>,
    out: Vec<f32>,
}

impl Attend<'_> {
    /// The first position row `r` attends to.
    fn first(&self, r: usize) -> usize {
        self.window.map_or(0, |w| (self.past + r + 1).saturating_sub(w))
    }

    /// Rows `r0 ..` (one output slot each: the group's heads × head_dim) of KV head `g`,
    /// together when they attend from the same first position (no window, or not yet reached),
    /// else one by one.
    fn rows(&self, scratch: &mut Scratch, r0: usize, g: usize, slots: &mut [&mut [f32]]) {
        if (r0..r0 + slots.len()).all(|r| self.first(r) == self.first(r0)) {
            self.together(scratch, r0, g, slots);
        } else {
            for (i, slot) in slots.iter_mut().enumerate() {
                self.together(scratch, r0 + i, g, std::slice::from_mut(slot));
            }
        }
    }

    /// Rows `r0 ..` of KV head `g` that share their first position.
    fn together(&self, scratch: &mut Scratch, r0: usize, g: usize, slots: &mut [&mut [f32]]) {
        let (hd, group, heads) = (self.hd, self.group, self.heads);
        let gh = group * hd;
        let m = slots.len();
        let first = self.first(r0);
        let last = self.past + r0 + m - 1;
        // Scores are computed for whole key blocks; the positions wanted start `lead` in.
        let (b0, b1) = (first / BLOCK, last / BLOCK);
        let lead = first - b0 * BLOCK;
        let span = (b1 + 1 - b0) * BLOCK;
        let Scratch { scores, queries, out } = scratch;
        queries.clear();
        for r in r0..r0 + m {
            queries.extend_from_slice(&self.q[(r * heads + g * group) * hd..][..gh]);
        }
        // Every score is written by the kernel: the buffer only grows, never cleared.
        let need = m * group * span;
        if scores.len() < need {
            scores.resize(need, 0.0);
        }
        let scores = &mut scores[..need];
        let keys = Keys { kt: self.kv.kt, cap: self.kv.cap, g, blocks: b0..b1 + 1, hd };
        keys.scores(self.kern, queries, scores);
        let scaling = (hd as f64).powf(-0.5) as f32;
        let n = |i: usize| self.past + r0 + i + 1 - first;
        for (hi, s) in scores.chunks_exact_mut(span).enumerate() {
            self.kern.softmax_scaled(&mut s[lead..lead + n(hi / group)], scaling);
        }
        // The positions every row attends to, for all rows at once; then each row's own.
        out.clear();
        out.resize(m * gh, 0.0);
        let values = Values { v: self.kv.v, cap: self.kv.cap, g, hd };
        values.weighted(self.kern, &scores[lead..], first, n(0), span, out, false);
        for (i, (o, slot)) in out.chunks_exact_mut(gh).zip(slots.iter_mut()).enumerate() {
            if i > 0 {
                let w = &scores[i * group * span + lead + n(0)..];
                values.weighted(self.kern, w, first + n(0), n(i) - n(0), span, o, true);
            }
            slot.copy_from_slice(o);
        }
    }
}

/// The keys of one KV head, a range of blocks of [`BLOCK`] positions.
struct Keys<'a> {
    kt: &'a [f32],
    cap: usize,
    g: usize,
    blocks: std::ops::Range<usize>,
    hd: usize,
}

impl Keys<'_> {
    /// `s[h·span + 16·i + l] = Σ_d q[h·hd + d] · k[16·(first block + i) + l][d]` for each head `h`
    /// of the group (`span` = 16 · blocks), fused multiply-adds over `d` in order from 0 (the
    /// kernels' [`Kernels::block_scores`]).
    #[inline(always)]
    fn scores(&self, kern: &Kernels, q: &[f32], s: &mut [f32]) {
        let hd = self.hd;
        let start = key_index(self.cap, hd, self.g, 0, self.blocks.start * BLOCK);
        let keys = &self.kt[start..start + self.blocks.len() * hd * BLOCK];
        kern.block_scores(q, hd, keys, self.blocks.len(), s);
    }
}

/// The values of one KV head.
struct Values<'a> {
    v: &'a [f32],
    cap: usize,
    g: usize,
    hd: usize,
}

impl Values<'_> {
    /// `o[h·hd + d] (+)= Σ_j w[h·w_stride + j] · v[first + j][d]` over `j < n` for each head `h`,
    /// fused multiply-adds over positions in order, from 0 or `continued` from `o` (the kernels'
    /// [`Kernels::weighted_rows`]).
    #[allow(clippy::too_many_arguments)]
    #[inline(always)]
    fn weighted(
        &self,
        kern: &Kernels,
        w: &[f32],
        first: usize,
        n: usize,
        w_stride: usize,
        o: &mut [f32],
        continued: bool,
    ) {
        let hd = self.hd;
        let start = value_index(self.cap, hd, self.g, 0, first);
        kern.weighted_rows(w, n, w_stride, &self.v[start..start + n * hd], o, hd, continued);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn attention_over_one_position_returns_its_value() {
        let (hd, heads, kvh) = (4, 2, 1);
        let q = vec![0.3f32; heads * hd];
        let (kt, mut v) = (vec![1.0f32; kvh * hd * BLOCK], vec![0f32; kvh * hd * BLOCK]);
        v[..4].copy_from_slice(&[0.5, -1.0, 2.0, 4.0]);
        let mut out = vec![0f32; heads * hd];
        attention(&Kernels::reference(), &q, &KvView { kt: &kt, v: &v, cap: BLOCK }, 0, heads, kvh, hd, None, &mut out);
        assert_eq!(out, [&v[..4], &v[..4]].concat());
    }

    #[test]
    fn attention_matches_a_plain_softmax_and_respects_the_window() {
        let (hd, heads, kvh, n) = (4, 4, 2, 5);
        let f = |i: usize| ((i * 37 % 11) as f32 - 5.0) / 4.0;
        let q: Vec<f32> = (0..heads * hd).map(f).collect();
        let k: Vec<f32> = (0..n * kvh * hd).map(|i| f(i + 3)).collect();
        let v: Vec<f32> = (0..n * kvh * hd).map(|i| f(i + 7)).collect();
        let cap = BLOCK;
        let (mut kt, mut vv) = (vec![0f32; kvh * hd * cap], vec![0f32; kvh * hd * cap]);
        for p in 0..n {
            for g in 0..kvh {
                for d in 0..hd {
                    kt[key_index(cap, hd, g, d, p)] = k[p * kvh * hd + g * hd + d];
                    vv[value_index(cap, hd, g, d, p)] = v[p * kvh * hd + g * hd + d];
                }
            }
        }
        // Every kernel table this CPU runs gives the same bits as the reference.
        let mut want_bits = None;
        for (kern, window) in Kernels::candidates().iter().flat_map(|k| [(k, None), (k, Some(2))]) {
            let mut out = vec![0f32; heads * hd];
            let view = KvView { kt: &kt, v: &vv, cap };
            attention(kern, &q, &view, n - 1, heads, kvh, hd, window, &mut out);
            if window.is_none() {
                let bits: Vec<u32> = out.iter().map(|x| x.to_bits()).collect();
                assert_eq!(want_bits.get_or_insert_with(|| bits.clone()), &bits, "{}", kern.name());
            }
            let first = window.map_or(0, |w| n - w);
            for h in 0..heads {
                let g = h / (heads / kvh);
                let s: Vec<f64> = (first..n)
                    .map(|p| (0..hd).map(|d| (q[h * hd + d] * k[p * kvh * hd + g * hd + d]) as f64).sum::<f64>() / 2.0)
                    .collect();
                let m = s.iter().cloned().fold(f64::MIN, f64::max);
                let z: f64 = s.iter().map(|x| (x - m).exp()).sum();
                for d in 0..hd {
                    let want: f64 =
                        (first..n).zip(&s).map(|(p, x)| (x - m).exp() / z * v[p * kvh * hd + g * hd + d] as f64).sum();
                    assert!((out[h * hd + d] as f64 - want).abs() < 1e-5, "{window:?} head {h} dim {d}");
                }
            }
        }
    }

    #[test]
    fn rows_attended_together_equal_rows_attended_alone() {
        // Enough rows for several groups of QUERY_ROWS, a ragged last group, a cache that
        // already holds positions, and windows that start cutting inside a group.
        let (hd, heads, kvh, past, rows) = (24, 6, 2, 5, 2 * QUERY_ROWS + 3);
        let cap = (past + rows).next_multiple_of(BLOCK);
        let f = |i: usize| (((i * 2654435761) >> 9) % 997) as f32 / 499.0 - 1.0;
        let q: Vec<f32> = (0..rows * heads * hd).map(|i| f(i + 1)).collect();
        let kt: Vec<f32> = (0..kvh * hd * cap).map(|i| f(i + 5)).collect();
        let v: Vec<f32> = (0..kvh * hd * cap).map(|i| f(i + 9)).collect();
        let kv = KvView { kt: &kt, v: &v, cap };
        for kern in &Kernels::candidates() {
            for window in [None, Some(9), Some(past + QUERY_ROWS + 2), Some(1)] {
                let mut all = vec![f32::NAN; rows * heads * hd];
                attention(kern, &q, &kv, past, heads, kvh, hd, window, &mut all);
                for r in 0..rows {
                    let mut one = vec![f32::NAN; heads * hd];
                    let qr = &q[r * heads * hd..(r + 1) * heads * hd];
                    attention(kern, qr, &kv, past + r, heads, kvh, hd, window, &mut one);
                    let got = &all[r * heads * hd..(r + 1) * heads * hd];
                    assert!(
                        one.iter().zip(got).all(|(a, b)| a.to_bits() == b.to_bits()),
                        "{} window {window:?} row {r}",
                        kern.name()
                    );
                }
            }
        }
    }

    #[test]
    fn fast_exp_is_within_two_ulp() {
        let mut x = -87.0f32;
        while x < 87.9 {
            let want = (x as f64).exp();
            let got = exp(x) as f64;
            assert!(((got - want) / want).abs() < 2.5e-7, "exp({x}) = {got}, want {want}");
            x += 0.0137;
        }
        assert_eq!(exp(0.0), 1.0);
        assert!(exp(-1000.0) >= 0.0 && exp(-1000.0) < 1e-37);
        assert!(exp(1000.0).is_finite());
    }

    #[test]
    fn rms_norm_matches_definition() {
        let x = [1.0f32, 2.0, 3.0, 4.0];
        let w = [1.0f32, 0.5, 2.0, 1.0];
        let mut o = [0f32; 4];
        rms_norm(&x, &w, 0.0, &mut o);
        let r = (30.0f32 / 4.0).sqrt();
        for i in 0..4 {
            assert!((o[i] - w[i] * x[i] / r).abs() < 1e-6);
        }
    }
}
