//! Malformed bodies get a 4xx and the server keeps serving: truncated JSON, wrong types, huge
//! numbers, invalid UTF-8, deep nesting, a 10 MB string, random bytes, and one small request cut
//! at every byte.

use serde_json::json;

use super::client::{Conn, Req, Resp};
use super::server::Server;

/// The routes that read a body.
const POSTS: &[&str] =
    &["/v1/translate", "/translate", "/translate/batch", "/detect", "/v2/translate", "/deeplx", "/imme", "/kiss"];

fn still_serving(s: &Server, after: &str) {
    let h = s.get("/health");
    assert_eq!(h.status, 200, "/health after {after}");
    let want = s.translate("es", "en", &["Ella se negó a hacerlo."]);
    assert_eq!(want.len(), 1, "a translation after {after}");
}

fn client_error(r: &Resp, what: &str) {
    assert!((400..500).contains(&r.status), "{what}: status {} ({})", r.status, String::from_utf8_lossy(&r.body));
}

/// A small generator of bytes (xorshift), so that the "random" bodies are the same every run.
fn noise(seed: u64, n: usize) -> Vec<u8> {
    let mut x = seed.max(1);
    (0..n)
        .map(|_| {
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
            (x >> 24) as u8
        })
        .collect()
}

#[test]
fn malformed_bodies_get_4xx_and_the_server_keeps_serving() {
    // MAX_BODY above 10 MB so that the big string is read and parsed, not refused by its length.
    let s = Server::esen().args(&["--max-body", "16000000"]).start();
    let deep_arrays = "[".repeat(100_000);
    let deep_objects = "{\"a\":".repeat(100_000);
    let deep_in_texts = format!("{{\"from\":\"es\",\"to\":\"en\",\"texts\":{}", "[".repeat(100_000));
    let big = format!("{{\"from\":\"es\",\"to\":\"en\",\"texts\":[\"{}\"]}}", "a".repeat(10_000_000));
    let big_q = format!("{{\"q\":\"{}\",\"source\":\"es\",\"target\":\"en\"}}", "ñ".repeat(5_000_000));
    let mut bodies: Vec<(String, Vec<u8>)> = vec![
        ("truncated".into(), br#"{"from":"es","to":"en","texts":["Hola"#.to_vec()),
        ("truncated escape".into(), br#"{"from":"es","to":"en","texts":["Hola\u00"]}"#.to_vec()),
        ("lone surrogate".into(), br#"{"from":"es","to":"en","texts":["\ud800"]}"#.to_vec()),
        ("wrong types".into(), br#"{"from":1,"to":[],"texts":{},"q":false,"text":3.5,"text_list":null}"#.to_vec()),
        ("huge number".into(), br#"{"from":"es","to":"en","texts":[1e99999]}"#.to_vec()),
        ("huge number as a code".into(), br#"{"from":1e99999,"to":"en","texts":["Hola"]}"#.to_vec()),
        (
            "long integer".into(),
            format!("{{\"from\":{},\"to\":\"en\",\"texts\":[\"a\"]}}", "9".repeat(5000)).into_bytes(),
        ),
        ("invalid UTF-8".into(), b"{\"from\":\"es\",\"to\":\"en\",\"texts\":[\"\xff\xfe\xc3\"]}".to_vec()),
        ("invalid UTF-8 in a key".into(), b"{\"\xc3(\":\"es\"}".to_vec()),
        ("nesting 100000 deep (arrays)".into(), deep_arrays.into_bytes()),
        ("nesting 100000 deep (objects)".into(), deep_objects.into_bytes()),
        ("nesting 100000 deep in texts".into(), deep_in_texts.into_bytes()),
        ("a 10 MB string".into(), big.into_bytes()),
        ("a 10 MB string in q".into(), big_q.into_bytes()),
        ("NUL bytes".into(), vec![0; 1000]),
        ("a BOM".into(), "\u{feff}{\"from\":\"es\"}".as_bytes().to_vec()),
        ("trailing garbage".into(), br#"{"from":"es","to":"en","texts":["Hola"]} x"#.to_vec()),
        ("two objects".into(), br#"{"from":"es"}{"to":"en"}"#.to_vec()),
        ("NaN".into(), br#"{"from":"es","to":"en","texts":[NaN]}"#.to_vec()),
        ("duplicated keys, wrong last".into(), br#"{"from":"es","to":"en","texts":["a"],"texts":7}"#.to_vec()),
    ];
    for seed in 1..=20u64 {
        bodies.push((format!("random bytes {seed}"), noise(seed, 64 + 97 * seed as usize)));
    }
    for (what, body) in &bodies {
        for path in POSTS {
            for ct in ["application/json", "application/x-www-form-urlencoded", ""] {
                // The 10 MB bodies once per route is enough.
                if body.len() > 100_000 && ct != "application/json" {
                    continue;
                }
                let mut req = Req::post(path).body(body.clone());
                if !ct.is_empty() {
                    req = req.header("Content-Type", ct);
                }
                client_error(&req.send(s.addr), &format!("{what} to {path} as {ct:?}"));
            }
        }
    }
    still_serving(&s, "the malformed bodies");

    // Form bodies: invalid UTF-8, wrong shapes, empty fields. (/detect is left out: identifying
    // an empty text is a question with an answer.)
    for body in [&b"q=\xff&source=es&target=en"[..], b"%%%%", b"=&=&=", b"text=&target_lang=", b"q&source&target"] {
        for path in POSTS.iter().filter(|p| **p != "/detect") {
            let r = Req::post(path)
                .header("Content-Type", "application/x-www-form-urlencoded")
                .body(body.to_vec())
                .send(s.addr);
            client_error(&r, &format!("{body:?} to {path}"));
        }
    }

    // One small request, cut at every byte: a cut head gets nothing or a 4xx, a cut body a 400
    // (the stream ended early), and the same body cut with a matching Content-Length a 400.
    let body = br#"{"from":"es","to":"en","texts":["Hola"]}"#;
    let raw = Req::post("/v1/translate").header("Content-Type", "application/json").body(body.to_vec()).bytes(false);
    let head_len = raw.len() - body.len();
    for cut in 0..raw.len() {
        let mut c = Conn::open(s.addr);
        c.write(&raw[..cut]);
        c.finish_writing();
        match c.read_response(false) {
            Ok(r) => client_error(&r, &format!("the request cut at byte {cut}")),
            Err(why) => assert!(cut < head_len, "no response to a body cut at byte {cut}: {why}"),
        }
    }
    for cut in 0..body.len() {
        let r = Req::post("/v1/translate")
            .header("Content-Type", "application/json")
            .body(body[..cut].to_vec())
            .send(s.addr);
        assert_eq!(r.status, 400, "the body cut at byte {cut}: {}", r.text());
    }
    // The whole request, for contrast.
    let mut c = Conn::open(s.addr);
    c.write(&raw);
    assert_eq!(c.read_response(false).unwrap().status, 200);

    // Garbage where a request line should be.
    for junk in [
        &b"\x16\x03\x01\x02\x00\x01\x00\x01\xfc\x03\x03"[..],
        b"GET\r\n\r\n",
        b"GET / HTTP/9.9\r\n\r\n",
        b"POST /v1/translate HTTP/1.1\r\nContent-Length: -5\r\n\r\n",
        b"POST /v1/translate HTTP/1.1\r\nContent-Length: 5\r\nContent-Length: 6\r\n\r\nhello",
    ] {
        let mut c = Conn::open(s.addr);
        c.write(junk);
        c.finish_writing();
        if let Ok(r) = c.read_response(false) {
            client_error(&r, &format!("{junk:?}"));
        }
    }
    // A keep-alive connection goes on after a malformed body of the right length.
    let mut c = Conn::open(s.addr);
    let bad = c.send(&Req::post("/v1/translate").header("Content-Type", "application/json").body("{\"from\":"));
    assert_eq!(bad.status, 400);
    let good = c.send(&Req::post("/v1/translate").json(&json!({"from": "es", "to": "en", "texts": ["Hola"]})));
    assert_eq!(good.status, 200, "{}", good.text());

    still_serving(&s, "the cut requests");
    let h = s.get("/health").json();
    assert_eq!(h["status"], "ok");
    let log = s.log();
    assert!(!log.contains(" 500 ") && !log.contains("panicked"), "a 500 or a panic:\n{log}");
}
