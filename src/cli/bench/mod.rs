//! `reseam bench MODE`: one file per mode (the measurements are in `reseam::bench`).

mod llm;
mod memory;
mod models;
mod serve;
mod speculate;
mod translate;

use reseam::bench::memory as membw;

use super::UsageError;

#[derive(clap::Args, Debug)]
#[command(after_help = "Examples:\n  \
    reseam bench memory\n  \
    reseam bench llm --shape test\n  \
    reseam bench translate --corpus posts.tsv")]
pub struct Args {
    #[command(subcommand)]
    mode: Mode,
}

#[derive(clap::Subcommand, Debug)]
enum Mode {
    /// Memory read bandwidth: all cores stream a buffer much larger than the caches.
    Memory(memory::Args),
    /// int8 decode and prefill of a random-weight model at a real shape (made in memory),
    /// against the memory bandwidth and the int8 GEMM throughput measured in the same run.
    Llm(llm::Args),
    /// The speculative-decoding cost model at a real shape: a random target (Llama-3.2-1B by
    /// default) with two drafts of its vocabulary, itself and a ~10x smaller random model;
    /// measured speedup against the prediction from the measured acceptance and c, per k.
    Speculate(speculate::Args),
    /// The translation service's benchmark: posts of a corpus through one shared engine from
    /// many concurrent clients (posts/s, latency under load), then one post at a time on the
    /// idle engine, with the process's memory.
    Translate(translate::Args),
    /// A running server over HTTP (`reseam serve`, or any server of the seed's API): many
    /// concurrent clients post a corpus to /v1/translate; requests/s, posts/s, latency, failures,
    /// and the server's memory from its /metrics.
    Serve(serve::Args),
    /// Every model of a folder (or synthetic ones at Firefox's sizes) through the registry:
    /// load time with a warm and a cold page cache, memory with every model used once and with
    /// every model idle, and the first translation of an idle model.
    Models(models::Args),
}

#[derive(clap::Args, Debug)]
pub struct Common {
    /// Buffer of the bandwidth measurement in MiB (default: 1 GiB or 8x the largest cache).
    #[arg(long, env = "RESEAM_BENCH_SIZE_MIB", value_name = "MIB")]
    pub size_mib: Option<usize>,

    /// Print the figures as JSON instead of text.
    #[arg(long, env = "RESEAM_BENCH_JSON")]
    pub json: bool,
}

pub(super) fn size(c: &Common) -> anyhow::Result<usize> {
    match c.size_mib {
        Some(0) => Err(UsageError("--size-mib must be at least 1".into()).into()),
        Some(m) => Ok(m << 20),
        None => Ok(membw::default_size()),
    }
}

pub(super) fn build_note() -> Option<&'static str> {
    cfg!(debug_assertions).then_some("note: reseam was built without optimizations; measure with a release build")
}

pub fn run(args: Args) -> anyhow::Result<()> {
    let mut out = std::io::stdout().lock();
    match args.mode {
        Mode::Memory(a) => memory::run(a, &mut out),
        Mode::Llm(a) => llm::run(a, &mut out),
        Mode::Speculate(a) => speculate::run(a, &mut out),
        Mode::Translate(a) => translate::run(a, &mut out),
        Mode::Serve(a) => serve::run(a, &mut out),
        Mode::Models(a) => models::run(a, &mut out),
    }
}

/// Progress of `total` items named `unit`: a bar on a terminal, otherwise a plain line at every
/// tenth (bench translate, bench serve).
pub(super) struct Progress {
    bar: Option<indicatif::ProgressBar>,
    step: usize,
    unit: &'static str,
}

impl Progress {
    pub(super) fn new(total: usize, unit: &'static str) -> Progress {
        use std::io::IsTerminal;
        let bar = std::io::stderr().is_terminal().then(|| {
            let b = indicatif::ProgressBar::new(total as u64);
            b.set_style(
                indicatif::ProgressStyle::with_template(&format!(
                    "{{bar:40}} {{pos}}/{{len}} {unit} ({{per_sec}}) {{elapsed}}"
                ))
                .unwrap_or_else(|_| indicatif::ProgressStyle::default_bar()),
            );
            b
        });
        Progress { bar, step: (total / 10).max(1), unit }
    }

    pub(super) fn update(&self, done: usize, total: usize) {
        match &self.bar {
            Some(b) => b.set_position(done as u64),
            None if done.is_multiple_of(self.step) || done == total => {
                eprintln!("reseam: {done}/{total} {}", self.unit)
            }
            None => {}
        }
    }

    pub(super) fn finish(&self) {
        if let Some(b) = &self.bar {
            b.finish_and_clear();
        }
    }
}

/// A report as one JSON line with this machine's CPU added (what `bench translate`, `serve` and
/// `models` print with --json).
fn json_with_cpu(out: &mut dyn std::io::Write, report: &impl serde::Serialize, cpu: String) -> anyhow::Result<()> {
    let mut v = serde_json::to_value(report)?;
    v["cpu"] = serde_json::Value::String(cpu);
    writeln!(out, "{}", serde_json::to_string(&v)?)?;
    Ok(())
}
