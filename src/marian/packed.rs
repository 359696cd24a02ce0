//! Translation models as packs (`model.reseam`, see [`crate::pack`]): the first load writes
//! one, later loads map it. Where it goes and when it is rebuilt is [`crate::pack::cache`]'s
//! policy; what it holds is [`Marian::write_pack`]'s.

use std::path::{Path, PathBuf};

use super::shortlist::Shortlist;
use super::transformer::{Marian, WeightFormat};
use super::{Model, ModelError, ModelFiles, VocabFiles};
use crate::pack::cache::{self, Origin, Why, WriteError};
use crate::pack::{self, Dtype, PackFile};

/// The pack's file name, next to the model or in the cache folder.
pub const PACK_NAME: &str = "model.reseam";
const KIND: &str = "reseam-marian";
/// Bumped whenever what [`Marian::write_pack`] writes changes.
pub const LAYOUT: &str = "marian-int8-v2";

/// How to load a translation model.
#[derive(Clone, Debug, Default)]
pub struct LoadOptions {
    /// Load the shortlist (it is packed either way when the folder has one).
    pub shortlist: bool,
    /// Read the model files into memory; never read or write a pack.
    pub no_pack: bool,
    /// Packs go here (one folder per model) instead of next to the model or in the user cache.
    pub pack_dir: Option<PathBuf>,
}

/// What happened with the pack of a load.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum PackStatus {
    /// `--no-pack`, or a float model (only int8 models are packed).
    NotUsed(String),
    /// A valid pack was mapped.
    Loaded(PathBuf),
    /// `why` the pack at `from` could not be used; a new one was written at `path` and mapped.
    Written { path: PathBuf, from: PathBuf, why: String },
    /// The pack could not be written anywhere (the reason): the model is in memory.
    InMemory(String),
}

impl PackStatus {
    /// The one line to print on stderr, if the load did more than map a valid pack.
    pub fn note(&self, files: &ModelFiles) -> Option<String> {
        match self {
            PackStatus::Written { path, from, why } => Some(format!(
                "reseam: {}: {why}; packed {} into {}",
                from.display(),
                files.model.display(),
                path.display()
            )),
            PackStatus::InMemory(why) => {
                Some(format!("reseam: warning: {} loaded into memory, no pack: {why}", files.model.display()))
            }
            PackStatus::NotUsed(_) | PackStatus::Loaded(_) => None,
        }
    }
}

/// The files a pack is made from, in a fixed order.
fn sources(files: &ModelFiles) -> Vec<PathBuf> {
    let mut v = vec![files.model.clone()];
    match &files.vocab {
        VocabFiles::Shared(p) => v.push(p.clone()),
        VocabFiles::Split { src, trg } => v.extend([src.clone(), trg.clone()]),
    }
    v.extend(files.shortlist.clone());
    v
}

/// The model's configuration as far as the pack is concerned: which file plays which part.
fn config(files: &ModelFiles) -> Vec<u8> {
    let name = |p: &Path| p.file_name().map(|n| n.to_string_lossy().into_owned()).unwrap_or_default();
    let vocab = match &files.vocab {
        VocabFiles::Shared(p) => serde_json::json!({ "shared": name(p) }),
        VocabFiles::Split { src, trg } => serde_json::json!({ "src": name(src), "trg": name(trg) }),
    };
    let sl = files.shortlist.as_deref().map(name);
    serde_json::json!({ "model": name(&files.model), "vocab": vocab, "shortlist": sl }).to_string().into_bytes()
}

/// Where the pack of `files` may be, in order of preference.
pub fn places(files: &ModelFiles, pack_dir: Option<&Path>) -> Vec<PathBuf> {
    cache::places(&files.dir, PACK_NAME, pack_dir)
}

/// The valid pack of `files`, or why there is none (the place and the reason).
pub fn check(files: &ModelFiles, pack_dir: Option<&Path>) -> Result<PackFile, (PathBuf, Why)> {
    let places = places(files, pack_dir);
    cache::find(&places, KIND, LAYOUT, &config(files), &sources(files))
        .map(|(f, _)| f)
        .map_err(|why| cache::rebuild_reason(&why))
}

fn pack_err(e: pack::Error) -> ModelError {
    match e {
        pack::Error::Io { path, source } => ModelError::Read { path, source },
        pack::Error::Source { path, why } => ModelError::Invalid { path, message: why },
        e => ModelError::Invalid { path: PathBuf::from("<pack>"), message: e.to_string() },
    }
}

impl From<pack::Error> for ModelError {
    fn from(e: pack::Error) -> ModelError {
        pack_err(e)
    }
}

/// Writes the pack of `files` at the first place that takes it; the model files are read and
/// checked as for an in-memory load.
pub fn write(files: &ModelFiles, pack_dir: Option<&Path>) -> Result<PathBuf, WriteError<ModelError>> {
    let places = places(files, pack_dir);
    let m = Model::load(files, files.shortlist.is_some()).map_err(WriteError::Build)?;
    if m.marian.format == WeightFormat::Float32 {
        return Err(WriteError::Build(ModelError::Invalid {
            path: files.model.clone(),
            message: "a float32 model; only int8 models are packed".into(),
        }));
    }
    cache::write::<ModelError>(
        &places,
        |w| {
            let origin = Origin::of(KIND, LAYOUT, &config(files), &sources(files), None)?;
            let desc = m.marian.write_pack(w)?;
            if let Some(sl) = &m.shortlist {
                w.add("shortlist", Dtype::U8, &[sl.bytes().len()], sl.bytes())?;
            }
            Ok(serde_json::json!({ "origin": origin.to_json(), "yml": m.marian.yml, "marian": desc }))
        },
        KIND,
    )
}

impl Model {
    /// Loads a model through its pack: maps a valid one, else writes one first (and says why
    /// on the returned status), else loads into memory. Problems with the model files
    /// themselves are errors; problems with packs never are.
    pub fn open(files: &ModelFiles, opts: &LoadOptions) -> Result<Model, ModelError> {
        if opts.no_pack {
            let mut m = Model::load(files, opts.shortlist)?;
            m.pack_status = PackStatus::NotUsed("--no-pack".into());
            return Ok(m);
        }
        if opts.shortlist && files.shortlist.is_none() {
            return Err(ModelError::NoShortlist { dir: files.dir.clone() });
        }
        let pack_dir = opts.pack_dir.as_deref();
        let (from, why) = match check(files, pack_dir) {
            Ok(f) => match Model::from_pack(files, &f, opts.shortlist) {
                Ok(mut m) => {
                    m.pack_status = PackStatus::Loaded(f.path().to_path_buf());
                    return Ok(m);
                }
                Err(e) => (f.path().to_path_buf(), Why::Damaged(e.to_string())),
            },
            Err(w) => w,
        };
        match write(files, pack_dir) {
            Ok(path) => {
                let f = PackFile::open(&path)?;
                let mut m = Model::from_pack(files, &f, opts.shortlist)?;
                m.pack_status = PackStatus::Written { path, from, why: why.to_string() };
                Ok(m)
            }
            Err(WriteError::Build(ModelError::Invalid { message, .. })) if message.starts_with("a float32 model") => {
                let mut m = Model::load(files, opts.shortlist)?;
                m.pack_status = PackStatus::NotUsed(message);
                Ok(m)
            }
            Err(WriteError::Build(e @ (ModelError::Read { .. } | ModelError::Invalid { .. }))) if is_pack_io(&e) => {
                Ok(Model::in_memory(files, opts, e.to_string())?)
            }
            Err(WriteError::Build(e)) => Err(e),
            Err(WriteError::Nowhere(v)) => {
                let why = v.iter().map(|(_, e)| e.clone()).collect::<Vec<_>>().join("; ");
                Ok(Model::in_memory(files, opts, why)?)
            }
        }
    }

    fn in_memory(files: &ModelFiles, opts: &LoadOptions, why: String) -> Result<Model, ModelError> {
        let mut m = Model::load(files, opts.shortlist)?;
        m.pack_status = PackStatus::InMemory(why);
        Ok(m)
    }

    /// A model whose arrays live in `f`'s map; only the vocabularies are read from their files.
    pub fn from_pack(files: &ModelFiles, f: &PackFile, with_shortlist: bool) -> Result<Model, ModelError> {
        let invalid = |message: String| ModelError::Invalid { path: f.path().to_path_buf(), message };
        let yml = f.meta()["yml"].as_str().ok_or_else(|| invalid("no model.yml in the pack".into()))?;
        let map = super::yml::parse(yml).map_err(|e| invalid(e.to_string()))?;
        let config = super::config::Config::from_yml(&map).map_err(|e| invalid(e.to_string()))?;
        let c = config.clone();
        let marian = Marian::read_pack(config, yml, f, &f.meta()["marian"]).map_err(|e| invalid(e.to_string()))?;
        let shortlist = if with_shortlist {
            let len = f.entries().find(|e| e.name == "shortlist").map(|e| e.len as usize);
            let len = len.ok_or_else(|| ModelError::NoShortlist { dir: files.dir.clone() })?;
            let bytes = f.shared_bytes("shortlist", Dtype::U8, &[len])?;
            Some(Shortlist::from_packed(bytes, c.src_vocab).map_err(|e| invalid(e.0))?)
        } else {
            None
        };
        let mut m = Model::with_vocabs(marian, files, shortlist)?;
        m.pack = Some(f.clone());
        Ok(m)
    }

    /// How the pack was used for this model.
    pub fn pack_status(&self) -> &PackStatus {
        &self.pack_status
    }

    /// The mapped pack, if the model lives in one.
    pub fn pack_file(&self) -> Option<&PackFile> {
        self.pack.as_ref()
    }
}

/// Whether a failed write is the pack's problem (a full disk), not the model's.
fn is_pack_io(e: &ModelError) -> bool {
    match e {
        ModelError::Read { path, .. } => path.extension().is_some_and(|x| x == "reseam" || x == "tmp"),
        ModelError::Invalid { path, .. } => path.as_os_str() == "<pack>",
        _ => false,
    }
}

#[cfg(test)]
mod tests;
