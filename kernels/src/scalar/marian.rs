//! The specification of the float products in the orders of the BLAS Bergamot runs (MKL's
//! Intel and Zen paths): attention's chained products, one-row scores and value sums. The
//! vector forms in `marian_lanes.rs` (with ymm and zmm registers) give the same bits.

/// A float matrix product in which every element is one fused multiply-add chain from 0 in order
/// over the inner index: `c[i·ldc + j] = fma(a[i·lda + k−1], b[(k−1)·ldb + j], … fma(a[i·lda],
/// b[j], 0))` for `i < m`, `j < n`. This is MKL's order for attention's products over several
/// query rows (see reseam's `layers/attention/`); the vector forms compute many elements side
/// by side, each with this chain, so they give its bits.
pub fn chain_products(p: &Chain, c: &mut [f32]) {
    p.check(c);
    let Chain { a, lda, b, ldb, m, n, k, ldc } = *p;
    for i in 0..m {
        for j in 0..n {
            let mut acc = 0f32;
            for t in 0..k {
                acc = a[i * lda + t].mul_add(b[t * ldb + j], acc);
            }
            c[i * ldc + j] = acc;
        }
    }
}

/// The operands of [`chain_products`]: `c` (`m × n`, rows `ldc` apart) `= a · b` with `a`
/// `m × k` (rows `lda` apart) and `b` `k × n` (rows `ldb` apart).
#[derive(Clone, Copy, Debug)]
pub struct Chain<'a> {
    pub a: &'a [f32],
    pub lda: usize,
    pub b: &'a [f32],
    pub ldb: usize,
    pub m: usize,
    pub n: usize,
    pub k: usize,
    pub ldc: usize,
}

impl Chain<'_> {
    /// Checks the lengths every form of [`chain_products`] reads and writes inside.
    ///
    /// # Panics
    /// If a slice is too short for its rows or a stride shorter than its row.
    pub fn check(&self, c: &[f32]) {
        let Chain { a, lda, b, ldb, m, n, k, ldc } = *self;
        let need =
            |rows: usize, stride: usize, len: usize| if rows == 0 || len == 0 { 0 } else { (rows - 1) * stride + len };
        assert!(m == 0 || k == 0 || lda >= k, "chain_products: lda {lda} < k {k}");
        assert!(k == 0 || n == 0 || ldb >= n, "chain_products: ldb {ldb} < n {n}");
        assert!(m == 0 || n == 0 || ldc >= n, "chain_products: ldc {ldc} < n {n}");
        assert!(a.len() >= need(m, lda, k), "chain_products: a holds {} of {m}×{k}", a.len());
        assert!(b.len() >= need(k, ldb, n), "chain_products: b holds {} of {k}×{n}", b.len());
        assert!(c.len() >= need(m, ldc, n), "chain_products: c holds {} of {m}×{n}", c.len());
    }
}

/// MKL's `Q·Kᵀ` for one query row (reseam's `layers/attention/` says how it was read off MKL),
/// with `b_t` = `kt[t·ldkt + j]` (the keys transposed):
/// - a key `j` whose block of 4 is full (the carry): the first product alone, then every full
///   chunk of 16 elements from element 1 fused into 16 lanes (the first product in lane 0), the
///   lanes halved (`l + l+8`, `+4`, `+2`, `+1`); the partial chunk left fused into fresh lanes
///   with that sum in lane 0, halved again;
/// - a key past the last block of 4, the `i`-th of them (the tail): the chunks of 16 from
///   element 1 into one set of lanes from 0, fused, but on the 1st, 3rd, ... tail key (`i`
///   even) the second chunk, when full, multiplied and added; halved, then added to the first
///   product.
///
/// `out[j]` gets the sum (not scaled). For every head of `s` at once (see [`RowScores`]); each
/// head is the one-head product above.
pub fn carry_scores(s: &RowScores, out: &mut [f32]) {
    s.check(out);
    s.each_head(out, carry_scores_head);
}

/// 16 lanes summed as MKL halves a register: `l + l+8`, then `+4`, `+2`, `+1`.
#[inline]
pub fn halve16(mut v: [f32; 16]) -> f32 {
    let mut h = 8;
    while h > 0 {
        for i in 0..h {
            v[i] += v[i + h];
        }
        h /= 2;
    }
    v[0]
}

/// [`carry_scores`] of one head.
fn carry_scores_head(q: &[f32], kt: &[f32], ldkt: usize, n: usize, out: &mut [f32]) {
    let k = q.len();
    let nb = n / 4 * 4;
    for (i, j) in (nb..n).enumerate() {
        let b = |t: usize| kt[t * ldkt + j];
        let mut lanes = [0f32; 16];
        for (c, t) in (1..k).step_by(16).enumerate() {
            let end = k.min(t + 16);
            for (l, lane) in lanes.iter_mut().enumerate().take(end - t) {
                *lane = if c == 1 && end == t + 16 && i.is_multiple_of(2) {
                    *lane + q[t + l] * b(t + l)
                } else {
                    q[t + l].mul_add(b(t + l), *lane)
                };
            }
        }
        out[j] = q[0] * b(0) + halve16(lanes);
    }
    for (j, o) in out.iter_mut().enumerate().take(nb) {
        let b = |t: usize| kt[t * ldkt + j];
        let mut carry = q[0] * b(0);
        let full = (k - 1) / 16;
        let mut i = 1;
        if full > 0 {
            let mut lanes = [0f32; 16];
            lanes[0] = carry;
            for _ in 0..full {
                for (l, lane) in lanes.iter_mut().enumerate() {
                    *lane = q[i + l].mul_add(b(i + l), *lane);
                }
                i += 16;
            }
            carry = halve16(lanes);
        }
        if i < k {
            let mut lanes = [0f32; 16];
            lanes[0] = carry;
            for (l, lane) in lanes.iter_mut().enumerate().take(k - i) {
                *lane = q[i + l].mul_add(b(i + l), *lane);
            }
            carry = halve16(lanes);
        }
        *o = carry;
    }
}

/// Whose summation orders attention's one-row products follow: those of MKL's Intel code paths
/// or those of its AMD (Zen) kernels, as Bergamot's BLAS takes one or the other by CPU.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum MklOrder {
    Intel,
    Zen,
}

/// The operands of one query row's attention scores, every head at once: head `h`'s query is
/// `q[h·k .. (h+1)·k]` (`k = q.len() / heads`), its keys transposed are rows `h·k ..` of `kt`
/// (`ldkt` apart: element `t` of key `j` at `kt[(h·k + t)·ldkt + j]`), and its `n` sums go to
/// `out[h·ldo ..]`.
#[derive(Clone, Copy, Debug)]
pub struct RowScores<'a> {
    pub q: &'a [f32],
    pub heads: usize,
    pub kt: &'a [f32],
    pub ldkt: usize,
    /// Keys scored: all of the sentence's, those in full blocks of 4 in the carry's order, the
    /// rest in the tail's.
    pub n: usize,
    pub ldo: usize,
}

impl RowScores<'_> {
    /// Checks the lengths every form of [`carry_scores`] and [`zen_carry_scores`] reads and
    /// writes inside.
    ///
    /// # Panics
    /// If `heads` is 0 or does not divide the queries, a head's query is empty, or a slice is
    /// too short.
    pub fn check(&self, out: &[f32]) {
        let RowScores { q, heads, kt, ldkt, n, ldo } = *self;
        assert!(heads > 0 && q.len().is_multiple_of(heads), "carry_scores: {} query values for {heads} heads", q.len());
        assert!(!q.is_empty(), "carry_scores: empty query");
        assert!(n == 0 || (ldkt >= n && kt.len() >= (q.len() - 1) * ldkt + n), "carry_scores: keys too short");
        assert!(heads == 1 || n == 0 || ldo >= n, "carry_scores: output stride {ldo} < {n}");
        assert!(n == 0 || out.len() >= (heads - 1) * ldo + n, "carry_scores: output too short");
    }

    /// A head's query size.
    pub fn k(&self) -> usize {
        self.q.len() / self.heads
    }

    /// Runs a one-head product `f(q, kt, ldkt, n, out)` over every head (lengths checked).
    pub(crate) fn each_head(&self, out: &mut [f32], f: impl Fn(&[f32], &[f32], usize, usize, &mut [f32])) {
        if self.n == 0 {
            return;
        }
        let k = self.k();
        for h in 0..self.heads {
            f(&self.q[h * k..(h + 1) * k], &self.kt[h * k * self.ldkt..], self.ldkt, self.n, &mut out[h * self.ldo..]);
        }
    }
}

/// MKL's `Q·Kᵀ` on AMD (its Zen kernels) for one query row (reseam's `layers/attention/zen.rs`
/// says how it was read off MKL), with `b_t` = `kt[t·ldkt + j]`, every product rounded and no
/// addition fused: lane 0 starts as `((p0 + p1) + p2) + p3`, the other lanes at 0; then
/// - a key whose block of 4 is full (the carry): elements `4 + 4c + l` go to lane `l` of 4
///   while a whole chunk of 4 is left; `(l0 + l2) + (l1 + l3)`;
/// - a key past the last block of 4, the `i`-th of them (the tail): elements `4 + L·c + l` go
///   to lane `l` of `L` (8 for `i` even, else 4) while a whole chunk of `L` is left before the
///   last 4 elements; the lanes halved (`l + l+L/2`, ..., `l + l+1`);
///
/// then the elements past the chunks added in turn. `out[j]` gets the sum (not scaled). Every
/// head of `s` at once as in [`carry_scores`].
pub fn zen_carry_scores(s: &RowScores, out: &mut [f32]) {
    s.check(out);
    s.each_head(out, zen_carry_scores_head);
}

/// [`zen_carry_scores`] of one head.
fn zen_carry_scores_head(q: &[f32], kt: &[f32], ldkt: usize, n: usize, out: &mut [f32]) {
    let k = q.len();
    let nb = n / 4 * 4;
    for (j, o) in out.iter_mut().enumerate().take(n) {
        let p = |t: usize| q[t] * kt[t * ldkt + j];
        // Lanes, and the elements left out of the chunks at the end.
        let (width, reserve) = match j.checked_sub(nb) {
            None => (4, 0),
            Some(i) if i.is_multiple_of(2) => (8, 4),
            Some(_) => (4, 4),
        };
        let end = 4 + k.saturating_sub(4 + reserve) / width * width;
        let mut l = [0f32; 8];
        l[0] = p(0);
        for t in 1..k.min(4) {
            l[0] += p(t);
        }
        for c in (4..end).step_by(width) {
            for (i, lane) in l.iter_mut().enumerate().take(width) {
                *lane += p(c + i);
            }
        }
        let mut h = width / 2;
        while h > 0 {
            for i in 0..h {
                l[i] += l[i + h];
            }
            h /= 2;
        }
        let mut s = l[0];
        for t in end..k {
            s += p(t);
        }
        *o = s;
    }
}

/// MKL's `weights·V` on AMD for one to three query rows, for `heads` heads at once: head `h`
/// has the `n = w.len() / heads` weights `w[h·n ..]` and its values in columns `h·dk ..` of the
/// value rows. Per dimension `d < dk`, with `v_j` = `v[j·ldv + h·dk + d]`, the rounded products
/// `w_j·v_j` added in turn from 0 (no fused step); `out[h·dk + d]` gets the sum.
pub fn zen_row_values(p: &RowValues, out: &mut [f32]) {
    p.check(out);
    let RowValues { w, heads, v, ldv, dk } = *p;
    let n = p.n();
    for h in 0..heads {
        let w = &w[h * n..(h + 1) * n];
        for (d, o) in out[h * dk..].iter_mut().enumerate().take(dk) {
            let mut c = 0f32;
            for (j, &wj) in w.iter().enumerate() {
                c += wj * v[j * ldv + h * dk + d];
            }
            *o = c;
        }
    }
}

/// MKL's `weights·V` for one query row (reseam's `layers/attention/`), for `heads` heads at
/// once, laid out as for [`zen_row_values`]: per dimension `d < dk` of head `h`, with `v_j` =
/// `v[j·ldv + h·dk + d]`, blocks of 8 weights combined as `((c·fma 6, fma 4) + (5,7)) + ((0,2) +
/// (1,3))` with the carry `c` of the blocks before, where `(p,q)` is `fma(w_p, v_p, w_q·v_q)`,
/// then a plain fma chain over the keys left. `out[h·dk + d]` gets the sum.
pub fn one_row_values(p: &RowValues, out: &mut [f32]) {
    p.check(out);
    let RowValues { w, heads, v, ldv, dk } = *p;
    let n = p.n();
    for h in 0..heads {
        let w = &w[h * n..(h + 1) * n];
        for (d, o) in out[h * dk..].iter_mut().enumerate().take(dk) {
            let v = |j: usize| v[j * ldv + h * dk + d];
            let pair = |p: usize, q: usize| w[p].mul_add(v(p), w[q] * v(q));
            let mut c = 0f32;
            let mut b = 0;
            while b + 8 <= n {
                let mut s = w[b + 4].mul_add(v(b + 4), w[b + 6].mul_add(v(b + 6), c));
                s += pair(b + 5, b + 7);
                let t = pair(b, b + 2) + pair(b + 1, b + 3);
                c = s + t;
                b += 8;
            }
            for (j, &wj) in w.iter().enumerate().skip(b) {
                c = wj.mul_add(v(j), c);
            }
            *o = c;
        }
    }
}

/// The operands of one query row's value sums, every head at once: head `h` has the
/// `n = w.len() / heads` weights `w[h·n ..]` and its values in columns `h·dk ..` of the value
/// rows of `v` (`ldv` apart); its `dk` sums go to `out[h·dk ..]`.
#[derive(Clone, Copy, Debug)]
pub struct RowValues<'a> {
    pub w: &'a [f32],
    pub heads: usize,
    pub v: &'a [f32],
    pub ldv: usize,
    pub dk: usize,
}

impl RowValues<'_> {
    /// Checks the lengths every form of [`one_row_values`] and [`zen_row_values`] reads and
    /// writes inside.
    ///
    /// # Panics
    /// If `heads` is 0 or does not divide the weights, or a slice is too short.
    pub fn check(&self, out: &[f32]) {
        let RowValues { w, heads, v, ldv, dk } = *self;
        assert!(heads > 0 && w.len().is_multiple_of(heads), "one_row_values: {} weights for {heads} heads", w.len());
        let (n, width) = (w.len() / heads, heads * dk);
        assert!(
            n == 0 || width == 0 || (ldv >= width && v.len() >= (n - 1) * ldv + width),
            "one_row_values: values too short"
        );
        assert!(out.len() >= width, "one_row_values: output shorter than {width}");
    }

    /// Weights (keys) per head.
    pub fn n(&self) -> usize {
        self.w.len() / self.heads
    }
}
