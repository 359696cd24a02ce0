//! `reseam bench-gemm`: the int8 products at the models' shapes, per instruction set, against the
//! measured peak of that instruction set's product step.
//!
//! The peak comes from a register-only loop of the step each kernel is built on (for example
//! `vpdpbusd zmm`, or `vpmaddubsw` + `vpmaddwd` + `vpaddd` for the saturating arithmetic, which
//! cannot be computed with fewer instructions), so the fraction says how close the kernel comes
//! to what its own instructions allow on this CPU. Cycles are counted with [`clock::cycles_clock`]
//! (TSC cycles on x86-64).

use std::time::Duration;

use reseam_kernels::clock::{self, CycleRate};
use reseam_kernels::pack::AlignedBytes;
use reseam_kernels::{Arithmetic, Epilogue, Isa, Kernels, Output, PackedB, QuantizedA, Scale};

use crate::llm::DecoderSpec;

/// Which kernel tables to measure.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum IsaChoice {
    /// The process-wide choice (`RESEAM_MT_ISA` or the best this CPU runs).
    Live,
    /// Every instruction set this CPU runs except the reference.
    All,
    One(Isa),
}

#[derive(Clone, Debug)]
pub struct Options {
    pub isa: IsaChoice,
    /// `None`: both arithmetics.
    pub arithmetic: Option<Arithmetic>,
    pub m: Vec<usize>,
    /// Model widths; each brings its attention, FFN and output-layer shapes.
    pub dims: Vec<usize>,
    /// Decoder LLMs; each brings its four layer products (see [`llm_shapes`]).
    pub llms: Vec<DecoderSpec>,
    /// Only shapes with these names (all when empty).
    pub shapes: Vec<String>,
    /// Measure each product for at least this long.
    pub min_time: Duration,
}

/// A product shape: `k` inner, `n` output columns.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Shape {
    pub name: &'static str,
    pub dim: usize,
    pub k: usize,
    pub n: usize,
}

/// Shape names of a translation model, in the order they are measured.
pub const TRANSLATION_SHAPES: [&str; 6] = ["attn-out", "qkv", "ffn-up", "ffn-down", "logits-shortlist", "logits-full"];

/// Shape names of a decoder LLM's layer, in the order a forward runs them.
pub const LLM_SHAPES: [&str; 4] = ["llm-qkv", "llm-o", "llm-gate-up", "llm-down"];

/// Every shape name (`--shape`).
pub fn shape_names() -> Vec<&'static str> {
    TRANSLATION_SHAPES.iter().chain(&LLM_SHAPES).copied().collect()
}

/// The shapes of a Firefox Translations model of width `dim` (tiny 256, base-memory 384, base
/// 512): the attention output projection, Q·K·V fused, the FFN, and the output layer over a
/// 1,200-word shortlist and over a 32,000-word vocabulary.
pub fn model_shapes(dim: usize) -> Vec<Shape> {
    let ffn = if dim >= 512 { 2048 } else { 1536 };
    let kn = [(dim, dim), (dim, 3 * dim), (dim, ffn), (ffn, dim), (dim, 1200), (dim, 32000)];
    TRANSLATION_SHAPES.iter().zip(kn).map(|(&name, (k, n))| Shape { name, dim, k, n }).collect()
}

/// The four products of one decoder-LLM layer as reseam runs them: q|k|v fused, the attention
/// output, gate|up fused, and down. `dim` is the hidden width.
pub fn llm_shapes(s: &DecoderSpec) -> Vec<Shape> {
    let (h, qd, kvd, i) = (s.hidden, s.q_dim(), s.kv_dim(), s.intermediate);
    let kn = [(h, qd + 2 * kvd), (qd, h), (h, 2 * i), (i, h)];
    LLM_SHAPES.iter().zip(kn).map(|(&name, (k, n))| Shape { name, dim: h, k, n }).collect()
}

/// One measured product.
#[derive(Clone, Debug, serde::Serialize)]
pub struct Row {
    /// The table measured (`--isa`).
    pub isa: String,
    /// Whose kernel ran for this arithmetic (the AMX table borrows the AVX-512 VNNI saturating
    /// kernel; a table without a saturating kernel runs the reference).
    pub kernel: String,
    pub arithmetic: &'static str,
    pub shape: &'static str,
    pub dim: usize,
    pub m: usize,
    pub n: usize,
    pub k: usize,
    pub seconds: f64,
    pub gmacs: f64,
    pub macs_per_cycle: f64,
    /// The peak loop's rate, measured in alternation with this product.
    pub peak_macs_per_cycle: Option<f64>,
    pub peak_fraction: Option<f64>,
    pub peak_instructions: Option<&'static str>,
    pub clock: &'static str,
}

/// The measured peak of one kernel's product step.
#[derive(Clone, Debug, serde::Serialize)]
pub struct Peak {
    pub kernel: String,
    pub arithmetic: &'static str,
    pub instructions: &'static str,
    pub macs_per_cycle: f64,
    pub gmacs: f64,
}

/// What [`run`] reports as it goes.
#[derive(Debug)]
pub enum Event {
    /// Once, first.
    Start {
        clock: CycleRate,
        jobs: usize,
    },
    /// Before the rows of one table and arithmetic, with the peak of the kernel that runs
    /// (`None` for the reference, which has no product instruction).
    Group {
        isa: String,
        kernel: String,
        arithmetic: &'static str,
        peak: Option<Peak>,
    },
    /// Before each measurement.
    Measuring {
        done: usize,
        label: String,
    },
    Row(Row),
}

#[derive(Debug, thiserror::Error)]
pub enum Error {
    #[error(transparent)]
    Isa(#[from] reseam_kernels::dispatch::IsaError),
    #[error("--m must list row counts of at least 1")]
    NoRows,
    #[error("no shape matches --shape {0:?} (shapes: {names})", names = shape_names().join(", "))]
    NoShape(Vec<String>),
}

crate::error::fault!(Error);

impl Error {
    /// Bad flags are the caller's fault; the kernels' own errors say for themselves.
    pub fn is_usage(&self) -> bool {
        match self {
            Error::Isa(e) => e.is_usage(),
            Error::NoRows | Error::NoShape(_) => true,
        }
    }
}

fn tables(choice: IsaChoice) -> Result<Vec<Kernels>, Error> {
    Ok(match choice {
        IsaChoice::Live => vec![*reseam_kernels::dispatch::kernels()?],
        IsaChoice::All => Kernels::available()
            .into_iter()
            .filter(|&i| i != Isa::Reference)
            .map(Kernels::for_isa)
            .collect::<Result<_, _>>()?,
        IsaChoice::One(isa) => vec![Kernels::for_isa(isa)?],
    })
}

/// Measures every (table, arithmetic, shape, m) in the options, reporting through `sink`.
pub fn run(opts: &Options, sink: &mut dyn FnMut(Event)) -> Result<Vec<Row>, Error> {
    if opts.m.is_empty() || opts.m.contains(&0) {
        return Err(Error::NoRows);
    }
    let tables = tables(opts.isa)?;
    let shapes: Vec<Shape> = opts
        .dims
        .iter()
        .flat_map(|&d| model_shapes(d))
        .chain(opts.llms.iter().flat_map(llm_shapes))
        .filter(|s| opts.shapes.is_empty() || opts.shapes.iter().any(|n| n == s.name))
        .collect();
    if shapes.is_empty() {
        return Err(Error::NoShape(opts.shapes.clone()));
    }
    let ariths: Vec<Arithmetic> = match opts.arithmetic {
        Some(a) => vec![a],
        None => vec![Arithmetic::Exact, Arithmetic::Saturating],
    };
    let clock = clock::cycles_clock();
    let jobs = tables.len() * ariths.len() * shapes.len() * opts.m.len();
    sink(Event::Start { clock, jobs });

    let mut rows = Vec::with_capacity(jobs);
    let mut done = 0;
    for k in &tables {
        for &arith in &ariths {
            let peak = measure_peak(k, arith, clock, opts.min_time);
            sink(Event::Group {
                isa: k.name(),
                kernel: k.kernel_for(arith).name().to_string(),
                arithmetic: arith.name(),
                peak: peak.clone(),
            });
            for shape in &shapes {
                let data = Data::new(shape, *opts.m.iter().max().unwrap_or(&1));
                for &m in &opts.m {
                    let label =
                        format!("{} {} {} (k={} n={}) m={m}", k.name(), arith.name(), shape.name, shape.k, shape.n);
                    sink(Event::Measuring { done, label });
                    let row = measure(k, arith, shape, m, &data, clock, opts.min_time);
                    sink(Event::Row(row.clone()));
                    rows.push(row);
                    done += 1;
                }
            }
        }
    }
    Ok(rows)
}

/// One product measured as [`run`] measures it, on the live kernels (`RESEAM_MT_ISA` or the
/// best this CPU runs), on the calling thread: for `bench llm`, which states its prefill against
/// this figure.
pub fn measure_live(arith: Arithmetic, shape: &Shape, m: usize, min_time: Duration) -> Result<Row, Error> {
    if m == 0 {
        return Err(Error::NoRows);
    }
    let k = reseam_kernels::dispatch::kernels()?;
    let data = Data::new(shape, m);
    Ok(measure(k, arith, shape, m, &data, clock::cycles_clock(), min_time))
}

/// Peak-loop iterations per repetition: long enough that the loop's setup does not count.
const PEAK_ITERS: u64 = 1_000;

fn measure_peak(k: &Kernels, arith: Arithmetic, clock: CycleRate, min: Duration) -> Option<Peak> {
    let lp = k.peak(arith)?;
    let t = clock::time_per_rep(min, |reps| lp.run(reps * PEAK_ITERS));
    let macs = (lp.macs_per_iter * PEAK_ITERS) as f64;
    let secs = t.as_secs_f64();
    Some(Peak {
        kernel: k.kernel_for(arith).name().to_string(),
        arithmetic: arith.name(),
        instructions: lp.instructions,
        macs_per_cycle: macs / (secs * clock.hz),
        gmacs: macs / secs / 1e9,
    })
}

/// Inputs for one shape at its largest row count: random bytes, as real ones cost the same.
struct Data {
    a: AlignedBytes,
    stride: usize,
    b: PackedB,
    bias: Vec<f32>,
    zero_fix: Vec<i32>,
    row_scales: Vec<f32>,
    col_scales: Vec<f32>,
    out: Vec<f32>,
    out_u8: Vec<u8>,
}

impl Data {
    fn new(s: &Shape, m: usize) -> Data {
        let mut x = 0x2545_F491_4F6C_DD1Du64;
        let mut next = move || {
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
            x
        };
        let bt: Vec<i8> = (0..s.k * s.n).map(|_| ((next() % 255) as i32 - 127) as i8).collect();
        let b = PackedB::from_transposed(&bt, s.k, s.n);
        let stride = b.k_padded();
        let mut a = AlignedBytes::zeroed(m * stride);
        a.iter_mut().for_each(|x| *x = (next() % 255) as u8);
        let bias = (0..s.n).map(|j| (j % 17) as f32 * 0.25 - 2.0).collect();
        let zero_fix = b.zero_fix();
        let row_scales = (0..m).map(|i| 1e-2 + (i % 7) as f32 * 1e-3).collect();
        let col_scales = (0..s.n).map(|j| 1e-3 + (j % 11) as f32 * 1e-4).collect();
        Data { a, stride, b, bias, zero_fix, row_scales, col_scales, out: vec![0.0; m * s.n], out_u8: vec![0; m * s.n] }
    }
}

/// Times one product; with a peak loop, in alternation with it (see [`clock::time_pair`]), so
/// the fraction compares two measurements of the same moment.
fn measure(k: &Kernels, arith: Arithmetic, s: &Shape, m: usize, d: &Data, clock: CycleRate, min: Duration) -> Row {
    let a = QuantizedA { data: &d.a[..m * d.stride], rows: m, stride: d.stride };
    // As the engine runs them: the FFN's first product ends in ReLU and requantization for the
    // second; every other product dequantizes and adds its bias; an LLM's products subtract the
    // activations' +127 shift and scale per token and per weight row (`llm::linear`).
    let fused = s.name == "ffn-up";
    let ep = if s.name.starts_with("llm-") {
        Epilogue {
            zero_fix: Some(&d.zero_fix),
            scale: Scale::RowsColumns { rows: &d.row_scales[..m], cols: &d.col_scales },
            bias: None,
            relu: false,
        }
    } else {
        Epilogue { zero_fix: None, scale: Scale::Uniform(1.3e-4), bias: Some(&d.bias), relu: fused }
    };
    let mut out_f = d.out[..m * s.n].to_vec();
    let mut out_u = d.out_u8[..m * s.n].to_vec();
    let product = |reps: u64| {
        for _ in 0..reps {
            let mut out = if fused {
                Output::U8 { data: &mut out_u, stride: s.n, scale: 3.5 }
            } else {
                Output::F32 { data: &mut out_f, stride: s.n }
            };
            // The shapes are built to fit; an error here is a bug in this file.
            k.gemm(arith, &a, &d.b, &ep, &mut out).expect("benchmark shapes fit");
        }
    };
    let lp = k.peak(arith);
    let (t, peak) = match lp {
        Some(lp) => {
            let (tp, t) = clock::time_pair(min, |reps| lp.run(reps * PEAK_ITERS), product);
            (t, Some((lp, (lp.macs_per_iter * PEAK_ITERS) as f64 / (tp.as_secs_f64() * clock.hz))))
        }
        None => (clock::time_per_rep(min, product), None),
    };
    let secs = t.as_secs_f64();
    let macs = (m * s.n * s.k) as f64;
    let macs_per_cycle = macs / (secs * clock.hz);
    Row {
        isa: k.name(),
        kernel: k.kernel_for(arith).name().to_string(),
        arithmetic: arith.name(),
        shape: s.name,
        dim: s.dim,
        m,
        n: s.n,
        k: s.k,
        seconds: secs,
        gmacs: macs / secs / 1e9,
        macs_per_cycle,
        peak_macs_per_cycle: peak.map(|(_, p)| p),
        peak_fraction: peak.map(|(_, p)| macs_per_cycle / p),
        peak_instructions: peak.map(|(lp, _)| lp.instructions),
        clock: clock.source,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn model_shapes_follow_the_architectures() {
        let tiny = model_shapes(256);
        assert_eq!(
            tiny.iter().map(|s| (s.k, s.n)).collect::<Vec<_>>(),
            vec![(256, 256), (256, 768), (256, 1536), (1536, 256), (256, 1200), (256, 32000)]
        );
        assert_eq!(model_shapes(512)[2].n, 2048);
        assert_eq!(model_shapes(384)[3].k, 1536);
    }

    #[test]
    fn llm_shapes_are_the_fused_layer_products() {
        let l = llm_shapes(&crate::llm::synthetic::llama_3_2_1b());
        assert_eq!(
            l.iter().map(|s| (s.name, s.k, s.n)).collect::<Vec<_>>(),
            vec![
                ("llm-qkv", 2048, 3072),
                ("llm-o", 2048, 2048),
                ("llm-gate-up", 2048, 16384),
                ("llm-down", 8192, 2048)
            ]
        );
        let q = llm_shapes(&crate::llm::synthetic::qwen2_5_1_5b());
        assert_eq!((q[0].k, q[0].n, q[3].k), (1536, 1536 + 2 * 256, 8960));
    }

    #[test]
    fn llm_products_are_measured_with_their_epilogue() {
        let opts = Options {
            isa: IsaChoice::One(Isa::Reference),
            arithmetic: Some(Arithmetic::Exact),
            m: vec![3],
            dims: vec![],
            llms: vec![crate::llm::synthetic::test_shape()],
            shapes: vec!["llm-o".into(), "llm-down".into()],
            min_time: Duration::from_millis(1),
        };
        let rows = run(&opts, &mut |_| {}).unwrap();
        assert_eq!(
            rows.iter().map(|r| (r.shape, r.k, r.n)).collect::<Vec<_>>(),
            vec![("llm-o", 256, 256), ("llm-down", 768, 256)]
        );
        let one = measure_live(Arithmetic::Exact, &llm_shapes(&opts.llms[0])[0], 2, Duration::from_millis(1)).unwrap();
        assert!(one.gmacs > 0.0 && one.m == 2 && one.n == 256 + 2 * 128);
        assert!(matches!(
            measure_live(Arithmetic::Exact, &llm_shapes(&opts.llms[0])[0], 0, Duration::ZERO),
            Err(Error::NoRows)
        ));
    }

    #[test]
    fn run_reports_one_row_per_job_with_peaks() {
        let opts = Options {
            isa: IsaChoice::One(Isa::Reference),
            arithmetic: None,
            m: vec![1, 2],
            dims: vec![256],
            llms: vec![],
            shapes: vec!["attn-out".into()],
            min_time: Duration::from_millis(1),
        };
        let mut events = Vec::new();
        let rows = run(&opts, &mut |e| events.push(format!("{e:?}"))).unwrap();
        assert_eq!(rows.len(), 4);
        assert!(rows.iter().all(|r| r.k == 256 && r.n == 256 && r.macs_per_cycle > 0.0 && r.peak_fraction.is_none()));
        assert!(events[0].starts_with("Start"));
        let err = run(&Options { shapes: vec!["nope".into()], ..opts.clone() }, &mut |_| {}).unwrap_err();
        assert!(err.to_string().contains("logits-full"), "{err}");
        assert!(matches!(run(&Options { m: vec![0], ..opts }, &mut |_| {}), Err(Error::NoRows)));
    }
}
