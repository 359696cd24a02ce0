//! SIGTERM and SIGINT: no new connections, the requests in flight finish with 200, /ready is 503
//! while draining, exit 0.

use std::net::TcpStream;
use std::time::{Duration, Instant};

use serde_json::json;

use super::client::{Conn, Req};
use super::server::Server;
use super::{heldout, strs};

#[test]
fn sigterm_finishes_the_requests_in_flight_and_exits_0() {
    let s = Server::esen().args(&["--max-texts", "100", "--max-chars", "100000", "--http-threads", "2"]).start();
    let texts = heldout(100);
    let want = s.translate("es", "en", &strs(&texts));

    // Four clients with a long request each (two compute, two wait for a slot).
    let clients: Vec<_> = (0..4)
        .map(|_| {
            let addr = s.addr;
            let body = json!({"from": "es", "to": "en", "texts": texts});
            std::thread::spawn(move || Req::post("/v1/translate").json(&body).send(addr))
        })
        .collect();
    // A connection opened before the signal, its request sent after: it sees the drain.
    let mut late = Conn::open(s.addr);
    late.write(b"GET /ready HTTP/1.1\r\nHost: x\r\n");
    let started = Instant::now();
    // Every client in: two computing, two queued (else a late one would find the port closed).
    while s.metric("reseam_inflight_requests") < 2.0 || s.metric("reseam_queue_depth") < 2.0 {
        assert!(started.elapsed() < Duration::from_secs(20), "the long requests never started");
        std::thread::sleep(Duration::from_millis(5));
    }
    s.signal("TERM");
    std::thread::sleep(Duration::from_millis(100));
    late.write(b"\r\n");
    let ready = late.read_response(false).expect("/ready on a connection opened before SIGTERM");
    assert_eq!(ready.expect_json(503), json!({"status": "draining"}));
    // No new connections.
    let refused = TcpStream::connect_timeout(&s.addr, Duration::from_secs(1));
    assert!(refused.is_err(), "a new connection was accepted while draining");

    for c in clients {
        let r = c.join().unwrap();
        let v = r.expect_json(200);
        assert_eq!(v["translations"], json!(want), "a request in flight at SIGTERM");
    }
    let mut s = s;
    let (status, log) = s.wait_exit(Duration::from_secs(20));
    assert_eq!(status.code(), Some(0), "{log}");
    assert!(log.contains("info SIGTERM: no new connections; finishing") && log.contains("info stopped"), "{log}");
}

#[test]
fn sigint_exits_0() {
    let mut s = Server::esen().start();
    assert_eq!(s.translate("es", "en", &["Hola"]).len(), 1);
    s.signal("INT");
    let (status, log) = s.wait_exit(Duration::from_secs(10));
    assert_eq!(status.code(), Some(0), "{log}");
    assert!(log.contains("info SIGINT"), "{log}");
}

#[test]
fn the_drain_is_bounded_by_drain_seconds() {
    // A request far longer than the drain time: the server exits 0 once the drain time is up,
    // without waiting for it.
    let s = Server::esen()
        .args(&["--drain-seconds", "1", "--max-texts", "2000", "--max-chars", "1000000", "--max-body", "20000000"])
        .start();
    let texts: Vec<String> = heldout(300).into_iter().cycle().take(1500).collect();
    let addr = s.addr;
    let client = std::thread::spawn(move || {
        let mut c = Conn::open(addr);
        c.write(&Req::post("/v1/translate").json(&json!({"from": "es", "to": "en", "texts": texts})).bytes(false));
        c.read_response(false)
    });
    let started = Instant::now();
    while s.metric("reseam_inflight_requests") < 1.0 {
        assert!(started.elapsed() < Duration::from_secs(20), "the long request never started");
        std::thread::sleep(Duration::from_millis(5));
    }
    s.signal("TERM");
    let signalled = Instant::now();
    let mut s = s;
    let (status, log) = s.wait_exit(Duration::from_secs(30));
    let took = signalled.elapsed();
    assert_eq!(status.code(), Some(0), "{log}");
    assert!(took < Duration::from_millis(2500), "exited {took:?} after SIGTERM with --drain-seconds 1:\n{log}");
    assert!(log.contains("warn connections still open after the drain time"), "{log}");
    // The abandoned request's connection is closed without an answer.
    let r = client.join().unwrap();
    assert!(r.is_err(), "the request outlived the drain: {:?}", r.map(|r| r.status));
}

#[test]
fn systemd_hears_ready_reloading_and_stopping() {
    use std::os::unix::net::UnixDatagram;
    let dir = crate::common::TestDir::new();
    let path = dir.path().join("notify.sock");
    let sock = UnixDatagram::bind(&path).expect("binding the notify socket");
    sock.set_read_timeout(Some(Duration::from_secs(20))).unwrap();
    let next = || {
        let mut buf = [0u8; 512];
        let n = sock.recv(&mut buf).expect("a message on NOTIFY_SOCKET");
        String::from_utf8_lossy(&buf[..n]).into_owned()
    };
    let s = Server::esen().env("NOTIFY_SOCKET", path.to_str().unwrap()).env("PRELOAD", "1").start_in(dir);
    assert_eq!(next(), "READY=1\n", "READY=1 once the models are loaded");
    s.signal("HUP");
    assert!(next().starts_with("RELOADING=1"), "RELOADING=1 on SIGHUP");
    assert_eq!(next(), "READY=1\n", "READY=1 after the reload");
    s.signal("TERM");
    assert_eq!(next(), "STOPPING=1\n");
    let mut s = s;
    let (status, log) = s.wait_exit(Duration::from_secs(10));
    assert_eq!(status.code(), Some(0), "{log}");
}
