//! The linear layer: `y = x · Wᵀ + b` with the weight in one of three formats. The format is a
//! property of the layer, never of the model: every architecture calls [`Linear::forward`].
//!
//! int8: each output row of `W` (a column of the kernels' `B`) is quantized with its own scale
//! (`max |w| / 127`, rounding half to even); activations are quantized per token the same way at
//! run time; the kernels accumulate exactly in int32, subtract `127 · colsum` (the activations'
//! +127 shift) and multiply by `token scale · row scale`. The packed matrix is kept as column
//! blocks so threads can split a product by columns: at one token (decode) every weight byte is
//! read once, by one core.

use rayon::prelude::*;
use reseam_kernels::{Arithmetic, Epilogue, GemmTask, Output, PackedB, QuantizedA, Scale, Split};

use super::Result;
use super::gemm::{self, WeightElem};
use crate::pack;

/// How weights are held and multiplied.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, serde::Serialize, serde::Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Precision {
    /// f32 weights and arithmetic: for checking against Transformers.
    F32,
    /// bf16 weights widened to f32 in the product (exact for bf16 checkpoints), f32 arithmetic.
    Bf16,
    /// int8 weights per output row, int8 activations per token, exact int32 products.
    Int8,
}

impl Precision {
    pub fn name(self) -> &'static str {
        match self {
            Precision::F32 => "f32",
            Precision::Bf16 => "bf16",
            Precision::Int8 => "int8",
        }
    }

    pub fn parse(s: &str) -> Option<Precision> {
        match s.trim().to_ascii_lowercase().as_str() {
            "f32" | "float32" | "fp32" => Some(Precision::F32),
            "bf16" | "bfloat16" => Some(Precision::Bf16),
            "int8" | "i8" | "q8" => Some(Precision::Int8),
            _ => None,
        }
    }
}

impl std::fmt::Display for Precision {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.name())
    }
}

/// Bumped whenever int8 quantization changes, so older packed files are rebuilt.
pub const QUANTIZATION: &str = "int8-per-row-absmax-rne-v1";

/// Quantizes one weight row: returns the scale (`max |w| / 127`; 0 for an all-zero row).
pub fn quantize_row(w: &[f32], out: &mut [i8]) -> f32 {
    let amax = w.iter().fold(0f32, |m, v| m.max(v.abs()));
    if amax == 0.0 || !amax.is_finite() {
        out.iter_mut().for_each(|o| *o = 0);
        return if amax == 0.0 { 0.0 } else { f32::NAN };
    }
    let inv = 127.0 / amax;
    // Adding and subtracting 1.5 · 2^23 rounds half to even like `round_ties_even` (exactly, for
    // |t| <= 127 < 2^22) but compiles to two adds instead of a libm call per weight.
    const ROUND: f32 = 12_582_912.0;
    for (o, v) in out.iter_mut().zip(w) {
        *o = (((v * inv) + ROUND) - ROUND).clamp(-127.0, 127.0) as i8;
    }
    amax / 127.0
}

/// Columns per block of a packed matrix: about four blocks per thread, whole 16-column groups.
fn block_cols(n: usize) -> usize {
    let target = 4 * rayon::current_num_threads().max(1);
    n.div_ceil(target).next_multiple_of(reseam_kernels::pack::N_BLOCK).clamp(16, 1024)
}

/// An int8 matrix in the kernels' packed layout.
pub struct Int8Matrix {
    k: usize,
    n: usize,
    packed: PackedB,
    scales: Vec<f32>,
    zero_fix: Vec<i32>,
}

impl Int8Matrix {
    /// Quantizes and packs `n` rows of length `k` given by `row(j, out)`.
    pub fn quantize(k: usize, n: usize, row: &(dyn Fn(usize, &mut [f32]) + Sync)) -> Int8Matrix {
        // Packed by column blocks on every thread, then joined.
        let bc = block_cols(n);
        let parts: Vec<(PackedB, Vec<f32>)> = (0..n.div_ceil(bc))
            .into_par_iter()
            .map(|b| {
                let (c0, c1) = (b * bc, ((b + 1) * bc).min(n));
                let mut q = vec![0i8; (c1 - c0) * k];
                let mut f = vec![0f32; k];
                let mut scales = Vec::with_capacity(c1 - c0);
                for (j, qr) in (c0..c1).zip(q.chunks_exact_mut(k)) {
                    row(j, &mut f);
                    scales.push(quantize_row(&f, qr));
                }
                (PackedB::from_transposed(&q, k, c1 - c0), scales)
            })
            .collect();
        let (blocks, scales): (Vec<PackedB>, Vec<Vec<f32>>) = parts.into_iter().unzip();
        Self::assemble(k, n, PackedB::join(&blocks), scales.concat())
    }

    fn assemble(k: usize, n: usize, packed: PackedB, scales: Vec<f32>) -> Int8Matrix {
        let zero_fix = packed.zero_fix();
        Int8Matrix { k, n, packed, scales, zero_fix }
    }

    /// Writes the matrix as `name` (packed bytes), `name.scales` and `name.col_sums`.
    pub fn write(&self, w: &mut pack::Writer, name: &str) -> std::result::Result<(), pack::Error> {
        w.add_parts(name, pack::Dtype::PackedI8, &[self.k, self.n], &[self.packed.as_bytes()])?;
        w.add_f32(&format!("{name}.scales"), &[self.n], &self.scales)?;
        w.add_i32(&format!("{name}.col_sums"), &[self.n], self.packed.col_sums())
    }

    /// Reads a matrix written by [`Int8Matrix::write`], borrowing the packed bytes from the map.
    pub fn read(f: &pack::PackFile, name: &str, k: usize, n: usize) -> std::result::Result<Int8Matrix, pack::Error> {
        let scales = f.f32s(&format!("{name}.scales"), &[n])?;
        let col_sums = f.i32s(&format!("{name}.col_sums"), &[n])?;
        let start = f.offset(name, pack::Dtype::PackedI8, &[k, n])?;
        let packed = PackedB::from_shared(f.shared_map(), start, k, n, col_sums)
            .map_err(|why| pack::Error::Format { path: f.path().to_path_buf(), why })?;
        Ok(Self::assemble(k, n, packed, scales))
    }

    fn bytes(&self) -> usize {
        self.packed.as_bytes().len() + self.n * 8
    }

    /// The matrix of the given output rows (columns of the kernels' `B`), in that order. Every
    /// row keeps its own scale and bytes, so its products are bit for bit those of the whole.
    fn select(&self, ids: &[u32]) -> Int8Matrix {
        let scales = ids.iter().map(|&j| self.scales[j as usize]).collect();
        Self::assemble(self.k, ids.len(), self.packed.select_columns(ids), scales)
    }
}

enum Weight {
    F32(Vec<f32>),
    Bf16(Vec<u16>),
    Int8(Int8Matrix),
}

/// An LLM's linear layer, `y = x · Wᵀ + b` for `W` of shape `[n, k]` (the translation models'
/// is another type, `marian::layers::linear::Linear`, over Mozilla's formats).
pub struct Linear {
    k: usize,
    n: usize,
    weight: Weight,
    bias: Option<Vec<f32>>,
}

impl Linear {
    /// Builds a layer in `precision` from rows given by `row(j, out)`.
    pub fn build(
        k: usize,
        n: usize,
        precision: Precision,
        bias: Option<Vec<f32>>,
        row: &(dyn Fn(usize, &mut [f32]) + Sync),
    ) -> Linear {
        let weight = match precision {
            Precision::F32 => {
                let mut w = vec![0f32; n * k];
                w.par_chunks_mut(k.max(1)).enumerate().for_each(|(j, r)| row(j, r));
                Weight::F32(w)
            }
            Precision::Bf16 => {
                let mut w = vec![0u16; n * k];
                w.par_chunks_mut(k.max(1)).enumerate().for_each(|(j, r)| {
                    let mut f = vec![0f32; k];
                    row(j, &mut f);
                    for (o, v) in r.iter_mut().zip(&f) {
                        *o = half::bf16::from_f32(*v).to_bits();
                    }
                });
                Weight::Bf16(w)
            }
            Precision::Int8 => Weight::Int8(Int8Matrix::quantize(k, n, row)),
        };
        Linear { k, n, weight, bias }
    }

    /// A layer over an int8 matrix read from a packed file.
    pub fn from_int8(m: Int8Matrix, bias: Option<Vec<f32>>) -> Linear {
        Linear { k: m.k, n: m.n, weight: Weight::Int8(m), bias }
    }

    /// The layer restricted to the output rows `ids` (each below `n`), in that order: the
    /// output of row `ids[i]` becomes column `i`, computed exactly as in the whole layer.
    pub fn select_outputs(&self, ids: &[u32]) -> Linear {
        let k = self.k;
        fn rows<T: Copy>(w: &[T], k: usize, ids: &[u32]) -> Vec<T> {
            ids.iter().flat_map(|&j| &w[j as usize * k..(j as usize + 1) * k]).copied().collect()
        }
        let weight = match &self.weight {
            Weight::F32(w) => Weight::F32(rows(w, k, ids)),
            Weight::Bf16(w) => Weight::Bf16(rows(w, k, ids)),
            Weight::Int8(m) => Weight::Int8(m.select(ids)),
        };
        let bias = self.bias.as_ref().map(|b| ids.iter().map(|&j| b[j as usize]).collect());
        Linear { k, n: ids.len(), weight, bias }
    }

    pub fn int8(&self) -> Option<&Int8Matrix> {
        match &self.weight {
            Weight::Int8(m) => Some(m),
            _ => None,
        }
    }

    pub fn k(&self) -> usize {
        self.k
    }
    pub fn n(&self) -> usize {
        self.n
    }

    /// Bytes of weights one forward reads (whatever the number of rows).
    pub fn weight_bytes(&self) -> usize {
        let w = match &self.weight {
            Weight::F32(w) => w.len() * 4,
            Weight::Bf16(w) => w.len() * 2,
            Weight::Int8(m) => m.bytes(),
        };
        w + self.bias.as_ref().map_or(0, |b| b.len() * 4)
    }

    /// `out (rows × n) = x (rows × k) · Wᵀ + b`.
    pub fn forward(&self, x: &[f32], rows: usize, out: &mut [f32]) -> Result<()> {
        self.forward_with(x, rows, out, &mut QuantizedRows::default())
    }

    /// [`Linear::forward`] of rows made on the fly by `make(r, row)` (a norm, an activation):
    /// an int8 layer quantizes each row as it is made, a float layer has them written into
    /// `floats` first. `scratch` and `floats` are a forward's working memory.
    pub fn forward_rows(
        &self,
        rows: usize,
        make: &RowMaker,
        out: &mut [f32],
        scratch: &mut QuantizedRows,
        floats: &mut Vec<f32>,
    ) -> Result<()> {
        debug_assert_eq!(out.len(), rows * self.n);
        let k = self.k;
        if let Weight::Int8(m) = &self.weight {
            let kernels = reseam_kernels::dispatch::kernels()?;
            scratch.fill_with(rows, k, reseam_kernels::pack::padded(k, m.n).0, make)?;
            return int8_product(kernels, m, self.bias.as_deref(), scratch, rows, out);
        }
        floats.resize(rows * k, 0.0);
        if rows >= 16 {
            floats.par_chunks_exact_mut(k.max(1)).enumerate().for_each(|(r, row)| make(r, row));
        } else {
            floats.chunks_exact_mut(k.max(1)).enumerate().for_each(|(r, row)| make(r, row));
        }
        self.forward_with(floats, rows, out, scratch)
    }

    /// [`Linear::forward`] with the int8 activations in `scratch` (a forward's working memory,
    /// reused by every product).
    pub fn forward_with(&self, x: &[f32], rows: usize, out: &mut [f32], scratch: &mut QuantizedRows) -> Result<()> {
        debug_assert_eq!(x.len(), rows * self.k);
        debug_assert_eq!(out.len(), rows * self.n);
        match &self.weight {
            Weight::F32(w) => gemm::matmul(x, rows, self.k, w, self.n, self.bias.as_deref(), out),
            Weight::Bf16(w) => gemm::matmul(x, rows, self.k, w, self.n, self.bias.as_deref(), out),
            Weight::Int8(m) => int8_forward(m, self.bias.as_deref(), x, rows, out, scratch)?,
        }
        Ok(())
    }

    /// The float weights (f32 or bf16), for tests and the embedding of tied models.
    pub fn row_f32(&self, j: usize, out: &mut [f32]) -> bool {
        let k = self.k;
        match &self.weight {
            Weight::F32(w) => out.copy_from_slice(&w[j * k..(j + 1) * k]),
            Weight::Bf16(w) => out.iter_mut().zip(&w[j * k..(j + 1) * k]).for_each(|(o, v)| *o = v.widen()),
            Weight::Int8(_) => return false,
        }
        true
    }
}

/// Quantized activations of `rows` tokens: bytes at stride `k_padded`, and each row's scale.
/// One value serves a whole forward: [`QuantizedRows::fill`] reuses its memory, so a prefill
/// does not fault in megabytes of fresh pages for every product of every layer.
#[derive(Default)]
pub struct QuantizedRows {
    data: Vec<u8>,
    stride: usize,
    scales: Vec<f32>,
}

impl QuantizedRows {
    /// Empty (no memory until the first fill).
    pub const fn new() -> QuantizedRows {
        QuantizedRows { data: Vec::new(), stride: 0, scales: Vec::new() }
    }

    /// Quantizes each row of `x` with its own scale (`max |x| / 127`), through the dispatched
    /// kernel, replacing what was held.
    pub fn fill(&mut self, x: &[f32], rows: usize, k: usize, k_padded: usize) -> Result<()> {
        let kernels = reseam_kernels::dispatch::kernels()?;
        self.shape(rows, k_padded);
        let work = |((xr, qr), s): ((&[f32], &mut [u8]), &mut f32)| *s = quantize_one(kernels, xr, qr);
        let (data, scales) = (&mut self.data, &mut self.scales);
        if rows >= 16 {
            x.par_chunks_exact(k).zip(data.par_chunks_exact_mut(k_padded)).zip(scales.par_iter_mut()).for_each(work);
        } else {
            x.chunks_exact(k).zip(data.chunks_exact_mut(k_padded)).zip(scales.iter_mut()).for_each(work);
        }
        Ok(())
    }

    /// [`QuantizedRows::fill`] with rows made on the fly: `make(r, row)` writes row `r` (`k`
    /// floats) into a buffer of the thread's, which is quantized while it is in L1, so the float
    /// rows never go to memory.
    pub fn fill_with(&mut self, rows: usize, k: usize, k_padded: usize, make: &RowMaker) -> Result<()> {
        let kernels = reseam_kernels::dispatch::kernels()?;
        self.shape(rows, k_padded);
        let work = |buf: &mut Vec<f32>, (r, (qr, s)): (usize, (&mut [u8], &mut f32))| {
            buf.resize(k, 0.0);
            make(r, buf);
            *s = quantize_one(kernels, buf, qr);
        };
        let (data, scales) = (&mut self.data, &mut self.scales);
        if rows >= 16 {
            data.par_chunks_exact_mut(k_padded).zip(scales.par_iter_mut()).enumerate().for_each_init(Vec::new, work);
        } else {
            let mut buf = Vec::new();
            data.chunks_exact_mut(k_padded).zip(scales.iter_mut()).enumerate().for_each(|row| work(&mut buf, row));
        }
        Ok(())
    }

    fn shape(&mut self, rows: usize, k_padded: usize) {
        self.data.resize(rows * k_padded, 0);
        self.scales.resize(rows, 0.0);
        self.stride = k_padded;
    }
}

/// Writes row `r` of a product's input into the buffer it is given.
pub type RowMaker<'a> = dyn Fn(usize, &mut [f32]) + Sync + 'a;

/// Quantizes one row into `qr` (its first `xr.len()` bytes; the padding after them is zeroed)
/// and returns its scale.
fn quantize_one(kernels: &reseam_kernels::Kernels, xr: &[f32], qr: &mut [u8]) -> f32 {
    let amax = kernels.absmax(xr);
    let amax = if amax > 0.0 && amax.is_finite() { amax } else { 1.0 };
    let (q, pad) = qr.split_at_mut(xr.len());
    kernels.quantize(xr, 127.0 / amax, q);
    // Padding meets zero weights, but stale bytes of an earlier, wider call stay out.
    pad.fill(0);
    amax / 127.0
}

/// Quantizes each row with its own scale (`max |x| / 127`), through the dispatched kernel.
pub fn quantize_rows(x: &[f32], rows: usize, k: usize, k_padded: usize) -> Result<QuantizedRows> {
    let mut q = QuantizedRows::default();
    q.fill(x, rows, k, k_padded)?;
    Ok(q)
}

fn int8_forward(
    m: &Int8Matrix,
    bias: Option<&[f32]>,
    x: &[f32],
    rows: usize,
    out: &mut [f32],
    q: &mut QuantizedRows,
) -> Result<()> {
    let kernels = reseam_kernels::dispatch::kernels()?;
    let kp = reseam_kernels::pack::padded(m.k, m.n).0;
    q.fill(x, rows, m.k, kp)?;
    int8_product(kernels, m, bias, q, rows, out)
}

/// Rows per thread from which a product is split by rows rather than by columns.
const ROW_SPLIT_MIN: usize = 64;
/// Bytes of weights per column range when a product is split by rows too.
const GRID_COLUMN_BYTES: usize = 1 << 20;

/// The product of quantized rows with an int8 matrix, written in place by tasks on every thread:
/// by columns for few rows (decoding, verification: each weight byte is read once, by one
/// core), by rows for many (prefill: each thread keeps its activations and streams the weights).
pub fn int8_product(
    kernels: &reseam_kernels::Kernels,
    m: &Int8Matrix,
    bias: Option<&[f32]>,
    q: &QuantizedRows,
    rows: usize,
    out: &mut [f32],
) -> Result<()> {
    let a = QuantizedA { data: &q.data, rows, stride: q.stride };
    let ep = Epilogue {
        zero_fix: Some(&m.zero_fix),
        scale: Scale::RowsColumns { rows: &q.scales, cols: &m.scales },
        bias,
        relu: false,
    };
    let threads = rayon::current_num_threads().max(1);
    let how = if rows >= ROW_SPLIT_MIN * threads {
        // Column ranges of about a megabyte of weights, so each stays in the core's L2 cache
        // while the task's rows pass over it.
        let cols = m.packed.as_bytes().len().div_ceil(GRID_COLUMN_BYTES).max(threads);
        Split::Grid { rows: threads, cols }
    } else {
        Split::Columns(4 * threads)
    };
    let mut o = Output::F32 { data: out, stride: m.n };
    let tasks = kernels.split(Arithmetic::Exact, &a, &m.packed, &ep, &mut o, how)?;
    tasks.into_par_iter().for_each(GemmTask::run);
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn row(j: usize, out: &mut [f32]) {
        for (t, o) in out.iter_mut().enumerate() {
            *o = (((j * 131 + t * 71) % 97) as f32 - 48.0) / 17.0;
        }
    }

    #[test]
    fn quantize_row_uses_absmax_and_half_even() {
        let mut q = [0i8; 4];
        let s = quantize_row(&[127.0, -63.5, 0.5, 1.5], &mut q);
        assert_eq!(s, 1.0);
        assert_eq!(q, [127, -64, 0, 2]);
        let w: Vec<f32> = (0..=2540).map(|i| i as f32 / 10.0 - 127.0).collect();
        let mut qs = vec![0i8; w.len()];
        quantize_row(&w, &mut qs);
        for (v, q) in w.iter().zip(&qs) {
            assert_eq!(*q as f32, v.round_ties_even(), "{v}");
        }
        assert_eq!(quantize_row(&[0.0; 4], &mut q), 0.0);
        assert_eq!(q, [0; 4]);
    }

    #[test]
    fn int8_layer_is_close_to_f32_and_batch_invariant() {
        let (k, n, rows) = (150, 70, 5);
        let bias: Vec<f32> = (0..n).map(|j| j as f32 * 0.01).collect();
        let f = Linear::build(k, n, Precision::F32, Some(bias.clone()), &row);
        let q = Linear::build(k, n, Precision::Int8, Some(bias), &row);
        let x: Vec<f32> = (0..rows * k).map(|i| ((i * 37 % 101) as f32 - 50.0) / 25.0).collect();
        let (mut yf, mut yq) = (vec![0f32; rows * n], vec![0f32; rows * n]);
        f.forward(&x, rows, &mut yf).unwrap();
        q.forward(&x, rows, &mut yq).unwrap();
        let max = yf.iter().fold(0f32, |m, v| m.max(v.abs()));
        for (a, b) in yf.iter().zip(&yq) {
            assert!((a - b).abs() < 0.02 * max, "{a} vs {b}");
        }
        for i in 0..rows {
            let mut one = vec![0f32; n];
            q.forward(&x[i * k..(i + 1) * k], 1, &mut one).unwrap();
            assert_eq!(one, yq[i * n..(i + 1) * n]);
        }
    }

    #[test]
    fn rows_made_on_the_fly_into_reused_buffers_give_the_same_products() {
        let (k, n) = (150, 70);
        for precision in [Precision::F32, Precision::Int8] {
            let l = Linear::build(k, n, precision, None, &row);
            let wide = Linear::build(3 * k, 40, precision, None, &row);
            // Many rows (threads) and few (one thread).
            for rows in [21, 3] {
                let x: Vec<f32> = (0..rows * k).map(|i| ((i * 37 % 101) as f32 - 50.0) / 25.0).collect();
                let mut want = vec![0f32; rows * n];
                l.forward(&x, rows, &mut want).unwrap();
                let (mut q, mut floats) = (QuantizedRows::default(), Vec::new());
                // A wider product first, so both buffers hold stale numbers from it.
                let xw: Vec<f32> = (0..rows * 3 * k).map(|i| (i % 7) as f32 - 3.0).collect();
                let mut ow = vec![0f32; rows * 40];
                wide.forward_rows(
                    rows,
                    &|r, o| o.copy_from_slice(&xw[r * 3 * k..][..3 * k]),
                    &mut ow,
                    &mut q,
                    &mut floats,
                )
                .unwrap();
                let mut got = vec![f32::NAN; rows * n];
                l.forward_rows(rows, &|r, o| o.copy_from_slice(&x[r * k..][..k]), &mut got, &mut q, &mut floats)
                    .unwrap();
                assert!(got.iter().zip(&want).all(|(a, b)| a.to_bits() == b.to_bits()), "{precision} {rows} rows");
                let mut again = vec![f32::NAN; rows * n];
                l.forward_with(&x, rows, &mut again, &mut q).unwrap();
                assert!(again.iter().zip(&want).all(|(a, b)| a.to_bits() == b.to_bits()), "{precision} {rows} rows");
            }
        }
    }

    #[test]
    fn many_rows_split_by_rows_equal_one_row_at_a_time() {
        // Enough rows for the row-and-column grid on this machine's thread count, and columns
        // for several ranges of GRID_COLUMN_BYTES.
        let rows = ROW_SPLIT_MIN * rayon::current_num_threads().max(1) + 5;
        let (k, n) = (96, (3 * GRID_COLUMN_BYTES).div_ceil(128) + 37);
        let bias: Vec<f32> = (0..n).map(|j| j as f32 * 0.001).collect();
        let l = Linear::build(k, n, Precision::Int8, Some(bias), &row);
        let x: Vec<f32> = (0..rows * k).map(|i| ((i * 29 % 89) as f32 - 44.0) / 13.0).collect();
        let mut all = vec![f32::NAN; rows * n];
        l.forward(&x, rows, &mut all).unwrap();
        let mut one = vec![f32::NAN; n];
        for i in (0..rows).step_by(7).chain([rows - 1]) {
            l.forward(&x[i * k..(i + 1) * k], 1, &mut one).unwrap();
            assert!(one.iter().zip(&all[i * n..(i + 1) * n]).all(|(a, b)| a.to_bits() == b.to_bits()), "row {i}");
        }
    }

    #[test]
    fn packed_file_round_trip_gives_the_same_products() {
        let (k, n) = (64, 1000);
        let m = Int8Matrix::quantize(k, n, &row);
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("w.reseam");
        let mut w = pack::Writer::create(&path).unwrap();
        m.write(&mut w, "w").unwrap();
        w.finish("test", serde_json::Value::Null).unwrap();
        let f = pack::PackFile::open(&path).unwrap();
        let r = Linear::from_int8(Int8Matrix::read(&f, "w", k, n).unwrap(), None);
        let l = Linear::from_int8(m, None);
        let x: Vec<f32> = (0..3 * k).map(|i| (i % 13) as f32 - 6.0).collect();
        let (mut a, mut b) = (vec![0f32; 3 * n], vec![0f32; 3 * n]);
        l.forward(&x, 3, &mut a).unwrap();
        r.forward(&x, 3, &mut b).unwrap();
        assert_eq!(a, b);
    }
}
