//! Firefox Translations models on disk, verified, from the source Firefox uses or a mirror.
//!
//! The path: a source (`source`: Remote Settings server or mirror folder) → its records
//! (`records`: parsed, filtered with `jexl` as the release channel would, versions chosen with
//! `version` as Firefox does) → the pairs asked for (`lang`: languages, pairs, pivoting through
//! English) → `install` (download, sha256 and size checks, zstd, rename into
//! `<models>/<from>-<to>/` with Firefox's file names) → `manifest` (what is installed).
//!
//! Entry points: [`fetch`] (the `reseam fetch` command), [`ensure_pair`] (what `translate` calls
//! for a pair it needs), [`installed_pair`] (offline lookup), [`list`] and [`mirror`].

mod error;
mod install;
pub mod jexl;
mod manifest;
mod mirror;
mod progress;
pub mod records;
mod source;
pub mod tags;
pub mod version;

use std::path::{Path, PathBuf};
use std::time::Duration;

pub use error::FetchError;
pub use install::Installed;
pub use manifest::{Manifest, installed, installed_pair};
pub use mirror::Mirrored;
pub use progress::{ProgressMode, human_bytes};
pub use records::{PairModels, Policy};
pub use source::{NetConfig, PRODUCTION, Source};

use install::Ctx;
use progress::Reporter;
use records::Offer;
use source::Opened;
use tags::{PIVOT, Want};

/// Everything fetching needs; [`FetchOptions::new`] gives Firefox release's choices.
#[derive(Debug, Clone)]
pub struct FetchOptions {
    /// The folder of `<from>-<to>/` folders.
    pub models_dir: PathBuf,
    pub source: Source,
    /// Channel and OS for filter expressions, accepted model majors.
    pub policy: Policy,
    pub net: NetConfig,
    pub progress: ProgressMode,
    /// Debug lines: records left out and why, retries.
    pub verbose: bool,
}

impl FetchOptions {
    pub fn new(models_dir: impl Into<PathBuf>) -> FetchOptions {
        FetchOptions {
            models_dir: models_dir.into(),
            source: Source::Url(PRODUCTION.to_string()),
            policy: Policy::default(),
            net: NetConfig { retries: 4, timeout: Duration::from_secs(30) },
            progress: ProgressMode::Auto,
            verbose: false,
        }
    }
}

/// One installed pair, as `reseam fetch` reports it.
#[derive(Debug, Clone)]
pub struct FetchedPair {
    pub source_language: String,
    pub target_language: String,
    pub architecture: String,
    pub version: String,
    pub installed: Installed,
}

/// `reseam fetch LANGS`: installs every pair LANGS needs (languages in both directions with
/// English, `from-to` pairs directly or through English), downloading only what is missing.
pub fn fetch(opts: &FetchOptions, langs: &str) -> Result<Vec<FetchedPair>, FetchError> {
    let rep = Reporter::new(opts.progress, opts.verbose);
    let (src, offer) = load(opts, &rep)?;
    let pairs = plan(&offer, langs, src.source(), &rep)?;
    let ctx = Ctx { src: &src, rep: &rep };
    pairs
        .into_iter()
        .map(|p| {
            Ok(FetchedPair {
                source_language: p.source_language.clone(),
                target_language: p.target_language.clone(),
                architecture: p.architecture.clone(),
                version: p.version.clone(),
                installed: install::install_pair(&ctx, &opts.models_dir, p)?,
            })
        })
        .collect()
}

/// The folders that translate `from`→`to`, in the order to run them: one for a direct model, or
/// `from`→en then en→`to`. Complete installed folders are used as they are, without touching the
/// network; otherwise the records are read from `opts.source` and the missing pair(s) installed,
/// with progress on stderr.
///
/// For `translate`: call [`installed_pair`] under `--offline`, this otherwise.
pub fn ensure_pair(opts: &FetchOptions, from: &str, to: &str) -> Result<Vec<PathBuf>, FetchError> {
    match installed_pair(&opts.models_dir, from, to) {
        Ok(folders) => return Ok(folders),
        // Bad LANGS stay errors; a pair that is not installed yet is what this installs.
        Err(e @ FetchError::Langs(_)) => return Err(e),
        Err(_) => {}
    }
    if tags::tags_match(from, to) {
        return Err(FetchError::Langs(format!("{from}→{to}: the source and target languages are the same")));
    }
    let rep = Reporter::new(opts.progress, opts.verbose);
    let (src, offer) = load(opts, &rep)?;
    let route = offer.route(from, to).map_err(|(a, b)| not_offered(&offer, &a, &b, src.source()))?;
    let ctx = Ctx { src: &src, rep: &rep };
    route.into_iter().map(|p| Ok(install::install_pair(&ctx, &opts.models_dir, p)?.folder)).collect()
}

/// One line of `reseam fetch --list`.
#[derive(Debug, Clone)]
pub struct Listing {
    pub source_language: String,
    pub target_language: String,
    pub variant: Option<String>,
    pub architecture: String,
    pub version: String,
    /// Bytes to download (compressed).
    pub download_size: u64,
    /// Bytes on disk once installed.
    pub installed_size: u64,
    /// The version in the models folder, if this pair is installed there.
    pub installed_version: Option<String>,
}

/// The pairs the source offers to this client (after filters and version choice), sorted.
pub fn list(opts: &FetchOptions) -> Result<Vec<Listing>, FetchError> {
    let rep = Reporter::new(opts.progress, opts.verbose);
    let (_, offer) = load(opts, &rep)?;
    let installed = manifest::installed(&opts.models_dir);
    let mut out: Vec<Listing> = offer
        .pairs
        .iter()
        .map(|p| Listing {
            source_language: p.source_language.clone(),
            target_language: p.target_language.clone(),
            variant: p.variant.clone(),
            architecture: p.architecture.clone(),
            version: p.version.clone(),
            download_size: p.download_size(),
            installed_size: p.files.iter().map(|f| f.decompressed_size).sum(),
            installed_version: installed
                .iter()
                .find(|(s, t, _)| p.variant.is_none() && *s == p.source_language && *t == p.target_language)
                .and_then(|(_, _, folder)| Manifest::read(folder))
                .map(|m| m.version),
        })
        .collect();
    out.sort_by(|a, b| {
        (&a.source_language, &a.target_language, &a.variant).cmp(&(&b.source_language, &b.target_language, &b.variant))
    });
    Ok(out)
}

/// `reseam fetch --mirror DIR LANGS`: writes the records and attachments LANGS needs into `dir`
/// in the server's layout, for `--source DIR` on machines without internet.
pub fn mirror(opts: &FetchOptions, langs: &str, dir: &Path) -> Result<Mirrored, FetchError> {
    let rep = Reporter::new(opts.progress, opts.verbose);
    let (src, offer) = load(opts, &rep)?;
    let pairs = plan(&offer, langs, src.source(), &rep)?;
    mirror::write_mirror(&Ctx { src: &src, rep: &rep }, dir, &pairs)
}

/// Opens the source, reads its records and chooses among them.
fn load(opts: &FetchOptions, rep: &Reporter) -> Result<(Opened, Offer), FetchError> {
    let src = Opened::open(&opts.source, opts.net)?;
    let bytes = src.records()?;
    let parsed = records::parse(&bytes).map_err(|detail| FetchError::BadDocument {
        what: "records document",
        location: src.records_location(),
        detail,
    })?;
    for why in &parsed.skipped {
        rep.debug(&format!("{why}: record skipped"));
    }
    let offer = records::select(&parsed.records, &opts.policy, &mut |line| rep.debug(&line));
    rep.debug(&format!(
        "{} records read, {} pairs offered to channel {} on {}",
        parsed.records.len(),
        offer.pairs.len(),
        opts.policy.env.channel,
        opts.policy.env.os
    ));
    Ok((src, offer))
}

/// The pairs LANGS needs, each once, in the order asked.
fn plan<'o>(offer: &'o Offer, langs: &str, source: &Source, rep: &Reporter) -> Result<Vec<&'o PairModels>, FetchError> {
    let wants = tags::parse_langs(langs, &|t| offer.offers_language(t)).map_err(FetchError::Langs)?;
    let mut out: Vec<&PairModels> = Vec::new();
    for want in wants {
        let found = match &want {
            Want::Language(l) => {
                let both = [offer.find(l, PIVOT), offer.find(PIVOT, l)];
                if both.iter().all(Option::is_none) {
                    return Err(not_offered(offer, l, PIVOT, source));
                }
                for (dir, p) in [(format!("{l}→en"), both[0]), (format!("en→{l}"), both[1])] {
                    if p.is_none() {
                        rep.line(&format!("{dir}: not offered by {source}; fetching the other direction only"));
                    }
                }
                both.into_iter().flatten().collect()
            }
            Want::Pair(a, b) => offer.route(a, b).map_err(|(x, y)| not_offered(offer, &x, &y, source))?,
        };
        for p in found {
            if !out.iter().any(|o| std::ptr::eq(*o, p)) {
                out.push(p);
            }
        }
    }
    Ok(out)
}

fn not_offered(offer: &Offer, from: &str, to: &str, source: &Source) -> FetchError {
    FetchError::NotOffered {
        from: from.to_string(),
        to: to.to_string(),
        origin: source.to_string(),
        why: offer.why_missing(from, to),
    }
}

#[cfg(test)]
mod tests;
