//! `reseam pack [PAIR | FOLDER]...`: writes (or, with `--check`, verifies) the packs of
//! translation models.

use std::io::IsTerminal;
use std::path::{Path, PathBuf};

use reseam::engine::registry::{installed, pair_name};
use reseam::marian::{ModelFiles, find, packed};
use reseam::pack::cache::WriteError;

use super::UsageError;

/// Packs translation models: writes `model.reseam` next to each model (or, when its folder is
/// read-only, into ~/.cache/reseam/packed), so that later runs map it instead of reading the
/// model files. `translate` packs on first use anyway; this does it ahead of time (after
/// `reseam fetch`, in an image build) and checks existing packs.
#[derive(clap::Args, Debug)]
#[command(after_help = "Examples:\n  reseam pack                 # every model under the models folder\n  \
    reseam pack es-en en-de\n  reseam pack --check --json ./models/es-en")]
pub struct Args {
    /// Language pairs (`es-en`) under the models folder, or model folders. None: every model
    /// under the models folder.
    pub targets: Vec<String>,

    /// A folder of `<from>-<to>/` model folders [default: the user data directory's
    /// reseam/models, e.g. ~/.local/share/reseam/models].
    #[arg(long, env = "MODELS_DIR", value_name = "DIR")]
    pub models: Option<PathBuf>,

    /// Verify the existing packs (sources unchanged, every blob's checksum) without writing;
    /// exit 1 if any is missing or bad.
    #[arg(long, env = "RESEAM_PACK_CHECK", value_parser = clap::builder::BoolishValueParser::new())]
    pub check: bool,

    /// One JSON object per model on stdout: {"model", "pack", "status", "why", "bytes"}.
    #[arg(long, env = "RESEAM_JSON", value_parser = clap::builder::BoolishValueParser::new())]
    pub json: bool,

    /// Keep packs in this folder (one subfolder per model) instead of next to the models.
    #[arg(long, env = "RESEAM_PACK_DIR", value_name = "DIR")]
    pub pack_dir: Option<PathBuf>,
}

fn targets(args: &Args, models: &Path) -> anyhow::Result<Vec<ModelFiles>> {
    if args.targets.is_empty() {
        let all: Vec<ModelFiles> = installed(models)?.into_iter().map(|(_, _, f)| f).collect();
        if all.is_empty() {
            return Err(UsageError(format!("no <from>-<to>/ model folders under {}", models.display())).into());
        }
        return Ok(all);
    }
    let mut out = Vec::new();
    for t in &args.targets {
        let path = Path::new(t);
        if let Some((from, to)) = pair_name(t)
            && !path.is_dir()
        {
            out.push(find(models, from, to, None)?);
        } else if path.is_dir() {
            let name = path.canonicalize()?.file_name().map(|n| n.to_string_lossy().into_owned()).unwrap_or_default();
            let found = match pair_name(&name) {
                Some((from, to)) => vec![find(path, from, to, None)?],
                None => installed(path)?.into_iter().map(|(_, _, f)| f).collect(),
            };
            if found.is_empty() {
                return Err(UsageError(format!("{t}: no model folder named <from>-<to> in or at it")).into());
            }
            out.extend(found);
        } else {
            return Err(UsageError(format!("{t}: neither a language pair like es-en nor a folder")).into());
        }
    }
    Ok(out)
}

pub fn run(args: Args) -> anyhow::Result<()> {
    let models = args.models.clone().unwrap_or_else(reseam::paths::default_models_dir);
    let all = targets(&args, &models)?;
    let bar = (std::io::stderr().is_terminal() && !args.json).then(|| {
        let b = indicatif::ProgressBar::new(all.len() as u64);
        b.set_style(
            indicatif::ProgressStyle::with_template("{bar:30} {pos}/{len} {msg}")
                .unwrap_or_else(|_| indicatif::ProgressStyle::default_bar()),
        );
        b
    });
    let mut failed = 0;
    for files in &all {
        if let Some(b) = &bar {
            b.set_message(files.dir.display().to_string());
        }
        let pack_dir = args.pack_dir.as_deref();
        let (status, pack, why) = match packed::check(files, pack_dir) {
            Ok(f) => ("valid", Some(f.path().to_path_buf()), String::new()),
            Err((at, why)) if args.check => {
                failed += 1;
                ("bad", Some(at), why.to_string())
            }
            Err((_, why)) => match packed::write(files, pack_dir) {
                Ok(p) => ("written", Some(p), why.to_string()),
                Err(WriteError::Build(e)) => {
                    failed += 1;
                    ("failed", None, e.to_string())
                }
                Err(WriteError::Nowhere(v)) => {
                    failed += 1;
                    let why = v.iter().map(|(p, e)| format!("{}: {e}", p.display())).collect::<Vec<_>>();
                    ("failed", None, format!("no place could take the pack: {}", why.join("; ")))
                }
            },
        };
        let bytes = pack.as_ref().and_then(|p| std::fs::metadata(p).ok()).map(|m| m.len());
        let line = if args.json {
            serde_json::json!({
                "model": files.dir, "pack": pack, "status": status,
                "why": (!why.is_empty()).then_some(&why), "bytes": bytes,
            })
            .to_string()
        } else {
            let at = pack.as_ref().map(|p| p.display().to_string()).unwrap_or_default();
            match status {
                "valid" => format!("{}: valid pack {at}", files.dir.display()),
                "written" => format!("{}: packed into {at} ({why})", files.dir.display()),
                "bad" => format!("{}: bad pack {at}: {why}", files.dir.display()),
                _ => format!("{}: not packed: {why}", files.dir.display()),
            }
        };
        match &bar {
            Some(b) => b.println(&line),
            None if args.json => println!("{line}"),
            None => eprintln!("{line}"),
        }
        if let Some(b) = &bar {
            b.inc(1);
        }
    }
    if let Some(b) = &bar {
        b.finish_and_clear();
    }
    if failed > 0 {
        anyhow::bail!(
            "{failed} of {} models {}",
            all.len(),
            if args.check { "have no valid pack" } else { "could not be packed" }
        );
    }
    Ok(())
}
