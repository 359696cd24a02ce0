//! `manifest.json` in each pair folder: which record each file came from and its hashes, so a
//! verified file is not downloaded again, an update knows which old files to remove, and
//! `translate --offline` can tell a complete folder from an interrupted one.

use std::io::Write;
use std::path::{Path, PathBuf};

use serde::{Deserialize, Serialize};

use super::error::FetchError;
use super::tags::{self, PIVOT};

pub const FILE_NAME: &str = "manifest.json";

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Manifest {
    /// Layout version of this file.
    pub format: u32,
    pub source_language: String,
    pub target_language: String,
    pub architecture: String,
    pub version: String,
    /// The --source the files came from.
    pub source: String,
    /// All files of the chosen version are installed and verified.
    pub complete: bool,
    pub files: Vec<ManifestFile>,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct ManifestFile {
    pub name: String,
    pub file_type: String,
    pub record_id: String,
    pub version: String,
    pub decompressed_size: u64,
    pub decompressed_hash: String,
    pub attachment_hash: String,
}

impl Manifest {
    /// The manifest of `folder`, or None if there is none or it cannot be read (then it is as if
    /// nothing were installed, and files are checked against the records again).
    pub fn read(folder: &Path) -> Option<Manifest> {
        let bytes = std::fs::read(folder.join(FILE_NAME)).ok()?;
        serde_json::from_slice(&bytes).ok()
    }

    /// Writes atomically: a temporary file in the folder, then a rename.
    pub fn write(&self, folder: &Path) -> Result<(), FetchError> {
        let tmp = folder.join(format!(".{FILE_NAME}.tmp"));
        // Serializing plain strings and numbers cannot fail.
        let json = serde_json::to_vec_pretty(self).expect("manifest serializes");
        let write = || -> std::io::Result<()> {
            let mut f = std::fs::File::create(&tmp)?;
            f.write_all(&json)?;
            f.write_all(b"\n")?;
            f.sync_all()?;
            std::fs::rename(&tmp, folder.join(FILE_NAME))
        };
        write().map_err(|e| {
            let _ = std::fs::remove_file(&tmp);
            FetchError::writing(folder, FILE_NAME, e)
        })
    }

    /// Complete, and every listed file is there with its recorded size.
    pub fn usable(&self, folder: &Path) -> bool {
        self.complete
            && self.files.iter().any(|f| f.file_type == "model")
            && self.files.iter().all(|f| {
                std::fs::metadata(folder.join(&f.name)).is_ok_and(|m| m.is_file() && m.len() == f.decompressed_size)
            })
    }
}

/// The installed folders that translate `from`→`to`: a direct pair, or `from`→en and en→`to`.
/// Only folders whose manifest is complete count, plus folders named exactly `<from>-<to>` that
/// have no manifest but hold a `model.*` file (copied by hand).
pub fn installed_pair(models: &Path, from: &str, to: &str) -> Result<Vec<PathBuf>, FetchError> {
    for tag in [from, to] {
        if !tags::is_valid(tag) {
            return Err(FetchError::Langs(format!("`{tag}` is not a language tag (e.g. `es`, `zh-Hant`)")));
        }
    }
    let folders = installed(models);
    let find = |a: &str, b: &str| -> Option<PathBuf> {
        folders
            .iter()
            .find(|(s, t, _)| s == a && t == b)
            .or_else(|| folders.iter().find(|(s, t, _)| tags::tags_match(s, a) && tags::tags_match(t, b)))
            .map(|(_, _, p)| p.clone())
            .or_else(|| hand_made(&models.join(format!("{a}-{b}"))))
    };
    if let Ok(folders) = tags::route(from, to, find) {
        return Ok(folders);
    }
    let hint = if tags::tags_match(from, PIVOT) || tags::tags_match(to, PIVOT) {
        format!("{from}-{to}")
    } else {
        format!("{from}-{to} (or `reseam fetch {from},{to}`)")
    };
    Err(FetchError::NotInstalled { from: from.into(), to: to.into(), models: models.into(), hint })
}

/// (source, target, folder) of every complete pair folder.
pub fn installed(models: &Path) -> Vec<(String, String, PathBuf)> {
    let Ok(entries) = std::fs::read_dir(models) else { return Vec::new() };
    let mut out: Vec<_> = entries
        .filter_map(Result::ok)
        .map(|e| e.path())
        .filter(|p| p.is_dir())
        .filter_map(|p| {
            let m = Manifest::read(&p)?;
            m.usable(&p).then_some((m.source_language, m.target_language, p))
        })
        .collect();
    out.sort();
    out
}

fn hand_made(folder: &Path) -> Option<PathBuf> {
    if folder.join(FILE_NAME).exists() {
        return None; // ours, and not complete
    }
    let has_model = std::fs::read_dir(folder)
        .ok()?
        .filter_map(Result::ok)
        .any(|e| e.file_name().to_string_lossy().starts_with("model.") && e.path().is_file());
    has_model.then(|| folder.to_path_buf())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn manifest(src: &str, trg: &str, complete: bool) -> Manifest {
        Manifest {
            format: 1,
            source_language: src.into(),
            target_language: trg.into(),
            architecture: "tiny".into(),
            version: "3.0".into(),
            source: "test".into(),
            complete,
            files: vec![ManifestFile {
                name: format!("model.{src}{trg}.intgemm.alphas.bin"),
                file_type: "model".into(),
                record_id: "id".into(),
                version: "3.0".into(),
                decompressed_size: 3,
                decompressed_hash: "0".repeat(64),
                attachment_hash: "1".repeat(64),
            }],
        }
    }

    fn install(models: &Path, m: &Manifest) {
        let folder = models.join(format!("{}-{}", m.source_language, m.target_language));
        std::fs::create_dir_all(&folder).unwrap();
        std::fs::write(folder.join(&m.files[0].name), b"abc").unwrap();
        m.write(&folder).unwrap();
    }

    #[test]
    fn finds_direct_and_pivot_pairs_and_ignores_incomplete_ones() {
        let dir = tempfile::tempdir().unwrap();
        let models = dir.path();
        install(models, &manifest("es", "en", true));
        install(models, &manifest("en", "de", true));
        install(models, &manifest("fr", "en", false));
        install(models, &manifest("zh-Hant", "en", true));
        assert_eq!(installed_pair(models, "es", "en").unwrap(), [models.join("es-en")]);
        assert_eq!(installed_pair(models, "es", "de").unwrap(), [models.join("es-en"), models.join("en-de")]);
        assert_eq!(installed_pair(models, "zh-TW", "en").unwrap(), [models.join("zh-Hant-en")]);
        let err = installed_pair(models, "fr", "en").unwrap_err().to_string();
        assert!(err.contains("reseam fetch fr-en"), "{err}");
        assert!(installed_pair(models, "de", "es").is_err());
        // A listed file with the wrong size makes the folder unusable.
        std::fs::write(models.join("en-de/model.ende.intgemm.alphas.bin"), b"abcd").unwrap();
        assert!(installed_pair(models, "es", "de").is_err());
        assert!(installed_pair(&models.join("missing"), "es", "en").is_err());
        assert!(installed_pair(models, "../es", "en").unwrap_err().is_usage());
    }

    #[test]
    fn hand_copied_folders_count_and_manifests_round_trip() {
        let dir = tempfile::tempdir().unwrap();
        let folder = dir.path().join("it-en");
        std::fs::create_dir_all(&folder).unwrap();
        std::fs::write(folder.join("model.iten.intgemm.alphas.bin"), b"x").unwrap();
        assert_eq!(installed_pair(dir.path(), "it", "en").unwrap(), std::slice::from_ref(&folder));
        let m = manifest("it", "en", true);
        m.write(&folder).unwrap();
        assert_eq!(Manifest::read(&folder), Some(m));
        std::fs::write(folder.join(FILE_NAME), b"{ truncated").unwrap();
        assert_eq!(Manifest::read(&folder), None);
    }
}
