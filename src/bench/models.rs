//! `reseam bench models`: every model of a folder through the registry — how long they take to
//! load (warm and cold page cache), what the process holds with all of them used once and with
//! all of them idle, and how long an idle model takes to answer again.
//!
//! Three steps, the last two meant to run in fresh processes (the command line runs them as
//! children, so that the heap the preparation used is not counted):
//! - [`prepare`]: optionally writes synthetic models ([`crate::marian::synthetic`]) under pair
//!   names, then packs every model that has no valid pack yet (not timed).
//! - [`cold`]: drops the page cache of every file a load reads (`posix_fadvise(DONTNEED)` after
//!   `fsync`, else `/proc/sys/vm/drop_caches` when allowed), then loads every model.
//! - [`warm`]: reads those files once so they are in the page cache, loads every model (timed),
//!   translates one sentence with each, reads the memory, makes every model idle (their pack
//!   pages given back), waits for the engine to release its working memory, reads the memory
//!   again, then translates with each idle model (timed).

use std::collections::BTreeMap;
use std::io::Read;
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::{Duration, Instant};

use serde::{Deserialize, Serialize};

use crate::engine::Engine;
use crate::engine::registry::{self, Registry, RegistryError, RegistryOptions};
use crate::marian::synthetic::{self, Arch};
use crate::marian::{ModelFiles, VocabFiles, packed};
use crate::pack::cache::WriteError;
use crate::procfs::Memory;
use crate::translate::{TranslateError, TranslateOptions, Translator};
use crate::vocab::{Vocab, VocabError};

/// Languages of Firefox's models, in the order synthetic pairs are named: model 2i is
/// `LANGS[i]`→en, model 2i+1 en→`LANGS[i]`.
pub const LANGS: [&str; 40] = [
    "es", "fr", "de", "it", "pt", "nl", "pl", "ru", "uk", "cs", "bg", "hu", "fi", "et", "sv", "da", "tr", "el", "ro",
    "sk", "sl", "hr", "lt", "lv", "ca", "is", "nb", "nn", "fa", "ko", "ja", "zh", "ar", "he", "hi", "id", "ms", "sq",
    "sr", "vi",
];

/// The unit of every figure in MB: MiB, as `/proc` counts.
const MB: f64 = (1 << 20) as f64;

/// The sentence every model translates by default.
pub const SENTENCE: &str = "Espero que esto pueda entrar en vigor en julio de 2010.";

/// How long the engine waits, idle, before it gives its working memory back (the scheduler's
/// idle timeout), with a margin.
const ENGINE_IDLE: Duration = Duration::from_millis(5_600);

#[derive(Debug, thiserror::Error)]
pub enum Error {
    #[error("no <from>-<to>/ model folders under {dir}")]
    NoModels { dir: PathBuf },
    #[error("--count {count}: from 1 to {max} synthetic models ({} languages, both ways)", LANGS.len())]
    TooMany { count: usize, max: usize },
    #[error("cannot write {path}")]
    Write { path: PathBuf, source: std::io::Error },
    #[error("cannot read {path}")]
    Read { path: PathBuf, source: std::io::Error },
    #[error("the pack of {dir} could not be written: {why}")]
    Pack { dir: PathBuf, why: String },
    #[error("{pair}")]
    Translate { pair: String, source: Box<TranslateError> },
    #[error(transparent)]
    Vocab(#[from] VocabError),
    #[error(transparent)]
    Registry(#[from] RegistryError),
}

crate::error::fault!(Error);

impl Error {
    /// A folder without models or too many synthetic ones is the caller's fault; a failed
    /// write, pack or translation is not (or says so itself).
    pub fn is_usage(&self) -> bool {
        match self {
            Error::NoModels { .. } | Error::TooMany { .. } => true,
            Error::Read { source, .. } => crate::paths::unreadable_by_name(source),
            Error::Vocab(e) => e.is_usage(),
            Error::Registry(e) => e.is_usage(),
            Error::Write { .. } | Error::Pack { .. } | Error::Translate { .. } => false,
        }
    }
}

/// Synthetic models to write before measuring.
#[derive(Clone, Debug)]
pub struct Synthetic {
    /// Model i gets `archs[i % archs.len()]`.
    pub archs: Vec<Arch>,
    pub count: usize,
    pub seed: u64,
}

/// The pair names of `count` synthetic models.
pub fn synthetic_pairs(count: usize) -> Result<Vec<(String, String)>, Error> {
    let max = 2 * LANGS.len();
    if count == 0 || count > max {
        return Err(Error::TooMany { count, max });
    }
    Ok((0..count)
        .map(|i| {
            let l = LANGS[i / 2].to_string();
            if i % 2 == 0 { (l, "en".into()) } else { ("en".into(), l) }
        })
        .collect())
}

/// Writes `s`'s models under `dir` as `<from>-<to>/` folders. A file that already holds the
/// bytes it would get is left alone (so an existing pack of it stays valid). `progress` is
/// told each folder as it is done.
pub fn write_synthetic(dir: &Path, s: &Synthetic, progress: &dyn Fn(&str)) -> Result<(), Error> {
    for (i, (from, to)) in synthetic_pairs(s.count)?.iter().enumerate() {
        let arch = &s.archs[i % s.archs.len()];
        let folder = dir.join(format!("{from}-{to}"));
        std::fs::create_dir_all(&folder).map_err(|source| Error::Write { path: folder.clone(), source })?;
        for (name, bytes) in synthetic::files(from, to, arch, s.seed)? {
            let path = folder.join(name);
            if std::fs::read(&path).is_ok_and(|old| old == bytes) {
                continue;
            }
            crate::paths::write_atomically(&path, &bytes).map_err(|source| Error::Write { path, source })?;
        }
        progress(&format!("{from}-{to} ({})", arch.name));
    }
    Ok(())
}

/// Packs every model under `dir` that has no valid pack (where the registry will look for it);
/// returns how many were written.
pub fn pack_all(dir: &Path, pack_dir: Option<&Path>, progress: &dyn Fn(&str)) -> Result<usize, Error> {
    let all = registry::installed(dir)?;
    if all.is_empty() {
        return Err(Error::NoModels { dir: dir.into() });
    }
    let mut written = 0;
    for (from, to, files) in &all {
        if packed::check(files, pack_dir).is_ok() {
            continue;
        }
        match packed::write(files, pack_dir) {
            Ok(_) => written += 1,
            Err(WriteError::Build(e)) => return Err(Error::Pack { dir: files.dir.clone(), why: e.to_string() }),
            Err(WriteError::Nowhere(v)) => {
                let why = v.iter().map(|(p, e)| format!("{}: {e}", p.display())).collect::<Vec<_>>().join("; ");
                return Err(Error::Pack { dir: files.dir.clone(), why });
            }
        }
        progress(&format!("packed {from}-{to}"));
    }
    Ok(written)
}

/// What the preparation did.
#[derive(Clone, Debug, Serialize, Deserialize)]
pub struct Prepared {
    pub models: usize,
    pub packed: usize,
    /// Size of every model's pack (MiB, as every figure here).
    pub pack_mb: f64,
}

/// Writes the synthetic models (if any) and packs every model of `dir`.
pub fn prepare(
    dir: &Path,
    synthetic: Option<&Synthetic>,
    pack_dir: Option<&Path>,
    progress: &dyn Fn(&str),
) -> Result<Prepared, Error> {
    if let Some(s) = synthetic {
        write_synthetic(dir, s, progress)?;
    }
    let packed = pack_all(dir, pack_dir, progress)?;
    let files = read_files(dir, pack_dir)?;
    let bytes: u64 = files.packs.iter().filter_map(|p| std::fs::metadata(p).ok()).map(|m| m.len()).sum();
    let pack_mb = bytes as f64 / MB;
    Ok(Prepared { models: files.models.len(), packed, pack_mb })
}

/// The models of a folder and the files their loads read.
struct Files {
    models: Vec<(String, String, ModelFiles)>,
    packs: Vec<PathBuf>,
    vocabs: Vec<PathBuf>,
}

fn read_files(dir: &Path, pack_dir: Option<&Path>) -> Result<Files, Error> {
    let models = registry::installed(dir)?;
    if models.is_empty() {
        return Err(Error::NoModels { dir: dir.into() });
    }
    let mut packs = Vec::new();
    let mut vocabs = Vec::new();
    for (_, _, f) in &models {
        if let Ok(p) = packed::check(f, pack_dir) {
            packs.push(p.path().to_path_buf());
        }
        match &f.vocab {
            VocabFiles::Shared(v) => vocabs.push(v.clone()),
            VocabFiles::Split { src, trg } => vocabs.extend([src.clone(), trg.clone()]),
        }
    }
    Ok(Files { models, packs, vocabs })
}

/// How the measured phases run.
#[derive(Clone, Debug)]
pub struct Options {
    /// The engine's settings, as `translate` and `serve` take them; `engine.models` is the
    /// folder of models measured.
    pub engine: TranslateOptions,
    pub sentence: String,
}

fn registry_options(o: &Options) -> RegistryOptions {
    // Idle is decided here (`release_older_than`), not by a timer.
    RegistryOptions { load: o.engine.load_options(), idle_seconds: 0, ..RegistryOptions::default() }
}

/// Every installed model, loaded.
struct Loaded {
    registry: Registry,
    pairs: Vec<(String, String)>,
    seconds: f64,
}

/// Loads every installed model, timed.
fn load_all(o: &Options) -> Result<Loaded, Error> {
    let t = Instant::now();
    let registry = Registry::open(&o.engine.models, registry_options(o))?;
    registry.load_all()?;
    let pairs = registry.pairs();
    Ok(Loaded { registry, pairs, seconds: t.elapsed().as_secs_f64() })
}

/// Which architecture a model has, by its sizes.
fn arch_name(c: &crate::marian::config::Config) -> String {
    synthetic::ARCHS
        .iter()
        .find(|a| a.dim == c.dim && a.dec_depth == c.dec_depth && a.ffn == c.enc_ffn && c.enc_depth == 6)
        .map(|a| a.name.to_string())
        .unwrap_or_else(|| format!("dim {} decoder {}", c.dim, c.dec_depth))
}

/// How the page cache was dropped.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Dropped {
    /// `posix_fadvise(POSIX_FADV_DONTNEED)` on every file, after `fsync`.
    Fadvise,
    /// `echo 1 > /proc/sys/vm/drop_caches` (root only; drops every file's cached pages).
    DropCaches,
}

/// Asks the kernel to forget the cached pages of `paths`.
fn drop_cache(paths: &[PathBuf]) -> Option<Dropped> {
    #[cfg(target_os = "linux")]
    {
        let fadvise = |p: &Path| -> std::io::Result<()> {
            let f = std::fs::File::open(p)?;
            // Dirty pages are not dropped: write them first.
            f.sync_all()?;
            rustix::fs::fadvise(&f, 0, None, rustix::fs::Advice::DontNeed)?;
            Ok(())
        };
        if paths.iter().all(|p| fadvise(p).is_ok()) {
            return Some(Dropped::Fadvise);
        }
        if std::fs::write("/proc/sys/vm/drop_caches", "1").is_ok() {
            return Some(Dropped::DropCaches);
        }
    }
    let _ = paths;
    None
}

/// Reads `paths` once to bring them into the page cache, in 64 KiB pieces: a buffer below
/// glibc's mmap threshold (128 KiB), whose release would raise that threshold and leave later
/// allocations of the loads in the heap, counted in the figures as fragments.
fn warm_cache(paths: &[PathBuf]) -> Result<(), Error> {
    let mut buf = vec![0u8; 64 << 10];
    for p in paths {
        let read = |source| Error::Read { path: p.clone(), source };
        let mut f = std::fs::File::open(p).map_err(read)?;
        while f.read(&mut buf).map_err(read)? > 0 {}
    }
    Ok(())
}

/// The cold phase's figures.
#[derive(Clone, Debug, Serialize, Deserialize)]
pub struct Cold {
    /// Seconds to load every model after the page cache was dropped; `None` when it could not be.
    pub load_cold_s: Option<f64>,
    pub dropped: Option<Dropped>,
}

/// Drops the page cache of every pack and vocabulary, then loads every model.
pub fn cold(o: &Options) -> Result<Cold, Error> {
    let f = read_files(&o.engine.models, o.engine.pack_dir.as_deref())?;
    let mut paths = f.packs;
    paths.extend(f.vocabs);
    let Some(dropped) = drop_cache(&paths) else { return Ok(Cold { load_cold_s: None, dropped: None }) };
    let s = load_all(o)?.seconds;
    Ok(Cold { load_cold_s: Some(s), dropped: Some(dropped) })
}

/// Resident MB of this process's mappings of packs (`*.reseam` in `/proc/self/smaps`).
pub fn pack_resident_mb() -> f64 {
    let smaps = std::fs::read_to_string("/proc/self/smaps").unwrap_or_default();
    let mut kb = 0u64;
    let mut in_pack = false;
    for line in smaps.lines() {
        let mut words = line.split_whitespace();
        // A mapping's header: "start-end perms offset dev inode [path]".
        if words.next().is_some_and(|w| w.contains('-') && !w.ends_with(':'))
            && words.next().is_some_and(|p| p.len() == 4)
        {
            in_pack = line.ends_with(".reseam");
        } else if in_pack && let Some(v) = line.strip_prefix("Rss:") {
            kb += v.trim().trim_end_matches("kB").trim().parse::<u64>().unwrap_or(0);
        }
    }
    kb as f64 / 1024.0
}

/// The process's memory at one moment.
#[derive(Clone, Copy, Debug, Serialize, Deserialize)]
pub struct Snapshot {
    pub rss_mb: f64,
    /// File-backed resident memory (the packs' pages, the binary's code).
    pub mapped_mb: f64,
    /// Heap and other anonymous memory.
    pub anon_mb: f64,
    /// Resident pages of the packs' mappings.
    pub packs_mb: f64,
}

fn snapshot() -> Snapshot {
    let m = Memory::read();
    Snapshot { rss_mb: m.rss_mb, mapped_mb: m.mapped_mb, anon_mb: m.anon_mb, packs_mb: pack_resident_mb() }
}

/// The warm phase's figures.
#[derive(Clone, Debug, Serialize, Deserialize)]
pub struct Warm {
    pub models: usize,
    /// Models per architecture.
    pub architectures: BTreeMap<String, usize>,
    /// Seconds to load every model with the page cache warm.
    pub load_s: f64,
    /// Every model loaded and used once.
    pub used: Snapshot,
    /// Every model idle and the engine's working memory released.
    pub idle: Snapshot,
    /// The slowest first translation of an idle model (warm page cache), and the median.
    pub wake_ms: f64,
    pub wake_p50_ms: f64,
    /// The slowest wake per architecture.
    pub wake_ms_by_arch: BTreeMap<String, f64>,
    /// The same sentence again on a model just used (its pages resident, the CPU's caches
    /// warm): the translation alone, the slowest architecture's, and per architecture.
    pub busy_ms: f64,
    pub busy_ms_by_arch: BTreeMap<String, f64>,
    /// The slowest time to fault every page of one idle model's pack back in (from the page
    /// cache): what waking costs beyond the translation.
    pub page_in_ms: f64,
    /// Seconds, summed over the models on one thread, of the two parts of a load: checking the
    /// pack (mapping it, every blob's CRC-32, the sources' sizes and times) and building the
    /// vocabularies (SentencePiece).
    pub check_s: f64,
    pub vocab_s: f64,
    pub threads: usize,
    pub isa: String,
    pub arithmetic: String,
}

fn translate_once(r: &Registry, engine: &Arc<Engine>, o: &Options, from: &str, to: &str) -> Result<f64, Error> {
    let fail = |e: TranslateError| Error::Translate { pair: format!("{from}-{to}"), source: Box::new(e) };
    let t = Instant::now();
    let stages = r.route(from, to)?;
    let tr = Translator::on_engine(
        engine.clone(),
        stages,
        &TranslateOptions { from: from.into(), to: to.into(), ..o.engine.clone() },
    )
    .map_err(fail)?;
    tr.translate_posts(&[o.sentence.as_str()]).map_err(fail)?;
    Ok(t.elapsed().as_secs_f64() * 1e3)
}

/// Loads, uses, idles and wakes every model (see the module's description).
pub fn warm(o: &Options) -> Result<Warm, Error> {
    let f = read_files(&o.engine.models, o.engine.pack_dir.as_deref())?;
    let mut paths = f.packs;
    paths.extend(f.vocabs);
    warm_cache(&paths)?;
    let Loaded { registry: r, pairs, seconds: load_s } = load_all(o)?;
    let mut arch_of = BTreeMap::new();
    let mut architectures = BTreeMap::new();
    for (from, to) in &pairs {
        let m = &r.route(from, to)?[0];
        let name = arch_name(&m.marian.config);
        *architectures.entry(name.clone()).or_insert(0) += 1;
        arch_of.insert((from.clone(), to.clone()), name);
    }
    let settings = o.engine.engine_options();
    let arith = settings.arithmetic;
    let engine = Arc::new(
        Engine::new(&settings)
            .map_err(|e| Error::Translate { pair: "the engine".into(), source: Box::new(e.into()) })?,
    );
    for (from, to) in &pairs {
        translate_once(&r, &engine, o, from, to)?;
    }
    let mut busy_ms_by_arch = BTreeMap::new();
    for ((from, to), name) in &arch_of {
        if !busy_ms_by_arch.contains_key(name) {
            // Twice: the first brings the model back into the CPU's caches.
            translate_once(&r, &engine, o, from, to)?;
            busy_ms_by_arch.insert(name.clone(), translate_once(&r, &engine, o, from, to)?);
        }
    }
    let used = snapshot();
    r.release_older_than(Duration::ZERO);
    std::thread::sleep(ENGINE_IDLE);
    let idle = snapshot();
    let mut wake = Vec::with_capacity(pairs.len());
    let mut wake_ms_by_arch = BTreeMap::new();
    for (from, to) in &pairs {
        let ms = translate_once(&r, &engine, o, from, to)?;
        let slowest = wake_ms_by_arch.entry(arch_of[&(from.clone(), to.clone())].clone()).or_insert(0.0);
        *slowest = ms.max(*slowest);
        wake.push(ms);
    }
    let wake_ms = wake.iter().copied().fold(0.0, f64::max);
    wake.sort_by(f64::total_cmp);
    r.release_older_than(Duration::ZERO);
    let mut page_in_ms = 0f64;
    for (from, to) in &pairs {
        for m in r.route(from, to)? {
            if let Some(p) = m.pack_file() {
                let t = Instant::now();
                std::hint::black_box(p.touch());
                page_in_ms = page_in_ms.max(t.elapsed().as_secs_f64() * 1e3);
            }
        }
    }
    // Last, as its temporaries would count in the figures above: what a load is made of, one
    // model after the other on one thread.
    let (mut check_s, mut vocab_s) = (0.0, 0.0);
    for (_, _, files) in &f.models {
        let t = Instant::now();
        let _ = packed::check(files, o.engine.pack_dir.as_deref());
        check_s += t.elapsed().as_secs_f64();
        let t = Instant::now();
        match &files.vocab {
            VocabFiles::Shared(v) => drop(Vocab::open(v)?),
            VocabFiles::Split { src, trg } => drop((Vocab::open(src)?, Vocab::open(trg)?)),
        }
        vocab_s += t.elapsed().as_secs_f64();
    }
    Ok(Warm {
        models: pairs.len(),
        architectures,
        load_s,
        used,
        idle,
        wake_ms,
        wake_p50_ms: wake[wake.len() / 2],
        wake_ms_by_arch,
        busy_ms: busy_ms_by_arch.values().copied().fold(0.0, f64::max),
        busy_ms_by_arch,
        page_in_ms,
        check_s,
        vocab_s,
        threads: engine.threads(),
        isa: engine.kernels().kernel_for(arith).name().into(),
        arithmetic: format!("{arith:?}").to_lowercase(),
    })
}

/// The whole report, as `--json` prints it.
#[derive(Clone, Debug, Serialize, Deserialize)]
pub struct Report {
    pub models: usize,
    /// Packs the preparation wrote (models that had none, or a stale one).
    pub packed: usize,
    pub architectures: BTreeMap<String, usize>,
    pub pack_mb: f64,
    pub load_s: f64,
    pub load_cold_s: Option<f64>,
    /// How the page cache was dropped for `load_cold_s`: `fadvise`, `drop_caches`, or `null`.
    pub cold_cache: Option<Dropped>,
    pub rss_mb: f64,
    pub mapped_mb: f64,
    pub anon_mb: f64,
    pub packs_mb: f64,
    pub idle_rss_mb: f64,
    pub idle_mapped_mb: f64,
    pub idle_anon_mb: f64,
    pub idle_packs_mb: f64,
    pub wake_ms: f64,
    pub wake_p50_ms: f64,
    pub wake_ms_by_arch: BTreeMap<String, f64>,
    pub busy_ms: f64,
    pub busy_ms_by_arch: BTreeMap<String, f64>,
    pub page_in_ms: f64,
    pub check_s: f64,
    pub vocab_s: f64,
    pub threads: usize,
    pub isa: String,
    pub arithmetic: String,
    pub dir: PathBuf,
    /// The synthetic models' seed, if they are synthetic.
    pub seed: Option<u64>,
}

impl Report {
    pub fn new(dir: &Path, p: &Prepared, cold: Option<&Cold>, w: &Warm, seed: Option<u64>) -> Report {
        Report {
            models: w.models,
            packed: p.packed,
            architectures: w.architectures.clone(),
            pack_mb: p.pack_mb,
            load_s: w.load_s,
            load_cold_s: cold.and_then(|c| c.load_cold_s),
            cold_cache: cold.and_then(|c| c.dropped),
            rss_mb: w.used.rss_mb,
            mapped_mb: w.used.mapped_mb,
            anon_mb: w.used.anon_mb,
            packs_mb: w.used.packs_mb,
            idle_rss_mb: w.idle.rss_mb,
            idle_mapped_mb: w.idle.mapped_mb,
            idle_anon_mb: w.idle.anon_mb,
            idle_packs_mb: w.idle.packs_mb,
            wake_ms: w.wake_ms,
            wake_p50_ms: w.wake_p50_ms,
            wake_ms_by_arch: w.wake_ms_by_arch.clone(),
            busy_ms: w.busy_ms,
            busy_ms_by_arch: w.busy_ms_by_arch.clone(),
            page_in_ms: w.page_in_ms,
            check_s: w.check_s,
            vocab_s: w.vocab_s,
            threads: w.threads,
            isa: w.isa.clone(),
            arithmetic: w.arithmetic.clone(),
            dir: dir.to_path_buf(),
            seed,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn synthetic_pairs_go_both_ways_and_are_bounded() {
        let p = synthetic_pairs(3).unwrap();
        assert_eq!(p, vec![("es".into(), "en".into()), ("en".into(), "es".into()), ("fr".into(), "en".into())]);
        assert!(matches!(synthetic_pairs(0), Err(Error::TooMany { .. })));
        assert!(synthetic_pairs(80).is_ok());
        let e = synthetic_pairs(81).unwrap_err();
        assert!(e.is_usage() && e.to_string().contains("from 1 to 80"), "{e}");
        let names: std::collections::HashSet<_> = synthetic_pairs(80).unwrap().into_iter().collect();
        assert_eq!(names.len(), 80);
    }
}
