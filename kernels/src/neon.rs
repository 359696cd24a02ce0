//! NEON with dot products (ARMv8.2+: Apple M1 and later, Graviton 2+, Cortex-A76+), exact.
//!
//! A quad is four q registers (columns 0–3, 4–7, 8–11, 12–15, each 4 inner indices × 4
//! columns), one dot-product operand each. Activations come 16 bytes (4 quads' worth) at a time
//! per row and are used by lane, `.4b[t]`, so no broadcast is needed.
//! - `i8mm`: `sudot` multiplies the signed weights by the unsigned activations directly.
//! - `dotprod` only: `sdot` needs both signed, so activations are flipped to `a − 128` (XOR
//!   0x80) and `128 · colsum` is added back in the epilogue; int32 wraps, so this is exact.
//!
//! Stable Rust does not have the dot-product intrinsics yet, so they are one `asm!` each.

use std::arch::aarch64::*;
use std::arch::asm;

use crate::pack::{N_BLOCK, block_values};
use crate::part::{Out, Part};
use crate::peak::{PEAK_OPERANDS, PeakLoop};
use crate::{Scale, scalar};

/// Rows per tile: 4 × 4 accumulators + 4 weight registers + 4 activation registers.
const ROWS: usize = 4;

/// The exact product with `sudot` (i8mm).
///
/// # Safety
/// The CPU has NEON, dotprod and i8mm; `p` satisfies [`Part`]'s invariants.
#[target_feature(enable = "neon,dotprod,i8mm")]
pub(crate) unsafe fn gemm_exact_i8mm(p: &Part) {
    // SAFETY: passed on from the caller.
    unsafe { i8mm::drive(p) }
}

/// The exact product with `sdot` on shifted activations.
///
/// # Safety
/// The CPU has NEON and dotprod; `p` satisfies [`Part`]'s invariants.
#[target_feature(enable = "neon,dotprod")]
pub(crate) unsafe fn gemm_exact_dotprod(p: &Part) {
    // SAFETY: passed on from the caller.
    unsafe { dotprod::drive(p) }
}

/// One body per instruction: the assembler accepts `sudot` only where i8mm is enabled, so the
/// two cannot share a function with a run-time switch.
macro_rules! body {
    ($features:literal, $shift:expr, $flip:expr, $dot:literal) => {
        use std::arch::aarch64::*;
        use std::arch::asm;

        use super::{BlockEp, ROWS};
        use crate::pack::QUAD;
        use crate::part::Part;

        /// # Safety
        /// The CPU has the module's features; `p` satisfies [`Part`]'s invariants.
        #[target_feature(enable = $features)]
        pub(super) unsafe fn drive(p: &Part) {
            for nb in p.blocks.clone() {
                let mut i = p.rows.start;
                while i < p.rows.end {
                    let r = (p.rows.end - i).min(ROWS);
                    macro_rules! call {
                        ($r:literal, $c:literal) => {
                            // SAFETY: rows `i .. i + r` and block `nb` lie inside the part.
                            unsafe { tile::<$r>(p, i, nb) }
                        };
                    }
                    by_shape!(call, r, 1, [1 2 3 4], [1]);
                    i += r;
                }
            }
        }

        /// # Safety
        /// As [`drive`], and the tile lies inside the part.
        #[target_feature(enable = $features)]
        #[inline]
        unsafe fn tile<const R: usize>(p: &Part, i0: usize, nb: usize) {
            let quads = p.b.k_padded() / 4;
            let b = p.block_bytes(nb);
            let a: [*const u8; R] = std::array::from_fn(|r| p.row_bytes(i0 + r));
            let flip = vdupq_n_u8($flip);
            let mut acc = [[vdupq_n_s32(0); 4]; R];
            // `k_padded` is a multiple of 64, so quads come in whole groups of 4.
            for g in (0..quads).step_by(4) {
                let mut av = [vdupq_n_s8(0); R];
                for r in 0..R {
                    // SAFETY: bytes `4g .. 4g + 16` of a row are below `k_padded`.
                    let v = unsafe { vld1q_u8(a[r].add(4 * g)) };
                    av[r] = vreinterpretq_s8_u8(veorq_u8(v, flip));
                }
                macro_rules! quad {
                    ($t:literal) => {
                        let q = b.wrapping_add((g + $t) * QUAD);
                        // SAFETY: quad `g + t` is 64 bytes inside the block.
                        let bv = unsafe {
                            [vld1q_s8(q.cast()), vld1q_s8(q.add(16).cast()), vld1q_s8(q.add(32).cast()), vld1q_s8(q.add(48).cast())]
                        };
                        for r in 0..R {
                            for c in 0..4 {
                                // SAFETY: registers only; the CPU has the instruction (caller).
                                unsafe {
                                    asm!(concat!($dot, " {acc:v}.4s, {b:v}.16b, {a:v}.4b[", $t, "]"),
                                         acc = inout(vreg) acc[r][c], b = in(vreg) bv[c], a = in(vreg) av[r],
                                         options(pure, nomem, nostack))
                                };
                            }
                        }
                    };
                }
                quad!(0);
                quad!(1);
                quad!(2);
                quad!(3);
            }
            let ep = BlockEp::new(p, nb, $shift);
            for (r, acc) in acc.iter().enumerate() {
                // SAFETY: row `i0 + r` is in the part.
                unsafe { ep.store(acc, i0 + r, p.out) };
            }
        }
    };
}

mod i8mm {
    body!("neon,dotprod,i8mm", 0, 0, "sudot");
}

mod dotprod {
    body!("neon,dotprod", 128, 0x80, "sdot");
}

/// The epilogue's column vectors for one block, loaded once from padded copies (the float
/// order is `zmm.rs`'s).
struct BlockEp<'a> {
    j0: usize,
    valid: usize,
    /// `shift · colsum − zero_fix`, wrapping: undoes the activation flip and applies the fix.
    add: Option<[int32x4_t; 4]>,
    scale: [float32x4_t; 4],
    row_scales: Option<&'a [f32]>,
    bias: Option<[float32x4_t; 4]>,
    relu: bool,
}

/// 16 floats as four q registers.
#[target_feature(enable = "neon")]
#[inline]
fn f32x16(v: [f32; N_BLOCK]) -> [float32x4_t; 4] {
    // SAFETY: `v` holds 16 floats; each load reads 4 of them.
    std::array::from_fn(|c| unsafe { vld1q_f32(v.as_ptr().add(4 * c)) })
}

impl<'a> BlockEp<'a> {
    #[target_feature(enable = "neon")]
    #[inline]
    fn new(p: &Part<'a>, nb: usize, shift: i32) -> BlockEp<'a> {
        let j0 = nb * N_BLOCK;
        let valid = (p.b.n() - j0).min(N_BLOCK);
        let add = if shift == 0 && p.ep.zero_fix.is_none() {
            None
        } else {
            let sums = block_values(p.b.col_sums(), j0);
            let fix = p.ep.zero_fix.map(|z| block_values(z, j0)).unwrap_or_default();
            let add: [i32; N_BLOCK] = std::array::from_fn(|c| shift.wrapping_mul(sums[c]).wrapping_sub(fix[c]));
            // SAFETY: `add` holds 16 int32; each load reads 4 of them.
            Some(std::array::from_fn(|c| unsafe { vld1q_s32(add.as_ptr().add(4 * c)) }))
        };
        let (scale, row_scales) = match p.ep.scale {
            Scale::Uniform(s) => ([vdupq_n_f32(s); 4], None),
            Scale::Columns(c) => (f32x16(block_values(c, j0)), None),
            Scale::RowsColumns { rows, cols } => (f32x16(block_values(cols, j0)), Some(rows)),
        };
        let bias = p.ep.bias.map(|b| f32x16(block_values(b, j0)));
        BlockEp { j0, valid, add, scale, row_scales, bias, relu: p.ep.relu }
    }

    /// # Safety
    /// `out` is the output of the part this was made from and `i` one of its rows.
    #[target_feature(enable = "neon")]
    #[inline]
    unsafe fn store(&self, acc: &[int32x4_t; 4], i: usize, out: Out) {
        let mut x = [vdupq_n_f32(0.0); 4];
        for c in 0..4 {
            let a = match &self.add {
                Some(add) => vaddq_s32(acc[c], add[c]),
                None => acc[c],
            };
            let s = match self.row_scales {
                Some(rows) => vmulq_f32(vdupq_n_f32(rows[i]), self.scale[c]),
                None => self.scale[c],
            };
            x[c] = vmulq_f32(vcvtq_f32_s32(a), s);
            if let Some(b) = &self.bias {
                x[c] = vaddq_f32(x[c], b[c]);
            }
            if self.relu {
                // x > 0 ? x : 0, as the reference: NaN and −0.0 give +0.0.
                let zero = vdupq_n_f32(0.0);
                x[c] = vbslq_f32(vcgtq_f32(x[c], zero), x[c], zero);
            }
        }
        match out {
            Out::F32 { ptr, stride, col0 } => {
                let mut tmp = [0f32; N_BLOCK];
                for (c, x) in x.iter().enumerate() {
                    // SAFETY: `tmp` holds 16 floats.
                    unsafe { vst1q_f32(tmp.as_mut_ptr().add(4 * c), *x) };
                }
                // SAFETY: the output holds row `i`, columns `j0 .. j0 + valid`.
                unsafe {
                    std::ptr::copy_nonoverlapping(tmp.as_ptr(), ptr.add(i * stride + self.j0 - col0), self.valid)
                };
            }
            Out::U8 { ptr, stride, scale, col0 } => {
                let q = quantize16(x, scale);
                let mut tmp = [0u8; N_BLOCK];
                // SAFETY: `tmp` holds 16 bytes.
                unsafe { vst1q_u8(tmp.as_mut_ptr(), q) };
                // SAFETY: the output holds row `i`, columns `j0 .. j0 + valid`.
                unsafe {
                    std::ptr::copy_nonoverlapping(tmp.as_ptr(), ptr.add(i * stride + self.j0 - col0), self.valid)
                };
            }
        }
    }
}

/// [`scalar::quantize_one`] on 16 lanes. NEON's conversion saturates and maps NaN to 0, where
/// x86's `cvtps2dq` (which the reference follows) gives `INT_MIN` for both; lanes outside
/// `[−2³¹, 2³¹)` or NaN are set to `INT_MIN` by hand.
#[target_feature(enable = "neon")]
#[inline]
fn quantize16(x: [float32x4_t; 4], scale: f32) -> uint8x16_t {
    let s = vdupq_n_f32(scale);
    let q = |x: float32x4_t| {
        let t = vmulq_f32(x, s);
        let inside = vandq_u32(vcgeq_f32(t, vdupq_n_f32(-2_147_483_648.0)), vcltq_f32(t, vdupq_n_f32(2_147_483_648.0)));
        let i = vbslq_s32(inside, vcvtnq_s32_f32(t), vdupq_n_s32(i32::MIN));
        let i = vmaxq_s32(vminq_s32(i, vdupq_n_s32(127)), vdupq_n_s32(-127));
        vreinterpretq_u32_s32(vaddq_s32(i, vdupq_n_s32(127)))
    };
    let lo = vcombine_u16(vmovn_u32(q(x[0])), vmovn_u32(q(x[1])));
    let hi = vcombine_u16(vmovn_u32(q(x[2])), vmovn_u32(q(x[3])));
    vcombine_u8(vmovn_u16(lo), vmovn_u16(hi))
}

/// [`scalar::quantize`], 16 values per step and the tail by the reference.
///
/// # Safety
/// The CPU has NEON; `dst` is at least as long as `src`.
#[target_feature(enable = "neon")]
pub(crate) unsafe fn quantize(src: &[f32], scale: f32, dst: &mut [u8]) {
    let whole = src.len() / 16 * 16;
    for i in (0..whole).step_by(16) {
        // SAFETY: 16 floats readable at `src[i..]`, 16 bytes writable at `dst[i..]`.
        unsafe {
            let s = src.as_ptr().add(i);
            let x = [vld1q_f32(s), vld1q_f32(s.add(4)), vld1q_f32(s.add(8)), vld1q_f32(s.add(12))];
            vst1q_u8(dst.as_mut_ptr().add(i), quantize16(x, scale));
        }
    }
    scalar::quantize(&src[whole..], scale, &mut dst[whole..]);
}

/// [`crate::scalar::fma_vv`] with `fmla`: the same single rounding per element.
///
/// # Safety
/// The CPU has NEON; `a` and `b` are at least as long as `acc`.
#[target_feature(enable = "neon")]
pub(crate) unsafe fn fma_vv(acc: &mut [f32], a: &[f32], b: &[f32]) {
    let whole = acc.len() / 4 * 4;
    for i in (0..whole).step_by(4) {
        // SAFETY: 4 floats at `i` in each slice (`i + 4 <= acc.len() <= a.len(), b.len()`).
        unsafe {
            let c = acc.as_mut_ptr().add(i);
            vst1q_f32(c, vfmaq_f32(vld1q_f32(c), vld1q_f32(a.as_ptr().add(i)), vld1q_f32(b.as_ptr().add(i))));
        }
    }
    for i in whole..acc.len() {
        acc[i] = a[i].mul_add(b[i], acc[i]);
    }
}

/// [`crate::scalar::fma_sv`] with `fmla`.
///
/// # Safety
/// The CPU has NEON; `b` is at least as long as `acc`.
#[target_feature(enable = "neon")]
pub(crate) unsafe fn fma_sv(acc: &mut [f32], s: f32, b: &[f32]) {
    let whole = acc.len() / 4 * 4;
    for i in (0..whole).step_by(4) {
        // SAFETY: 4 floats at `i` in both slices (`i + 4 <= acc.len() <= b.len()`).
        unsafe {
            let c = acc.as_mut_ptr().add(i);
            vst1q_f32(c, vfmaq_n_f32(vld1q_f32(c), vld1q_f32(b.as_ptr().add(i)), s));
        }
    }
    for i in whole..acc.len() {
        acc[i] = s.mul_add(b[i], acc[i]);
    }
}

pub(crate) const PEAK_EXACT: PeakLoop =
    PeakLoop { instructions: "sdot (by element)", macs_per_iter: 16 * 16, run: peak_exact };

/// 16 independent `sdot` per iteration.
///
/// # Safety
/// The CPU has dotprod.
#[target_feature(enable = "neon,dotprod")]
unsafe fn peak_exact(iters: u64) {
    // SAFETY: reads the static operands; every register written is declared clobbered.
    unsafe {
        asm!(
            "ldr q16, [{p}]",
            "ldr q17, [{p}, #16]",
            "2:",
            "sdot v0.4s, v16.16b, v17.4b[0]", "sdot v1.4s, v16.16b, v17.4b[1]",
            "sdot v2.4s, v16.16b, v17.4b[2]", "sdot v3.4s, v16.16b, v17.4b[3]",
            "sdot v4.4s, v16.16b, v17.4b[0]", "sdot v5.4s, v16.16b, v17.4b[1]",
            "sdot v6.4s, v16.16b, v17.4b[2]", "sdot v7.4s, v16.16b, v17.4b[3]",
            "sdot v8.4s, v16.16b, v17.4b[0]", "sdot v9.4s, v16.16b, v17.4b[1]",
            "sdot v10.4s, v16.16b, v17.4b[2]", "sdot v11.4s, v16.16b, v17.4b[3]",
            "sdot v12.4s, v16.16b, v17.4b[0]", "sdot v13.4s, v16.16b, v17.4b[1]",
            "sdot v14.4s, v16.16b, v17.4b[2]", "sdot v15.4s, v16.16b, v17.4b[3]",
            "subs {n}, {n}, #1",
            "b.ne 2b",
            n = inout(reg) iters.max(1) => _,
            p = in(reg) PEAK_OPERANDS.0.as_ptr(),
            out("v0") _, out("v1") _, out("v2") _, out("v3") _, out("v4") _, out("v5") _, out("v6") _,
            out("v7") _, out("v8") _, out("v9") _, out("v10") _, out("v11") _, out("v12") _, out("v13") _,
            out("v14") _, out("v15") _, out("v16") _, out("v17") _,
            options(nostack, readonly),
        );
    }
}
