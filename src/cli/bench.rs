//! `reseam bench memory|llm`: this machine's memory read bandwidth, and int8 LLM decode and
//! prefill speed against it and against the GEMM kernels, measured in one run.

use std::io::Write;

use anyhow::Context;
use reseam::bench::memory as membw;
use reseam::llm::{Precision, bench, speculative, synthetic};

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
        common: Common,
    },
    /// The speculative-decoding cost model at a real shape: a random target (Llama-3.2-1B by
    /// default) with two drafts of its vocabulary, itself and a ~10x smaller random model;
    /// measured speedup against the prediction from the measured acceptance and c, per k.
    Speculate(SpeculateArgs),
}

#[derive(clap::Args, Debug)]
struct SpeculateArgs {
    /// Target shape: llama-3.2-1b, qwen2.5-1.5b, or test (tiny, for a quick check).
    #[arg(long, env = "RESEAM_BENCH_SHAPE", default_value = "llama-3.2-1b", value_parser = clap::builder::PossibleValuesParser::new(synthetic::SHAPES))]
    shape: String,

    /// The small draft has about 1/RATIO of the target's layer weights (same vocabulary).
    #[arg(long, env = "RESEAM_BENCH_DRAFT_RATIO", value_name = "RATIO", default_value_t = 10)]
    ratio: usize,

    /// Draft lengths, comma-separated.
    #[arg(short = 'k', long = "k", env = "RESEAM_BENCH_K", value_name = "K,...", value_delimiter = ',', default_values_t = [1, 2, 4, 6])]
    ks: Vec<usize>,

    /// Random prompts decoded per configuration.
    #[arg(long, env = "RESEAM_BENCH_PROMPTS", value_name = "N", default_value_t = 2)]
    prompts: usize,

    /// Tokens per random prompt.
    #[arg(long, env = "RESEAM_BENCH_PROMPT_TOKENS", value_name = "N", default_value_t = 16)]
    prompt_tokens: usize,

    /// Tokens generated per prompt (more: steadier figures, longer run).
    #[arg(long, env = "RESEAM_BENCH_MAX_NEW_TOKENS", value_name = "N", default_value_t = 48)]
    max_new_tokens: usize,

    /// Weights of the generated models: int8, bf16 or f32.
    #[arg(long, env = "RESEAM_PRECISION", value_name = "P", default_value = "int8", value_parser = parse_precision)]
    precision: Precision,

    /// Largest relative gap between measured and predicted speedup counted as agreement.
    #[arg(long, env = "RESEAM_BENCH_TOLERANCE", value_name = "FRACTION", default_value_t = 0.15)]
    tolerance: f64,

    /// Seed of the random weights and prompts.
    #[arg(long, env = "RESEAM_BENCH_SEED", default_value_t = 1)]
    seed: u64,

    /// Print the figures (and both full reports) as JSON instead of the table.
    #[arg(long, env = "RESEAM_BENCH_JSON")]
    json: bool,
}

fn parse_precision(s: &str) -> Result<Precision, String> {
    Precision::parse(s).ok_or_else(|| format!("{s:?} is not a precision (one of: int8, bf16, f32)"))
}

fn speculate(a: SpeculateArgs, out: &mut dyn Write) -> anyhow::Result<()> {
    // The parser only lets listed names through.
    let spec = synthetic::shape(&a.shape).with_context(|| format!("unknown shape {}", a.shape))?;
    if a.ratio == 0 {
        return Err(UsageError("--ratio must be at least 1".into()).into());
    }
    let opts = speculative::bench::Options {
        shape_name: a.shape,
        shape: spec,
        ratio: a.ratio,
        ks: a.ks,
        prompts: a.prompts,
        prompt_tokens: a.prompt_tokens,
        max_new_tokens: a.max_new_tokens,
        precision: a.precision,
        seed: a.seed,
        tolerance: a.tolerance,
    };
    if let Some(n) = build_note() {
        eprintln!("reseam: {n}");
    }
    let r = speculative::bench::run(&opts, &|msg| eprintln!("reseam: {msg}")).map_err(|e| match e {
        speculative::Error::Settings(m) => anyhow::Error::from(UsageError(m)),
        e => anyhow::Error::from(e),
    })?;
    if a.json {
        writeln!(out, "{}", serde_json::to_string_pretty(&r)?)?;
        return Ok(());
    }
    let pct = |x: Option<f64>| x.map_or("-".to_string(), |v| format!("{:.1}%", 100.0 * v));
    let num = |x: Option<f64>, d: usize| x.map_or("-".to_string(), |v| format!("{v:.d$}"));
    writeln!(
        out,
        "target {}: {:.3} B parameters, {}; small draft {:.3} B; {} threads; target alone {} tok/s",
        r.shape,
        r.target_parameters as f64 / 1e9,
        r.precision.name(),
        r.draft_parameters as f64 / 1e9,
        r.threads,
        r.baseline_tokens_per_s.iter().map(|t| num(*t, 2)).collect::<Vec<_>>().join(" / ")
    )?;
    writeln!(
        out,
        "{:<24} {:>2} {:>8} {:>6} {:>8} {:>8} {:>9} {:>6} {:>7} {:>11}",
        "draft", "k", "accept", "c", "tok/pass", "measured", "predicted", "gap", "within", "pred(costs)"
    )?;
    for row in &r.rows {
        writeln!(
            out,
            "{:<24} {:>2} {:>8} {:>6} {:>8} {:>7}x {:>8}x {:>6} {:>7} {:>10}x",
            row.draft.chars().take(24).collect::<String>(),
            row.k,
            pct(row.acceptance_rate),
            num(row.c, 3),
            num(row.tokens_per_pass, 2),
            num(row.measured_speedup, 3),
            num(row.predicted_speedup, 3),
            pct(row.relative_gap),
            if row.within_tolerance { "yes" } else { "NO" },
            num(row.predicted_speedup_measured_costs, 3),
        )?;
    }
    writeln!(
        out,
        "predicted = E(α̂,k)/(k·c+1) (Leviathan) from the acceptance and c measured in this run; within = |measured/predicted − 1| <= {:.0}%;\n\
         pred(costs) = the same gain over the measured round costs (verification of k+1 rows, translation, re-sync).",
        100.0 * r.tolerance
    )?;
    Ok(())
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
        Mode::Speculate(a) => speculate(a, &mut out)?,
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
        Mode::Llm { shape, prefill_tokens, decode_tokens, gemm_rows, gemm_min_time, seed, common } => {
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
                return Err(UsageError(format!(
                    "--gemm-min-time {gemm_min_time} must be a positive number of seconds"
                ))
                .into());
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
        }
    }
    Ok(())
}
