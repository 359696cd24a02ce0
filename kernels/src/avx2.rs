//! AVX2 (Haswell and later): the pair-saturating arithmetic with `vpmaddubsw` as intgemm and
//! Firefox compute it, and the exact arithmetic by widening to int16 (`vpmaddwd`).
//!
//! Saturating: a quad is two ymm (columns 0–7, 8–15). `vpmaddubsw` of 4 broadcast activation
//! bytes with a ymm gives, per column, the two int16 pair sums `sat(A[4g]B[4g] + A[4g+1]B[4g+1])`
//! and `sat(A[4g+2]B[4g+2] + A[4g+3]B[4g+3])` — the reference's pairs `(2p, 2p+1)`, since `4g`
//! is even — and `vpmaddwd` with ones adds the two exactly into one int32 per column.
//! One row over a short inner dimension takes two adjacent column blocks at once
//! ([`PAIRED_MAX_K`]).
//!
//! Exact, one to eight rows whose bytes are all below 255 (every quantized activation):
//! `a − 127` fits a signed byte, so one `vpmaddubsw(|b|, sign(a − 127, b))` per weight register
//! gives `Σ (a − 127)·b` without saturating (a pair is at most 2·128·127), and `127 · Σ b` from
//! the packed matrix's column sums gives back `Σ a·b`. `|b|` is taken once per weight register
//! for all rows of a tile (four rows at a time). This reads the packed bytes as they are, which
//! at few rows beats widening every weight to int16 on each call: on an AMD EPYC Zen 1,
//! `bench-gemm` at k = 256 and 2-4 rows went from 10-10.6 GMAC/s (the split form below) to
//! 15-20, while the signed form for every row count stayed at 16-17 at 16-64 rows against
//! widening's 19-21. On an AMD EPYC Zen 3 (`bench-gemm --arithmetic exact --dims 256`, MAC per
//! TSC cycle, best of two runs) the signed form holds 23-26 from 5 to 24 rows, widening 19.5-21.6
//! at 5-8 rows (its widening of a block paid for few rows), 23-24.5 at 10-16, 25.8-26.4 at 64
//! (signed 25-25.5). So up to eight rows: there widening loses on the Zen 3, and the Zen 1's
//! figures above have it ahead only from 16 rows (5-8 rows were not measured there).
//!
//! Exact, few rows with a byte at 255: each activation byte is split as
//! `a = min(a, 127) + rest` (`rest` ≤ 128), so neither half can saturate a `vpmaddubsw` pair
//! (|127·(−128)·2| and |128·(−128)·2| fit int16); the two halves' products are made int32 and
//! added: two multiplies per byte pair where the signed form needs one.
//!
//! Exact, more rows: widened to int16 once per call; the `vpmaddwd` step does twice the work of
//! a `vpmaddubsw` + `vpmaddwd(ones)` pair per instruction, and the widening is amortised.

use std::arch::asm;
use std::arch::x86_64::*;
use std::ops::Range;

use crate::pack::{N_BLOCK, PREFETCH, QUAD, block_values};
use crate::part::Part;
use crate::peak::{PEAK_OPERANDS, PeakLoop};
use crate::widen::{self, Widened};
use crate::ymm::BlockEp;

pub(crate) const SATURATING: &str = "vpmaddubsw + vpmaddwd(ones) + vpaddd ymm";
pub(crate) const EXACT: &str = "int16 widening, vpmaddwd + vpaddd ymm; up to 8 rows below 255: 1 × vpmaddubsw of |b| and sign(a − 127, b) (one row: four column blocks at once); up to 4 rows with a byte at 255: activations split at 127, 2 × vpmaddubsw";

/// Rows per saturating tile: 4 × 2 accumulators, 2 weight registers, the broadcast, the ones and
/// two temporaries fit the 16 ymm registers.
const ROWS_SAT: usize = 4;
/// Rows per exact tile: 2 × 4 accumulators and 4 widened weight registers.
const ROWS_EXACT: usize = 2;
/// Column blocks one row's exact product streams at once.
const STREAMS: usize = 4;
/// Rows up to which the exact product reads the packed bytes (the signed form) rather than
/// widening them (see the module's notes).
const ROWS_SIGNED: usize = 8;
/// One row's saturating product takes two adjacent column blocks at once up to this inner
/// dimension, and while the whole matrix takes at most [`PAIRED_MAX_BYTES`]: at one row a block
/// of a short inner dimension is a short loop of two accumulators between two epilogues. On an
/// AMD EPYC Zen 3 (`bench-gemm --arithmetic saturating --m 1`, best of five alternated runs, % of
/// the step's peak), one block against two: k = 256 attn-out 63 → 70, qkv 64 → 73, ffn-up 61 → 66,
/// logits-shortlist 64 → 74, logits-full (8 MB) 50 → 53; k = 384 and 512 likewise (58-69 →
/// 62-76), but the 512 × 32000 output layer (16 MB, streamed from memory) 49 → 40; at k = 1536 the
/// loop is long already (72 → 72). In the engine, one post at a time on an idle engine (tiny, 2
/// threads, saturating, alternated pairs against one block at a time): p50 / p99 0.90 / 0.92,
/// 0.94 / 0.96 and 0.93 / 0.97 (20, 12 and 20 pairs). Four blocks at once were faster in
/// `bench-gemm` but not in the engine (four over two: 1.055 / 1.04, 12 pairs).
const PAIRED_MAX_K: usize = 512;
/// See [`PAIRED_MAX_K`].
const PAIRED_MAX_BYTES: usize = 8 << 20;

/// The pair-saturating product of one part.
///
/// # Safety
/// The CPU has AVX2; `p` satisfies [`Part`]'s invariants.
#[target_feature(enable = "avx2")]
pub(crate) unsafe fn gemm_saturating(p: &Part) {
    let kp = p.b.k_padded();
    // SAFETY: passed on from the caller.
    unsafe {
        if p.rows.len() == 1 && kp <= PAIRED_MAX_K && kp * p.b.n() <= PAIRED_MAX_BYTES {
            one_row_pairs(p, p.rows.start)
        } else {
            byte_tiles::<SAT>(p)
        }
    }
}

/// The whole part in [`tile_bytes`] tiles of up to [`ROWS_SAT`] rows, block by block.
///
/// # Safety
/// As [`gemm_saturating`]; if `FORM` is [`SIGNED`], the part's rows' first `k` bytes are at
/// most 254.
#[target_feature(enable = "avx2")]
#[inline]
unsafe fn byte_tiles<const FORM: u8>(p: &Part) {
    for nb in p.blocks.clone() {
        // Once per block, not per tile: its scales and bias are copied out of the epilogue's
        // slices (a call LLVM keeps out of line, 1.5% of `translate` on AVX2 when made per tile).
        // SAFETY: block `nb` is in the part.
        let ep = unsafe { BlockEp::new(p, nb) };
        let mut i = p.rows.start;
        while i < p.rows.end {
            let r = (p.rows.end - i).min(ROWS_SAT);
            macro_rules! call {
                ($r:literal, $c:literal) => {
                    // SAFETY: rows `i .. i + r` and block `nb` lie inside the part; `ep` is its;
                    // the signed form gets only rows below 255 (caller).
                    unsafe { tile_bytes::<$r, FORM>(p, i, nb, &ep) }
                };
            }
            by_shape!(call, r, 1, [1 2 3 4], [1]);
            i += r;
        }
    }
}

/// How [`tile_bytes`] forms its products.
const SAT: u8 = 0;
/// Exact, activations split at 127 (any bytes).
const SPLIT: u8 = 1;
/// Exact, `vpmaddubsw(|b|, sign(a − 127, b))` plus `127·Σb` (rows whose bytes are below 255;
/// see [`one_row`]).
const SIGNED: u8 = 2;

/// One tile of `R` rows on the packed bytes in the form `FORM` ([`SAT`], [`SPLIT`] or
/// [`SIGNED`], see the module's notes). The signed form takes `|b|` once per weight register
/// for all `R` rows, so each row costs one multiply per byte pair instead of the split form's two.
///
/// # Safety
/// As [`gemm_saturating`], and the tile lies inside the part, `ep` made for its block; if `FORM`
/// is [`SIGNED`], the rows' first `k` bytes are at most 254.
#[target_feature(enable = "avx2")]
#[inline]
unsafe fn tile_bytes<const R: usize, const FORM: u8>(p: &Part, i0: usize, nb: usize, ep: &BlockEp) {
    let quads = p.b.k_padded() / 4;
    let b = p.block_bytes(nb);
    let a: [*const u8; R] = std::array::from_fn(|r| p.row_bytes(i0 + r));
    let ones = _mm256_set1_epi16(1);
    let low = _mm256_set1_epi8(127);
    let part = |x, y| _mm256_madd_epi16(_mm256_maddubs_epi16(x, y), ones);
    let mut acc = [[_mm256_setzero_si256(); 2]; R];
    for g in 0..quads {
        // One quad is one cache line: ask for the one PREFETCH bytes ahead.
        _mm_prefetch::<_MM_HINT_T0>(b.wrapping_add(g * QUAD + PREFETCH).cast());
        // SAFETY: quad `g` is 64 bytes inside the block.
        let (b0, b1) =
            unsafe { (_mm256_loadu_si256(b.add(g * QUAD).cast()), _mm256_loadu_si256(b.add(g * QUAD + 32).cast())) };
        let (abs0, abs1) = if FORM == SIGNED { (_mm256_abs_epi8(b0), _mm256_abs_epi8(b1)) } else { (b0, b1) };
        for r in 0..R {
            // SAFETY: bytes `4g .. 4g + 4` of a row are below `k_padded`.
            let av = _mm256_set1_epi32(unsafe { a[r].add(4 * g).cast::<i32>().read_unaligned() });
            if FORM == SIGNED {
                let a1 = _mm256_sub_epi8(av, low);
                acc[r][0] = _mm256_add_epi32(acc[r][0], part(abs0, _mm256_sign_epi8(a1, b0)));
                acc[r][1] = _mm256_add_epi32(acc[r][1], part(abs1, _mm256_sign_epi8(a1, b1)));
            } else if FORM == SPLIT {
                let a1 = _mm256_min_epu8(av, low);
                let a2 = _mm256_sub_epi8(av, a1);
                acc[r][0] = _mm256_add_epi32(acc[r][0], _mm256_add_epi32(part(a1, b0), part(a2, b0)));
                acc[r][1] = _mm256_add_epi32(acc[r][1], _mm256_add_epi32(part(a1, b1), part(a2, b1)));
            } else {
                acc[r][0] = _mm256_add_epi32(acc[r][0], part(av, b0));
                acc[r][1] = _mm256_add_epi32(acc[r][1], part(av, b1));
            }
        }
    }
    let back = if FORM == SIGNED { Some(back_127(p, nb)) } else { None };
    for (r, mut acc) in acc.into_iter().enumerate() {
        if let Some(back) = &back {
            add_back(&mut acc, back);
        }
        // SAFETY: row `i0 + r` is in the part.
        unsafe { ep.store(acc, i0 + r, p.out) };
    }
}

/// `127·Σb` per column of block `nb`: what the signed form's `Σ (a − 127)·b` lacks of `Σ a·b`
/// (zero past the matrix's last column, which is not stored).
fn back_127(p: &Part, nb: usize) -> [i32; N_BLOCK] {
    block_values(p.b.col_sums(), nb * N_BLOCK).map(|s| s.wrapping_mul(127))
}

/// Adds [`back_127`]'s sums to a block's two accumulators (columns 0–7, 8–15).
#[target_feature(enable = "avx2")]
#[inline]
fn add_back(acc: &mut [__m256i; 2], back: &[i32; N_BLOCK]) {
    for (half, back) in acc.iter_mut().zip(back.chunks_exact(8)) {
        // SAFETY: `back` holds 8 int32.
        *half = _mm256_add_epi32(*half, unsafe { _mm256_loadu_si256(back.as_ptr().cast()) });
    }
}

/// The product of one row with `S` column blocks at once (see [`gemm_saturating`] and
/// [`gemm_exact`]), each block's sum formed with the same steps as alone, in the form `FORM`.
/// Saturating and split: the steps of [`tile_bytes`]`::<1, FORM>`. Signed, for a row whose bytes
/// are all below 255:
/// `vpmaddubsw(|b|, sign(a − 127, b))` forms `(a − 127)·b` in one multiply per byte pair
/// (|b| ≤ 128 and |a − 127| ≤ 127, so a pair sums to at most 32 512 and cannot saturate), and
/// `127·Σb` from the block's column sums gives back `Σ a·b` — the same int32 as the split
/// form, in half its multiplies.
///
/// # Safety
/// As [`tile_bytes`], for row `i0` and the blocks given; if `FORM` is [`SIGNED`], the row's
/// first `k` bytes are at most 254 (its padding meets zero weights, which `sign` turns to zero
/// whatever it holds).
#[target_feature(enable = "avx2")]
#[inline]
unsafe fn one_row<const S: usize, const FORM: u8>(p: &Part, i0: usize, nbs: [usize; S]) {
    let quads = p.b.k_padded() / 4;
    let b: [*const u8; S] = std::array::from_fn(|s| p.block_bytes(nbs[s]));
    let a = p.row_bytes(i0);
    let ones = _mm256_set1_epi16(1);
    let low = _mm256_set1_epi8(127);
    let part = |x, y| _mm256_madd_epi16(_mm256_maddubs_epi16(x, y), ones);
    let mut acc = [[_mm256_setzero_si256(); 2]; S];
    for g in 0..quads {
        for bs in b {
            _mm_prefetch::<_MM_HINT_T0>(bs.wrapping_add(g * QUAD + PREFETCH).cast());
        }
        // SAFETY: bytes `4g .. 4g + 4` of the row are below `k_padded`.
        let av = _mm256_set1_epi32(unsafe { a.add(4 * g).cast::<i32>().read_unaligned() });
        // Signed: `a1` is `a − 127`; split: `a1 = min(a, 127)`, `a2 = a − a1`.
        let a1 = if FORM == SIGNED { _mm256_sub_epi8(av, low) } else { _mm256_min_epu8(av, low) };
        let a2 = _mm256_sub_epi8(av, a1);
        let sum = |w| match FORM {
            SIGNED => part(_mm256_abs_epi8(w), _mm256_sign_epi8(a1, w)),
            SPLIT => _mm256_add_epi32(part(a1, w), part(a2, w)),
            _ => part(av, w),
        };
        for (acc, bs) in acc.iter_mut().zip(b) {
            // SAFETY: quad `g` is 64 bytes inside the block.
            let (b0, b1) = unsafe {
                (_mm256_loadu_si256(bs.add(g * QUAD).cast()), _mm256_loadu_si256(bs.add(g * QUAD + 32).cast()))
            };
            acc[0] = _mm256_add_epi32(acc[0], sum(b0));
            acc[1] = _mm256_add_epi32(acc[1], sum(b1));
        }
    }
    for (mut acc, nb) in acc.into_iter().zip(nbs) {
        if FORM == SIGNED {
            add_back(&mut acc, &back_127(p, nb));
        }
        // SAFETY: block `nb` and row `i0` are in the part.
        unsafe { BlockEp::new(p, nb).store(acc, i0, p.out) };
    }
}

/// One row's blocks dealt to [`STREAMS`] streams, each walking its own quarter; the blocks left
/// over one at a time.
///
/// # Safety
/// As [`one_row`], for row `i` of the part and all of its blocks.
#[target_feature(enable = "avx2")]
#[inline]
unsafe fn one_row_part<const FORM: u8>(p: &Part, i: usize) {
    let (start, n) = (p.blocks.start, p.blocks.len());
    let q = n / STREAMS;
    for j in 0..q {
        // SAFETY: the blocks lie inside the part (caller).
        unsafe { one_row::<STREAMS, FORM>(p, i, std::array::from_fn(|s| start + s * q + j)) };
    }
    for nb in start + STREAMS * q..start + n {
        // SAFETY: as above.
        unsafe { one_row::<1, FORM>(p, i, [nb]) };
    }
}

/// One row's saturating product over the part's blocks, two adjacent ones at a time (see
/// [`PAIRED_MAX_K`]), the last alone.
///
/// # Safety
/// As [`one_row`], for row `i` of the part and all of its blocks.
#[target_feature(enable = "avx2")]
#[inline]
unsafe fn one_row_pairs(p: &Part, i: usize) {
    let mut nb = p.blocks.start;
    while nb + 2 <= p.blocks.end {
        // SAFETY: blocks `nb` and `nb + 1` lie inside the part (caller).
        unsafe { one_row::<2, SAT>(p, i, [nb, nb + 1]) };
        nb += 2;
    }
    if nb < p.blocks.end {
        // SAFETY: as above, for the last block.
        unsafe { one_row::<1, SAT>(p, i, [nb]) };
    }
}

/// The exact product of one part.
///
/// # Safety
/// The CPU has AVX2; `p` satisfies [`Part`]'s invariants.
#[target_feature(enable = "avx2")]
pub(crate) unsafe fn gemm_exact(p: &Part) {
    // One row (decode, memory-bound): four streams of weights in flight per core, and rows
    // whose bytes stay below 255 (every quantized activation) take the one-multiply form. On an
    // AMD EPYC (Zen 3) VM, a scratch loop over 1.3 GB alternating the variants 20 times on two
    // threads: one-multiply 4 streams 19.0 GB/s, 2 streams 17.9; split 4 streams 18.5, 2
    // streams 17.6; plain loads 4 streams 18.5, memchr 16.2.
    if p.rows.len() == 1 {
        let i = p.rows.start;
        let row = &p.a.data[i * p.a.stride..i * p.a.stride + p.b.k()];
        // SAFETY: row `i` is the part's, and the signed form only gets a row below 255.
        unsafe { if row.contains(&255) { one_row_part::<SPLIT>(p, i) } else { one_row_part::<SIGNED>(p, i) } }
        return;
    }
    if p.rows.len() <= ROWS_SIGNED {
        // Quantized activations stay below 255, so the signed form is the usual one; a row at
        // 255 (possible in a caller's own bytes) sends the whole part to the split form, or
        // past four rows to widening.
        let signed = p.rows.clone().all(|i| !p.a.data[i * p.a.stride..i * p.a.stride + p.b.k()].contains(&255));
        if signed || p.rows.len() <= ROWS_SAT {
            // SAFETY: passed on from the caller; the signed form gets only rows below 255.
            unsafe { if signed { byte_tiles::<SIGNED>(p) } else { byte_tiles::<SPLIT>(p) } }
            return;
        }
    }
    // SAFETY: passed on from the caller; `widen_bytes` and `wide` need only AVX2.
    unsafe { widen::drive(p, 1, widen_bytes, wide) }
}

/// # Safety
/// The CPU has AVX2; `len` (a multiple of 16) bytes readable at `src`, int16 writable at `dst`.
#[target_feature(enable = "avx2")]
unsafe fn widen_bytes(src: *const u8, len: usize, dst: *mut i16, signed: bool) {
    for x in (0..len).step_by(16) {
        // SAFETY: 16 bytes readable at `src + x`, 16 int16 writable at `dst + x`.
        unsafe {
            let v = _mm_loadu_si128(src.add(x).cast());
            let w = if signed { _mm256_cvtepi8_epi16(v) } else { _mm256_cvtepu8_epi16(v) };
            _mm256_storeu_si256(dst.add(x).cast(), w);
        }
    }
}

/// # Safety
/// The CPU has AVX2; `w` holds the widened rows and blocks given.
#[target_feature(enable = "avx2")]
unsafe fn wide(p: &Part, w: &Widened, rows: Range<usize>, blocks: Range<usize>) {
    for nb in blocks {
        let mut i = rows.start;
        while i < rows.end {
            let r = (rows.end - i).min(ROWS_EXACT);
            macro_rules! call {
                ($r:literal, $c:literal) => {
                    // SAFETY: rows `i .. i + r` and block `nb` are widened and in the part.
                    unsafe { tile_exact::<$r>(p, w, i, nb) }
                };
            }
            by_shape!(call, r, 1, [1 2], [1]);
            i += r;
        }
    }
}

/// # Safety
/// As [`wide`], for rows `i0 .. i0 + R` and block `nb`.
#[target_feature(enable = "avx2")]
#[inline]
unsafe fn tile_exact<const R: usize>(p: &Part, w: &Widened, i0: usize, nb: usize) {
    let quads = w.kp / 4;
    // SAFETY: the block and rows are inside the widened scratch.
    let b = unsafe { w.b.add((nb - w.nb0) * w.kp * 16) };
    let mut a = [w.a; R];
    for (r, ptr) in a.iter_mut().enumerate() {
        // SAFETY: as above.
        *ptr = unsafe { ptr.add((i0 + r - w.row0) * w.kp) };
    }
    let mut acc = [[_mm256_setzero_si256(); 4]; R];
    for g in 0..quads {
        let mut bv = [_mm256_setzero_si256(); 4];
        for (q, bv) in bv.iter_mut().enumerate() {
            // SAFETY: a widened quad is 64 int16 = 4 ymm.
            *bv = unsafe { _mm256_load_si256(b.add(g * QUAD + 16 * q).cast()) };
        }
        for r in 0..R {
            // SAFETY: int16 `4g .. 4g + 4` of a widened row are below `kp`.
            let av = _mm256_set1_epi64x(unsafe { a[r].add(4 * g).cast::<i64>().read_unaligned() });
            for q in 0..4 {
                acc[r][q] = _mm256_add_epi32(acc[r][q], _mm256_madd_epi16(av, bv[q]));
            }
        }
    }
    // SAFETY: block `nb` is in the part.
    let ep = unsafe { BlockEp::new(p, nb) };
    for (r, acc) in acc.into_iter().enumerate() {
        // acc[q] holds columns 4q .. 4q + 4 as two adjacent pair sums each; hadd adds them but
        // interleaves 128-bit lanes ([c0 c1 c4 c5 | c2 c3 c6 c7]), which the permute undoes.
        let cols = |x, y| _mm256_permute4x64_epi64::<0b11_01_10_00>(_mm256_hadd_epi32(x, y));
        // SAFETY: row `i0 + r` is in the part.
        unsafe { ep.store([cols(acc[0], acc[1]), cols(acc[2], acc[3])], i0 + r, p.out) };
    }
}

pub(crate) const PEAK_SATURATING: PeakLoop =
    PeakLoop { instructions: SATURATING, macs_per_iter: 4 * 32, run: peak_saturating };
pub(crate) const PEAK_EXACT: PeakLoop =
    PeakLoop { instructions: "vpmaddwd + vpaddd ymm", macs_per_iter: 8 * 16, run: peak_exact };

/// 4 independent saturating steps per iteration (8 are no faster: the multiply ports are full).
///
/// # Safety
/// The CPU has AVX2.
#[target_feature(enable = "avx2")]
unsafe fn peak_saturating(iters: u64) {
    // SAFETY: reads the static operands; every register written is declared clobbered.
    unsafe {
        asm!(
            "vpcmpeqw ymm13, ymm13, ymm13",
            "vpabsw ymm13, ymm13",
            "vmovdqa ymm14, [{p}]",
            "vmovdqa ymm15, [{p} + 32]",
            "2:",
            "vpmaddubsw ymm0, ymm14, ymm15", "vpmaddubsw ymm1, ymm14, ymm15",
            "vpmaddubsw ymm2, ymm14, ymm15", "vpmaddubsw ymm3, ymm14, ymm15",
            "vpmaddwd ymm0, ymm0, ymm13", "vpmaddwd ymm1, ymm1, ymm13",
            "vpmaddwd ymm2, ymm2, ymm13", "vpmaddwd ymm3, ymm3, ymm13",
            "vpaddd ymm4, ymm4, ymm0", "vpaddd ymm5, ymm5, ymm1",
            "vpaddd ymm6, ymm6, ymm2", "vpaddd ymm7, ymm7, ymm3",
            "dec {n}",
            "jnz 2b",
            n = inout(reg) iters.max(1) => _,
            p = in(reg) PEAK_OPERANDS.0.as_ptr(),
            out("ymm0") _, out("ymm1") _, out("ymm2") _, out("ymm3") _, out("ymm4") _, out("ymm5") _,
            out("ymm6") _, out("ymm7") _, out("ymm13") _, out("ymm14") _, out("ymm15") _,
            options(nostack, readonly),
        );
    }
}

/// 8 independent exact steps (`vpmaddwd` into a temporary, `vpaddd` into an accumulator).
///
/// # Safety
/// The CPU has AVX2.
#[target_feature(enable = "avx2")]
unsafe fn peak_exact(iters: u64) {
    // SAFETY: reads the static operands; every register written is declared clobbered.
    unsafe {
        asm!(
            "vmovdqa ymm14, [{p}]",
            "vmovdqa ymm15, [{p} + 32]",
            "2:",
            "vpmaddwd ymm0, ymm14, ymm15", "vpmaddwd ymm1, ymm14, ymm15",
            "vpmaddwd ymm2, ymm14, ymm15", "vpmaddwd ymm3, ymm14, ymm15",
            "vpmaddwd ymm8, ymm14, ymm15", "vpmaddwd ymm9, ymm14, ymm15",
            "vpmaddwd ymm10, ymm14, ymm15", "vpmaddwd ymm11, ymm14, ymm15",
            "vpaddd ymm4, ymm4, ymm0", "vpaddd ymm5, ymm5, ymm1",
            "vpaddd ymm6, ymm6, ymm2", "vpaddd ymm7, ymm7, ymm3",
            "vpaddd ymm4, ymm4, ymm8", "vpaddd ymm5, ymm5, ymm9",
            "vpaddd ymm6, ymm6, ymm10", "vpaddd ymm7, ymm7, ymm11",
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
