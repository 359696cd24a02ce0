//! The greedy search's scan of a row of raw logits (`marian::search::raw_pick`): whether every
//! value is finite, the largest value, its first column, and the runner-up, in one pass.
//!
//! [`top2`] is the specification, a running comparison over the row. The vector forms keep the
//! same state per lane (16 or 8 lanes, lane `l` reading the values `l, l + lanes, ...`) and
//! combine the lanes at the end: the largest of the lane maxima, the first column among the
//! lanes that hold it, and as runner-up the largest of everything else the lanes kept. The
//! largest two of a row (counting a repeated value twice) are the largest two of the lanes'
//! largest two, so the values agree; a lane takes a value only when it is strictly above the
//! lane's maximum, so each lane keeps the first column of its maximum, and the smallest of those
//! is the row's first.

/// What the greedy choice needs from a row.
#[derive(Clone, Copy, Debug)]
pub struct Top2 {
    /// Every value is finite (no NaN, no infinity). When not, the other fields are not
    /// specified.
    pub finite: bool,
    /// The largest value (−∞ for an empty row), with the bits of its first occurrence.
    pub max: f32,
    /// The first column of `max` (0 for an empty row).
    pub at: usize,
    /// The largest value after taking `max` out once: `max` itself when it occurs twice, −∞
    /// with fewer than two values. A zero's sign is not specified (every comparison the caller
    /// makes sees both zeros as one).
    pub second: f32,
}

/// The specification: one running comparison over the row.
pub fn top2(xs: &[f32]) -> Top2 {
    let mut t = Top2 { finite: true, max: f32::NEG_INFINITY, at: 0, second: f32::NEG_INFINITY };
    for (i, &x) in xs.iter().enumerate() {
        if !x.is_finite() {
            t.finite = false;
        } else if x > t.max {
            t.second = t.max;
            t.max = x;
            t.at = i;
        } else if x > t.second {
            t.second = x;
        }
    }
    t
}

/// The specification as a table entry.
pub(crate) unsafe fn top2_scalar(xs: &[f32]) -> Top2 {
    top2(xs)
}

/// Combines per-lane states (maximum, runner-up, block of the maximum's first occurrence) of
/// `L` lanes, lane `l` of block `b` being column `b·L + l`. No lane's maximum is NaN (a lane
/// takes a value only when it is above its maximum), so some lane holds the largest.
#[cfg(target_arch = "x86_64")]
#[inline(always)]
fn combine<const L: usize>(finite: bool, m: [f32; L], r: [f32; L], block: [u32; L]) -> Top2 {
    let mut max = f32::NEG_INFINITY;
    for &v in &m {
        if v > max {
            max = v;
        }
    }
    let (mut lane, mut at) = (0, usize::MAX);
    for l in 0..L {
        let col = block[l] as usize * L + l;
        if m[l] == max && col < at {
            (lane, at) = (l, col);
        }
    }
    let mut second = f32::NEG_INFINITY;
    for l in 0..L {
        if r[l] > second {
            second = r[l];
        }
        if l != lane && m[l] > second {
            second = m[l];
        }
    }
    Top2 { finite, max: m[lane], at, second }
}

/// [`top2`] in ymm registers: four sets of 8 lanes, set `s` taking block `4i + s` (of 8 values)
/// in turn `i`, as [`top2_zmm`] does with 16; lane `l` of set `s` is lane `8s + l` of 32. (The
/// same loop left to the compiler over plain arrays took 4x the time: 4.5% of translate.)
///
/// # Safety
/// The CPU has AVX2 and FMA; the row has fewer than 2³⁵ values.
#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx2,fma")]
pub(crate) unsafe fn top2_ymm(xs: &[f32]) -> Top2 {
    use std::arch::x86_64::*;
    let ninf = _mm256_set1_ps(f32::NEG_INFINITY);
    let zero = _mm256_setzero_ps();
    let (mut m, mut r, mut z) = ([ninf; 4], [ninf; 4], [zero; 4]);
    let mut turn = [_mm256_setzero_si256(); 4];
    let full = xs.len() / 8;
    let rest = xs.len() % 8;
    let p = xs.as_ptr();
    let turns = (full + usize::from(rest > 0)).div_ceil(4);
    let lane = _mm256_setr_epi32(0, 1, 2, 3, 4, 5, 6, 7);
    for i in 0..turns {
        let it = _mm256_set1_epi32(i as i32);
        for s in 0..4 {
            let b = 4 * i + s;
            let (x, probed) = if b < full {
                // SAFETY: block `b` is 8 values of `xs`.
                let x = unsafe { _mm256_loadu_ps(p.add(b * 8)) };
                (x, x)
            } else {
                let n = if b == full { rest } else { 0 };
                let k = _mm256_cmpgt_epi32(_mm256_set1_epi32(n as i32), lane);
                // SAFETY: the masked load reads only the `rest` values of the last block (none
                // past it); the other lanes read as 0, which the probe adds harmlessly, and
                // compare as −∞, which changes no lane.
                let x = unsafe { _mm256_maskload_ps(p.wrapping_add(b * 8), k) };
                (_mm256_blendv_ps(ninf, x, _mm256_castsi256_ps(k)), x)
            };
            z[s] = _mm256_fmadd_ps(probed, zero, z[s]);
            // `min(x, m)` then `max(·, r)`: the runner-up after `x`, whichever of the two it beats.
            r[s] = _mm256_max_ps(_mm256_min_ps(x, m[s]), r[s]);
            let gt = _mm256_cmp_ps::<_CMP_GT_OQ>(x, m[s]);
            m[s] = _mm256_blendv_ps(m[s], x, gt);
            turn[s] = _mm256_blendv_epi8(turn[s], it, _mm256_castps_si256(gt));
        }
    }
    let probe = _mm256_add_ps(_mm256_add_ps(z[0], z[1]), _mm256_add_ps(z[2], z[3]));
    let (mut ml, mut rl, mut tl, mut zl) = ([0f32; 32], [0f32; 32], [0u32; 32], [0f32; 8]);
    // SAFETY: each array holds 32 four-byte values, 8 from `8s`; `zl` holds 8.
    unsafe {
        _mm256_storeu_ps(zl.as_mut_ptr(), probe);
        for s in 0..4 {
            _mm256_storeu_ps(ml.as_mut_ptr().add(8 * s), m[s]);
            _mm256_storeu_ps(rl.as_mut_ptr().add(8 * s), r[s]);
            _mm256_storeu_si256(tl.as_mut_ptr().add(8 * s).cast(), turn[s]);
        }
    }
    let finite = zl.iter().fold(0f32, |s, &v| s + v) == 0.0;
    combine(finite, ml, rl, tl)
}

/// [`top2`] in zmm registers: four sets of 16 lanes, set `s` taking block `4i + s` in turn `i`,
/// so that four chains of compares (and of the probe's additions) are in flight; lane `l` of set
/// `s` is lane `16s + l` of 64. Per block: one compare, one masked move of the turn, a min and
/// a max for the runner-up, a fused multiply-add for the probe.
///
/// # Safety
/// The CPU has AVX-512F; the row has fewer than 2³⁶ values.
#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx512f,avx2,fma")]
pub(crate) unsafe fn top2_zmm(xs: &[f32]) -> Top2 {
    use std::arch::x86_64::*;
    let ninf = _mm512_set1_ps(f32::NEG_INFINITY);
    let zero = _mm512_setzero_ps();
    let (mut m, mut r, mut z) = ([ninf; 4], [ninf; 4], [zero; 4]);
    let mut turn = [_mm512_setzero_si512(); 4];
    let full = xs.len() / 16;
    let rest = xs.len() % 16;
    let p = xs.as_ptr();
    let turns = (full + usize::from(rest > 0)).div_ceil(4);
    for i in 0..turns {
        for s in 0..4 {
            let b = 4 * i + s;
            let k: __mmask16 = if b < full {
                0xFFFF
            } else if b == full {
                ((1u32 << rest) - 1) as u16
            } else {
                0
            };
            // SAFETY: the masked load reads only values of `xs` (all 16 of block `b`, the `rest`
            // of the last one, or none past it); the others are −∞, which change no lane and
            // are left out of the probe.
            let x = unsafe { _mm512_mask_loadu_ps(ninf, k, p.wrapping_add(b * 16)) };
            z[s] = _mm512_mask3_fmadd_ps(x, zero, z[s], k);
            // `min(x, m)` then `max(·, r)`: the runner-up after `x`, whichever of the two it beats.
            r[s] = _mm512_max_ps(_mm512_min_ps(x, m[s]), r[s]);
            let gt = _mm512_cmp_ps_mask::<_CMP_GT_OQ>(x, m[s]);
            m[s] = _mm512_mask_mov_ps(m[s], gt, x);
            turn[s] = _mm512_mask_set1_epi32(turn[s], gt, i as i32);
        }
    }
    let probe = _mm512_add_ps(_mm512_add_ps(z[0], z[1]), _mm512_add_ps(z[2], z[3]));
    let finite = _mm512_reduce_add_ps(probe) == 0.0;
    let (mut ml, mut rl, mut tl) = ([0f32; 64], [0f32; 64], [0u32; 64]);
    for s in 0..4 {
        // SAFETY: each array holds 64 four-byte values, 16 from `16s`.
        unsafe {
            _mm512_storeu_ps(ml.as_mut_ptr().add(16 * s), m[s]);
            _mm512_storeu_ps(rl.as_mut_ptr().add(16 * s), r[s]);
            _mm512_storeu_si512(tl.as_mut_ptr().add(16 * s).cast(), turn[s]);
        }
    }
    combine(finite, ml, rl, tl)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_specification_reads_as_documented() {
        let t = top2(&[1.0, 3.0, 2.0, 3.0]);
        assert!(t.finite);
        assert_eq!((t.max, t.at, t.second), (3.0, 1, 3.0));
        let t = top2(&[1.0, 3.0, 2.0]);
        assert_eq!((t.max, t.at, t.second), (3.0, 1, 2.0));
        let t = top2(&[]);
        assert!(t.finite);
        assert_eq!((t.max, t.at, t.second), (f32::NEG_INFINITY, 0, f32::NEG_INFINITY));
        assert!(!top2(&[1.0, f32::NAN]).finite);
        assert!(!top2(&[f32::NEG_INFINITY, 1.0]).finite);
    }
}
