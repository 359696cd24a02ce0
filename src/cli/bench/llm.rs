//! `reseam bench llm`: int8 LLM decode and prefill against the memory bandwidth and the int8
//! GEMM throughput measured in the same run.

use std::io::Write;

use anyhow::Context;
use reseam::bench::llm as bench;
use reseam::llm::synthetic;

use super::{Common, build_note, size};
use crate::cli::UsageError;

#[derive(clap::Args, Debug)]
#[command(after_help = "Examples:\n  \
    reseam bench llm                        Llama-3.2-1B's shape, random int8 weights\n  \
    reseam bench llm --shape test --json    a tiny model, for a quick check")]
pub struct Args {
    /// Model shape: llama-3.2-1b, qwen2.5-1.5b, or test (tiny, for a quick check).
    #[arg(long, env = "RESEAM_BENCH_SHAPE", default_value = "llama-3.2-1b", value_parser = clap::builder::PossibleValuesParser::new(synthetic::SHAPES))]
    shape: String,

    /// Prompt length of the prefill measurement.
    #[arg(long, env = "RESEAM_BENCH_PREFILL_TOKENS", value_name = "N", default_value_t = 512)]
    prefill_tokens: usize,

    /// Tokens generated one forward each for the decode measurement.
    #[arg(long, env = "RESEAM_BENCH_DECODE_TOKENS", value_name = "N", default_value_t = 32)]
    decode_tokens: usize,

    /// Rows (M) of the int8 GEMM throughput measurement: one pass over all of the model's
    /// int8 products (its own weights) at M rows, against which the prefill is stated.
    #[arg(long, env = "RESEAM_BENCH_GEMM_ROWS", value_name = "M", default_value_t = 256)]
    gemm_rows: usize,

    /// Seconds of `bench-gemm`'s measurement of each of one layer's products (its
    /// `--min-time`), the third figure the prefill is stated against: one thread, warm
    /// bursts, times the threads.
    #[arg(long, env = "RESEAM_BENCH_MIN_TIME", value_name = "SECONDS", default_value_t = 0.2)]
    gemm_min_time: f64,

    /// Seed of the random weights.
    #[arg(long, env = "RESEAM_BENCH_SEED", default_value_t = 1)]
    seed: u64,

    #[command(flatten)]
    pub common: Common,
}

pub fn run(a: Args, out: &mut dyn Write) -> anyhow::Result<()> {
    let Args { shape, prefill_tokens, decode_tokens, gemm_rows, gemm_min_time, seed, common } = a;
    // The parser only lets listed names through.
    let spec = synthetic::shape(&shape).with_context(|| format!("unknown shape {shape}"))?;
    for (flag, v) in
        [("--prefill-tokens", prefill_tokens), ("--decode-tokens", decode_tokens), ("--gemm-rows", gemm_rows)]
    {
        if v == 0 {
            return Err(UsageError(format!("{flag} must be at least 1")).into());
        }
    }
    if !(gemm_min_time.is_finite() && gemm_min_time > 0.0) {
        return Err(UsageError(format!("--gemm-min-time {gemm_min_time} must be a positive number of seconds")).into());
    }
    let opts = bench::Options {
        shape_name: shape,
        shape: spec,
        prefill_tokens,
        decode_tokens,
        gemm_rows,
        bandwidth_bytes: size(&common)?,
        seed,
        bench_gemm_time: std::time::Duration::from_secs_f64(gemm_min_time),
    };
    if let Some(n) = build_note() {
        eprintln!("reseam: {n}");
    }
    let r = bench::run(&opts, &|msg| eprintln!("reseam: {msg}"))?;
    if common.json {
        writeln!(out, "{}", serde_json::to_string_pretty(&r)?)?;
        return Ok(());
    }
    writeln!(
        out,
        "model    {}: {:.3} B parameters, int8, kernel {}, {} threads (built in {:.1} s)",
        r.shape,
        r.parameters as f64 / 1e9,
        r.kernel,
        r.threads,
        r.build_seconds
    )?;
    writeln!(
        out,
        "memory   {:.1} GB/s read in turns with the decode ({:.3} GB before each token); {:.1} GB/s best of {} passes over {} MiB",
        r.memory_sustained,
        r.weight_bytes_per_token as f64 / 1e9,
        r.memory.best,
        r.memory.passes.len(),
        r.memory.buffer_bytes >> 20
    )?;
    writeln!(
        out,
        "decode   {:.2} tokens/s x {:.3} GB of weights/token = {:.1} GB/s = {:.0}% of the read in turns with it, {:.0}% of the best pass",
        r.decode_tokens_per_second,
        r.weight_bytes_per_token as f64 / 1e9,
        r.decode_bandwidth,
        100.0 * r.decode_fraction_sustained,
        100.0 * r.decode_fraction
    )?;
    writeln!(
        out,
        "prefill  {} tokens in {:.2} s = {:.1} tokens/s = {:.1} GMAC/s = {:.0}% of int8 GEMM at M={} ({:.1} GMAC/s)",
        r.prefill_tokens,
        r.prefill_seconds,
        r.prefill_tokens_per_second,
        r.prefill_gmacs,
        100.0 * r.prefill_fraction,
        r.gemm_rows,
        r.gemm_gmacs
    )?;
    writeln!(
        out,
        "         (GEMM: one pass over every layer's products; each product's best alone, {:.1} GMAC/s: prefill = {:.0}%)",
        r.gemm_burst_gmacs,
        100.0 * r.prefill_fraction_burst
    )?;
    writeln!(
        out,
        "         (bench-gemm --llm {} --m {}: {:.1} GMAC/s on one thread x {} threads = {:.1}: prefill = {:.0}%)",
        r.shape,
        r.gemm_rows,
        r.bench_gemm_gmacs_per_thread,
        r.threads,
        r.threads as f64 * r.bench_gemm_gmacs_per_thread,
        100.0 * r.prefill_fraction_bench_gemm
    )?;
    Ok(())
}
