//! The checked entry points of a [`Kernels`] table: each checks its arguments, then calls the
//! table's function for this CPU (chosen in the parent module, the only place that looks at it).

use std::ops::Range;

use super::{Kernels, PeakLoop};
use crate::part::{GemmTask, Part, Split};
use crate::{Arithmetic, Epilogue, Output, PackedB, QuantizedA, ShapeError, scalar};

impl Kernels {
    /// Quantizes activations (see [`scalar::quantize`]).
    pub fn quantize(&self, src: &[f32], scale: f32, dst: &mut [u8]) {
        assert!(dst.len() >= src.len(), "quantize: destination shorter than source");
        // SAFETY: the table was built for an ISA this CPU runs, and the lengths are checked.
        unsafe { (self.quantize)(src, scale, dst) }
    }

    /// `acc[i] = a[i] · b[i] + acc[i]`, one rounding per element (see [`scalar::fma_vv`]).
    #[inline]
    pub fn fma_vv(&self, acc: &mut [f32], a: &[f32], b: &[f32]) {
        assert!(a.len() >= acc.len() && b.len() >= acc.len(), "fma_vv: operands shorter than the accumulator");
        // SAFETY: the table was built for an ISA this CPU runs, and the lengths are checked.
        unsafe { (self.fma.0)(acc, a, b) }
    }

    /// `acc[i] = s · b[i] + acc[i]`, one rounding per element (see [`scalar::fma_sv`]).
    #[inline]
    pub fn fma_sv(&self, acc: &mut [f32], s: f32, b: &[f32]) {
        assert!(b.len() >= acc.len(), "fma_sv: operand shorter than the accumulator");
        // SAFETY: the table was built for an ISA this CPU runs, and the length is checked.
        unsafe { (self.fma.1)(acc, s, b) }
    }

    /// Attention scores of several heads over keys in blocks of [`scalar::KEY_BLOCK`] positions
    /// (see [`scalar::block_scores`]).
    #[inline]
    pub fn block_scores(&self, q: &[f32], hd: usize, keys: &[f32], blocks: usize, out: &mut [f32]) {
        scalar::check_block_scores(q, hd, keys, blocks, out);
        // SAFETY: the table was built for an ISA this CPU runs, and the lengths are checked.
        unsafe { (self.attn.0)(q, hd, keys, blocks, out) }
    }

    /// Weighted sums of `n` value rows of `d` floats for several heads at once, in order over the
    /// rows, from 0 or `continued` from the sums in `out` (see [`scalar::weighted_rows`]).
    #[inline]
    #[allow(clippy::too_many_arguments)]
    pub fn weighted_rows(
        &self,
        w: &[f32],
        n: usize,
        w_stride: usize,
        rows: &[f32],
        out: &mut [f32],
        d: usize,
        continued: bool,
    ) {
        scalar::check_weighted_rows(w, n, w_stride, rows, out, d);
        // SAFETY: the table was built for an ISA this CPU runs, and the lengths are checked.
        unsafe { (self.attn.1)(w, n, w_stride, rows, out, d, continued) }
    }

    /// `softmax(s · scaling)` in place (see [`scalar::softmax_scaled`]).
    #[inline]
    pub fn softmax_scaled(&self, s: &mut [f32], scaling: f32) {
        // SAFETY: the table was built for an ISA this CPU runs; the function takes any length.
        unsafe { (self.act.0)(s, scaling) }
    }

    /// `out[i] = silu(g[i]) · u[i]` (see [`scalar::silu_mul`]).
    #[inline]
    pub fn silu_mul(&self, g: &[f32], u: &[f32], out: &mut [f32]) {
        // SAFETY: the table was built for an ISA this CPU runs; the function checks the lengths.
        unsafe { (self.act.1)(g, u, out) }
    }

    /// `max |x|`, NaN ignored (see [`scalar::absmax`]).
    #[inline]
    pub fn absmax(&self, x: &[f32]) -> f32 {
        // SAFETY: the table was built for an ISA this CPU runs; the function takes any length.
        unsafe { (self.absmax)(x) }
    }

    /// Marian's log-softmax reductions of a row of a multiple of 8 values: its maximum and the
    /// sum of `exp_ps(x − max)` in 8 lanes (see [`crate::cephes::max_and_exp_sum8`]).
    #[inline]
    pub fn max_and_exp_sum8(&self, row: &[f32]) -> (f32, f32) {
        assert!(!row.is_empty() && row.len().is_multiple_of(8), "max_and_exp_sum8: {} values", row.len());
        // SAFETY: the table was built for an ISA this CPU runs, and the length is checked.
        unsafe { (self.exp_sum8)(row) }
    }

    /// Marian's softmax of one row in place (see [`crate::softmax::softmax`]).
    #[inline]
    pub fn marian_softmax(&self, row: &mut [f32]) {
        if !row.is_empty() {
            // SAFETY: the table was built for an ISA this CPU runs; one row of its whole length.
            unsafe { (self.softmax.0)(row, row.len()) }
        }
    }

    /// Marian's softmax of every row of `n` values in `buf`, in place: the rows are independent,
    /// so the vector forms compute several side by side, each in its own order (see
    /// [`crate::softmax::softmax_rows`]).
    #[inline]
    pub fn marian_softmax_rows(&self, buf: &mut [f32], n: usize) {
        assert!(n > 0 && buf.len().is_multiple_of(n), "marian_softmax_rows: {} values in rows of {n}", buf.len());
        // SAFETY: the table was built for an ISA this CPU runs; `n > 0` divides the length.
        unsafe { (self.softmax.0)(buf, n) }
    }

    /// `x[i] = expf(x[i])` with the `expf` of [`Kernels::marian_softmax`]'s scalar path: libm's,
    /// or glibc's on vector lanes ([`crate::expf`]) where that is the same function.
    #[inline]
    pub fn expf(&self, x: &mut [f32]) {
        // SAFETY: the table was built for an ISA this CPU runs; the function takes any length.
        unsafe { (self.softmax.1)(x) }
    }

    /// Which body [`Kernels::expf`] runs, e.g. `glibc expf on 16 lanes (zmm)`.
    pub fn expf_body(&self) -> &'static str {
        self.softmax.2
    }

    /// `a = layer_norm(a + b)` in rows of `gamma.len()` values, Marian's residual connection
    /// (see [`crate::norm::add_layer_norm`]); `scratch` holds the sum.
    #[inline]
    pub fn add_layer_norm(&self, a: &mut [f32], b: &[f32], gamma: &[f32], beta: &[f32], scratch: &mut Vec<f32>) {
        crate::norm::check(a, b, gamma, beta);
        // SAFETY: the table was built for an ISA this CPU runs, and the lengths are checked.
        unsafe { (self.norm)(a, b, gamma, beta, scratch) }
    }

    /// Whether every value of `xs` is finite, its largest value, that value's first column and
    /// the runner-up, in one pass (see [`crate::scan::top2`]).
    #[inline]
    pub fn top2(&self, xs: &[f32]) -> crate::scan::Top2 {
        assert!(((xs.len() / 16) as u64) < 1 << 32, "top2: {} values", xs.len());
        // SAFETY: the table was built for an ISA this CPU runs, and the length is checked.
        unsafe { (self.scan.0)(xs) }
    }

    /// Whether every value of `xs` is finite, and its largest value (see
    /// [`crate::scan::largest`]): a quicker pass that tells when a piece of a row cannot
    /// change a [`crate::scan::Top2`] gathered so far.
    #[inline]
    pub fn largest(&self, xs: &[f32]) -> crate::scan::Largest {
        // SAFETY: the table was built for an ISA this CPU runs; any length is fine.
        unsafe { (self.scan.1)(xs) }
    }

    /// One step of the decoder's SSRU cell over a row (see [`crate::ssru::ssru_row`]): `c` is
    /// updated in place and `relu(c)` written to `h`.
    #[inline]
    pub fn ssru(&self, c: &mut [f32], xw: &[f32], f: &[f32], h: &mut [f32]) {
        let n = c.len();
        assert!(xw.len() >= n && f.len() >= n && h.len() >= n, "ssru: a cell of {n} values");
        // SAFETY: the table was built for an ISA this CPU runs; the function slices to `n`.
        unsafe { (self.ssru)(c, xw, f, h) }
    }

    /// `c = a · b`, each element one fused multiply-add chain from 0 in order over the inner
    /// index (see [`scalar::chain_products`]).
    #[inline]
    pub fn chain_products(&self, p: &scalar::Chain, c: &mut [f32]) {
        p.check(c);
        // SAFETY: the table was built for an ISA this CPU runs, and the lengths are checked.
        unsafe { (self.chain)(p, c) }
    }

    /// `dst[c·ldd + r] = src[r·lds + c] · scale` for `t`'s `rows × cols` (see
    /// [`crate::transpose::transpose_scaled`]).
    #[inline]
    pub fn transpose_scaled(&self, t: &crate::transpose::Transpose, dst: &mut [f32]) {
        t.check(dst);
        // SAFETY: the table was built for an ISA this CPU runs, and the lengths are checked.
        unsafe { (self.transpose)(t, dst) }
    }

    /// One query row's attention scores over all its keys, every head at once, in MKL's
    /// `order` ([`scalar::carry_scores`], [`scalar::zen_carry_scores`]): head `h`'s sums at
    /// `out[h·s.ldo ..]`.
    #[inline]
    pub fn row_scores(&self, order: scalar::MklOrder, s: &scalar::RowScores, out: &mut [f32]) {
        s.check(out);
        let f = match order {
            scalar::MklOrder::Intel => self.one_row.0.0,
            scalar::MklOrder::Zen => self.one_row.1.0,
        };
        // SAFETY: the table was built for an ISA this CPU runs, and the lengths are checked.
        unsafe { f(s, out) }
    }

    /// One query row's weighted sum of values in MKL's order, for `heads` heads side by side
    /// (see [`scalar::one_row_values`]).
    #[inline]
    pub fn one_row_values(&self, p: &scalar::RowValues, out: &mut [f32]) {
        p.check(out);
        // SAFETY: the table was built for an ISA this CPU runs, and the lengths are checked.
        unsafe { (self.one_row.0.1)(p, out) }
    }

    /// Asks for `rows` rows of `width` floats, `stride` apart, to be brought into the core's L2
    /// cache, without waiting for them (a hint: no effect on any result). For operands read
    /// soon after that would otherwise come from L3 or memory one cache line at a time: the
    /// decoder's cross-attention reads each sentence's keys and values once per step, more of
    /// them than L2 holds, so the next sentence's can stream in while this one computes.
    pub fn prefetch_rows(&self, data: &[f32], stride: usize, width: usize, rows: usize) {
        if rows == 0 || width == 0 {
            return;
        }
        assert!(data.len() >= (rows - 1) * stride + width, "prefetch_rows: rows outside the data");
        #[cfg(target_arch = "x86_64")]
        {
            // Contiguous rows as one, so no line is asked for twice.
            let (rows, width) = if stride == width { (1, rows * width) } else { (rows, width) };
            for r in 0..rows {
                let row = &data[r * stride..r * stride + width];
                // One prefetch per 64-byte line the row touches, from its first float's line.
                let (start, end) = (row.as_ptr() as usize & !63, row.as_ptr() as usize + 4 * width);
                for line in (start..end).step_by(64) {
                    // SAFETY: a prefetch never faults nor changes memory; every line holds part of
                    // the row (checked above).
                    unsafe { std::arch::x86_64::_mm_prefetch::<{ std::arch::x86_64::_MM_HINT_T1 }>(line as *const i8) };
                }
            }
        }
    }

    /// A query row's weighted sum of values in MKL's AMD order for one to three rows (see
    /// [`scalar::zen_row_values`]), for `heads` heads side by side.
    #[inline]
    pub fn zen_row_values(&self, p: &scalar::RowValues, out: &mut [f32]) {
        p.check(out);
        // SAFETY: the table was built for an ISA this CPU runs, and the lengths are checked.
        unsafe { (self.one_row.1.1)(p, out) }
    }

    /// `out = epilogue(a · b)` in the given arithmetic, after checking every length.
    pub fn gemm(
        &self,
        arith: Arithmetic,
        a: &QuantizedA,
        b: &PackedB,
        ep: &Epilogue,
        out: &mut Output,
    ) -> Result<(), ShapeError> {
        let part = Part::new(a, b, ep, out)?;
        self.run(arith, &part);
        Ok(())
    }

    /// Only rows `rows` and columns `cols` of the product (the rest of `out` is left alone).
    /// `cols` starts on a multiple of [`crate::pack::N_BLOCK`] and ends on one or at `b.n()`.
    #[allow(clippy::too_many_arguments)]
    pub fn gemm_region(
        &self,
        arith: Arithmetic,
        a: &QuantizedA,
        b: &PackedB,
        ep: &Epilogue,
        out: &mut Output,
        rows: Range<usize>,
        cols: Range<usize>,
    ) -> Result<(), ShapeError> {
        let part = Part::new(a, b, ep, out)?.region(rows, cols)?;
        self.run(arith, &part);
        Ok(())
    }

    /// Only columns `cols` of the product, into an output that holds just those columns (its
    /// column 0 is column `cols.start`): a product taken a slice of columns at a time, each
    /// slice's results used while they are in cache. `cols` starts on a multiple of
    /// [`crate::pack::N_BLOCK`] and ends on one or at `b.n()`; the epilogue's vectors cover
    /// the whole product.
    pub fn gemm_columns(
        &self,
        arith: Arithmetic,
        a: &QuantizedA,
        b: &PackedB,
        ep: &Epilogue,
        out: &mut Output,
        cols: Range<usize>,
    ) -> Result<(), ShapeError> {
        let part = Part::columns(a, b, ep, out, cols)?;
        self.run(arith, &part);
        Ok(())
    }

    /// The whole product as one task, checked, to be run or cut with
    /// [`GemmTask::split_columns`] without allocating.
    pub fn task<'t>(
        &self,
        arith: Arithmetic,
        a: &QuantizedA<'t>,
        b: &'t PackedB,
        ep: &Epilogue<'t>,
        out: &'t mut Output<'_>,
    ) -> Result<GemmTask<'t>, ShapeError> {
        Ok(GemmTask { kernel: self.path(arith).f, part: Part::new(a, b, ep, out)? })
    }

    /// Column blocks a column split should keep together (the kernels' tile width).
    pub fn column_grain(&self) -> usize {
        self.grain.1
    }

    /// The product cut into independent tasks (at most as many as asked) that threads can run in
    /// any order: by rows for throughput, by columns for latency. The output stays borrowed until
    /// the tasks are gone; together they write all of it, each its own rectangle.
    pub fn split<'t>(
        &self,
        arith: Arithmetic,
        a: &QuantizedA<'t>,
        b: &'t PackedB,
        ep: &Epilogue<'t>,
        out: &'t mut Output<'_>,
        how: Split,
    ) -> Result<Vec<GemmTask<'t>>, ShapeError> {
        let kernel = self.path(arith).f;
        let parts = Part::new(a, b, ep, out)?.split(how, self.grain.0, self.grain.1);
        Ok(parts.into_iter().map(|part| GemmTask { kernel, part }).collect())
    }

    fn run(&self, arith: Arithmetic, part: &Part) {
        // SAFETY: tables are only built for instruction sets this CPU and OS run (see `table`),
        // and `part` was checked by `Part::new`.
        unsafe { (self.path(arith).f)(part) }
    }
}

impl PeakLoop {
    /// Runs `iters` iterations of the loop.
    pub fn run(&self, iters: u64) {
        // SAFETY: a `PeakLoop` is only handed out by a table built for an ISA this CPU runs.
        unsafe { (self.run)(iters) }
    }
}
