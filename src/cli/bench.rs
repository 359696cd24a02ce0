//! `reseam bench memory|llm`: this machine's memory read bandwidth, and int8 LLM decode and
//! prefill speed against it and against the GEMM kernels, measured in one run.

use std::io::Write;

use anyhow::Context;
use reseam::bench::memory as membw;
use reseam::llm::{bench, synthetic};

use super::UsageError;

#[derive(clap::Args, Debug)]
pub struct Args {
    #[command(subcommand)]
    mode: Mode,
}

#[derive(clap::Subcommand, Debug)]
enum Mode {
    /// Memory read bandwidth: all cores stream a buffer much larger than the caches.
    Memory {
        #[command(flatten)]
        common: Common,
    },
    /// int8 decode and prefill of a random-weight model at a real shape (made in memory),
    /// against the memory bandwidth and the int8 GEMM throughput measured in the same run.
    Llm {
        /// Model shape: llama-3.2-1b, qwen2.5-1.5b, or test (tiny, for a quick check).
        #[arg(long, env = "RESEAM_BENCH_SHAPE", default_value = "llama-3.2-1b", value_parser = clap::builder::PossibleValuesParser::new(synthetic::SHAPES))]
        shape: String,

        /// Prompt length of the prefill measurement.
        #[arg(long, env = "RESEAM_BENCH_PREFILL_TOKENS", value_name = "N", default_value_t = 512)]
        prefill_tokens: usize,

        /// Tokens generated one forward each for the decode measurement.
        #[arg(long, env = "RESEAM_BENCH_DECODE_TOKENS", value_name = "N", default_value_t = 32)]
        decode_tokens: usize,

        /// Rows (M) of the int8 GEMM throughput measurement on the model's layer shapes.
        #[arg(long, env = "RESEAM_BENCH_GEMM_ROWS", value_name = "M", default_value_t = 256)]
        gemm_rows: usize,

        /// Seed of the random weights.
        #[arg(long, env = "RESEAM_BENCH_SEED", default_value_t = 1)]
        seed: u64,

        #[command(flatten)]
        common: Common,
    },
}

#[derive(clap::Args, Debug)]
struct Common {
    /// Buffer of the bandwidth measurement in MiB (default: 1 GiB or 8x the largest cache).
    #[arg(long, env = "RESEAM_BENCH_SIZE_MIB", value_name = "MIB")]
    size_mib: Option<usize>,

    /// Print the figures as JSON instead of text.
    #[arg(long, env = "RESEAM_BENCH_JSON")]
    json: bool,
}

fn size(c: &Common) -> anyhow::Result<usize> {
    match c.size_mib {
        Some(0) => Err(UsageError("--size-mib must be at least 1".into()).into()),
        Some(m) => Ok(m << 20),
        None => Ok(membw::default_size()),
    }
}

fn build_note() -> Option<&'static str> {
    cfg!(debug_assertions).then_some("note: reseam was built without optimizations; measure with a release build")
}

pub fn run(args: Args) -> anyhow::Result<()> {
    let mut out = std::io::stdout().lock();
    match args.mode {
        Mode::Memory { common } => {
            let b = membw::measure(size(&common)?, 5);
            if common.json {
                writeln!(out, "{}", serde_json::to_string_pretty(&b)?)?;
            } else {
                writeln!(
                    out,
                    "memory read: {:.1} GB/s best, {:.1} GB/s median of {} passes over {} MiB, {} threads",
                    b.best,
                    b.median,
                    b.passes.len(),
                    b.buffer_bytes >> 20,
                    b.threads
                )?;
            }
        }
        Mode::Llm { shape, prefill_tokens, decode_tokens, gemm_rows, seed, common } => {
            // The parser only lets listed names through.
            let spec = synthetic::shape(&shape).with_context(|| format!("unknown shape {shape}"))?;
            for (flag, v) in
                [("--prefill-tokens", prefill_tokens), ("--decode-tokens", decode_tokens), ("--gemm-rows", gemm_rows)]
            {
                if v == 0 {
                    return Err(UsageError(format!("{flag} must be at least 1")).into());
                }
            }
            let opts = bench::Options {
                shape_name: shape,
                shape: spec,
                prefill_tokens,
                decode_tokens,
                gemm_rows,
                bandwidth_bytes: size(&common)?,
                seed,
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
                "memory   {:.1} GB/s read (best of {} passes over {} MiB)",
                r.memory.best,
                r.memory.passes.len(),
                r.memory.buffer_bytes >> 20
            )?;
            writeln!(
                out,
                "decode   {:.2} tokens/s x {:.3} GB of weights/token = {:.1} GB/s = {:.0}% of memory bandwidth",
                r.decode_tokens_per_second,
                r.weight_bytes_per_token as f64 / 1e9,
                r.decode_bandwidth,
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
        }
    }
    Ok(())
}
