//! `reseam bench translate`: posts/s, words/s and latency of the shared engine under many
//! concurrent clients, then one post at a time on the idle engine, with the process's memory.

use std::io::Write;
use std::path::PathBuf;

use reseam::bench::translate as bench;
use reseam::translate::TranslateOptions;

use crate::cli::UsageError;
use crate::cli::engine::{BatchArgs, EngineArgs};

#[derive(clap::Args, Debug)]
#[command(after_help = "Examples:\n  \
    reseam bench translate --models ~/.local/share/reseam/models --corpus posts.tsv\n  \
    reseam bench translate --corpus posts.tsv --clients 64 -n 5000 --out latency.tsv --json")]
pub struct Args {
    #[command(flatten)]
    pub engine: EngineArgs,

    /// Posts to send, one per line: `from<TAB>to<TAB>text` (`\n` in a text is a line break).
    #[arg(long, env = "BENCH_CORPUS", value_name = "FILE")]
    pub corpus: PathBuf,

    /// Requests of the throughput phase (the corpus is repeated as needed).
    #[arg(short = 'n', long = "requests", env = "BENCH_REQUESTS", value_name = "N", default_value_t = 3000)]
    pub requests: usize,

    /// Concurrent clients, each sending one post and waiting for its translation.
    #[arg(long, env = "BENCH_CLIENTS", value_name = "N", default_value_t = 64)]
    pub clients: usize,

    #[command(flatten)]
    pub batch: BatchArgs,

    /// Skip the idle-latency phase.
    #[arg(long, env = "BENCH_SKIP_LATENCY", value_parser = clap::builder::BoolishValueParser::new())]
    pub skip_latency: bool,

    /// Requests of the idle-latency phase (one at a time).
    #[arg(long, env = "BENCH_LATENCY_REQUESTS", value_name = "N", default_value_t = 300)]
    pub latency_requests: usize,

    /// Load every model before timing (always done: the flag is kept for the seed's
    /// BENCH_PRELOAD=1).
    #[arg(long, env = "BENCH_PRELOAD", value_parser = clap::builder::BoolishValueParser::new())]
    pub preload: bool,

    /// Per request: direction, characters, latency in ms (TSV).
    #[arg(long, env = "BENCH_OUT", value_name = "FILE.tsv")]
    pub out: Option<PathBuf>,

    /// Print the summary as one JSON object.
    #[arg(long, env = "RESEAM_BENCH_JSON")]
    pub json: bool,
}

pub fn run(a: Args, out: &mut dyn Write) -> anyhow::Result<()> {
    if a.requests == 0 || a.clients == 0 {
        return Err(UsageError("--requests and --clients must be at least 1".into()).into());
    }
    let posts = bench::read_corpus(&a.corpus)?;
    let opts = bench::Options {
        engine: TranslateOptions { max_batch: a.batch.max_batch.into(), ..a.engine.options("", "") },
        requests: a.requests,
        clients: a.clients,
        skip_latency: a.skip_latency,
        latency_requests: a.latency_requests,
    };
    let bar = super::Progress::new(a.requests, "posts");
    let progress = |done: usize, total: usize| bar.update(done, total);
    let profiling = reseam::profile::init_from_env();
    let r = bench::run(&posts, &opts, &progress)?;
    bar.finish();
    if let Some(path) = &a.out {
        let mut tsv = String::from("direction\tchars\tms\n");
        for s in &r.samples {
            tsv.push_str(&format!("{}\t{}\t{:.3}\n", s.direction, s.chars, s.ms));
        }
        reseam::paths::write_atomically(path, tsv.as_bytes())?;
    }
    let cpu = crate::cli::version::cpu_name();
    if a.json {
        super::json_with_cpu(out, &r, cpu)?;
    } else {
        writeln!(
            out,
            "{} posts over {} directions ({} models, loaded in {:.2} s), {} clients, {} threads, max batch {}, {} ({}), {}",
            r.posts, r.directions, r.models, r.load_s, r.clients, r.threads, r.max_batch, r.isa, r.arithmetic, cpu
        )?;
        writeln!(
            out,
            "throughput  {:.1} posts/s, {:.0} source words/s in {:.2} s; latency under load p50 {:.1} ms, p99 {:.1} ms",
            r.posts_per_s, r.words_per_s, r.seconds, r.p50_ms, r.p99_ms
        )?;
        if let (Some(p50), Some(p99)) = (r.idle_p50_ms, r.idle_p99_ms) {
            writeln!(out, "idle        one post at a time: p50 {p50:.2} ms, p99 {p99:.2} ms")?;
        }
        writeln!(
            out,
            "memory      RSS {:.0} MB (peak {:.0}): mapped {:.0} MB, anonymous {:.0} MB",
            r.rss_mb, r.peak_rss_mb, r.mapped_mb, r.anon_mb
        )?;
    }
    if profiling {
        eprint!("{}", reseam::profile::report());
    }
    Ok(())
}
