//! `reseam bench llm`: a random-weight model at a real shape (Llama-3.2-1B by default), made in
//! memory, measured in int8 against this machine in the same run:
//! - decode at one token per forward, as bytes of weights read per token × tokens/s, against
//!   the measured memory read bandwidth (decode is memory-bound: every weight is read once per
//!   token);
//! - prefill of a long prompt, as multiply-accumulates per second, against the int8 GEMM
//!   throughput of the same kernels on the model's own layer shapes at M rows.

use std::time::{Duration, Instant};

use serde::Serialize;

use super::decoder::LogitRows;
use super::layers::DecoderSpec;
use super::linear::{self, Int8Matrix, Precision};
use super::{Error, Model, Result, synthetic};
use crate::bench::memory::{self as membw, Bandwidth};

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
    pub prefill_tokens: usize,
    /// The best of the runs.
    pub prefill_seconds: f64,
    pub prefill_tokens_per_second: f64,
    /// Multiply-accumulates of the layers' products per second during prefill, GMAC/s.
    pub prefill_gmacs: f64,
    pub gemm_rows: usize,
    /// The same products alone at `gemm_rows` rows, GMAC/s (the best run of each shape).
    pub gemm_gmacs: f64,
    /// `prefill_gmacs / gemm_gmacs`.
    pub prefill_fraction: f64,
}

/// Repetitions of the GEMM and prefill measurements; the best is kept for both, so noise from
/// other work on the machine does not favour either side of the ratio.
const RUNS: usize = 10;

/// Multiply-accumulates of one token through one layer's products.
fn layer_macs(s: &DecoderSpec) -> usize {
    let (h, qd, kvd, i) = (s.hidden, s.q_dim(), s.kv_dim(), s.intermediate);
    h * (qd + 2 * kvd) + qd * h + h * 2 * i + i * h
}

fn parameters(s: &DecoderSpec) -> usize {
    let head = if s.tied_embeddings { 0 } else { s.vocab * s.hidden };
    s.layers * (layer_macs(s) + 2 * s.hidden) + s.vocab * s.hidden + head + s.hidden
}

/// The int8 products of one layer at `rows` rows through the engine's threaded driver: the
/// matrices and activations are made once, then [`GemmLayer::run`] times each product once.
struct GemmLayer {
    products: Vec<(Int8Matrix, linear::QuantizedRows, Vec<f32>)>,
    rows: usize,
    best: Vec<Duration>,
    macs: usize,
}

impl GemmLayer {
    fn new(s: &DecoderSpec, rows: usize, seed: u64) -> Result<GemmLayer> {
        let (h, qd, kvd, i) = (s.hidden, s.q_dim(), s.kv_dim(), s.intermediate);
        let mut products = Vec::new();
        let mut macs = 0;
        for (n, (k, out)) in [(h, qd + 2 * kvd), (qd, h), (h, 2 * i), (i, h)].into_iter().enumerate() {
            let wseed = seed ^ (n as u64 + 1);
            let m = Int8Matrix::quantize(k, out, &|j, row| synthetic::fill_row(wseed, 0.05, j, row));
            let mut x = vec![0f32; rows * k];
            for (r, row) in x.chunks_exact_mut(k).enumerate() {
                synthetic::fill_row(seed.wrapping_add(7), 1.0, r, row);
            }
            let q = linear::quantize_rows(&x, rows, k, reseam_kernels::pack::padded(k, out).0)?;
            products.push((m, q, vec![0f32; rows * out]));
            macs += rows * k * out;
        }
        let best = vec![Duration::MAX; products.len()];
        Ok(GemmLayer { products, rows, best, macs })
    }

    /// Times every product once, keeping each one's best.
    fn run(&mut self) -> Result<()> {
        let kernels = reseam_kernels::dispatch::kernels().map_err(|e| Error::Kernels(e.to_string()))?;
        for ((m, q, y), best) in self.products.iter_mut().zip(&mut self.best) {
            let t = Instant::now();
            linear::int8_product(kernels, m, None, q, self.rows, y)?;
            *best = (*best).min(t.elapsed());
        }
        Ok(())
    }

    /// Multiply-accumulates per second over the best times, GMAC/s.
    fn gmacs(&self) -> f64 {
        self.macs as f64 / self.best.iter().sum::<Duration>().as_secs_f64() / 1e9
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
    let kernel =
        reseam_kernels::dispatch::kernels().map_err(|e| Error::Kernels(e.to_string()))?.isa().name().to_string();
    log(&format!("generating a random {} model in int8 ({} parameters)", opts.shape_name, parameters(s)));
    let t = Instant::now();
    let model = Model::synthetic(s, Precision::Int8, opts.seed)?;
    let build_seconds = t.elapsed().as_secs_f64();

    log(&format!("memory read bandwidth over {} MiB", opts.bandwidth_bytes >> 20));
    let memory = membw::measure(opts.bandwidth_bytes, 5);

    // The GEMM and the prefill take turns, so a noisy neighbour on the machine slows both sides
    // of the ratio alike; the best of each is kept.
    log(&format!(
        "int8 GEMM at M={} on the layer shapes and prefill of {} tokens, alternating ({RUNS} runs)",
        opts.gemm_rows, opts.prefill_tokens
    ));
    let mut gemm = GemmLayer::new(s, opts.gemm_rows, opts.seed)?;
    gemm.run()?; // warm-up
    let prompt: Vec<u32> = (0..opts.prefill_tokens).map(|i| ((i * 7919 + 13) % s.vocab) as u32).collect();
    let (mut prefill, mut cache, mut next) = (Duration::MAX, model.new_cache(), 0);
    for _ in 0..RUNS {
        gemm.run()?;
        // As `speculate`'s baseline does between prompts: the cache is emptied, its memory kept.
        cache.clear();
        let t = Instant::now();
        let logits = model.forward(&mut cache, &prompt, LogitRows::Last)?;
        prefill = prefill.min(t.elapsed());
        next = logits.argmax(0);
    }
    let gemm_gmacs = gemm.gmacs();

    log(&format!("decode of {} tokens", opts.decode_tokens));
    let t = Instant::now();
    for _ in 0..opts.decode_tokens {
        next = model.forward(&mut cache, &[next], LogitRows::Last)?.argmax(0);
    }
    let decode = t.elapsed();

    let bytes = model.weight_bytes_per_token();
    let decode_tps = opts.decode_tokens as f64 / decode.as_secs_f64();
    let decode_bandwidth = bytes as f64 * decode_tps / 1e9;
    let prefill_gmacs = (opts.prefill_tokens * s.layers * layer_macs(s)) as f64 / prefill.as_secs_f64() / 1e9;
    Ok(Report {
        shape: opts.shape_name.clone(),
        parameters: parameters(s),
        kernel,
        threads: rayon::current_num_threads(),
        optimized_build: !cfg!(debug_assertions),
        build_seconds,
        weight_bytes_per_token: bytes,
        decode_tokens: opts.decode_tokens,
        decode_tokens_per_second: decode_tps,
        decode_bandwidth,
        decode_fraction: decode_bandwidth / memory.best,
        prefill_tokens: opts.prefill_tokens,
        prefill_seconds: prefill.as_secs_f64(),
        prefill_tokens_per_second: opts.prefill_tokens as f64 / prefill.as_secs_f64(),
        prefill_gmacs,
        gemm_rows: opts.gemm_rows,
        gemm_gmacs,
        prefill_fraction: prefill_gmacs / gemm_gmacs,
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
        };
        let r = run(&opts, &|_| {}).unwrap();
        assert!(r.decode_tokens_per_second > 0.0 && r.decode_fraction > 0.0);
        assert!(r.prefill_gmacs > 0.0 && r.gemm_gmacs > 0.0 && r.prefill_fraction > 0.0);
        assert!(r.weight_bytes_per_token > 256 * 768 * 3);
    }
}
