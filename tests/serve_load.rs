//! `reseam serve` under load, on loopback: 64 concurrent clients send 10,000 requests over six
//! directions (four models and two pivots through English), through `reseam bench serve`; no
//! request may fail, a post sent twice must come back the same, and every translation must equal
//! `reseam translate`'s for the same post. A correctness test under load, not a timing: the
//! figures it prints are for reading, `reseam bench serve` is the benchmark.

use std::io::{BufRead, BufReader};
use std::path::Path;
use std::process::{Child, Stdio};
use std::time::{Duration, Instant};

use crate::common::{TestDir, fixtures};

/// The directions: (folder, from, to). Every folder holds the tiny es→en fixture model under
/// another name; its output on English or on a pivot's English is as deterministic as on
/// Spanish, which is all this test needs.
const MODELS: &[&str] = &["es-en", "ca-en", "en-es", "en-ca"];
const DIRECTIONS: &[(&str, &str)] =
    &[("es", "en"), ("ca", "en"), ("en", "es"), ("en", "ca"), ("es", "ca"), ("ca", "es")];

/// Copies the fixture model's files (not its references) into `dir/name`.
pub fn install_tiny(dir: &Path, name: &str) {
    let src = fixtures().join("tiny-esen");
    let dst = dir.join(name);
    std::fs::create_dir_all(&dst).unwrap();
    // Named for the pair, as Mozilla names its files (`model.caen.intgemm.alphas.bin`).
    let pair = name.replace('-', "");
    for f in ["model.esen.intgemm.alphas.bin", "vocab.esen.spm", "lex.50.50.esen.s2t.bin"] {
        std::fs::copy(src.join(f), dst.join(f.replace("esen", &pair))).unwrap_or_else(|e| panic!("copying {f}: {e}"));
    }
}

/// The fixture's posts and held-out lines, usable as TSV texts (no tab, no carriage return).
fn texts() -> (Vec<String>, Vec<String>) {
    let refs = fixtures().join("tiny-esen").join("refs");
    let mut es: Vec<String> = std::fs::read_to_string(refs.join("social.es.jsonl"))
        .unwrap()
        .lines()
        .map(|l| serde_json::from_str::<serde_json::Value>(l).unwrap()["text"].as_str().unwrap().to_string())
        .collect();
    es.extend(std::fs::read_to_string(refs.join("heldout.es")).unwrap().lines().map(str::to_string));
    let en: Vec<String> =
        std::fs::read_to_string(refs.join("heldout.en")).unwrap().lines().map(str::to_string).collect();
    let ok = |t: &String| !t.contains(['\t', '\r', '\\']) && !t.trim().is_empty();
    (es.into_iter().filter(ok).collect(), en.into_iter().filter(ok).collect())
}

/// A running `reseam serve`, killed on drop.
pub struct Server {
    pub child: Child,
    pub url: String,
}

impl Server {
    /// Starts the server on a free loopback port and waits (at most `wait`) until it is ready.
    pub fn start(t: &TestDir, models: &Path, extra: &[&str], wait: Duration) -> Server {
        let mut cmd = t.cmd();
        cmd.args(["serve", "--host", "127.0.0.1", "--port", "0", "--models"])
            .arg(models)
            .args(extra)
            .stdout(Stdio::null())
            .stderr(Stdio::piped());
        let mut child = cmd.spawn().expect("spawn reseam serve");
        let stderr = child.stderr.take().unwrap();
        let (tx, rx) = std::sync::mpsc::channel();
        std::thread::spawn(move || {
            let mut sent = false;
            for line in BufReader::new(stderr).lines().map_while(Result::ok) {
                if !sent && let Some(rest) = line.split("listening on http://").nth(1) {
                    let addr = rest.split('/').next().unwrap_or("").to_string();
                    let _ = tx.send(addr);
                    sent = true;
                }
            }
        });
        let addr = rx.recv_timeout(wait).expect("the server did not say where it listens");
        let url = format!("http://{addr}");
        let deadline = Instant::now() + wait;
        loop {
            let ready = ureq::get(&format!("{url}/ready")).call().is_ok_and(|r| r.status() == 200);
            if ready {
                break;
            }
            assert!(Instant::now() < deadline, "{url}/ready did not turn 200 within {wait:?}");
            std::thread::sleep(Duration::from_millis(50));
        }
        Server { child, url }
    }
}

impl Drop for Server {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// `reseam translate --jsonl` over `posts`, one translation per post.
fn translate(t: &TestDir, models: &Path, from: &str, to: &str, posts: &[&str]) -> Vec<String> {
    let input: String = posts.iter().map(|p| format!("{}\n", serde_json::json!({ "text": p }))).collect();
    let mut cmd = t.cmd();
    cmd.args(["translate", "--offline", "--jsonl", "--models"]).arg(models).args([from, to]);
    let out = t.run(cmd, input.as_bytes());
    assert!(out.status.success(), "translate {from} {to}: {}", String::from_utf8_lossy(&out.stderr));
    String::from_utf8(out.stdout)
        .unwrap()
        .lines()
        .map(|l| serde_json::from_str::<serde_json::Value>(l).unwrap()["translation"].as_str().unwrap().to_string())
        .collect()
}

#[test]
fn ten_thousand_requests_from_64_clients_over_six_directions_equal_translate() {
    let t = TestDir::new();
    let models = t.path().join("models");
    for m in MODELS {
        install_tiny(&models, m);
    }
    let (es, en) = texts();
    // Each direction gets its own texts, so that a post routed to the wrong model shows.
    let mut corpus: Vec<(&str, &str, String)> = Vec::new();
    for (k, (from, to)) in DIRECTIONS.iter().enumerate() {
        let source = if *from == "en" { &en } else { &es };
        let start = (k * 37) % source.len();
        for i in 0..60 {
            corpus.push((from, to, source[(start + i) % source.len()].clone()));
        }
    }
    let mut expected = Vec::new();
    for (from, to) in DIRECTIONS {
        let posts: Vec<&str> =
            corpus.iter().filter(|(f, tt, _)| f == from && tt == to).map(|(_, _, p)| p.as_str()).collect();
        expected.extend(translate(&t, &models, from, to, &posts));
    }
    assert_eq!(expected.len(), corpus.len());
    let tsv: String = corpus.iter().map(|(f, to, p)| format!("{f}\t{to}\t{}\n", p.replace('\n', "\\n"))).collect();
    let corpus_path = t.path().join("corpus.tsv");
    std::fs::write(&corpus_path, tsv).unwrap();

    let server = Server::start(&t, &models, &["--preload"], Duration::from_secs(60));
    let out_path = t.path().join("out.tsv");
    let mut cmd = t.cmd();
    cmd.args(["bench", "serve", "--json", "-n", "10000", "--clients", "64", "--timeout", "60", "--url"])
        .arg(&server.url)
        .arg("--corpus")
        .arg(&corpus_path)
        .arg("--out")
        .arg(&out_path);
    let out = t.run(cmd, b"");
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(out.status.success(), "bench serve failed:\n{stdout}\n{}", String::from_utf8_lossy(&out.stderr));
    let report: serde_json::Value = serde_json::from_str(stdout.trim()).unwrap();
    eprintln!(
        "serve under load: {} requests/s, p50 {:.1} ms, p99 {:.1} ms, server RSS {:?} MB",
        report["requests_per_s"], report["p50_ms"], report["p99_ms"], report["server_rss_mb"]
    );
    assert_eq!(report["requests"], 10000);
    assert_eq!(report["failures"], 0, "{report}");
    assert_eq!(report["mismatches"], 0, "{report}");
    assert_eq!(report["directions"], DIRECTIONS.len());

    let got: Vec<(usize, String)> = std::fs::read_to_string(&out_path)
        .unwrap()
        .lines()
        .map(|l| {
            let (i, t) = l.split_once('\t').unwrap();
            (i.parse().unwrap(), t.replace("\\n", "\n").replace("\\\\", "\\"))
        })
        .collect();
    assert_eq!(got.len(), corpus.len(), "every corpus line was sent at least once");
    let wrong: Vec<String> = got
        .iter()
        .filter(|(i, t)| *t != expected[*i])
        .map(|(i, t)| {
            format!("{}→{} {:?}: served {t:?}, translate {:?}", corpus[*i].0, corpus[*i].1, corpus[*i].2, expected[*i])
        })
        .collect();
    assert!(wrong.is_empty(), "{} of {} differ from translate:\n{}", wrong.len(), got.len(), wrong.join("\n"));
    drop(server);
}
