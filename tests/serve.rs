//! `reseam serve`: the real binary on a loopback port (port 0), over temp copies of the fixture
//! models, spoken to over plain TCP. Every route and dialect of issue 28, its status codes,
//! limits and token forms; the logs without texts; malformed, slow and stalled clients; SIGTERM,
//! SIGINT and SIGHUP under load; connection floods, heavy requests beside light ones, memory
//! across reloads and cold bursts, packs changed under the server.

mod auth;
mod client;
mod deepl;
mod fair;
mod files;
mod flood;
mod limits;
mod logs;
mod malformed;
mod memory;
mod reload;
mod routes;
mod server;
mod signals;
mod slow;

use crate::engine::esen;

/// Lines of the fixture's social posts (links, mentions, hashtags, emoji, odd spacing), at
/// most `n`: texts whose translation through the server must equal `reseam translate`'s.
pub fn post_lines(n: usize) -> Vec<String> {
    let text = std::fs::read_to_string(esen().join("refs/social.es.jsonl")).expect("refs/social.es.jsonl");
    let mut out = Vec::new();
    for l in text.lines() {
        let v: serde_json::Value = serde_json::from_str(l).expect("a JSON line");
        let post = v["text"].as_str().expect("a text").to_string();
        // One line each, as `reseam translate` reads them (a `\r` would stay in its line there).
        out.extend(post.split('\n').filter(|s| !s.trim().is_empty() && !s.contains('\r')).map(String::from));
    }
    out.truncate(n);
    assert_eq!(out.len(), n, "the fixture has {n} post lines");
    out
}

/// The held-out Spanish sentences (plain text).
pub fn heldout(n: usize) -> Vec<String> {
    let text = std::fs::read_to_string(esen().join("refs/heldout.es")).expect("refs/heldout.es");
    let out: Vec<String> = text.lines().take(n).map(String::from).collect();
    assert_eq!(out.len(), n);
    out
}

pub fn strs(v: &[String]) -> Vec<&str> {
    v.iter().map(String::as_str).collect()
}
