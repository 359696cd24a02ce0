//! `reseam bench-gemm`: arguments and output; the work is `reseam::bench::gemm::run`.

use std::io::{IsTerminal, Write};
use std::time::Duration;

use anyhow::Context;
use reseam::bench::gemm::{self, Event, IsaChoice, Options};
use reseam::llm::synthetic;
use reseam_kernels::{Arithmetic, Isa};

use super::UsageError;

/// Measures the int8 matrix products at the models' shapes: multiply-adds per cycle, GMAC/s and
/// the fraction of the instruction set's peak, measured at start by a register-only loop of the
/// kernel's product step.
#[derive(clap::Args, Debug)]
#[command(after_help = "Examples:\n  \
    reseam bench-gemm                       the live kernels at the translation models' shapes\n  \
    reseam bench-gemm --isa all --json      every instruction set this CPU runs, as JSON lines\n  \
    reseam bench-gemm --llm llama-3.2-1b --m 256")]
pub struct Args {
    /// One JSON object per line (isa, kernel, arithmetic, shape, m, n, k, gmacs, macs_per_cycle,
    /// peak_macs_per_cycle, peak_fraction, ...) instead of a table; peaks go to stderr.
    #[arg(long, env = "RESEAM_BENCH_JSON")]
    json: bool,

    /// Kernels to measure: `live` (the ones reseam uses here, see RESEAM_MT_ISA), `all` (every
    /// instruction set this CPU runs), or one of reference, avx2, avxvnni, avx512bw,
    /// avx512vnni, amx, neon.
    #[arg(long, env = "RESEAM_BENCH_ISA", default_value = "live", value_name = "ISA")]
    isa: String,

    /// Which arithmetic to measure: exact, saturating, or both.
    #[arg(long, env = "RESEAM_BENCH_ARITHMETIC", default_value = "both", value_parser = ["exact", "saturating", "both"])]
    arithmetic: String,

    /// Rows per product (sentences or tokens in flight), comma-separated.
    #[arg(long, env = "RESEAM_BENCH_M", value_delimiter = ',', default_value = "1,8,64,256", value_name = "M,...")]
    m: Vec<usize>,

    /// Translation-model widths whose shapes to measure (tiny 256, base-memory 384, base 512),
    /// comma-separated. Default: 256,384,512, or none when --llm is given.
    #[arg(long, env = "RESEAM_BENCH_DIMS", value_delimiter = ',', value_name = "D,...")]
    dims: Option<Vec<usize>>,

    /// Decoder LLMs whose layer products to measure (llm-qkv, llm-o, llm-gate-up, llm-down, as
    /// reseam fuses them), comma-separated; `bench llm` states its prefill against these.
    #[arg(long, env = "RESEAM_BENCH_LLM", value_delimiter = ',', value_parser = synthetic::SHAPES, value_name = "SHAPE,...")]
    llm: Vec<String>,

    /// Only these shapes (comma-separated): attn-out (d×d), qkv (d×3d), ffn-up, ffn-down,
    /// logits-shortlist (d×1200), logits-full (d×32000); of an LLM, llm-qkv, llm-o,
    /// llm-gate-up, llm-down. Default: all.
    #[arg(long, env = "RESEAM_BENCH_GEMM_SHAPE", value_delimiter = ',', value_parser = clap::builder::PossibleValuesParser::new(gemm::shape_names()), value_name = "NAME,...")]
    shape: Vec<String>,

    /// Seconds to spend on each measurement (the best of three runs is kept).
    #[arg(long, env = "RESEAM_BENCH_MIN_TIME", default_value = "0.2", value_name = "SECONDS")]
    min_time: f64,
}

/// Shown under `--help`: which kernel serves which arithmetic on this CPU.
pub fn after_help() -> String {
    match reseam_kernels::dispatch::kernels() {
        Ok(k) => format!("Kernels on this CPU ({}):\n{}", k.name(), indent(&k.describe())),
        Err(e) => format!("Kernels: {e}"),
    }
}

fn indent(s: &str) -> String {
    s.lines().map(|l| format!("  {l}\n")).collect()
}

pub fn run(args: Args) -> anyhow::Result<()> {
    let isa = match args.isa.trim() {
        "live" => IsaChoice::Live,
        "all" => IsaChoice::All,
        name => IsaChoice::One(Isa::parse(name).ok_or_else(|| {
            UsageError(format!(
                "--isa {name:?} is not an instruction set (live, all, reference, avx2, avxvnni, avx512bw, avx512vnni, amx, neon)"
            ))
        })?),
    };
    if !(args.min_time.is_finite() && args.min_time > 0.0) {
        return Err(UsageError(format!("--min-time {} must be a positive number of seconds", args.min_time)).into());
    }
    let opts = Options {
        isa,
        arithmetic: match args.arithmetic.as_str() {
            "exact" => Some(Arithmetic::Exact),
            "saturating" => Some(Arithmetic::Saturating),
            _ => None,
        },
        m: args.m,
        dims: args.dims.unwrap_or_else(|| if args.llm.is_empty() { vec![256, 384, 512] } else { Vec::new() }),
        // The parser only lets listed names through.
        llms: args.llm.iter().filter_map(|name| synthetic::shape(name)).collect(),
        shapes: args.shape,
        min_time: Duration::from_secs_f64(args.min_time),
    };
    let json = args.json;
    let tty = std::io::stderr().is_terminal();
    let mut bar: Option<indicatif::ProgressBar> = None;
    let mut out = std::io::stdout().lock();
    let mut failure: Option<std::io::Error> = None;
    let mut write = |bar: &Option<indicatif::ProgressBar>, line: String, to_err: bool| {
        let mut put = || {
            if to_err {
                eprintln!("{line}");
                Ok(())
            } else {
                writeln!(out, "{line}").and_then(|_| out.flush())
            }
        };
        let r = match bar {
            Some(b) => b.suspend(put),
            None => put(),
        };
        if let (Err(e), None) = (r, &failure) {
            failure = Some(e);
        }
    };
    let result = gemm::run(&opts, &mut |event| match event {
        Event::Start { clock, jobs } => {
            if tty {
                let b = indicatif::ProgressBar::new(jobs as u64);
                b.set_style(
                    indicatif::ProgressStyle::with_template("{bar:30} {pos}/{len} {msg}")
                        // The template is a constant that parses.
                        .expect("progress template"),
                );
                bar = Some(b);
            }
            let cpu = super::version::cpu_name();
            let how = if clock.source == "tsc" {
                "TSC cycles (the time-stamp counter's fixed rate; a turbo core does more per TSC cycle)"
            } else {
                "estimated core cycles (timed chain of dependent adds)"
            };
            let head = format!("cpu: {cpu}\ncycles: {how} at {:.3} GHz", clock.hz / 1e9);
            write(&bar, head, json);
        }
        Event::Group { isa, kernel, arithmetic, peak } => {
            let line = match peak {
                Some(p) => format!(
                    "{isa}, {arithmetic} arithmetic: {kernel} kernel; peak of its step ({}): {:.1} MAC/cycle, {:.1} GMAC/s",
                    p.instructions, p.macs_per_cycle, p.gmacs
                ),
                None => format!("{isa}, {arithmetic} arithmetic: {kernel} kernel (no product instruction, no peak)"),
            };
            write(&bar, String::new(), json);
            write(&bar, line, json);
            if !json {
                write(&bar, header(), false);
            }
        }
        Event::Measuring { done, label } => match &bar {
            Some(b) => {
                b.set_position(done as u64);
                b.set_message(label);
            }
            None => eprintln!("bench-gemm: {}: {label}", done + 1),
        },
        Event::Row(r) => {
            let line = if json {
                // A struct of numbers and strings always serializes.
                serde_json::to_string(&r).expect("row serializes")
            } else {
                format!(
                    "{:<12} {:<11} {:<10} {:<17} {:>6} {:>6} {:>6} {:>8.1} {:>9.1} {:>6}",
                    r.kernel,
                    r.arithmetic,
                    r.isa,
                    format!("{}/{}", r.shape, r.dim),
                    r.m,
                    r.k,
                    r.n,
                    r.gmacs,
                    r.macs_per_cycle,
                    r.peak_fraction.map(|f| format!("{:.0}%", f * 100.0)).unwrap_or_else(|| "-".into())
                )
            };
            write(&bar, line, false);
        }
    });
    if let Some(b) = bar {
        b.finish_and_clear();
    }
    if let Some(e) = failure {
        return Err(e).context("writing the results");
    }
    result?;
    Ok(())
}

fn header() -> String {
    format!(
        "{:<12} {:<11} {:<10} {:<17} {:>6} {:>6} {:>6} {:>8} {:>9} {:>6}",
        "kernel", "arithmetic", "isa", "shape/dim", "m", "k", "n", "GMAC/s", "MAC/cycle", "peak"
    )
}
