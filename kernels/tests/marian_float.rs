//! Marian's float side on every kernel table equals the scalar specification bit for bit: the
//! log-softmax reductions and attention's products in MKL's orders.

use reseam_kernels::Kernels;
use reseam_kernels::scalar::{self, Chain, MklOrder, RowScores, RowValues};
use reseam_kernels::transpose::Transpose;

mod common;
use common::{Rng, fbits};

/// Marian's log-softmax reductions (the row's maximum, the 8-lane sum of Cephes exponentials)
/// on every table equal the specification's bits, on lengths from one register to a whole
/// vocabulary: plain rows, masked (−∞) entries, ties, NaN first or later, values past the
/// exponential's clamp.
#[test]
fn log_softmax_reductions_equal_reference() {
    let mut r = Rng(11);
    for len in (8..=160).step_by(8).chain([256, 1000, 8000, 32000]) {
        let base: Vec<f32> = (0..len).map(|_| r.f32_in(-25.0, 12.0)).collect();
        let mut rows = vec![base.clone(), vec![3.5; len]];
        for special in [f32::NEG_INFINITY, f32::NAN, 1e30, -1e30, 200.0, -200.0, -0.0, f32::INFINITY] {
            for stride in [3, 17] {
                let mut x = base.clone();
                for (i, v) in x.iter_mut().enumerate() {
                    if (i * 7 + len) % stride == 0 {
                        *v = special;
                    }
                }
                rows.push(x.clone());
                x[0] = special;
                rows.push(x);
            }
        }
        for x in &rows {
            let (m, s) = reseam_kernels::cephes::max_and_exp_sum8(x);
            for k in Kernels::candidates() {
                let (km, ks) = k.max_and_exp_sum8(x);
                assert_eq!((km.to_bits(), ks.to_bits()), (m.to_bits(), s.to_bits()), "{} on {len} values", k.name());
            }
        }
    }
}

/// Attention's chained products (one fused multiply-add chain per element) on every table equal
/// the specification on every tile edge: 1–9 rows, 1–40 columns, inner sizes of the three head
/// sizes and of short sources, strided operands, and nothing written outside the output.
#[test]
fn chain_products_equal_reference() {
    let mut r = Rng(5);
    for m in 1..=9 {
        for n in (1..=40).chain([64, 127]) {
            for k in [1, 3, 17, 32, 48, 64] {
                let (lda, ldb, ldc) = (k + 3, n + 5, n + 2);
                let a: Vec<f32> = (0..m * lda).map(|_| r.f32_in(-2.0, 2.0)).collect();
                let b: Vec<f32> = (0..k * ldb).map(|_| r.f32_in(-2.0, 2.0)).collect();
                let mut want = vec![-7.25f32; m * ldc];
                let p = Chain { a: &a, lda, b: &b, ldb, m, n, k, ldc };
                scalar::chain_products(&p, &mut want);
                for kern in Kernels::candidates() {
                    let mut got = vec![-7.25f32; m * ldc];
                    kern.chain_products(&p, &mut got);
                    assert_eq!(fbits(&got), fbits(&want), "{} m {m} n {n} k {k}", kern.name());
                }
            }
        }
    }
}

/// The keys' transposition (scaled, or by 1) on every table equals the specification: rows on
/// both sides of every multiple of 8 (a short block), columns past a multiple of 8, strided
/// operands, output rows with and without room for a whole last register (the padding zeroed),
/// specials (NaN, ±0, ±∞) carried through, and nothing written past the output.
#[test]
fn transpose_scaled_equals_reference() {
    let mut r = Rng(19);
    for rows in (1..=26usize).chain([31, 33, 64]) {
        let ldds = [rows, rows + 2, rows.next_multiple_of(8), rows.next_multiple_of(8) + 9];
        for (cols, ldd) in [1, 5, 8, 13, 32, 256].into_iter().flat_map(|c| ldds.map(|l| (c, l))) {
            for scale in [1.0, -0.17677669] {
                let lds = cols + 3;
                let mut src: Vec<f32> = (0..rows * lds).map(|_| r.f32_in(-4.0, 4.0)).collect();
                for (i, x) in [f32::NAN, -0.0, f32::INFINITY, f32::NEG_INFINITY, 0.0].into_iter().enumerate() {
                    let at = (i * 7) % src.len();
                    src[at] = x;
                }
                let mut want = vec![-7.25f32; cols * ldd + 5];
                let t = Transpose { src: &src, lds, rows, cols, scale, ldd };
                reseam_kernels::transpose::transpose_scaled(&t, &mut want);
                assert!(
                    want[..cols * ldd].iter().all(|&x| x != -7.25) && want[cols * ldd..].iter().all(|&x| x == -7.25)
                );
                for kern in Kernels::candidates() {
                    let mut got = vec![-7.25f32; cols * ldd + 5];
                    kern.transpose_scaled(&t, &mut got);
                    assert_eq!(fbits(&got), fbits(&want), "{} rows {rows} cols {cols} ldd {ldd}", kern.name());
                }
            }
        }
    }
}

/// Attention's one-query-row products in MKL's order (the carry and tail scores over transposed
/// keys, the weighted values in blocks of 8) on every table equal the specification: head sizes
/// of every model and past them (second chunks of 16 full or not), key counts across the vector
/// widths with every length of tail, strided operands.
#[test]
fn one_row_attention_equals_reference() {
    let mut r = Rng(9);
    for k in [1, 2, 16, 17, 31, 32, 33, 48, 64, 80] {
        for nb in (0..=40).chain([64, 100, 101, 102, 103, 128]) {
            let ld = nb + 3;
            let q: Vec<f32> = (0..k).map(|_| r.f32_in(-2.0, 2.0)).collect();
            let kt: Vec<f32> = (0..k * ld).map(|_| r.f32_in(-2.0, 2.0)).collect();
            let mut want = vec![-7.25f32; nb + 2];
            let s = RowScores { q: &q, heads: 1, kt: &kt, ldkt: ld, n: nb, ldo: nb };
            scalar::carry_scores(&s, &mut want);
            // Values: `nb` keys of `k` dimensions (the head size), row stride k + 5.
            let w: Vec<f32> = (0..nb).map(|_| r.f32_in(0.0, 1.0)).collect();
            let v: Vec<f32> = (0..nb * (k + 5)).map(|_| r.f32_in(-2.0, 2.0)).collect();
            let mut want_v = vec![-7.25f32; k + 2];
            let pv = RowValues { w: &w, heads: 1, v: &v, ldv: k + 5, dk: k };
            scalar::one_row_values(&pv, &mut want_v);
            for kern in Kernels::candidates() {
                let mut got = vec![-7.25f32; nb + 2];
                kern.row_scores(MklOrder::Intel, &s, &mut got);
                assert_eq!(fbits(&got), fbits(&want), "{} carry_scores k {k} nb {nb}", kern.name());
                let mut got_v = vec![-7.25f32; k + 2];
                kern.one_row_values(&pv, &mut got_v);
                assert_eq!(fbits(&got_v), fbits(&want_v), "{} one_row_values k {k} n {nb}", kern.name());
            }
        }
    }
}

/// The one-query-row scores of several heads in one call (Intel's and AMD's orders) on every
/// table equal the specification, and the specification of several heads equals itself run head
/// by head: head sizes of every model and odd ones (the chunks of 4, 8 and 16 cut short), key
/// counts across the vector widths and the units run side by side, with every length of tail,
/// head counts that leave a unit alone, strided keys and outputs, and nothing written between
/// or past the heads' outputs.
#[test]
fn carry_scores_of_many_heads_equal_reference() {
    type Scores = fn(&RowScores, &mut [f32]);
    let specs: [(MklOrder, Scores); 2] =
        [(MklOrder::Intel, scalar::carry_scores), (MklOrder::Zen, scalar::zen_carry_scores)];
    let mut r = Rng(41);
    for heads in [1, 2, 3, 5, 8, 16] {
        for k in [1, 3, 4, 5, 8, 9, 12, 16, 17, 32, 33, 48, 64] {
            for nb in (0..=40).step_by(4).chain([1, 2, 3, 5, 6, 7, 9, 15, 17, 30, 31, 64, 100, 101, 102, 103]) {
                let (ld, ldo) = (nb + 3, nb + 2);
                let q: Vec<f32> = (0..heads * k).map(|_| r.f32_in(-2.0, 2.0)).collect();
                let kt: Vec<f32> = (0..heads * k * ld).map(|_| r.f32_in(-2.0, 2.0)).collect();
                for (order, spec) in specs {
                    let s = RowScores { q: &q, heads, kt: &kt, ldkt: ld, n: nb, ldo };
                    let mut want = vec![-7.25f32; heads * ldo + 1];
                    spec(&s, &mut want);
                    for h in 0..heads {
                        let mut alone = vec![-7.25f32; ldo];
                        let one = RowScores { q: &q[h * k..(h + 1) * k], heads: 1, kt: &kt[h * k * ld..], ..s };
                        spec(&one, &mut alone);
                        assert_eq!(fbits(&want[h * ldo..(h + 1) * ldo]), fbits(&alone), "{order:?} head {h} alone");
                    }
                    for kern in Kernels::candidates() {
                        let mut got = vec![-7.25f32; heads * ldo + 1];
                        kern.row_scores(order, &s, &mut got);
                        let what = format!("{} {order:?}: heads {heads} k {k} nb {nb}", kern.name());
                        assert_eq!(fbits(&got), fbits(&want), "{what}");
                    }
                }
            }
        }
    }
}

/// The one-query-row value sums of several heads in one call (Intel's and AMD's orders) on
/// every table equal the specification, and the specification of several heads equals itself
/// run head by head: head sizes that fill whole registers (all heads as one row of registers)
/// and that do not (head by head, the last register masked), key counts around the blocks of 8,
/// strided value rows, and nothing written past the heads' output.
#[test]
fn one_row_values_of_many_heads_equal_reference() {
    type Values = fn(&RowValues, &mut [f32]);
    let specs: [(&str, Values); 2] = [("intel", scalar::one_row_values), ("zen", scalar::zen_row_values)];
    let mut r = Rng(37);
    for heads in [1, 2, 3, 8, 9, 16] {
        for dk in [1, 5, 8, 16, 20, 32, 48, 64] {
            for n in [0, 1, 7, 8, 9, 16, 17, 25, 40] {
                let width = heads * dk;
                let ldv = 2 * width + 3;
                let w: Vec<f32> = (0..heads * n).map(|_| r.f32_in(0.0, 1.0)).collect();
                let v: Vec<f32> = (0..n * ldv).map(|_| r.f32_in(-2.0, 2.0)).collect();
                for (name, spec) in specs {
                    let mut want = vec![-7.25f32; width + 3];
                    let p = RowValues { w: &w, heads, v: &v, ldv, dk };
                    spec(&p, &mut want);
                    for h in 0..heads {
                        let mut alone = vec![0f32; dk];
                        let vh = if n == 0 { &v[..] } else { &v[h * dk..] };
                        spec(&RowValues { w: &w[h * n..(h + 1) * n], heads: 1, v: vh, ldv, dk }, &mut alone);
                        assert_eq!(fbits(&want[h * dk..(h + 1) * dk]), fbits(&alone), "{name} head {h} alone");
                    }
                    for kern in Kernels::candidates() {
                        let mut got = vec![-7.25f32; width + 3];
                        if name == "intel" {
                            kern.one_row_values(&p, &mut got);
                        } else {
                            kern.zen_row_values(&p, &mut got);
                        }
                        let what = format!("{} {name}: heads {heads} dk {dk} n {n}", kern.name());
                        assert_eq!(fbits(&got), fbits(&want), "{what}");
                    }
                }
            }
        }
    }
}

/// Marian's softmax of a row on every table equals the specification bit for bit: every lane
/// count (lengths of a multiple of 8, of 4, and neither), scores of attention's spread, masked
/// (−∞) keys, ties, NaN first or later, infinities, signed zeros as the maximum.
#[test]
fn marian_softmax_equals_reference() {
    let mut r = Rng(23);
    for len in (1..=140).chain([255, 256, 257, 1000, 1001]) {
        let base: Vec<f32> = (0..len).map(|_| r.f32_in(-30.0, 30.0)).collect();
        let mut rows = vec![base.clone(), vec![-1.25; len], base.iter().map(|v| v * 1e-3).collect()];
        for special in [f32::NEG_INFINITY, f32::NAN, f32::INFINITY, 0.0, -0.0, -1e9, 1e30] {
            for stride in [2, 5] {
                let mut x = base.clone();
                for (i, v) in x.iter_mut().enumerate() {
                    if (i * 3 + len) % stride == 0 {
                        *v = special;
                    }
                }
                rows.push(x.clone());
                x[0] = special;
                rows.push(x);
            }
        }
        let zeros: Vec<f32> = (0..len)
            .map(|i| {
                if i % 3 == 0 {
                    -0.0
                } else if i % 3 == 1 {
                    0.0
                } else {
                    -5.0
                }
            })
            .collect();
        rows.push(zeros);
        for x in &rows {
            let mut want = x.clone();
            reseam_kernels::softmax::softmax(&mut want);
            for k in Kernels::candidates() {
                let mut got = x.clone();
                k.marian_softmax(&mut got);
                assert_eq!(fbits(&got), fbits(&want), "{} ({}) on {len} values: {x:?}", k.name(), k.expf_body());
            }
        }
    }
}

/// Marian's softmax of several rows in one call on every table equals the specification on each
/// row alone: 1 to 19 rows (groups of 8 side by side and the rows past them), each lane count,
/// rows whose lengths make the whole call shorter or longer than a vector, special values in
/// some rows only (a NaN or −∞ row beside ordinary ones must not leak into them).
#[test]
fn marian_softmax_rows_equals_each_row_alone() {
    let mut r = Rng(29);
    for n in (1..=41).chain([64, 100, 129]) {
        for rows in [1, 2, 3, 7, 8, 9, 16, 19] {
            let mut x: Vec<f32> = (0..rows * n).map(|_| r.f32_in(-20.0, 20.0)).collect();
            if rows > 2 {
                x[n] = f32::NAN;
                x[2 * n + n / 2] = f32::NEG_INFINITY;
                x[(rows - 1) * n] = f32::INFINITY;
            }
            let mut want = x.clone();
            for row in want.chunks_exact_mut(n) {
                reseam_kernels::softmax::softmax(row);
            }
            let mut spec = x.clone();
            reseam_kernels::softmax::softmax_rows(&mut spec, n);
            assert_eq!(fbits(&spec), fbits(&want), "specification, {rows} rows of {n}");
            for k in Kernels::candidates() {
                let mut got = x.clone();
                k.marian_softmax_rows(&mut got, n);
                assert_eq!(fbits(&got), fbits(&want), "{} ({}): {rows} rows of {n}", k.name(), k.expf_body());
            }
        }
    }
}

/// The residual add and layer norm on every table equal the specification bit for bit: the
/// model widths, odd widths (gcc's 4-wide and scalar epilogue), several rows, large offsets.
#[test]
fn add_layer_norm_equals_reference() {
    let mut r = Rng(31);
    for n in [1, 3, 4, 7, 8, 12, 13, 16, 100, 256, 512, 1024] {
        for rows in [1, 2, 4, 5, 9, 13] {
            let a: Vec<f32> = (0..rows * n).map(|_| r.f32_in(-4.0, 4.0)).collect();
            let b: Vec<f32> = (0..rows * n).map(|_| r.f32_in(-300.0, 500.0)).collect();
            let g: Vec<f32> = (0..n).map(|_| r.f32_in(0.5, 1.5)).collect();
            let be: Vec<f32> = (0..n).map(|_| r.f32_in(-0.2, 0.2)).collect();
            let mut want = a.clone();
            reseam_kernels::norm::add_layer_norm(&mut want, &b, &g, &be, &mut Vec::new());
            // Rows run side by side in groups; each must come out as it does alone.
            for (r, w) in want.chunks(n).enumerate() {
                let mut alone = a[r * n..(r + 1) * n].to_vec();
                reseam_kernels::norm::add_layer_norm(&mut alone, &b[r * n..(r + 1) * n], &g, &be, &mut Vec::new());
                assert_eq!(fbits(w), fbits(&alone), "row {r} of {rows} rows of {n}");
            }
            for k in Kernels::candidates() {
                let mut got = a.clone();
                k.add_layer_norm(&mut got, &b, &g, &be, &mut Vec::new());
                assert_eq!(fbits(&got), fbits(&want), "{} on {rows} rows of {n}", k.name());
            }
        }
    }
}

/// The scan of a row of logits on every table equals the specification (so does the quick
/// pass, and the scan taken in pieces joined with `then`): lengths around the
/// blocks of 16 and 8 up to a vocabulary, the maximum repeated (in one lane, in two lanes, in
/// the padded tail), a runner-up one ulp below it before and after it, zeros of both signs,
/// and NaN or infinities anywhere (where only `finite` is specified).
#[test]
fn logit_scan_equals_reference() {
    use reseam_kernels::scan::top2;
    let mut r = Rng(47);
    let up = |x: f32, k: i32| f32::from_bits((x.to_bits() as i32 + if x < 0.0 { -k } else { k }) as u32);
    let mut rows: Vec<Vec<f32>> = vec![vec![], vec![-0.0, 0.0], vec![0.0, -0.0, -1.0], vec![-5.0; 33]];
    for n in (1..=50).chain([63, 64, 65, 255, 256, 1000, 32000]) {
        let base: Vec<f32> = (0..n).map(|_| r.f32_in(-12.0, 9.0)).collect();
        rows.push(base.clone());
        let top = (0..n).fold(0, |b, i| if base[i] > base[b] { i } else { b });
        for _ in 0..6 {
            let mut x = base.clone();
            // A copy of the maximum, or values a few ulps below it, before or after it.
            for _ in 0..1 + r.below(3) {
                let j = r.below(n as u64) as usize;
                x[j] = up(base[top], -(r.below(3) as i32));
            }
            if r.below(4) == 0 {
                x[r.below(n as u64) as usize] = if r.below(2) == 0 { 0.0 } else { -0.0 };
            }
            rows.push(x.clone());
            let special = [f32::NAN, f32::INFINITY, f32::NEG_INFINITY][r.below(3) as usize];
            x[r.below(n as u64) as usize] = special;
            rows.push(x);
        }
    }
    for x in &rows {
        let want = top2(x);
        // The specification against its own definition.
        let finite = x.iter().all(|v| v.is_finite());
        assert_eq!(want.finite, finite);
        if finite && !x.is_empty() {
            let max = x.iter().fold(f32::NEG_INFINITY, |m, &v| if v > m { v } else { m });
            assert_eq!(want.max, max);
            assert_eq!(want.at, x.iter().position(|&v| v == max).unwrap());
            let mut rest = x.clone();
            rest.remove(want.at);
            assert_eq!(want.second, rest.iter().fold(f32::NEG_INFINITY, |m, &v| if v > m { v } else { m }));
        }
        // Scanned in pieces and joined with `then`: the same as in one pass.
        let mut cuts: Vec<usize> = (0..r.below(5)).map(|_| r.below(x.len() as u64 + 1) as usize).collect();
        cuts.extend([0, x.len()]);
        cuts.sort_unstable();
        let pieces = cuts.windows(2).fold(top2(&[]), |t, w| t.then(top2(&x[w[0]..w[1]]), w[0]));
        assert_eq!(pieces.finite, want.finite, "pieces {cuts:?} of {x:?}");
        if want.finite {
            assert_eq!((pieces.max.to_bits(), pieces.at, pieces.second), (want.max.to_bits(), want.at, want.second));
        }
        // The quick pass: finiteness and the largest value, as the scan finds them.
        let quick = reseam_kernels::scan::largest(x);
        assert_eq!(quick.finite, want.finite);
        if want.finite {
            assert_eq!(quick.max, want.max);
        }
        for k in Kernels::candidates() {
            let got = k.largest(x);
            assert_eq!(got.finite, want.finite, "{} largest on {} values: {x:?}", k.name(), x.len());
            if want.finite {
                assert_eq!(got.max, want.max, "{} largest on {} values", k.name(), x.len());
            }
            let got = k.top2(x);
            assert_eq!(got.finite, want.finite, "{} on {} values: {x:?}", k.name(), x.len());
            if want.finite {
                assert_eq!(
                    (got.max.to_bits(), got.at, got.second),
                    (want.max.to_bits(), want.at, want.second),
                    "{} on {} values",
                    k.name(),
                    x.len()
                );
            }
        }
    }
}

/// The SSRU cell on every table equals the specification bit for bit: the model widths and odd
/// ones, gates from saturated to NaN, cells that cross zero, and infinities.
#[test]
fn ssru_equals_reference() {
    let mut r = Rng(53);
    for n in [1, 3, 8, 15, 16, 17, 100, 256, 512, 1024] {
        for case in 0..4 {
            let mut f: Vec<f32> = (0..n).map(|_| r.f32_in(-12.0, 12.0)).collect();
            let xw: Vec<f32> = (0..n).map(|_| r.f32_in(-6.0, 6.0)).collect();
            let c: Vec<f32> = (0..n).map(|_| r.f32_in(-3.0, 3.0)).collect();
            if case == 3 {
                for (i, v) in f.iter_mut().enumerate() {
                    *v = [f32::NAN, f32::INFINITY, f32::NEG_INFINITY, 100.0, -100.0, -0.0][i % 6];
                }
            }
            let (mut want_c, mut want_h) = (c.clone(), vec![7.0; n]);
            reseam_kernels::ssru::ssru_row(&mut want_c, &xw, &f, &mut want_h);
            for k in Kernels::candidates() {
                let (mut got_c, mut got_h) = (c.clone(), vec![7.0; n]);
                k.ssru(&mut got_c, &xw, &f, &mut got_h);
                assert_eq!(fbits(&got_c), fbits(&want_c), "{} cell of {n}, case {case}", k.name());
                assert_eq!(fbits(&got_h), fbits(&want_h), "{} output of {n}, case {case}", k.name());
            }
        }
    }
}

/// The prefetch hint takes every row of its operand, strided or contiguous, up to the last
/// float, and refuses a row past the data (a hint that read past it would still be a bug).
#[test]
fn prefetch_rows_checks_its_rows() {
    let data = vec![1.5f32; 10 * 37 + 20];
    for kern in Kernels::candidates() {
        kern.prefetch_rows(&data, 37, 20, 11);
        kern.prefetch_rows(&data, 20, 20, data.len() / 20);
        kern.prefetch_rows(&data, 37, 0, 100);
        let past = std::panic::catch_unwind(|| kern.prefetch_rows(&data, 37, 21, 11));
        assert!(past.is_err(), "{}: a row past the data", kern.name());
    }
    assert!(data.iter().all(|&x| x == 1.5));
}
