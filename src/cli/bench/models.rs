//! `reseam bench models`: load time, memory in use and idle, and waking an idle model, for
//! every model of a folder (or of synthetic models at Firefox's sizes). The measured phases run
//! in child processes of this binary (`--phase`), so that the heap the preparation used
//! (writing and packing models) is not counted in their memory.

use std::io::Write;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};

use anyhow::Context;
use reseam::bench::models as bench;
use reseam::marian::synthetic;
use reseam::translate::TranslateOptions;

use crate::cli::UsageError;
use crate::cli::engine::EngineArgs;

#[derive(clap::Args, Debug)]
#[command(after_help = "Examples:\n  reseam bench models --models ~/models\n  \
    reseam bench models --synthetic tiny,base-memory,base --count 16 --json")]
pub struct Args {
    // --models is the folder measured (with --synthetic, see --synthetic-dir); --no-pack is
    // refused, as the packs are what is measured.
    #[command(flatten)]
    pub engine: EngineArgs,

    /// First write random-weight models of these architectures (model i gets the i-th, in
    /// turn) in Mozilla's int8 format with 32,000-piece vocabularies and shortlists, under the
    /// pair names es-en, en-es, fr-en, en-fr, ...
    #[arg(long, env = "RESEAM_BENCH_SYNTHETIC", value_delimiter = ',', value_name = "ARCH,...", value_parser = clap::builder::PossibleValuesParser::new(synthetic::NAMES))]
    pub synthetic: Vec<String>,

    /// How many synthetic models.
    #[arg(long, env = "RESEAM_BENCH_COUNT", value_name = "N", default_value_t = 16)]
    pub count: usize,

    /// Where to write the synthetic models, kept after the run (default: a temporary folder,
    /// removed at the end). Files already holding the bytes they would get are left alone.
    #[arg(long, env = "RESEAM_BENCH_SYNTHETIC_DIR", value_name = "DIR")]
    pub synthetic_dir: Option<PathBuf>,

    /// Seed of the synthetic weights, vocabularies and shortlists.
    #[arg(long, env = "RESEAM_BENCH_SEED", value_name = "N", default_value_t = 1)]
    pub seed: u64,

    /// The sentence every model translates.
    #[arg(long, env = "RESEAM_BENCH_SENTENCE", value_name = "TEXT", default_value = bench::SENTENCE)]
    pub sentence: String,

    /// Skip the cold-cache load.
    #[arg(long, env = "RESEAM_BENCH_SKIP_COLD", value_parser = clap::builder::BoolishValueParser::new())]
    pub skip_cold: bool,

    /// Print the figures as one JSON object.
    #[arg(long, env = "RESEAM_BENCH_JSON")]
    pub json: bool,

    /// Run one measured phase in this process and print its JSON (what the parent runs).
    #[arg(long, hide = true, value_parser = ["cold", "warm"])]
    pub phase: Option<String>,
}

fn options(a: &Args, dir: &Path) -> bench::Options {
    bench::Options {
        engine: TranslateOptions { models: dir.to_path_buf(), ..a.engine.options("", "") },
        sentence: a.sentence.clone(),
    }
}

/// Runs `phase` in a child process of this binary and reads its JSON.
fn child<T: serde::de::DeserializeOwned>(a: &Args, dir: &Path, phase: &str) -> anyhow::Result<T> {
    let exe = std::env::current_exe().context("cannot find this program to run the measured phase")?;
    let mut c = Command::new(exe);
    c.args(["bench", "models", "--phase", phase, "--sentence", &a.sentence]);
    c.args(EngineArgs { models: Some(dir.to_path_buf()), ..a.engine.clone() }.to_args());
    c.env_remove("RESEAM_BENCH_SYNTHETIC").stdin(Stdio::null()).stdout(Stdio::piped()).stderr(Stdio::inherit());
    let out = c.output().with_context(|| format!("cannot start the {phase} phase"))?;
    if !out.status.success() {
        let msg = format!("the {phase} phase failed ({}); its error is above", out.status);
        return Err(if out.status.code() == Some(2) { UsageError(msg).into() } else { anyhow::anyhow!(msg) });
    }
    serde_json::from_slice(&out.stdout).with_context(|| format!("the {phase} phase printed no report"))
}

pub fn run(a: Args, out: &mut dyn Write) -> anyhow::Result<()> {
    if a.engine.pack.no_pack {
        return Err(UsageError("--no-pack: bench models measures the models' packs".into()).into());
    }
    let models = a.engine.models_dir();
    if let Some(phase) = &a.phase {
        let o = options(&a, &models);
        let json = match phase.as_str() {
            "cold" => serde_json::to_string(&bench::cold(&o)?)?,
            _ => serde_json::to_string(&bench::warm(&o)?)?,
        };
        writeln!(out, "{json}")?;
        return Ok(());
    }
    let synthetic = if a.synthetic.is_empty() {
        None
    } else {
        if a.count == 0 {
            return Err(UsageError("--count must be at least 1".into()).into());
        }
        let archs = a.synthetic.iter().filter_map(|n| synthetic::arch(n)).collect();
        Some(bench::Synthetic { archs, count: a.count, seed: a.seed })
    };
    // Synthetic models go to a temporary folder unless asked to keep them.
    let tmp;
    let dir = match (&synthetic, &a.synthetic_dir) {
        (Some(_), Some(d)) => d.clone(),
        (Some(_), None) => {
            tmp = tempfile::Builder::new().prefix("reseam-bench-models-").tempdir()?;
            tmp.path().to_path_buf()
        }
        (None, _) => models,
    };
    let progress = |what: &str| eprintln!("reseam: {what}");
    let prepared = bench::prepare(&dir, synthetic.as_ref(), a.engine.pack.pack_dir.as_deref(), &progress)?;
    let cold: Option<bench::Cold> = if a.skip_cold { None } else { Some(child(&a, &dir, "cold")?) };
    let warm: bench::Warm = child(&a, &dir, "warm")?;
    let r = bench::Report::new(&dir, &prepared, cold.as_ref(), &warm, synthetic.as_ref().map(|s| s.seed));
    let cpu = crate::cli::version::cpu_name();
    if a.json {
        super::json_with_cpu(out, &r, cpu)?;
        return Ok(());
    }
    let archs = r.architectures.iter().map(|(k, v)| format!("{k} {v}")).collect::<Vec<_>>().join(", ");
    writeln!(
        out,
        "{} models ({archs}), packs {:.0} MB, {} threads, {} ({}), {cpu}",
        r.models, r.pack_mb, r.threads, r.isa, r.arithmetic
    )?;
    let cold = match (r.load_cold_s, r.cold_cache) {
        (Some(s), Some(bench::Dropped::Fadvise)) => format!("{s:.2} s cold (page cache dropped with posix_fadvise)"),
        (Some(s), Some(bench::Dropped::DropCaches)) => format!("{s:.2} s cold (page cache dropped with drop_caches)"),
        _ if a.skip_cold => "cold not measured (--skip-cold)".into(),
        _ => "cold not measured (this process may not drop the page cache)".into(),
    };
    writeln!(out, "load    {:.3} s with a warm page cache, {cold}", r.load_s)?;
    writeln!(
        out,
        "        one model after the other: packs checked in {:.3} s (map, CRC-32 of every blob), vocabularies built in {:.3} s",
        r.check_s, r.vocab_s
    )?;
    writeln!(
        out,
        "in use  RSS {:.0} MB: mapped {:.0} MB (packs {:.0}), anonymous {:.0} MB",
        r.rss_mb, r.mapped_mb, r.packs_mb, r.anon_mb
    )?;
    writeln!(
        out,
        "idle    RSS {:.0} MB: mapped {:.0} MB (packs {:.0}), anonymous {:.0} MB",
        r.idle_rss_mb, r.idle_mapped_mb, r.idle_packs_mb, r.idle_anon_mb
    )?;
    let by_arch = |m: &std::collections::BTreeMap<String, f64>| {
        m.iter().map(|(k, v)| format!("{k} {v:.1}")).collect::<Vec<_>>().join(", ")
    };
    writeln!(
        out,
        "wake    slowest {:.1} ms ({}), median {:.1} ms; paging a whole pack back in: at most {:.1} ms",
        r.wake_ms,
        by_arch(&r.wake_ms_by_arch),
        r.wake_p50_ms,
        r.page_in_ms
    )?;
    writeln!(out, "        the same sentence on a model just used: {} ms", by_arch(&r.busy_ms_by_arch))?;
    if let Some(note) = super::build_note() {
        eprintln!("{note}");
    }
    Ok(())
}
