//! What packagers and operators ship: the bash completion as bash loads it, the container's
//! entrypoint against a stand-in models source, the Dockerfile's rules, and the systemd unit's
//! command lines run with the environment systemd gives them. (man/ and completions/ being
//! current is checked in src/cli/generate.rs; systemd-analyze, hadolint, the Kubernetes schemas,
//! the tarball and the .deb in packaging/test.sh.)

use std::collections::BTreeMap;
use std::io::{BufRead, BufReader};
use std::path::{Path, PathBuf};
use std::process::{Child, Command, ExitStatus, Stdio};
use std::sync::mpsc::{Receiver, channel};
use std::time::{Duration, Instant};

use serde_json::Value;

use crate::common::TestDir;
use crate::fetch::server::{pair_records, sha256, write_mirror};

fn repo() -> &'static Path {
    Path::new(env!("CARGO_MANIFEST_DIR"))
}

fn reseam() -> &'static Path {
    Path::new(env!("CARGO_BIN_EXE_reseam"))
}

fn read(rel: &str) -> String {
    std::fs::read_to_string(repo().join(rel)).unwrap_or_else(|e| panic!("{rel}: {e}"))
}

fn bash(script: &str) -> String {
    let out = Command::new("bash")
        .arg("-c")
        .arg(script)
        .current_dir(repo())
        .output()
        .expect("bash is needed to test the bash completion (Debian package bash)");
    assert!(out.status.success(), "{script}\n{}", String::from_utf8_lossy(&out.stderr));
    String::from_utf8_lossy(&out.stdout).into_owned()
}

/// What the bash completion offers for the words typed so far (the last one being completed).
fn complete(words: &str) -> Vec<String> {
    let script = format!(
        r#"source completions/reseam.bash
COMP_LINE="{words}"; COMP_POINT=${{#COMP_LINE}}
read -ra COMP_WORDS <<< "{words}"
[[ "$COMP_LINE" == *" " ]] && COMP_WORDS+=("")
COMP_CWORD=$(( ${{#COMP_WORDS[@]}} - 1 ))
_reseam reseam "${{COMP_WORDS[COMP_CWORD]}}" "${{COMP_WORDS[COMP_CWORD-1]}}"
printf '%s\n' "${{COMPREPLY[@]}}""#
    );
    bash(&script).lines().map(str::to_string).filter(|l| !l.is_empty()).collect()
}

#[test]
fn bash_completion_parses_and_completes() {
    bash("bash -n completions/reseam.bash");
    assert_eq!(complete("reseam tr"), ["translate"]);
    assert_eq!(complete("reseam serve --max-q"), ["--max-queue"]);
    assert_eq!(complete("reseam bench tr"), ["translate"]);
    assert_eq!(complete("reseam hea"), ["health"]);
    assert!(complete("reseam serve --log-level ").contains(&"debug".to_string()));
}

/// The 18 languages the container and the unit fetch when not told otherwise.
const DEFAULT_LANGUAGES: &str = "ar,cs,de,es,fr,hi,id,it,ja,ko,nl,pl,pt,ru,tr,uk,vi,zh-Hans";

/// A server started by a script or a command line, with its stderr collected.
struct Running {
    child: Child,
    lines: Receiver<String>,
    log: Vec<String>,
}

impl Running {
    fn start(mut cmd: Command) -> Running {
        cmd.stdin(Stdio::null()).stdout(Stdio::null()).stderr(Stdio::piped());
        let mut child = cmd.spawn().expect("spawn");
        let stderr = child.stderr.take().expect("stderr");
        let (tx, lines) = channel();
        std::thread::spawn(move || {
            for line in BufReader::new(stderr).lines().map_while(Result::ok) {
                if tx.send(line).is_err() {
                    break;
                }
            }
        });
        Running { child, lines, log: Vec::new() }
    }

    /// Reads stderr until a line contains `what` (and returns it), the process ends, or 120 s pass.
    fn wait_for(&mut self, what: &str) -> Option<String> {
        let deadline = Instant::now() + Duration::from_secs(120);
        while let Some(left) = deadline.checked_duration_since(Instant::now()) {
            match self.lines.recv_timeout(left) {
                Ok(line) => {
                    self.log.push(line.clone());
                    if line.contains(what) {
                        return Some(line);
                    }
                }
                Err(_) => return None,
            }
        }
        None
    }

    /// The port from the server's "listening on http://ADDR/" line.
    fn port(&mut self) -> u16 {
        let line = self.wait_for("listening on http://").unwrap_or_else(|| panic!("no server:\n{}", self.text()));
        let addr = line.split("listening on http://").nth(1).and_then(|r| r.split('/').next()).expect("address");
        addr.rsplit(':').next().and_then(|p| p.parse().ok()).unwrap_or_else(|| panic!("port in {line}"))
    }

    fn signal(&self, sig: &str) {
        let ok = Command::new("kill").arg(format!("-{sig}")).arg(self.child.id().to_string()).status().expect("kill");
        assert!(ok.success());
    }

    /// Sends SIGTERM and waits (at most `limit`) for the exit.
    fn terminate(&mut self, limit: Duration) -> ExitStatus {
        self.signal("TERM");
        let deadline = Instant::now() + limit;
        loop {
            if let Some(status) = self.child.try_wait().expect("wait") {
                while let Ok(l) = self.lines.try_recv() {
                    self.log.push(l);
                }
                return status;
            }
            if Instant::now() > deadline {
                let _ = self.child.kill();
                panic!("still running {limit:?} after SIGTERM:\n{}", self.text());
            }
            std::thread::sleep(Duration::from_millis(50));
        }
    }

    /// Waits for the exit of a process expected to end by itself.
    fn wait(&mut self) -> ExitStatus {
        while let Ok(l) = self.lines.recv_timeout(Duration::from_secs(120)) {
            self.log.push(l);
        }
        self.child.wait().expect("wait")
    }

    fn text(&self) -> String {
        self.log.join("\n")
    }
}

impl Drop for Running {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

fn http() -> ureq::Agent {
    ureq::Agent::config_builder()
        .http_status_as_error(false)
        .proxy(None)
        .timeout_global(Some(Duration::from_secs(60)))
        .build()
        .into()
}

fn get_json(port: u16, path: &str) -> (u16, Value) {
    let mut r = http().get(format!("http://127.0.0.1:{port}{path}")).call().expect("GET");
    let status = r.status().as_u16();
    (status, json(&mut r))
}

fn json(r: &mut ureq::http::Response<ureq::Body>) -> Value {
    r.body_mut().read_to_string().ok().and_then(|t| serde_json::from_str(&t).ok()).unwrap_or(Value::Null)
}

fn translate(port: u16, token: Option<&str>) -> (u16, Value) {
    let mut req = http().post(format!("http://127.0.0.1:{port}/v1/translate"));
    if let Some(t) = token {
        req = req.header("Authorization", format!("Bearer {t}"));
    }
    let body = serde_json::json!({"from": "es", "to": "en", "texts": ["Hola, mundo."]}).to_string();
    let mut r = req.header("Content-Type", "application/json").send(body).expect("POST");
    let status = r.status().as_u16();
    (status, json(&mut r))
}

/// `reseam health` as the container's HEALTHCHECK runs it, polled until it passes (60 s at most).
fn healthy(port: u16, ready: bool) -> bool {
    let deadline = Instant::now() + Duration::from_secs(60);
    loop {
        let mut c = Command::new(reseam());
        c.args(["health", "--port", &port.to_string()]);
        if ready {
            c.arg("--ready");
        }
        if c.env_remove("HOST").output().expect("reseam health").status.success() {
            return true;
        }
        if Instant::now() > deadline {
            return false;
        }
        std::thread::sleep(Duration::from_millis(200));
    }
}

/// A mirror folder (`--source DIR`) offering es-en, optionally with the model's hash spoiled.
fn mirror(t: &TestDir, spoiled: bool) -> PathBuf {
    let dir = t.path().join(if spoiled { "bad-mirror" } else { "mirror" });
    let mut records = pair_records("es", "en", "3.0", "");
    if spoiled {
        let model = records.iter_mut().find(|r| r["fileType"] == "model").expect("model record");
        model["decompressedHash"] = sha256(b"something else").into();
    }
    write_mirror(&dir, &records);
    dir
}

/// The entrypoint as the container runs it: a bare environment, `reseam` on PATH.
fn entrypoint(t: &TestDir, models: &Path, source: &Path, languages: Option<&str>) -> Command {
    let mut c = Command::new("sh");
    c.arg(repo().join("packaging/docker/entrypoint.sh"))
        .env_clear()
        .env("PATH", format!("{}:/usr/bin:/bin", reseam().parent().unwrap().display()))
        .env("HOME", t.path())
        .env("XDG_CACHE_HOME", t.path().join("cache"))
        .env("MODELS_DIR", models)
        .env("RESEAM_MODELS_SOURCE", source)
        .env("HOST", "127.0.0.1")
        .env("PORT", "0")
        .env("THREADS", "1")
        .current_dir(t.path());
    if let Some(l) = languages {
        c.env("LANGUAGES", l);
    }
    c
}

#[test]
fn entrypoint_fetches_verified_models_then_serves_them_preloaded() {
    let t = TestDir::new();
    let models = t.path().join("models");
    let source = mirror(&t, false);

    let mut s = Running::start(entrypoint(&t, &models, &source, Some("es")));
    let port = s.port();
    assert!(healthy(port, true), "reseam health --ready never passed:\n{}", s.text());
    let manifest: Value =
        serde_json::from_slice(&std::fs::read(models.join("es-en/manifest.json")).expect("es-en installed")).unwrap();
    assert_eq!(manifest["complete"], true);
    // PRELOAD=1 is the entrypoint's default: the model is loaded before any request.
    let (status, health) = get_json(port, "/health");
    assert_eq!(status, 200);
    assert_eq!(health["pairs_loaded"], 1, "{health}");
    let (status, body) = translate(port, None);
    assert_eq!(status, 200, "{body}");
    assert_eq!(body["translations"].as_array().map(Vec::len), Some(1), "{body}");
    // The script exec'd the server, so the container's SIGTERM reaches it and it drains.
    assert!(s.terminate(Duration::from_secs(30)).success(), "{}", s.text());

    // A restart with the source gone: the volume's models are served.
    let gone = t.path().join("no-such-mirror");
    let mut s = Running::start(entrypoint(&t, &models, &gone, Some("es")));
    let port = s.port();
    assert!(s.text().contains("serving the models already in"), "{}", s.text());
    assert!(healthy(port, true), "{}", s.text());
    assert!(s.terminate(Duration::from_secs(30)).success(), "{}", s.text());
}

#[test]
fn entrypoint_refuses_to_start_without_verified_models_or_with_bad_languages() {
    let t = TestDir::new();
    let models = t.path().join("models");

    let mut s = Running::start(entrypoint(&t, &models, &mirror(&t, true), Some("es")));
    let status = s.wait();
    assert_eq!(status.code(), Some(1), "{}", s.text());
    let log = s.text();
    assert!(log.contains("model.esen.intgemm.alphas.bin") && log.contains("decompressedHash"), "{log}");
    assert!(log.contains("holds no models") && !log.contains("listening on"), "{log}");
    assert!(!models.join("es-en/manifest.json").exists());

    let mut s = Running::start(entrypoint(&t, &models, &mirror(&t, false), Some("es,not a language")));
    assert_eq!(s.wait().code(), Some(2), "{}", s.text());
    assert!(s.text().contains("was refused"), "{}", s.text());
}

/// Dockerfile instructions, continuation lines joined, comments dropped: (INSTRUCTION, rest).
fn dockerfile() -> Vec<(String, String)> {
    let text = read("packaging/docker/Dockerfile");
    let mut out: Vec<(String, String)> = Vec::new();
    let mut current = String::new();
    for line in text.lines() {
        let l = line.trim();
        if l.starts_with('#') || (l.is_empty() && current.is_empty()) {
            continue;
        }
        current.push_str(l.trim_end_matches('\\'));
        current.push(' ');
        if !l.ends_with('\\') {
            let (ins, rest) = current.trim().split_once(' ').unwrap_or((current.trim(), ""));
            out.push((ins.to_ascii_uppercase(), rest.trim().to_string()));
            current.clear();
        }
    }
    out
}

#[test]
fn dockerfile_builds_the_dist_profile_into_a_slim_non_root_image() {
    let ins = dockerfile();
    let stages: Vec<usize> = ins.iter().enumerate().filter(|(_, (i, _))| i == "FROM").map(|(n, _)| n).collect();
    assert_eq!(stages.len(), 2, "a build stage and a runtime stage");
    assert!(ins[stages[0]].1.ends_with("AS build"), "{:?}", ins[stages[0]]);
    let runtime = &ins[stages[1]..];
    assert!(runtime[0].1.contains("-slim"), "runtime base: {:?}", runtime[0]);
    let build = &ins[stages[0]..stages[1]];
    assert!(
        build.iter().any(|(i, r)| i == "RUN" && r.contains("cargo build --locked --profile dist")),
        "the build stage builds the dist profile"
    );
    for (i, r) in &ins {
        if i == "RUN" && r.contains("apt-get install") {
            assert!(r.contains("--no-install-recommends") && r.contains("rm -rf /var/lib/apt/lists/*"), "{r}");
        }
        assert_ne!(i, "ADD", "COPY, not ADD: {r}");
    }
    let get = |name: &str| -> Vec<&String> { runtime.iter().filter(|(i, _)| i == name).map(|(_, r)| r).collect() };
    assert!(
        !get("RUN").iter().any(|r| r.contains("apt-get") || r.contains("curl") || r.contains("wget")),
        "the runtime installs nothing: the health check is the binary"
    );
    let user = get("USER");
    assert_eq!(user.len(), 1);
    let uid: u32 = user[0].split(':').next().unwrap().parse().expect("a numeric USER (runAsNonRoot checks it)");
    assert_ne!(uid, 0);
    assert_eq!(get("VOLUME"), [&"[\"/models\"]".to_string()]);
    let env = get("ENV").iter().map(|s| s.as_str()).collect::<Vec<_>>().join(" ");
    for want in ["MODELS_DIR=/models", "PRELOAD=1", &format!("LANGUAGES={DEFAULT_LANGUAGES}")] {
        assert!(env.split_whitespace().any(|w| w == want), "ENV lacks {want}: {env}");
    }
    let health = get("HEALTHCHECK");
    assert!(health.len() == 1 && health[0].contains("CMD [\"reseam\", \"health\", \"--ready\"]"), "{health:?}");
    assert_eq!(get("ENTRYPOINT"), [&"[\"/usr/local/bin/reseam-entrypoint\"]".to_string()]);
    assert!(
        read("packaging/docker/Dockerfile")
            .contains("install -D -m 0755 packaging/docker/entrypoint.sh /out/usr/local/bin/reseam-entrypoint")
    );
    assert!(read("packaging/docker/entrypoint.sh").contains(&format!("LANGUAGES:={DEFAULT_LANGUAGES}}}")));
    assert_eq!(DEFAULT_LANGUAGES.split(',').count(), 18);
    // The build context leaves out the target folder and the test fixtures.
    let ignore = read("packaging/docker/Dockerfile.dockerignore");
    assert!(ignore.lines().any(|l| l == "target/") && ignore.lines().any(|l| l == "tests/fixtures/"));
}

/// `Key=value` lines of a unit's section, in order (a key may repeat).
fn unit(text: &str, section: &str) -> Vec<(String, String)> {
    let mut inside = false;
    let mut out = Vec::new();
    for line in text.lines().map(str::trim) {
        if line.starts_with('[') {
            inside = line == format!("[{section}]");
        } else if inside && !line.is_empty() && !line.starts_with('#') {
            let (k, v) = line.split_once('=').unwrap_or_else(|| panic!("not Key=value: {line}"));
            out.push((k.to_string(), v.to_string()));
        }
    }
    out
}

/// An Exec line as systemd runs it: prefixes dropped, `${VAR}` and `$VAR` substituted, reseam's
/// installed path replaced by the binary under test.
fn exec_line(line: &str, env: &BTreeMap<String, String>) -> Command {
    let line = line.trim_start_matches(['-', '@', '+', '!', ':']);
    let words: Vec<String> = line
        .split_whitespace()
        .map(|w| {
            if let Some(var) = w.strip_prefix("${").and_then(|w| w.strip_suffix('}')).or_else(|| w.strip_prefix('$')) {
                env.get(var).cloned().unwrap_or_else(|| panic!("{var} is not set for {line}"))
            } else {
                w.to_string()
            }
        })
        .collect();
    let program =
        if words[0] == "/usr/bin/reseam" { reseam().to_string_lossy().into_owned() } else { words[0].clone() };
    let mut c = Command::new(program);
    c.args(&words[1..]).env_clear().envs(env);
    c
}

/// Environment variables `reseam SUBCOMMAND --help` names.
fn env_vars_of(sub: &str) -> Vec<String> {
    let out = Command::new(reseam()).args([sub, "--help"]).output().expect("reseam --help");
    let text = String::from_utf8_lossy(&out.stdout).replace(['\n', ' '], "");
    text.split("[env:").skip(1).filter_map(|r| r.split([']', '=']).next()).map(str::to_string).collect()
}

#[test]
fn systemd_unit_starts_serves_reloads_and_stops_as_systemd_runs_it() {
    let text = read("packaging/systemd/reseam.service");
    let service = unit(&text, "Service");
    let values = |k: &str| -> Vec<&str> { service.iter().filter(|(a, _)| a == k).map(|(_, v)| v.as_str()).collect() };
    for (k, v) in [
        ("Type", "notify"),
        ("DynamicUser", "yes"),
        ("ProtectSystem", "strict"),
        ("ProtectHome", "yes"),
        ("PrivateTmp", "yes"),
        ("NoNewPrivileges", "yes"),
        ("MemoryDenyWriteExecute", "yes"),
        ("LockPersonality", "yes"),
        ("CapabilityBoundingSet", ""),
        ("SystemCallArchitectures", "native"),
    ] {
        assert_eq!(values(k), [v], "{k}");
    }
    assert!(values("StateDirectory").iter().any(|v| v.split_whitespace().any(|d| d == "reseam/models")));
    assert!(values("RestrictAddressFamilies")[0].contains("AF_UNIX"), "NOTIFY_SOCKET is a unix socket");
    assert!(values("TasksMax")[0].parse::<u32>().unwrap() > 64 + 8 + 16, "HTTP_THREADS' workers must fit");
    let stop: u64 = values("TimeoutStopSec")[0].trim_end_matches('s').parse().unwrap();
    assert!(stop > 25, "TimeoutStopSec must exceed DRAIN_SECONDS (25)");
    let credential = values("LoadCredential");
    assert_eq!(credential.len(), 1);
    assert!(credential[0].starts_with("translate-token:"), "serve reads $CREDENTIALS_DIRECTORY/translate-token");
    assert_eq!(values("EnvironmentFile"), ["-/etc/default/reseam"]);

    // Every setting of serve and fetch is in the example environment file.
    let example = read("packaging/systemd/reseam.env");
    for var in env_vars_of("serve").into_iter().chain(env_vars_of("fetch")) {
        assert!(example.contains(&var), "packaging/systemd/reseam.env does not mention {var}");
    }

    // The environment systemd gives the service: Environment=, then the example file with every
    // setting uncommented at its value, but for what this test must point elsewhere.
    let t = TestDir::new();
    let mut env = BTreeMap::new();
    for e in values("Environment") {
        for kv in e.split_whitespace() {
            let (k, v) = kv.split_once('=').unwrap();
            env.insert(k.to_string(), v.to_string());
        }
    }
    assert_eq!(env.get("LANGUAGES").map(String::as_str), Some(DEFAULT_LANGUAGES));
    assert_eq!(env.get("PRELOAD").map(String::as_str), Some("1"));
    let ours = ["MODELS_DIR", "RESEAM_MODELS_SOURCE", "LANGUAGES", "HOST", "PORT", "RESEAM_PACK_DIR"];
    let mut uncommented = 0;
    for line in example.lines() {
        if let Some((k, v)) = line.strip_prefix('#').and_then(|l| l.split_once('='))
            && !k.is_empty()
            && k.chars().all(|c| c.is_ascii_uppercase() || c == '_')
            && !ours.contains(&k)
        {
            env.insert(k.to_string(), v.to_string());
            uncommented += 1;
        }
    }
    assert!(uncommented > 20, "{uncommented} settings in the example file");
    let models = t.path().join("state/models");
    std::fs::create_dir_all(&models).unwrap();
    let creds = t.path().join("credentials");
    std::fs::create_dir_all(&creds).unwrap();
    std::fs::write(creds.join("translate-token"), "s3cret-token\n").unwrap();
    env.extend(
        [
            ("MODELS_DIR", models.to_string_lossy().into_owned()),
            ("RESEAM_MODELS_SOURCE", mirror(&t, false).to_string_lossy().into_owned()),
            ("LANGUAGES", "es".into()),
            ("HOST", "127.0.0.1".into()),
            ("PORT", "0".into()),
            ("THREADS", "1".into()),
            ("RESEAM_PACK_DIR", t.path().join("state/packs").to_string_lossy().into_owned()),
            ("CREDENTIALS_DIRECTORY", creds.to_string_lossy().into_owned()),
            ("PATH", "/usr/bin:/bin".into()),
        ]
        .map(|(k, v)| (k.to_string(), v)),
    );

    let pre = values("ExecStartPre");
    assert_eq!(pre.len(), 1);
    let out = exec_line(pre[0], &env).current_dir(t.path()).output().expect("ExecStartPre");
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    assert!(models.join("es-en/manifest.json").exists());

    let start = values("ExecStart");
    assert_eq!(start, ["/usr/bin/reseam serve"]);
    let mut cmd = exec_line(start[0], &env);
    cmd.current_dir(t.path());
    let mut s = Running::start(cmd);
    let port = s.port();
    assert!(s.text().contains("token required"), "{}", s.text());
    assert!(healthy(port, true), "{}", s.text());
    assert_eq!(translate(port, None).0, 401, "the credential's token is required");
    let (status, body) = translate(port, Some("s3cret-token"));
    assert_eq!(status, 200, "{body}");

    env.insert("MAINPID".into(), s.child.id().to_string());
    let reload = values("ExecReload");
    let out = exec_line(reload[0], &env).output().expect("ExecReload");
    assert!(out.status.success());
    assert!(s.wait_for("reloaded the models folder").is_some(), "{}", s.text());
    assert_eq!(translate(port, Some("s3cret-token")).0, 200);
    assert!(s.terminate(Duration::from_secs(stop)).success(), "{}", s.text());
}

/// What the check inside the throwaway systemd records, as `key=value` lines; it ends by
/// powering the container off. Only bash, coreutils, sed, curl and systemd's tools: the
/// container's /etc is empty, so neither awk (an alternative) nor user names resolve.
const BOOT_CHECK: &str = r#"#!/bin/bash
exec >/result/log 2>&1
PORT=$(cat /result/port)
say() { echo "$1=$2"; }
say active "$(systemctl is-active reseam.service)"
PID=$(systemctl show -p MainPID --value reseam.service)
field() { sed -n "s/^$1:[[:space:]]*//p" /proc/"$PID"/status; }
say uid "$(stat -c %u /proc/"$PID")"
say seccomp "$(field Seccomp)"
say no_new_privs "$(field NoNewPrivs)"
say cap_eff "$(field CapEff)"
say models "$(ls /var/lib/reseam/models | tr '\n' ' ')"
say ready "$(curl -s -o /dev/null -w '%{http_code}' "http://127.0.0.1:$PORT/ready")"
body='{"from":"es","to":"en","texts":["Hola."]}'
say no_token "$(curl -s -o /dev/null -w '%{http_code}' -d "$body" "http://127.0.0.1:$PORT/v1/translate")"
auth="Authorization: Bearer $(cat /etc/reseam/translate-token)"
say with_token "$(curl -s -o /dev/null -w '%{http_code}' -H "$auth" -d "$body" "http://127.0.0.1:$PORT/v1/translate")"
systemctl start amx-probe.service amx-probe-blocked.service
say amx_request "$(cat /result/amx-probe)"
say amx_request_blocked "$(cat /result/amx-probe-blocked)"
systemctl reload reseam.service
say reload_rc $?
say after_reload "$(systemctl is-active reseam.service)"
systemctl stop reseam.service
say stop_result "$(systemctl show -p Result --value reseam.service)"
say exit_status "$(systemctl show -p ExecMainStatus --value reseam.service)"
journalctl -u reseam.service --no-pager -o cat > /result/journal
say done yes
systemctl --no-block poweroff
"#;

/// arch_prctl(ARCH_REQ_XCOMP_PERM, XFEATURE_XTILEDATA), the request the AMX kernels make before
/// their first tile instruction: "ok", or the error's text (EOPNOTSUPP on a CPU without AMX).
const AMX_PROBE: &str = r#"import ctypes, os
libc = ctypes.CDLL(None, use_errno=True)
r = libc.syscall(158, 0x1023, 18)
print("ok" if r == 0 else os.strerror(ctypes.get_errno()))
"#;

/// A oneshot unit running [`AMX_PROBE`] as a dynamic user under reseam.service's own syscall
/// filter lines (copied from it), plus `extra`; its output goes to /result/NAME.
fn amx_probe_unit(reseam_unit: &str, name: &str, extra: &str) -> String {
    let filter: String = unit(reseam_unit, "Service")
        .into_iter()
        .filter(|(k, _)| k.starts_with("SystemCall") || k == "NoNewPrivileges" || k == "LockPersonality")
        .map(|(k, v)| format!("{k}={v}\n"))
        .collect();
    assert!(filter.contains("SystemCallFilter=@system-service"), "{filter}");
    format!(
        "[Service]\nType=oneshot\nDynamicUser=yes\n{filter}{extra}ExecStart=/usr/bin/python3 /srv/amx.py\n\
         StandardOutput=file:/result/{name}\n"
    )
}

/// The unit itself, unchanged, under a real systemd: `systemd-nspawn` boots this machine's own
/// /usr on an empty root (nothing it writes outlives it), with the unit, the example environment
/// file and a token put in place, and a drop-in that only points the fetch at a stand-in models
/// server, the port at a free one and pins the threads (sched_setaffinity). Needs root,
/// systemd-container, curl and python3; .ci/run runs it (`-- --ignored`).
#[test]
#[ignore = "boots a throwaway systemd (root, systemd-nspawn): run by .ci/run"]
fn systemd_unit_boots_under_a_throwaway_systemd() {
    let nspawn = Command::new("systemd-nspawn").arg("--version").output();
    assert!(nspawn.is_ok_and(|o| o.status.success()), "systemd-nspawn is needed (Debian package systemd-container)");
    let uid = Command::new("id").arg("-u").output().expect("id");
    assert_eq!(String::from_utf8_lossy(&uid.stdout).trim(), "0", "booting a container needs root");
    for tool in ["/usr/bin/curl", "/usr/bin/python3"] {
        assert!(Path::new(tool).exists(), "{tool} is needed inside the container (Debian packages curl, python3)");
    }

    let t = TestDir::new();
    let dir = t.path();
    let port = std::net::TcpListener::bind("127.0.0.1:0").unwrap().local_addr().unwrap().port();
    // Over HTTP on the loopback (the container shares this machine's network), so that the
    // fetch before start runs its sockets inside the unit's sandbox too.
    let server = crate::fetch::server::Server::start(pair_records("es", "en", "3.0", ""));
    let result = dir.join("result");
    let upper = dir.join("usr-upper/bin");
    let tokens = dir.join("etc-reseam");
    let dropin = dir.join("reseam.service.d");
    for d in [&result, &upper, &tokens, &dropin] {
        std::fs::create_dir_all(d).unwrap();
    }
    std::fs::write(result.join("port"), port.to_string()).unwrap();
    std::fs::copy(reseam(), upper.join("reseam")).unwrap();
    std::fs::write(tokens.join("translate-token"), "b00t-token\n").unwrap();
    std::fs::write(
        dropin.join("test.conf"),
        format!(
            "[Service]\nEnvironment=LANGUAGES=es RESEAM_MODELS_SOURCE={} HOST=127.0.0.1 PORT={port} \
             THREADS=2 PIN_FROM_CORE=0\n",
            server.url
        ),
    )
    .unwrap();
    std::fs::write(dir.join("check.sh"), BOOT_CHECK).unwrap();
    std::fs::write(
        dir.join("check.service"),
        "[Unit]\nWants=reseam.service\nAfter=reseam.service\n\
         [Service]\nType=oneshot\nExecStart=/bin/bash /srv/check.sh\n",
    )
    .unwrap();
    let text = read("packaging/systemd/reseam.service");
    std::fs::write(dir.join("amx.py"), AMX_PROBE).unwrap();
    std::fs::write(dir.join("amx-probe.service"), amx_probe_unit(&text, "amx-probe", "")).unwrap();
    std::fs::write(
        dir.join("amx-probe-blocked.service"),
        amx_probe_unit(&text, "amx-probe-blocked", "SystemCallFilter=~arch_prctl\n"),
    )
    .unwrap();

    let bind = |from: &Path, to: &str| format!("--bind-ro={}:{to}", from.display());
    let units = "/etc/systemd/system";
    let out = Command::new("timeout")
        .arg("300")
        .arg("systemd-nspawn")
        .args(["--quiet", "--directory=/", "--volatile=yes", "--register=no", "--keep-unit"])
        .arg(format!("--overlay=/usr:{}:/usr", dir.join("usr-upper").display()))
        .arg(bind(&repo().join("packaging/systemd/reseam.service"), &format!("{units}/reseam.service")))
        .arg(bind(&dropin, &format!("{units}/reseam.service.d")))
        .arg(bind(&repo().join("packaging/systemd/reseam.env"), "/etc/default/reseam"))
        .arg(bind(&tokens, "/etc/reseam"))
        .arg(bind(&dir.join("check.sh"), "/srv/check.sh"))
        .arg(bind(&dir.join("check.service"), &format!("{units}/check.service")))
        .arg(bind(&dir.join("amx.py"), "/srv/amx.py"))
        .arg(bind(&dir.join("amx-probe.service"), &format!("{units}/amx-probe.service")))
        .arg(bind(&dir.join("amx-probe-blocked.service"), &format!("{units}/amx-probe-blocked.service")))
        .arg(format!("--bind={}:/result", result.display()))
        .args(["--boot", "--", "systemd.unit=check.service", "systemd.firstboot=off"])
        .stdin(Stdio::null())
        .output()
        .expect("systemd-nspawn");
    let console = String::from_utf8_lossy(&out.stdout).into_owned() + &String::from_utf8_lossy(&out.stderr);
    let log = std::fs::read_to_string(result.join("log")).unwrap_or_default();
    let journal = std::fs::read_to_string(result.join("journal")).unwrap_or_default();
    let got: BTreeMap<&str, &str> = log.lines().filter_map(|l| l.split_once('=')).collect();
    let context = format!("check:\n{log}\njournal:\n{journal}\nconsole:\n{console}");
    assert_eq!(got.get("done"), Some(&"yes"), "the check did not finish\n{context}");
    for (k, v) in [
        ("active", "active"),
        ("seccomp", "2"),
        ("no_new_privs", "1"),
        ("cap_eff", "0000000000000000"),
        ("ready", "200"),
        ("no_token", "401"),
        ("with_token", "200"),
        ("reload_rc", "0"),
        ("after_reload", "active"),
        ("stop_result", "success"),
        ("exit_status", "0"),
    ] {
        assert_eq!(got.get(k), Some(&v), "{k}\n{context}");
    }
    // DynamicUser: a UID of systemd's dynamic range, not root.
    let uid: u32 = got.get("uid").and_then(|u| u.parse().ok()).unwrap_or_else(|| panic!("{context}"));
    assert!((61184..=65519).contains(&uid), "uid {uid}\n{context}");
    assert_eq!(got.get("models").map(|m| m.trim()), Some("es-en"), "{context}");
    assert!(journal.contains("ready: 1 models loaded"), "READY=1 after the preload\n{context}");
    assert!(journal.contains("reloaded the models folder"), "{context}");
    if cfg!(target_arch = "x86_64") {
        // The kernel's own answers: granted, or no AMX here (EOPNOTSUPP; EINVAL on older kernels).
        let answers = ["ok", "Operation not supported", "Invalid argument"];
        let amx = got.get("amx_request").copied().unwrap_or_default();
        assert!(answers.contains(&amx), "arch_prctl under the unit's filter: {amx:?}\n{context}");
        // The control: with arch_prctl filtered out the probe cannot even start (glibc sets up
        // thread-local storage with it), so a filter that took it away could not go unseen.
        let blocked = got.get("amx_request_blocked").copied().unwrap_or_default();
        assert!(!answers.contains(&blocked), "the probe without arch_prctl: {blocked:?}\n{context}");
    }
    // The sandbox left the kernels alone: the server in the unit uses the kernels this machine's
    // unconfined process picks (amx on an AMX CPU).
    let host = Command::new(reseam()).args(["--version", "--verbose"]).output().expect("reseam --version");
    let host = String::from_utf8_lossy(&host.stdout).into_owned();
    let live = host
        .lines()
        .find_map(|l| l.strip_prefix("kernel in use: "))
        .and_then(|k| k.split_whitespace().next())
        .unwrap_or_else(|| panic!("{host}"))
        .to_string();
    let listening = journal.lines().find(|l| l.contains("listening on")).unwrap_or_else(|| panic!("{context}"));
    assert!(listening.contains(&format!("kernels {live}")), "host kernels {live}: {listening}");
}

/// Installing reseam needs Rust and the C compiler it links with, nothing more (issue 48): no
/// crate of the default build runs cmake or compiles C++. The crates that would: the `cmake`
/// crate (what a -sys crate calls cmake through), `cxx-build`, `sentencepiece-sys` (the C++
/// SentencePiece, only behind the `cpp-sentencepiece` feature) and `esaxx-rs` with its `cpp`
/// feature (the `tokenizers` crate's `esaxx_fast`). .ci/run also builds with both hidden.
#[test]
fn the_default_build_needs_no_cmake_and_no_cpp_compiler() {
    let out = Command::new(env!("CARGO"))
        .current_dir(env!("CARGO_MANIFEST_DIR"))
        .args(["tree", "--locked", "--offline", "--workspace", "--edges", "normal,build", "--prefix", "none"])
        .args(["--format", "{p} [{f}]"])
        .output()
        .expect("cargo tree runs");
    assert!(out.status.success(), "cargo tree: {}", String::from_utf8_lossy(&out.stderr));
    let tree = String::from_utf8(out.stdout).unwrap();
    assert!(tree.lines().any(|l| l.starts_with("reseam ")), "the graph was not read: {tree}");
    for line in tree.lines() {
        let name = line.split(' ').next().unwrap_or("");
        assert!(!["cmake", "cxx-build", "sentencepiece-sys", "sentencepiece"].contains(&name), "{line}");
        if name == "esaxx-rs" {
            assert!(!line.contains("cpp"), "{line}");
        }
    }
    // With the feature, the reference is there (so the check above can fail). Not offline: on a
    // fresh clone the feature's crates (cmake, sentencepiece-sys) were never downloaded.
    let out = Command::new(env!("CARGO"))
        .current_dir(env!("CARGO_MANIFEST_DIR"))
        .args(["tree", "--locked", "--features", "cpp-sentencepiece", "--prefix", "none", "-i"])
        .arg("sentencepiece-sys")
        .output()
        .expect("cargo tree runs");
    assert!(out.status.success(), "cargo tree -i sentencepiece-sys: {}", String::from_utf8_lossy(&out.stderr));
}
