//! Memory across reloads and cold starts: 20 SIGHUPs under load leave one mapping of the pack
//! and the RSS where it was; a cold burst of 64 first requests writes one pack and peaks below
//! one pack plus 200 MB.

use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::{Duration, Instant};

use serde_json::json;

use super::client::Req;
use super::server::Server;

const TEXTS: [&str; 2] = ["Ella se negó a hacerlo.", "Espero que esto pueda entrar en vigor en julio de 2010. @ana"];

/// A field of /proc/PID/status in kB (`VmRSS`, `VmHWM`).
pub fn status_kb(pid: u32, field: &str) -> u64 {
    let text = std::fs::read_to_string(format!("/proc/{pid}/status")).expect("/proc/PID/status");
    text.lines()
        .find_map(|l| l.strip_prefix(field)?.strip_prefix(':'))
        .and_then(|v| v.trim().trim_end_matches("kB").trim().parse().ok())
        .unwrap_or_else(|| panic!("no {field} in /proc/{pid}/status"))
}

/// Mappings of files named `name` in /proc/PID/maps.
pub fn mappings(pid: u32, name: &str) -> usize {
    let text = std::fs::read_to_string(format!("/proc/{pid}/maps")).expect("/proc/PID/maps");
    text.lines().filter(|l| l.ends_with(&format!("/{name}")) || l.ends_with(&format!("/{name} (deleted)"))).count()
}

/// The one pack of the server's models (the tests' packs go to RESEAM_PACK_DIR, `packs/`).
pub fn pack_of(s: &Server) -> Option<std::path::PathBuf> {
    let packs = s.dir.path().join("packs");
    let folders = std::fs::read_dir(packs).ok()?;
    folders.flatten().map(|f| f.path().join("model.reseam")).find(|p| p.exists())
}

/// Waits until `cond` holds (at most `deadline`).
fn eventually(deadline: Duration, mut cond: impl FnMut() -> bool) -> bool {
    let started = Instant::now();
    while !cond() {
        if started.elapsed() > deadline {
            return false;
        }
        std::thread::sleep(Duration::from_millis(20));
    }
    true
}

/// Clients translating without pause until `stop`; each returns (answered, failures).
fn clients(
    s: &Server,
    n: usize,
    want: &[String],
    stop: &Arc<AtomicBool>,
) -> Vec<std::thread::JoinHandle<(usize, Vec<String>)>> {
    (0..n)
        .map(|_| {
            let (addr, stop, want) = (s.addr, stop.clone(), want.to_vec());
            std::thread::spawn(move || {
                let (mut ok, mut failed) = (0usize, Vec::new());
                while !stop.load(Ordering::Relaxed) {
                    let r =
                        Req::post("/v1/translate").json(&json!({"from": "es", "to": "en", "texts": TEXTS})).send(addr);
                    let got: Vec<String> = if r.status == 200 {
                        serde_json::from_value(r.json()["translations"].clone()).unwrap_or_default()
                    } else {
                        Vec::new()
                    };
                    if got == want {
                        ok += 1;
                    } else {
                        failed.push(format!("{} {}", r.status, String::from_utf8_lossy(&r.body)));
                    }
                }
                (ok, failed)
            })
        })
        .collect()
}

fn reload_leaves_one_mapping_and_the_rss(preload: bool) {
    let mut b = Server::esen().args(&["--threads", "2"]);
    if preload {
        b = b.args(&["--preload"]);
    }
    let s = b.start();
    let want = s.translate("es", "en", &TEXTS);
    let pid = s.pid();
    let stop = Arc::new(AtomicBool::new(false));
    let running = clients(&s, 3, &want, &stop);
    // The working memory of this load, and of a reload (the allocator's arena of the thread that
    // reloads), reach their size before the first figure.
    for i in 1..=2 {
        s.signal("HUP");
        assert!(eventually(Duration::from_secs(20), || s.log().matches("info reloaded the models folder").count() >= i));
    }
    std::thread::sleep(Duration::from_millis(1500));
    let rss_before = status_kb(pid, "VmRSS");
    assert_eq!(mappings(pid, "model.reseam"), 1, "{}", std::fs::read_to_string(format!("/proc/{pid}/maps")).unwrap());

    for i in 3..=22 {
        s.signal("HUP");
        let done =
            eventually(Duration::from_secs(20), || s.log().matches("info reloaded the models folder").count() >= i);
        assert!(done, "reload {i} not done:\n{}", s.log());
        std::thread::sleep(Duration::from_millis(100));
    }
    std::thread::sleep(Duration::from_millis(500));
    stop.store(true, Ordering::Relaxed);
    let mut total = 0;
    for c in running {
        let (ok, failed) = c.join().unwrap();
        assert!(
            failed.is_empty(),
            "{} requests failed during 20 reloads: {:?}",
            failed.len(),
            &failed[..failed.len().min(3)]
        );
        total += ok;
    }
    // The models the reloads replaced are unmapped once their last request is done: one model
    // loaded, one mapping.
    let maps = || mappings(pid, "model.reseam");
    assert!(eventually(Duration::from_secs(5), || maps() <= 1), "{} mappings of the pack after 20 reloads", maps());
    assert_eq!(s.translate("es", "en", &TEXTS), want);
    assert_eq!(maps(), 1);
    let rss_after = status_kb(pid, "VmRSS");
    eprintln!(
        "preload {preload}: {total} requests during 20 reloads, none failed; RSS {} MB before, {} MB after; {} mapping(s)",
        rss_before / 1024,
        rss_after / 1024,
        maps()
    );
    assert!(rss_after <= rss_before + 10 * 1024, "RSS {rss_before} kB before 20 reloads, {rss_after} kB after");
}

#[test]
fn twenty_reloads_under_load_leave_one_mapping_and_the_rss() {
    reload_leaves_one_mapping_and_the_rss(false);
}

#[test]
fn twenty_preloaded_reloads_under_load_leave_one_mapping_and_the_rss() {
    reload_leaves_one_mapping_and_the_rss(true);
}

#[test]
fn a_cold_burst_of_64_first_requests_packs_once() {
    let s = Server::esen().args(&["--threads", "2"]).start();
    let pid = s.pid();
    assert!(pack_of(&s).is_none(), "no pack before the first request");
    let go = Arc::new(std::sync::Barrier::new(64));
    let burst: Vec<_> = (0..64)
        .map(|_| {
            let (addr, go) = (s.addr, go.clone());
            std::thread::spawn(move || {
                go.wait();
                Req::post("/v1/translate").json(&json!({"from": "es", "to": "en", "texts": TEXTS})).send(addr)
            })
        })
        .collect();
    let answers: Vec<_> = burst.into_iter().map(|t| t.join().unwrap()).collect();
    let first = answers[0].expect_json(200);
    for a in &answers {
        assert_eq!(a.expect_json(200), first, "every request of the burst answered alike");
    }
    let log = s.log();
    assert_eq!(log.matches("no pack yet").count(), 1, "one pack written:\n{log}");
    // The note is a line of the server's log, not `reseam: …`.
    let line = log.lines().find(|l| l.contains("no pack yet")).unwrap();
    assert!(line.starts_with("info ") && line.contains("packed"), "{line}");
    let pack = pack_of(&s).expect("the pack written");
    let pack_mb = std::fs::metadata(&pack).unwrap().len() / (1 << 20);
    let peak_mb = status_kb(pid, "VmHWM") / 1024;
    eprintln!("cold burst of 64: one pack of {pack_mb} MB written; peak RSS {peak_mb} MB");
    assert!(peak_mb <= pack_mb + 200, "peak RSS {peak_mb} MB for a pack of {pack_mb} MB");
}
