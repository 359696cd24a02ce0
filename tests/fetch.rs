//! `reseam fetch` against a Remote Settings look-alike on a loopback port, and against mirror
//! folders. After every run the models folder must hold only complete, verified files.

pub mod server;

use std::path::{Path, PathBuf};
use std::process::{Command, Output, Stdio};
use std::time::{Duration, Instant};

use serde_json::Value;

use crate::common::TestDir;
use server::{RECORDS, Server, esen, pair_records, sha256, write_mirror};

const BETA: &str = "env.channel != 'release'";
const ALPHA: &str = "env.channel == 'default' || env.channel == 'nightly'";

fn fetch_cmd(t: &TestDir, models: &Path, source: &str) -> Command {
    let mut c = t.cmd();
    // The loopback server must be reached directly.
    for k in ["http_proxy", "HTTP_PROXY", "https_proxy", "HTTPS_PROXY", "all_proxy", "ALL_PROXY"] {
        c.env_remove(k);
    }
    c.arg("fetch").arg("--models").arg(models).arg("--source").arg(source);
    c
}

fn run(t: &TestDir, mut cmd: Command, args: &[&str]) -> Output {
    cmd.args(args);
    t.run(cmd, b"")
}

fn stderr(o: &Output) -> String {
    String::from_utf8_lossy(&o.stderr).into_owned()
}

fn stdout(o: &Output) -> String {
    String::from_utf8_lossy(&o.stdout).into_owned()
}

/// Checks the models folder holds only complete, verified files, and returns the pair folders
/// that are installed (complete manifest), sorted. Hidden files may only be resumable partial
/// downloads: a prefix of a compressed fixture file.
fn installed_pairs(models: &Path) -> Vec<String> {
    let mut installed = Vec::new();
    let Ok(entries) = std::fs::read_dir(models) else { return installed };
    for folder in entries.map(|e| e.unwrap().path()) {
        assert!(folder.is_dir(), "only pair folders belong in the models folder: {}", folder.display());
        let manifest: Option<Value> = std::fs::read(folder.join("manifest.json"))
            .ok()
            .map(|b| serde_json::from_slice(&b).expect("manifest JSON"));
        let complete = manifest.as_ref().is_some_and(|m| m["complete"] == true);
        for file in std::fs::read_dir(&folder).unwrap().map(|e| e.unwrap().path()) {
            let name = file.file_name().unwrap().to_string_lossy().into_owned();
            let bytes = std::fs::read(&file).unwrap();
            if name.starts_with('.') {
                assert!(name.ends_with(".zst.part"), "unexpected temporary file {}", file.display());
                assert!(
                    esen().iter().any(|f| f.zst.starts_with(&bytes)),
                    "{} is not a prefix of a served attachment",
                    file.display()
                );
            } else if name != "manifest.json" {
                assert!(complete, "{} sits in a folder without a complete manifest", file.display());
                let entry = manifest.as_ref().unwrap()["files"]
                    .as_array()
                    .unwrap()
                    .iter()
                    .find(|f| f["name"] == name.as_str())
                    .unwrap_or_else(|| panic!("{} is not in the manifest", file.display()))
                    .clone();
                assert_eq!(entry["decompressedHash"], sha256(&bytes), "{} does not verify", file.display());
                assert!(esen().iter().any(|f| f.raw == bytes), "{} is not a fixture file", file.display());
            }
        }
        if complete {
            for f in manifest.as_ref().unwrap()["files"].as_array().unwrap() {
                assert!(folder.join(f["name"].as_str().unwrap()).is_file(), "manifest lists a missing file");
            }
            installed.push(folder.file_name().unwrap().to_string_lossy().into_owned());
        }
    }
    installed.sort();
    installed
}

/// Files (not hidden, not the manifest) in a pair folder.
fn files_in(folder: &Path) -> Vec<String> {
    let mut names: Vec<String> = std::fs::read_dir(folder)
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .filter(|n| !n.starts_with('.') && n != "manifest.json")
        .collect();
    names.sort();
    names
}

fn attachment_requests(log: &[server::Seen]) -> Vec<&server::Seen> {
    log.iter().filter(|(p, _)| p.starts_with("/attachments/")).collect()
}

fn release_and_prereleases() -> Vec<Value> {
    let mut records = pair_records("es", "en", "3.0", "");
    records.extend(pair_records("es", "en", "3.1b1", BETA));
    records.extend(pair_records("es", "en", "3.2a1", ALPHA));
    records.extend(pair_records("es", "en", "4.0", ""));
    records
}

#[test]
fn happy_path_installs_firefox_names_and_does_not_download_twice() {
    let t = TestDir::new();
    let server = Server::start(release_and_prereleases());
    let models = t.path().join("models");
    let out = run(&t, fetch_cmd(&t, &models, &server.url), &["es"]);
    assert!(out.status.success(), "{}", stderr(&out));
    assert!(stderr(&out).contains("en→es: not offered"), "{}", stderr(&out));
    assert!(stdout(&out).starts_with("es-en\ttiny\t3.0\t"), "{}", stdout(&out));
    assert_eq!(installed_pairs(&models), ["es-en"]);
    let folder = models.join("es-en");
    assert_eq!(files_in(&folder), ["lex.50.50.esen.s2t.bin", "model.esen.intgemm.alphas.bin", "vocab.esen.spm"]);
    for f in esen() {
        assert_eq!(std::fs::read(folder.join(f.name)).unwrap(), f.raw, "{}", f.name);
    }
    let manifest: Value = serde_json::from_slice(&std::fs::read(folder.join("manifest.json")).unwrap()).unwrap();
    assert_eq!(manifest["version"], "3.0");
    assert_eq!(manifest["files"][0]["recordId"], server::pair_records("es", "en", "3.0", "")[0]["id"]);
    let log = server.take_log();
    assert_eq!(log[0].0, "/v1/");
    assert_eq!(attachment_requests(&log).len(), 3);

    let again = run(&t, fetch_cmd(&t, &models, &server.url), &["es"]);
    assert!(again.status.success(), "{}", stderr(&again));
    assert_eq!(stderr(&again).matches("already installed and verified").count(), 3, "{}", stderr(&again));
    assert!(attachment_requests(&server.take_log()).is_empty());
    assert_eq!(installed_pairs(&models), ["es-en"]);
}

#[test]
fn records_on_several_pages_are_all_read() {
    let t = TestDir::new();
    let server = Server::start(release_and_prereleases());
    server.behave(|b| b.page_size = Some(2));
    let models = t.path().join("models");
    let out = run(&t, fetch_cmd(&t, &models, &server.url), &["es", "--allow-prerelease"]);
    assert!(out.status.success(), "{}", stderr(&out));
    assert!(stdout(&out).starts_with("es-en\ttiny\t3.2a1\t"), "{}", stdout(&out));
    let pages = server.take_log().iter().filter(|(p, _)| p.starts_with(RECORDS)).count();
    assert_eq!(pages, 6);
}

#[test]
fn list_follows_the_channel_and_shows_what_is_installed() {
    let t = TestDir::new();
    let server = Server::start(release_and_prereleases());
    let models = t.path().join("models");
    let out = run(&t, fetch_cmd(&t, &models, &server.url), &["--list"]);
    assert!(out.status.success(), "{}", stderr(&out));
    let text = stdout(&out);
    let row = text.lines().find(|l| l.starts_with("es-en")).unwrap_or_else(|| panic!("{text}"));
    assert!(row.contains("tiny") && row.contains(" 3.0 ") && row.ends_with('-'), "{row}");
    let out = run(&t, fetch_cmd(&t, &models, &server.url), &["--list", "--allow-prerelease"]);
    assert!(stdout(&out).contains(" 3.2a1 "), "{}", stdout(&out));
    let out = run(&t, fetch_cmd(&t, &models, &server.url), &["--list", "--channel", "beta"]);
    assert!(stdout(&out).contains(" 3.1b1 "), "{}", stdout(&out));
    assert!(run(&t, fetch_cmd(&t, &models, &server.url), &["es-en"]).status.success());
    let out = run(&t, fetch_cmd(&t, &models, &server.url), &["--list"]);
    assert!(stdout(&out).lines().any(|l| l.starts_with("es-en") && l.ends_with("yes")), "{}", stdout(&out));
}

#[test]
fn an_update_swaps_files_and_removes_the_stale_shared_vocab() {
    let t = TestDir::new();
    let server = Server::start(pair_records("es", "en", "3.0", ""));
    let models = t.path().join("models");
    assert!(run(&t, fetch_cmd(&t, &models, &server.url), &["es-en"]).status.success());
    // Version 3.1 switches to split vocabs; the shared vocab stays behind at 3.0 on the server.
    let vocab = esen().iter().find(|f| f.file_type == "vocab").unwrap();
    let mut records = pair_records("es", "en", "3.0", "");
    records.extend(pair_records("es", "en", "3.1", "").into_iter().filter(|r| r["fileType"] != "vocab"));
    for (name, file_type) in [("srcvocab.esen.spm", "srcvocab"), ("trgvocab.esen.spm", "trgvocab")] {
        records.push(server::record(name, file_type, "es", "en", "3.1", "", &vocab.raw, &vocab.zst));
    }
    server.behave(|b| b.records = records);
    let out = run(&t, fetch_cmd(&t, &models, &server.url), &["es-en"]);
    assert!(out.status.success(), "{}", stderr(&out));
    assert_eq!(installed_pairs(&models), ["es-en"]);
    assert_eq!(
        files_in(&models.join("es-en")),
        ["lex.50.50.esen.s2t.bin", "model.esen.intgemm.alphas.bin", "srcvocab.esen.spm", "trgvocab.esen.spm"]
    );
    let manifest: Value = serde_json::from_slice(&std::fs::read(models.join("es-en/manifest.json")).unwrap()).unwrap();
    assert_eq!(manifest["version"], "3.1");
}

#[test]
fn wrong_hashes_name_the_file_and_nothing_is_kept() {
    let t = TestDir::new();
    let good = pair_records("es", "en", "3.0", "");
    let mut bad = good.clone();
    bad[1]["attachment"]["hash"] = sha256(b"something else").into();
    let server = Server::start(bad);
    let models = t.path().join("models");
    let out = run(&t, fetch_cmd(&t, &models, &server.url), &["es"]);
    assert_eq!(out.status.code(), Some(1), "{}", stderr(&out));
    let err = stderr(&out);
    assert!(
        err.contains("vocab.esen.spm") && err.contains("attachment.hash") && err.contains("nothing was kept"),
        "{err}"
    );
    assert!(installed_pairs(&models).is_empty());

    // The stored file verifies but the decompressed one does not.
    let mut bad = good.clone();
    bad[2]["decompressedHash"] = sha256(b"something else").into();
    server.behave(|b| b.records = bad);
    let out = run(&t, fetch_cmd(&t, &models, &server.url), &["es"]);
    assert_eq!(out.status.code(), Some(1), "{}", stderr(&out));
    assert!(
        stderr(&out).contains("lex.50.50.esen.s2t.bin") && stderr(&out).contains("decompressedHash"),
        "{}",
        stderr(&out)
    );
    assert!(installed_pairs(&models).is_empty());

    // Fixed: the model, downloaded and verified in the first run, is not downloaded again.
    server.behave(|b| b.records = good);
    server.take_log();
    let out = run(&t, fetch_cmd(&t, &models, &server.url), &["es"]);
    assert!(out.status.success(), "{}", stderr(&out));
    assert_eq!(installed_pairs(&models), ["es-en"]);
    let model = server.attachment_path("model.esen.intgemm.alphas.bin");
    assert!(!server.take_log().iter().any(|(p, _)| *p == model));
}

#[test]
fn a_truncated_body_is_retried_then_reported_and_later_resumed() {
    let t = TestDir::new();
    let server = Server::start(pair_records("es", "en", "3.0", ""));
    let model = server.attachment_path("model.esen.intgemm.alphas.bin");
    server.behave(|b| {
        b.truncate.push(model.clone());
        b.ignore_ranges = true;
    });
    let models = t.path().join("models");
    let out = run(&t, fetch_cmd(&t, &models, &server.url), &["es", "--retries", "1"]);
    assert_eq!(out.status.code(), Some(1), "{}", stderr(&out));
    assert!(stderr(&out).contains(&model) && stderr(&out).contains("ended after"), "{}", stderr(&out));
    assert_eq!(server.take_log().iter().filter(|(p, _)| *p == model).count(), 3);
    assert!(installed_pairs(&models).is_empty());
    let part = std::fs::read_dir(models.join("es-en")).unwrap().next().unwrap().unwrap().path();
    let kept = std::fs::metadata(&part).unwrap().len();
    assert!(kept > 0 && part.to_string_lossy().ends_with(".zst.part"), "{}", part.display());

    server.behave(|b| {
        b.truncate.clear();
        b.ignore_ranges = false;
    });
    let out = run(&t, fetch_cmd(&t, &models, &server.url), &["es"]);
    assert!(out.status.success(), "{}", stderr(&out));
    assert_eq!(installed_pairs(&models), ["es-en"]);
    let log = server.take_log();
    let resumed = log.iter().find(|(p, _)| *p == model).unwrap();
    assert_eq!(resumed.1.as_deref(), Some(format!("bytes={kept}-").as_str()));
}

#[test]
fn server_errors_and_a_stall_are_retried() {
    let t = TestDir::new();
    let server = Server::start(pair_records("es", "en", "3.0", ""));
    let model = server.attachment_path("model.esen.intgemm.alphas.bin");
    let vocab = server.attachment_path("vocab.esen.spm");
    server.behave(|b| {
        b.fail.insert(RECORDS.to_string(), 1);
        b.fail.insert(model.clone(), 2);
        b.stall = Some((vocab.clone(), 1000));
    });
    let models = t.path().join("models");
    let out = run(&t, fetch_cmd(&t, &models, &server.url), &["es", "--timeout", "2", "--verbose"]);
    assert!(out.status.success(), "{}", stderr(&out));
    assert!(stderr(&out).contains("HTTP 503"), "{}", stderr(&out));
    assert_eq!(installed_pairs(&models), ["es-en"]);
    let log = server.take_log();
    assert_eq!(log.iter().filter(|(p, _)| p == RECORDS).count(), 2);
    assert_eq!(log.iter().filter(|(p, _)| *p == model).count(), 3);
    let vocab_requests: Vec<_> = log.iter().filter(|(p, _)| *p == vocab).map(|(_, r)| r.clone()).collect();
    assert_eq!(vocab_requests, [None, Some("bytes=1000-".to_string())]);
}

#[test]
fn an_interrupted_run_leaves_no_partial_file_and_resumes() {
    let t = TestDir::new();
    let server = Server::start(pair_records("es", "en", "3.0", ""));
    let model = server.attachment_path("model.esen.intgemm.alphas.bin");
    server.behave(|b| b.stall = Some((model.clone(), 1 << 20)));
    let models = t.path().join("models");
    let mut cmd = fetch_cmd(&t, &models, &server.url);
    cmd.arg("es").stdin(Stdio::null()).stdout(Stdio::null()).stderr(Stdio::null());
    let mut child = cmd.spawn().unwrap();
    let part = wait_for_part(&models.join("es-en"), 1 << 20);
    child.kill().unwrap();
    child.wait().unwrap();
    assert!(installed_pairs(&models).is_empty());
    assert_eq!(files_in(&models.join("es-en")), Vec::<String>::new());
    let kept = std::fs::metadata(&part).unwrap().len();
    server.release();

    let out = run(&t, fetch_cmd(&t, &models, &server.url), &["es"]);
    assert!(out.status.success(), "{}", stderr(&out));
    assert_eq!(installed_pairs(&models), ["es-en"]);
    let log = server.take_log();
    let ranges: Vec<_> = log.iter().filter(|(p, _)| *p == model).map(|(_, r)| r.clone()).collect();
    assert_eq!(ranges, [None, Some(format!("bytes={kept}-"))]);
}

fn wait_for_part(folder: &Path, bytes: u64) -> PathBuf {
    let start = Instant::now();
    loop {
        let found = std::fs::read_dir(folder).ok().and_then(|entries| {
            entries.map(|e| e.unwrap().path()).find(|p| {
                p.to_string_lossy().ends_with(".zst.part") && std::fs::metadata(p).is_ok_and(|m| m.len() >= bytes)
            })
        });
        if let Some(p) = found {
            return p;
        }
        assert!(start.elapsed() < Duration::from_secs(60), "no partial download appeared in {}", folder.display());
        std::thread::sleep(Duration::from_millis(20));
    }
}

#[test]
fn a_read_only_models_folder_is_a_clear_error() {
    use std::os::unix::fs::{MetadataExt, PermissionsExt};
    let t = TestDir::new();
    let server = Server::start(pair_records("es", "en", "3.0", ""));
    let models = t.path().join("models");
    std::fs::create_dir(&models).unwrap();
    std::fs::set_permissions(&models, std::fs::Permissions::from_mode(0o555)).unwrap();
    let mut cmd = fetch_cmd(&t, &models, &server.url);
    // Root ignores permissions: run reseam as nobody then.
    if std::fs::metadata(&models).unwrap().uid() == 0 {
        use std::os::unix::process::CommandExt;
        std::fs::set_permissions(t.path(), std::fs::Permissions::from_mode(0o755)).unwrap();
        cmd.uid(65534).gid(65534);
    }
    let out = run(&t, cmd, &["es"]);
    assert_eq!(out.status.code(), Some(1), "{}", stderr(&out));
    let err = stderr(&out);
    assert!(
        err.contains("cannot write to") && err.contains(&*models.to_string_lossy()) && err.contains("--models"),
        "{err}"
    );
    assert_eq!(std::fs::read_dir(&models).unwrap().count(), 0);
}

#[test]
fn a_full_models_folder_is_a_clear_error() {
    let t = TestDir::new();
    let server = Server::start(pair_records("es", "en", "3.0", ""));
    let models = t.path().join("models");
    // A file-size limit makes writes fail as on a full disk (SIGXFSZ ignored, so write returns EFBIG).
    let inner = fetch_cmd(&t, &models, &server.url);
    let mut cmd = Command::new("sh");
    cmd.arg("-c").arg("trap '' XFSZ; ulimit -f 1024; exec \"$0\" \"$@\"").arg(inner.get_program());
    cmd.args(inner.get_args()).arg("es");
    for (k, v) in inner.get_envs() {
        match v {
            Some(v) => cmd.env(k, v),
            None => cmd.env_remove(k),
        };
    }
    let out = t.run(cmd, b"");
    assert_eq!(out.status.code(), Some(1), "{}", stderr(&out));
    assert!(stderr(&out).contains("no space left") && stderr(&out).contains("model.esen"), "{}", stderr(&out));
    assert!(installed_pairs(&models).is_empty());
}

#[test]
fn pairs_without_a_direct_model_pivot_through_english() {
    let t = TestDir::new();
    let mut records = pair_records("es", "en", "3.0", "");
    records.extend(pair_records("en", "de", "3.0", "env.appinfo.OS != 'Android'"));
    records.extend(pair_records("en", "de", "3.5", "env.appinfo.OS == 'Android'"));
    let server = Server::start(records);
    let models = t.path().join("models");
    let out = run(&t, fetch_cmd(&t, &models, &server.url), &["es-de"]);
    assert!(out.status.success(), "{}", stderr(&out));
    let lines: Vec<_> = stdout(&out).lines().map(|l| l.split('\t').take(3).collect::<Vec<_>>().join(" ")).collect();
    assert_eq!(lines, ["es-en tiny 3.0", "en-de tiny 3.0"]);
    assert_eq!(installed_pairs(&models), ["en-de", "es-en"]);
    assert_eq!(
        files_in(&models.join("en-de")),
        ["lex.50.50.ende.s2t.bin", "model.ende.intgemm.alphas.bin", "vocab.ende.spm"]
    );
}

#[test]
fn unknown_languages_and_bad_langs_are_clear_errors() {
    let t = TestDir::new();
    let server = Server::start(pair_records("es", "en", "3.0", ""));
    let models = t.path().join("models");
    let out = run(&t, fetch_cmd(&t, &models, &server.url), &["fr"]);
    assert_eq!(out.status.code(), Some(2), "a pair that is not offered is the caller's mistake: {}", stderr(&out));
    assert!(stderr(&out).contains("fr→en") && stderr(&out).contains("--list"), "{}", stderr(&out));
    for bad in ["en", "es/en", "es-es"] {
        let out = run(&t, fetch_cmd(&t, &models, &server.url), &[bad]);
        assert_eq!(out.status.code(), Some(2), "{bad}: {}", stderr(&out));
        assert!(stderr(&out).contains("LANGS"), "{}", stderr(&out));
    }
    let out = run(&t, fetch_cmd(&t, &models, &format!("{}/nowhere", server.url)), &["es"]);
    assert_eq!(out.status.code(), Some(1), "{}", stderr(&out));
    assert!(stderr(&out).contains("HTTP 404"), "{}", stderr(&out));
    let missing = t.path().join("no-mirror");
    let out = run(&t, fetch_cmd(&t, &models, &missing.to_string_lossy()), &["es"]);
    assert_eq!(out.status.code(), Some(1), "{}", stderr(&out));
    assert!(stderr(&out).contains(&*missing.to_string_lossy()), "{}", stderr(&out));
    assert!(installed_pairs(&models).is_empty());
}

#[test]
fn a_mirror_written_from_the_server_installs_without_it() {
    let t = TestDir::new();
    let mut records = release_and_prereleases();
    records.extend(pair_records("en", "es", "3.0", ""));
    let server = Server::start(records);
    let mirror = t.path().join("mirror");
    let models = t.path().join("models");
    let out = run(&t, fetch_cmd(&t, &models, &server.url), &["--mirror", &mirror.to_string_lossy(), "es"]);
    assert!(out.status.success(), "{}", stderr(&out));
    assert!(stdout(&out).contains("2 pairs, 6 files downloaded"), "{}", stdout(&out));
    assert!(!models.exists(), "--mirror installs nothing");
    let doc: Value = serde_json::from_slice(
        &std::fs::read(mirror.join("buckets/main/collections/translations-models-v2/records")).unwrap(),
    )
    .unwrap();
    assert_eq!(doc["data"].as_array().unwrap().len(), 6);
    assert_eq!(doc["data"][0]["filter_expression"], "");
    drop(server);

    let out = run(&t, fetch_cmd(&t, &models, &mirror.to_string_lossy()), &["es"]);
    assert!(out.status.success(), "{}", stderr(&out));
    assert_eq!(installed_pairs(&models), ["en-es", "es-en"]);
}

/// The fetch half of "fetch from a mirror, then translate offline": the folder is what
/// `translate es en --offline` reads, `<models>/es-en/` with Firefox's file names.
#[test]
fn fetch_from_a_mirror_folder_installs_what_translate_reads() {
    let t = TestDir::new();
    let mirror = t.path().join("mirror");
    write_mirror(&mirror, &pair_records("es", "en", "3.0", ""));
    let models = t.path().join("data/reseam/models");
    // No --models: the default folder under XDG_DATA_HOME, where translate looks too.
    let mut cmd = t.cmd();
    cmd.args(["fetch", "--source"]).arg(&mirror).arg("es");
    let out = t.run(cmd, b"");
    assert!(out.status.success(), "{}", stderr(&out));
    assert_eq!(installed_pairs(&models), ["es-en"]);
    let folder = models.join("es-en");
    assert_eq!(files_in(&folder), ["lex.50.50.esen.s2t.bin", "model.esen.intgemm.alphas.bin", "vocab.esen.spm"]);
    for f in esen() {
        assert_eq!(std::fs::read(folder.join(f.name)).unwrap(), f.raw, "{}", f.name);
        let fixture = crate::common::fixtures().join("tiny-esen").join(f.name);
        assert_eq!(std::fs::read(fixture).unwrap(), f.raw);
    }
    assert_eq!(reseam::fetch::installed_pair(&models, "es", "en").unwrap(), [folder]);

    // Then translate finds it in the same default folder, offline.
    let mut cmd = t.cmd();
    cmd.args(["translate", "es", "en", "--offline"]);
    let out = t.run(cmd, b"Hola\n");
    assert!(out.status.success(), "{}", stderr(&out));
    let text = String::from_utf8(out.stdout).unwrap();
    assert!(text.ends_with('\n') && text.lines().count() == 1 && !text.trim().is_empty(), "{text:?}");
    assert_ne!(text.trim(), "Hola", "the line was translated");
}

/// `translate` on a pair that is not installed fetches it first (here from a mirror folder), and
/// `--offline` refuses to.
#[test]
fn translate_fetches_a_missing_pair_unless_offline() {
    let t = TestDir::new();
    let mirror = t.path().join("mirror");
    write_mirror(&mirror, &pair_records("es", "en", "3.0", ""));
    let models = t.path().join("data/reseam/models");

    let mut cmd = t.cmd();
    cmd.args(["translate", "--offline", "es", "en"]);
    let out = t.run(cmd, b"Hola\n");
    assert_eq!(out.status.code(), Some(2), "a pair not installed under --offline is the caller's: {}", stderr(&out));
    assert!(stderr(&out).contains("reseam fetch es-en"), "{}", stderr(&out));
    assert!(!models.join("es-en").exists());

    let mut cmd = t.cmd();
    cmd.args(["translate", "es", "en"]).env("RESEAM_MODELS_SOURCE", &mirror);
    let out = t.run(cmd, b"Hola\n");
    assert!(out.status.success(), "{}", stderr(&out));
    assert_eq!(installed_pairs(&models), ["es-en"]);
    assert_eq!(String::from_utf8(out.stdout).unwrap().lines().count(), 1);
}
