//! AVX-VNNI (Alder Lake and later, VEX-encoded): `vpdpbusd ymm` for the exact arithmetic. A quad
//! is two ymm (columns 0–7, 8–15); each step multiplies 4 broadcast activation bytes of a row
//! with both and adds the 4 products per column straight into int32. The saturating arithmetic
//! comes from the AVX2 kernel: `vpdpwssd ymm` could fuse its madd and add, but both run on the
//! same two ports as `vpmaddubsw`, so it would not be faster.

use std::arch::asm;
use std::arch::x86_64::*;

use crate::pack::{PREFETCH, QUAD};
use crate::part::Part;
use crate::peak::{PEAK_OPERANDS, PeakLoop};
use crate::ymm::BlockEp;

/// Rows per tile: 6 × 2 accumulators + 2 quad halves + the broadcast = 15 of 16 registers.
const ROWS: usize = 6;

/// The exact product of one part.
///
/// # Safety
/// The CPU has AVX2 and AVX-VNNI; `p` satisfies [`Part`]'s invariants.
#[target_feature(enable = "avx2,avxvnni")]
pub(crate) unsafe fn gemm_exact(p: &Part) {
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
            by_shape!(call, r, 1, [1 2 3 4 5 6], [1]);
            i += r;
        }
    }
}

/// # Safety
/// As [`gemm_exact`], and the tile lies inside the part.
#[target_feature(enable = "avx2,avxvnni")]
#[inline]
unsafe fn tile<const R: usize>(p: &Part, i0: usize, nb: usize) {
    let quads = p.b.k_padded() / 4;
    let b = p.block_bytes(nb);
    let a: [*const u8; R] = std::array::from_fn(|r| p.row_bytes(i0 + r));
    let mut acc = [[_mm256_setzero_si256(); 2]; R];
    for g in 0..quads {
        // One quad is one cache line: ask for the one PREFETCH bytes ahead.
        _mm_prefetch::<_MM_HINT_T0>(b.wrapping_add(g * QUAD + PREFETCH).cast());
        // SAFETY: quad `g` is 64 bytes inside the block.
        let (b0, b1) =
            unsafe { (_mm256_loadu_si256(b.add(g * QUAD).cast()), _mm256_loadu_si256(b.add(g * QUAD + 32).cast())) };
        for r in 0..R {
            // SAFETY: bytes `4g .. 4g + 4` of a row are below `k_padded`.
            let av = _mm256_set1_epi32(unsafe { a[r].add(4 * g).cast::<i32>().read_unaligned() });
            acc[r][0] = _mm256_dpbusd_avx_epi32(acc[r][0], av, b0);
            acc[r][1] = _mm256_dpbusd_avx_epi32(acc[r][1], av, b1);
        }
    }
    // SAFETY: block `nb` is in the part.
    let ep = unsafe { BlockEp::new(p, nb) };
    for (r, acc) in acc.into_iter().enumerate() {
        // SAFETY: row `i0 + r` is in the part.
        unsafe { ep.store(acc, i0 + r, p.out) };
    }
}

pub(crate) const PEAK_EXACT: PeakLoop =
    PeakLoop { instructions: "vpdpbusd ymm (VEX)", macs_per_iter: 12 * 32, run: peak_exact };

/// 12 independent `vpdpbusd ymm` per iteration.
///
/// # Safety
/// The CPU has AVX-VNNI.
#[target_feature(enable = "avx2,avxvnni")]
unsafe fn peak_exact(iters: u64) {
    // SAFETY: reads the static operands; every register written is declared clobbered.
    unsafe {
        asm!(
            "vmovdqa ymm14, [{p}]",
            "vmovdqa ymm15, [{p} + 32]",
            "2:",
            "{{vex}} vpdpbusd ymm0, ymm14, ymm15", "{{vex}} vpdpbusd ymm1, ymm14, ymm15",
            "{{vex}} vpdpbusd ymm2, ymm14, ymm15", "{{vex}} vpdpbusd ymm3, ymm14, ymm15",
            "{{vex}} vpdpbusd ymm4, ymm14, ymm15", "{{vex}} vpdpbusd ymm5, ymm14, ymm15",
            "{{vex}} vpdpbusd ymm6, ymm14, ymm15", "{{vex}} vpdpbusd ymm7, ymm14, ymm15",
            "{{vex}} vpdpbusd ymm8, ymm14, ymm15", "{{vex}} vpdpbusd ymm9, ymm14, ymm15",
            "{{vex}} vpdpbusd ymm10, ymm14, ymm15", "{{vex}} vpdpbusd ymm11, ymm14, ymm15",
            "dec {n}",
            "jnz 2b",
            n = inout(reg) iters.max(1) => _,
            p = in(reg) PEAK_OPERANDS.0.as_ptr(),
            out("ymm0") _, out("ymm1") _, out("ymm2") _, out("ymm3") _, out("ymm4") _, out("ymm5") _,
            out("ymm6") _, out("ymm7") _, out("ymm8") _, out("ymm9") _, out("ymm10") _, out("ymm11") _,
            out("ymm14") _, out("ymm15") _,
            options(nostack, readonly),
        );
    }
}
