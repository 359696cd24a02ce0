//! The KV cache of one sequence: keys and values of every position seen so far, per layer.
//! Trimming it back to any length is what speculative decoding does after each verification.
//!
//! Layout, per layer, with room for `cap` positions (a multiple of [`BLOCK`]):
//! - keys in blocks of 16 positions per KV head, each block `head_dim × 16` (dimension-major):
//!   the scores of a query against 16 positions are 16 running sums fed by one contiguous run,
//!   which the compiler vectorises and the prefetcher streams;
//! - values per KV head, position-major (`[kv_head][position][dim]`): the weighted sum over
//!   positions walks one head's values with a constant stride.
//!
//! Positions past `len` hold stale numbers that attention never uses.

use rayon::prelude::*;

/// Positions per key block.
pub(crate) const BLOCK: usize = reseam_kernels::scalar::KEY_BLOCK;

/// Keys and values of one layer.
#[derive(Clone, Debug, Default)]
pub(crate) struct LayerKv {
    pub kt: Vec<f32>,
    pub v: Vec<f32>,
}

/// One sequence's state. Made by [`crate::llm::Model::new_cache`]; only that model can use it.
#[derive(Clone, Debug)]
pub struct KvCache {
    pub(crate) model_id: u64,
    pub(crate) kv_heads: usize,
    pub(crate) head_dim: usize,
    pub(crate) layers: Vec<LayerKv>,
    pub(crate) len: usize,
    /// Positions there is room for.
    pub(crate) cap: usize,
}

/// Where key `d` of position `p` of KV head `g` is, for a cache of `cap` positions.
#[inline(always)]
pub(crate) fn key_index(cap: usize, hd: usize, g: usize, d: usize, p: usize) -> usize {
    ((g * (cap / BLOCK) + p / BLOCK) * hd + d) * BLOCK + p % BLOCK
}

/// Where value `d` of position `p` of KV head `g` is.
#[inline(always)]
pub(crate) fn value_index(cap: usize, hd: usize, g: usize, d: usize, p: usize) -> usize {
    (g * cap + p) * hd + d
}

impl KvCache {
    pub(crate) fn new(model_id: u64, layers: usize, kv_heads: usize, head_dim: usize) -> KvCache {
        KvCache { model_id, kv_heads, head_dim, layers: vec![LayerKv::default(); layers], len: 0, cap: 0 }
    }

    /// Positions held (the next token fed goes to this position).
    pub fn len(&self) -> usize {
        self.len
    }

    pub fn is_empty(&self) -> bool {
        self.len == 0
    }

    /// Forgets every position from `len` on; a no-op if the cache is not longer than `len`.
    pub fn truncate(&mut self, len: usize) {
        self.len = self.len.min(len);
    }

    /// Drops `n` positions from the end (at most all of them).
    pub fn trim(&mut self, n: usize) {
        self.truncate(self.len.saturating_sub(n));
    }

    pub fn clear(&mut self) {
        self.truncate(0);
    }

    /// Memory held by keys and values.
    pub fn bytes(&self) -> usize {
        self.layers.iter().map(|l| (l.kt.len() + l.v.len()) * 4).sum()
    }

    /// Makes room for `extra` more positions in every layer, doubling (so appending stays
    /// amortised O(1)) and moving what is held into the new layout.
    pub(crate) fn reserve(&mut self, extra: usize) {
        let need = self.len + extra;
        if need <= self.cap {
            return;
        }
        let cap = need.max(2 * self.cap).max(64).next_multiple_of(BLOCK);
        let (hd, old) = (self.head_dim, self.cap);
        let (head_old, head_new) = (old * hd, cap * hd);
        let blocks = self.len.div_ceil(BLOCK) * BLOCK * hd;
        for l in &mut self.layers {
            let mut kt = vec![0f32; self.kv_heads * head_new];
            let mut v = vec![0f32; self.kv_heads * head_new];
            for g in 0..self.kv_heads {
                // Both layouts keep a head's positions in one run from its start.
                kt[g * head_new..g * head_new + blocks].copy_from_slice(&l.kt[g * head_old..g * head_old + blocks]);
                let used = self.len * hd;
                v[g * head_new..g * head_new + used].copy_from_slice(&l.v[g * head_old..g * head_old + used]);
            }
            l.kt = kt;
            l.v = v;
        }
        self.cap = cap;
    }

    /// Writes `k`, `v` (`rows × kv_heads · head_dim` each) at positions `at..` of one layer,
    /// each KV head on its own thread for a prefill. Room must have been reserved.
    pub(crate) fn append(&mut self, layer: usize, at: usize, k: &[f32], v: &[f32]) {
        let (hd, cap, kvh) = (self.head_dim, self.cap, self.kv_heads);
        let l = &mut self.layers[layer];
        let head = |(g, (kt, vs)): (usize, (&mut [f32], &mut [f32]))| {
            for (r, (kr, vr)) in k.chunks_exact(kvh * hd).zip(v.chunks_exact(kvh * hd)).enumerate() {
                // Indices within the head's own part of the layout (`g = 0`).
                for (d, &x) in kr[g * hd..(g + 1) * hd].iter().enumerate() {
                    kt[key_index(cap, hd, 0, d, at + r)] = x;
                }
                let start = value_index(cap, hd, 0, 0, at + r);
                vs[start..start + hd].copy_from_slice(&vr[g * hd..(g + 1) * hd]);
            }
        };
        let (kt, vs) = (&mut l.kt[..kvh * cap * hd], &mut l.v[..kvh * cap * hd]);
        if k.len() >= PARALLEL_ROWS * kvh * hd {
            kt.par_chunks_exact_mut(cap * hd).zip(vs.par_chunks_exact_mut(cap * hd)).enumerate().for_each(head);
        } else {
            kt.chunks_exact_mut(cap * hd).zip(vs.chunks_exact_mut(cap * hd)).enumerate().for_each(head);
        }
    }
}

/// Rows from which [`KvCache::append`] writes the KV heads in parallel.
const PARALLEL_ROWS: usize = 32;

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn keys_and_values_survive_growth_and_trimming() {
        let (heads, hd) = (2, 3);
        let mut c = KvCache::new(1, 2, heads, hd);
        let mut all = Vec::new();
        for step in 0..150 {
            c.reserve(1);
            let k: Vec<f32> = (0..heads * hd).map(|d| (step * 10 + d) as f32).collect();
            for l in 0..2 {
                c.append(l, c.len, &k, &k);
            }
            c.len += 1;
            all.push(k);
        }
        assert!(c.cap >= 150 && c.cap.is_multiple_of(BLOCK));
        for (p, k) in all.iter().enumerate() {
            for g in 0..heads {
                for d in 0..hd {
                    assert_eq!(c.layers[1].kt[key_index(c.cap, hd, g, d, p)], k[g * hd + d]);
                    assert_eq!(c.layers[1].v[value_index(c.cap, hd, g, d, p)], k[g * hd + d]);
                }
            }
        }
        c.trim(1);
        assert_eq!(c.len(), 149);
        c.truncate(1000);
        assert_eq!(c.len(), 149);
        c.trim(1000);
        assert!(c.is_empty());
    }
}
