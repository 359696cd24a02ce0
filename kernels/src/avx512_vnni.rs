//! AVX-512 VNNI: `vpdpbusd zmm` for the exact arithmetic, and `vpmaddubsw` + `vpdpwssd` (the
//! `madd`-with-ones and the add in one instruction) for the pair-saturating one.
//!
//! One quad of the packed layout is one zmm operand: 16 columns × 4 inner indices. Each step
//! broadcasts 4 activation bytes of a row to every lane and multiplies them with a quad, so the
//! kernel keeps an `R × C` tile of accumulators (rows × column blocks) in registers, loads the C
//! quads once per step and each row's 4 bytes once per step.

use std::arch::asm;
use std::arch::x86_64::*;

use crate::pack::QUAD;
use crate::part::{Out, Part, spill};
use crate::peak::{PEAK_OPERANDS, PeakLoop};
use crate::zmm::BlockEp;

/// Rows per tile: 6 × 4 accumulators + 4 quads + the broadcast fill 30 of 32 registers.
const ROWS_EXACT: usize = 6;
/// The saturating step needs a temporary and the ones, so one row fewer.
const ROWS_SAT: usize = 5;
/// Column blocks per tile.
const BLOCKS: usize = 4;
/// Output bytes of a part beyond which rows go in panels of one tile height, each swept across
/// every column, instead of each group of column blocks swept down every row. Sweeping down
/// rows reuses a 16 KB slice of `B` from L1, but writes to as many output rows at once as the
/// part has; when those rows are many megabytes (the full output layer: 32,000 floats a row)
/// the scattered write-backs cost more than streaming `B` again per panel. Measured on an idle
/// 2-vCPU Zen 4 EPYC (`bench-gemm --shape logits-full`, k = 256, two alternating runs): m = 64
/// from 65–77% of the step's peak to 71–78%, m = 256 from 60% to 70–71%; at m = 16 (2 MB) the
/// panels were 2 points slower, hence the threshold.
const PANEL_ABOVE: usize = 4 << 20;

/// The exact product of one part.
///
/// # Safety
/// The CPU has AVX-512F, AVX-512BW and AVX-512 VNNI; `p` satisfies [`Part`]'s invariants.
#[target_feature(enable = "avx512f,avx512bw,avx512vnni")]
pub(crate) unsafe fn gemm_exact(p: &Part) {
    // SAFETY: passed on from the caller.
    unsafe { drive::<false>(p) }
}

/// The pair-saturating product of one part.
///
/// # Safety
/// As [`gemm_exact`].
#[target_feature(enable = "avx512f,avx512bw,avx512vnni")]
pub(crate) unsafe fn gemm_saturating(p: &Part) {
    // SAFETY: passed on from the caller.
    unsafe { drive::<true>(p) }
}

/// # Safety
/// As [`gemm_exact`].
#[target_feature(enable = "avx512f,avx512bw,avx512vnni")]
unsafe fn drive<const SAT: bool>(p: &Part) {
    let rows_max = if SAT { ROWS_SAT } else { ROWS_EXACT };
    let panel = if panel_rows(p) { rows_max } else { p.rows.len() };
    let mut i0 = p.rows.start;
    while i0 < p.rows.end {
        let i_end = (i0 + panel).min(p.rows.end);
        let mut nb = p.blocks.start;
        while nb < p.blocks.end {
            let c = (p.blocks.end - nb).min(BLOCKS);
            let mut i = i0;
            while i < i_end {
                let r = (i_end - i).min(rows_max);
                macro_rules! call {
                    ($r:literal, $c:literal) => {
                        // SAFETY: rows `i .. i + r` and blocks `nb .. nb + c` lie inside the part.
                        unsafe { tile::<SAT, $r, $c>(p, i, nb) }
                    };
                }
                by_shape!(call, r, c, [1 2 3 4 5 6], [1 2 3 4]);
                i += r;
            }
            nb += c;
        }
        i0 = i_end;
    }
}

/// Whether the part's output is large enough to be computed in row panels ([`PANEL_ABOVE`]).
fn panel_rows(p: &Part) -> bool {
    let elem = match p.out {
        Out::F32 { .. } => 4,
        Out::U8 { .. } => 1,
    };
    p.rows.len() * p.cols().len() * elem > PANEL_ABOVE
}

/// Rows `i0 .. i0 + R`, blocks `nb0 .. nb0 + C`: the whole inner dimension, then the epilogue.
///
/// # Safety
/// As [`gemm_exact`], and the tile lies inside the part.
#[target_feature(enable = "avx512f,avx512bw,avx512vnni")]
#[inline]
unsafe fn tile<const SAT: bool, const R: usize, const C: usize>(p: &Part, i0: usize, nb0: usize) {
    let quads = p.b.k_padded() / 4;
    let b: [*const u8; C] = std::array::from_fn(|c| p.block_bytes(nb0 + c));
    let a: [*const u8; R] = std::array::from_fn(|r| p.row_bytes(i0 + r));
    let ones = _mm512_set1_epi16(1);
    let mut acc = [[_mm512_setzero_si512(); C]; R];
    for g in 0..quads {
        let mut bv = [_mm512_setzero_si512(); C];
        for c in 0..C {
            // SAFETY: quad `g` of a block is 64 bytes inside the packed bytes.
            bv[c] = unsafe { _mm512_loadu_si512(b[c].add(g * QUAD).cast()) };
        }
        for r in 0..R {
            // SAFETY: bytes `4g .. 4g + 4` of a row are below `k_padded`, inside the row.
            let av = _mm512_set1_epi32(unsafe { a[r].add(4 * g).cast::<i32>().read_unaligned() });
            for c in 0..C {
                acc[r][c] = if SAT {
                    let pairs = _mm512_maddubs_epi16(av, bv[c]);
                    // LLVM's machine combiner splits `vpdpwssd acc, x, ones` in a loop back into
                    // `vpmaddwd` + `vpaddd` (three uops per step instead of two), so it is
                    // written out where the compiler cannot take it apart.
                    let mut a = acc[r][c];
                    // SAFETY: registers only; the CPU has AVX-512 VNNI (caller).
                    unsafe {
                        asm!("vpdpwssd {a}, {x}, {o}", a = inout(zmm_reg) a, x = in(zmm_reg) pairs, o = in(zmm_reg) ones,
                             options(pure, nomem, nostack))
                    };
                    a
                } else {
                    _mm512_dpbusd_epi32(acc[r][c], av, bv[c])
                };
            }
        }
    }
    let acc = spill(&acc);
    for c in 0..C {
        // SAFETY: block `nb0 + c` is in the part.
        let ep = unsafe { BlockEp::new(p, nb0 + c) };
        for (r, acc) in acc.iter().enumerate() {
            // SAFETY: row `i0 + r` is in the part.
            unsafe { ep.store(acc[c], i0 + r, p.out) };
        }
    }
}

/// The exact step in registers only: 16 independent `vpdpbusd zmm` per iteration.
pub(crate) const PEAK_EXACT: PeakLoop =
    PeakLoop { instructions: "vpdpbusd zmm", macs_per_iter: 16 * 64, run: peak_exact };

/// The saturating step in registers only: 8 × (`vpmaddubsw zmm` → `vpdpwssd zmm`) per iteration.
pub(crate) const PEAK_SATURATING: PeakLoop =
    PeakLoop { instructions: "vpmaddubsw zmm + vpdpwssd zmm", macs_per_iter: 8 * 64, run: peak_saturating };

/// # Safety
/// The CPU has AVX-512F and AVX-512 VNNI.
#[target_feature(enable = "avx512f,avx512vnni")]
unsafe fn peak_exact(iters: u64) {
    // SAFETY: reads the static operands; every register written is declared clobbered.
    unsafe {
        asm!(
            "vmovdqa64 zmm30, [{p}]",
            "vmovdqa64 zmm31, [{p} + 64]",
            "2:",
            "vpdpbusd zmm0, zmm30, zmm31", "vpdpbusd zmm1, zmm30, zmm31",
            "vpdpbusd zmm2, zmm30, zmm31", "vpdpbusd zmm3, zmm30, zmm31",
            "vpdpbusd zmm4, zmm30, zmm31", "vpdpbusd zmm5, zmm30, zmm31",
            "vpdpbusd zmm6, zmm30, zmm31", "vpdpbusd zmm7, zmm30, zmm31",
            "vpdpbusd zmm8, zmm30, zmm31", "vpdpbusd zmm9, zmm30, zmm31",
            "vpdpbusd zmm10, zmm30, zmm31", "vpdpbusd zmm11, zmm30, zmm31",
            "vpdpbusd zmm12, zmm30, zmm31", "vpdpbusd zmm13, zmm30, zmm31",
            "vpdpbusd zmm14, zmm30, zmm31", "vpdpbusd zmm15, zmm30, zmm31",
            "dec {n}",
            "jnz 2b",
            n = inout(reg) iters.max(1) => _,
            p = in(reg) PEAK_OPERANDS.0.as_ptr(),
            out("zmm0") _, out("zmm1") _, out("zmm2") _, out("zmm3") _, out("zmm4") _, out("zmm5") _,
            out("zmm6") _, out("zmm7") _, out("zmm8") _, out("zmm9") _, out("zmm10") _, out("zmm11") _,
            out("zmm12") _, out("zmm13") _, out("zmm14") _, out("zmm15") _, out("zmm30") _, out("zmm31") _,
            options(nostack, readonly),
        );
    }
}

/// # Safety
/// The CPU has AVX-512BW and AVX-512 VNNI.
#[target_feature(enable = "avx512f,avx512bw,avx512vnni")]
unsafe fn peak_saturating(iters: u64) {
    // SAFETY: reads the static operands; every register written is declared clobbered.
    unsafe {
        asm!(
            "vpternlogd zmm29, zmm29, zmm29, 0xff",
            "vpabsw zmm29, zmm29",
            "vmovdqa64 zmm30, [{p}]",
            "vmovdqa64 zmm31, [{p} + 64]",
            "2:",
            "vpmaddubsw zmm16, zmm30, zmm31", "vpmaddubsw zmm17, zmm30, zmm31",
            "vpmaddubsw zmm18, zmm30, zmm31", "vpmaddubsw zmm19, zmm30, zmm31",
            "vpmaddubsw zmm20, zmm30, zmm31", "vpmaddubsw zmm21, zmm30, zmm31",
            "vpmaddubsw zmm22, zmm30, zmm31", "vpmaddubsw zmm23, zmm30, zmm31",
            "vpdpwssd zmm0, zmm16, zmm29", "vpdpwssd zmm1, zmm17, zmm29",
            "vpdpwssd zmm2, zmm18, zmm29", "vpdpwssd zmm3, zmm19, zmm29",
            "vpdpwssd zmm4, zmm20, zmm29", "vpdpwssd zmm5, zmm21, zmm29",
            "vpdpwssd zmm6, zmm22, zmm29", "vpdpwssd zmm7, zmm23, zmm29",
            "dec {n}",
            "jnz 2b",
            n = inout(reg) iters.max(1) => _,
            p = in(reg) PEAK_OPERANDS.0.as_ptr(),
            out("zmm0") _, out("zmm1") _, out("zmm2") _, out("zmm3") _, out("zmm4") _, out("zmm5") _,
            out("zmm6") _, out("zmm7") _, out("zmm16") _, out("zmm17") _, out("zmm18") _, out("zmm19") _,
            out("zmm20") _, out("zmm21") _, out("zmm22") _, out("zmm23") _, out("zmm29") _, out("zmm30") _,
            out("zmm31") _,
            options(nostack, readonly),
        );
    }
}
