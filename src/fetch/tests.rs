//! The library entry points on a mirror folder of small stand-in files (their content does not
//! matter to fetching, only their hashes).

use std::path::Path;

use serde_json::{Value, json};

use super::*;

fn sha256(bytes: &[u8]) -> String {
    install::hex(&<sha2::Sha256 as sha2::Digest>::digest(bytes))
}

/// A mirror folder offering `pairs` (e.g. "es-en"), each a model, a vocab and a shortlist.
fn mirror_with(dir: &Path, pairs: &[&str]) {
    let mut records = Vec::new();
    for pair in pairs {
        let (src, trg) = pair.split_once('-').unwrap();
        for (file_type, name) in
            [("model", "model.{}.intgemm.alphas.bin"), ("vocab", "vocab.{}.spm"), ("lex", "lex.50.50.{}.s2t.bin")]
        {
            let name = name.replace("{}", &format!("{src}{trg}"));
            let raw = format!("{name} bytes").repeat(100).into_bytes();
            let zst = zstd::encode_all(&raw[..], 3).unwrap();
            let location = format!("main/translations-models-v2/{pair}-{file_type}.zst");
            let path = dir.join("attachments").join(&location);
            std::fs::create_dir_all(path.parent().unwrap()).unwrap();
            std::fs::write(&path, &zst).unwrap();
            records.push(json!({
                "id": format!("{pair}-{file_type}"), "name": name, "sourceLanguage": src, "targetLanguage": trg,
                "architecture": "tiny", "version": "3.0", "fileType": file_type, "filter_expression": "",
                "decompressedSize": raw.len(), "decompressedHash": sha256(&raw),
                "attachment": {"hash": sha256(&zst), "size": zst.len(), "location": location,
                    "filename": format!("{name}.zst"), "mimetype": "application/zstd"},
            }));
        }
    }
    let records_path = dir.join(source::RECORDS_PATH);
    std::fs::create_dir_all(records_path.parent().unwrap()).unwrap();
    std::fs::write(records_path, serde_json::to_vec(&json!({ "data": records })).unwrap()).unwrap();
}

fn options(models: &Path, mirror: &Path) -> FetchOptions {
    let mut opts = FetchOptions::new(models);
    opts.source = Source::Dir(mirror.to_path_buf());
    opts.progress = ProgressMode::Quiet;
    opts
}

#[test]
fn ensure_pair_installs_a_pivot_once_then_works_offline() {
    let dir = tempfile::tempdir().unwrap();
    let (models, mirror) = (dir.path().join("models"), dir.path().join("mirror"));
    mirror_with(&mirror, &["es-en", "en-de", "de-en"]);
    let opts = options(&models, &mirror);
    let folders = ensure_pair(&opts, "es", "de").unwrap();
    assert_eq!(folders, [models.join("es-en"), models.join("en-de")]);
    assert_eq!(installed_pair(&models, "es", "de").unwrap(), folders);
    assert!(installed_pair(&models, "de", "es").is_err(), "de-en is not installed yet");
    // Installed pairs are used without reading the source.
    std::fs::remove_dir_all(&mirror).unwrap();
    assert_eq!(ensure_pair(&opts, "es", "de").unwrap(), folders);
    assert_eq!(ensure_pair(&opts, "es", "en").unwrap(), [models.join("es-en")]);
    // The cause is the next link of the chain, as the command line prints it.
    let err = format!("{:#}", anyhow::Error::from(ensure_pair(&opts, "de", "en").unwrap_err()));
    assert!(err.contains("no such folder"), "{err}");
}

#[test]
fn ensure_pair_errors_are_clear() {
    let dir = tempfile::tempdir().unwrap();
    let (models, mirror) = (dir.path().join("models"), dir.path().join("mirror"));
    mirror_with(&mirror, &["es-en"]);
    let opts = options(&models, &mirror);
    let err = ensure_pair(&opts, "es", "de").unwrap_err();
    assert!(matches!(&err, FetchError::NotOffered { from, to, .. } if from == "en" && to == "de"), "{err}");
    assert!(ensure_pair(&opts, "es", "es").unwrap_err().is_usage());
    assert!(ensure_pair(&opts, "es/..", "en").unwrap_err().is_usage());
    assert!(!models.join("es-en").exists(), "nothing is installed when the route is incomplete");
}

#[test]
fn fetch_list_and_mirror_agree() {
    let dir = tempfile::tempdir().unwrap();
    let (models, mirror) = (dir.path().join("models"), dir.path().join("mirror"));
    mirror_with(&mirror, &["es-en", "en-es", "en-de"]);
    let opts = options(&models, &mirror);
    let fetched = fetch(&opts, "es").unwrap();
    let names: Vec<_> = fetched.iter().map(|p| format!("{}-{}", p.source_language, p.target_language)).collect();
    assert_eq!(names, ["es-en", "en-es"]);
    assert!(fetched.iter().all(|p| p.installed.downloaded == 3 && p.installed.kept == 0));
    let listing = list(&opts).unwrap();
    let rows: Vec<_> = listing
        .iter()
        .map(|l| (format!("{}-{}", l.source_language, l.target_language), l.installed_version.clone()))
        .collect();
    assert_eq!(
        rows,
        [("en-de".into(), None), ("en-es".into(), Some("3.0".into())), ("es-en".into(), Some("3.0".into()))]
    );
    // A mirror of a mirror holds the same records and verified attachments.
    let copy = dir.path().join("copy");
    let m = super::mirror(&opts, "en-de", &copy).unwrap();
    assert_eq!((m.pairs, m.downloaded), (1, 3));
    let doc: Value = serde_json::from_slice(&std::fs::read(copy.join(source::RECORDS_PATH)).unwrap()).unwrap();
    assert_eq!(doc["data"].as_array().unwrap().len(), 3);
    let again = fetch(&options(&dir.path().join("models2"), &copy), "en-de").unwrap();
    assert_eq!(again[0].installed.downloaded, 3);
}

/// Replaces the stored file of record `id` and makes the record's attachment fields match it, so
/// only the decompressed checks can catch it.
fn respoil(mirror: &Path, id: &str, spoil: impl Fn(Vec<u8>) -> Vec<u8>) {
    let records_path = mirror.join(source::RECORDS_PATH);
    let mut doc: Value = serde_json::from_slice(&std::fs::read(&records_path).unwrap()).unwrap();
    let rec = doc["data"].as_array_mut().unwrap().iter_mut().find(|r| r["id"] == id).unwrap();
    let path = mirror.join("attachments").join(rec["attachment"]["location"].as_str().unwrap());
    let bytes = spoil(std::fs::read(&path).unwrap());
    std::fs::write(&path, &bytes).unwrap();
    rec["attachment"]["hash"] = sha256(&bytes).into();
    rec["attachment"]["size"] = bytes.len().into();
    std::fs::write(&records_path, serde_json::to_vec(&doc).unwrap()).unwrap();
}

#[test]
fn bad_compressed_data_is_caught_by_the_decompressed_checks() {
    let dir = tempfile::tempdir().unwrap();
    let (models, mirror) = (dir.path().join("models"), dir.path().join("mirror"));
    mirror_with(&mirror, &["es-en"]);
    let opts = options(&models, &mirror);
    type Spoil = fn(Vec<u8>) -> Vec<u8>;
    let cases: [(&str, Spoil, &str); 4] = [
        ("es-en-model", |z| z[..z.len() - 5].to_vec(), "not valid zstd"),
        ("es-en-vocab", |z| [z.clone(), z].concat(), "decompressedSize"),
        ("es-en-lex", |z| z.iter().map(|b| b ^ 0x5a).collect(), "decompressedSize"),
        ("es-en-lex", |_| b"random bytes, not zstd".to_vec(), "decompressedSize"),
    ];
    for (id, spoil, expected) in cases {
        mirror_with(&mirror, &["es-en"]);
        respoil(&mirror, id, spoil);
        let err = fetch(&opts, "es-en").unwrap_err().to_string();
        assert!(err.contains(expected) && err.contains("nothing was kept"), "{id}: {err}");
        let left: Vec<_> = std::fs::read_dir(models.join("es-en")).unwrap().map(|e| e.unwrap().file_name()).collect();
        assert!(left.iter().all(|n| n.to_string_lossy().ends_with(".zst.part")), "{id}: {left:?}");
    }
    mirror_with(&mirror, &["es-en"]);
    assert_eq!(fetch(&opts, "es-en").unwrap()[0].installed.downloaded, 3);
}
