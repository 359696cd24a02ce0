//! Texts never reach the logs, at the most verbose level: a unique marker sent in every kind of
//! body (plain, HTML, form, rejected ones) and in headers and the query is nowhere in the
//! server's output, while its one line per request is.

use std::time::Duration;

use serde_json::json;

use super::client::{Conn, Req};
use super::server::Server;

/// A request, its status, its log line's route and (texts, bytes) when checked.
type Case = (Req, u16, &'static str, Option<(usize, usize)>);

/// Nothing the server prints by itself could hold this.
const MARKER: &str = "Zqxjvkmarkerpolw";

#[test]
fn texts_never_reach_the_logs() {
    let s = Server::esen().args(&["--log-level", "debug", "--max-chars", "2000"]).start();
    let text = format!("Hola {MARKER}, ¿cómo estás?");
    let html = format!("<p title=\"{MARKER}\">Hola <b>{MARKER}</b></p>");
    let cases: Vec<Case> = vec![
        (
            Req::post("/v1/translate").json(&json!({"from": "es", "to": "en", "texts": [text, "Adiós"]})),
            200,
            "v1_translate",
            Some((2, text.len() + 6)),
        ),
        (
            Req::post("/v1/translate").json(&json!({"from": "es", "to": "en", "text": text})),
            200,
            "v1_translate",
            Some((1, text.len())),
        ),
        (
            Req::post("/translate").json(&json!({"q": html, "source": "es", "target": "en", "format": "html"})),
            200,
            "translate",
            Some((1, html.len())),
        ),
        (
            Req::post("/translate").json(&json!({"q": [text], "source": "auto", "target": "en"})),
            200,
            "translate",
            Some((1, text.len())),
        ),
        (
            Req::post("/translate").form(&[("q", &text), ("source", "es"), ("target", "en")]),
            200,
            "translate",
            Some((1, text.len())),
        ),
        (
            Req::post("/v2/translate").form(&[
                ("text", &text),
                ("text", &html),
                ("target_lang", "EN"),
                ("tag_handling", "html"),
            ]),
            200,
            "v2_translate",
            Some((2, text.len() + html.len())),
        ),
        (
            Req::post("/deeplx").json(&json!({"text": text, "source_lang": "ES", "target_lang": "EN"})),
            200,
            "deeplx",
            Some((1, text.len())),
        ),
        (
            Req::post("/imme").json(
                &json!({"source_lang": "auto", "target_lang": "en", "text_list": [text, format!("<b0>{MARKER}</b0>")]}),
            ),
            200,
            "imme",
            None,
        ),
        (
            Req::post("/kiss").json(&json!({"texts": [text], "from": "es", "to": "en"})),
            200,
            "kiss",
            Some((1, text.len())),
        ),
        (
            Req::post("/translate/batch").json(&json!({"texts": [text], "from": "es", "to": "en"})),
            200,
            "translate_batch",
            Some((1, text.len())),
        ),
        (Req::post("/detect").form(&[("q", &text)]), 200, "detect", None),
        // Errors: the marker as a language code (echoed to the client, not to the log), in a
        // malformed body, a wrong type, over the limit, invalid UTF-8.
        (
            Req::post("/v1/translate").json(&json!({"from": "es", "to": MARKER, "texts": [text]})),
            400,
            "v1_translate",
            None,
        ),
        (
            Req::post("/v1/translate").json(&json!({"from": MARKER, "to": "en", "text": text})),
            400,
            "v1_translate",
            None,
        ),
        (
            Req::post("/v1/translate")
                .header("Content-Type", "application/json")
                .body(format!("{{\"texts\":[\"{MARKER}")),
            400,
            "v1_translate",
            None,
        ),
        (
            Req::post("/v1/translate")
                .header("Content-Type", "application/json")
                .body(format!("{{\"texts\":[\"{MARKER}\", {MARKER}]}}")),
            400,
            "v1_translate",
            None,
        ),
        (
            Req::post("/v1/translate").json(&json!({"from": "es", "to": "en", "texts": MARKER})),
            400,
            "v1_translate",
            None,
        ),
        (
            Req::post("/v1/translate").json(&json!({"from": "es", "to": "en", "texts": [MARKER.repeat(200)]})),
            413,
            "v1_translate",
            None,
        ),
        (
            Req::post("/translate")
                .header("Content-Type", "application/x-www-form-urlencoded")
                .body([format!("q={MARKER}&source=es&target=").as_bytes(), b"\xff\xfe"].concat()),
            400,
            "translate",
            None,
        ),
        (
            Req::post("/translate").header("Content-Type", "text/xml").body(format!("<q>{MARKER}</q>")),
            415,
            "translate",
            None,
        ),
        (
            Req::post("/v2/translate").json(&json!({"text": [text], "target_lang": "EN", "tag_handling": MARKER})),
            400,
            "v2_translate",
            None,
        ),
        // In the query and in headers (a token the server does not need, a custom header).
        (
            Req::post(&format!("/v1/translate?token={MARKER}&q={MARKER}"))
                .header("X-Note", MARKER)
                .header("Authorization", &format!("Bearer {MARKER}"))
                .json(&json!({"from": "es", "to": "en", "texts": ["Hola"]})),
            200,
            "v1_translate",
            Some((1, 4)),
        ),
        (Req::get(&format!("/health?{MARKER}")).header("User-Agent", MARKER), 200, "health", None),
    ];
    let n = cases.len();
    for (req, status, _, _) in &cases {
        let r = s.send(req.clone());
        assert_eq!(r.status, *status, "{req:?}: {}", r.text());
    }
    // A body that never finishes, with the marker in what did arrive.
    let mut c = Conn::open(s.addr);
    c.write(format!("POST /kiss HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nContent-Length: 500\r\n\r\n{{\"text\":\"{MARKER}").as_bytes());
    c.finish_writing();
    let r = c.read_response(false).expect("a response to a cut body");
    assert_eq!(r.status, 400, "{}", r.text());

    s.signal("TERM");
    let mut s = s;
    let (status, log) = s.wait_exit(Duration::from_secs(30));
    assert!(status.success(), "{status}:\n{log}");
    assert!(!log.to_lowercase().contains(&MARKER.to_lowercase()), "a request's text is in the server's output:\n{log}");

    // One info line per request: method, path, status, duration, route, text and byte counts.
    let lines: Vec<&str> = log.lines().filter(|l| l.starts_with("info ") && l.contains(" route=")).collect();
    assert!(lines.len() > n, "{} request lines for {} requests:\n{log}", lines.len(), n + 1);
    for (req, status, route, counts) in &cases {
        let found = lines.iter().any(|l| {
            l.contains(&format!(" {status} "))
                && l.contains(&format!("route={route} "))
                && l.contains("ms ")
                && counts.is_none_or(|(t, c)| l.ends_with(&format!("texts={t} chars={c}")))
        });
        assert!(found, "no log line for {req:?} ({status}, {route}, {counts:?}):\n{log}");
    }
    assert!(log.contains("info POST /kiss 400 "), "{log}");
    assert!(log.contains("info SIGTERM"), "{log}");
}
