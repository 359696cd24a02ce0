//! AMX-INT8 (Sapphire Rapids and later): `tdpbusd` on tiles, exact. Stable Rust has no AMX
//! intrinsics, so the tile instructions are `asm!`; tile registers are invisible to the compiler,
//! which never touches them, and every tile `asm!` is volatile, so they keep their order.
//!
//! The packed layout is AMX's own: 16 consecutive quads of a block (64 inner indices × 16
//! columns) are one B tile in the VNNI layout, stride 64 bytes, read in place. A tiles are read
//! straight from the activation rows with their stride. With eight tiles the kernel computes 32
//! rows × 32 columns per step: C in tmm0–3, A in tmm4–5, B in tmm6–7. Results go through a
//! 1 KB buffer per C tile to the AVX-512 epilogue.

use std::arch::asm;
use std::arch::x86_64::*;

use crate::pack::{K_BLOCK, PREFETCH, QUAD};
use crate::part::Part;
use crate::peak::{PEAK_OPERANDS, PeakLoop};
use crate::zmm::BlockEp;

pub(crate) const EXACT: &str = "tdpbusd tiles of 32 rows × 32 columns; fewer than 4 rows: vpdpbusd zmm";

/// Below this many rows the AVX-512 VNNI kernel is faster: a tile instruction costs the same
/// for 1 row as for 16.
const MIN_ROWS: usize = 4;
/// Rows of activations kept hot while a pair of column blocks is reused across them.
const PANEL: usize = 64;

/// The exact product of one part: tiles, or AVX-512 VNNI for very few rows.
///
/// # Safety
/// The CPU has AVX-512F/BW/VNNI and AMX-TILE/AMX-INT8, and this process holds the Linux tile
/// data permission (`cpu.rs` checks all of it); `p` satisfies [`Part`]'s invariants.
#[target_feature(enable = "avx512f,avx512bw,avx512vnni")]
pub(crate) unsafe fn gemm_exact(p: &Part) {
    // SAFETY: passed on from the caller (AVX-512 VNNI is part of this kernel's requirements).
    unsafe { if p.rows.len() < MIN_ROWS { crate::avx512_vnni::gemm_exact(p) } else { gemm_exact_tiles_only(p) } }
}

/// Tiles for every row count (the tests hold this to the reference for few rows too).
///
/// # Safety
/// As [`gemm_exact`].
#[target_feature(enable = "avx512f,avx512bw,avx512vnni")]
pub(crate) unsafe fn gemm_exact_tiles_only(p: &Part) {
    let full_end = p.rows.start + (p.rows.len() / 32) * 32;
    let mut i = p.rows.start;
    let mut cfg = None;
    while i < p.rows.end {
        // Whole 32-row chunks in panels, then the ragged rest with its own tile shapes.
        let end = if i < full_end { (i + PANEL).min(full_end) } else { p.rows.end };
        let rows = (end - i).min(32);
        let shape = (rows.min(16), rows.saturating_sub(16));
        if cfg != Some(shape) {
            let c = TileCfg::new(shape.0, shape.1);
            // SAFETY: a valid palette-1 configuration (rows ≤ 16, 64 bytes per row); AMX is
            // usable (caller).
            unsafe { asm!("ldtilecfg [{}]", in(reg) &c, options(nostack, readonly)) };
            cfg = Some(shape);
        }
        let mut nb = p.blocks.start;
        while nb < p.blocks.end {
            let two_cols = nb + 1 < p.blocks.end;
            let mut r = i;
            while r < end {
                // SAFETY: rows `r .. r + shape rows` and blocks `nb ..= nb + two_cols` are in
                // the part, and the tiles are configured for that shape.
                unsafe {
                    match (shape.1 > 0, two_cols) {
                        (true, true) => step::<true, true>(p, r, nb, shape),
                        (true, false) => step::<true, false>(p, r, nb, shape),
                        (false, true) => step::<false, true>(p, r, nb, shape),
                        (false, false) => step::<false, false>(p, r, nb, shape),
                    }
                }
                r += 32;
            }
            nb += 2;
        }
        i = end;
    }
    if cfg.is_some() {
        // SAFETY: releases the tile state this function configured.
        unsafe { asm!("tilerelease", options(nostack, nomem)) };
    }
}

/// The tile shapes as `ldtilecfg` reads them (palette 1).
#[repr(C, align(64))]
struct TileCfg {
    palette: u8,
    start_row: u8,
    reserved: [u8; 14],
    colsb: [u16; 16],
    rows: [u8; 16],
}

impl TileCfg {
    /// C tiles 0–1 and A tile 4 get `r0` rows, C tiles 2–3 and A tile 5 `r1` (0: unused), the B
    /// tiles 6–7 always 16 rows of 64 bytes.
    fn new(r0: usize, r1: usize) -> TileCfg {
        let mut c = TileCfg { palette: 1, start_row: 0, reserved: [0; 14], colsb: [0; 16], rows: [0; 16] };
        for (t, rows) in [(0, r0), (1, r0), (4, r0), (2, r1), (3, r1), (5, r1), (6, 16), (7, 16)] {
            if rows > 0 {
                c.rows[t] = rows as u8;
                c.colsb[t] = 64;
            }
        }
        c
    }
}

macro_rules! tileload {
    ($t:literal, $ptr:expr, $stride:expr) => {
        asm!(concat!("tileloadd tmm", $t, ", [{p} + {s}]"), p = in(reg) $ptr, s = in(reg) $stride,
             options(nostack, readonly))
    };
}
macro_rules! tdpbusd {
    ($c:literal, $a:literal, $b:literal) => {
        asm!(concat!("tdpbusd tmm", $c, ", tmm", $a, ", tmm", $b), options(nostack, nomem))
    };
}
macro_rules! tilestore {
    ($t:literal, $ptr:expr) => {
        asm!(concat!("tilestored [{p} + {s}], tmm", $t), p = in(reg) $ptr, s = in(reg) 64usize, options(nostack))
    };
}

/// C tile results: 16 rows × 16 int32.
#[repr(C, align(64))]
struct CBuf([[i32; 16]; 16]);

/// One step: rows `i ..` (16, or 32 with `TWO_ROWS`) × block `nb` (and `nb + 1` with
/// `TWO_COLS`) over the whole inner dimension, then the epilogue.
///
/// # Safety
/// As [`gemm_exact`]; the tiles are configured for `shape` and the rows and blocks are in the part.
#[target_feature(enable = "avx512f,avx512bw,avx512vnni")]
#[inline]
unsafe fn step<const TWO_ROWS: bool, const TWO_COLS: bool>(p: &Part, i: usize, nb: usize, shape: (usize, usize)) {
    let kp = p.b.k_padded();
    let stride = p.a.stride;
    let (a0, a1) = (p.row_bytes(i), p.row_bytes(i + 16));
    let (b0, b1) = (p.block_bytes(nb), p.block_bytes(nb + 1));
    // SAFETY: each tile load reads rows inside the part (A: `shape` rows of 64 bytes below
    // `k_padded`; B: 16 quads of a block in the packed bytes), in the configured shapes.
    unsafe {
        asm!("tilezero tmm0", options(nostack, nomem));
        if TWO_COLS {
            asm!("tilezero tmm1", options(nostack, nomem));
        }
        if TWO_ROWS {
            asm!("tilezero tmm2", options(nostack, nomem));
            if TWO_COLS {
                asm!("tilezero tmm3", options(nostack, nomem));
            }
        }
        for kc in 0..kp / K_BLOCK {
            let ahead = kc * 16 * QUAD + PREFETCH;
            for l in (0..16 * QUAD).step_by(64) {
                _mm_prefetch::<_MM_HINT_T0>(b0.wrapping_add(ahead + l).cast());
                if TWO_COLS {
                    _mm_prefetch::<_MM_HINT_T0>(b1.wrapping_add(ahead + l).cast());
                }
            }
            tileload!("4", a0.add(kc * K_BLOCK), stride);
            tileload!("6", b0.add(kc * 16 * QUAD), 64usize);
            tdpbusd!("0", "4", "6");
            if TWO_COLS {
                tileload!("7", b1.add(kc * 16 * QUAD), 64usize);
                tdpbusd!("1", "4", "7");
            }
            if TWO_ROWS {
                tileload!("5", a1.add(kc * K_BLOCK), stride);
                tdpbusd!("2", "5", "6");
                if TWO_COLS {
                    tdpbusd!("3", "5", "7");
                }
            }
        }
    }
    let mut buf = CBuf([[0; 16]; 16]);
    // SAFETY: for each store and finish: the buffer holds 16 rows of 64 bytes and a tile at most
    // 16 rows; the rows and blocks finished are the ones this step computed.
    unsafe {
        tilestore!("0", buf.0.as_mut_ptr());
        finish(p, &buf, shape.0, i, nb);
        if TWO_COLS {
            tilestore!("1", buf.0.as_mut_ptr());
            finish(p, &buf, shape.0, i, nb + 1);
        }
        if TWO_ROWS {
            tilestore!("2", buf.0.as_mut_ptr());
            finish(p, &buf, shape.1, i + 16, nb);
            if TWO_COLS {
                tilestore!("3", buf.0.as_mut_ptr());
                finish(p, &buf, shape.1, i + 16, nb + 1);
            }
        }
    }
}

/// The epilogue of `rows` rows of one stored C tile: output rows `row0 ..`, block `nb`.
///
/// # Safety
/// The CPU has AVX-512F; the rows and block are in the part.
#[target_feature(enable = "avx512f")]
#[inline]
unsafe fn finish(p: &Part, buf: &CBuf, rows: usize, row0: usize, nb: usize) {
    // SAFETY: block `nb` is in the part.
    let ep = unsafe { BlockEp::new(p, nb) };
    for (m, acc) in buf.0.iter().enumerate().take(rows) {
        // SAFETY: the buffer row is 64 aligned bytes; row `row0 + m` is in the part.
        unsafe { ep.store(_mm512_load_si512(acc.as_ptr().cast()), row0 + m, p.out) };
    }
}

pub(crate) const PEAK_EXACT: PeakLoop =
    PeakLoop { instructions: "tdpbusd (16×64 · 64×16 tiles)", macs_per_iter: 4 * 16 * 16 * 64, run: peak_exact };

/// 4 independent `tdpbusd` on full tiles per iteration.
///
/// # Safety
/// As [`gemm_exact`].
unsafe fn peak_exact(iters: u64) {
    let c = TileCfg::new(16, 16);
    // SAFETY: a valid configuration; reads the static 1 KB operands into tiles, released at
    // the end.
    unsafe {
        asm!("ldtilecfg [{}]", in(reg) &c, options(nostack, readonly));
        asm!(
            "tilezero tmm0", "tilezero tmm1", "tilezero tmm2", "tilezero tmm3",
            "tileloadd tmm4, [{p} + {s}]", "tileloadd tmm5, [{p} + {s}]",
            "tileloadd tmm6, [{p} + {s}]", "tileloadd tmm7, [{p} + {s}]",
            "2:",
            "tdpbusd tmm0, tmm4, tmm6", "tdpbusd tmm1, tmm4, tmm7",
            "tdpbusd tmm2, tmm5, tmm6", "tdpbusd tmm3, tmm5, tmm7",
            "dec {n}",
            "jnz 2b",
            n = inout(reg) iters.max(1) => _,
            p = in(reg) PEAK_OPERANDS.0.as_ptr(),
            s = in(reg) 64usize,
            options(nostack, readonly),
        );
        asm!("tilerelease", options(nostack, nomem));
    }
}
