//! `reseam bench serve`: a running server under many concurrent HTTP clients.

use std::io::Write;
use std::path::PathBuf;
use std::time::Duration;

use reseam::bench::serve as bench;

#[derive(clap::Args, Debug)]
#[command(after_help = "Examples:\n  reseam serve --port 8080 &\n  \
    reseam bench serve --url http://127.0.0.1:8080 --corpus posts.tsv -n 10000 --clients 64")]
pub struct Args {
    /// The server's root URL.
    #[arg(long, env = "BENCH_URL", default_value = "http://127.0.0.1:8080")]
    pub url: String,

    /// Posts to send, one per line: `from<TAB>to<TAB>text` (`\n` in a text is a line break).
    #[arg(long, env = "BENCH_CORPUS", value_name = "FILE")]
    pub corpus: PathBuf,

    /// Requests to send (the corpus is repeated as needed).
    #[arg(short = 'n', long = "requests", env = "BENCH_REQUESTS", value_name = "N", default_value_t = 10_000)]
    pub requests: usize,

    /// Concurrent clients, each on its own connection, sending one request and waiting for it.
    #[arg(long, env = "BENCH_CLIENTS", value_name = "N", default_value_t = 64)]
    pub clients: usize,

    /// Posts per request (consecutive corpus lines of one direction).
    #[arg(long, env = "BENCH_TEXTS", value_name = "N", default_value_t = 1)]
    pub texts: usize,

    /// The server's token, if it needs one.
    #[arg(long, env = "TRANSLATE_TOKEN", hide_env_values = true)]
    pub token: Option<String>,

    /// Seconds a request may take before it counts as failed.
    #[arg(long, env = "BENCH_TIMEOUT", value_name = "SECS", default_value_t = 60)]
    pub timeout: u64,

    /// Write each corpus line's translation (`index<TAB>translation`, `\n` escaped), for
    /// comparing with `reseam translate`.
    #[arg(long, env = "BENCH_OUT", value_name = "FILE.tsv")]
    pub out: Option<PathBuf>,

    /// Print the summary as one JSON object.
    #[arg(long, env = "RESEAM_BENCH_JSON")]
    pub json: bool,
}

pub fn run(a: Args, out: &mut dyn Write) -> anyhow::Result<()> {
    let posts = reseam::bench::translate::read_corpus(&a.corpus)?;
    let opts = bench::Options {
        url: a.url,
        requests: a.requests,
        clients: a.clients,
        texts_per_request: a.texts,
        token: a.token,
        timeout: Duration::from_secs(a.timeout.max(1)),
    };
    let bar = super::Progress::new(a.requests, "requests");
    let progress = |done: usize, total: usize| bar.update(done, total);
    let r = bench::run(&posts, &opts, &progress)?;
    bar.finish();
    if let Some(path) = &a.out {
        let mut tsv = String::new();
        for (i, t) in r.translations.iter().enumerate() {
            if let Some(t) = t {
                tsv.push_str(&format!("{i}\t{}\n", t.replace('\\', "\\\\").replace('\n', "\\n")));
            }
        }
        reseam::paths::write_atomically(path, tsv.as_bytes())?;
    }
    let cpu = crate::cli::version::cpu_name();
    if a.json {
        super::json_with_cpu(out, &r, cpu)?;
    } else {
        let s = &r.server;
        writeln!(
            out,
            "{} requests ({} posts) over {} directions from {} clients; server: {} threads, {} ({}); client and server on {}",
            r.requests, r.posts, r.directions, r.clients, s["threads"], s["isa"], s["arithmetic"], cpu
        )?;
        writeln!(
            out,
            "throughput  {:.1} requests/s, {:.1} posts/s in {:.2} s; latency p50 {:.1} ms, p90 {:.1} ms, p99 {:.1} ms, max {:.1} ms",
            r.requests_per_s, r.posts_per_s, r.seconds, r.p50_ms, r.p90_ms, r.p99_ms, r.max_ms
        )?;
        if let (Some(rss), Some(mapped)) = (r.server_rss_mb, r.server_mapped_mb) {
            writeln!(out, "server      RSS {rss:.0} MB, of it mapped weights {mapped:.0} MB")?;
        }
        writeln!(out, "failures    {} failed requests, {} posts translated two ways", r.failures, r.mismatches)?;
        for f in &r.failure_samples {
            writeln!(out, "  {f}")?;
        }
    }
    if r.failures > 0 || r.mismatches > 0 {
        anyhow::bail!("{} requests failed and {} posts came back two ways", r.failures, r.mismatches);
    }
    Ok(())
}
