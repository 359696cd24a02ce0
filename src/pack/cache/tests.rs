use super::*;
use crate::pack::Dtype;

const KIND: &str = "test-kind";

struct Fixture {
    dir: tempfile::TempDir,
    files: Vec<PathBuf>,
}

fn fixture() -> Fixture {
    let dir = tempfile::tempdir().unwrap();
    let files = vec![dir.path().join("model.bin"), dir.path().join("vocab.spm")];
    std::fs::write(&files[0], b"weights weights weights").unwrap();
    std::fs::write(&files[1], b"pieces").unwrap();
    Fixture { dir, files }
}

fn pack(fx: &Fixture, at: &Path, layout: &str) -> PathBuf {
    let origin = Origin::of(KIND, layout, b"config", &fx.files, None).unwrap();
    let places = vec![at.to_path_buf()];
    write::<Error>(
        &places,
        |w| {
            w.add_f32("x", &[4], &[1.0, 2.0, 3.0, 4.0])?;
            Ok(serde_json::json!({ "origin": origin.to_json() }))
        },
        KIND,
    )
    .unwrap()
}

fn why(fx: &Fixture, at: &Path) -> Why {
    check(at, KIND, "1", b"config", &fx.files).map(|_| ()).unwrap_err()
}

#[test]
fn a_fresh_pack_is_valid_and_a_touched_unchanged_source_keeps_it_valid() {
    let fx = fixture();
    let at = fx.dir.path().join("model.reseam");
    assert_eq!(why(&fx, &at), Why::Missing);
    pack(&fx, &at, "1");
    let (_, origin) = check(&at, KIND, "1", b"config", &fx.files).unwrap();
    assert_eq!(origin.files[1].sha256, hex(&Sha256::digest(b"pieces")));
    // Same bytes, new modification time: hashed again, still the same file.
    std::thread::sleep(std::time::Duration::from_millis(20));
    std::fs::write(&fx.files[1], b"pieces").unwrap();
    assert!(check(&at, KIND, "1", b"config", &fx.files).is_ok());
}

#[test]
fn each_kind_of_bad_pack_has_its_reason() {
    let fx = fixture();
    let at = fx.dir.path().join("model.reseam");
    pack(&fx, &at, "1");
    let good = std::fs::read(&at).unwrap();

    // A source changed with the same size, or another size; the config changed.
    std::fs::write(&fx.files[0], b"WEIGHTS weights weights").unwrap();
    assert!(matches!(why(&fx, &at), Why::Stale(s) if s.contains("model.bin changed")));
    std::fs::write(&fx.files[0], b"w").unwrap();
    assert!(matches!(why(&fx, &at), Why::Stale(s) if s.contains("model.bin is now 1 bytes")));
    std::fs::write(&fx.files[0], b"weights weights weights").unwrap();
    assert!(check(&at, KIND, "1", b"config", &fx.files).is_ok());
    assert!(
        matches!(check(&at, KIND, "1", b"other", &fx.files).map(|_| ()), Err(Why::Stale(s)) if s.contains("configuration"))
    );

    // Another layout, another container version, another kind, another model's files.
    assert!(matches!(check(&at, KIND, "2", b"config", &fx.files).map(|_| ()), Err(Why::Version(_))));
    let mut old = good.clone();
    old[8] = 1;
    std::fs::write(&at, &old).unwrap();
    assert!(matches!(why(&fx, &at), Why::Version(s) if s.contains("container version 1")));
    std::fs::write(&at, &good).unwrap();
    assert!(matches!(check(&at, "other", "1", b"config", &fx.files).map(|_| ()), Err(Why::NotOurs(_))));
    let other = check(&at, KIND, "1", b"config", &fx.files[..1]).map(|_| ());
    assert!(matches!(&other, Err(Why::NotOurs(s)) if s.contains("vocab.spm")), "{other:?}");
    std::fs::write(&at, b"some other file renamed to model.reseam").unwrap();
    assert!(matches!(why(&fx, &at), Why::NotOurs(_)));

    // Truncated, and one flipped bit in the blob.
    std::fs::write(&at, &good[..good.len() - 3]).unwrap();
    assert!(matches!(why(&fx, &at), Why::Damaged(s) if s.contains("truncated")));
    let mut flipped = good.clone();
    flipped[64] ^= 1;
    std::fs::write(&at, &flipped).unwrap();
    assert!(matches!(why(&fx, &at), Why::Damaged(s) if s.contains("checksum")));
}

#[test]
fn packs_go_next_to_the_model_else_the_next_place_and_stale_copies_go() {
    let fx = fixture();
    let cache = tempfile::tempdir().unwrap();
    let blocked = fx.dir.path().join("model.bin").join("cannot-be-a-folder");
    let fallback = cache.path().join("k").join("model.reseam");
    let places = vec![blocked.join("model.reseam"), fallback.clone()];
    let written = write::<Error>(&places, |w| w.add("b", Dtype::U8, &[1], &[7]).map(|_| serde_json::json!({})), KIND);
    assert_eq!(written.unwrap(), fallback);

    // Written at the first place, an old pack at the second is removed; other files are not.
    let first = fx.dir.path().join("model.reseam");
    let places = vec![first.clone(), fallback.clone()];
    write::<Error>(&places, |w| w.add("b", Dtype::U8, &[1], &[8]).map(|_| serde_json::json!({})), KIND).unwrap();
    assert!(first.exists() && !fallback.exists());
    std::fs::write(&fallback, b"not a pack").unwrap();
    write::<Error>(&places, |w| w.add("b", Dtype::U8, &[1], &[9]).map(|_| serde_json::json!({})), KIND).unwrap();
    assert!(fallback.exists(), "only reseam packs are deleted");

    // Nowhere to write: each place and its error.
    let places = vec![blocked.join("a.reseam")];
    match write::<Error>(&places, |_| Ok(serde_json::json!({})), KIND) {
        Err(WriteError::Nowhere(v)) => assert_eq!(v.len(), 1),
        other => panic!("{:?}", other.map(|_| ())),
    }
}

#[test]
fn the_cache_place_is_per_model_folder() {
    let a = tempfile::tempdir().unwrap();
    let b = tempfile::tempdir().unwrap();
    assert_ne!(folder_key(a.path()), folder_key(b.path()));
    assert_eq!(folder_key(a.path()), folder_key(&a.path().join(".")));
    let p = places(a.path(), "model.reseam", Some(b.path()));
    assert_eq!(p, vec![b.path().join(folder_key(a.path())).join("model.reseam")]);
}

#[test]
fn a_source_unlike_what_fetch_recorded_is_refused_at_pack_time() {
    let fx = fixture();
    let sha = |p: &Path| sha256_file(p).unwrap();
    let manifest = |model_hash: &str| {
        let m = serde_json::json!({"format": 1, "complete": true, "files": [
            {"name": "model.bin", "decompressedHash": model_hash, "decompressedSize": 23},
            {"name": "vocab.spm", "decompressedHash": sha(&fx.files[1])},
        ]});
        std::fs::write(fx.dir.path().join("manifest.json"), m.to_string()).unwrap();
    };
    // As fetch recorded them: packed.
    manifest(&sha(&fx.files[0]));
    Origin::of(KIND, "1", b"config", &fx.files, None).unwrap();
    // A byte flipped since: refused, naming the file and the manifest.
    manifest(&"0".repeat(64));
    let e = Origin::of(KIND, "1", b"config", &fx.files, None).unwrap_err().to_string();
    assert!(e.contains("model.bin") && e.contains("manifest.json") && e.contains("reseam fetch"), "{e}");
    // No manifest, or one that does not name the file: nothing to check against.
    std::fs::write(fx.dir.path().join("manifest.json"), b"{not json").unwrap();
    Origin::of(KIND, "1", b"config", &fx.files, None).unwrap();
    std::fs::remove_file(fx.dir.path().join("manifest.json")).unwrap();
    Origin::of(KIND, "1", b"config", &fx.files, None).unwrap();
}

#[test]
fn only_temporary_packs_untouched_for_the_age_are_removed() {
    let dir = tempfile::tempdir().unwrap();
    let old = dir.path().join(".reseam-pack-old.tmp");
    let young = dir.path().join(".reseam-pack-young.tmp");
    let other = dir.path().join("model.reseam");
    for p in [&old, &young, &other] {
        std::fs::write(p, b"x").unwrap();
    }
    let hour_ago = std::time::SystemTime::now() - std::time::Duration::from_secs(3600);
    for p in [&old, &other] {
        std::fs::File::options().write(true).open(p).unwrap().set_modified(hour_ago).unwrap();
    }
    assert_eq!(remove_stale_temporaries(dir.path(), STALE_TEMPORARY), vec![old.clone()]);
    assert!(!old.exists() && young.exists() && other.exists());
    assert!(remove_stale_temporaries(&dir.path().join("none"), STALE_TEMPORARY).is_empty());
}
