//! AVX-512BW (Skylake-X and later): the pair-saturating arithmetic with `vpmaddubsw zmm` as
//! intgemm and Firefox compute it, and the exact one by widening to int16 (`vpmaddwd zmm`).
//!
//! Saturating: one quad is one zmm; `vpmaddubsw` with 4 broadcast activation bytes gives each
//! column's two saturated pair sums (pairs `(4g, 4g+1)` and `(4g+2, 4g+3)`, the reference's), and
//! `vpmaddwd` with ones adds them exactly into one int32 lane per column.

use std::arch::asm;
use std::arch::x86_64::*;
use std::ops::Range;

use crate::pack::QUAD;
use crate::part::{Part, spill};
use crate::peak::{PEAK_OPERANDS, PeakLoop};
use crate::widen::{self, Widened};
use crate::zmm::BlockEp;

pub(crate) const SATURATING: &str = "vpmaddubsw + vpmaddwd(ones) + vpaddd zmm";
pub(crate) const EXACT: &str = "int16 widening, vpmaddwd + vpaddd zmm";

/// Saturating tile: 4 rows × 4 blocks = 16 accumulators, 4 quads, the broadcast, the ones and
/// temporaries.
const ROWS_SAT: usize = 4;
const BLOCKS_SAT: usize = 4;
/// Exact tile: 6 rows × 2 blocks × 2 accumulators (8 columns each) + 4 widened weights.
const ROWS_EXACT: usize = 6;
const BLOCKS_EXACT: usize = 2;

/// The pair-saturating product of one part.
///
/// # Safety
/// The CPU has AVX-512F and AVX-512BW; `p` satisfies [`Part`]'s invariants.
#[target_feature(enable = "avx512f,avx512bw")]
pub(crate) unsafe fn gemm_saturating(p: &Part) {
    let mut nb = p.blocks.start;
    while nb < p.blocks.end {
        let c = (p.blocks.end - nb).min(BLOCKS_SAT);
        let mut i = p.rows.start;
        while i < p.rows.end {
            let r = (p.rows.end - i).min(ROWS_SAT);
            macro_rules! call {
                ($r:literal, $c:literal) => {
                    // SAFETY: rows `i .. i + r` and blocks `nb .. nb + c` lie inside the part.
                    unsafe { tile_saturating::<$r, $c>(p, i, nb) }
                };
            }
            by_shape!(call, r, c, [1 2 3 4], [1 2 3 4]);
            i += r;
        }
        nb += c;
    }
}

/// # Safety
/// As [`gemm_saturating`], and the tile lies inside the part.
#[target_feature(enable = "avx512f,avx512bw")]
#[inline]
unsafe fn tile_saturating<const R: usize, const C: usize>(p: &Part, i0: usize, nb0: usize) {
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
            // SAFETY: bytes `4g .. 4g + 4` of a row are below `k_padded`.
            let av = _mm512_set1_epi32(unsafe { a[r].add(4 * g).cast::<i32>().read_unaligned() });
            for c in 0..C {
                let pairs = _mm512_madd_epi16(_mm512_maddubs_epi16(av, bv[c]), ones);
                acc[r][c] = _mm512_add_epi32(acc[r][c], pairs);
            }
        }
    }
    for c in 0..C {
        // SAFETY: block `nb0 + c` is in the part.
        let ep = unsafe { BlockEp::new(p, nb0 + c) };
        for (r, acc) in acc.iter().enumerate() {
            // SAFETY: row `i0 + r` is in the part.
            unsafe { ep.store(acc[c], i0 + r, p.out) };
        }
    }
}

/// The exact product of one part.
///
/// # Safety
/// The CPU has AVX-512F and AVX-512BW; `p` satisfies [`Part`]'s invariants.
#[target_feature(enable = "avx512f,avx512bw")]
pub(crate) unsafe fn gemm_exact(p: &Part) {
    // SAFETY: passed on from the caller; `widen_bytes` and `wide` need only AVX-512F/BW.
    unsafe { widen::drive(p, BLOCKS_EXACT, widen_bytes, wide) }
}

/// # Safety
/// The CPU has AVX-512BW; `len` (a multiple of 32) bytes readable at `src`, int16 writable at
/// `dst`.
#[target_feature(enable = "avx512f,avx512bw")]
unsafe fn widen_bytes(src: *const u8, len: usize, dst: *mut i16, signed: bool) {
    for x in (0..len).step_by(32) {
        // SAFETY: 32 bytes readable at `src + x`, 32 int16 writable at `dst + x`.
        unsafe {
            let v = _mm256_loadu_si256(src.add(x).cast());
            let w = if signed { _mm512_cvtepi8_epi16(v) } else { _mm512_cvtepu8_epi16(v) };
            _mm512_storeu_si512(dst.add(x).cast(), w);
        }
    }
}

/// # Safety
/// The CPU has AVX-512F/BW; `w` holds the widened rows and blocks given.
#[target_feature(enable = "avx512f,avx512bw")]
unsafe fn wide(p: &Part, w: &Widened, rows: Range<usize>, blocks: Range<usize>) {
    let mut nb = blocks.start;
    while nb < blocks.end {
        let c = (blocks.end - nb).min(BLOCKS_EXACT);
        let mut i = rows.start;
        while i < rows.end {
            let r = (rows.end - i).min(ROWS_EXACT);
            macro_rules! call {
                ($r:literal, $c:literal) => {
                    // SAFETY: rows `i .. i + r` and blocks `nb .. nb + c` are widened and in the part.
                    unsafe { tile_exact::<$r, $c>(p, w, i, nb) }
                };
            }
            by_shape!(call, r, c, [1 2 3 4 5 6], [1 2]);
            i += r;
        }
        nb += c;
    }
}

/// # Safety
/// As [`wide`], for rows `i0 .. i0 + R` and blocks `nb0 .. nb0 + C`.
#[target_feature(enable = "avx512f,avx512bw")]
#[inline]
unsafe fn tile_exact<const R: usize, const C: usize>(p: &Part, w: &Widened, i0: usize, nb0: usize) {
    let quads = w.kp / 4;
    let mut b = [w.b; C];
    let mut a = [w.a; R];
    // SAFETY: the blocks and rows are inside the widened scratch.
    unsafe {
        for (c, ptr) in b.iter_mut().enumerate() {
            *ptr = ptr.add((nb0 + c - w.nb0) * w.kp * 16);
        }
        for (r, ptr) in a.iter_mut().enumerate() {
            *ptr = ptr.add((i0 + r - w.row0) * w.kp);
        }
    }
    // acc[r][c][h]: columns 8h .. 8h + 8 of block c, two adjacent pair sums per column.
    let mut acc = [[[_mm512_setzero_si512(); 2]; C]; R];
    for g in 0..quads {
        let mut bv = [[_mm512_setzero_si512(); 2]; C];
        for (c, bv) in bv.iter_mut().enumerate() {
            for (h, bv) in bv.iter_mut().enumerate() {
                // SAFETY: a widened quad is 64 int16 = 2 zmm, 64-byte aligned.
                *bv = unsafe { _mm512_load_si512(b[c].add(g * QUAD + 32 * h).cast()) };
            }
        }
        for r in 0..R {
            // SAFETY: int16 `4g .. 4g + 4` of a widened row are below `kp`.
            let av = _mm512_set1_epi64(unsafe { a[r].add(4 * g).cast::<i64>().read_unaligned() });
            for c in 0..C {
                for h in 0..2 {
                    acc[r][c][h] = _mm512_add_epi32(acc[r][c][h], _mm512_madd_epi16(av, bv[c][h]));
                }
            }
        }
    }
    // Even lanes of lo and hi, after adding each odd lane into the even one below it.
    let evens = _mm512_setr_epi32(0, 2, 4, 6, 8, 10, 12, 14, 16, 18, 20, 22, 24, 26, 28, 30);
    let acc = spill(&acc);
    for c in 0..C {
        // SAFETY: block `nb0 + c` is in the part.
        let ep = unsafe { BlockEp::new(p, nb0 + c) };
        for (r, acc) in acc.iter().enumerate() {
            let [lo, hi] = acc[c];
            let lo = _mm512_add_epi32(lo, _mm512_srli_epi64::<32>(lo));
            let hi = _mm512_add_epi32(hi, _mm512_srli_epi64::<32>(hi));
            // SAFETY: row `i0 + r` is in the part.
            unsafe { ep.store(_mm512_permutex2var_epi32(lo, evens, hi), i0 + r, p.out) };
        }
    }
}

pub(crate) const PEAK_SATURATING: PeakLoop =
    PeakLoop { instructions: SATURATING, macs_per_iter: 6 * 64, run: peak_saturating };
pub(crate) const PEAK_EXACT: PeakLoop =
    PeakLoop { instructions: "vpmaddwd + vpaddd zmm", macs_per_iter: 8 * 32, run: peak_exact };

/// 6 independent saturating steps per iteration.
///
/// # Safety
/// The CPU has AVX-512BW.
#[target_feature(enable = "avx512f,avx512bw")]
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
            "vpmaddwd zmm16, zmm16, zmm29", "vpmaddwd zmm17, zmm17, zmm29",
            "vpmaddwd zmm18, zmm18, zmm29", "vpmaddwd zmm19, zmm19, zmm29",
            "vpmaddwd zmm20, zmm20, zmm29", "vpmaddwd zmm21, zmm21, zmm29",
            "vpaddd zmm0, zmm0, zmm16", "vpaddd zmm1, zmm1, zmm17",
            "vpaddd zmm2, zmm2, zmm18", "vpaddd zmm3, zmm3, zmm19",
            "vpaddd zmm4, zmm4, zmm20", "vpaddd zmm5, zmm5, zmm21",
            "dec {n}",
            "jnz 2b",
            n = inout(reg) iters.max(1) => _,
            p = in(reg) PEAK_OPERANDS.0.as_ptr(),
            out("zmm0") _, out("zmm1") _, out("zmm2") _, out("zmm3") _, out("zmm4") _, out("zmm5") _,
            out("zmm16") _, out("zmm17") _, out("zmm18") _, out("zmm19") _, out("zmm20") _, out("zmm21") _,
            out("zmm29") _, out("zmm30") _, out("zmm31") _,
            options(nostack, readonly),
        );
    }
}

/// 8 independent exact steps per iteration.
///
/// # Safety
/// The CPU has AVX-512BW.
#[target_feature(enable = "avx512f,avx512bw")]
unsafe fn peak_exact(iters: u64) {
    // SAFETY: reads the static operands; every register written is declared clobbered.
    unsafe {
        asm!(
            "vmovdqa64 zmm30, [{p}]",
            "vmovdqa64 zmm31, [{p} + 64]",
            "2:",
            "vpmaddwd zmm16, zmm30, zmm31", "vpmaddwd zmm17, zmm30, zmm31",
            "vpmaddwd zmm18, zmm30, zmm31", "vpmaddwd zmm19, zmm30, zmm31",
            "vpmaddwd zmm20, zmm30, zmm31", "vpmaddwd zmm21, zmm30, zmm31",
            "vpmaddwd zmm22, zmm30, zmm31", "vpmaddwd zmm23, zmm30, zmm31",
            "vpaddd zmm0, zmm0, zmm16", "vpaddd zmm1, zmm1, zmm17",
            "vpaddd zmm2, zmm2, zmm18", "vpaddd zmm3, zmm3, zmm19",
            "vpaddd zmm4, zmm4, zmm20", "vpaddd zmm5, zmm5, zmm21",
            "vpaddd zmm6, zmm6, zmm22", "vpaddd zmm7, zmm7, zmm23",
            "dec {n}",
            "jnz 2b",
            n = inout(reg) iters.max(1) => _,
            p = in(reg) PEAK_OPERANDS.0.as_ptr(),
            out("zmm0") _, out("zmm1") _, out("zmm2") _, out("zmm3") _, out("zmm4") _, out("zmm5") _,
            out("zmm6") _, out("zmm7") _, out("zmm16") _, out("zmm17") _, out("zmm18") _, out("zmm19") _,
            out("zmm20") _, out("zmm21") _, out("zmm22") _, out("zmm23") _, out("zmm30") _, out("zmm31") _,
            options(nostack, readonly),
        );
    }
}
