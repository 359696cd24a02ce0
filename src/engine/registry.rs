//! Models by language pair: found under a models folder, loaded on first use (through their
//! packs), routed through English when there is no direct model, handed out as `Arc<Model>` to
//! any thread. A model unused for `idle_seconds` gives its pages back to the kernel
//! (`MADV_DONTNEED` on its pack's map; the file stays in the page cache) and pages back in on
//! its next use; a model loaded into memory (no pack) is dropped instead and loaded again.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use crate::fetch::tags;
use crate::marian::{LoadOptions, Model, ModelError, ModelFiles, find};

/// How the registry loads and keeps models.
#[derive(Clone, Debug)]
pub struct RegistryOptions {
    /// How each model is loaded (shortlist, packs or memory, where packs go).
    pub load: LoadOptions,
    /// Seconds a model may go unused before it gives its pages back; 0 keeps everything resident.
    pub idle_seconds: u64,
    /// Load every installed model at open, and read every page of it.
    pub preload: bool,
    /// Where the registry's one-line notes go (a pack written, a model loaded into memory, a
    /// pack changed on disk): stderr as `reseam: …` by default; `serve` passes its log.
    pub notes: fn(Note, &str),
}

/// How much a note matters.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Note {
    Info,
    Warn,
    Error,
}

/// The default [`RegistryOptions::notes`]: `reseam: …` on stderr, as the other commands print.
pub fn notes_to_stderr(level: Note, message: &str) {
    match level {
        Note::Info => eprintln!("reseam: {message}"),
        Note::Warn => eprintln!("reseam: warning: {message}"),
        Note::Error => eprintln!("reseam: error: {message}"),
    }
}

impl Default for RegistryOptions {
    fn default() -> Self {
        RegistryOptions { load: LoadOptions::default(), idle_seconds: 300, preload: false, notes: notes_to_stderr }
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

crate::error::fault!(RegistryError);

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
    /// What the model's files were when it was loaded ([`stamp`]).
    stamp: Option<Stamp>,
    /// Held while the model loads, so that concurrent first uses wait for one load (and one
    /// pack written) instead of each loading it: a cold burst of 64 requests packed the same
    /// model 64 times at once, each with its own copy in memory.
    loading: Arc<Mutex<()>>,
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

/// Size, modification time and inode of each file a model is made from.
type Stamp = Vec<(u64, Option<std::time::SystemTime>, u64)>;

fn stamp(files: &ModelFiles) -> Option<Stamp> {
    let mut paths = vec![&files.model];
    match &files.vocab {
        crate::marian::VocabFiles::Shared(p) => paths.push(p),
        crate::marian::VocabFiles::Split { src, trg } => paths.extend([src, trg]),
    }
    paths.extend(&files.shortlist);
    paths
        .into_iter()
        .map(|p| {
            let m = std::fs::metadata(p).ok()?;
            #[cfg(unix)]
            let ino = std::os::unix::fs::MetadataExt::ino(&m);
            #[cfg(not(unix))]
            let ino = 0;
            Some((m.len(), m.modified().ok(), ino))
        })
        .collect()
}

pub use crate::fetch::tags::pair_name;

impl Registry {
    /// Lists the models under `dir`; with `preload`, loads and touches every one of them.
    pub fn open(dir: &Path, opts: RegistryOptions) -> Result<Registry, RegistryError> {
        Registry::open_after(dir, opts, None)
    }

    /// As [`Registry::open`], a reload of `previous`: a model it loaded from files that are
    /// still as they were (and whose pack did not change on disk) is carried over instead of
    /// loaded again, so that a reload with nothing changed maps nothing anew and its memory does
    /// not grow (20 reloads each building the vocabularies again left the RSS 11–14 MB higher).
    pub fn open_after(
        dir: &Path,
        opts: RegistryOptions,
        previous: Option<&Registry>,
    ) -> Result<Registry, RegistryError> {
        let now = Instant::now();
        let slots = installed(dir)?
            .into_iter()
            .map(|(f, t, files)| {
                let slot =
                    Slot { files, model: None, last_used: now, idle: false, stamp: None, loading: Arc::default() };
                ((f, t), slot)
            })
            .collect();
        let r = Registry { dir: dir.to_path_buf(), opts, slots: Mutex::new(slots) };
        if let Some(old) = previous {
            r.carry_over(old);
        }
        r.remove_stale_temporaries();
        if r.opts.preload {
            r.preload()?;
        }
        Ok(r)
    }

    /// A registry of no models yet, over `dir` (which may not exist): [`Registry::install`] adds
    /// them.
    pub fn empty(dir: &Path, opts: RegistryOptions) -> Registry {
        Registry { dir: dir.to_path_buf(), opts, slots: Mutex::new(BTreeMap::new()) }
    }

    /// Serves `files` for `from`→`to` (a model folder of any name, one just downloaded, a model
    /// file named on the command line); a pair already served from the same files is left as it
    /// is.
    pub fn install(&self, from: &str, to: &str, files: ModelFiles) {
        let mut slots = self.lock();
        let key = (from.to_string(), to.to_string());
        if slots.get(&key).is_some_and(|s| s.files == files) {
            return;
        }
        let slot =
            Slot { files, model: None, last_used: Instant::now(), idle: false, stamp: None, loading: Arc::default() };
        slots.insert(key, slot);
    }

    fn carry_over(&self, old: &Registry) {
        let old = old.lock();
        for (key, slot) in self.lock().iter_mut() {
            let Some(o) = old.get(key) else { continue };
            let Some(m) = &o.model else { continue };
            if o.files == slot.files
                && o.stamp.is_some()
                && o.stamp == stamp(&slot.files)
                && m.pack_file().is_none_or(|p| p.changed().is_none())
            {
                slot.model = Some(m.clone());
                slot.stamp = o.stamp.clone();
            }
        }
    }

    /// Removes the temporary packs a killed packer left where this registry's packs go.
    fn remove_stale_temporaries(&self) {
        if self.opts.load.no_pack {
            return;
        }
        let mut dirs: Vec<PathBuf> = self
            .lock()
            .values()
            .flat_map(|s| {
                // Where packs go now, and next to the model, where a packer run without
                // --pack-dir writes.
                let places = crate::marian::packed::places(&s.files, self.opts.load.pack_dir.as_deref());
                places.into_iter().filter_map(|p| p.parent().map(Path::to_path_buf)).chain([s.files.dir.clone()])
            })
            .collect();
        dirs.sort();
        dirs.dedup();
        for d in dirs {
            for f in crate::pack::cache::remove_stale_temporaries(&d, crate::pack::cache::STALE_TEMPORARY) {
                (self.opts.notes)(
                    Note::Info,
                    &format!("{}: removed a temporary pack a killed packer left", f.display()),
                );
            }
        }
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

    /// The model of one installed pair, loaded if needed. A loaded model whose pack changed on
    /// disk under its mapping is dropped and loaded again (the pack is checked, and rebuilt if
    /// it is no longer valid).
    fn get(&self, from: &str, to: &str) -> Result<Arc<Model>, RegistryError> {
        let key = (from.to_string(), to.to_string());
        let (files, loading) = match self.loaded_or_gate(&key)? {
            Ok(m) => return Ok(m),
            Err(gate) => gate,
        };
        // One load at a time per model; whoever waited here finds it loaded.
        let _one = loading.lock().unwrap_or_else(|p| p.into_inner());
        if let Ok(m) = self.loaded_or_gate(&key)? {
            return Ok(m);
        }
        // Taken before the load, so that a file changed during it is loaded again next time.
        let stamp = stamp(&files);
        let m = Model::open(&files, &self.opts.load)?;
        if let Some(note) = m.pack_status().note(&files) {
            let level = if note.starts_with("reseam: warning: ") { Note::Warn } else { Note::Info };
            let text = note.trim_start_matches("reseam: warning: ").trim_start_matches("reseam: ");
            (self.opts.notes)(level, text);
        }
        let m = Arc::new(m);
        let mut slots = self.lock();
        let Some(slot) = slots.get_mut(&key) else { return Err(self.no_route_locked(&slots, from, to)) };
        if slot.model.is_none() {
            slot.stamp = stamp;
        }
        Ok(slot.model.get_or_insert(m).clone())
    }

    /// The loaded model of `key` (marked used), or its files and load gate when it must be
    /// loaded.
    #[allow(clippy::type_complexity)]
    fn loaded_or_gate(
        &self,
        key: &(String, String),
    ) -> Result<Result<Arc<Model>, (ModelFiles, Arc<Mutex<()>>)>, RegistryError> {
        let mut slots = self.lock();
        let Some(slot) = slots.get_mut(key) else { return Err(self.no_route_locked(&slots, &key.0, &key.1)) };
        slot.last_used = Instant::now();
        slot.idle = false;
        if let Some(m) = &slot.model {
            match m.pack_file().and_then(|p| p.changed()) {
                None => return Ok(Ok(m.clone())),
                Some(why) => {
                    (self.opts.notes)(
                        Note::Error,
                        &format!("{why}; the model is no longer used from it and is loaded again"),
                    );
                    slot.model = None;
                }
            }
        }
        Ok(Err((slot.files.clone(), slot.loading.clone())))
    }

    fn no_route(&self, from: &str, to: &str) -> RegistryError {
        self.no_route_locked(&self.lock(), from, to)
    }

    fn no_route_locked(&self, slots: &BTreeMap<(String, String), Slot>, from: &str, to: &str) -> RegistryError {
        let installed = slots.keys().map(|(a, b)| format!("{a}-{b}")).collect::<Vec<_>>().join(", ");
        RegistryError::NoRoute { from: from.into(), to: to.into(), dir: self.dir.clone(), installed }
    }

    /// The models a sentence goes through from `from` to `to`: the direct model, else
    /// `from`→en and en→`to`.
    pub fn route(&self, from: &str, to: &str) -> Result<Vec<Arc<Model>>, RegistryError> {
        let pairs = tags::route(from, to, |a, b| self.has(a, b)).map_err(|_| self.no_route(from, to))?;
        pairs.iter().map(|(a, b)| self.get(a, b)).collect()
    }

    /// The installed pair `a`→`b`, if it is one.
    fn has(&self, a: &str, b: &str) -> Option<(String, String)> {
        let key = (a.to_string(), b.to_string());
        self.lock().contains_key(&key).then_some(key)
    }

    /// Every target reachable from `from` by [`Registry::route`]: direct pairs, and through
    /// English; sorted.
    pub fn targets(&self, from: &str) -> Vec<String> {
        let mut out: Vec<String> = self.pairs().into_iter().map(|(_, b)| b).filter(|b| b != from).collect();
        out.sort();
        out.dedup();
        out.retain(|to| tags::route(from, to, |a, b| self.has(a, b)).is_ok());
        out
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
