//! Mozilla's model files: where they are, how they are read, and the model they make.
//!
//! A model folder holds `model.<pair>.*.bin` (or `.npz`), `vocab.<pair>.spm` (or
//! `srcvocab.<pair>.spm` + `trgvocab.<pair>.spm`) and optionally `lex.*.<pair>.s2t.bin`. Every
//! reader parses from `&[u8]`, so files read into memory and memory maps share one code path.

pub mod binary;
pub mod config;
pub mod layers;
pub mod npz;
pub mod packed;
pub mod search;
pub mod shortlist;
pub mod synthetic;
pub mod transformer;
pub mod yml;

use std::path::{Path, PathBuf};
use std::sync::Arc;

use crate::pack::PackFile;
use crate::vocab::{Vocab, VocabError};
pub use packed::{LoadOptions, PackStatus};
use shortlist::Shortlist;
use transformer::Marian;

#[derive(Debug, thiserror::Error)]
pub enum ModelError {
    #[error(
        "no {from}→{to} model in {dir} (looked for {dir}/{from}-{to}/ and for model files in {dir} itself); \
         put the model folder there or pass --models DIR (env MODELS_DIR)"
    )]
    NotFound { from: String, to: String, dir: PathBuf },
    #[error("{dir} holds a {found} model, not {from}→{to}; pass the folder of the {from}→{to} model")]
    WrongPair { dir: PathBuf, found: String, from: String, to: String },
    #[error("{dir} holds several model files ({names}); choose one with --model FILE")]
    Ambiguous { dir: PathBuf, names: String },
    #[error("--model {0}: no such file")]
    NoSuchModelFile(PathBuf),
    #[error("{dir} has no vocabulary: expected vocab.<pair>.spm, or srcvocab.<pair>.spm and trgvocab.<pair>.spm")]
    NoVocab { dir: PathBuf },
    #[error("{dir} has both a shared vocabulary and split ones; remove one of them")]
    BothVocabs { dir: PathBuf },
    #[error("--shortlist: {dir} has no shortlist file (lex.*.s2t.bin); drop --shortlist or add the file")]
    NoShortlist { dir: PathBuf },
    #[error("cannot read {path}")]
    Read { path: PathBuf, source: std::io::Error },
    #[error("{path} is not a usable model: {message}")]
    Invalid { path: PathBuf, message: String },
    #[error("{path} does not fit the model: {message}")]
    Mismatch { path: PathBuf, message: String },
    #[error(transparent)]
    Vocab(#[from] VocabError),
}

crate::error::fault!(ModelError);

impl ModelError {
    /// The caller's fault (see [`crate::error`]): no model for the pair, the wrong folder, a
    /// choice to make (--model, --shortlist); not a damaged or incomplete model folder.
    pub fn is_usage(&self) -> bool {
        match self {
            ModelError::NotFound { .. }
            | ModelError::WrongPair { .. }
            | ModelError::Ambiguous { .. }
            | ModelError::NoSuchModelFile(_)
            | ModelError::NoShortlist { .. } => true,
            ModelError::Read { source, .. } => crate::paths::unreadable_by_name(source),
            ModelError::Vocab(e) => e.is_usage(),
            ModelError::NoVocab { .. }
            | ModelError::BothVocabs { .. }
            | ModelError::Invalid { .. }
            | ModelError::Mismatch { .. } => false,
        }
    }
}

/// Which vocabulary files a model uses.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum VocabFiles {
    Shared(PathBuf),
    Split { src: PathBuf, trg: PathBuf },
}

/// The files of one translation direction.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ModelFiles {
    pub dir: PathBuf,
    pub model: PathBuf,
    pub vocab: VocabFiles,
    pub shortlist: Option<PathBuf>,
}

fn names_in(dir: &Path) -> Vec<String> {
    let mut names: Vec<String> = std::fs::read_dir(dir)
        .map(|rd| rd.filter_map(|e| e.ok()).filter_map(|e| e.file_name().into_string().ok()).collect())
        .unwrap_or_default();
    names.sort();
    names
}

fn is_model_file(name: &str) -> bool {
    (name.starts_with("model.") && name.ends_with(".bin")) || name.ends_with(".npz")
}

/// The `<pair>` part of `model.<pair>.…` (e.g. `esen`), if the name follows Mozilla's pattern.
fn pair_of(name: &str) -> Option<&str> {
    let rest = name.strip_prefix("model.")?;
    let pair = rest.split('.').next()?;
    (pair.len() >= 4 && pair.chars().all(|c| c.is_ascii_lowercase())).then_some(pair)
}

/// Preference among several model files: the int8 one Firefox uses, then the older int8 layout,
/// then float.
fn rank(name: &str) -> u8 {
    if name.ends_with(".intgemm.alphas.bin") {
        0
    } else if name.ends_with(".intgemm8.bin") {
        1
    } else if name.ends_with(".bin") {
        2
    } else {
        3
    }
}

/// Finds the model for `from → to` under `models` (a model folder, or a folder of `<from>-<to>/`
/// folders). `model` picks a file when the folder holds several.
pub fn find(models: &Path, from: &str, to: &str, model: Option<&Path>) -> Result<ModelFiles, ModelError> {
    let pair_dir = models.join(format!("{from}-{to}"));
    let dir = if pair_dir.is_dir() {
        pair_dir
    } else if names_in(models).iter().any(|n| is_model_file(n)) {
        models.to_path_buf()
    } else {
        return Err(ModelError::NotFound { from: from.into(), to: to.into(), dir: models.into() });
    };
    let names = names_in(&dir);
    let model = match model {
        Some(m) => {
            let p = if m.exists() { m.to_path_buf() } else { dir.join(m) };
            if !p.is_file() {
                return Err(ModelError::NoSuchModelFile(m.into()));
            }
            p
        }
        None => {
            let mut candidates: Vec<&String> = names.iter().filter(|n| is_model_file(n)).collect();
            if candidates.is_empty() {
                return Err(ModelError::NotFound { from: from.into(), to: to.into(), dir: models.into() });
            }
            candidates.sort_by_key(|n| rank(n));
            let best = rank(candidates[0]);
            let tied: Vec<&&String> = candidates.iter().filter(|n| rank(n) == best).collect();
            if tied.len() > 1 {
                let names = tied.iter().map(|s| s.as_str()).collect::<Vec<_>>().join(", ");
                return Err(ModelError::Ambiguous { dir, names });
            }
            dir.join(candidates[0])
        }
    };
    let model_name = model.file_name().and_then(|n| n.to_str()).unwrap_or("");
    let want = format!("{from}{to}");
    if let Some(found) = pair_of(model_name)
        && found != want
    {
        return Err(ModelError::WrongPair { dir, found: found.into(), from: from.into(), to: to.into() });
    }
    let pair = pair_of(model_name).unwrap_or(&want).to_string();
    let pick = |prefix: &str| -> Option<PathBuf> {
        let exact = format!("{prefix}.{pair}.spm");
        if names.contains(&exact) {
            return Some(dir.join(exact));
        }
        let any: Vec<&String> =
            names.iter().filter(|n| n.starts_with(&format!("{prefix}.")) && n.ends_with(".spm")).collect();
        (any.len() == 1).then(|| dir.join(any[0]))
    };
    let vocab = match (pick("vocab"), pick("srcvocab"), pick("trgvocab")) {
        (Some(_), Some(_), _) | (Some(_), _, Some(_)) => return Err(ModelError::BothVocabs { dir }),
        (Some(v), None, None) => VocabFiles::Shared(v),
        (None, Some(src), Some(trg)) => VocabFiles::Split { src, trg },
        _ => return Err(ModelError::NoVocab { dir }),
    };
    let lex: Vec<&String> = names.iter().filter(|n| n.starts_with("lex.") && n.ends_with(".s2t.bin")).collect();
    let shortlist = lex
        .iter()
        .find(|n| n.ends_with(&format!(".{pair}.s2t.bin")))
        .or_else(|| (lex.len() == 1).then(|| &lex[0]))
        .map(|n| dir.join(n));
    Ok(ModelFiles { dir, model, vocab, shortlist })
}

fn read(path: &Path) -> Result<Vec<u8>, ModelError> {
    std::fs::read(path).map_err(|source| ModelError::Read { path: path.into(), source })
}

/// Builds a Marian model from the bytes of a `.bin` or `.npz` file (`path` names it in errors).
pub fn marian_from_bytes(bytes: &[u8], path: &Path) -> Result<Marian, ModelError> {
    let invalid = |message: String| ModelError::Invalid { path: path.into(), message };
    let items = if npz::is_npz(bytes) { npz::parse(bytes) } else { binary::parse(bytes) };
    let items = items.map_err(|e| invalid(e.0))?;
    let yml_item = items
        .iter()
        .find(|i| i.name == "special:model.yml")
        .ok_or_else(|| invalid("it has no special:model.yml (a model written by Marian always has one)".into()))?;
    let raw = &yml_item.data[..yml_item.elements().min(yml_item.data.len())];
    let text = raw.split(|&b| b == 0).next().unwrap_or(&[]);
    let text = std::str::from_utf8(text).map_err(|_| invalid("special:model.yml is not UTF-8 text".into()))?;
    let map = yml::parse(text).map_err(|e| invalid(e.to_string()))?;
    let config = config::Config::from_yml(&map).map_err(|e| invalid(e.to_string()))?;
    let text = text.to_string();
    let mut m = Marian::from_items(config, items).map_err(|e| invalid(e.to_string()))?;
    m.yml = text;
    Ok(m)
}

/// A model ready to translate: network, vocabularies, optional shortlist.
pub struct Model {
    pub marian: Marian,
    pub src_vocab: Arc<Vocab>,
    pub trg_vocab: Arc<Vocab>,
    pub shared_vocab: bool,
    pub shortlist: Option<Shortlist>,
    pub files: ModelFiles,
    /// The mapped pack the arrays live in, if any.
    pack: Option<PackFile>,
    pack_status: PackStatus,
}

impl Model {
    /// Reads every file of a model folder; the shortlist only when asked for.
    pub fn load(files: &ModelFiles, with_shortlist: bool) -> Result<Model, ModelError> {
        let marian = marian_from_bytes(&read(&files.model)?, &files.model)?;
        let c = &marian.config;
        let shortlist = if with_shortlist {
            let path = files.shortlist.as_ref().ok_or_else(|| ModelError::NoShortlist { dir: files.dir.clone() })?;
            let sl = Shortlist::parse(&read(path)?, c.src_vocab, c.trg_vocab)
                .map_err(|e| ModelError::Mismatch { path: path.clone(), message: e.0 })?;
            Some(sl)
        } else {
            None
        };
        Model::with_vocabs(marian, files, shortlist)
    }

    /// Reads the vocabularies and checks them against the network.
    fn with_vocabs(marian: Marian, files: &ModelFiles, shortlist: Option<Shortlist>) -> Result<Model, ModelError> {
        let (src_vocab, trg_vocab, shared_vocab) = match &files.vocab {
            VocabFiles::Shared(p) => {
                let v = Arc::new(Vocab::open(p)?);
                (v.clone(), v, true)
            }
            VocabFiles::Split { src, trg } => (Arc::new(Vocab::open(src)?), Arc::new(Vocab::open(trg)?), false),
        };
        let c = &marian.config;
        for (v, want, side) in [(&src_vocab, c.src_vocab, "source"), (&trg_vocab, c.trg_vocab, "target")] {
            if v.len() != want {
                return Err(ModelError::Mismatch {
                    path: v.path().into(),
                    message: format!(
                        "{} pieces, but the model's {side} vocabulary has {want} (mismatched files?)",
                        v.len()
                    ),
                });
            }
        }
        if marian.trg_vocab() != c.trg_vocab {
            return Err(ModelError::Invalid {
                path: files.model.clone(),
                message: format!("output layer has {} columns, model.yml says {}", marian.trg_vocab(), c.trg_vocab),
            });
        }
        Ok(Model {
            marian,
            src_vocab,
            trg_vocab,
            shared_vocab,
            shortlist,
            files: files.clone(),
            pack: None,
            pack_status: PackStatus::NotUsed("loaded from the model files".into()),
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn finds_the_fixture_and_prefers_int8() {
        let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/tiny-esen");
        let f = find(&dir, "es", "en", None).unwrap();
        assert!(f.model.ends_with("model.esen.intgemm.alphas.bin"), "{f:?}");
        assert!(matches!(&f.vocab, VocabFiles::Shared(p) if p.ends_with("vocab.esen.spm")));
        assert!(f.shortlist.as_ref().unwrap().ends_with("lex.50.50.esen.s2t.bin"));
        let f = find(&dir, "es", "en", Some(Path::new("model.esen.float32.bin"))).unwrap();
        assert!(f.model.ends_with("model.esen.float32.bin"));
        assert!(matches!(find(&dir, "de", "en", None), Err(ModelError::WrongPair { .. })));
        assert!(matches!(find(&dir, "es", "en", Some(Path::new("nope.bin"))), Err(ModelError::NoSuchModelFile(_))));
        assert!(matches!(find(&dir.join("refs"), "es", "en", None), Err(ModelError::NotFound { .. })));
    }
}
