//! Where reseam keeps things on disk when not told otherwise.

use std::path::PathBuf;

/// The user data directory: `$XDG_DATA_HOME`, else `~/.local/share` (Linux and other Unix), or
/// `~/Library/Application Support` (macOS).
pub fn data_dir() -> Option<PathBuf> {
    if let Some(d) = std::env::var_os("XDG_DATA_HOME").filter(|d| !d.is_empty()) {
        return Some(PathBuf::from(d));
    }
    let home = PathBuf::from(std::env::var_os("HOME").filter(|h| !h.is_empty())?);
    if cfg!(target_os = "macos") {
        Some(home.join("Library").join("Application Support"))
    } else {
        Some(home.join(".local").join("share"))
    }
}

/// Default folder of `<from>-<to>/` model folders: `<data dir>/reseam/models`, or `./models`
/// when there is no home directory (as in a minimal container).
pub fn default_models_dir() -> PathBuf {
    data_dir().map(|d| d.join("reseam").join("models")).unwrap_or_else(|| PathBuf::from("models"))
}

/// The user cache directory (`$XDG_CACHE_HOME`, else `~/.cache`, or `~/Library/Caches`), for
/// files reseam can rebuild, such as packed weights.
pub fn cache_dir() -> Option<PathBuf> {
    if let Some(d) = std::env::var_os("XDG_CACHE_HOME").filter(|d| !d.is_empty()) {
        return Some(PathBuf::from(d));
    }
    let home = PathBuf::from(std::env::var_os("HOME").filter(|h| !h.is_empty())?);
    if cfg!(target_os = "macos") { Some(home.join("Library").join("Caches")) } else { Some(home.join(".cache")) }
}

/// Writes `bytes` to `path` through a temporary file in the same folder renamed into place, so
/// a reader never sees half a file and a failed write leaves the old one.
pub fn write_atomically(path: &std::path::Path, bytes: &[u8]) -> std::io::Result<()> {
    use std::io::Write;
    let dir = match path.parent() {
        Some(p) if !p.as_os_str().is_empty() => p,
        _ => std::path::Path::new("."),
    };
    let mut tmp = tempfile::NamedTempFile::new_in(dir)?;
    tmp.write_all(bytes)?;
    tmp.as_file().sync_all()?;
    tmp.persist(path).map_err(|e| e.error)?;
    Ok(())
}

/// Whether reading a file the caller named failed because of the name (missing, a folder, not
/// allowed), not because the disk failed.
pub fn unreadable_by_name(e: &std::io::Error) -> bool {
    use std::io::ErrorKind::*;
    matches!(e.kind(), NotFound | PermissionDenied | IsADirectory | NotADirectory | InvalidFilename)
}
