//! `reseam bench speculate`: the speculative-decoding cost model at a real shape.

use std::io::Write;

use anyhow::Context;
use reseam::bench::speculate as bench;
use reseam::llm::{Precision, synthetic};

use super::build_note;
use crate::cli::UsageError;

#[derive(clap::Args, Debug)]
#[command(after_help = "Examples:\n  \
    reseam bench speculate\n  \
    reseam bench speculate --shape test -k 1,2,4 --json")]
pub struct Args {
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

pub fn run(a: Args, out: &mut dyn Write) -> anyhow::Result<()> {
    // The parser only lets listed names through.
    let spec = synthetic::shape(&a.shape).with_context(|| format!("unknown shape {}", a.shape))?;
    if a.ratio == 0 {
        return Err(UsageError("--ratio must be at least 1".into()).into());
    }
    let opts = bench::Options {
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
    let r = bench::run(&opts, &|msg| eprintln!("reseam: {msg}"))?;
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
