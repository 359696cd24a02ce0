//! Attention's float products in MKL's orders ([`crate::scalar`] is their specification),
//! written once over a lane type ([`crate::lanes`]): `ymm` and `zmm` run them from their
//! `#[target_feature]` entry points with 8 and 16 floats per register. Everything here is
//! `#[inline(always)]`, so it becomes part of those entry points and every lane operation one
//! instruction there (see [`crate::lanes`]).
//!
//! Marian's log-softmax reductions (`max_and_exp_sum8` and its Cephes exponential) stay in
//! `ymm` and `zmm`: zmm adds its 16 exponentials to the specification's 8 lane sums as a low
//! then a high half and rounds with `vrndscaleps` and a masked subtract, ymm rounds and
//! compares; one body for both would be two bodies behind a branch.

use crate::lanes::Lanes;
use crate::scalar::{Chain, RowScores, RowValues};

/// [`crate::scalar::chain_products`]: tiles of up to 4 rows × 2 registers of columns, one
/// accumulator per row and register, `vfmadd231ps` over the inner index in order; the last
/// columns through masked loads and stores. Eight independent chains keep both FMA units busy
/// where one register of columns (four chains) waits on the FMA's latency.
///
/// # Safety
/// Lengths as [`crate::scalar::Chain::check`] checks them.
#[inline(always)]
pub(crate) unsafe fn chain_products<L: Lanes>(l: L, p: &Chain, c: &mut [f32]) {
    let (m, n) = (p.m, p.n);
    let mut i = 0;
    while i < m {
        let r = (m - i).min(4);
        let mut j = 0;
        while j < n {
            let wide = n - j > L::N;
            // SAFETY: rows `i .. i + r` and columns from `j` (up to n) are inside the checked
            // operands; a tile of 2 registers only where more than one register of columns is
            // left.
            unsafe {
                match (r, wide) {
                    (4, true) => chain_tile::<L, 4, 2>(l, p, c, i, j),
                    (4, false) => chain_tile::<L, 4, 1>(l, p, c, i, j),
                    (3, true) => chain_tile::<L, 3, 2>(l, p, c, i, j),
                    (3, false) => chain_tile::<L, 3, 1>(l, p, c, i, j),
                    (2, true) => chain_tile::<L, 2, 2>(l, p, c, i, j),
                    (2, false) => chain_tile::<L, 2, 1>(l, p, c, i, j),
                    (_, true) => chain_tile::<L, 1, 2>(l, p, c, i, j),
                    (_, false) => chain_tile::<L, 1, 1>(l, p, c, i, j),
                }
            }
            j += if wide { 2 * L::N } else { L::N };
        }
        i += r;
    }
}

/// One tile of [`chain_products`]: rows `i .. i + R`, `C` registers of columns from `j` (the
/// last masked at `n`). Constant sizes keep the accumulators in registers.
///
/// # Safety
/// As [`chain_products`]; `i + R ≤ m` and `j + N·(C − 1) < n`.
#[inline(always)]
unsafe fn chain_tile<L: Lanes, const R: usize, const C: usize>(l: L, p: &Chain, c: &mut [f32], i: usize, j: usize) {
    let Chain { a, lda, b, ldb, n, k, ldc, .. } = *p;
    let mask: [L::M; C] = std::array::from_fn(|x| l.mask(j + L::N * x, n));
    let mut acc = [[l.zero(); C]; R];
    for t in 0..k {
        // SAFETY: the masked lanes are `b[t·ldb + j + N·x ..]` up to column n, inside `b`.
        let bv: [_; C] =
            std::array::from_fn(|x| unsafe { l.load_masked(b.as_ptr().add(t * ldb + j + L::N * x), mask[x]) });
        for (rr, acc) in acc.iter_mut().enumerate() {
            // SAFETY: row i + rr < m holds k ≤ lda values of `a` (checked).
            let av = l.splat(unsafe { *a.as_ptr().add((i + rr) * lda + t) });
            for (ac, bv) in acc.iter_mut().zip(&bv) {
                *ac = l.fmadd(av, *bv, *ac);
            }
        }
    }
    for (rr, acc) in acc.iter().enumerate() {
        for (x, ac) in acc.iter().enumerate() {
            // SAFETY: the masked lanes are `c[(i + rr)·ldc + j + N·x ..]` up to column n, inside
            // `c`.
            unsafe { l.store_masked(c.as_mut_ptr().add((i + rr) * ldc + j + L::N * x), mask[x], *ac) };
        }
    }
}

/// One head of [`crate::scalar::carry_scores`] (the entry points go over the heads with
/// [`RowScores::each_head`]): `N` keys per register, the 16 lanes of the specification as 16
/// registers (lane `l` of every key side by side), halved register by register; the last keys
/// through a mask. The 16 lanes are already 16 independent chains per register. The keys past
/// the last block of 4 (at most 3) share one register where their orders are the same (no
/// second chunk is full), else take one each.
///
/// # Safety
/// Lengths as [`crate::scalar::RowScores::check`] checks them, for one head.
#[inline(always)]
pub(crate) unsafe fn carry_scores_head<L: Lanes>(l: L, q: &[f32], kt: &[f32], ldkt: usize, n: usize, out: &mut [f32]) {
    let k = q.len();
    let full = (k - 1) / 16;
    let nb = n / 4 * 4;
    if nb < n && k < 33 {
        // SAFETY: keys nb..n ≤ n of this head (this function's contract).
        unsafe { tail_scores(l, q, kt, ldkt, nb, n, 0, out) };
    } else {
        for j in nb..n {
            // SAFETY: as above.
            unsafe { tail_scores(l, q, kt, ldkt, j, j + 1, j - nb, out) };
        }
    }
    let mut j = 0;
    while j < nb {
        let mask = l.mask(j, nb);
        // SAFETY: the masked lanes of row t are `kt[t·ldkt + j ..]` up to key nb, inside `kt`.
        let b = |t: usize| unsafe { l.load_masked(kt.as_ptr().add(t * ldkt + j), mask) };
        let mut carry = l.mul(l.splat(q[0]), b(0));
        let mut i = 1;
        if full > 0 {
            let mut x = [l.zero(); 16];
            x[0] = carry;
            for _ in 0..full {
                for (y, lane) in x.iter_mut().enumerate() {
                    *lane = l.fmadd(l.splat(q[i + y]), b(i + y), *lane);
                }
                i += 16;
            }
            carry = halve_registers(l, &mut x);
        }
        if i < k {
            let mut x = [l.zero(); 16];
            x[0] = carry;
            for (y, lane) in x.iter_mut().enumerate().take(k - i) {
                *lane = l.fmadd(l.splat(q[i + y]), b(i + y), *lane);
            }
            carry = halve_registers(l, &mut x);
        }
        // SAFETY: the masked lanes are `out[j..nb]`.
        unsafe { l.store_masked(out.as_mut_ptr().add(j), mask, carry) };
        j += L::N;
    }
}

/// 16 registers summed lane by lane as MKL halves a register: `x + x+8`, then `+4`, `+2`, `+1`.
#[inline(always)]
fn halve_registers<L: Lanes>(l: L, x: &mut [L::F; 16]) -> L::F {
    let mut h = 8;
    while h > 0 {
        for i in 0..h {
            x[i] = l.add(x[i], x[i + h]);
        }
        h /= 2;
    }
    x[0]
}

/// The tail's scores of [`carry_scores_head`] for keys `from..to` of one order, the first of
/// them the `first`-th past the blocks of 4.
///
/// # Safety
/// As [`carry_scores_head`], `to` ≤ its `n`.
#[allow(clippy::too_many_arguments)]
#[inline(always)]
unsafe fn tail_scores<L: Lanes>(
    l: L,
    q: &[f32],
    kt: &[f32],
    ldkt: usize,
    from: usize,
    to: usize,
    first: usize,
    out: &mut [f32],
) {
    let k = q.len();
    let mask = l.mask(from, to);
    // SAFETY: the masked lanes of row t are `kt[t·ldkt + from ..]` up to key `to`, inside `kt`.
    let b = |t: usize| unsafe { l.load_masked(kt.as_ptr().add(t * ldkt + from), mask) };
    let mut x = [l.zero(); 16];
    let mut t = 1;
    let mut c = 0;
    while t < k {
        let end = k.min(t + 16);
        let unfused = c == 1 && end == t + 16 && first.is_multiple_of(2);
        for (y, lane) in x.iter_mut().enumerate().take(end - t) {
            let (a, b) = (l.splat(q[t + y]), b(t + y));
            *lane = if unfused { l.add(*lane, l.mul(a, b)) } else { l.fmadd(a, b, *lane) };
        }
        t += 16;
        c += 1;
    }
    let s = l.add(l.mul(l.splat(q[0]), b(0)), halve_registers(l, &mut x));
    // SAFETY: the masked lanes are `out[from..to]`, inside `out`.
    unsafe { l.store_masked(out.as_mut_ptr().add(from), mask, s) };
}

/// [`crate::scalar::one_row_values`] (`ZEN` false) or [`crate::scalar::zen_row_values`] (`ZEN`
/// true). When a head's size is a multiple of `N`, every register lies in one head, so the
/// dimensions of all heads run as one row, registers side by side ([`all_heads`]:
/// [`Lanes::ROW_VALUES_REGS`], Zen 8), each with its head's weights: one call for all heads, and
/// more independent chains in flight than one head of 32 has. Otherwise one head at a time.
///
/// # Safety
/// Lengths as [`crate::scalar::RowValues::check`] checks them.
#[inline(always)]
pub(crate) unsafe fn row_values<L: Lanes, const ZEN: bool>(l: L, p: &RowValues, out: &mut [f32]) {
    let RowValues { w, heads, v, ldv, dk } = *p;
    let n = p.n();
    if !dk.is_multiple_of(L::N) {
        for h in 0..heads {
            let (w, out) = (&w[h * n..(h + 1) * n], &mut out[h * dk..]);
            // SAFETY: head h's values are columns `h·dk ..` of the checked rows, its output
            // `out[h·dk ..][..dk]`.
            unsafe {
                match (ZEN, L::ZEN_VALUE_REGS) {
                    (false, _) => one_head_values(l, w, v, h * dk, ldv, dk, out),
                    (true, 4) => zen_head_values::<L, 4>(l, w, v, h * dk, ldv, dk, out),
                    (true, 8) => zen_head_values::<L, 8>(l, w, v, h * dk, ldv, dk, out),
                    _ => unreachable!("registers of a head's values: 4 or 8"),
                }
            }
        }
        return;
    }
    let regs = if ZEN { 8 } else { L::ROW_VALUES_REGS };
    // SAFETY: lengths checked; `dk` is a multiple of N.
    unsafe { all_heads::<L, ZEN>(l, regs, p, out) };
}

/// One head of [`row_values`]: `N` dimensions per register, the last through a mask; head
/// columns from `col`.
///
/// # Safety
/// `w`, `v` (from column `col`, `dk` wide) and `out` as
/// [`crate::scalar::RowValues::check`] checks them for one head.
#[inline(always)]
unsafe fn one_head_values<L: Lanes>(l: L, w: &[f32], v: &[f32], col: usize, ldv: usize, dk: usize, out: &mut [f32]) {
    let n = w.len();
    let mut d = 0;
    while d < dk {
        let mask = l.mask(d, dk);
        // SAFETY: the masked lanes of value row j are `v[j·ldv + col + d ..]` up to dk, inside `v`.
        let vr = |j: usize| unsafe { l.load_masked(v.as_ptr().add(j * ldv + col + d), mask) };
        let ws = |j: usize| l.splat(w[j]);
        let pair = |p: usize, q: usize| l.fmadd(ws(p), vr(p), l.mul(ws(q), vr(q)));
        let mut c = l.zero();
        let mut b = 0;
        while b + 8 <= n {
            let mut s = l.fmadd(ws(b + 4), vr(b + 4), l.fmadd(ws(b + 6), vr(b + 6), c));
            s = l.add(s, pair(b + 5, b + 7));
            let t = l.add(pair(b, b + 2), pair(b + 1, b + 3));
            c = l.add(s, t);
            b += 8;
        }
        for j in b..n {
            c = l.fmadd(ws(j), vr(j), c);
        }
        // SAFETY: the masked lanes are `out[d..dk]`.
        unsafe { l.store_masked(out.as_mut_ptr().add(d), mask, c) };
        d += L::N;
    }
}

/// [`crate::scalar::zen_carry_scores`]: `N` keys per register, the four lanes of the
/// specification as four registers, every product rounded before it is added; the last keys
/// through a mask. The units of work (one head's `N` keys) run [`Lanes::ZEN_UNITS`] at a time
/// side by side ([`zen_units`]): one unit's four chains wait on the additions' latency and on
/// their loads (the keys stream from L3 in the decoder), four keep sixteen chains and their
/// loads in flight; sixteen ymm registers hold no more than two. Each key past the last block
/// of 4 (at most 3, each its own order) is a unit of one lane, of every head side by side.
///
/// # Safety
/// Lengths as [`crate::scalar::RowScores::check`] checks them.
#[inline(always)]
pub(crate) unsafe fn zen_carry_scores<L: Lanes>(l: L, s: &RowScores, out: &mut [f32]) {
    let RowScores { q, heads, kt, ldkt, n, ldo } = *s;
    let k = s.k();
    let nb = n / 4 * 4;
    for j in nb..n {
        let unit = |h: usize| Unit::<L> { q: h * k, kt: h * k * ldkt + j, out: h * ldo + j, mask: l.mask(0, 1) };
        // SAFETY: every unit is a head's query and its key j < n and output (checked).
        unsafe {
            if (j - nb).is_multiple_of(2) {
                zen_units_by::<L, 8>(l, q, k, kt, ldkt, out, heads, 4, unit);
            } else {
                zen_units_by::<L, 4>(l, q, k, kt, ldkt, out, heads, 4, unit);
            }
        }
    }
    if nb == 0 {
        return;
    }
    let blocks = nb.div_ceil(L::N);
    // A head's blocks one after the other: units side by side read the same lines of its keys.
    let unit = |u: usize| {
        let (h, b) = (u / blocks, L::N * (u % blocks));
        Unit::<L> { q: h * k, kt: h * k * ldkt + b, out: h * ldo + b, mask: l.mask(b, nb) }
    };
    // SAFETY: every unit is a head's query and up to N of its keys and outputs (checked).
    unsafe { zen_units_by::<L, 4>(l, q, k, kt, ldkt, out, heads * blocks, 0, unit) };
}

/// Units `0..units` of [`zen_carry_scores`] in `W` lanes leaving `reserve` elements out of the
/// chunks ([`zen_units`]), [`Lanes::ZEN_UNITS`] at a time side by side.
///
/// # Safety
/// As [`zen_units`], for every unit.
#[allow(clippy::too_many_arguments)]
#[inline(always)]
unsafe fn zen_units_by<L: Lanes, const W: usize>(
    l: L,
    q: &[f32],
    k: usize,
    kt: &[f32],
    ldkt: usize,
    out: &mut [f32],
    units: usize,
    reserve: usize,
    unit: impl Fn(usize) -> Unit<L>,
) {
    let mut u = 0;
    while u + L::ZEN_UNITS <= units {
        // SAFETY: as this function's contract.
        unsafe {
            match L::ZEN_UNITS {
                2 => zen_units::<L, 2, W>(l, q, k, kt, ldkt, out, reserve, std::array::from_fn(|g| unit(u + g))),
                4 => zen_units::<L, 4, W>(l, q, k, kt, ldkt, out, reserve, std::array::from_fn(|g| unit(u + g))),
                _ => unreachable!("units side by side: 2 or 4"),
            }
        }
        u += L::ZEN_UNITS;
    }
    while u < units {
        // SAFETY: as above.
        unsafe { zen_units::<L, 1, W>(l, q, k, kt, ldkt, out, reserve, [unit(u)]) };
        u += 1;
    }
}

/// Where one unit of [`zen_carry_scores`] reads and writes: its head's query from `q[q..]`, row
/// `t` of its keys at `kt[kt + t·ldkt ..]` and its sums at `out[out..]`, the keys of `mask`.
struct Unit<L: Lanes> {
    q: usize,
    kt: usize,
    out: usize,
    mask: L::M,
}

impl<L: Lanes> Clone for Unit<L> {
    #[inline(always)]
    fn clone(&self) -> Self {
        *self
    }
}

impl<L: Lanes> Copy for Unit<L> {}

/// `G` units of [`zen_carry_scores`], each in its own `W` registers (the specification's
/// lanes: 4 for the blocks, 8 or 4 for a key past them, `reserve` elements left out of the
/// chunks); the operations of each are those of the specification, in its order.
///
/// # Safety
/// As [`zen_carry_scores`]; every unit inside the checked operands, `k` its head's size.
#[allow(clippy::too_many_arguments)]
#[inline(always)]
unsafe fn zen_units<L: Lanes, const G: usize, const W: usize>(
    l: L,
    q: &[f32],
    k: usize,
    kt: &[f32],
    ldkt: usize,
    out: &mut [f32],
    reserve: usize,
    at: [Unit<L>; G],
) {
    let end = 4 + k.saturating_sub(4 + reserve) / W * W;
    let p = |g: usize, t: usize| {
        let u = at[g];
        // SAFETY: t < k: `q[u.q + t]` is in the unit's query, the masked lanes of its key row t
        // inside `kt`.
        unsafe {
            let b = l.load_masked(kt.as_ptr().add(u.kt + t * ldkt), u.mask);
            l.mul(l.splat(*q.as_ptr().add(u.q + t)), b)
        }
    };
    let mut x = [[l.zero(); W]; G];
    for (g, x) in x.iter_mut().enumerate() {
        x[0] = p(g, 0);
    }
    for t in 1..k.min(4) {
        for (g, x) in x.iter_mut().enumerate() {
            x[0] = l.add(x[0], p(g, t));
        }
    }
    for c in (4..end).step_by(W) {
        for i in 0..W {
            for (g, x) in x.iter_mut().enumerate() {
                x[i] = l.add(x[i], p(g, c + i));
            }
        }
    }
    for (g, x) in x.iter_mut().enumerate() {
        let mut h = W / 2;
        while h > 0 {
            for i in 0..h {
                x[i] = l.add(x[i], x[i + h]);
            }
            h /= 2;
        }
        let mut s = x[0];
        for t in end..k {
            s = l.add(s, p(g, t));
        }
        // SAFETY: the masked lanes are the unit's outputs, inside `out`.
        unsafe { l.store_masked(out.as_mut_ptr().add(at[g].out), at[g].mask, s) };
    }
}

/// One head of [`row_values`] in the Zen order: `N` dimensions per register, up to `R` registers at once;
/// head columns from `col`.
///
/// # Safety
/// `w`, `v` (from column `col`, `dk` wide) and `out` as
/// [`crate::scalar::RowValues::check`] checks them for one head.
#[inline(always)]
unsafe fn zen_head_values<L: Lanes, const R: usize>(
    l: L,
    w: &[f32],
    v: &[f32],
    col: usize,
    ldv: usize,
    dk: usize,
    out: &mut [f32],
) {
    let mut d = 0;
    while d < dk {
        let regs = (dk - d).div_ceil(L::N).min(R);
        let mask = |r: usize| l.mask(d + L::N * r, dk);
        let mut c = [l.zero(); R];
        for (j, &wj) in w.iter().enumerate() {
            let wv = l.splat(wj);
            for (r, cr) in c.iter_mut().enumerate().take(regs) {
                // SAFETY: the masked lanes of value row j are `v[j·ldv + col + d + N·r ..]` up to
                // dk, inside `v`.
                let vr = unsafe { l.load_masked(v.as_ptr().add(j * ldv + col + d + L::N * r), mask(r)) };
                *cr = l.add(*cr, l.mul(wv, vr));
            }
        }
        for (r, cr) in c.iter().enumerate().take(regs) {
            // SAFETY: the masked lanes are `out[d + N·r..dk]`.
            unsafe { l.store_masked(out.as_mut_ptr().add(d + L::N * r), mask(r), *cr) };
        }
        d += L::N * regs;
    }
}

/// The dimensions of all heads as one row of registers, `regs` (4 or 8) at a time, then fewer
/// for the last, each register with its head's weights: [`row_values`] when `dk` is a multiple of `N`,
/// in the Zen order with `ZEN`.
///
/// # Safety
/// Lengths as [`crate::scalar::RowValues::check`] checks them, `dk` a multiple of `N`.
#[inline(always)]
unsafe fn all_heads<L: Lanes, const ZEN: bool>(l: L, regs: usize, p: &RowValues, out: &mut [f32]) {
    debug_assert!(regs == 4 || regs == 8, "blocks of 4 or 8 registers");
    let width = p.heads * p.dk;
    let mut d = 0;
    while d < width {
        let left = (width - d) / L::N;
        // SAFETY: registers `d / N ..` up to `left` are inside every checked row and `out`.
        d += L::N
            * unsafe {
                if regs == 8 && left >= 8 {
                    heads_block::<L, ZEN, 8>(l, p, d, out)
                } else if left >= 4 {
                    heads_block::<L, ZEN, 4>(l, p, d, out)
                } else if left >= 2 {
                    heads_block::<L, ZEN, 2>(l, p, d, out)
                } else {
                    heads_block::<L, ZEN, 1>(l, p, d, out)
                }
            };
    }
}

/// `R` registers of [`all_heads`] from dimension `d` (over all heads); returns `R`. A constant
/// count keeps the accumulators in registers.
///
/// # Safety
/// As [`all_heads`], and `d + N·R ≤ heads · dk`.
#[inline(always)]
unsafe fn heads_block<L: Lanes, const ZEN: bool, const R: usize>(
    l: L,
    p: &RowValues,
    d: usize,
    out: &mut [f32],
) -> usize {
    let RowValues { w, v, ldv, dk, .. } = *p;
    let n = p.n();
    // The weights of the head each register lies in (a register never straddles two heads).
    let wp: [*const f32; R] = std::array::from_fn(|r| w[(d + L::N * r) / dk * n..].as_ptr());
    // SAFETY: row j < n, register r < R: columns `d + N·r ..` of a checked row.
    let vr = |j: usize, r: usize| unsafe { l.load(v.as_ptr().add(j * ldv + d + L::N * r)) };
    // SAFETY: `wp[r]` points at its head's `n` weights and j < n.
    let ws = |j: usize, r: usize| l.splat(unsafe { *wp[r].add(j) });
    let mut c = [l.zero(); R];
    let mut b = 0;
    if !ZEN {
        let pair = |p: usize, q: usize, r: usize| l.fmadd(ws(p, r), vr(p, r), l.mul(ws(q, r), vr(q, r)));
        while b + 8 <= n {
            for (r, c) in c.iter_mut().enumerate() {
                let mut s = l.fmadd(ws(b + 4, r), vr(b + 4, r), l.fmadd(ws(b + 6, r), vr(b + 6, r), *c));
                s = l.add(s, pair(b + 5, b + 7, r));
                let t = l.add(pair(b, b + 2, r), pair(b + 1, b + 3, r));
                *c = l.add(s, t);
            }
            b += 8;
        }
    }
    for j in b..n {
        for (r, c) in c.iter_mut().enumerate() {
            *c = if ZEN { l.add(*c, l.mul(ws(j, r), vr(j, r))) } else { l.fmadd(ws(j, r), vr(j, r), *c) };
        }
    }
    for (r, c) in c.iter().enumerate() {
        // SAFETY: `out` holds `heads · dk ≥ d + N·R` floats (checked).
        unsafe { l.store(out.as_mut_ptr().add(d + L::N * r), *c) };
    }
    R
}
