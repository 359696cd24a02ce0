//! What can go wrong while fetching models; every message names the file, URL or flag involved.

use std::io;
use std::path::PathBuf;

#[derive(Debug, thiserror::Error)]
pub enum FetchError {
    /// The LANGS argument (a usage mistake).
    #[error("LANGS: {0}")]
    Langs(String),

    #[error("{from}→{to}: not offered by {origin} ({why}); `reseam fetch --list` shows the pairs it offers")]
    NotOffered { from: String, to: String, origin: String, why: String },

    #[error("{what} at {location}: {detail}")]
    BadDocument { what: &'static str, location: String, detail: String },

    #[error("{url}: {detail} (after {attempts} attempts; --retries and --timeout control this)")]
    Network { url: String, detail: String, attempts: u32 },

    #[error("{url}: the server answered HTTP {status}{hint}")]
    Http { url: String, status: u16, hint: &'static str },

    #[error("{file}: {field} is {expected} bytes but {got} bytes arrived from {origin}; nothing was kept")]
    SizeMismatch { file: String, field: &'static str, expected: u64, got: u64, origin: String },

    #[error("{file}: sha256 {got} does not match {field} {expected} (from {origin}); nothing was kept")]
    HashMismatch { file: String, field: &'static str, expected: String, got: String, origin: String },

    #[error("{file}: the download from {origin} is not valid zstd ({detail}); nothing was kept")]
    Decompress { file: String, origin: String, detail: String },

    #[error(
        "cannot write to {}; the models folder must be writable (choose another with --models or MODELS_DIR)",
        path.display()
    )]
    NotWritable { path: PathBuf, source: io::Error },

    #[error("no space left in {} while writing {file}; free some space or choose another folder with --models or MODELS_DIR", path.display())]
    NoSpace { path: PathBuf, file: String, source: io::Error },

    #[error("{}", path.display())]
    Io { path: PathBuf, source: io::Error },

    #[error("no {from}→{to} models in {}; run `reseam fetch {hint}` first (or leave out --offline)", models.display())]
    NotInstalled { from: String, to: String, models: PathBuf, hint: String },
}

crate::error::fault!(FetchError);

impl FetchError {
    /// The caller's fault (see [`crate::error`]): bad LANGS, or a pair that is not offered or
    /// not installed; not the network, the server or the disk.
    pub fn is_usage(&self) -> bool {
        matches!(self, FetchError::Langs(_) | FetchError::NotOffered { .. } | FetchError::NotInstalled { .. })
    }

    /// Classifies a write failure under `path` (a folder or a file in it).
    pub(crate) fn writing(path: impl Into<PathBuf>, file: &str, e: io::Error) -> FetchError {
        let path = path.into();
        match e.kind() {
            io::ErrorKind::PermissionDenied | io::ErrorKind::ReadOnlyFilesystem => {
                FetchError::NotWritable { path, source: e }
            }
            io::ErrorKind::StorageFull | io::ErrorKind::QuotaExceeded | io::ErrorKind::FileTooLarge => {
                FetchError::NoSpace { path, file: file.to_string(), source: e }
            }
            _ => FetchError::Io { path, source: e },
        }
    }

    pub(crate) fn io(path: impl Into<PathBuf>, e: io::Error) -> FetchError {
        FetchError::Io { path: path.into(), source: e }
    }
}
