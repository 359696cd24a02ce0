//! Marian's float side with ymm registers: the log-softmax reductions over Cephes
//! exponentials, and attention's products in MKL's orders ([`crate::cephes`] and
//! [`crate::scalar`] are their specifications).

use std::arch::x86_64::*;

use super::first_lanes;
use crate::scalar::{Chain, RowScores};

/// [`crate::cephes::exp_ps`] on 8 lanes: `exp256_ps` of `avx_mathfun.h` instruction for
/// instruction (multiplies and adds, never fused; `vroundps` for its floor).
#[target_feature(enable = "avx2,fma")]
#[inline]
pub(crate) fn cephes_exp8(x: __m256) -> __m256 {
    use crate::cephes::c::*;
    let one = _mm256_set1_ps(1.0);
    let x = _mm256_min_ps(x, _mm256_set1_ps(EXP_HI));
    let mut x = _mm256_max_ps(x, _mm256_set1_ps(EXP_LO));
    let fx = _mm256_add_ps(_mm256_mul_ps(x, _mm256_set1_ps(LOG2EF)), _mm256_set1_ps(0.5));
    let tmp = _mm256_round_ps::<{ _MM_FROUND_TO_NEG_INF | _MM_FROUND_NO_EXC }>(fx);
    let mask = _mm256_and_ps(_mm256_cmp_ps::<_CMP_GT_OS>(tmp, fx), one);
    let fx = _mm256_sub_ps(tmp, mask);
    x = _mm256_sub_ps(x, _mm256_mul_ps(fx, _mm256_set1_ps(EXP_C1)));
    x = _mm256_sub_ps(x, _mm256_mul_ps(fx, _mm256_set1_ps(EXP_C2)));
    let z = _mm256_mul_ps(x, x);
    let mut y = _mm256_set1_ps(EXP_P[0]);
    for &p in &EXP_P[1..] {
        y = _mm256_add_ps(_mm256_mul_ps(y, x), _mm256_set1_ps(p));
    }
    y = _mm256_add_ps(_mm256_add_ps(_mm256_mul_ps(y, z), x), one);
    let n = _mm256_add_epi32(_mm256_cvttps_epi32(fx), _mm256_set1_epi32(0x7f));
    _mm256_mul_ps(y, _mm256_castsi256_ps(_mm256_slli_epi32::<23>(n)))
}

/// The maximum of 8 lanes (none NaN), in any order: the maximum is exact.
#[target_feature(enable = "avx2,fma")]
#[inline]
pub(crate) fn max_of_lanes(m: __m256) -> f32 {
    let m = _mm_max_ps(_mm256_castps256_ps128(m), _mm256_extractf128_ps::<1>(m));
    let m = _mm_max_ps(m, _mm_movehl_ps(m, m));
    let m = _mm_max_ss(m, _mm_shuffle_ps::<0b01>(m, m));
    _mm_cvtss_f32(m)
}

/// The eight lanes of `acc` added left to right from 0, as [`crate::cephes::max_and_exp_sum8`]
/// ends.
#[target_feature(enable = "avx2,fma")]
#[inline]
pub(crate) fn sum_left_to_right(acc: __m256) -> f32 {
    let mut lanes = [0f32; 8];
    // SAFETY: 8 floats of room.
    unsafe { _mm256_storeu_ps(lanes.as_mut_ptr(), acc) };
    let mut sum = 0f32;
    for a in lanes {
        sum += a;
    }
    sum
}

/// [`crate::cephes::max_and_exp_sum8`] with ymm registers: four running maxima (vmaxps keeps its
/// second operand, the accumulator, when the value is NaN, as the running comparison skips it),
/// then one register of eight lane sums, one [`cephes_exp8`] per eight values.
///
/// # Safety
/// The CPU has AVX2 and FMA; the row is not empty and its length a multiple of 8.
#[target_feature(enable = "avx2,fma")]
pub(crate) unsafe fn max_and_exp_sum8(row: &[f32]) -> (f32, f32) {
    let n = row.len();
    if row[0].is_nan() {
        // A NaN first value is the maximum; nothing here is fast then.
        return crate::cephes::max_and_exp_sum8(row);
    }
    let p = row.as_ptr();
    let mut m = [_mm256_set1_ps(row[0]); 4];
    let mut i = 0;
    while i + 32 <= n {
        for (k, mk) in m.iter_mut().enumerate() {
            // SAFETY: 32 floats readable at `row[i..]`.
            *mk = _mm256_max_ps(unsafe { _mm256_loadu_ps(p.add(i + 8 * k)) }, *mk);
        }
        i += 32;
    }
    while i < n {
        // SAFETY: `n` is a multiple of 8, so 8 floats are readable at `row[i..]`.
        m[0] = _mm256_max_ps(unsafe { _mm256_loadu_ps(p.add(i)) }, m[0]);
        i += 8;
    }
    let max = max_of_lanes(_mm256_max_ps(_mm256_max_ps(m[0], m[1]), _mm256_max_ps(m[2], m[3])));
    let mv = _mm256_set1_ps(max);
    let mut acc = _mm256_setzero_ps();
    for i in (0..n).step_by(8) {
        // SAFETY: as above.
        acc = _mm256_add_ps(acc, cephes_exp8(_mm256_sub_ps(unsafe { _mm256_loadu_ps(p.add(i)) }, mv)));
    }
    (max, sum_left_to_right(acc))
}

/// [`crate::scalar::chain_products`] with ymm registers: tiles of up to 4 rows × 2 registers
/// of 8 columns, one accumulator per row and register, `vfmadd231ps` over the inner index in
/// order; the last columns through masked loads and stores. Eight independent chains keep both
/// FMA units busy where one register of columns (four chains) waits on the FMA's latency.
///
/// # Safety
/// The CPU has AVX2 and FMA; lengths as [`crate::scalar::Chain::check`] checks them.
#[target_feature(enable = "avx2,fma")]
pub(crate) unsafe fn chain_products(p: &Chain, c: &mut [f32]) {
    let (m, n) = (p.m, p.n);
    let mut i = 0;
    while i < m {
        let r = (m - i).min(4);
        let mut j = 0;
        while j < n {
            let wide = n - j > 8;
            // SAFETY: rows `i .. i + r` and columns from `j` (up to n) are inside the checked
            // operands; a tile of 2 registers only where more than 8 columns are left.
            unsafe {
                match (r, wide) {
                    (4, true) => chain_tile::<4, 2>(p, c, i, j),
                    (4, false) => chain_tile::<4, 1>(p, c, i, j),
                    (3, true) => chain_tile::<3, 2>(p, c, i, j),
                    (3, false) => chain_tile::<3, 1>(p, c, i, j),
                    (2, true) => chain_tile::<2, 2>(p, c, i, j),
                    (2, false) => chain_tile::<2, 1>(p, c, i, j),
                    (_, true) => chain_tile::<1, 2>(p, c, i, j),
                    (_, false) => chain_tile::<1, 1>(p, c, i, j),
                }
            }
            j += if wide { 2 * 8 } else { 8 };
        }
        i += r;
    }
}

/// One tile of [`chain_products`]: rows `i .. i + R`, `C` registers of columns from `j` (the
/// last masked at `n`). Constant sizes keep the accumulators in registers.
///
/// # Safety
/// As [`chain_products`]; `i + R ≤ m` and `j + 8·(C − 1) < n`.
#[target_feature(enable = "avx2,fma")]
#[inline]
unsafe fn chain_tile<const R: usize, const C: usize>(p: &Chain, c: &mut [f32], i: usize, j: usize) {
    let Chain { a, lda, b, ldb, n, k, ldc, .. } = *p;
    let mask: [__m256i; C] = std::array::from_fn(|x| first_lanes((n - j - 8 * x).min(8)));
    let mut acc = [[_mm256_setzero_ps(); C]; R];
    for t in 0..k {
        // SAFETY: the masked lanes are `b[t·ldb + j + 8x ..]` up to column n, inside `b`.
        let bv: [_; C] =
            std::array::from_fn(|x| unsafe { _mm256_maskload_ps(b.as_ptr().add(t * ldb + j + 8 * x), mask[x]) });
        for (rr, acc) in acc.iter_mut().enumerate() {
            // SAFETY: row i + rr < m holds k ≤ lda values of `a` (checked).
            let av = _mm256_set1_ps(unsafe { *a.as_ptr().add((i + rr) * lda + t) });
            for (ac, bv) in acc.iter_mut().zip(&bv) {
                *ac = _mm256_fmadd_ps(av, *bv, *ac);
            }
        }
    }
    for (rr, acc) in acc.iter().enumerate() {
        for (x, ac) in acc.iter().enumerate() {
            // SAFETY: the masked lanes are `c[(i + rr)·ldc + j + 8x ..]` up to column n, inside `c`.
            unsafe { _mm256_maskstore_ps(c.as_mut_ptr().add((i + rr) * ldc + j + 8 * x), mask[x], *ac) };
        }
    }
}

/// [`crate::scalar::carry_scores`] with ymm registers, head by head: 8 keys per register, as
/// `zmm::carry_scores` with 16.
///
/// # Safety
/// The CPU has AVX2 and FMA; lengths as [`crate::scalar::RowScores::check`] checks them.
#[target_feature(enable = "avx2,fma")]
pub(crate) unsafe fn carry_scores(s: &RowScores, out: &mut [f32]) {
    // SAFETY: `each_head` passes each head's query, keys and output, inside the checked operands.
    s.each_head(out, |q, kt, ldkt, nb, out| unsafe { carry_scores_head(q, kt, ldkt, nb, out) });
}

/// One head of [`carry_scores`].
///
/// # Safety
/// As [`carry_scores`], for one head.
#[target_feature(enable = "avx2,fma")]
unsafe fn carry_scores_head(q: &[f32], kt: &[f32], ldkt: usize, nb: usize, out: &mut [f32]) {
    let k = q.len();
    let full = (k - 1) / 16;
    let mut j = 0;
    while j < nb {
        let mask = first_lanes((nb - j).min(8));
        // SAFETY: the masked lanes of row t are `kt[t·ldkt + j ..]` up to key nb, inside `kt`.
        let b = |t: usize| unsafe { _mm256_maskload_ps(kt.as_ptr().add(t * ldkt + j), mask) };
        let halve = |l: &mut [__m256; 16]| {
            let mut h = 8;
            while h > 0 {
                for i in 0..h {
                    l[i] = _mm256_add_ps(l[i], l[i + h]);
                }
                h /= 2;
            }
            l[0]
        };
        let mut carry = _mm256_mul_ps(_mm256_set1_ps(q[0]), b(0));
        let mut i = 1;
        if full > 0 {
            let mut l = [_mm256_setzero_ps(); 16];
            l[0] = carry;
            for _ in 0..full {
                for (x, lane) in l.iter_mut().enumerate() {
                    *lane = _mm256_fmadd_ps(_mm256_set1_ps(q[i + x]), b(i + x), *lane);
                }
                i += 16;
            }
            carry = halve(&mut l);
        }
        if i < k {
            let mut l = [_mm256_setzero_ps(); 16];
            l[0] = carry;
            for (x, lane) in l.iter_mut().enumerate().take(k - i) {
                *lane = _mm256_fmadd_ps(_mm256_set1_ps(q[i + x]), b(i + x), *lane);
            }
            carry = halve(&mut l);
        }
        // SAFETY: the masked lanes are `out[j..nb]`.
        unsafe { _mm256_maskstore_ps(out.as_mut_ptr().add(j), mask, carry) };
        j += 8;
    }
}

/// [`crate::scalar::one_row_values`] with ymm registers. When a head's size is a multiple of
/// 8, every register lies in one head, so the dimensions of all heads run as one row,
/// 4 registers side by side ([`all_heads`]), each with its head's weights: one call for all
/// heads, and more independent chains in flight than one head of 32 has. Otherwise one head at
/// a time.
///
/// # Safety
/// The CPU has AVX2 and FMA; lengths as [`crate::scalar::check_one_row_values`] checks them.
#[target_feature(enable = "avx2,fma")]
pub(crate) unsafe fn one_row_values(w: &[f32], heads: usize, v: &[f32], ldv: usize, dk: usize, out: &mut [f32]) {
    let n = w.len() / heads;
    if !dk.is_multiple_of(8) {
        for h in 0..heads {
            // SAFETY: head h's values are columns `h·dk ..` of the checked rows, its output
            // `out[h·dk ..][..dk]`.
            unsafe { one_head_values(&w[h * n..(h + 1) * n], v, h * dk, ldv, dk, &mut out[h * dk..]) };
        }
        return;
    }
    // SAFETY: lengths checked; `dk` is a multiple of 8.
    unsafe { all_heads::<false, 4>(w, heads, v, ldv, dk, out) };
}

/// One head of [`one_row_values`]: 8 dimensions per register, the last through a mask; head
/// columns from `col`.
///
/// # Safety
/// The CPU has AVX2 and FMA; `w`, `v` (from column `col`, `dk` wide) and `out` as
/// [`crate::scalar::check_one_row_values`] checks them for one head.
#[target_feature(enable = "avx2,fma")]
unsafe fn one_head_values(w: &[f32], v: &[f32], col: usize, ldv: usize, dk: usize, out: &mut [f32]) {
    let n = w.len();
    let mut d = 0;
    while d < dk {
        let mask = first_lanes((dk - d).min(8));
        // SAFETY: the masked lanes of value row j are `v[j·ldv + col + d ..]` up to dk, inside `v`.
        let vr = |j: usize| unsafe { _mm256_maskload_ps(v.as_ptr().add(j * ldv + col + d), mask) };
        let ws = |j: usize| _mm256_set1_ps(w[j]);
        let pair = |p: usize, q: usize| _mm256_fmadd_ps(ws(p), vr(p), _mm256_mul_ps(ws(q), vr(q)));
        let mut c = _mm256_setzero_ps();
        let mut b = 0;
        while b + 8 <= n {
            let mut s = _mm256_fmadd_ps(ws(b + 4), vr(b + 4), _mm256_fmadd_ps(ws(b + 6), vr(b + 6), c));
            s = _mm256_add_ps(s, pair(b + 5, b + 7));
            let t = _mm256_add_ps(pair(b, b + 2), pair(b + 1, b + 3));
            c = _mm256_add_ps(s, t);
            b += 8;
        }
        for j in b..n {
            c = _mm256_fmadd_ps(ws(j), vr(j), c);
        }
        // SAFETY: the masked lanes are `out[d..dk]`.
        unsafe { _mm256_maskstore_ps(out.as_mut_ptr().add(d), mask, c) };
        d += 8;
    }
}

/// [`crate::scalar::zen_carry_scores`] with ymm registers: 8 keys per register, as
/// `zmm::zen_carry_scores` with 16, two units side by side (sixteen registers hold no more).
///
/// # Safety
/// The CPU has AVX2 and FMA; lengths as [`crate::scalar::RowScores::check`] checks them.
#[target_feature(enable = "avx2,fma")]
pub(crate) unsafe fn zen_carry_scores(s: &RowScores, out: &mut [f32]) {
    let RowScores { q, heads, kt, ldkt, nb, ldo } = *s;
    if nb == 0 {
        return;
    }
    let k = s.k();
    let blocks = nb.div_ceil(8);
    let units = heads * blocks;
    let unit = |u: usize| {
        let (h, b) = (u / blocks, 8 * (u % blocks));
        Unit { q: h * k, kt: h * k * ldkt + b, out: h * ldo + b, mask: first_lanes((nb - b).min(8)) }
    };
    let mut u = 0;
    while u + 2 <= units {
        // SAFETY: every unit is a head's query and up to 8 of its keys and outputs (checked).
        unsafe { zen_units::<2>(q, k, kt, ldkt, out, [unit(u), unit(u + 1)]) };
        u += 2;
    }
    if u < units {
        // SAFETY: as above.
        unsafe { zen_units::<1>(q, k, kt, ldkt, out, [unit(u)]) };
    }
}

/// Where one unit of [`zen_carry_scores`] reads and writes: its head's query from `q[q..]`, row
/// `t` of its keys at `kt[kt + t·ldkt ..]` and its sums at `out[out..]`, the keys of `mask`.
#[derive(Clone, Copy)]
struct Unit {
    q: usize,
    kt: usize,
    out: usize,
    mask: __m256i,
}

/// `G` units of [`zen_carry_scores`], each in its own four registers; the operations of each
/// are those of the specification, in its order.
///
/// # Safety
/// As [`zen_carry_scores`]; every unit inside the checked operands, `k` its head's size.
#[target_feature(enable = "avx2,fma")]
#[inline]
unsafe fn zen_units<const G: usize>(q: &[f32], k: usize, kt: &[f32], ldkt: usize, out: &mut [f32], at: [Unit; G]) {
    let end = 4 + k.saturating_sub(4) / 4 * 4;
    let p = |g: usize, t: usize| {
        let u = at[g];
        // SAFETY: t < k: `q[u.q + t]` is in the unit's query, the masked lanes of its key row t
        // inside `kt`.
        unsafe {
            let b = _mm256_maskload_ps(kt.as_ptr().add(u.kt + t * ldkt), u.mask);
            _mm256_mul_ps(_mm256_set1_ps(*q.as_ptr().add(u.q + t)), b)
        }
    };
    let mut l = [[_mm256_setzero_ps(); 4]; G];
    for (g, l) in l.iter_mut().enumerate() {
        l[0] = p(g, 0);
    }
    for t in 1..k.min(4) {
        for (g, l) in l.iter_mut().enumerate() {
            l[0] = _mm256_add_ps(l[0], p(g, t));
        }
    }
    for c in (4..end).step_by(4) {
        for i in 0..4 {
            for (g, l) in l.iter_mut().enumerate() {
                l[i] = _mm256_add_ps(l[i], p(g, c + i));
            }
        }
    }
    for (g, l) in l.iter().enumerate() {
        let mut s = _mm256_add_ps(_mm256_add_ps(l[0], l[2]), _mm256_add_ps(l[1], l[3]));
        for t in end..k {
            s = _mm256_add_ps(s, p(g, t));
        }
        // SAFETY: the masked lanes are the unit's outputs, inside `out`.
        unsafe { _mm256_maskstore_ps(out.as_mut_ptr().add(at[g].out), at[g].mask, s) };
    }
}

/// [`crate::scalar::zen_row_values`] with ymm registers: as [`one_row_values`], the heads'
/// dimensions as one row, 8 registers side by side, when a head's size is a multiple of 8, else
/// one head at a time.
///
/// # Safety
/// The CPU has AVX2 and FMA; lengths as [`crate::scalar::check_one_row_values`] checks them.
#[target_feature(enable = "avx2,fma")]
pub(crate) unsafe fn zen_row_values(w: &[f32], heads: usize, v: &[f32], ldv: usize, dk: usize, out: &mut [f32]) {
    let n = w.len() / heads;
    if !dk.is_multiple_of(8) {
        for h in 0..heads {
            // SAFETY: as in [`one_row_values`].
            unsafe { zen_head_values(&w[h * n..(h + 1) * n], v, h * dk, ldv, dk, &mut out[h * dk..]) };
        }
        return;
    }
    // SAFETY: lengths checked; `dk` is a multiple of 8.
    unsafe { all_heads::<true, 8>(w, heads, v, ldv, dk, out) };
}

/// One head of [`zen_row_values`]: 8 dimensions per register, up to 8 at once; head
/// columns from `col`.
///
/// # Safety
/// The CPU has AVX2 and FMA; `w`, `v` (from column `col`, `dk` wide) and `out` as
/// [`crate::scalar::check_one_row_values`] checks them for one head.
#[target_feature(enable = "avx2,fma")]
unsafe fn zen_head_values(w: &[f32], v: &[f32], col: usize, ldv: usize, dk: usize, out: &mut [f32]) {
    let mut d = 0;
    while d < dk {
        let regs = (dk - d).div_ceil(8).min(8);
        let mask = |r: usize| first_lanes((dk - d - 8 * r).min(8));
        let mut c = [_mm256_setzero_ps(); 8];
        for (j, &wj) in w.iter().enumerate() {
            let wv = _mm256_set1_ps(wj);
            for (r, cr) in c.iter_mut().enumerate().take(regs) {
                // SAFETY: the masked lanes of value row j are `v[j·ldv + col + d + 8r ..]` up to dk,
                // inside `v`.
                let vr = unsafe { _mm256_maskload_ps(v.as_ptr().add(j * ldv + col + d + 8 * r), mask(r)) };
                *cr = _mm256_add_ps(*cr, _mm256_mul_ps(wv, vr));
            }
        }
        for (r, cr) in c.iter().enumerate().take(regs) {
            // SAFETY: the masked lanes are `out[d + 8r..dk]`.
            unsafe { _mm256_maskstore_ps(out.as_mut_ptr().add(d + 8 * r), mask(r), *cr) };
        }
        d += 8 * regs;
    }
}

/// The dimensions of all heads as one row of registers, `R` at a time (then fewer for the last),
/// each register with its head's weights: [`one_row_values`] (`ZEN` false) or
/// [`zen_row_values`] (`ZEN` true) when `dk` is a multiple of 8.
///
/// # Safety
/// The CPU has AVX2 and FMA; lengths as [`crate::scalar::check_one_row_values`] checks them, `dk` a
/// multiple of 8.
#[target_feature(enable = "avx2,fma")]
unsafe fn all_heads<const ZEN: bool, const R: usize>(
    w: &[f32],
    heads: usize,
    v: &[f32],
    ldv: usize,
    dk: usize,
    out: &mut [f32],
) {
    let width = heads * dk;
    let mut d = 0;
    while d < width {
        let left = (width - d) / 8;
        // SAFETY: registers `d / 8 ..` up to `left` are inside every checked row and `out`.
        d += 8 * unsafe {
            if left >= R {
                heads_block::<ZEN, R>(w, heads, v, ldv, dk, d, out)
            } else if left >= 4 {
                heads_block::<ZEN, 4>(w, heads, v, ldv, dk, d, out)
            } else if left >= 2 {
                heads_block::<ZEN, 2>(w, heads, v, ldv, dk, d, out)
            } else {
                heads_block::<ZEN, 1>(w, heads, v, ldv, dk, d, out)
            }
        };
    }
}

/// `N` registers of [`all_heads`] from dimension `d` (over all heads); returns `N`. A constant
/// count keeps the accumulators in registers.
///
/// # Safety
/// As [`all_heads`], and `d + 8·N ≤ heads · dk`.
#[target_feature(enable = "avx2,fma")]
#[inline]
unsafe fn heads_block<const ZEN: bool, const N: usize>(
    w: &[f32],
    heads: usize,
    v: &[f32],
    ldv: usize,
    dk: usize,
    d: usize,
    out: &mut [f32],
) -> usize {
    let n = w.len() / heads;
    // The weights of the head each register lies in (a register never straddles two heads).
    let wp: [*const f32; N] = std::array::from_fn(|r| w[(d + 8 * r) / dk * n..].as_ptr());
    // SAFETY: row j < n, register r < N: columns `d + 8r ..` of a checked row.
    let vr = |j: usize, r: usize| unsafe { _mm256_loadu_ps(v.as_ptr().add(j * ldv + d + 8 * r)) };
    // SAFETY: `wp[r]` points at its head's `n` weights and j < n.
    let ws = |j: usize, r: usize| _mm256_set1_ps(unsafe { *wp[r].add(j) });
    let mut c = [_mm256_setzero_ps(); N];
    let mut b = 0;
    if !ZEN {
        let pair =
            |p: usize, q: usize, r: usize| _mm256_fmadd_ps(ws(p, r), vr(p, r), _mm256_mul_ps(ws(q, r), vr(q, r)));
        while b + 8 <= n {
            for (r, c) in c.iter_mut().enumerate() {
                let mut s =
                    _mm256_fmadd_ps(ws(b + 4, r), vr(b + 4, r), _mm256_fmadd_ps(ws(b + 6, r), vr(b + 6, r), *c));
                s = _mm256_add_ps(s, pair(b + 5, b + 7, r));
                let t = _mm256_add_ps(pair(b, b + 2, r), pair(b + 1, b + 3, r));
                *c = _mm256_add_ps(s, t);
            }
            b += 8;
        }
    }
    for j in b..n {
        for (r, c) in c.iter_mut().enumerate() {
            *c = if ZEN {
                _mm256_add_ps(*c, _mm256_mul_ps(ws(j, r), vr(j, r)))
            } else {
                _mm256_fmadd_ps(ws(j, r), vr(j, r), *c)
            };
        }
    }
    for (r, c) in c.iter().enumerate() {
        // SAFETY: `out` holds `heads · dk ≥ d + 8·N` floats (checked).
        unsafe { _mm256_storeu_ps(out.as_mut_ptr().add(d + 8 * r), *c) };
    }
    N
}
