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

/// What [`largest`] finds in a row.
#[derive(Clone, Copy, Debug)]
pub struct Largest {
    /// Every value is finite. When not, `max` is not specified.
    pub finite: bool,
    /// The largest value (−∞ for an empty row); a zero's sign is not specified.
    pub max: f32,
}

/// The specification of the quick pass: whether every value is finite, and the largest.
pub fn largest(xs: &[f32]) -> Largest {
    let mut l = Largest { finite: true, max: f32::NEG_INFINITY };
    for &x in xs {
        if !x.is_finite() {
            l.finite = false;
        } else if x > l.max {
            l.max = x;
        }
    }
    l
}

/// The specification as a table entry.
pub(crate) unsafe fn largest_scalar(xs: &[f32]) -> Largest {
    largest(xs)
}

/// [`largest`] in ymm registers ([`largest_lanes`] with 8 lanes).
///
/// # Safety
/// The CPU has AVX2 and FMA.
#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx2,fma")]
pub(crate) unsafe fn largest_ymm(xs: &[f32]) -> Largest {
    // SAFETY: the CPU has AVX2 and FMA, and they are enabled here, where the body inlines.
    unsafe { largest_lanes(crate::lanes::Ymm::new(), xs) }
}

/// [`largest`] in zmm registers ([`largest_lanes`] with 16 lanes).
///
/// # Safety
/// The CPU has AVX-512F.
#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx512f,avx2,fma")]
pub(crate) unsafe fn largest_zmm(xs: &[f32]) -> Largest {
    // SAFETY: the CPU has AVX-512F, and it is enabled here, where the body inlines.
    unsafe { largest_lanes(crate::lanes::Zmm::new(), xs) }
}

/// [`largest`] in four sets of `N` lanes, each a chain of maxima and of the probe's
/// multiply-adds (as in [`top2_lanes`]); a partial last block is loaded through a mask.
#[cfg(target_arch = "x86_64")]
#[inline(always)]
unsafe fn largest_lanes<L: crate::lanes::Lanes>(l: L, xs: &[f32]) -> Largest {
    const { assert!(L::N <= 16, "the lanes are stored in arrays of 16") };
    let ninf = l.splat(f32::NEG_INFINITY);
    let (mut m, mut z) = ([ninf; 4], [l.zero(); 4]);
    let p = xs.as_ptr();
    let full = xs.len() / L::N;
    let mut b = 0;
    while b + 4 <= full {
        for s in 0..4 {
            // SAFETY: block `b + s < full` is N values of `xs`.
            let x = unsafe { l.load(p.add((b + s) * L::N)) };
            z[s] = l.fmadd(x, l.zero(), z[s]);
            m[s] = l.max(x, m[s]);
        }
        b += 4;
    }
    while b < full {
        // SAFETY: block `b < full` is N values of `xs`.
        let x = unsafe { l.load(p.add(b * L::N)) };
        z[0] = l.fmadd(x, l.zero(), z[0]);
        m[0] = l.max(x, m[0]);
        b += 1;
    }
    let rest = xs.len() % L::N;
    if rest > 0 {
        let k = l.mask(0, rest);
        // SAFETY: the masked load reads only the last `rest` values; the other lanes read as
        // 0, which the probe adds harmlessly and which count as −∞ for the maximum.
        let x = unsafe { l.load_masked(p.add(full * L::N), k) };
        z[1] = l.fmadd(x, l.zero(), z[1]);
        m[1] = l.max(l.blend(ninf, x, k), m[1]);
    }
    // `max(x, m)` takes `m` when `x` is NaN, and a NaN clears `finite` anyway.
    let (mv, zv) = (l.max(l.max(m[0], m[1]), l.max(m[2], m[3])), l.add(l.add(z[0], z[1]), l.add(z[2], z[3])));
    let (mut ml, mut zl) = ([0f32; 16], [0f32; 16]);
    // SAFETY: each array holds 16 ≥ N floats.
    unsafe {
        l.store(ml.as_mut_ptr(), mv);
        l.store(zl.as_mut_ptr(), zv);
    }
    let finite = zl[..L::N].iter().fold(0f32, |s, &v| s + v) == 0.0;
    let max = ml[..L::N].iter().fold(f32::NEG_INFINITY, |a, &v| if v > a { v } else { a });
    Largest { finite, max }
}

impl Top2 {
    /// What [`top2`] gives for this row followed by `next`'s values, `next` describing its
    /// values alone (its `at` counted from its start) and its start being column `offset` of
    /// the whole. So a row can be scanned a piece at a time, in order: a later piece takes the
    /// maximum only when strictly above it, as the running comparison does.
    pub fn then(self, next: Top2, offset: usize) -> Top2 {
        let finite = self.finite && next.finite;
        if next.max > self.max {
            Top2 { finite, max: next.max, at: offset + next.at, second: next.second.max(self.max) }
        } else {
            Top2 { finite, second: self.second.max(next.max), ..self }
        }
    }
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

/// Combines per-lane states (maximum, runner-up, turn of the maximum's first occurrence) of
/// `m.len()` lanes, lane `l` of turn `t` being column `t·m.len() + l`. No lane's maximum is NaN
/// (a lane takes a value only when it is above its maximum), so some lane holds the largest.
#[cfg(target_arch = "x86_64")]
#[inline(always)]
fn combine(finite: bool, m: &[f32], r: &[f32], block: &[u32]) -> Top2 {
    let lanes = m.len();
    let mut max = f32::NEG_INFINITY;
    for &v in m {
        if v > max {
            max = v;
        }
    }
    let (mut lane, mut at) = (0, usize::MAX);
    for l in 0..lanes {
        let col = block[l] as usize * lanes + l;
        if m[l] == max && col < at {
            (lane, at) = (l, col);
        }
    }
    let mut second = f32::NEG_INFINITY;
    for l in 0..lanes {
        if r[l] > second {
            second = r[l];
        }
        if l != lane && m[l] > second {
            second = m[l];
        }
    }
    Top2 { finite, max: m[lane], at, second }
}

/// [`top2`] in ymm registers ([`top2_lanes`] with 8 lanes).
///
/// # Safety
/// The CPU has AVX2 and FMA; the row has fewer than 2³⁵ values.
#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx2,fma")]
pub(crate) unsafe fn top2_ymm(xs: &[f32]) -> Top2 {
    // SAFETY: the CPU has AVX2 and FMA, and they are enabled here, where the body inlines.
    unsafe { top2_lanes(crate::lanes::Ymm::new(), xs) }
}

/// [`top2`] in zmm registers ([`top2_lanes`] with 16 lanes).
///
/// # Safety
/// The CPU has AVX-512F; the row has fewer than 2³⁵ values.
#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx512f,avx2,fma")]
pub(crate) unsafe fn top2_zmm(xs: &[f32]) -> Top2 {
    // SAFETY: the CPU has AVX-512F, and it is enabled here, where the body inlines.
    unsafe { top2_lanes(crate::lanes::Zmm::new(), xs) }
}

/// [`top2`] in registers of `N` lanes: four sets of `N` lanes, set `s` taking block `4i + s` (of
/// `N` values) in turn `i`, so that four chains of compares (and of the probe's additions) are in
/// flight; lane `l` of set `s` is lane `N·s + l` of `4N`. Per block ([`Lanes4::take`]): one compare, one
/// blend of the turn, a min and a max for the runner-up, a fused multiply-add for the probe.
/// The turns of four whole blocks run without a branch; the last turn, if any is left, loads its
/// partial block through a mask. (The same loop left to the compiler over plain arrays took 4x
/// the time: 4.5% of translate.)
///
/// # Safety
/// The row has fewer than 2³⁵ values (the turns count in 32 bits).
#[cfg(target_arch = "x86_64")]
#[inline(always)]
unsafe fn top2_lanes<L: crate::lanes::Lanes>(l: L, xs: &[f32]) -> Top2 {
    const { assert!(L::N <= 16, "the lanes' states are kept in arrays of 64") };
    let ninf = l.splat(f32::NEG_INFINITY);
    let mut st = Lanes4 { m: [ninf; 4], r: [ninf; 4], z: [l.zero(); 4], turn: [l.splat_i(0); 4] };
    let full = xs.len() / L::N;
    let rest = xs.len() % L::N;
    let p = xs.as_ptr();
    let whole = full / 4;
    for i in 0..whole {
        let it = l.splat_i(i as i32);
        for s in 0..4 {
            // SAFETY: block `4i + s < full` is N values of `xs`.
            let x = unsafe { l.load(p.add((4 * i + s) * L::N)) };
            st.take(l, s, x, x, it);
        }
    }
    if 4 * whole < full + usize::from(rest > 0) {
        let it = l.splat_i(whole as i32);
        for s in 0..4 {
            let b = 4 * whole + s;
            if b < full {
                // SAFETY: block `b` is N values of `xs`.
                let x = unsafe { l.load(p.add(b * L::N)) };
                st.take(l, s, x, x, it);
            } else {
                let k = l.mask(0, if b == full { rest } else { 0 });
                // SAFETY: the masked load reads only the `rest` values of the last block (none
                // past it); the other lanes read as 0, which the probe adds harmlessly, and
                // compare as −∞, which changes no lane.
                let x = unsafe { l.load_masked(p.wrapping_add(b * L::N), k) };
                st.take(l, s, l.blend(ninf, x, k), x, it);
            }
        }
    }
    let Lanes4 { m, r, z, turn } = st;
    let probe = l.add(l.add(z[0], z[1]), l.add(z[2], z[3]));
    let (mut ml, mut rl, mut tl, mut zl) = ([0f32; 64], [0f32; 64], [0u32; 64], [0f32; 16]);
    // SAFETY: each array holds 64 ≥ 4N four-byte values, N from `N·s`; `zl` holds 16 ≥ N.
    unsafe {
        l.store(zl.as_mut_ptr(), probe);
        for s in 0..4 {
            l.store(ml.as_mut_ptr().add(L::N * s), m[s]);
            l.store(rl.as_mut_ptr().add(L::N * s), r[s]);
            l.store_i(tl.as_mut_ptr().add(L::N * s), turn[s]);
        }
    }
    // A sum of zeros is 0 in any order, and NaN once any lane is.
    let finite = zl[..L::N].iter().fold(0f32, |s, &v| s + v) == 0.0;
    let w = 4 * L::N;
    combine(finite, &ml[..w], &rl[..w], &tl[..w])
}

/// The four sets of lanes of [`top2_lanes`]: maxima, runners-up, the probe (every value times 0,
/// which stays 0 only while all are finite) and the turn of each maximum.
#[cfg(target_arch = "x86_64")]
struct Lanes4<L: crate::lanes::Lanes> {
    m: [L::F; 4],
    r: [L::F; 4],
    z: [L::F; 4],
    turn: [L::I; 4],
}

#[cfg(target_arch = "x86_64")]
impl<L: crate::lanes::Lanes> Lanes4<L> {
    /// Set `s` takes `x` (−∞ in lanes past the row) in turn `it`, `probed` (0 there) into the
    /// probe.
    #[inline(always)]
    fn take(&mut self, l: L, s: usize, x: L::F, probed: L::F, it: L::I) {
        self.z[s] = l.fmadd(probed, l.zero(), self.z[s]);
        // `min(x, m)` then `max(·, r)`: the runner-up after `x`, whichever of the two it beats.
        self.r[s] = l.max(l.min(x, self.m[s]), self.r[s]);
        let gt = l.gt(x, self.m[s]);
        self.m[s] = l.blend(self.m[s], x, gt);
        self.turn[s] = l.blend_i(self.turn[s], it, gt);
    }
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
