//! SIGHUP rescans the models folder under load: a new pair is served, a removed one answers
//! 400 naming its language, and no request of the clients translating all along fails.

use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::{Duration, Instant};

use serde_json::json;

use super::client::Req;
use super::server::{Server, install};

const TEXTS: [&str; 2] = ["Ella se negó a hacerlo.", "Espero que esto pueda entrar en vigor en julio de 2010. @ana"];

fn pairs(s: &Server) -> Vec<(String, String)> {
    let v = s.get("/v1/languages").expect_json(200);
    let mut p: Vec<(String, String)> = serde_json::from_value(v["pairs"].clone()).unwrap();
    p.sort();
    p
}

/// Waits until /v1/languages lists `want` (a reload runs in the background).
fn wait_pairs(s: &Server, want: &[(&str, &str)]) {
    let want: Vec<(String, String)> = want.iter().map(|(a, b)| (a.to_string(), b.to_string())).collect();
    let started = Instant::now();
    while pairs(s) != want {
        assert!(
            started.elapsed() < Duration::from_secs(20),
            "pairs {:?}, not {want:?}, after SIGHUP:\n{}",
            pairs(s),
            s.log()
        );
        std::thread::sleep(Duration::from_millis(20));
    }
}

#[test]
fn sighup_adds_and_removes_pairs_while_clients_translate() {
    let s = Server::esen().args(&["--threads", "2"]).start();
    let want = s.translate("es", "en", &TEXTS);

    // Three clients translating without pause, each over every dialect's route in turn.
    let stop = Arc::new(AtomicBool::new(false));
    let clients: Vec<_> = (0..3)
        .map(|k| {
            let (addr, stop, want) = (s.addr, stop.clone(), want.clone());
            std::thread::spawn(move || {
                let (mut ok, mut failed) = (0usize, Vec::new());
                while !stop.load(Ordering::Relaxed) {
                    let (req, got): (Req, fn(&serde_json::Value) -> Vec<String>) =
                        match (ok + k) % 3 {
                            0 => (
                                Req::post("/v1/translate").json(&json!({"from": "es", "to": "en", "texts": TEXTS})),
                                |v| serde_json::from_value(v["translations"].clone()).unwrap_or_default(),
                            ),
                            1 => (
                                Req::post("/translate").json(&json!({"q": TEXTS, "source": "es", "target": "en"})),
                                |v| serde_json::from_value(v["translatedText"].clone()).unwrap_or_default(),
                            ),
                            _ => (
                                Req::post("/translate/batch").json(&json!({"from": "es", "to": "en", "texts": TEXTS})),
                                |v| serde_json::from_value(v["results"].clone()).unwrap_or_default(),
                            ),
                        };
                    let r = req.send(addr);
                    if r.status == 200 && got(&r.json()) == want {
                        ok += 1;
                    } else {
                        failed.push(format!("{} {}", r.status, String::from_utf8_lossy(&r.body)));
                    }
                }
                (ok, failed)
            })
        })
        .collect();
    std::thread::sleep(Duration::from_millis(300));

    // A new pair: ca-en (the es-en model under another name), served after SIGHUP.
    let e = s.post_json("/v1/translate", &json!({"from": "ca", "to": "en", "texts": ["Hola"]})).expect_error(400);
    assert!(e.contains("ca is not supported"), "{e}");
    install(&s.models, "ca-en", "tiny-esen");
    s.signal("HUP");
    wait_pairs(&s, &[("ca", "en"), ("es", "en")]);
    assert_eq!(s.translate("ca", "en", &TEXTS), want, "the same model under another name translates alike");
    let v = s.get("/languages").expect_json(200);
    assert!(v.as_array().unwrap().iter().any(|l| l["code"] == "ca" && l["targets"] == json!(["en"])), "{v}");

    // Reloads with nothing changed, back to back.
    for _ in 0..3 {
        s.signal("HUP");
        std::thread::sleep(Duration::from_millis(150));
    }
    assert_eq!(s.translate("ca", "en", &TEXTS[..1]), want[..1]);

    // The pair removed: after SIGHUP its language is unknown, 400 naming it.
    std::fs::remove_dir_all(s.models.join("ca-en")).unwrap();
    s.signal("HUP");
    wait_pairs(&s, &[("es", "en")]);
    let e = s.post_json("/v1/translate", &json!({"from": "ca", "to": "en", "texts": ["Hola"]})).expect_error(400);
    assert!(e.contains("ca is not supported"), "{e}");
    let e = s.post_json("/translate", &json!({"q": "Hola", "source": "ca", "target": "en"})).expect_error(400);
    assert!(e.contains("ca is not supported"), "{e}");
    std::thread::sleep(Duration::from_millis(300));

    stop.store(true, Ordering::Relaxed);
    let mut total = 0;
    for (k, c) in clients.into_iter().enumerate() {
        let (ok, failed) = c.join().unwrap();
        assert!(
            failed.is_empty(),
            "client {k}: {} of {} requests failed during the reloads: {:?}",
            failed.len(),
            ok + failed.len(),
            &failed[..failed.len().min(5)]
        );
        assert!(ok >= 5, "client {k} made only {ok} requests");
        total += ok;
    }
    // Each SIGHUP reloaded once (the log line comes just after the swap).
    let reloads = || s.log().matches("info reloaded the models folder").count();
    let started = Instant::now();
    while reloads() < 5 && started.elapsed() < Duration::from_secs(10) {
        std::thread::sleep(Duration::from_millis(20));
    }
    assert_eq!(reloads(), 5, "{}", s.log());
    eprintln!("{total} requests during 5 reloads, none failed");
}
