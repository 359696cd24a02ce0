//! Synthetic models at Firefox's architectures (loaded through the normal path, packed, and
//! translating alike with and without their packs) and `reseam bench models` on them.

use std::path::{Path, PathBuf};

use reseam::marian::synthetic::{self, ARCHS, Arch};
use reseam::marian::{PackStatus, find};
use reseam::translate::{TranslateOptions, Translator};

use crate::common::TestDir;
use crate::engine::lines;

/// Writes a synthetic `from`→`to` model of `arch` as `<dir>/<from>-<to>/`.
pub fn write_model(dir: &Path, from: &str, to: &str, arch: &Arch, seed: u64) -> PathBuf {
    let folder = dir.join(format!("{from}-{to}"));
    std::fs::create_dir_all(&folder).unwrap();
    for (name, bytes) in synthetic::files(from, to, arch, seed).unwrap() {
        std::fs::write(folder.join(name), bytes).unwrap();
    }
    folder
}

fn translate(models: &Path, packs: &Path, no_pack: bool, texts: &[&str]) -> (Vec<String>, PackStatus) {
    let files = find(models, "es", "en", None).unwrap();
    let mut o = TranslateOptions::new(models, "es", "en");
    o.no_pack = no_pack;
    o.pack_dir = Some(packs.to_path_buf());
    o.threads = 2;
    let t = Translator::from_files(&[files], &o).unwrap();
    let status = t.model().pack_status().clone();
    (t.translate_posts(texts).unwrap(), status)
}

#[test]
fn a_synthetic_model_of_each_architecture_loads_packs_and_translates_alike_with_and_without_its_pack() {
    let src = lines("heldout.es");
    let texts: Vec<&str> = src.iter().take(3).map(String::as_str).collect();
    for arch in &ARCHS {
        let t = TestDir::new();
        let models = t.path().join("models");
        write_model(&models, "es", "en", arch, 11);
        let packs = t.path().join("packs");
        let (want, status) = translate(&models, &packs, true, &texts);
        assert!(matches!(status, PackStatus::NotUsed(_)), "{}: {status:?}", arch.name);
        assert!(want.iter().any(|l| !l.is_empty()), "{}: the model says something: {want:?}", arch.name);
        let (packed, status) = translate(&models, &packs, false, &texts);
        assert!(matches!(status, PackStatus::Written { .. }), "{}: {status:?}", arch.name);
        assert_eq!(packed, want, "{}: the pack it wrote translates as the files", arch.name);
        let (mapped, status) = translate(&models, &packs, false, &texts);
        assert!(matches!(status, PackStatus::Loaded(_)), "{}: {status:?}", arch.name);
        assert_eq!(mapped, want, "{}: the mapped pack translates as the files", arch.name);
        let files = find(&models, "es", "en", None).unwrap();
        let m = reseam::marian::Model::load(&files, true).unwrap();
        let c = &m.marian.config;
        assert_eq!((c.dim, c.dec_depth, c.enc_ffn, c.src_vocab), (arch.dim, arch.dec_depth, arch.ffn, 32_000));
        assert_eq!(m.src_vocab.len(), 32_000);
        assert!(m.shortlist.is_some(), "{}: its shortlist loads", arch.name);
    }
}

fn bench(t: &TestDir, args: &[&str]) -> std::process::Output {
    let mut c = t.cmd();
    c.args(["bench", "models"]).args(args);
    t.run(c, b"")
}

fn json(out: &std::process::Output) -> serde_json::Value {
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "bench models failed: {err}");
    serde_json::from_slice(&out.stdout).unwrap_or_else(|e| panic!("{e}: {}", String::from_utf8_lossy(&out.stdout)))
}

fn num(v: &serde_json::Value, key: &str) -> f64 {
    v[key].as_f64().unwrap_or_else(|| panic!("{key} is not a number in {v}"))
}

#[test]
fn bench_models_json_on_three_tiny_synthetic_models_gives_sane_figures() {
    let t = TestDir::new();
    let dir = t.path().join("synthetic");
    let d = dir.to_str().unwrap();
    let v = json(&bench(&t, &["--synthetic", "tiny", "--count", "3", "--synthetic-dir", d, "--json"]));
    assert_eq!(v["models"], 3, "{v}");
    assert_eq!(v["packed"], 3, "{v}");
    assert_eq!(v["architectures"], serde_json::json!({"tiny": 3}), "{v}");
    for pair in ["es-en", "en-es", "fr-en"] {
        assert!(dir.join(pair).join(format!("vocab.{}.spm", pair.replace('-', ""))).is_file(), "{pair}");
    }
    let pack_mb = num(&v, "pack_mb");
    // A tiny model is 17 MB of weights, its pack more (the output layer's own packed copy).
    assert!((3.0 * 17.0..3.0 * 40.0).contains(&pack_mb), "{v}");
    let load = num(&v, "load_s");
    assert!(load > 0.0 && load < 60.0, "{v}");
    let (rss, mapped, anon, packs) = (num(&v, "rss_mb"), num(&v, "mapped_mb"), num(&v, "anon_mb"), num(&v, "packs_mb"));
    assert!(anon > 0.0 && (rss - mapped - anon).abs() < 1.0, "{v}");
    // In use, every pack is resident (its checksums were read at load); idle, none is.
    assert!(packs > 0.9 * pack_mb && packs <= pack_mb + 1.0 && packs <= mapped, "{v}");
    assert!(num(&v, "idle_packs_mb") < 0.1 * pack_mb, "{v}");
    assert!(num(&v, "idle_rss_mb") < rss - 0.8 * pack_mb, "{v}");
    for key in ["wake_ms", "wake_p50_ms", "busy_ms", "page_in_ms", "check_s", "vocab_s"] {
        assert!(num(&v, key) > 0.0, "{key}: {v}");
    }
    assert!(num(&v, "wake_ms") >= num(&v, "wake_p50_ms"), "{v}");
    assert_eq!(v["wake_ms_by_arch"]["tiny"], v["wake_ms"], "{v}");
    assert_eq!(v["busy_ms_by_arch"]["tiny"], v["busy_ms"], "{v}");
    match v["cold_cache"].as_str() {
        Some("fadvise" | "drop_caches") => assert!(num(&v, "load_cold_s") > 0.0, "{v}"),
        None => assert!(v["load_cold_s"].is_null(), "{v}"),
        Some(other) => panic!("cold_cache {other}"),
    }
    assert_eq!(v["seed"], 1);
    // Again on the kept folder: the same files, their packs still valid, nothing rewritten.
    let again =
        json(&bench(&t, &["--synthetic", "tiny", "--count", "3", "--synthetic-dir", d, "--json", "--skip-cold"]));
    assert_eq!((&again["packed"], &again["models"]), (&serde_json::json!(0), &serde_json::json!(3)), "{again}");
    assert!(again["load_cold_s"].is_null() && again["cold_cache"].is_null(), "{again}");
    // And as a models folder, in text.
    let out = bench(&t, &["--models", d, "--skip-cold"]);
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(out.status.success() && text.starts_with("3 models (tiny 3)") && text.contains("idle "), "{text}");
}

#[test]
fn bench_models_usage_errors_exit_2() {
    let t = TestDir::new();
    let empty = t.path().join("empty");
    std::fs::create_dir_all(&empty).unwrap();
    for (args, says) in [
        (vec!["--models", empty.to_str().unwrap()], "no <from>-<to>/ model folders"),
        (vec!["--synthetic", "tiny", "--count", "0"], "--count"),
        (vec!["--synthetic", "tiny", "--count", "81"], "from 1 to 80"),
        (vec!["--synthetic", "huge"], "huge"),
    ] {
        let out = bench(&t, &args);
        let err = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(2), "{args:?}: {err}");
        assert!(err.contains(says), "{args:?}: {err}");
    }
}
