//! Status codes: 400, 404, 405 (with Allow), 413 (texts, bytes, a body refused before it is
//! read), 415, 503 with Retry-After when the queue is full; never a 500 for bad input.

use std::time::{Duration, Instant};

use serde_json::json;

use super::client::{Conn, Req};
use super::server::Server;
use super::{heldout, strs};

#[test]
fn bad_requests_unknown_routes_methods_and_types() {
    let s = Server::esen().start();
    let t = |body: &str| Req::post("/v1/translate").header("Content-Type", "application/json").body(body.to_string());

    // Malformed JSON, and bodies that are JSON but not an object.
    for body in [r#"{"from":"es","#, "{", "nul", "[1,2]", r#""texts""#, "{'from':'es'}", r#"{"from":"es"}}"#] {
        let e = s.send(t(body)).expect_error(400);
        assert!(e.starts_with("Invalid JSON format"), "{body}: {e}");
    }
    // Wrong types, each named.
    for (body, named) in [
        (json!({"from": "es", "to": "en", "texts": "Hola"}), "texts must be an array of strings"),
        (json!({"from": "es", "to": "en", "texts": [1]}), "texts[0] must be a string"),
        (json!({"from": "es", "to": "en", "texts": ["a", null]}), "texts[1] must be a string"),
        (json!({"from": "es", "to": "en", "texts": {"a": 1}}), "texts must be a string or an array of strings"),
        (json!({"from": ["es"], "to": "en", "texts": ["a"]}), "from must be a string"),
        (json!({"from": "es", "to": {"x": 1}, "texts": ["a"]}), "to must be a string"),
        (json!({"from": "es", "to": "en"}), "Invalid request: missing texts parameter"),
        (json!({"to": "en", "texts": ["a"]}), "Invalid request: missing from parameter"),
        (json!({"from": 5, "to": "en", "texts": ["a"]}), "5 is not supported"),
        (json!({"from": true, "to": "en", "texts": ["a"]}), "true is not supported"),
    ] {
        let e = s.post_json("/v1/translate", &body).expect_error(400);
        assert!(e.contains(named), "{body}: {e}");
    }
    // Wrong types in the other dialects.
    let e = s.post_json("/translate", &json!({"q": [1, 2], "source": "es", "target": "en"})).expect_error(400);
    assert!(e.contains("q[0] must be a string"), "{e}");
    let v = s.post_json("/v2/translate", &json!({"text": {"a": 1}, "target_lang": "EN"})).expect_json(400);
    assert!(v["message"].as_str().unwrap().contains("text must be"), "{v}");
    let e = s.post_json("/imme", &json!({"text_list": "x", "target_lang": 3})).expect_error(400);
    assert!(e.contains("3 is not supported"), "{e}");
    // An empty body where fields are needed.
    assert_eq!(
        s.send(Req::post("/v1/translate").body("")).expect_error(400),
        "Invalid request: missing from parameter"
    );

    // 404: an unknown route, in the JSON shape.
    for path in ["/nowhere", "/v1", "/v3/translate", "/translate/batch/x", "/%ff%fe"] {
        let e = s.get(path).expect_error(404);
        assert!(e.starts_with("Not Found"), "{path}: {e}");
        let e = s.send(Req::post(path).json(&json!({}))).expect_error(404);
        assert!(e.starts_with("Not Found"), "{path}: {e}");
    }
    // 405, with Allow naming the method the route takes.
    for (method, path, allow) in [
        ("GET", "/v1/translate", "POST"),
        ("PUT", "/translate", "POST"),
        ("DELETE", "/v2/translate", "POST"),
        ("GET", "/imme", "POST"),
        ("POST", "/health", "GET"),
        ("POST", "/v1/languages", "GET"),
        ("PATCH", "/metrics", "GET"),
        ("POST", "/", "GET"),
    ] {
        let r = s.send(Req::new(method, path).body(""));
        let e = r.expect_error(405);
        assert_eq!(r.header("allow"), Some(allow), "{method} {path}: {:?}", r.headers);
        assert!(e.contains(allow), "{method} {path}: {e}");
    }
    // A trailing slash is the same route.
    assert_eq!(s.get("/health/").status, 200);

    // 415: a body type the server does not read.
    for ct in ["text/xml", "multipart/form-data; boundary=x", "application/octet-stream", "image/png"] {
        let r = s.send(Req::post("/translate").header("Content-Type", ct).body("q=Hola&source=es&target=en"));
        let e = r.expect_error(415);
        assert!(e.contains("Content-Type") && e.contains(ct.split(';').next().unwrap()), "{ct}: {e}");
    }
    // Neither JSON nor a form without a type: read as a form (curl -d's default type).
    let r = s.send(Req::post("/translate").body("q=Hola&source=es&target=en"));
    assert_eq!(r.status, 200, "{}", r.text());

    // The server still answers after all of the above.
    assert_eq!(s.get("/health").expect_json(200)["status"], "ok");
    let errors = s.get("/health").json()["counters"]["errors"].as_u64().unwrap();
    assert!(errors > 40, "4xx answers are counted as errors: {errors}");
}

#[test]
fn limits_on_texts_bytes_and_bodies() {
    let s = Server::esen().args(&["--max-texts", "3", "--max-chars", "100", "--max-body", "4096"]).start();

    // MAX_TEXTS: three pass, four are 413, in every dialect.
    assert_eq!(s.translate("es", "en", &["Hola", "Adiós", "Sí"]).len(), 3);
    let e = s
        .post_json("/v1/translate", &json!({"from": "es", "to": "en", "texts": ["a", "b", "c", "d"]}))
        .expect_error(413);
    assert_eq!(e, "Invalid request: request (4) exceeds text limit (3)");
    let e = s
        .post_json("/translate", &json!({"q": ["a", "b", "c", "d"], "source": "es", "target": "en"}))
        .expect_error(413);
    assert!(e.contains("exceeds text limit (3)"), "{e}");
    let r = s.send(Req::post("/v2/translate").form(&[
        ("text", "a"),
        ("text", "b"),
        ("text", "c"),
        ("text", "d"),
        ("target_lang", "EN"),
    ]));
    assert!(r.expect_json(413)["message"].as_str().unwrap().contains("exceeds text limit"));
    let e = s.post_json("/imme", &json!({"text_list": ["a", "b", "c", "d"], "target_lang": "en"})).expect_error(413);
    assert!(e.contains("exceeds text limit (3)"), "{e}");

    // MAX_CHARS: bytes of text, summed over the texts.
    let fifty = "a".repeat(50);
    assert_eq!(s.translate("es", "en", &[&fifty, &fifty]).len(), 2);
    let e = s
        .post_json("/v1/translate", &json!({"from": "es", "to": "en", "texts": [fifty, fifty, "b"]}))
        .expect_error(413);
    assert_eq!(e, "Invalid request: request (101) exceeds character limit (100)");
    let e = s.post_json("/translate", &json!({"q": "ñ".repeat(51), "source": "es", "target": "en"})).expect_error(413);
    assert!(e.contains("(102) exceeds character limit (100)"), "bytes, not characters: {e}");
    let e = s.post_json("/detect", &json!({"q": "a".repeat(101)})).expect_error(413);
    assert!(e.contains("exceeds character limit"), "{e}");
    let e = s.post_json("/kiss", &json!({"text": "a".repeat(101), "from": "es", "to": "en"})).expect_error(413);
    assert!(e.contains("exceeds character limit"), "{e}");

    // A body over MAX_BODY by its Content-Length: 413 before any of it is sent.
    let mut c = Conn::open(s.addr);
    c.write(b"POST /v1/translate HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nContent-Length: 10000000000\r\n\r\n");
    let started = Instant::now();
    let r = c.read_response(false).expect("a response without the body sent");
    assert!(started.elapsed() < Duration::from_secs(2), "413 came only after {:?}", started.elapsed());
    assert!(r.expect_error(413).contains("over 4096 bytes"), "{}", r.text());
    assert_eq!(r.header("connection"), Some("close"), "the unread body makes the connection unusable");
    assert!(c.closed_by_server(), "closed after the 413");
    // Just over, with a body: also 413.
    let r = s.send(Req::post("/translate").header("Content-Type", "application/json").body(vec![b' '; 4097]));
    r.expect_error(413);
    // A chunked body (no Content-Length) is cut at MAX_BODY as it arrives.
    let mut c = Conn::open(s.addr);
    c.write(b"POST /v1/translate HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nTransfer-Encoding: chunked\r\n\r\n");
    for _ in 0..3 {
        c.write(format!("{:x}\r\n{}\r\n", 2000, " ".repeat(2000)).as_bytes());
    }
    let r = c.read_response(false).expect("a response to the chunked body");
    r.expect_error(413);
    // `Expect: 100-continue` (curl's, for big bodies): over the limit, the 413 comes instead of
    // the 100; within it, 100 Continue, then the answer.
    let mut c = Conn::open(s.addr);
    c.write(b"POST /v1/translate HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nExpect: 100-continue\r\nContent-Length: 5000\r\n\r\n");
    assert_eq!(c.read_response(false).expect("a 413 without the body").status, 413);
    let body = serde_json::to_vec(&json!({"from": "es", "to": "en", "texts": ["Hola"]})).unwrap();
    let mut c = Conn::open(s.addr);
    c.write(format!("POST /v1/translate HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nExpect: 100-continue\r\nContent-Length: {}\r\n\r\n", body.len()).as_bytes());
    assert_eq!(c.read_response(false).expect("100 Continue").status, 100);
    c.write(&body);
    assert_eq!(c.read_response(false).expect("the answer").status, 200);
    // A body just under the limit is read and parsed.
    let mut body = serde_json::to_vec(&json!({"from": "es", "to": "en", "texts": ["Hola"]})).unwrap();
    body.resize(4096, b' ');
    assert_eq!(s.send(Req::post("/v1/translate").header("Content-Type", "application/json").body(body)).status, 200);
    // Headers over the server's head limit (64 KiB): refused, and the server goes on.
    let mut c = Conn::open(s.addr);
    c.write(format!("GET /health HTTP/1.1\r\nHost: x\r\nX-Big: {}\r\n\r\n", "a".repeat(100_000)).as_bytes());
    match c.read_response(false) {
        Ok(r) => assert_eq!(r.status, 431, "{}", r.text()),
        Err(why) => assert!(why.contains("closed"), "{why}"),
    }
    assert_eq!(s.get("/health").status, 200);
}

#[test]
fn max_pieces_counts_the_model_s_pieces_in_every_dialect() {
    const SENTENCE: &str = "Ella se negó a hacerlo.";
    let s = Server::esen().env("MAX_PIECES", "20").start();
    let want = s.translate("es", "en", &[SENTENCE]);
    let over = |e: &str| assert!(e.contains("exceeds piece limit (20)") && e.contains("MAX_PIECES"), "{e}");
    // Summed over a request's texts: one sentence passes, three of them in one text or in three
    // texts do not (a few hundred bytes, far under MAX_CHARS).
    let three = [SENTENCE; 3].join(" ");
    let e = s.post_json("/v1/translate", &json!({"from": "es", "to": "en", "texts": [three]})).expect_error(413);
    assert!(e.starts_with("Invalid request: request ("), "{e}");
    over(&e);
    over(
        &s.post_json("/translate", &json!({"q": [SENTENCE, SENTENCE, SENTENCE], "source": "es", "target": "en"}))
            .expect_error(413),
    );
    let r = s.send(Req::post("/v2/translate").form(&[("text", &three), ("target_lang", "EN"), ("source_lang", "ES")]));
    over(r.expect_json(413)["message"].as_str().unwrap());
    over(
        &s.post_json("/imme", &json!({"text_list": [three], "source_lang": "es", "target_lang": "en"}))
            .expect_error(413),
    );
    over(&s.post_json("/kiss", &json!({"text": three, "from": "es", "to": "en"})).expect_error(413));
    // Counted on pieces, not bytes: 30 CJK characters (90 bytes) are at least 30 pieces.
    over(
        &s.post_json("/v1/translate", &json!({"from": "es", "to": "en", "texts": ["中".repeat(30)]})).expect_error(413),
    );
    // The server goes on, and a request within the limit is translated.
    assert_eq!(s.translate("es", "en", &[SENTENCE]), want);
    assert!(s.log().lines().all(|l| !l.starts_with("error ")), "no error line for a client's request:\n{}", s.log());
}

#[test]
fn a_full_queue_is_503_with_retry_after() {
    // One request computes at a time and none waits: a second translation is turned away.
    let s = Server::esen()
        .args(&["--http-threads", "1", "--max-queue", "0", "--max-texts", "300", "--max-chars", "100000"])
        .start();
    let long = heldout(300);
    let addr = s.addr;
    let slow = {
        let body = json!({"from": "es", "to": "en", "texts": long});
        std::thread::spawn(move || Req::post("/v1/translate").json(&body).send(addr))
    };
    let started = Instant::now();
    while s.metric("reseam_inflight_requests") < 1.0 {
        assert!(started.elapsed() < Duration::from_secs(20), "the long request never started");
        std::thread::sleep(Duration::from_millis(5));
    }
    let r = s.post_json("/v1/translate", &json!({"from": "es", "to": "en", "texts": ["Hola"]}));
    let e = r.expect_error(503);
    assert!(e.contains("busy"), "{e}");
    let retry: u64 = r.header("retry-after").expect("Retry-After").parse().expect("Retry-After in seconds");
    assert!((1..=60).contains(&retry), "{retry}");
    // Every computing route is turned away alike, in its own shape (DeepL's 429, which its
    // client libraries retry); the rest answers at once.
    let r = s.send(Req::post("/v2/translate").form(&[("text", "Hola"), ("target_lang", "EN")]));
    assert!(r.expect_json(429)["message"].as_str().unwrap().contains("busy"));
    assert!(r.header("retry-after").is_some());
    let t = Instant::now();
    let h = s.get("/health").expect_json(200);
    assert!(t.elapsed() < Duration::from_secs(1), "/health took {:?} while busy", t.elapsed());
    assert_eq!(h["counters"]["queue"], 0);
    let out = slow.join().unwrap();
    let v = out.expect_json(200);
    assert_eq!(v["translations"].as_array().unwrap().len(), 300);
    // Free again.
    assert_eq!(s.translate("es", "en", &strs(&long[..1])).len(), 1);
}

#[test]
fn at_max_connections_the_longest_idle_connection_makes_room() {
    let s = Server::esen().args(&["--max-connections", "3"]).start();
    // Three keep-alive connections, each shown to be served (so accepted and held). The
    // connection of the start's /ready may take a moment to be let go: retried until then.
    let started = Instant::now();
    let mut held: Vec<Conn> = Vec::new();
    while held.len() < 3 {
        let mut c = Conn::open(s.addr);
        c.write(&Req::get("/health").bytes(true));
        match c.read_response(false) {
            Ok(r) => {
                assert_eq!(r.status, 200);
                held.push(c);
            }
            Err(_) => {
                assert!(started.elapsed() < Duration::from_secs(5), "only {} connections served", held.len());
                std::thread::sleep(Duration::from_millis(20));
            }
        }
        std::thread::sleep(Duration::from_millis(20));
    }
    // A fourth is served: the one idle the longest (the first) is closed to make room, not the
    // new one as before (idle connections held by anyone locked everyone out).
    let mut extra = Conn::open(s.addr);
    extra.write(&Req::get("/health").bytes(true));
    assert_eq!(extra.read_response(false).expect("the fourth connection served").status, 200);
    assert!(held[0].closed_by_server(), "the longest idle connection was closed");
    s.wait_log(
        "info at the 3 connection cap (MAX_CONNECTIONS) since the start: 1 idle connections closed for new ones",
    );
    // The others go on.
    assert_eq!(held[2].send(&Req::get("/health")).status, 200);
    assert_eq!(extra.send(&Req::get("/health")).status, 200);
}
