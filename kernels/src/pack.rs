//! The one packed weight layout. Every kernel reads it as it is; pack and unpack live side by side.
//!
//! `B` is `k × n` (inner dimension `k`, output columns `n`). It is padded with zeros to
//! `k_padded = k` rounded up to [`K_BLOCK`] (64) and `n_padded = n` rounded up to [`N_BLOCK`]
//! (16), then stored as column blocks of 16, each a run of 64-byte "quads":
//!
//! ```text
//! block nb (columns 16·nb .. 16·nb+15), quad g (inner indices 4g .. 4g+3):
//!
//!   byte:   0    1    2    3    4    5    6    7   ...  60   61   62   63
//!   holds: B[4g][c0] B[4g+1][c0] B[4g+2][c0] B[4g+3][c0]  B[4g][c1] ...   B[4g+3][c15]
//!
//! offset of (nb, g) = (nb · k_padded/4 + g) · 64
//! ```
//!
//! Why this shape: one quad is exactly one operand of every int8 dot-product instruction we use.
//! AVX-512 VNNI `vpdpbusd` takes it as one zmm (16 lanes × 4 bytes); AVX2 and AVX-VNNI take it as
//! two ymm (columns 0–7 and 8–15); NEON `sdot`/`usdot` as four q registers; AMX reads 16
//! consecutive quads of a block as one B tile in its VNNI layout (16 rows of 64 bytes = 64 inner
//! indices × 16 columns), hence `k` is padded to 64. Pairs `(4g, 4g+1)` and `(4g+2, 4g+3)` are the
//! adjacent inner indices that `maddubs` saturates together, so the saturating arithmetic needs
//! no other layout.

use std::sync::Arc;

/// Inner-dimension padding: one AMX tile row holds 64 bytes.
pub const K_BLOCK: usize = 64;
/// Columns per block: one zmm of int32 accumulators.
pub const N_BLOCK: usize = 16;
/// Bytes of one quad (4 inner indices × 16 columns).
pub const QUAD: usize = 64;

/// 16 entries of `v` from `j0`, zero past its end: a block's column scales, sums or bias, or the
/// tail of a row.
#[inline]
pub(crate) fn block_values<T: Copy + Default>(v: &[T], j0: usize) -> [T; N_BLOCK] {
    // A whole block is a copy of known size, which compiles to a few vector moves; the slice
    // copy below calls memcpy, which took 5% of a one-row LLM decode (once per block and call).
    if let Some(Ok(whole)) = v.get(j0..j0 + N_BLOCK).map(<[T; N_BLOCK]>::try_from) {
        return whole;
    }
    let mut out = [T::default(); N_BLOCK];
    let end = v.len().min(j0 + N_BLOCK);
    out[..end - j0].copy_from_slice(&v[j0..end]);
    out
}

/// How far ahead of its loads a kernel prefetches a block's packed bytes: decoding reads each
/// block once from DRAM, and a lone sequential stream otherwise waits on every line. 8 KB
/// rather than 4: AVX2 decode 2–5% faster (three alternating runs in one process), AVX-VNNI
/// decode and the AMX prefill unchanged.
#[cfg(target_arch = "x86_64")]
pub(crate) const PREFETCH: usize = 8192;

/// Zero-initialised bytes that start on a 64-byte boundary: a cache line, a zmm register, an AMX
/// tile row. Kernels read 64-byte quads and tile rows from such buffers without loads split
/// across cache lines (which cost AMX tile loads about twice the time). Use it for activation
/// rows too, with a stride that is a multiple of 64 (`k_padded` is).
#[derive(Clone)]
pub struct AlignedBytes {
    lines: Vec<Line>,
    len: usize,
}

#[derive(Clone, Copy)]
#[repr(C, align(64))]
struct Line([u8; 64]);

impl AlignedBytes {
    pub fn zeroed(len: usize) -> AlignedBytes {
        AlignedBytes { lines: vec![Line([0; 64]); len.div_ceil(64)], len }
    }
}

impl std::ops::Deref for AlignedBytes {
    type Target = [u8];
    fn deref(&self) -> &[u8] {
        // SAFETY: `lines` holds at least `len` initialised bytes, contiguous (`Line` is a
        // 64-byte `repr(C)` array with no padding), borrowed for as long as `self`.
        unsafe { std::slice::from_raw_parts(self.lines.as_ptr().cast::<u8>(), self.len) }
    }
}

impl std::ops::DerefMut for AlignedBytes {
    fn deref_mut(&mut self) -> &mut [u8] {
        // SAFETY: as in `deref`, borrowed mutably for as long as `self` is.
        unsafe { std::slice::from_raw_parts_mut(self.lines.as_mut_ptr().cast::<u8>(), self.len) }
    }
}

impl std::fmt::Debug for AlignedBytes {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("AlignedBytes").field("len", &self.len).finish()
    }
}

/// Where packed bytes live: owned, or borrowed from something shared such as a memory map.
#[derive(Clone)]
enum Storage {
    Owned(AlignedBytes),
    Shared { owner: Arc<dyn AsRef<[u8]> + Send + Sync>, start: usize, len: usize },
}

impl Storage {
    fn bytes(&self) -> &[u8] {
        match self {
            Storage::Owned(b) => b,
            Storage::Shared { owner, start, len } => &(**owner).as_ref()[*start..*start + *len],
        }
    }
}

/// Weights in the packed layout, with their column sums (which Marian's bias correction and the
/// LLM zero-point fix both need).
#[derive(Clone)]
pub struct PackedB {
    k: usize,
    n: usize,
    storage: Storage,
    col_sums: Vec<i32>,
}

impl std::fmt::Debug for PackedB {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("PackedB").field("k", &self.k).field("n", &self.n).finish()
    }
}

/// Padded sizes for a `k × n` matrix.
pub fn padded(k: usize, n: usize) -> (usize, usize) {
    (k.div_ceil(K_BLOCK) * K_BLOCK, n.div_ceil(N_BLOCK) * N_BLOCK)
}

/// Bytes the packed form of a `k × n` matrix takes.
pub fn packed_len(k: usize, n: usize) -> usize {
    let (kp, np) = padded(k, n);
    kp * np
}

#[inline]
fn offset(kp: usize, kk: usize, j: usize) -> usize {
    let (nb, c) = (j / N_BLOCK, j % N_BLOCK);
    let (g, r) = (kk / 4, kk % 4);
    (nb * (kp / 4) + g) * QUAD + c * 4 + r
}

impl PackedB {
    /// Packs `B` given transposed: `bt` is row-major `n × k` (row `j` holds column `j` of `B`).
    /// This is how Marian stores int8 weights and how Hugging Face stores `[out, in]` matrices.
    pub fn from_transposed(bt: &[i8], k: usize, n: usize) -> PackedB {
        assert_eq!(bt.len(), k * n, "transposed weights must hold k·n values");
        Self::build(k, n, |kk, j| bt[j * k + kk])
    }

    /// Packs `B` given row-major `k × n`.
    pub fn from_rows(b: &[i8], k: usize, n: usize) -> PackedB {
        assert_eq!(b.len(), k * n, "weights must hold k·n values");
        Self::build(k, n, |kk, j| b[kk * n + j])
    }

    fn build(k: usize, n: usize, get: impl Fn(usize, usize) -> i8) -> PackedB {
        let (kp, np) = padded(k, n);
        let mut data = AlignedBytes::zeroed(kp * np);
        let mut col_sums = vec![0i32; n];
        for (j, sum) in col_sums.iter_mut().enumerate() {
            for kk in 0..k {
                let v = get(kk, j);
                data[offset(kp, kk, j)] = v as u8;
                *sum += v as i32;
            }
        }
        PackedB { k, n, storage: Storage::Owned(data), col_sums }
    }

    /// Wraps bytes that are already packed (e.g. a region of a memory-mapped file written from
    /// [`PackedB::as_bytes`]). Fails if the region has the wrong length. Any `start` works; one
    /// on a 64-byte boundary of a page-aligned map keeps the kernels' loads whole (see
    /// [`AlignedBytes`]). `col_sums` must be the bytes' column sums, as [`PackedB::col_sums`]
    /// gave them when the bytes were written: the one-row AVX2 kernel forms its exact products
    /// from them.
    pub fn from_shared(
        owner: Arc<dyn AsRef<[u8]> + Send + Sync>,
        start: usize,
        k: usize,
        n: usize,
        col_sums: Vec<i32>,
    ) -> Result<PackedB, String> {
        let len = packed_len(k, n);
        let have = (*owner).as_ref().len();
        if start.checked_add(len).is_none_or(|end| end > have) {
            return Err(format!("packed {k}×{n} weights need {len} bytes at {start}, the buffer has {have}"));
        }
        if col_sums.len() != n {
            return Err(format!("{} column sums for {n} columns", col_sums.len()));
        }
        Ok(PackedB { k, n, storage: Storage::Shared { owner, start, len }, col_sums })
    }

    /// Inner dimension.
    pub fn k(&self) -> usize {
        self.k
    }
    /// Output columns.
    pub fn n(&self) -> usize {
        self.n
    }
    /// Inner dimension rounded up to [`K_BLOCK`]: the activation stride must be at least this.
    pub fn k_padded(&self) -> usize {
        padded(self.k, self.n).0
    }
    /// Columns rounded up to [`N_BLOCK`].
    pub fn n_padded(&self) -> usize {
        padded(self.k, self.n).1
    }
    /// `Σ_k B[k][j]` for every column.
    pub fn col_sums(&self) -> &[i32] {
        &self.col_sums
    }
    /// `127 · Σ_k B[k][j]` for every column: the epilogue's `zero_fix` for activations from
    /// [`crate::Kernels::quantize`], which shifts them by +127.
    pub fn zero_fix(&self) -> Vec<i32> {
        self.col_sums.iter().map(|s| s.wrapping_mul(127)).collect()
    }
    /// The packed bytes (i8 values stored as u8), in the layout drawn above.
    pub fn as_bytes(&self) -> &[u8] {
        self.storage.bytes()
    }

    /// `B[kk][j]`.
    #[inline]
    pub fn get(&self, kk: usize, j: usize) -> i8 {
        self.as_bytes()[offset(self.k_padded(), kk, j)] as i8
    }

    /// The inverse of [`PackedB::from_transposed`]: row-major `n × k`.
    pub fn unpack_transposed(&self) -> Vec<i8> {
        let mut bt = vec![0i8; self.n * self.k];
        for j in 0..self.n {
            for kk in 0..self.k {
                bt[j * self.k + kk] = self.get(kk, j);
            }
        }
        bt
    }

    /// A new matrix made of the given columns, in the given order (the output layer restricted to
    /// a sentence's shortlist).
    pub fn select_columns(&self, cols: &[u32]) -> PackedB {
        let k = self.k;
        Self::build(k, cols.len(), |kk, j| self.get(kk, cols[j] as usize))
    }

    /// Matrices with the same inner dimension side by side: `[B0 | B1 | ...]` (Q, K and V as one
    /// product).
    /// Column blocks packed separately (e.g. on several threads) joined into one matrix by
    /// copying their bytes, which line up because every part but the last holds whole blocks of
    /// [`N_BLOCK`] columns.
    pub fn join(parts: &[PackedB]) -> PackedB {
        assert!(!parts.is_empty(), "join of nothing");
        let k = parts[0].k;
        assert!(parts.iter().all(|p| p.k == k), "join needs one inner dimension");
        assert!(
            parts[..parts.len() - 1].iter().all(|p| p.n.is_multiple_of(N_BLOCK)),
            "join needs whole column blocks in every part but the last"
        );
        let n = parts.iter().map(|p| p.n).sum();
        let mut data = AlignedBytes::zeroed(packed_len(k, n));
        let mut at = 0;
        let mut col_sums = Vec::with_capacity(n);
        for p in parts {
            let b = p.as_bytes();
            data[at..at + b.len()].copy_from_slice(b);
            at += b.len();
            col_sums.extend_from_slice(&p.col_sums);
        }
        debug_assert_eq!(at, data.len());
        PackedB { k, n, storage: Storage::Owned(data), col_sums }
    }

    pub fn concat(parts: &[&PackedB]) -> PackedB {
        assert!(!parts.is_empty(), "concat of nothing");
        let k = parts[0].k;
        assert!(parts.iter().all(|p| p.k == k), "concat needs one inner dimension");
        let mut owners = Vec::new();
        for (i, p) in parts.iter().enumerate() {
            owners.extend(std::iter::repeat_n(i, p.n).zip(0..p.n));
        }
        Self::build(k, owners.len(), |kk, j| {
            let (part, col) = owners[j];
            parts[part].get(kk, col)
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn joined_blocks_equal_the_matrix_packed_whole() {
        for &(k, n, cut) in &[(1, 17, 16), (65, 40, 32), (130, 33, 16), (64, 48, 48)] {
            let bt: Vec<i8> = (0..k * n).map(|i| ((i * 53 + 7) % 255) as i32 as i8).collect();
            let whole = PackedB::from_transposed(&bt, k, n);
            let parts: Vec<PackedB> = (0..n)
                .step_by(cut)
                .map(|c0| {
                    let c1 = (c0 + cut).min(n);
                    PackedB::from_transposed(&bt[c0 * k..c1 * k], k, c1 - c0)
                })
                .collect();
            let joined = PackedB::join(&parts);
            assert_eq!(joined.as_bytes(), whole.as_bytes(), "{k}×{n} cut {cut}");
            assert_eq!(joined.col_sums(), whole.col_sums(), "{k}×{n} cut {cut}");
        }
    }

    #[test]
    fn pack_unpack_round_trip_with_ragged_sizes() {
        for &(k, n) in &[(1, 1), (3, 5), (64, 16), (65, 17), (88, 33), (256, 256)] {
            let bt: Vec<i8> = (0..k * n).map(|i| ((i * 37 + 11) % 255) as i32 as i8).collect();
            let p = PackedB::from_transposed(&bt, k, n);
            assert_eq!(p.unpack_transposed(), bt, "{k}×{n}");
            assert_eq!(p.as_bytes().len(), packed_len(k, n));
            for j in 0..n {
                let s: i32 = (0..k).map(|kk| bt[j * k + kk] as i32).sum();
                assert_eq!(p.col_sums()[j], s);
            }
        }
    }

    #[test]
    fn quad_holds_four_inner_indices_of_sixteen_columns() {
        let (k, n) = (64, 32);
        let b: Vec<i8> = (0..k * n).map(|i| (i % 127) as i8).collect();
        let p = PackedB::from_rows(&b, k, n);
        let bytes = p.as_bytes();
        // block 1 (columns 16..31), quad 2 (inner 8..11), column 16+3, inner 10
        let at = (16 + 2) * QUAD + 3 * 4 + 2;
        assert_eq!(bytes[at] as i8, b[10 * n + 19]);
    }

    #[test]
    fn packed_bytes_start_on_a_cache_line() {
        for len in [0, 1, 63, 64, 65, 4096 + 3] {
            let b = AlignedBytes::zeroed(len);
            assert_eq!(b.len(), len);
            assert!(b.iter().all(|&x| x == 0));
            assert_eq!(b.as_ptr() as usize % 64, 0);
        }
        let p = PackedB::from_rows(&[1; 7 * 9], 7, 9);
        assert_eq!(p.as_bytes().as_ptr() as usize % 64, 0);
    }

    #[test]
    fn select_and_concat_keep_values() {
        let (k, n) = (70, 40);
        let bt: Vec<i8> = (0..k * n).map(|i| ((i * 13) % 251) as i32 as i8).collect();
        let p = PackedB::from_transposed(&bt, k, n);
        let s = p.select_columns(&[39, 0, 17]);
        for kk in 0..k {
            assert_eq!(s.get(kk, 0), p.get(kk, 39));
            assert_eq!(s.get(kk, 2), p.get(kk, 17));
        }
        let c = PackedB::concat(&[&p, &s]);
        assert_eq!(c.n(), 43);
        assert_eq!(c.get(5, 41), p.get(5, 0));
        assert_eq!(c.col_sums()[40], p.col_sums()[39]);
    }
}
