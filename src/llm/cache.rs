//! The KV cache of one sequence: keys and values of every position seen so far, per layer.
//! Trimming it back to any length is what speculative decoding does after each verification.

/// Keys and values of one layer, `positions × kv_heads × head_dim`, position-major so that
/// appending and trimming are `Vec` operations.
#[derive(Clone, Debug, Default)]
pub(crate) struct LayerKv {
    pub k: Vec<f32>,
    pub v: Vec<f32>,
}

/// One sequence's state. Made by [`crate::llm::Model::new_cache`]; only that model can use it.
#[derive(Clone, Debug)]
pub struct KvCache {
    pub(crate) model_id: u64,
    pub(crate) kv_dim: usize,
    pub(crate) layers: Vec<LayerKv>,
    pub(crate) len: usize,
}

impl KvCache {
    pub(crate) fn new(model_id: u64, layers: usize, kv_dim: usize) -> KvCache {
        KvCache { model_id, kv_dim, layers: vec![LayerKv::default(); layers], len: 0 }
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
        if len >= self.len {
            return;
        }
        for l in &mut self.layers {
            l.k.truncate(len * self.kv_dim);
            l.v.truncate(len * self.kv_dim);
        }
        self.len = len;
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
        self.layers.iter().map(|l| (l.k.len() + l.v.len()) * 4).sum()
    }

    pub(crate) fn append(&mut self, layer: usize, k: &[f32], v: &[f32]) {
        let l = &mut self.layers[layer];
        l.k.extend_from_slice(k);
        l.v.extend_from_slice(v);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn truncate_and_trim_cut_every_layer() {
        let mut c = KvCache::new(1, 2, 3);
        for l in 0..2 {
            c.append(l, &[1.0; 12], &[2.0; 12]);
        }
        c.len = 4;
        c.trim(1);
        assert_eq!(c.len(), 3);
        assert!(c.layers.iter().all(|l| l.k.len() == 9 && l.v.len() == 9));
        c.truncate(10);
        assert_eq!(c.len(), 3);
        c.trim(99);
        assert!(c.is_empty() && c.bytes() == 0);
    }
}
