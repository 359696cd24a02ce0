use super::*;

/// `((i·37 + seed·11) mod 101 − 50) / 7` (float division): reproducible here and in numpy.
fn sample(rows: usize, cols: usize, seed: usize) -> Vec<f32> {
    (0..rows * cols).map(|i| ((i * 37 + seed * 11) % 101) as f32 - 50.0).map(|v| v / 7.0).collect()
}

fn bits(v: &[f32]) -> Vec<u32> {
    v.iter().map(|x| x.to_bits()).collect()
}

/// Bit patterns produced by MKL's `cblas_sgemm_batch` inside the bergamot 0.4.5 wheel on the
/// same inputs (an Intel AVX-512 CPU); each shape exercises a different summation order. The
/// product is batched eight times, as Marian batches its heads: a batch of one can take yet
/// another kernel (two queries at head size 48).
/// (queries, keys, head size, (seed of Q, seed of K), MKL's bits).
type QkCase = (usize, usize, usize, (usize, usize), &'static [u32]);

#[test]
fn equals_bergamot_mkl_bit_for_bit() {
    let qk_cases: [QkCase; 9] = [
        // Two queries at head sizes 48 and 64 (a source of one piece, as one decoder query of a
        // two-position source), and three queries over two keys at 64: their own kernels.
        (2, 3, 48, (5, 6), &[0x42529466, 0xc20e1c53, 0xc1aad93b, 0xc26a6a7e, 0x42243704, 0xc1db102d]),
        (2, 3, 64, (1, 2), &[0x4267758d, 0xc286b82a, 0x430b87d6, 0xc2394687, 0x42610fac, 0xc2863978]),
        (3, 2, 64, (1, 2), &[0x4267758e, 0xc286b82a, 0xc2394688, 0x42610fac, 0xbfeb1a26, 0xc23d7054]),
        (1, 6, 32, (1, 2), &[0x42393bac, 0x41140075, 0xc23df002, 0xc16950fc, 0x42c381ff, 0xc1e49ca7]),
        (2, 2, 32, (1, 2), &[0x42393bae, 0x41140074, 0xc2338fd4, 0x420e1980]),
        (1, 6, 64, (1, 2), &[0x4267758d, 0xc286b82a, 0x430b87d6, 0xc2863978, 0x426f9f59, 0xc2498000]),
        (1, 7, 48, (1, 2), &[0x42527940, 0xc20463d4, 0xc1c4042c, 0x41fff161, 0xc2665cdd, 0x42d40464, 0xc24ed22d]),
        (
            3,
            3,
            48,
            (1, 2),
            &[
                0x42527940, 0xc20463d4, 0xc1c4042c, 0xc26c9884, 0x422bdca2, 0xc1f860e1, 0x427ce72a, 0xc2704ba9,
                0x4274b9cf,
            ],
        ),
        (
            5,
            5,
            32,
            (1, 2),
            &[
                0x42393bac, 0x41140076, 0xc23df002, 0xc16950fd, 0x42c38200, 0xc2338fd4, 0x420e197f, 0x41b54772,
                0xc23f1b3f, 0xc1e49caa, 0xc1f071f6, 0xc22b1afc, 0x420cee42, 0x4196f217, 0xc23375f9, 0x4270d202,
                0xc20dcbe9, 0xc2217e99, 0x42315a9c, 0x41923dc2, 0xc00d4e51, 0x42853b5e, 0xc1fb8e8b, 0xc21f7967,
                0x420c994b,
            ],
        ),
    ];
    for (m, n, dk, (sq, sk), want) in qk_cases {
        let alpha = 1.0f32 / (dk as f32).sqrt();
        let (q, k) = (sample(m, dk, sq), sample(n, dk, sk));
        let got: Vec<f32> = (0..m * n)
            .map(|e| qk(m, n, e / n, e % n, &q[e / n * dk..][..dk], &k[e % n * dk..][..dk], &fma_lanes) * alpha)
            .collect();
        assert_eq!(bits(&got), want, "q·kᵀ {m}×{n}, head size {dk}");
    }
    let wv_cases: [(usize, usize, &[u32]); 2] = [
        (1, 21, &[0x3f9883cb, 0x40428304, 0xc13208d8, 0xbe778f7b]),
        (
            3,
            3,
            &[
                0xc0667afb, 0x3f7e6479, 0x3fa76277, 0xc087d634, 0xc0677c2f, 0x3f9147f0, 0x3fcd9047, 0xc0728972,
                0xc0687d64, 0x3fa35da4, 0x3ff3be18, 0xc055667b,
            ],
        ),
    ];
    for (m, n, want) in wv_cases {
        let w: Vec<f32> = sample(m, n, 3).iter().map(|x| x / 13.0).collect();
        let v = sample(n, 32, 4);
        let mut got = Vec::new();
        for i in 0..m {
            let wi = &w[i * n..(i + 1) * n];
            for t in 0..4 {
                got.push(if m == 1 {
                    wv_one_row(wi, |j| v[j * 32 + t])
                } else {
                    wi.iter().enumerate().fold(0f32, |acc, (j, &x)| fma(x, v[j * 32 + t], acc))
                });
            }
        }
        assert_eq!(bits(&got), want, "weights·v {m}×{n}");
    }
}

/// Bit patterns of the same products by the same MKL told it runs on an AMD Zen CPU
/// (`tests/fixtures/base-memory-enes-xeon/tools/mkl_zen_shim.c`, batched eight times): one
/// query row over blocks of four keys and over a tail of three (tail keys 0, 1, 2 take other
/// kernels), several queries over blocks and tails, 12 queries (plain chains); values for
/// one, three (unfused) and twelve rows. (queries, keys, head size, seeds, row, MKL's bits of
/// that row.)
type ZenCase = (usize, usize, usize, (usize, usize), usize, &'static [u32]);

#[test]
fn zen_orders_equal_bergamot_mkl_on_amd_bit_for_bit() {
    let qk_cases: [ZenCase; 8] = [
        (1, 7, 32, (1, 2), 0, &[0x42393bae, 0x41140073, 0xc23df002, 0xc16950fd, 0x42c38200, 0xc1e49ca9, 0xc23375f8]),
        (1, 7, 48, (1, 2), 0, &[0x42527940, 0xc20463d4, 0xc1c4042c, 0x41fff162, 0xc2665cdd, 0x42d40464, 0xc24ed22d]),
        (1, 7, 64, (1, 2), 0, &[0x4267758c, 0xc286b82a, 0x430b87d6, 0xc2863978, 0x426f9f58, 0xc2497fff, 0xc10e5e09]),
        (3, 3, 48, (1, 2), 0, &[0x42527940, 0xc20463d5, 0xc1c4042c]),
        (3, 3, 48, (1, 2), 2, &[0x427ce72a, 0xc2704ba9, 0x4274b9cf]),
        (6, 6, 64, (1, 2), 1, &[0xc2394688, 0x42610fae, 0xc2863978, 0x430836dc, 0xc286124a, 0x4281d783]),
        (
            12,
            12,
            48,
            (1, 2),
            0,
            &[
                0x4252793e, 0xc20463d6, 0xc1c4042c, 0x41fff15f, 0xc2665cdf, 0x42d40462, 0xc24ed22e, 0xbe893e81,
                0xc0ab7615, 0xc2389951, 0x429cf36d, 0xc269a66f,
            ],
        ),
        (
            12,
            12,
            48,
            (1, 2),
            11,
            &[
                0xc20e4389, 0xc1a8de78, 0x41dc802d, 0xc260a2eb, 0x42d15930, 0xc250f120, 0x4126b377, 0xbf80f301,
                0xc22d7fe9, 0x4298355a, 0xc26eba7b, 0x42243703,
            ],
        ),
    ];
    for (m, n, dk, (sq, sk), i, want) in qk_cases {
        let alpha = 1.0f32 / (dk as f32).sqrt();
        let (q, k) = (sample(m, dk, sq), sample(n, dk, sk));
        let got: Vec<f32> = (0..n).map(|j| qk_zen(m, n, j, &q[i * dk..][..dk], &k[j * dk..][..dk], alpha)).collect();
        assert_eq!(bits(&got), want, "Zen q·kᵀ {m}×{n}, head size {dk}, row {i}");
    }
    let wv_cases: [(usize, usize, usize, &[u32]); 4] = [
        (1, 21, 0, &[0x3f9883d0, 0x40428304, 0xc13208d8, 0xbe778f78]),
        (3, 3, 0, &[0xc0667afa, 0x3f7e6478, 0x3fa76277, 0xc087d634]),
        (3, 3, 2, &[0xc0687d64, 0x3fa35da4, 0x3ff3be18, 0xc055667c]),
        (12, 12, 5, &[0x3fc8235a, 0xbf8f78f9, 0xc0a25c70, 0xbe9cbc1d]),
    ];
    for (m, n, i, want) in wv_cases {
        let w: Vec<f32> = sample(m, n, 3).iter().map(|x| x / 13.0).collect();
        let v = sample(n, 32, 4);
        let wi = &w[i * n..(i + 1) * n];
        let got: Vec<f32> = (0..4)
            .map(|t| {
                if zen_fused_values(m) {
                    wi.iter().enumerate().fold(0f32, |acc, (j, &x)| fma(x, v[j * 32 + t], acc))
                } else {
                    wv_zen_unfused(wi, |j| v[j * 32 + t])
                }
            })
            .collect();
        assert_eq!(bits(&got), want, "Zen weights·v {m}×{n}, row {i}");
    }
}

/// Every shape Firefox's models give MKL (head sizes 32, 48, 64; 1–130 keys; one query row
/// and as many as keys), random inputs, against MKL's own products (both order sets):
/// `tests/fixtures/base-memory-enes-xeon/tools/mkl_cases.py OUT intel|zen` makes the file
/// (47 MB, so not in the repository; with `LD_PRELOAD` of the Zen shim for `zen`).
#[test]
#[ignore = "needs RESEAM_MKL_CASES, a file made by tests/fixtures/base-memory-enes-xeon/tools/mkl_cases.py"]
fn orders_equal_mkl_on_every_marian_shape() {
    let path = std::env::var("RESEAM_MKL_CASES")
        .expect("RESEAM_MKL_CASES must name a file made by tests/fixtures/base-memory-enes-xeon/tools/mkl_cases.py");
    let bytes = std::fs::read(&path).unwrap_or_else(|e| panic!("{path}: {e}"));
    let mut at = 0;
    let mut word = || {
        let w = u32::from_le_bytes(bytes[at..at + 4].try_into().expect("4 bytes"));
        at += 4;
        w
    };
    assert_eq!(word().to_le_bytes(), *b"RSMK", "{path}: not a file of mkl_cases.py");
    assert_eq!(word(), 1, "{path}: version");
    let mkl = if word() == 0 { Mkl::Intel } else { Mkl::Zen };
    let count = word();
    let (mut bad, mut elements) = (Vec::new(), 0);
    for _ in 0..count {
        let (kind, m, n, k) = (word(), word() as usize, word() as usize, word() as usize);
        let alpha = f32::from_bits(word());
        let (inner, cols) = if kind == 0 { (k, n) } else { (n, k) };
        let mut floats = |len: usize| (0..len).map(|_| f32::from_bits(word())).collect::<Vec<f32>>();
        let (a, b, c) = (floats(m * inner), floats(n * k), floats(m * cols));
        let mut wrong = 0;
        for i in 0..m {
            for j in 0..cols {
                let got = if kind == 0 {
                    let (q, kj) = (&a[i * k..][..k], &b[j * k..][..k]);
                    match mkl {
                        Mkl::Intel => qk(m, n, i, j, q, kj, &fma_lanes) * alpha,
                        Mkl::Zen => qk_zen(m, n, j, q, kj, alpha),
                    }
                } else {
                    let (w, v) = (&a[i * n..][..n], |r: usize| b[r * k + j]);
                    match mkl {
                        Mkl::Intel if m == 1 => wv_one_row(w, v),
                        Mkl::Zen if !zen_fused_values(m) => wv_zen_unfused(w, v),
                        _ => w.iter().enumerate().fold(0f32, |acc, (r, &x)| fma(x, v(r), acc)),
                    }
                };
                wrong += usize::from(got.to_bits() != c[i * cols + j].to_bits());
            }
        }
        elements += m * cols;
        if wrong > 0 {
            bad.push(format!(
                "{} {m}×{n}, head size {k}: {wrong} of {} differ",
                ["q·kᵀ", "weights·v"][kind as usize],
                m * cols
            ));
        }
    }
    eprintln!("{mkl:?} orders: {count} products, {elements} elements checked against {path}");
    assert!(bad.is_empty(), "{mkl:?} orders differ from MKL:\n{}", bad.join("\n"));
}

#[test]
fn mkl_names_parse() {
    assert_eq!(Mkl::parse(" Zen "), Ok(Some(Mkl::Zen)));
    assert_eq!(Mkl::parse("intel"), Ok(Some(Mkl::Intel)));
    assert_eq!(Mkl::parse("auto"), Ok(None));
    assert_eq!(Mkl::parse(""), Ok(None));
    assert!(Mkl::parse("arm").unwrap_err().contains("RESEAM_MT_MKL=\"arm\""));
    assert_eq!(Mkl::Zen.forced(Mkl::current), Mkl::Zen);
    assert_eq!(Mkl::Intel.forced(|| Mkl::Zen.forced(Mkl::current)), Mkl::Zen);
}

/// Every kernel table this CPU runs gives the specification's bits, in both order sets, on
/// the shapes that take each path (one query row with and without a tail of keys, 2–3 keys,
/// several rows over blocks and tails, plain chains) and head sizes with partial chunks; one
/// head, and several heads in one call (their softmaxes side by side: 9 is a group of 8 and one
/// more), each head equal to the specification run on it alone.
#[test]
fn vector_forms_equal_the_specification_bit_for_bit() {
    let mut seed = 0x2545_F491_4F6C_DD1Du64;
    let mut rnd = move || {
        seed ^= seed << 13;
        seed ^= seed >> 7;
        seed ^= seed << 17;
        (seed >> 40) as f32 / (1u64 << 24) as f32 * 6.0 - 3.0
    };
    let mut ran = Vec::new();
    for kern in Kernels::candidates() {
        ran.push(kern.name());
        for (mkl, dk) in [Mkl::Intel, Mkl::Zen].into_iter().flat_map(|o| [32, 48, 64, 20, 1].map(|dk| (o, dk))) {
            for (heads, m) in [1, 9].into_iter().flat_map(|h| [1, 2, 3, 4, 7, 12, 13].map(|m| (h, m))) {
                for n in [1, 2, 3, 4, 5, 8, 9, 11, 12, 13, 16, 17, 31, 40, 129] {
                    let hd = heads * dk;
                    let stride = 3 * hd + 5;
                    let data: Vec<f32> = (0..n.max(m) * stride).map(|_| rnd()).collect();
                    let view = |col| View { data: &data, stride, col };
                    let (qv, kv, vv) = (view(1), view(hd + 2), view(2 * hd + 3));
                    let ld = hd + 4;
                    let (mut want, mut got) = (vec![0f32; m * ld], vec![0f32; m * ld]);
                    let mut scratch = Vec::new();
                    let a = Heads { heads, dk, q: qv, m, k: kv, keys_t: None, v: vv, n, scale: 0.17 };
                    attend_reference(mkl, &a, &mut scratch, Rows { data: &mut want, stride: ld, col: 2 });
                    // A used scratch: nothing may read a value it did not write first.
                    scratch.clear();
                    scratch.resize(heads * (m * n + dk * n.next_multiple_of(8)), f32::NAN);
                    attend(&kern, mkl, &a, &mut scratch, Rows { data: &mut got, stride: ld, col: 2 });
                    let what = format!("{} {mkl:?}: heads={heads} m={m} n={n} dk={dk}", kern.name());
                    assert_eq!(bits(&got), bits(&want), "{what}");
                    // The same over transposed keys (the decoder's cross-attention).
                    let kt: Vec<f32> =
                        (0..hd).flat_map(|t| (0..n).map(move |j| (t, j))).map(|(t, j)| kv.at(j, t)).collect();
                    let ktv = View { data: &kt, stride: n, col: 0 };
                    got.fill(0.0);
                    scratch.fill(f32::NAN);
                    let a = Heads { keys_t: Some(ktv), ..a };
                    attend(&kern, mkl, &a, &mut scratch, Rows { data: &mut got, stride: ld, col: 2 });
                    assert_eq!(bits(&got), bits(&want), "{what}, transposed keys");
                }
            }
        }
    }
    eprintln!("attention vector forms checked on: {}", ran.join(", "));
}

#[test]
fn uniform_keys_average_values() {
    let (n, dk) = (5, 4);
    let q = vec![0.0; dk];
    let k = vec![1.0; n * dk];
    let v: Vec<f32> = (0..n * dk).map(|i| (i / dk) as f32).collect();
    let mut out = vec![0.0; dk];
    let mut scratch = Vec::new();
    let (qv, kv, vv) = (
        View { data: &q, stride: dk, col: 0 },
        View { data: &k, stride: dk, col: 0 },
        View { data: &v, stride: dk, col: 0 },
    );
    for mkl in [Mkl::Intel, Mkl::Zen] {
        let a = Heads { heads: 1, dk, q: qv, m: 1, k: kv, keys_t: None, v: vv, n, scale: 0.5 };
        attend(&Kernels::reference(), mkl, &a, &mut scratch, Rows { data: &mut out, stride: dk, col: 0 });
        for &o in &out {
            assert!((o - 2.0).abs() < 1e-6, "{mkl:?}: {o}");
        }
    }
}
