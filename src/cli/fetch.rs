//! `reseam fetch`: Firefox Translations models into the models folder, from Mozilla's server or a
//! mirror.

use std::io::Write;
use std::path::PathBuf;
use std::time::Duration;

use reseam::fetch::{self, FetchOptions, NetConfig, ProgressMode, Source, human_bytes};

#[derive(clap::Args, Debug)]
#[command(after_help = "Examples:\n  \
    reseam fetch es,ja                      es-en, en-es, ja-en and en-ja\n  \
    reseam fetch es-de                      es-en and en-de (Spanish to German through English)\n  \
    reseam fetch --list                     what the source offers\n  \
    reseam fetch --mirror /media/usb es     a folder for `--source /media/usb` on an offline machine")]
pub struct Args {
    /// Languages (each in both directions with English) or from-to pairs, comma-separated:
    /// `es,ja`, `es-de`, `zh-Hant`. Pairs without a direct model go through English.
    #[arg(value_name = "LANGS", required_unless_present = "list")]
    langs: Option<String>,

    /// The models folder: one `<from>-<to>/` folder per pair, with Firefox's file names
    /// [default: the user data directory's reseam/models]
    #[arg(long, env = "MODELS_DIR", value_name = "DIR")]
    models: Option<PathBuf>,

    #[command(flatten)]
    source: SourceArgs,

    /// Print the pairs the source offers (architecture, version, download size) and which are
    /// installed, instead of fetching
    #[arg(long, conflicts_with = "mirror")]
    list: bool,

    /// Write the records and compressed files LANGS needs into DIR, in the server's layout,
    /// instead of installing them; then use `--source DIR` elsewhere
    #[arg(long, value_name = "DIR")]
    mirror: Option<PathBuf>,
}

/// Where models come from and how to download them: shared by `fetch` and by `translate`, which
/// fetches a missing pair on first use (`#[command(flatten)]` it, then call [`SourceArgs::options`]).
#[derive(clap::Args, Debug, Clone)]
pub struct SourceArgs {
    /// Where models come from: the /v1 root of a Remote Settings server (as Firefox reads it), or a
    /// folder written by --mirror (for machines without internet)
    #[arg(long, env = "RESEAM_MODELS_SOURCE", value_name = "URL|DIR", default_value = fetch::PRODUCTION)]
    source: String,

    /// Firefox release channel whose choice to follow (record filters pick alpha and beta models
    /// for nightly and beta)
    #[arg(long, env = "RESEAM_MODELS_CHANNEL", default_value = "release",
        value_parser = ["release", "esr", "beta", "aurora", "nightly", "default"])]
    channel: String,

    /// Also take alpha and beta models (as Firefox nightly does); same as --channel nightly
    #[arg(long, env = "RESEAM_ALLOW_PRERELEASE")]
    allow_prerelease: bool,

    /// Retries after a network error, a timeout or a server error (5xx), waiting longer each
    /// time; a download that makes progress keeps going
    #[arg(long, env = "RESEAM_FETCH_RETRIES", default_value_t = 4, value_name = "N")]
    retries: u32,

    /// Seconds to wait for a connection, an answer, or the next bytes of a download
    #[arg(long, env = "RESEAM_FETCH_TIMEOUT", default_value_t = 30, value_name = "SECS",
        value_parser = clap::value_parser!(u64).range(1..))]
    timeout: u64,
}

impl SourceArgs {
    /// Fetch options for the models folder `models` (progress: bars on a terminal, lines otherwise).
    pub fn options(&self, models: PathBuf, verbose: bool) -> FetchOptions {
        let mut opts = FetchOptions::new(models);
        opts.source = Source::parse(&self.source);
        opts.policy.env.channel = if self.allow_prerelease { "nightly".into() } else { self.channel.clone() };
        opts.net = NetConfig { retries: self.retries, timeout: Duration::from_secs(self.timeout) };
        opts.progress = ProgressMode::Auto;
        opts.verbose = verbose;
        opts
    }
}

pub fn run(args: Args, verbose: bool) -> anyhow::Result<()> {
    let models = args.models.clone().unwrap_or_else(reseam::paths::default_models_dir);
    let opts = args.source.options(models, verbose);

    let mut out = std::io::stdout().lock();
    if args.list {
        let rows = fetch::list(&opts)?;
        writeln!(
            out,
            "{:<14} {:<12} {:<9} {:>9} {:>9}  installed",
            "pair", "architecture", "version", "download", "on disk"
        )?;
        for r in rows {
            let pair = format!("{}-{}", r.source_language, r.target_language);
            let arch = match &r.variant {
                Some(v) => format!("{} ({v})", r.architecture),
                None => r.architecture.clone(),
            };
            let installed = match r.installed_version {
                Some(v) if v == r.version => "yes".to_string(),
                Some(v) => format!("{v} (update available)"),
                None => "-".to_string(),
            };
            writeln!(
                out,
                "{pair:<14} {arch:<12} {:<9} {:>9} {:>9}  {installed}",
                r.version,
                human_bytes(r.download_size),
                human_bytes(r.installed_size)
            )?;
        }
        return Ok(());
    }
    // clap requires LANGS unless --list.
    let langs = args.langs.as_deref().unwrap_or_default();
    if let Some(dir) = &args.mirror {
        let m = fetch::mirror(&opts, langs, dir)?;
        writeln!(
            out,
            "{}: {} pairs, {} files downloaded ({}), {} already there",
            dir.display(),
            m.pairs,
            m.downloaded,
            human_bytes(m.bytes),
            m.kept
        )?;
        return Ok(());
    }
    for p in fetch::fetch(&opts, langs)? {
        writeln!(
            out,
            "{}-{}\t{}\t{}\t{}",
            p.source_language,
            p.target_language,
            p.architecture,
            p.version,
            p.installed.folder.display()
        )?;
    }
    Ok(())
}
