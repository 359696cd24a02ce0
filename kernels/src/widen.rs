//! The exact arithmetic without a dot-product instruction (AVX2, AVX-512BW): widen bytes to
//! int16 and use `pmaddwd`, whose int16 × int16 pair sums cannot overflow here (each product is
//! at most 254 · 127). Activations and weights are widened into per-thread scratch, panel by
//! panel, so every widened weight is reused by up to [`PANEL`] rows.
//!
//! A widened block keeps the packed byte order (quads of 4 inner indices × 16 columns), one
//! int16 per byte: a kernel reading 4 columns × 4 inner indices (16 int16) and multiplying with
//! 4 broadcast activations gets each column's two pair sums in adjacent int32 lanes, and adds
//! the two in its epilogue.

use std::cell::RefCell;
use std::ops::Range;

use crate::pack::{N_BLOCK, QUAD};
use crate::part::Part;

/// Rows whose widened activations are kept at once.
const PANEL: usize = 64;

/// One 64-byte-aligned line of scratch, so widened quads never straddle cache lines.
#[derive(Clone, Copy)]
#[repr(C, align(64))]
pub(crate) struct Line([i16; 32]);

thread_local! {
    static SCRATCH: RefCell<Vec<Line>> = const { RefCell::new(Vec::new()) };
}

/// Widened activations and weights for one panel of rows and one group of blocks.
pub(crate) struct Widened {
    /// Row `i` of the panel starts at `a + (i - row0) · kp`.
    pub a: *const i16,
    pub row0: usize,
    /// Block `nb` of the group starts at `b + (nb - nb0) · kp · 16`.
    pub b: *const i16,
    pub nb0: usize,
    pub kp: usize,
}

/// Widening of `src` into `dst` (same length, a multiple of 64): zero-extending activations or
/// sign-extending weights.
pub(crate) type WidenFn = unsafe fn(src: *const u8, len: usize, dst: *mut i16, signed: bool);
/// A kernel over widened data: `rows` (inside the panel) × `blocks` (inside the group).
pub(crate) type WideKernel = unsafe fn(p: &Part, w: &Widened, rows: Range<usize>, blocks: Range<usize>);

/// Runs `kernel` over the whole part, `group` blocks at a time.
///
/// # Safety
/// `widen` and `kernel` may run on this CPU; `p` satisfies [`Part`]'s invariants.
pub(crate) unsafe fn drive(p: &Part, group: usize, widen: WidenFn, kernel: WideKernel) {
    let kp = p.b.k_padded();
    let rows_max = p.rows.len().min(PANEL);
    let a_len = rows_max * kp;
    let b_len = group * kp * N_BLOCK;
    SCRATCH.with_borrow_mut(|lines| {
        let need = (a_len + b_len).div_ceil(32);
        if lines.len() < need {
            lines.resize(need, Line([0; 32]));
        }
        let base = lines.as_mut_ptr().cast::<i16>();
        // SAFETY: the scratch holds `a_len + b_len` int16 and `a_len` is a multiple of 32
        // (`kp` is a multiple of 64), so `b` is still 64-byte aligned.
        let (a16, b16) = (base, unsafe { base.add(a_len) });
        let bytes = p.b.as_bytes().as_ptr();
        let mut r0 = p.rows.start;
        while r0 < p.rows.end {
            let r1 = (r0 + PANEL).min(p.rows.end);
            for i in r0..r1 {
                // SAFETY: row `i` has `kp` readable bytes (Part) and the scratch row `kp` slots.
                unsafe { widen(p.row_bytes(i), kp, a16.add((i - r0) * kp), false) };
            }
            let mut nb0 = p.blocks.start;
            while nb0 < p.blocks.end {
                let nb1 = (nb0 + group).min(p.blocks.end);
                let len = (nb1 - nb0) * kp * N_BLOCK;
                // SAFETY: blocks `nb0 .. nb1` are contiguous in the packed bytes (each
                // `kp / 4` quads), and the scratch holds `group` widened blocks.
                unsafe { widen(bytes.add(nb0 * kp / 4 * QUAD), len, b16, true) };
                let w = Widened { a: a16, row0: r0, b: b16, nb0, kp };
                // SAFETY: the widened panel and group cover exactly these rows and blocks.
                unsafe { kernel(p, &w, r0..r1, nb0..nb1) };
                nb0 = nb1;
            }
            r0 = r1;
        }
    });
}
