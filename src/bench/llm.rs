//! `reseam bench llm`: a random-weight model at a real shape (Llama-3.2-1B by default), made in
//! memory, measured in int8 against this machine in the same run:
//! - decode at one token per forward, as bytes of weights read per token × tokens/s, against
//!   the measured memory read bandwidth (decode is memory-bound: every weight is read once per
//!   token);
//! - prefill of a long prompt, as multiply-accumulates per second, against the int8 GEMM
//!   throughput of the same kernels at M rows over the model's own weights: one pass over every
//!   layer's products, timed as a whole as the prefill is, so both sides see the same weights
//!   coming from memory and the same sustained load (each product's best time alone, a short
//!   burst, is reported too); and against `bench-gemm`'s own figure for the same four shapes
//!   (one thread, one warm matrix, the best of its runs) times the threads, the strictest
//!   reading.

use std::time::{Duration, Instant};

use reseam_kernels::Arithmetic;
use serde::Serialize;

use super::gemm as gemm_bench;
use super::memory::{self as membw, Bandwidth};
use crate::llm::DecoderSpec;
use crate::llm::decoder::LogitRows;
use crate::llm::linear::{self, Int8Matrix, Precision};
use crate::llm::{Error, Model, Result, synthetic};

/// What to measure.
#[derive(Clone, Debug)]
pub struct Options {
    pub shape_name: String,
    pub shape: DecoderSpec,
    pub prefill_tokens: usize,
    pub decode_tokens: usize,
    pub gemm_rows: usize,
    pub bandwidth_bytes: usize,
    pub seed: u64,
    /// How long `bench-gemm`'s measurement of each layer product takes (its `--min-time`).
    pub bench_gemm_time: Duration,
}

/// What was measured.
#[derive(Clone, Debug, Serialize)]
pub struct Report {
    pub shape: String,
    pub parameters: usize,
    pub kernel: String,
    pub threads: usize,
    pub optimized_build: bool,
    pub build_seconds: f64,
    pub memory: Bandwidth,
    /// Bytes of weights one forward reads (int8 matrices, scales, norms, one embedding row).
    pub weight_bytes_per_token: usize,
    pub decode_tokens: usize,
    pub decode_tokens_per_second: f64,
    /// `weight_bytes_per_token × decode_tokens_per_second`, GB/s.
    pub decode_bandwidth: f64,
    /// `decode_bandwidth / memory.best`.
    pub decode_fraction: f64,
    /// Read bandwidth over as many bytes as a decode run reads, read in turns with it: one
    /// token's weight bytes just before each token (best of the runs), GB/s.
    pub memory_sustained: f64,
    /// `decode_bandwidth / memory_sustained`.
    pub decode_fraction_sustained: f64,
    pub prefill_tokens: usize,
    /// The best of the runs.
    pub prefill_seconds: f64,
    pub prefill_tokens_per_second: f64,
    /// Multiply-accumulates of the layers' products per second during prefill, GMAC/s.
    pub prefill_gmacs: f64,
    pub gemm_rows: usize,
    /// The same products alone at `gemm_rows` rows (every layer's, over the model's own
    /// weights, one pass timed as a whole as the prefill is), GMAC/s of the best pass.
    pub gemm_gmacs: f64,
    /// The same products over each one's best time across the runs, GMAC/s: short bursts,
    /// which a noisy machine and the CPU's power management favour over a sustained pass.
    pub gemm_burst_gmacs: f64,
    /// `prefill_gmacs / gemm_gmacs`.
    pub prefill_fraction: f64,
    /// `prefill_gmacs / gemm_burst_gmacs`.
    pub prefill_fraction_burst: f64,
    /// `bench-gemm --llm SHAPE --m GEMM_ROWS --arithmetic exact` on one thread: one layer's
    /// multiply-accumulates over the sum of its four products' times, GMAC/s.
    pub bench_gemm_gmacs_per_thread: f64,
    /// `prefill_gmacs / (threads × bench_gemm_gmacs_per_thread)`.
    pub prefill_fraction_bench_gemm: f64,
}

/// Repetitions of the GEMM and prefill measurements; the best is kept for both, so noise from
/// other work on the machine does not favour either side of the ratio.
const RUNS: usize = 10;
/// Runs of the decode measurement (each `decode_tokens` forwards, after a bandwidth pass); the
/// best of each is kept.
const DECODE_RUNS: usize = 5;

/// Multiply-accumulates of one token through one layer's products (the shapes `bench-gemm
/// --llm` measures, so both figures count the same work).
fn layer_macs(s: &DecoderSpec) -> usize {
    gemm_bench::llm_shapes(s).iter().map(|p| p.k * p.n).sum()
}

fn parameters(s: &DecoderSpec) -> usize {
    let head = if s.tied_embeddings { 0 } else { s.vocab * s.hidden };
    s.layers * (layer_macs(s) + 2 * s.hidden) + s.vocab * s.hidden + head + s.hidden
}

/// The model's own int8 products, every layer's, at `rows` rows through the engine's threaded
/// driver (activations made once per input width): [`GemmModel::run`] times one pass over all of
/// them, as long as a prefill's products and over the same weights, and each product alone.
struct GemmModel<'m> {
    products: Vec<(&'m Int8Matrix, usize, usize)>,
    inputs: Vec<linear::QuantizedRows>,
    outputs: Vec<Vec<f32>>,
    rows: usize,
    best: Duration,
    best_each: Vec<Duration>,
    macs: usize,
}

impl<'m> GemmModel<'m> {
    fn new(model: &'m Model, rows: usize, seed: u64) -> Result<GemmModel<'m>> {
        let (mut products, mut inputs, mut outputs) = (Vec::new(), Vec::new(), Vec::new());
        let (mut widths, mut lens): (Vec<usize>, Vec<usize>) = (Vec::new(), Vec::new());
        let mut macs = 0;
        for l in model.layer_products() {
            let m = l.int8().ok_or(Error::EmptyInput("the GEMM measurement needs an int8 model"))?;
            let (k, n) = (l.k(), l.n());
            let input = match widths.iter().position(|&w| w == k) {
                Some(i) => i,
                None => {
                    let mut x = vec![0f32; rows * k];
                    for (r, row) in x.chunks_exact_mut(k).enumerate() {
                        synthetic::fill_row(seed.wrapping_add(7), 1.0, r, row);
                    }
                    inputs.push(linear::quantize_rows(&x, rows, k, reseam_kernels::pack::padded(k, n).0)?);
                    widths.push(k);
                    widths.len() - 1
                }
            };
            let output = match lens.iter().position(|&len| len == n) {
                Some(i) => i,
                None => {
                    outputs.push(vec![0f32; rows * n]);
                    lens.push(n);
                    lens.len() - 1
                }
            };
            products.push((m, input, output));
            macs += rows * k * n;
        }
        let best_each = vec![Duration::MAX; products.len()];
        Ok(GemmModel { products, inputs, outputs, rows, best: Duration::MAX, best_each, macs })
    }

    /// Times one pass over every product, keeping the best pass and each product's best.
    fn run(&mut self) -> Result<()> {
        let kernels = reseam_kernels::dispatch::kernels()?;
        let start = Instant::now();
        for (&(m, input, output), best) in self.products.iter().zip(&mut self.best_each) {
            let t = Instant::now();
            linear::int8_product(kernels, m, None, &self.inputs[input], self.rows, &mut self.outputs[output])?;
            *best = (*best).min(t.elapsed());
        }
        self.best = self.best.min(start.elapsed());
        Ok(())
    }

    /// Multiply-accumulates per second of the best pass, GMAC/s.
    fn gmacs(&self) -> f64 {
        self.macs as f64 / self.best.as_secs_f64() / 1e9
    }

    /// The same over each product's best time, wherever in the runs it came (short bursts).
    fn burst_gmacs(&self) -> f64 {
        self.macs as f64 / self.best_each.iter().sum::<Duration>().as_secs_f64() / 1e9
    }
}

/// Runs the whole measurement; `log` hears what is being done.
pub fn run(opts: &Options, log: &dyn Fn(&str)) -> Result<Report> {
    let s = &opts.shape;
    if opts.prefill_tokens + opts.decode_tokens + 1 > s.max_positions {
        return Err(Error::Position { len: opts.prefill_tokens + opts.decode_tokens + 1, max: s.max_positions });
    }
    if opts.prefill_tokens == 0 || opts.decode_tokens == 0 || opts.gemm_rows == 0 {
        return Err(Error::EmptyInput("prefill tokens, decode tokens and GEMM rows must all be at least 1"));
    }
    let kernel = reseam_kernels::dispatch::kernels()?.isa().name().to_string();
    log(&format!("generating a random {} model in int8 ({} parameters)", opts.shape_name, parameters(s)));
    let t = Instant::now();
    let model = Model::synthetic(s, Precision::Int8, opts.seed)?;
    let build_seconds = t.elapsed().as_secs_f64();

    // The GEMM and the prefill take turns, so a noisy neighbour on the machine slows both sides
    // of the ratio alike; the best of each is kept.
    log(&format!(
        "int8 GEMM at M={} over the model's layers (and bench-gemm's figure) and prefill of {} tokens, alternating ({RUNS} runs)",
        opts.gemm_rows, opts.prefill_tokens
    ));
    let mut gemm = GemmModel::new(&model, opts.gemm_rows, opts.seed)?;
    gemm.run()?; // warm-up
    let prompt: Vec<u32> = (0..opts.prefill_tokens).map(|i| ((i * 7919 + 13) % s.vocab) as u32).collect();
    let (mut prefill, mut cache, mut next) = (Duration::MAX, model.new_cache(), 0);
    // bench-gemm's figure is taken in three of the rounds too (each product's best is kept).
    let shapes = gemm_bench::llm_shapes(s);
    let mut bench_gemm = vec![f64::INFINITY; shapes.len()];
    for run in 0..RUNS {
        if [0, RUNS / 2, RUNS - 1].contains(&run) {
            for (shape, best) in shapes.iter().zip(&mut bench_gemm) {
                let row = gemm_bench::measure_live(Arithmetic::Exact, shape, opts.gemm_rows, opts.bench_gemm_time)
                    .map_err(|e| match e {
                        gemm_bench::Error::Isa(e) => Error::Kernels(e),
                        _ => Error::EmptyInput("--gemm-rows must be at least 1"),
                    })?;
                *best = best.min(row.seconds);
            }
        }
        gemm.run()?;
        // As `speculate`'s baseline does between prompts: the cache is emptied, its memory kept.
        cache.clear();
        let t = Instant::now();
        let logits = model.forward(&mut cache, &prompt, LogitRows::Last)?;
        prefill = prefill.min(t.elapsed());
        next = logits.argmax(0);
    }
    let (gemm_gmacs, gemm_burst_gmacs) = (gemm.gmacs(), gemm.burst_gmacs());
    drop(gemm);

    let layer_seconds: f64 = bench_gemm.iter().sum();
    let bench_gemm_gmacs_per_thread = (opts.gemm_rows * layer_macs(s)) as f64 / layer_seconds / 1e9;

    log(&format!(
        "memory read bandwidth over {} MiB and decode of {} tokens, alternating ({DECODE_RUNS} runs)",
        opts.bandwidth_bytes >> 20,
        opts.decode_tokens
    ));
    // Bandwidth and decode take turns for the reason the GEMM and the prefill do: on a shared
    // machine the bandwidth swings 2x within a minute, and a ratio of figures taken minutes
    // apart says more about the neighbours than about the decode. A short pass before each run,
    // and before each token a read of as many bytes as the token reads, so the sustained read
    // and the decode see the same seconds. Each decode run starts from the same point (the
    // cache trimmed back to the prompt); the best of each side.
    let meter = membw::Meter::new(opts.bandwidth_bytes);
    let (mut decode, mut passes, first) = (Duration::MAX, Vec::with_capacity(DECODE_RUNS), next);
    let mut sustained = 0f64;
    let bytes = model.weight_bytes_per_token();
    for _ in 0..DECODE_RUNS {
        passes.push(meter.pass());
        cache.truncate(opts.prefill_tokens);
        next = first;
        let (mut reading, mut decoding) = (Duration::ZERO, Duration::ZERO);
        for _ in 0..opts.decode_tokens {
            reading += meter.read(bytes);
            let t = Instant::now();
            next = model.forward(&mut cache, &[next], LogitRows::Last)?.argmax(0);
            decoding += t.elapsed();
        }
        sustained = sustained.max((bytes * opts.decode_tokens) as f64 / reading.as_secs_f64() / 1e9);
        decode = decode.min(decoding);
    }
    let memory = meter.report(passes);
    drop(meter);

    let decode_tps = opts.decode_tokens as f64 / decode.as_secs_f64();
    let decode_bandwidth = bytes as f64 * decode_tps / 1e9;
    let prefill_gmacs = (opts.prefill_tokens * s.layers * layer_macs(s)) as f64 / prefill.as_secs_f64() / 1e9;
    let threads = rayon::current_num_threads();
    Ok(Report {
        shape: opts.shape_name.clone(),
        parameters: parameters(s),
        kernel,
        threads,
        optimized_build: !cfg!(debug_assertions),
        build_seconds,
        weight_bytes_per_token: bytes,
        decode_tokens: opts.decode_tokens,
        decode_tokens_per_second: decode_tps,
        decode_bandwidth,
        decode_fraction: decode_bandwidth / memory.best,
        memory_sustained: sustained,
        decode_fraction_sustained: decode_bandwidth / sustained,
        prefill_tokens: opts.prefill_tokens,
        prefill_seconds: prefill.as_secs_f64(),
        prefill_tokens_per_second: opts.prefill_tokens as f64 / prefill.as_secs_f64(),
        prefill_gmacs,
        gemm_rows: opts.gemm_rows,
        gemm_gmacs,
        gemm_burst_gmacs,
        prefill_fraction: prefill_gmacs / gemm_gmacs,
        prefill_fraction_burst: prefill_gmacs / gemm_burst_gmacs,
        bench_gemm_gmacs_per_thread,
        prefill_fraction_bench_gemm: prefill_gmacs / (threads as f64 * bench_gemm_gmacs_per_thread),
        memory,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn llama_1b_counts() {
        let s = synthetic::llama_3_2_1b();
        // 1.236 B parameters with tied embeddings (Llama-3.2-1B's model card: 1.23 B).
        let p = parameters(&s);
        assert!((1_230_000_000..1_240_000_000).contains(&p), "{p}");
    }

    #[test]
    fn a_small_run_reports_every_figure() {
        let opts = Options {
            shape_name: "test".into(),
            shape: DecoderSpec { layers: 1, vocab: 512, ..synthetic::test_shape() },
            prefill_tokens: 8,
            decode_tokens: 2,
            gemm_rows: 4,
            bandwidth_bytes: 4 << 20,
            seed: 1,
            bench_gemm_time: Duration::from_millis(1),
        };
        let r = run(&opts, &|_| {}).unwrap();
        assert!(r.decode_tokens_per_second > 0.0 && r.decode_fraction > 0.0);
        assert!(r.prefill_gmacs > 0.0 && r.gemm_gmacs > 0.0 && r.prefill_fraction > 0.0);
        assert!(r.bench_gemm_gmacs_per_thread > 0.0 && r.prefill_fraction_bench_gemm > 0.0);
        let want = r.prefill_gmacs / (r.threads as f64 * r.bench_gemm_gmacs_per_thread);
        assert!((r.prefill_fraction_bench_gemm - want).abs() < 1e-9 * want);
        assert!(r.weight_bytes_per_token > 256 * 768 * 3);
    }
}
