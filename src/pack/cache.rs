//! When a packed file may be used, and where it goes: the policy every model kind shares.
//!
//! A pack goes next to its model (`<model folder>/<name>`) when that folder is writable, else
//! into `$XDG_CACHE_HOME/reseam/packed/<folder>-<hash of its path>/<name>` (a system package
//! path, a read-only volume). It records what it was made from ([`Origin`]: the size,
//! modification time and SHA-256 of every source file, the model's config, the producer's
//! layout version and the reseam version), and is used only when all of that still holds
//! ([`check`]). Hashing gigabytes at every start would cost seconds, so a file whose size and
//! modification time are unchanged keeps its recorded hash; a touched file is hashed again, and
//! so is one modified within 100 ms of its hashing (file times follow a coarse clock, a tick of
//! at most 10 ms on Linux: a change right after hashing can keep the same time, git's "racily
//! clean" case). A pack is made at least that long after its sources were last written.
//!
//! A pack is never changed in place: a mapped file that shrinks kills the process mapping it
//! (SIGBUS). A new pack is written to a temporary file and renamed over the old name, so a
//! process still mapping the old one keeps a valid mapping of the old inode.

use std::io::Read;
use std::path::{Path, PathBuf};

use serde::{Deserialize, Serialize};
use sha2::{Digest, Sha256};

use super::{Error, PackFile, Writer};

/// One source file as it was when the pack was made.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct SourceFile {
    pub name: String,
    pub size: u64,
    pub modified_ns: i128,
    pub sha256: String,
}

/// What a pack was made from.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct Origin {
    /// The producer (`reseam-marian`, `reseam-llm`).
    pub kind: String,
    /// The producer's packed layout version.
    pub layout: String,
    pub reseam: String,
    pub config_sha256: String,
    pub files: Vec<SourceFile>,
    /// When the hashes were taken (ns since the epoch).
    pub hashed_ns: i128,
}

const RACY_NS: i128 = 100_000_000;

fn now_ns() -> i128 {
    std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH).map(|d| d.as_nanos() as i128).unwrap_or(0)
}

/// Why a pack cannot be used; shown on the one line that says it is being rebuilt.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum Why {
    #[error("no pack yet")]
    Missing,
    #[error("damaged: {0}")]
    Damaged(String),
    #[error("not a pack of this model: {0}")]
    NotOurs(String),
    #[error("made by another version: {0}")]
    Version(String),
    #[error("stale: {0}")]
    Stale(String),
}

pub fn hex(b: &[u8]) -> String {
    b.iter().map(|x| format!("{x:02x}")).collect()
}

fn io(path: &Path) -> impl FnOnce(std::io::Error) -> Error + '_ {
    move |source| Error::Io { path: path.to_path_buf(), source }
}

fn modified_ns(meta: &std::fs::Metadata) -> i128 {
    meta.modified()
        .ok()
        .and_then(|t| t.duration_since(std::time::UNIX_EPOCH).ok())
        .map(|d| d.as_nanos() as i128)
        .unwrap_or(0)
}

/// SHA-256 of a file, streamed.
pub fn sha256_file(path: &Path) -> Result<String, Error> {
    let mut f = std::fs::File::open(path).map_err(io(path))?;
    let mut h = Sha256::new();
    let mut buf = vec![0u8; 1 << 20];
    loop {
        let n = f.read(&mut buf).map_err(io(path))?;
        if n == 0 {
            break;
        }
        h.update(&buf[..n]);
    }
    Ok(hex(&h.finalize()))
}

/// The manifest `reseam fetch` writes beside the files it verified (`crate::fetch::manifest`).
const FETCH_MANIFEST: &str = "manifest.json";

/// Checks a freshly hashed source file against the SHA-256 that `reseam fetch` recorded for it
/// in its folder's manifest, if there is one that names it: bytes flipped on disk since the
/// download are found when the model is packed, not as wrong translations.
fn check_recorded(path: &Path, name: &str, sha256: &str) -> Result<(), Error> {
    #[derive(Deserialize)]
    #[serde(rename_all = "camelCase")]
    struct Recorded {
        name: String,
        decompressed_hash: String,
    }
    #[derive(Deserialize)]
    struct Manifest {
        files: Vec<Recorded>,
    }
    let Some(dir) = path.parent() else { return Ok(()) };
    let manifest = dir.join(FETCH_MANIFEST);
    // No manifest (a model not installed by fetch) or one that cannot be read: nothing to check
    // against (fetch itself does not trust such a folder).
    let Ok(bytes) = std::fs::read(&manifest) else { return Ok(()) };
    let Ok(m) = serde_json::from_slice::<Manifest>(&bytes) else { return Ok(()) };
    match m.files.iter().find(|f| f.name == name) {
        Some(f) if !f.decompressed_hash.eq_ignore_ascii_case(sha256) => Err(Error::Source {
            path: path.to_path_buf(),
            why: format!(
                "SHA-256 {sha256} is not the {} that `reseam fetch` verified and recorded in {}                  (the file changed on disk since); `reseam fetch` installs it again",
                f.decompressed_hash,
                manifest.display()
            ),
        }),
        _ => Ok(()),
    }
}

impl Origin {
    /// The origin of a pack made now from `files` and `config`. A file whose name, size and
    /// modification time match `known` keeps the hash recorded there.
    pub fn of(
        kind: &str,
        layout: &str,
        config: &[u8],
        files: &[PathBuf],
        known: Option<&Origin>,
    ) -> Result<Origin, Error> {
        let mut out = Vec::with_capacity(files.len());
        if known.is_none() {
            let newest = files.iter().filter_map(|p| std::fs::metadata(p).ok()).map(|m| modified_ns(&m)).max();
            let wait = newest.map_or(0, |t| t + RACY_NS - now_ns());
            if wait > 0 {
                std::thread::sleep(std::time::Duration::from_nanos(wait.min(RACY_NS) as u64));
            }
        }
        let hashed_ns = now_ns();
        for path in files {
            let meta = std::fs::metadata(path).map_err(io(path))?;
            let name = path.file_name().map(|n| n.to_string_lossy().into_owned()).unwrap_or_default();
            let (size, modified_ns) = (meta.len(), modified_ns(&meta));
            let same = known
                .and_then(|k| k.files.iter().find(|f| f.name == name))
                .filter(|f| f.size == size && f.modified_ns == modified_ns)
                .filter(|f| known.is_some_and(|k| f.modified_ns + RACY_NS < k.hashed_ns));
            let sha256 = match same {
                Some(f) => f.sha256.clone(),
                None => {
                    let sha256 = sha256_file(path)?;
                    check_recorded(path, &name, &sha256)?;
                    sha256
                }
            };
            out.push(SourceFile { name, size, modified_ns, sha256 });
        }
        Ok(Origin {
            kind: kind.into(),
            layout: layout.into(),
            reseam: env!("CARGO_PKG_VERSION").into(),
            config_sha256: hex(&Sha256::digest(config)),
            files: out,
            hashed_ns,
        })
    }

    /// The origin a pack records, if it is a pack made under this policy.
    pub fn of_pack(f: &PackFile) -> Option<Origin> {
        serde_json::from_value(f.meta().get("origin")?.clone()).ok()
    }

    pub fn to_json(&self) -> serde_json::Value {
        serde_json::to_value(self).unwrap_or_default()
    }
}

/// Opens `path` and checks that it is a pack of `kind`/`layout` made from exactly `files` and
/// `config` as they are now. Returns the pack and its (current) origin.
pub fn check(
    path: &Path,
    kind: &str,
    layout: &str,
    config: &[u8],
    files: &[PathBuf],
) -> Result<(PackFile, Origin), Why> {
    let f = match PackFile::open(path) {
        Ok(f) => f,
        Err(Error::Io { source, .. }) if source.kind() == std::io::ErrorKind::NotFound => return Err(Why::Missing),
        Err(Error::Version { found, .. }) => {
            return Err(Why::Version(format!("container version {found}, this reseam writes {}", super::VERSION)));
        }
        Err(Error::Format { why, .. }) if why == super::NOT_A_PACK => return Err(Why::NotOurs(why)),
        Err(Error::Format { why, .. }) => return Err(Why::Damaged(why)),
        Err(Error::Io { source, .. }) => return Err(Why::Damaged(source.to_string())),
        Err(e) => return Err(Why::Damaged(e.to_string())),
    };
    if f.kind() != kind {
        return Err(Why::NotOurs(format!("it holds a {:?} pack, not {kind:?}", f.kind())));
    }
    let Some(old) = Origin::of_pack(&f) else {
        return Err(Why::NotOurs("it does not say what it was made from".into()));
    };
    let me = env!("CARGO_PKG_VERSION");
    if old.reseam != me {
        return Err(Why::Version(format!("packed by reseam {}, this is {me}", old.reseam)));
    }
    if old.layout != layout {
        return Err(Why::Version(format!("layout {}, this reseam writes {layout}", old.layout)));
    }
    let names = |o: &[SourceFile]| o.iter().map(|f| f.name.clone()).collect::<Vec<_>>();
    let mut now = Origin::of(kind, layout, config, files, Some(&old)).map_err(|e| Why::Stale(e.to_string()))?;
    if names(&old.files) != names(&now.files) {
        return Err(Why::NotOurs(format!(
            "made from {}, this model is {}",
            names(&old.files).join(", "),
            names(&now.files).join(", ")
        )));
    }
    for (a, b) in old.files.iter().zip(&now.files) {
        if a.size != b.size {
            return Err(Why::Stale(format!("{} is now {} bytes, was {}", b.name, b.size, a.size)));
        }
        if a.sha256 != b.sha256 {
            return Err(Why::Stale(format!("{} changed since it was packed", b.name)));
        }
    }
    if old.config_sha256 != now.config_sha256 {
        return Err(Why::Stale("the model's configuration changed".into()));
    }
    // Nothing was rehashed: the recorded time still stands for every hash.
    if now.files.iter().zip(&old.files).all(|(a, b)| a.modified_ns == b.modified_ns) {
        now.hashed_ns = old.hashed_ns;
    }
    Ok((f, now))
}

/// `<folder name>-<16 hex digits of its absolute path's SHA-256>`: one cache folder per model
/// folder, stable across runs, readable by a person.
pub fn folder_key(model_dir: &Path) -> String {
    let abs = model_dir.canonicalize().unwrap_or_else(|_| model_dir.to_path_buf());
    let name: String = abs
        .file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_else(|| "model".into())
        .chars()
        .map(|c| if c.is_ascii_alphanumeric() || c == '-' || c == '.' || c == '_' { c } else { '_' })
        .collect();
    format!("{name}-{}", &hex(&Sha256::digest(abs.to_string_lossy().as_bytes()))[..16])
}

/// Where the pack `file_name` of the model in `model_dir` may be, in order of preference: in
/// `pack_dir/<folder key>/` when given, else next to the model, then the user cache.
pub fn places(model_dir: &Path, file_name: &str, pack_dir: Option<&Path>) -> Vec<PathBuf> {
    let key = folder_key(model_dir);
    match pack_dir {
        Some(d) => vec![d.join(key).join(file_name)],
        None => {
            let mut v = vec![model_dir.join(file_name)];
            if let Some(c) = crate::paths::cache_dir() {
                v.push(c.join("reseam").join("packed").join(key).join(file_name));
            }
            v
        }
    }
}

/// The first valid pack among `places`, or why each one is not.
pub fn find(
    places: &[PathBuf],
    kind: &str,
    layout: &str,
    config: &[u8],
    files: &[PathBuf],
) -> Result<(PackFile, Origin), Vec<(PathBuf, Why)>> {
    let mut why = Vec::new();
    for p in places {
        match check(p, kind, layout, config, files) {
            Ok(found) => return Ok(found),
            Err(w) => why.push((p.clone(), w)),
        }
    }
    Err(why)
}

/// The reason to show for rebuilding: the first place that holds something unusable, else
/// "no pack yet" at the preferred place.
pub fn rebuild_reason(why: &[(PathBuf, Why)]) -> (PathBuf, Why) {
    why.iter().find(|(_, w)| *w != Why::Missing).or(why.first()).cloned().unwrap_or((PathBuf::new(), Why::Missing))
}

/// Why writing failed.
#[derive(Debug)]
pub enum WriteError<E> {
    /// No place could take the file: each place and its error.
    Nowhere(Vec<(PathBuf, String)>),
    /// The producer failed (a problem with the source files, or disk full).
    Build(E),
}

/// Writes a pack at the first of `places` whose folder accepts a new file: `build` fills the
/// writer, then the file is renamed into place. Returns the path written. Unusable packs left
/// at the other places are removed (best effort; a pack mapped elsewhere stays readable by its
/// process).
pub fn write<E>(
    places: &[PathBuf],
    mut build: impl FnMut(&mut Writer) -> Result<serde_json::Value, E>,
    kind: &str,
) -> Result<PathBuf, WriteError<E>>
where
    E: From<Error>,
{
    let mut refused = Vec::new();
    for (i, p) in places.iter().enumerate() {
        let mut w = match Writer::create(p) {
            Ok(w) => w,
            Err(e) => {
                refused.push((p.clone(), e.to_string()));
                continue;
            }
        };
        let meta = build(&mut w).map_err(WriteError::Build)?;
        let path = w.finish(kind, meta).map_err(|e| WriteError::Build(E::from(e)))?;
        for other in places.iter().skip(i + 1) {
            if is_a_pack(other) {
                let _ = std::fs::remove_file(other);
            }
        }
        return Ok(path);
    }
    Err(WriteError::Nowhere(refused))
}

/// A temporary pack not written to for this long was left by a packer that died (a packer
/// writes its file without pause; the largest models take well under a minute).
pub const STALE_TEMPORARY: std::time::Duration = std::time::Duration::from_secs(600);

/// Removes the temporary packs (`.reseam-pack-*.tmp`) in `dir` that were last written more than
/// `age` ago, left by a packer that was killed; returns the files removed. A packer at work in
/// another process keeps its file younger than that.
pub fn remove_stale_temporaries(dir: &Path, age: std::time::Duration) -> Vec<PathBuf> {
    let Ok(entries) = std::fs::read_dir(dir) else { return Vec::new() };
    let mut removed = Vec::new();
    for e in entries.flatten() {
        let name = e.file_name();
        let name = name.to_string_lossy();
        if !(name.starts_with(".reseam-pack-") && name.ends_with(".tmp")) {
            continue;
        }
        let old = e
            .metadata()
            .ok()
            .filter(|m| m.is_file())
            .and_then(|m| m.modified().ok())
            .and_then(|t| t.elapsed().ok())
            .is_some_and(|d| d >= age);
        if old && std::fs::remove_file(e.path()).is_ok() {
            removed.push(e.path());
        }
    }
    removed
}

/// Whether `path` starts like a reseam pack (only those are ever deleted).
fn is_a_pack(path: &Path) -> bool {
    let mut head = [0u8; 8];
    std::fs::File::open(path).and_then(|mut f| f.read_exact(&mut head)).is_ok() && head == super::MAGIC
}

#[cfg(test)]
mod tests;
