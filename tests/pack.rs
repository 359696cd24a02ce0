//! `reseam pack` and packs under `reseam translate`: bad packs found and rebuilt, racing
//! packers, read-only folders, pages shared between processes, packs replaced in use.

use std::io::Write;
use std::os::unix::process::CommandExt;
use std::path::{Path, PathBuf};
use std::process::{Command, Output, Stdio};

use crate::common::TestDir;
use crate::engine::esen;

const FILES: [&str; 3] = ["model.esen.intgemm.alphas.bin", "vocab.esen.spm", "lex.50.50.esen.s2t.bin"];
const INPUT: &str = "Hola, mundo.\nEl gato duerme en la casa.\n";

/// A models folder with the fixture as `es-en/`.
fn models(t: &TestDir) -> PathBuf {
    let dir = t.path().join("models");
    let pair = dir.join("es-en");
    std::fs::create_dir_all(&pair).unwrap();
    for f in FILES {
        std::fs::copy(esen().join(f), pair.join(f)).unwrap_or_else(|e| panic!("fixture {f}: {e}"));
    }
    dir
}

/// `reseam` with packs placed by the default policy (next to the model, else the cache).
fn cmd(t: &TestDir) -> Command {
    let mut c = t.cmd();
    c.env_remove("RESEAM_PACK_DIR");
    c
}

fn translate(t: &TestDir, models: &Path, mut c: Command) -> Output {
    c.args(["translate", "--offline", "--models"]).arg(models).args(["es", "en"]);
    t.run(c, INPUT.as_bytes())
}

fn ok(out: &Output) -> (String, String) {
    let err = String::from_utf8_lossy(&out.stderr).into_owned();
    assert!(out.status.success(), "reseam failed: {err}");
    (String::from_utf8(out.stdout.clone()).unwrap(), err)
}

fn pack(t: &TestDir, models: &Path, extra: &[&str]) -> Output {
    let mut c = cmd(t);
    c.arg("pack").arg("--models").arg(models).args(extra);
    t.run(c, b"")
}

/// What the model files alone translate INPUT to.
fn expected(t: &TestDir, models: &Path) -> String {
    let mut c = cmd(t);
    c.env("RESEAM_NO_PACK", "1");
    ok(&translate(t, models, c)).0
}

#[test]
fn every_bad_pack_is_found_named_and_rebuilt() {
    let t = TestDir::new();
    let m = models(&t);
    let want = expected(&t, &m);
    let (_, err) = ok(&pack(&t, &m, &[]));
    assert!(err.contains("packed into") && err.contains("no pack yet"), "{err}");
    let pack_path = m.join("es-en/model.reseam");
    let good = std::fs::read(&pack_path).unwrap();
    let flip = |at: usize| {
        let mut b = good.clone();
        b[at] ^= 0x20;
        b
    };
    let mut older = good.clone();
    older[8] = 1;
    let cases: Vec<(&str, Vec<u8>, &str)> = vec![
        ("truncated", good[..good.len() / 2].to_vec(), "damaged"),
        ("bit flip", flip(4096 + 17), "checksum"),
        ("older version", older, "another version"),
        ("another file", std::fs::read(m.join("es-en/vocab.esen.spm")).unwrap(), "not a pack of this model"),
    ];
    for (what, bytes, reason) in cases {
        std::fs::write(&pack_path, &bytes).unwrap();
        let out = pack(&t, &m, &["--check"]);
        assert_eq!(out.status.code(), Some(1), "{what}: pack --check must fail");
        assert!(
            String::from_utf8_lossy(&out.stderr).contains(reason),
            "{what}: {}",
            String::from_utf8_lossy(&out.stderr)
        );
        let (got, err) = ok(&translate(&t, &m, cmd(&t)));
        let lines: Vec<&str> = err.lines().filter(|l| l.contains("model.reseam")).collect();
        assert_eq!(lines.len(), 1, "{what}: one line naming the pack: {err}");
        assert!(lines[0].contains(reason), "{what}: {err}");
        assert_eq!(got, want, "{what}: the rebuilt pack translates as the files");
        assert!(pack(&t, &m, &["--check"]).status.success(), "{what}: rebuilt");
    }
    // Stale: a source file changed after packing.
    let v = m.join("es-en/vocab.esen.spm");
    let mut vb = std::fs::read(&v).unwrap();
    vb.extend_from_slice(b"\n");
    std::fs::write(&v, &vb).unwrap();
    let out = pack(&t, &m, &["--check", "--json"]);
    assert_eq!(out.status.code(), Some(1));
    let line = String::from_utf8(out.stdout).unwrap();
    let j: serde_json::Value = serde_json::from_str(line.trim()).unwrap();
    assert_eq!(j["status"], "bad");
    assert!(j["why"].as_str().unwrap().contains("stale: vocab.esen.spm"), "{j}");
}

#[test]
fn two_packers_racing_both_succeed_and_leave_one_valid_pack() {
    let t = TestDir::new();
    let m = models(&t);
    let spawn = || {
        let mut c = cmd(&t);
        c.arg("pack").arg("--models").arg(&m).stdout(Stdio::piped()).stderr(Stdio::piped());
        c.spawn().unwrap()
    };
    let (a, b) = (spawn(), spawn());
    for c in [a, b] {
        let out = c.wait_with_output().unwrap();
        assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    }
    let names: Vec<String> =
        std::fs::read_dir(m.join("es-en")).unwrap().map(|e| e.unwrap().file_name().into_string().unwrap()).collect();
    assert_eq!(names.iter().filter(|n| n.contains("reseam")).count(), 1, "{names:?}");
    assert!(pack(&t, &m, &["--check"]).status.success());
}

/// Runs as an unprivileged user when the tests run as root (root writes into read-only
/// folders), so that a read-only folder is read-only.
fn unprivileged(c: &mut Command) {
    if std::fs::metadata("/proc/self").map(|m| std::os::unix::fs::MetadataExt::uid(&m)).unwrap_or(1) == 0 {
        c.uid(65534).gid(65534);
    }
}

fn chmod(p: &Path, mode: u32) {
    use std::os::unix::fs::PermissionsExt;
    std::fs::set_permissions(p, std::fs::Permissions::from_mode(mode)).unwrap();
}

#[test]
fn a_read_only_model_folder_packs_into_the_cache_and_read_only_everything_still_translates() {
    let t = TestDir::new();
    let m = models(&t);
    let want = expected(&t, &m);
    chmod(t.path(), 0o755);
    for p in [&m, &m.join("es-en")] {
        chmod(p, 0o555);
    }
    let cache = t.path().join("cache");
    std::fs::create_dir_all(&cache).unwrap();
    chmod(&cache, 0o777);
    let mut c = cmd(&t);
    unprivileged(&mut c);
    let (got, err) = ok(&translate(&t, &m, c));
    assert_eq!(got, want);
    assert!(!m.join("es-en/model.reseam").exists());
    let packed = cache.join("reseam/packed");
    assert!(err.contains(&packed.display().to_string()), "packed into the cache: {err}");
    // The cache read-only too (a fresh one): translated from memory, with a warning.
    let ro = t.path().join("ro-cache");
    std::fs::create_dir_all(&ro).unwrap();
    chmod(&ro, 0o555);
    let mut c = cmd(&t);
    unprivileged(&mut c);
    c.env("XDG_CACHE_HOME", &ro);
    let (got, err) = ok(&translate(&t, &m, c));
    assert_eq!(got, want);
    assert!(err.contains("warning") && err.contains("into memory"), "{err}");
    for p in [&m, &m.join("es-en")] {
        chmod(p, 0o755);
    }
}

/// `Shared_Clean` kB of the `model.reseam` mappings of a process.
fn shared_clean_kb(pid: u32) -> u64 {
    pack_kb(pid, "Shared_Clean:")
}

/// One field (`Rss:`, `Shared_Clean:`) of the `model.reseam` mappings of a process, in kB.
fn pack_kb(pid: u32, field: &str) -> u64 {
    let smaps = std::fs::read_to_string(format!("/proc/{pid}/smaps")).unwrap_or_default();
    let mut total = 0;
    let mut in_pack = false;
    for line in smaps.lines() {
        let mut words = line.split_whitespace();
        // A mapping's header: "start-end perms offset dev inode [path]".
        if words.next().is_some_and(|w| w.contains('-') && !w.ends_with(':'))
            && words.next().is_some_and(|p| p.len() == 4)
        {
            in_pack = line.ends_with("model.reseam");
        }
        if in_pack && let Some(v) = line.strip_prefix(field) {
            total += v.trim().trim_end_matches(" kB").trim().parse::<u64>().unwrap_or(0);
        }
    }
    total
}

#[test]
fn two_processes_share_the_pages_and_a_pack_replaced_in_use_breaks_nothing() {
    let t = TestDir::new();
    let m = models(&t);
    let want = expected(&t, &m);
    ok(&pack(&t, &m, &[]));
    let size_kb = std::fs::metadata(m.join("es-en/model.reseam")).unwrap().len() / 1024;
    let spawn = || {
        let mut c = cmd(&t);
        c.args(["translate", "--offline", "--models"]).arg(&m).args(["es", "en"]);
        c.stdin(Stdio::piped()).stdout(Stdio::piped()).stderr(Stdio::piped());
        c.spawn().unwrap()
    };
    let (a, b) = (spawn(), spawn());
    // Both map the whole pack (its checksums are read at open).
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(60);
    let (mut sa, mut sb) = (0, 0);
    while std::time::Instant::now() < deadline && (sa < size_kb * 9 / 10 || sb < size_kb * 9 / 10) {
        std::thread::sleep(std::time::Duration::from_millis(100));
        (sa, sb) = (shared_clean_kb(a.id()), shared_clean_kb(b.id()));
    }
    assert!(sa >= size_kb * 9 / 10 && sb >= size_kb * 9 / 10, "Shared_Clean {sa} and {sb} kB of a {size_kb} kB pack");
    // Replace the sources (the shortlist goes) and repack while both still use the old pack.
    std::fs::remove_file(m.join("es-en/lex.50.50.esen.s2t.bin")).unwrap();
    let (_, err) = ok(&pack(&t, &m, &[]));
    assert!(err.contains("packed into"), "{err}");
    for mut c in [a, b] {
        c.stdin.take().unwrap().write_all(INPUT.as_bytes()).unwrap();
        let out = c.wait_with_output().unwrap();
        let (got, _) = ok(&out);
        assert_eq!(got, want, "a process on the replaced pack translates as before");
    }
}

/// Writes `bytes` to `path` as an installer does: a new file renamed over the old name.
fn replace(path: &Path, bytes: &[u8]) {
    let tmp = path.with_extension("new");
    std::fs::write(&tmp, bytes).unwrap();
    std::fs::rename(&tmp, path).unwrap();
}

#[test]
fn a_model_replaced_and_repacked_while_a_process_translates_with_it_breaks_nothing() {
    use reseam::marian::synthetic::{ARCHS, files};
    let t = TestDir::new();
    let m = t.path().join("models");
    let tiny = &ARCHS[0];
    crate::bench_models::write_model(&m, "es", "en", tiny, 1);
    let src = crate::engine::lines("heldout.es");
    let (first, second) = (src[..30].join("\n") + "\n", src[30..60].join("\n") + "\n");
    let all = first.clone() + &second;
    let old = from_files(&t, &m, &all);
    ok(&pack(&t, &m, &[]));
    let size_kb = std::fs::metadata(m.join("es-en/model.reseam")).unwrap().len() / 1024;
    let (a, mut input) = translating(&t, &m, &first);
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(60);
    // Resident: its checksums were read when it was mapped.
    while pack_kb(a.id(), "Rss:") < size_kb * 9 / 10 && std::time::Instant::now() < deadline {
        std::thread::sleep(std::time::Duration::from_millis(20));
    }
    assert!(pack_kb(a.id(), "Rss:") >= size_kb * 9 / 10, "the translating process maps the pack");
    // New source files (another model under the same names), then a new pack, while the
    // process is translating the first lines.
    for (name, bytes) in files("es", "en", tiny, 2).unwrap() {
        replace(&m.join("es-en").join(name), &bytes);
    }
    let (_, err) = ok(&pack(&t, &m, &[]));
    assert!(err.contains("stale") && err.contains("packed into"), "{err}");
    input.write_all(second.as_bytes()).unwrap();
    drop(input);
    let (got, _) = ok(&a.wait_with_output().unwrap());
    assert_eq!(got.lines().count(), 60);
    assert_eq!(got, old, "the process on the replaced pack translates every line with the model it loaded");
    // A new process uses the new model, as its files alone translate.
    let new = from_files(&t, &m, &all);
    assert_ne!(new, old, "the new model translates differently");
    let (now, err) = ok(&translate_all(&t, &m, all.as_bytes()));
    assert!(!err.contains("packed into"), "the new pack is used as it is: {err}");
    assert_eq!(now, new);
}

/// What `models`' es-en files alone (no pack) translate `input` to.
fn from_files(t: &TestDir, models: &Path, input: &str) -> String {
    let mut c = cmd(t);
    c.env("RESEAM_NO_PACK", "1").args(["translate", "--offline", "--models"]).arg(models).args(["es", "en"]);
    ok(&t.run(c, input.as_bytes())).0
}

/// `reseam translate es en` started on `models` and given `first`, its stdin left open.
fn translating(t: &TestDir, models: &Path, first: &str) -> (std::process::Child, std::process::ChildStdin) {
    let mut c = cmd(t);
    c.args(["translate", "--offline", "--models"]).arg(models).args(["es", "en"]);
    let mut a = c.stdin(Stdio::piped()).stdout(Stdio::piped()).stderr(Stdio::piped()).spawn().unwrap();
    let mut input = a.stdin.take().unwrap();
    input.write_all(first.as_bytes()).unwrap();
    input.flush().unwrap();
    (a, input)
}

fn translate_all(t: &TestDir, models: &Path, input: &[u8]) -> Output {
    let mut c = cmd(t);
    c.args(["translate", "--offline", "--models"]).arg(models).args(["es", "en"]);
    t.run(c, input)
}

/// `reseam fetch` of a newer version swaps the files of a model in use: the process that maps
/// the old pack keeps translating with the model it loaded, and the next process repacks.
#[test]
fn a_newer_version_fetched_while_a_process_translates_breaks_nothing() {
    use crate::fetch::server::{files_records, pair_records, write_mirror, write_mirror_with};
    use reseam::marian::synthetic::{ARCHS, files};
    let t = TestDir::new();
    let m = t.path().join("models");
    let (v30, v31) = (t.path().join("mirror-3.0"), t.path().join("mirror-3.1"));
    write_mirror(&v30, &pair_records("es", "en", "3.0", ""));
    let (records, attachments) = files_records("es", "en", "3.1", &files("es", "en", &ARCHS[0], 1).unwrap());
    write_mirror_with(&v31, &records, &attachments);
    let fetch = |source: &Path| {
        let mut c = cmd(&t);
        c.arg("fetch").arg("--models").arg(&m).arg("--source").arg(source).arg("es-en");
        ok(&t.run(c, b""))
    };
    fetch(&v30);
    let src = crate::engine::lines("heldout.es");
    let (first, second) = (src[..20].join("\n") + "\n", src[20..40].join("\n") + "\n");
    let all = first.clone() + &second;
    let old = from_files(&t, &m, &all);

    let (a, mut input) = translating(&t, &m, &first);
    let pack_path = m.join("es-en/model.reseam");
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(60);
    while !(pack_path.exists() && pack_kb(a.id(), "Rss:") > 0) && std::time::Instant::now() < deadline {
        std::thread::sleep(std::time::Duration::from_millis(20));
    }
    assert!(pack_kb(a.id(), "Rss:") > 0, "the translating process maps the pack");

    let (out, err) = fetch(&v31);
    assert!(format!("{out}{err}").contains("3.1"), "fetch installed version 3.1: {out}{err}");
    input.write_all(second.as_bytes()).unwrap();
    drop(input);
    let (got, _) = ok(&a.wait_with_output().unwrap());
    assert_eq!(got, old, "the process on the old pack translates every line with the model it loaded");

    let new = from_files(&t, &m, &all);
    assert_ne!(new, old, "version 3.1 is another model");
    let (now, err) = ok(&translate_all(&t, &m, all.as_bytes()));
    assert!(err.contains("stale"), "the old pack is found stale and rebuilt: {err}");
    assert_eq!(now, new, "a new process translates with version 3.1");
}
