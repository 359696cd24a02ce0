//! A checked piece of a product: the unit every kernel computes, and what threads share out.
//!
//! The safe entry points ([`crate::Kernels::gemm`], [`crate::Kernels::gemm_region`],
//! [`crate::Kernels::split`]) check every length here, once, and then hand kernels a [`Part`]
//! whose output is a raw pointer. That pointer is what lets two threads write different columns
//! of the same rows at once; it is safe because the parts of one product never overlap and
//! borrow the output mutably for as long as they live.

use std::marker::PhantomData;
use std::ops::Range;

use crate::pack::{N_BLOCK, QUAD};
use crate::{Epilogue, Output, PackedB, QuantizedA, Scale, ShapeError};

/// Where results go, as a raw pointer (see the module doc): element `(i, j)` of the product at
/// `ptr + i·stride + (j − col0)`. `col0` is 0 unless the output holds only some columns
/// ([`Part::columns`]).
#[derive(Clone, Copy, Debug)]
pub(crate) enum Out {
    F32 { ptr: *mut f32, stride: usize, col0: usize },
    U8 { ptr: *mut u8, stride: usize, scale: f32, col0: usize },
}

/// Rows `rows` and column blocks `blocks` (of [`N_BLOCK`] columns) of one product.
///
/// Invariants, established by [`Part::new`] and [`Part::sub`]: `a` holds every row in `rows`
/// with `b.k_padded()` readable bytes each; the epilogue's vectors hold at least `b.n()` entries
/// (row scales: every row in `rows`); the output holds every element `(i, j)` with `i` in
/// `rows` and `j < b.n()`, and no other live part writes the same elements.
pub(crate) struct Part<'t> {
    pub a: QuantizedA<'t>,
    pub b: &'t PackedB,
    /// `b.as_bytes()`, looked up once: through a shared mapping it is a dynamic call, which
    /// per tile came to 1.6% of `translate` on Zen 4.
    b_bytes: &'t [u8],
    pub ep: Epilogue<'t>,
    pub out: Out,
    pub rows: Range<usize>,
    pub blocks: Range<usize>,
    _out: PhantomData<&'t mut [u8]>,
}

impl<'t> Part<'t> {
    /// Where column block `nb` starts in the packed bytes (one 64-byte quad per 4 inner
    /// indices). Computing it is safe; the kernels read through it only for blocks of the part.
    #[inline(always)]
    pub fn block_bytes(&self, nb: usize) -> *const u8 {
        self.b_bytes.as_ptr().wrapping_add(nb * (self.b.k_padded() / 4) * QUAD)
    }

    /// Where activation row `i` starts (`k_padded` bytes readable for rows of the part).
    #[inline(always)]
    pub fn row_bytes(&self, i: usize) -> *const u8 {
        self.a.data.as_ptr().wrapping_add(i * self.a.stride)
    }

    /// Checks a whole product and returns it as one part.
    pub fn new(
        a: &QuantizedA<'t>,
        b: &'t PackedB,
        ep: &Epilogue<'t>,
        out: &'t mut Output<'_>,
    ) -> Result<Part<'t>, ShapeError> {
        check(a, b, ep)?;
        check_output(out, a.rows, b.n())?;
        Ok(Part::unchecked(a, b, ep, out, 0, 0..b.n_padded() / N_BLOCK))
    }

    /// Checks columns `cols` of a product whose output holds only those columns (its column 0
    /// is column `cols.start` of the product) and returns them as one part. `cols` starts on a
    /// multiple of [`N_BLOCK`] and ends on one or at `b.n()`; the epilogue's vectors still hold
    /// every column of the product.
    pub fn columns(
        a: &QuantizedA<'t>,
        b: &'t PackedB,
        ep: &Epilogue<'t>,
        out: &'t mut Output<'_>,
        cols: Range<usize>,
    ) -> Result<Part<'t>, ShapeError> {
        let n = b.n();
        let Some(blocks) = column_blocks(&cols, n) else {
            return Err(ShapeError::Region { rows: 0..a.rows, cols, m: a.rows, n, block: N_BLOCK });
        };
        check(a, b, ep)?;
        check_output(out, a.rows, cols.len())?;
        Ok(Part::unchecked(a, b, ep, out, cols.start, blocks))
    }

    fn unchecked(
        a: &QuantizedA<'t>,
        b: &'t PackedB,
        ep: &Epilogue<'t>,
        out: &'t mut Output<'_>,
        col0: usize,
        blocks: Range<usize>,
    ) -> Part<'t> {
        let out = match out {
            Output::F32 { data, stride } => Out::F32 { ptr: data.as_mut_ptr(), stride: *stride, col0 },
            Output::U8 { data, stride, scale } => {
                Out::U8 { ptr: data.as_mut_ptr(), stride: *stride, scale: *scale, col0 }
            }
        };
        Part { a: *a, b, b_bytes: b.as_bytes(), ep: *ep, out, rows: 0..a.rows, blocks, _out: PhantomData }
    }

    /// The part of `self` in rows `rows` and column blocks `blocks` (both inside `self`'s).
    /// Callers keep the pieces of one product disjoint and drop the whole they were cut from.
    fn sub(&self, rows: Range<usize>, blocks: Range<usize>) -> Part<'t> {
        debug_assert!(self.rows.start <= rows.start && rows.end <= self.rows.end);
        debug_assert!(self.blocks.start <= blocks.start && blocks.end <= self.blocks.end);
        Part {
            a: self.a,
            b: self.b,
            b_bytes: self.b_bytes,
            ep: self.ep,
            out: self.out,
            rows,
            blocks,
            _out: PhantomData,
        }
    }

    /// Restricts the part to a rectangle given in output columns.
    pub fn region(self, rows: Range<usize>, cols: Range<usize>) -> Result<Part<'t>, ShapeError> {
        let (m, n) = (self.a.rows, self.b.n());
        match column_blocks(&cols, n) {
            Some(blocks) if rows.start <= rows.end && rows.end <= m => Ok(self.sub(rows, blocks)),
            _ => Err(ShapeError::Region { rows, cols, m, n, block: N_BLOCK }),
        }
    }

    /// Output columns this part writes.
    pub fn cols(&self) -> Range<usize> {
        let n = self.b.n();
        (self.blocks.start * N_BLOCK).min(n)..(self.blocks.end * N_BLOCK).min(n)
    }

    /// Splits into at most `parts` pieces along one axis, each a multiple of `grain` rows or
    /// blocks except the last.
    pub fn split(self, how: Split, row_grain: usize, block_grain: usize) -> Vec<Part<'t>> {
        let (row_parts, col_parts) = match how {
            Split::Rows(p) => (p, 1),
            Split::Columns(p) => (1, p),
            Split::Grid { rows, cols } => (rows, cols),
        };
        let mut parts = Vec::new();
        for rows in ranges(self.rows.clone(), row_parts, row_grain) {
            for blocks in ranges(self.blocks.clone(), col_parts, block_grain) {
                parts.push(self.sub(rows.clone(), blocks));
            }
        }
        parts
    }
}

/// The column blocks of output columns `cols` of a product with `n` columns, if `cols` lies
/// inside it, starts on a multiple of [`N_BLOCK`] and ends on one or at `n`.
fn column_blocks(cols: &Range<usize>, n: usize) -> Option<Range<usize>> {
    let good = cols.start <= cols.end
        && cols.end <= n
        && cols.start.is_multiple_of(N_BLOCK)
        && (cols.end.is_multiple_of(N_BLOCK) || cols.end == n);
    good.then(|| cols.start / N_BLOCK..cols.end.div_ceil(N_BLOCK))
}

/// `range` cut into at most `parts` near-equal pieces whose lengths are multiples of `grain`
/// (except the last). Empty pieces are dropped; an empty range gives one empty piece.
fn ranges(range: Range<usize>, parts: usize, grain: usize) -> Vec<Range<usize>> {
    let len = range.len();
    let grains = len.div_ceil(grain.max(1));
    let parts = parts.clamp(1, grains.max(1));
    let mut out = Vec::with_capacity(parts);
    let mut start = range.start;
    for p in 0..parts {
        // Grains are dealt out evenly, the first pieces taking one more when they do not divide.
        let take = grains / parts + usize::from(p < grains % parts);
        let end = (start + take * grain.max(1)).min(range.end);
        out.push(start..end);
        start = end;
    }
    if let Some(last) = out.last_mut() {
        last.end = range.end;
    }
    out
}

/// How [`crate::Kernels::split`] shares a product out.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Split {
    /// Contiguous row ranges: throughput with many rows; each part reads all of `B`.
    Rows(usize),
    /// Contiguous column ranges: latency with few rows; each part reads its own slice of `B`.
    Columns(usize),
    /// `rows × cols` rectangles.
    Grid { rows: usize, cols: usize },
}

/// A kernel entry point: computes one checked part of a product.
pub(crate) type PartFn = unsafe fn(&Part);

/// A copy of a tile's accumulators for its epilogue. The epilogue indexes them at run time, which
/// would otherwise keep the accumulators themselves in memory, zero-filled by a `memset` on every
/// tile (4% of the whole on Zen 4); copied element by element with constant indices, the
/// accumulators stay in registers through the inner loop.
#[cfg(target_arch = "x86_64")]
#[inline(always)]
pub(crate) fn spill<T: Copy, const C: usize, const R: usize>(acc: &[[T; C]; R]) -> [[T; C]; R] {
    std::array::from_fn(|r| std::array::from_fn(|c| acc[r][c]))
}

/// One rectangle of a product, ready to run on any thread. Made by [`crate::Kernels::split`];
/// the tasks of one product write disjoint parts of its output.
pub struct GemmTask<'t> {
    pub(crate) kernel: PartFn,
    pub(crate) part: Part<'t>,
}

// SAFETY: a task holds shared references to `Sync` data (activations, weights, epilogue vectors)
// and a raw pointer to an output region that no other task of the same product touches; the
// output stays mutably borrowed for the task's lifetime `'t`, so sending the task to another
// thread cannot create a second writer.
unsafe impl Send for GemmTask<'_> {}

impl<'t> GemmTask<'t> {
    /// Cuts the rectangle's columns in two, the first piece taking `left` of every `of` column
    /// blocks (rounded to `grain` blocks, at least one grain); `None` for the second when the
    /// rectangle is too narrow to cut. Nothing is allocated, so a scheduler can split every
    /// product of a step.
    pub fn split_columns(self, left: usize, of: usize, grain: usize) -> (GemmTask<'t>, Option<GemmTask<'t>>) {
        let blocks = self.part.blocks.clone();
        let grain = grain.max(1);
        let at = (blocks.len() * left / of.max(1)).div_ceil(grain).max(1) * grain;
        if at >= blocks.len() {
            return (self, None);
        }
        let rows = self.part.rows.clone();
        let cut = blocks.start + at;
        let right = GemmTask { kernel: self.kernel, part: self.part.sub(rows.clone(), cut..blocks.end) };
        let left = GemmTask { kernel: self.kernel, part: self.part.sub(rows, blocks.start..cut) };
        (left, Some(right))
    }

    /// Computes this rectangle.
    pub fn run(self) {
        // SAFETY: `kernel` comes from a table built only for instruction sets this CPU runs
        // (dispatch checks before filling it), and `part` was checked by `Part::new` and only
        // narrowed since, so every read and write it implies is in bounds and unshared.
        unsafe { (self.kernel)(&self.part) }
    }

    /// Output rows this task writes.
    pub fn rows(&self) -> Range<usize> {
        self.part.rows.clone()
    }

    /// Output columns this task writes.
    pub fn cols(&self) -> Range<usize> {
        self.part.cols()
    }
}

impl std::fmt::Debug for GemmTask<'_> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("GemmTask").field("rows", &self.rows()).field("cols", &self.cols()).finish()
    }
}

fn check(a: &QuantizedA, b: &PackedB, ep: &Epilogue) -> Result<(), ShapeError> {
    let (kp, n, rows) = (b.k_padded(), b.n(), a.rows);
    if a.stride < kp {
        return Err(ShapeError::Stride { stride: a.stride, k_padded: kp });
    }
    let need = if rows == 0 { 0 } else { (rows - 1) * a.stride + kp };
    if a.data.len() < need {
        return Err(ShapeError::Activations { rows, stride: a.stride, len: a.data.len(), need });
    }
    let vec = |what: &'static str, len: usize, need: usize| {
        if len < need { Err(ShapeError::Vector { what, len, need }) } else { Ok(()) }
    };
    if let Some(z) = ep.zero_fix {
        vec("zero fix", z.len(), n)?;
    }
    if let Some(bias) = ep.bias {
        vec("bias", bias.len(), n)?;
    }
    match ep.scale {
        Scale::Uniform(_) => {}
        Scale::Columns(c) => vec("column scales", c.len(), n)?,
        Scale::RowsColumns { rows: r, cols } => {
            vec("row scales", r.len(), rows)?;
            vec("column scales", cols.len(), n)?;
        }
    }
    Ok(())
}

/// The output holds `rows` rows of `width` elements.
fn check_output(out: &Output, rows: usize, width: usize) -> Result<(), ShapeError> {
    let (len, stride) = match out {
        Output::F32 { data, stride } => (data.len(), *stride),
        Output::U8 { data, stride, .. } => (data.len(), *stride),
    };
    let need = if rows == 0 { 0 } else { (rows - 1) * stride + width };
    if stride < width || len < need {
        return Err(ShapeError::Output { rows, stride, len, need });
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn columns_are_checked() {
        let (k, n, m) = (8, 40, 3);
        let b = PackedB::from_transposed(&vec![1i8; k * n], k, n);
        let a = vec![1u8; m * b.k_padded()];
        let qa = QuantizedA { data: &a, rows: m, stride: b.k_padded() };
        let bias = vec![0f32; n];
        let ep = Epilogue { zero_fix: None, scale: Scale::Uniform(1.0), bias: Some(&bias), relu: false };
        let mut data = vec![0f32; m * n];
        let mut try_cols = |cols: Range<usize>, stride: usize| {
            let mut out = Output::F32 { data: &mut data[..m * stride], stride };
            Part::columns(&qa, &b, &ep, &mut out, cols).map(|p| (p.rows.clone(), p.blocks.clone()))
        };
        assert_eq!(try_cols(16..40, 24).unwrap(), (0..3, 1..3));
        assert_eq!(try_cols(0..16, 16).unwrap(), (0..3, 0..1));
        assert_eq!(try_cols(32..32, 1).unwrap(), (0..3, 2..2));
        assert!(matches!(try_cols(8..40, 32), Err(ShapeError::Region { .. })), "a start off the blocks");
        assert!(matches!(try_cols(0..20, 20), Err(ShapeError::Region { .. })), "an end off the blocks before n");
        assert!(matches!(try_cols(16..48, 32), Err(ShapeError::Region { .. })), "an end past n");
        assert!(matches!(try_cols(16..40, 23), Err(ShapeError::Output { .. })), "rows narrower than the columns");
        let short = Epilogue { bias: Some(&bias[..20]), ..ep };
        let mut out = Output::F32 { data: &mut data[..m * 16], stride: 16 };
        assert!(matches!(Part::columns(&qa, &b, &short, &mut out, 0..16), Err(ShapeError::Vector { .. })));
    }

    #[test]
    fn ranges_cover_in_grains() {
        assert_eq!(ranges(0..64, 2, 16), vec![0..32, 32..64]);
        assert_eq!(ranges(0..70, 3, 16), vec![0..32, 32..64, 64..70]);
        assert_eq!(ranges(0..5, 8, 16), vec![0..5]);
        assert_eq!(ranges(3..3, 4, 1), vec![3..3]);
        assert_eq!(ranges(2..9, 3, 1), vec![2..5, 5..7, 7..9]);
        for (len, parts, grain) in [(100, 7, 3), (1, 1, 1), (257, 4, 32), (2000, 2, 2)] {
            let r = ranges(0..len, parts, grain);
            assert!(r.len() <= parts);
            assert_eq!(r.first().unwrap().start, 0);
            assert_eq!(r.last().unwrap().end, len);
            for w in r.windows(2) {
                assert_eq!(w[0].end, w[1].start);
                assert!(w[0].len().is_multiple_of(grain));
            }
        }
    }
}
