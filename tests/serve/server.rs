//! `reseam serve` as a child process on a loopback port of its own, over a temp models folder;
//! killed when dropped, so that a failing test leaves no server behind.

use std::io::{BufRead, BufReader, Read};
use std::net::SocketAddr;
use std::path::{Path, PathBuf};
use std::process::{Child, ExitStatus, Stdio};
use std::sync::mpsc;
use std::sync::{Arc, Mutex};
use std::thread::JoinHandle;
use std::time::{Duration, Instant};

use serde_json::{Value, json};

use super::client::{Req, Resp};
use crate::common::{TestDir, fixtures};

/// Time for the port to open and for /ready to turn 200 (the models are small).
const START_DEADLINE: Duration = Duration::from_secs(30);

/// The serve settings a test runner's environment might hold, which would change what the tests
/// see; every server starts without them.
const SETTINGS: &[&str] = &[
    "MODELS_DIR",
    "HOST",
    "PORT",
    "THREADS",
    "MAX_BATCH",
    "MAX_TEXTS",
    "MAX_CHARS",
    "MAX_PIECES",
    "HTTP_THREADS",
    "MAX_QUEUE",
    "MAX_BODY",
    "MAX_CONNECTIONS",
    "PRESSURE_IDLE_TIMEOUT",
    "ADMIN_PORT",
    "READ_TIMEOUT",
    "DRAIN_SECONDS",
    "PIN_FROM_CORE",
    "PRELOAD",
    "IDLE_SECONDS",
    "TRANSLATE_TOKEN",
    "TRANSLATE_TOKEN_FILE",
    "CREDENTIALS_DIRECTORY",
    "LOG_LEVEL",
    "NOTIFY_SOCKET",
];

/// Copies the model files of fixture `fixture` (e.g. `tiny-esen`) into `models/<pair>/`, named
/// for `pair` (`model.esen.…` becomes `model.caen.…` for `ca-en`), as `reseam fetch` would.
pub fn install(models: &Path, pair: &str, fixture: &str) {
    let from = fixtures().join(fixture);
    let to = models.join(pair);
    std::fs::create_dir_all(&to).unwrap();
    let names: Vec<String> = std::fs::read_dir(&from)
        .unwrap_or_else(|e| panic!("fixture {}: {e}", from.display()))
        .map(|e| e.unwrap())
        // The model, vocabulary and shortlist; refs/ and tools/ are not part of a model folder.
        .filter(|e| e.file_type().unwrap().is_file())
        .map(|e| e.file_name().into_string().unwrap())
        .collect();
    let code = names
        .iter()
        .find_map(|n| n.strip_prefix("model.").and_then(|r| r.split('.').next()))
        .unwrap_or_else(|| panic!("no model.<pair>.* file in {}", from.display()))
        .to_string();
    let new = pair.replace('-', "");
    for n in names {
        std::fs::copy(from.join(&n), to.join(n.replace(&format!(".{code}."), &format!(".{new}.")))).unwrap();
    }
}

/// How a test wants its server.
pub struct Builder {
    pairs: Vec<(&'static str, &'static str)>,
    args: Vec<String>,
    env: Vec<(String, String)>,
}

impl Builder {
    /// Installs fixture `fixture` as `pair` (`es-en`, `tiny-esen`).
    pub fn pair(mut self, pair: &'static str, fixture: &'static str) -> Builder {
        self.pairs.push((pair, fixture));
        self
    }

    pub fn args(mut self, a: &[&str]) -> Builder {
        self.args.extend(a.iter().map(|s| s.to_string()));
        self
    }

    pub fn env(mut self, k: &str, v: &str) -> Builder {
        self.env.push((k.into(), v.into()));
        self
    }

    /// Starts the server and waits until `/ready` answers 200.
    pub fn start(self) -> Server {
        let dir = TestDir::new();
        self.start_in(dir)
    }

    /// As [`Builder::start`], in a test dir the test has already filled (token files).
    pub fn start_in(self, dir: TestDir) -> Server {
        let models = dir.path().join("models");
        std::fs::create_dir_all(&models).unwrap();
        for (pair, fixture) in &self.pairs {
            install(&models, pair, fixture);
        }
        let mut cmd = dir.cmd();
        for k in SETTINGS {
            cmd.env_remove(k);
        }
        cmd.arg("serve").arg("--models").arg(&models).args(["--host", "127.0.0.1", "--port", "0"]);
        // One compute thread unless the test asks for more: two servers run side by side.
        if !self.args.iter().any(|a| a == "--threads") && !self.env.iter().any(|(k, _)| k == "THREADS") {
            cmd.args(["--threads", "1"]);
        }
        cmd.args(&self.args);
        for (k, v) in &self.env {
            cmd.env(k, v);
        }
        cmd.stdin(Stdio::null()).stdout(Stdio::piped()).stderr(Stdio::piped());
        let mut child = cmd.spawn().expect("spawning reseam serve");
        let log = Arc::new(Mutex::new(String::new()));
        let (tx, rx) = mpsc::channel::<SocketAddr>();
        let stderr = child.stderr.take().unwrap();
        let stdout = child.stdout.take().unwrap();
        let mut readers = Vec::new();
        {
            let log = log.clone();
            readers.push(std::thread::spawn(move || {
                let mut r = BufReader::new(stderr);
                let mut line = Vec::new();
                while r.read_until(b'\n', &mut line).unwrap_or(0) > 0 {
                    let text = String::from_utf8_lossy(&line).into_owned();
                    log.lock().unwrap().push_str(&text);
                    if let Some(addr) = listening(&text) {
                        let _ = tx.send(addr);
                    }
                    line.clear();
                }
            }));
        }
        {
            let log = log.clone();
            readers.push(std::thread::spawn(move || {
                let mut out = Vec::new();
                let _ = BufReader::new(stdout).read_to_end(&mut out);
                log.lock().unwrap().push_str(&String::from_utf8_lossy(&out));
            }));
        }
        let started = Instant::now();
        let addr = loop {
            match rx.recv_timeout(Duration::from_millis(100)) {
                Ok(a) => break a,
                Err(_) => {
                    if let Ok(Some(status)) = child.try_wait() {
                        for r in readers {
                            let _ = r.join();
                        }
                        panic!("reseam serve exited ({status}) before listening:\n{}", log.lock().unwrap());
                    }
                    if started.elapsed() > START_DEADLINE {
                        let _ = child.kill();
                        panic!(
                            "reseam serve printed no `listening on` line within {START_DEADLINE:?}:\n{}",
                            log.lock().unwrap()
                        );
                    }
                }
            }
        };
        let server = Server { addr, child: Some(child), log, readers, dir, models };
        server.wait_ready();
        server
    }
}

/// The address in `info listening on http://ADDR/ (...)`.
fn listening(line: &str) -> Option<SocketAddr> {
    let rest = line.strip_prefix("info listening on http://")?;
    rest.split('/').next()?.parse().ok()
}

/// A running `reseam serve`.
pub struct Server {
    pub addr: SocketAddr,
    child: Option<Child>,
    log: Arc<Mutex<String>>,
    readers: Vec<JoinHandle<()>>,
    /// The test dir: `models/`, packs, XDG folders.
    pub dir: TestDir,
    pub models: PathBuf,
}

impl Server {
    pub fn builder() -> Builder {
        Builder { pairs: Vec::new(), args: Vec::new(), env: Vec::new() }
    }

    /// The fixture es→en model as `es-en`, default settings.
    pub fn esen() -> Builder {
        Server::builder().pair("es-en", "tiny-esen")
    }

    fn wait_ready(&self) {
        let started = Instant::now();
        loop {
            let r = self.get("/ready");
            if r.status == 200 {
                assert_eq!(r.json(), json!({ "status": "ready" }));
                return;
            }
            assert_eq!(r.status, 503, "/ready while loading: {}", r.text());
            assert!(started.elapsed() < START_DEADLINE, "/ready not 200 within {START_DEADLINE:?}:\n{}", self.log());
            std::thread::sleep(Duration::from_millis(20));
        }
    }

    pub fn pid(&self) -> u32 {
        self.child.as_ref().expect("server running").id()
    }

    /// Sends `signal` (`TERM`, `INT`, `HUP`) with kill(1).
    pub fn signal(&self, signal: &str) {
        let st = std::process::Command::new("kill")
            .arg(format!("-{signal}"))
            .arg(self.pid().to_string())
            .status()
            .unwrap_or_else(|e| panic!("running kill(1) (Debian package procps; .ci/run installs it): {e}"));
        assert!(st.success(), "kill -{signal} {} failed", self.pid());
    }

    /// Waits for the process to exit after a signal (at most `deadline`), and returns its status
    /// and everything it wrote on stdout and stderr.
    pub fn wait_exit(&mut self, deadline: Duration) -> (ExitStatus, String) {
        let mut child = self.child.take().expect("server running");
        let started = Instant::now();
        let status = loop {
            if let Some(s) = child.try_wait().unwrap() {
                break s;
            }
            if started.elapsed() > deadline {
                let _ = child.kill();
                let _ = child.wait();
                panic!("reseam serve did not exit within {deadline:?}:\n{}", self.log());
            }
            std::thread::sleep(Duration::from_millis(10));
        };
        for r in self.readers.drain(..) {
            let _ = r.join();
        }
        (status, self.log())
    }

    /// The address of `--admin-port`, from the server's line about it.
    pub fn admin_addr(&self) -> SocketAddr {
        let log = self.log();
        log.lines()
            .find_map(|l| l.strip_prefix("info admin port on http://")?.split('/').next()?.parse().ok())
            .unwrap_or_else(|| panic!("no admin port line:\n{log}"))
    }

    /// Everything the server wrote so far (stdout and stderr).
    pub fn log(&self) -> String {
        self.log.lock().unwrap().clone()
    }

    /// Waits (at most 10 s) until the server's output holds `needle`: its lines are read on
    /// another thread, a little after the server writes them.
    pub fn wait_log(&self, needle: &str) {
        let started = Instant::now();
        while !self.log().contains(needle) {
            assert!(
                started.elapsed() < Duration::from_secs(10),
                "no {needle:?} in the server's output:\n{}",
                self.log()
            );
            std::thread::sleep(Duration::from_millis(10));
        }
    }

    pub fn send(&self, req: Req) -> Resp {
        req.send(self.addr)
    }

    pub fn get(&self, path: &str) -> Resp {
        Req::get(path).send(self.addr)
    }

    pub fn post_json(&self, path: &str, body: &Value) -> Resp {
        Req::post(path).json(body).send(self.addr)
    }

    /// `POST /v1/translate` of `texts` from `from` to `to`, which must succeed; the translations.
    pub fn translate(&self, from: &str, to: &str, texts: &[&str]) -> Vec<String> {
        let r = self.post_json("/v1/translate", &json!({ "from": from, "to": to, "texts": texts }));
        let v = r.expect_json(200);
        let t: Vec<String> = serde_json::from_value(v["translations"].clone()).unwrap_or_else(|_| panic!("{v}"));
        assert_eq!(t.len(), texts.len(), "one translation per text: {v}");
        t
    }

    /// One gauge or counter of `/metrics` (its first sample whose line starts with `name`).
    pub fn metric(&self, name: &str) -> f64 {
        let text = self.send(Req::get("/metrics")).text();
        text.lines()
            .find(|l| l.starts_with(name) && l[name.len()..].starts_with([' ', '{']))
            .and_then(|l| l.rsplit(' ').next())
            .and_then(|v| v.parse().ok())
            .unwrap_or_else(|| panic!("no sample {name} in /metrics:\n{text}"))
    }
}

impl Drop for Server {
    fn drop(&mut self) {
        if let Some(mut c) = self.child.take() {
            let _ = c.kill();
            let _ = c.wait();
        }
    }
}

/// `reseam translate --models DIR from to` of `lines` (one per line), with `extra` flags: the
/// command line's output, which the server's must equal.
pub fn cli_translate(
    dir: &TestDir,
    models: &Path,
    from: &str,
    to: &str,
    extra: &[&str],
    lines: &[&str],
) -> Vec<String> {
    for l in lines {
        assert!(!l.contains('\n'), "one line per text: {l:?}");
    }
    let mut c = dir.cmd();
    c.arg("translate").arg("--models").arg(models).args(extra).args([from, to]);
    let input: String = lines.iter().map(|l| format!("{l}\n")).collect();
    let out = dir.run(c, input.as_bytes());
    assert!(out.status.success(), "reseam translate failed: {}", String::from_utf8_lossy(&out.stderr));
    let got: Vec<String> = String::from_utf8(out.stdout).unwrap().lines().map(String::from).collect();
    assert_eq!(got.len(), lines.len(), "one output line per input line");
    got
}
