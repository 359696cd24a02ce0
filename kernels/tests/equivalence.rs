//! Every kernel this CPU runs equals the scalar reference bit for bit: products in both
//! arithmetics with every epilogue, regions and thread splits, and activation quantization.
//!
//! `RESEAM_TEST_REQUIRE_ISA=avx512vnni,amx` makes the run fail when a listed instruction set is
//! not usable here, so a machine that should test AMX cannot silently test less.

use std::io::Write;

mod common;
use common::{Rng, fbits};

use proptest::prelude::*;
use reseam_kernels::pack::N_BLOCK;
use reseam_kernels::{Arithmetic, Epilogue, Isa, Kernels, Output, PackedB, QuantizedA, Scale, Split, scalar};

const ARITHMETICS: [Arithmetic; 2] = [Arithmetic::Exact, Arithmetic::Saturating];

/// What the output holds where a product must not write.
const UNTOUCHED_F32: f32 = -7.25;
const UNTOUCHED_U8: u8 = 0xAB;

/// How values are drawn: spread evenly, or piled at the extremes so that `maddubs` pairs
/// saturate often; either with activations below 255 (as quantization makes them, and as the
/// one-row AVX2 kernel's one-multiply form needs) or reaching it.
#[derive(Clone, Copy, Debug)]
enum Values {
    Uniform,
    Extremes,
    UniformBelow255,
    ExtremesBelow255,
}

#[derive(Clone, Copy, Debug)]
enum ScaleKind {
    Uniform,
    Columns,
    RowsColumns,
}

#[derive(Clone, Debug)]
struct Case {
    m: usize,
    k: usize,
    n: usize,
    /// Extra activation bytes per row beyond `k_padded`, and extra output elements per row.
    a_pad: usize,
    out_pad: usize,
    values: Values,
    zero_fix: bool,
    scale: ScaleKind,
    bias: bool,
    relu: bool,
    u8_out: bool,
    seed: u64,
}

/// Everything one product needs, owned.
struct Data {
    a: Vec<u8>,
    stride: usize,
    b: PackedB,
    zero_fix: Vec<i32>,
    col_scales: Vec<f32>,
    row_scales: Vec<f32>,
    bias: Vec<f32>,
    out_scale: f32,
}

impl Case {
    fn data(&self) -> Data {
        let mut rng = Rng(self.seed | 1);
        let bt: Vec<i8> = (0..self.k * self.n)
            .map(|_| match self.values {
                Values::Uniform | Values::UniformBelow255 => rng.next() as i8,
                Values::Extremes | Values::ExtremesBelow255 => [127, -128, -127, 126, 0, 1][rng.below(6) as usize],
            })
            .collect();
        let b = PackedB::from_transposed(&bt, self.k, self.n);
        let stride = b.k_padded() + self.a_pad;
        // Bytes past `k` (and the padding) are arbitrary: they meet zero weights.
        let a: Vec<u8> = (0..self.m * stride)
            .map(|_| match self.values {
                Values::Uniform => rng.next() as u8,
                Values::Extremes => [255, 254, 253, 0, 1, 127][rng.below(6) as usize],
                Values::UniformBelow255 => rng.below(255) as u8,
                Values::ExtremesBelow255 => [254, 253, 0, 1, 127, 128][rng.below(6) as usize],
            })
            .collect();
        let zero_fix = (0..self.n).map(|j| b.col_sums()[j].wrapping_mul(127) ^ (rng.below(3) as i32)).collect();
        let col_scales = (0..self.n).map(|_| rng.f32_in(-1e-3, 1e-3)).collect();
        let row_scales = (0..self.m).map(|_| rng.f32_in(0.0, 4.0)).collect();
        let bias = (0..self.n).map(|_| rng.f32_in(-20.0, 20.0)).collect();
        Data { a, stride, b, zero_fix, col_scales, row_scales, bias, out_scale: rng.f32_in(0.5, 60.0) }
    }
}

impl Data {
    fn qa(&self, m: usize) -> QuantizedA<'_> {
        QuantizedA { data: &self.a, rows: m, stride: self.stride }
    }

    fn epilogue(&self, c: &Case) -> Epilogue<'_> {
        Epilogue {
            zero_fix: c.zero_fix.then_some(&self.zero_fix[..]),
            scale: match c.scale {
                // Marian's own uniform multiplier is about 1/(qA·qB) ≈ 1e-4.
                ScaleKind::Uniform => Scale::Uniform(1.25e-4),
                ScaleKind::Columns => Scale::Columns(&self.col_scales),
                ScaleKind::RowsColumns => Scale::RowsColumns { rows: &self.row_scales, cols: &self.col_scales },
            },
            bias: c.bias.then_some(&self.bias[..]),
            relu: c.relu,
        }
    }
}

/// An output buffer, pre-filled with the untouched marker.
enum Buf {
    F32(Vec<f32>),
    U8(Vec<u8>),
}

impl Buf {
    fn new(c: &Case) -> (Buf, usize) {
        Buf::of_width(c, c.n)
    }

    /// Room for the case's rows of `width` elements (and its padding); returns the stride.
    fn of_width(c: &Case, width: usize) -> (Buf, usize) {
        let stride = width + c.out_pad;
        let len = c.m * stride;
        (if c.u8_out { Buf::U8(vec![UNTOUCHED_U8; len]) } else { Buf::F32(vec![UNTOUCHED_F32; len]) }, stride)
    }

    fn output(&mut self, stride: usize, scale: f32) -> Output<'_> {
        match self {
            Buf::F32(d) => Output::F32 { data: d, stride },
            Buf::U8(d) => Output::U8 { data: d, stride, scale },
        }
    }

    /// Element bits; NaN payloads are not part of the contract (an add may pick either NaN
    /// operand's), so every NaN reads the same.
    fn bits(&self) -> Vec<u32> {
        match self {
            Buf::F32(d) => d.iter().map(|x| if x.is_nan() { u32::MAX } else { x.to_bits() }).collect(),
            Buf::U8(d) => d.iter().map(|&x| x as u32).collect(),
        }
    }
}

fn reference(c: &Case, d: &Data, arith: Arithmetic) -> Vec<u32> {
    let (mut buf, stride) = Buf::new(c);
    let mut out = buf.output(stride, d.out_scale);
    let ep = d.epilogue(c);
    match arith {
        Arithmetic::Exact => scalar::gemm_exact(&d.qa(c.m), &d.b, &ep, &mut out),
        Arithmetic::Saturating => scalar::gemm_saturating(&d.qa(c.m), &d.b, &ep, &mut out),
    }
    buf.bits()
}

fn first_difference(want: &[u32], got: &[u32], stride: usize) -> Option<String> {
    let at = want.iter().zip(got).position(|(w, g)| w != g)?;
    Some(format!(
        "first difference at row {}, column {}: want {:#x}, got {:#x}",
        at / stride,
        at % stride,
        want[at],
        got[at]
    ))
}

/// Checks every table against the reference on one case: whole products, a region, and a
/// split run on threads.
fn check_case(c: &Case) -> Result<(), TestCaseError> {
    let d = c.data();
    for arith in ARITHMETICS {
        let want = reference(c, &d, arith);
        for k in Kernels::candidates() {
            let (mut buf, stride) = Buf::new(c);
            k.gemm(arith, &d.qa(c.m), &d.b, &d.epilogue(c), &mut buf.output(stride, d.out_scale)).unwrap();
            if let Some(diff) = first_difference(&want, &buf.bits(), stride) {
                return Err(TestCaseError::fail(format!("{} {} on {c:?}: {diff}", k.name(), arith.name())));
            }

            // A region: everything outside stays untouched, everything inside is the reference's.
            let blocks = c.n.div_ceil(N_BLOCK);
            let (c0, c1) = (c.seed as usize % blocks, blocks - (c.seed as usize >> 8) % blocks);
            let cols = (c0.min(c1) * N_BLOCK).min(c.n)..(c0.max(c1) * N_BLOCK).min(c.n);
            let rows = (c.seed as usize >> 16) % c.m..c.m - (c.seed as usize >> 24) % (c.m / 2 + 1);
            let rows = rows.start.min(rows.end)..rows.end;
            let (mut buf, stride) = Buf::new(c);
            let region = (rows.clone(), cols.clone());
            k.gemm_region(
                arith,
                &d.qa(c.m),
                &d.b,
                &d.epilogue(c),
                &mut buf.output(stride, d.out_scale),
                rows,
                cols.clone(),
            )
            .unwrap();
            let got = buf.bits();
            let marker = if c.u8_out { UNTOUCHED_U8 as u32 } else { UNTOUCHED_F32.to_bits() };
            for (at, (&w, &g)) in want.iter().zip(&got).enumerate() {
                let (i, j) = (at / stride, at % stride);
                let inside = region.0.contains(&i) && region.1.contains(&j);
                let expect = if inside { w } else { marker };
                prop_assert_eq!(
                    g,
                    expect,
                    "{} {} region {:?} at ({}, {}) on {:?}",
                    k.name(),
                    arith.name(),
                    region,
                    i,
                    j,
                    c
                );
            }

            // The same columns into an output that holds only them: each element is the
            // reference's, moved `cols.start` to the left, and the padding stays untouched.
            let (mut small, width) = Buf::of_width(c, cols.len());
            k.gemm_columns(
                arith,
                &d.qa(c.m),
                &d.b,
                &d.epilogue(c),
                &mut small.output(width, d.out_scale),
                cols.clone(),
            )
            .unwrap();
            for (at, &g) in small.bits().iter().enumerate() {
                let (i, j) = (at / width, at % width);
                let expect = if j < cols.len() { want[i * stride + cols.start + j] } else { marker };
                prop_assert_eq!(
                    g,
                    expect,
                    "{} {} columns {:?} at ({}, {}) on {:?}",
                    k.name(),
                    arith.name(),
                    cols,
                    i,
                    j,
                    c
                );
            }

            // A split run on threads covers the product exactly once.
            let how = match c.seed % 3 {
                0 => Split::Rows(1 + (c.seed as usize >> 4) % 4),
                1 => Split::Columns(1 + (c.seed as usize >> 4) % 4),
                _ => Split::Grid { rows: 2, cols: 3 },
            };
            let (mut buf, stride) = Buf::new(c);
            let ep = d.epilogue(c);
            let qa = d.qa(c.m);
            let mut out = buf.output(stride, d.out_scale);
            let tasks = k.split(arith, &qa, &d.b, &ep, &mut out, how).unwrap();
            std::thread::scope(|s| {
                for t in tasks {
                    s.spawn(move || t.run());
                }
            });
            if let Some(diff) = first_difference(&want, &buf.bits(), stride) {
                return Err(TestCaseError::fail(format!(
                    "{} {} split {how:?} on {c:?}: {diff}",
                    k.name(),
                    arith.name()
                )));
            }
        }
    }
    Ok(())
}

fn case(
    m: impl Strategy<Value = usize>,
    k: impl Strategy<Value = usize>,
    n: impl Strategy<Value = usize>,
) -> impl Strategy<Value = Case> {
    let scale = prop_oneof![Just(ScaleKind::Uniform), Just(ScaleKind::Columns), Just(ScaleKind::RowsColumns)];
    let values = prop_oneof![
        Just(Values::Uniform),
        Just(Values::Extremes),
        Just(Values::UniformBelow255),
        Just(Values::ExtremesBelow255)
    ];
    (m, k, n, 0..3usize, 0..3usize, values, any::<[bool; 4]>(), scale, any::<bool>(), any::<u64>()).prop_map(
        |(m, k, n, a_pad, out_pad, values, [zero_fix, bias, relu, u8_out], scale, _, seed)| Case {
            m,
            k,
            n,
            a_pad: a_pad * 7,
            out_pad: out_pad * 5,
            values,
            zero_fix,
            scale,
            bias,
            relu,
            u8_out,
            seed,
        },
    )
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 96, ..ProptestConfig::default() })]

    /// Ragged sizes: K and N off every vector width, tails, M = 1 and M past AMX's 32-row step.
    #[test]
    fn kernels_equal_reference_on_awkward_shapes(c in case(1..=40usize, 1..=200usize, 1..=70usize)) {
        check_case(&c)?;
    }

    /// The models' inner dimensions (256/384/512, FFN 1536/2048) with few rows.
    #[test]
    fn kernels_equal_reference_on_model_inner_dims(
        c in case(prop_oneof![Just(1usize), Just(8), 2..=20usize], prop_oneof![Just(256usize), Just(384), Just(512), Just(1536), Just(2048)], 1..=48usize)
    ) {
        check_case(&c)?;
    }

    /// One row (decode) over up to 25 column blocks: every way of dealing them to streams,
    /// with blocks left over, whole, in regions and split.
    #[test]
    fn kernels_equal_reference_on_one_row(c in case(Just(1usize), 1..=300usize, 1..=400usize)) {
        check_case(&c)?;
    }
}

/// Whole model shapes, once each, with every epilogue switched on in turn.
#[test]
fn kernels_equal_reference_on_model_shapes() {
    let shapes = [(256, 768), (384, 1536), (512, 2048), (2048, 512), (1536, 384), (512, 1200), (256, 32000)];
    for (t, (k, n)) in shapes.into_iter().enumerate() {
        let m = if n > 4000 { 1 } else { [1, 8, 33][t % 3] };
        let c = Case {
            m,
            k,
            n,
            a_pad: 0,
            out_pad: 0,
            values: [Values::Uniform, Values::Extremes, Values::UniformBelow255, Values::ExtremesBelow255][t % 4],
            zero_fix: t % 2 == 1,
            scale: [ScaleKind::Uniform, ScaleKind::Columns, ScaleKind::RowsColumns][t % 3],
            bias: t % 3 != 1,
            relu: t % 2 == 0,
            u8_out: t % 3 == 2,
            seed: 0x9E37_79B9_7F4A_7C15 ^ t as u64,
        };
        check_case(&c).unwrap_or_else(|e| panic!("{k}×{n}: {e}"));
    }
}

/// An output layer with many rows: more than four megabytes of float output, which the AVX-512
/// VNNI kernel computes in row panels (`PANEL_ABOVE`), with a ragged last panel in either
/// arithmetic's tile height.
#[test]
fn kernels_equal_reference_on_output_layer_rows() {
    for (t, m) in [52, 53].into_iter().enumerate() {
        let c = Case {
            m,
            k: 64,
            n: 20_500,
            a_pad: 0,
            out_pad: 3,
            values: [Values::Extremes, Values::UniformBelow255][t],
            zero_fix: t == 0,
            scale: [ScaleKind::Columns, ScaleKind::RowsColumns][t],
            bias: true,
            relu: t == 1,
            u8_out: false,
            seed: 0xD1B5_4A32_D192_ED03 ^ t as u64,
        };
        check_case(&c).unwrap_or_else(|e| panic!("{m}×64×20500: {e}"));
    }
}

/// Floats that exercise rounding and `cvtps2dq`'s saturation: ties, NaN, infinities, values past
/// int32, negative zero, denormals.
fn awkward_f32() -> impl Strategy<Value = f32> {
    prop_oneof![
        -300.0f32..300.0,
        (-600i32..600).prop_map(|h| h as f32 * 0.5),
        Just(f32::NAN),
        Just(f32::INFINITY),
        Just(f32::NEG_INFINITY),
        Just(3.0e9f32),
        Just(-3.0e9f32),
        Just(2_147_483_520.0f32),
        Just(-2_147_483_648.0f32),
        Just(-0.0f32),
        Just(1e-40f32),
        any::<f32>(),
    ]
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 256, ..ProptestConfig::default() })]

    #[test]
    fn quantize_equals_reference(src in prop::collection::vec(awkward_f32(), 0..200), scale in prop_oneof![Just(1.0f32), 0.01f32..200.0, Just(f32::NAN)]) {
        let mut want = vec![0u8; src.len()];
        scalar::quantize(&src, scale, &mut want);
        for k in Kernels::candidates() {
            let mut got = vec![0u8; src.len() + 3];
            k.quantize(&src, scale, &mut got);
            prop_assert_eq!(&got[..src.len()], &want[..], "{}", k.name());
            prop_assert_eq!(&got[src.len()..], &[0u8; 3][..], "{} wrote past the source length", k.name());
        }
    }
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 256, ..ProptestConfig::default() })]

    #[test]
    fn fused_multiply_adds_equal_reference(
        v in prop::collection::vec((awkward_f32(), awkward_f32(), awkward_f32()), 0..70),
        s in awkward_f32(),
        spare in 0usize..3,
    ) {
        let acc: Vec<f32> = v.iter().map(|t| t.0 * 1e-3).collect();
        // Operands may be longer than the accumulator; only its length is touched.
        let a: Vec<f32> = v.iter().map(|t| t.1).chain(std::iter::repeat_n(1.0, spare)).collect();
        let b: Vec<f32> = v.iter().map(|t| t.2).chain(std::iter::repeat_n(1.0, spare)).collect();
        let (mut want_vv, mut want_sv) = (acc.clone(), acc.clone());
        scalar::fma_vv(&mut want_vv, &a, &b);
        scalar::fma_sv(&mut want_sv, s, &b);
        for k in Kernels::candidates() {
            let (mut vv, mut sv) = (acc.clone(), acc.clone());
            k.fma_vv(&mut vv, &a, &b);
            k.fma_sv(&mut sv, s, &b);
            prop_assert_eq!(fbits(&vv), fbits(&want_vv), "{} fma_vv", k.name());
            prop_assert_eq!(fbits(&sv), fbits(&want_sv), "{} fma_sv", k.name());
        }
    }
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 128, ..ProptestConfig::default() })]

    #[test]
    fn attention_products_equal_reference(
        hd in prop_oneof![Just(64usize), Just(128), Just(80), 1usize..150],
        blocks in 0usize..20,
        positions in 0usize..70,
        heads in prop_oneof![1usize..9, Just(16), 9usize..21],
        stride_extra in 0usize..9,
        cut in 0usize..70,
        seed in any::<u64>(),
    ) {
        let mut r = Rng(seed | 1);
        let mut v = |n: usize| -> Vec<f32> { (0..n).map(|_| r.f32_in(-4.0, 4.0)).collect() };
        let kb = scalar::KEY_BLOCK;
        let (q, keys) = (v(heads * hd), v(blocks * kb * hd));
        let w_stride = positions + stride_extra;
        let (w, rows) = (v((heads - 1) * w_stride + positions), v(positions * hd));
        let mut want_s = vec![f32::NAN; heads * blocks * kb];
        let mut want_w = vec![f32::NAN; heads * hd];
        scalar::block_scores(&q, hd, &keys, blocks, &mut want_s);
        scalar::weighted_rows(&w, positions, w_stride, &rows, &mut want_w, hd, false);
        // The same sums in two parts: positions 0..cut, then continued over cut..positions.
        let cut = cut.min(positions);
        for k in Kernels::candidates() {
            let mut s = vec![f32::NAN; heads * blocks * kb];
            let mut o = vec![f32::NAN; heads * hd];
            k.block_scores(&q, hd, &keys, blocks, &mut s);
            k.weighted_rows(&w, positions, w_stride, &rows, &mut o, hd, false);
            prop_assert_eq!(fbits(&s), fbits(&want_s), "{} block_scores", k.name());
            prop_assert_eq!(fbits(&o), fbits(&want_w), "{} weighted_rows", k.name());
            let mut parts = vec![f32::NAN; heads * hd];
            k.weighted_rows(&w, cut, w_stride, &rows, &mut parts, hd, false);
            k.weighted_rows(&w[cut..], positions - cut, w_stride, &rows[cut * hd..], &mut parts, hd, true);
            prop_assert_eq!(fbits(&parts), fbits(&want_w), "{} weighted_rows in two parts at {}", k.name(), cut);
        }
    }
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 128, ..ProptestConfig::default() })]

    /// Softmax and SiLU are one plain body compiled per ISA: the vector forms give the scalar's
    /// bits on any length, wide ranges, and values past exp's clamp.
    #[test]
    fn activations_equal_reference(
        len in 0usize..300,
        range in prop_oneof![Just(1.0f32), Just(30.0), Just(200.0)],
        scaling in 0.01f32..2.0,
        seed in any::<u64>(),
    ) {
        let mut r = Rng(seed | 1);
        let mut v = |n: usize| -> Vec<f32> { (0..n).map(|_| r.f32_in(-range, range)).collect() };
        let (x, g, u) = (v(len), v(len), v(len));
        let mut want_s = x.clone();
        scalar::softmax_scaled(&mut want_s, scaling);
        let mut want_a = vec![f32::NAN; len];
        scalar::silu_mul(&g, &u, &mut want_a);
        for k in Kernels::candidates() {
            let mut s = x.clone();
            k.softmax_scaled(&mut s, scaling);
            let mut a = vec![f32::NAN; len];
            k.silu_mul(&g, &u, &mut a);
            prop_assert_eq!(fbits(&s), fbits(&want_s), "{} softmax_scaled", k.name());
            prop_assert_eq!(fbits(&a), fbits(&want_a), "{} silu_mul", k.name());
            prop_assert_eq!(k.absmax(&x).to_bits(), scalar::absmax(&x).to_bits(), "{} absmax", k.name());
        }
    }
}

/// The absolute maximum is the sequential fold's value on every table, NaN ignored, infinities
/// kept, in any lane of the 16.
#[test]
fn absmax_is_the_plain_fold() {
    let fold = |x: &[f32]| x.iter().fold(0f32, |m, v| m.max(v.abs()));
    let mut cases: Vec<Vec<f32>> = vec![vec![], vec![-0.0], vec![f32::NAN; 20], vec![1.0, f32::NAN, -3.0]];
    for at in [0, 5, 15, 16, 31, 40] {
        let mut x: Vec<f32> = (0..41).map(|i| (i as f32 - 20.0) / 8.0).collect();
        x[at] = -1e30;
        cases.push(x.clone());
        x[at] = f32::NEG_INFINITY;
        cases.push(x.clone());
        x[at] = f32::NAN;
        cases.push(x);
    }
    for x in &cases {
        for k in Kernels::candidates() {
            assert_eq!(k.absmax(x).to_bits(), fold(x).to_bits(), "{} on {x:?}", k.name());
        }
    }
}

/// Softmax and SiLU at the edges, on every length up to past four zmm registers (each tail and
/// block path): masked (−∞) scores, rows wholly masked, NaN, values past exp's clamp, scores that
/// all tie; and neither writes outside its row.
#[test]
fn activations_at_the_edges_equal_reference() {
    let mut r = Rng(7);
    for len in (0..=80).chain([127, 128, 129, 255, 300, 513]) {
        let base: Vec<f32> = (0..len).map(|_| r.f32_in(-30.0, 30.0)).collect();
        let mut rows = vec![base.clone(), vec![f32::NEG_INFINITY; len], vec![2.5; len]];
        for special in [f32::NEG_INFINITY, f32::NAN, 1e30, -1e30, 200.0, -200.0, -0.0] {
            let mut x = base.clone();
            for (i, v) in x.iter_mut().enumerate() {
                if (i * 7 + len) % 5 == 0 {
                    *v = special;
                }
            }
            rows.push(x);
        }
        for x in &rows {
            let mut want = x.clone();
            scalar::softmax_scaled(&mut want, 0.7);
            let mut want_a = vec![0f32; len];
            scalar::silu_mul(x, &base, &mut want_a);
            for k in Kernels::candidates() {
                let mut s = [vec![9.0; 3], x.clone(), vec![9.0; 3]].concat();
                k.softmax_scaled(&mut s[3..3 + len], 0.7);
                assert_eq!(fbits(&s[3..3 + len]), fbits(&want), "{} softmax of {x:?}", k.name());
                assert_eq!((&s[..3], &s[3 + len..]), (&[9.0; 3][..], &[9.0; 3][..]), "{} wrote outside", k.name());
                let mut a = vec![9.0; len + 3];
                let (g, u) = ([x.as_slice(), &[1.0; 3]].concat(), [base.as_slice(), &[1.0; 3]].concat());
                k.silu_mul(&g, &u, &mut a[..len]);
                assert_eq!(fbits(&a[..len]), fbits(&want_a), "{} silu_mul of {x:?}", k.name());
                assert_eq!(&a[len..], &[9.0; 3][..], "{} silu_mul wrote past the output", k.name());
            }
        }
    }
}

/// The attention sums are fused multiply-adds in a fixed order: a plain loop with one rounding
/// per step, written here independently of the reference, gives the same bits.
#[test]
fn attention_reference_is_fused_and_in_order() {
    let mut r = Rng(99);
    let (hd, n, heads) = (80, 37, 3);
    let mut v = |n: usize| -> Vec<f32> { (0..n).map(|_| r.f32_in(-4.0, 4.0)).collect() };
    let kb = scalar::KEY_BLOCK;
    let (q, keys, w, rows) = (v(heads * hd), v(3 * kb * hd), v(heads * n), v(n * hd));
    let mut s = vec![0f32; heads * 3 * kb];
    scalar::block_scores(&q, hd, &keys, 3, &mut s);
    for (i, &got) in s.iter().enumerate() {
        let (h, p) = (i / (3 * kb), i % (3 * kb));
        let mut acc = 0f32;
        for d in 0..hd {
            let k = keys[((p / kb) * hd + d) * kb + p % kb];
            // The product is exact in f64; the sum is rounded there and again to f32.
            acc = ((q[h * hd + d] as f64) * (k as f64) + acc as f64) as f32;
        }
        assert_eq!(got.to_bits(), acc.to_bits(), "head {h} score {p}");
    }
    let mut o = vec![0f32; heads * hd];
    scalar::weighted_rows(&w, n, n, &rows, &mut o, hd, false);
    for h in 0..heads {
        for e in 0..hd {
            let mut acc = 0f32;
            for j in 0..n {
                acc = ((w[h * n + j] as f64) * (rows[j * hd + e] as f64) + acc as f64) as f32;
            }
            assert_eq!(o[h * hd + e].to_bits(), acc.to_bits(), "head {h} dim {e}");
        }
    }
}

/// Names which instruction sets these tests ran and which they skipped (and why), and fails
/// when `RESEAM_TEST_REQUIRE_ISA` lists one that is not usable.
#[test]
fn report_and_require_isas() {
    let mut note = String::from("kernel equivalence tests:\n");
    for k in Kernels::candidates() {
        note += &format!(
            "  ran     {:<22} exact: {}; saturating: {}\n",
            k.name(),
            k.describe_arithmetic(Arithmetic::Exact),
            k.describe_arithmetic(Arithmetic::Saturating)
        );
    }
    for (isa, usable) in Kernels::availability() {
        if let Err(why) = usable {
            note += &format!("  skipped {:<22} {why}\n", isa.name());
        }
    }
    // Written to stderr directly so that it shows without --nocapture.
    let _ = std::io::stderr().write_all(note.as_bytes());

    let required = std::env::var("RESEAM_TEST_REQUIRE_ISA").unwrap_or_default();
    let mut missing = Vec::new();
    for name in required.split(',').map(str::trim).filter(|s| !s.is_empty()) {
        let isa = Isa::parse(name).unwrap_or_else(|| panic!("RESEAM_TEST_REQUIRE_ISA lists unknown ISA {name:?}"));
        if let Err(why) = isa.usable() {
            missing.push(format!("{name}: {why}"));
        }
    }
    assert!(missing.is_empty(), "RESEAM_TEST_REQUIRE_ISA={required} but not usable here: {}", missing.join("; "));
}
