//! Models by language pair: found under a models folder, loaded on first use (through their
//! packs), routed through English when there is no direct model, handed out as `Arc<Model>` to
//! any thread. A model unused for `idle_seconds` gives its pages back to the kernel
//! (`MADV_DONTNEED` on its pack's map; the file stays in the page cache) and pages back in on
//! its next use; a model loaded into memory (no pack) is dropped instead and loaded again.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use crate::marian::PIVOT;
use crate::marian::{LoadOptions, Model, ModelError, ModelFiles, find};

/// How the registry loads and keeps models.
#[derive(Clone, Debug)]
pub struct RegistryOptions {
    /// Read model files into memory instead of mapping packs.
    pub no_pack: bool,
    /// Where packs go instead of next to the models.
    pub pack_dir: Option<PathBuf>,
    /// Load the shortlists too.
    pub shortlist: bool,
    /// Seconds a model may go unused before it gives its pages back; 0 keeps everything resident.
    pub idle_seconds: u64,
    /// Load every installed model at open, and read every page of it.
    pub preload: bool,
}

impl Default for RegistryOptions {
    fn default() -> Self {
        RegistryOptions { no_pack: false, pack_dir: None, shortlist: false, idle_seconds: 300, preload: false }
    }
}

#[derive(Debug, thiserror::Error)]
pub enum RegistryError {
    #[error("{dir}: cannot read the models folder")]
    Folder { dir: PathBuf, source: std::io::Error },
    #[error("no {from}→{to} model under {dir}, directly or through English; installed: {installed}")]
    NoRoute { from: String, to: String, dir: PathBuf, installed: String },
    #[error(transparent)]
    Model(#[from] ModelError),
}

impl RegistryError {
    /// Whether the caller asked for something that is not there (a 4xx, an exit 2).
    pub fn is_usage(&self) -> bool {
        match self {
            RegistryError::Folder { source, .. } => crate::paths::unreadable_by_name(source),
            RegistryError::NoRoute { .. } => true,
            RegistryError::Model(e) => e.is_usage(),
        }
    }
}

/// One installed direction.
struct Slot {
    files: ModelFiles,
    model: Option<Arc<Model>>,
    last_used: Instant,
    /// Whether the pages were given back since the last use.
    idle: bool,
}

/// The installed models of a folder; safe to share between threads.
pub struct Registry {
    dir: PathBuf,
    opts: RegistryOptions,
    slots: Mutex<BTreeMap<(String, String), Slot>>,
}

/// The `<from>-<to>/` model folders under `dir` (and `dir` itself when it is one model's
/// folder named `<from>-<to>`), by pair.
pub fn installed(dir: &Path) -> Result<Vec<(String, String, ModelFiles)>, RegistryError> {
    let rd = std::fs::read_dir(dir).map_err(|source| RegistryError::Folder { dir: dir.into(), source })?;
    let mut out = Vec::new();
    let mut names: Vec<String> = rd.flatten().filter_map(|e| e.file_name().into_string().ok()).collect();
    names.sort();
    for name in names {
        let Some((from, to)) = pair_name(&name) else { continue };
        if dir.join(&name).is_dir()
            && let Ok(files) = find(dir, from, to, None)
        {
            out.push((from.to_string(), to.to_string(), files));
        }
    }
    if out.is_empty()
        && let Some(name) =
            dir.canonicalize().ok().and_then(|d| d.file_name().map(|n| n.to_string_lossy().into_owned()))
        && let Some((from, to)) = pair_name(&name)
        && let Ok(files) = find(dir, from, to, None)
    {
        out.push((from.to_string(), to.to_string(), files));
    }
    Ok(out)
}

/// `es-en` → (`es`, `en`).
pub fn pair_name(name: &str) -> Option<(&str, &str)> {
    let (a, b) = name.split_once('-')?;
    let ok = |s: &str| (2..=3).contains(&s.len()) && s.chars().all(|c| c.is_ascii_lowercase());
    (ok(a) && ok(b)).then_some((a, b))
}

impl Registry {
    /// Lists the models under `dir`; with `preload`, loads and touches every one of them.
    pub fn open(dir: &Path, opts: RegistryOptions) -> Result<Registry, RegistryError> {
        let now = Instant::now();
        let slots = installed(dir)?
            .into_iter()
            .map(|(f, t, files)| ((f, t), Slot { files, model: None, last_used: now, idle: false }))
            .collect();
        let r = Registry { dir: dir.to_path_buf(), opts, slots: Mutex::new(slots) };
        if r.opts.preload {
            r.preload()?;
        }
        Ok(r)
    }

    /// Loads every installed model and reads every page of it, so that no request waits for
    /// a load or a page fault.
    pub fn preload(&self) -> Result<(), RegistryError> {
        self.load_all()?;
        for (from, to) in self.pairs() {
            let m = self.get(&from, &to)?;
            if let Some(p) = m.pack_file() {
                std::hint::black_box(p.touch());
            }
        }
        Ok(())
    }

    /// Loads every installed model that is not loaded yet, several at a time (a load is mostly
    /// SentencePiece building its vocabularies, one core each); returns how many are loaded.
    pub fn load_all(&self) -> Result<usize, RegistryError> {
        use rayon::prelude::*;
        self.pairs().par_iter().try_for_each(|(from, to)| self.get(from, to).map(drop))?;
        Ok(self.loaded())
    }

    /// How many models are loaded now (mapped or in memory), idle ones included.
    pub fn loaded(&self) -> usize {
        self.lock().values().filter(|s| s.model.is_some()).count()
    }

    /// The installed pairs, sorted.
    pub fn pairs(&self) -> Vec<(String, String)> {
        self.lock().keys().cloned().collect()
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, BTreeMap<(String, String), Slot>> {
        // A panic while holding the lock leaves the map consistent (every update is one
        // assignment), so a poisoned lock is still usable.
        self.slots.lock().unwrap_or_else(|p| p.into_inner())
    }

    /// The model of one installed pair, loaded if needed.
    fn get(&self, from: &str, to: &str) -> Result<Arc<Model>, RegistryError> {
        let key = (from.to_string(), to.to_string());
        let files = {
            let mut slots = self.lock();
            let slot = slots.get_mut(&key).ok_or_else(|| self.no_route(from, to))?;
            slot.last_used = Instant::now();
            slot.idle = false;
            if let Some(m) = &slot.model {
                return Ok(m.clone());
            }
            slot.files.clone()
        };
        // Loading (possibly packing) happens outside the lock; two threads racing here both
        // load, and the first to finish is kept (packs are renamed into place, so both succeed).
        let load = LoadOptions {
            shortlist: self.opts.shortlist,
            no_pack: self.opts.no_pack,
            pack_dir: self.opts.pack_dir.clone(),
        };
        let m = Model::open(&files, &load)?;
        if let Some(note) = m.pack_status().note(&files) {
            eprintln!("{note}");
        }
        let m = Arc::new(m);
        let mut slots = self.lock();
        let slot = slots.get_mut(&key).ok_or_else(|| self.no_route(from, to))?;
        Ok(slot.model.get_or_insert(m).clone())
    }

    fn no_route(&self, from: &str, to: &str) -> RegistryError {
        let installed = self.lock().keys().map(|(a, b)| format!("{a}-{b}")).collect::<Vec<_>>().join(", ");
        RegistryError::NoRoute { from: from.into(), to: to.into(), dir: self.dir.clone(), installed }
    }

    /// The models a sentence goes through from `from` to `to`: the direct model, else
    /// `from`→en and en→`to`.
    pub fn route(&self, from: &str, to: &str) -> Result<Vec<Arc<Model>>, RegistryError> {
        let has = |a: &str, b: &str| self.lock().contains_key(&(a.to_string(), b.to_string()));
        if has(from, to) {
            return Ok(vec![self.get(from, to)?]);
        }
        if from != PIVOT && to != PIVOT && has(from, PIVOT) && has(PIVOT, to) {
            return Ok(vec![self.get(from, PIVOT)?, self.get(PIVOT, to)?]);
        }
        Err(self.no_route(from, to))
    }

    /// Gives back the pages of every model unused for `idle_seconds` (none when it is 0);
    /// returns how many went idle. Call it periodically ([`Registry::idle_timer`]).
    pub fn release_idle(&self) -> usize {
        if self.opts.idle_seconds == 0 {
            return 0;
        }
        self.release_older_than(Duration::from_secs(self.opts.idle_seconds))
    }

    /// Gives back the pages of every model unused for at least `age`.
    pub fn release_older_than(&self, age: Duration) -> usize {
        let mut n = 0;
        for slot in self.lock().values_mut() {
            if slot.idle || slot.last_used.elapsed() < age {
                continue;
            }
            match slot.model.as_ref().and_then(|m| m.pack_file()) {
                Some(p) => {
                    // Failing to advise only leaves the pages resident.
                    let _ = p.release_pages();
                }
                // In memory: drop our reference; it is loaded again on next use.
                None => slot.model = None,
            }
            slot.idle = true;
            n += 1;
        }
        n
    }

    /// A thread that calls [`Registry::release_idle`] every second while the registry lives.
    pub fn idle_timer(self: &Arc<Registry>) -> Option<std::thread::JoinHandle<()>> {
        if self.opts.idle_seconds == 0 {
            return None;
        }
        let weak = Arc::downgrade(self);
        Some(std::thread::spawn(move || {
            while let Some(r) = weak.upgrade() {
                r.release_idle();
                drop(r);
                std::thread::sleep(Duration::from_secs(1));
            }
        }))
    }
}

#[cfg(test)]
mod tests;
