//! `reseam bench serve`: load on a running server over HTTP, as its clients make it. Many
//! concurrent clients, each on its own keep-alive connection, send posts of a corpus to
//! `POST /v1/translate` and wait for each answer; requests/s, posts/s, latency percentiles,
//! failures, and the server's memory from its `/metrics`.
//!
//! Every post's translation is kept, and a post sent twice must come back the same both times:
//! a server whose output depends on what else is in flight is caught here (`mismatches`).

use std::collections::HashMap;
use std::sync::Mutex;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::{Duration, Instant};

use serde::Serialize;

use super::translate::Post;

/// How the load is made.
#[derive(Clone, Debug)]
pub struct Options {
    /// The server's root, e.g. `http://127.0.0.1:8080`.
    pub url: String,
    pub requests: usize,
    pub clients: usize,
    /// Posts per request (consecutive corpus lines of one direction).
    pub texts_per_request: usize,
    pub token: Option<String>,
    pub timeout: Duration,
}

#[derive(Debug, thiserror::Error)]
pub enum Error {
    #[error("{url}: the server does not answer: {detail}")]
    Unreachable { url: String, detail: String },
    #[error("--requests, --clients and --texts must be at least 1")]
    Zero,
}

crate::error::fault!(Error);

impl Error {
    pub fn is_usage(&self) -> bool {
        // A wrong URL is the caller's to fix.
        true
    }
}

/// What one run measured.
#[derive(Clone, Debug, Serialize)]
pub struct Report {
    pub requests: usize,
    pub posts: usize,
    pub clients: usize,
    pub seconds: f64,
    pub requests_per_s: f64,
    pub posts_per_s: f64,
    pub p50_ms: f64,
    pub p90_ms: f64,
    pub p99_ms: f64,
    pub max_ms: f64,
    pub failures: usize,
    /// The first failures, as `status: body` (at most ten).
    pub failure_samples: Vec<String>,
    /// Posts whose translation differed between two requests.
    pub mismatches: usize,
    pub directions: usize,
    /// The server's memory after the load, from its `/metrics` (None if it has none).
    pub server_rss_mb: Option<f64>,
    pub server_mapped_mb: Option<f64>,
    /// What the server says of itself (`/health`).
    pub server: serde_json::Value,
    /// Translation of each corpus line that was sent (None: never sent, or failed).
    #[serde(skip)]
    pub translations: Vec<Option<String>>,
}

fn agent(timeout: Duration) -> ureq::Agent {
    ureq::Agent::config_builder()
        .http_status_as_error(false)
        .timeout_global(Some(timeout))
        .max_idle_connections_per_host(1024)
        .build()
        .into()
}

fn get(agent: &ureq::Agent, url: &str, token: Option<&str>) -> Result<(u16, String), String> {
    let mut req = agent.get(url);
    if let Some(t) = token {
        req = req.header("Authorization", format!("Bearer {t}"));
    }
    let mut resp = req.call().map_err(|e| e.to_string())?;
    let status = resp.status().as_u16();
    let body = resp.body_mut().read_to_string().map_err(|e| e.to_string())?;
    Ok((status, body))
}

/// A gauge's value in a Prometheus exposition.
fn gauge(text: &str, name: &str) -> Option<f64> {
    text.lines().find(|l| l.starts_with(name) && l[name.len()..].starts_with(' '))?.split(' ').nth(1)?.parse().ok()
}

pub fn run(posts: &[Post], opts: &Options, progress: &(dyn Fn(usize, usize) + Sync)) -> Result<Report, Error> {
    if opts.requests == 0 || opts.clients == 0 || opts.texts_per_request == 0 {
        return Err(Error::Zero);
    }
    let root = opts.url.trim_end_matches('/').to_string();
    let probe = agent(opts.timeout);
    let (_, health) = get(&probe, &format!("{root}/health"), None)
        .map_err(|detail| Error::Unreachable { url: root.clone(), detail })?;
    let server: serde_json::Value = serde_json::from_str(&health).unwrap_or(serde_json::Value::Null);

    // Requests: runs of up to `texts_per_request` consecutive posts of one direction.
    let mut batches: Vec<Vec<usize>> = Vec::new();
    let mut i = 0;
    while i < posts.len() {
        let mut b = vec![i];
        while b.len() < opts.texts_per_request
            && i + b.len() < posts.len()
            && posts[i + b.len()].from == posts[i].from
            && posts[i + b.len()].to == posts[i].to
        {
            b.push(i + b.len());
        }
        i += b.len();
        batches.push(b);
    }
    let directions = {
        let mut d: Vec<(&str, &str)> = posts.iter().map(|p| (p.from.as_str(), p.to.as_str())).collect();
        d.sort();
        d.dedup();
        d.len()
    };
    let next = AtomicUsize::new(0);
    let done = AtomicUsize::new(0);
    let results: Mutex<HashMap<usize, String>> = Mutex::new(HashMap::new());
    let mismatches = AtomicUsize::new(0);
    let failures = AtomicUsize::new(0);
    let samples: Mutex<Vec<String>> = Mutex::new(Vec::new());
    let latencies: Mutex<Vec<f64>> = Mutex::new(Vec::with_capacity(opts.requests));
    let posts_sent = AtomicUsize::new(0);
    let url = format!("{root}/v1/translate");
    let started = Instant::now();
    std::thread::scope(|s| {
        for _ in 0..opts.clients.min(opts.requests) {
            s.spawn(|| {
                let agent = agent(opts.timeout);
                let mut mine = Vec::new();
                loop {
                    let k = next.fetch_add(1, Ordering::Relaxed);
                    if k >= opts.requests {
                        break;
                    }
                    let batch = &batches[k % batches.len()];
                    let first = &posts[batch[0]];
                    let texts: Vec<&str> = batch.iter().map(|&j| posts[j].text.as_str()).collect();
                    let body = serde_json::json!({ "from": first.from, "to": first.to, "texts": texts }).to_string();
                    let t0 = Instant::now();
                    let mut req = agent.post(&url).header("Content-Type", "application/json");
                    if let Some(t) = &opts.token {
                        req = req.header("Authorization", format!("Bearer {t}"));
                    }
                    let outcome = req.send(body.as_str()).map_err(|e| e.to_string()).and_then(|mut r| {
                        let status = r.status().as_u16();
                        let text = r.body_mut().read_to_string().map_err(|e| e.to_string())?;
                        if status != 200 {
                            return Err(format!("{status}: {text}"));
                        }
                        let v: serde_json::Value = serde_json::from_str(&text).map_err(|e| format!("200 but {e}"))?;
                        let list = v["translations"].as_array().ok_or("200 without translations")?;
                        let got: Vec<String> = list.iter().filter_map(|t| t.as_str().map(str::to_string)).collect();
                        if got.len() != batch.len() {
                            return Err(format!("{} translations for {} texts", got.len(), batch.len()));
                        }
                        Ok(got)
                    });
                    mine.push(t0.elapsed().as_secs_f64() * 1e3);
                    match outcome {
                        Ok(got) => {
                            posts_sent.fetch_add(batch.len(), Ordering::Relaxed);
                            let mut r = results.lock().unwrap_or_else(|p| p.into_inner());
                            for (&j, t) in batch.iter().zip(got) {
                                match r.get(&j) {
                                    Some(prev) if *prev != t => {
                                        mismatches.fetch_add(1, Ordering::Relaxed);
                                    }
                                    Some(_) => {}
                                    None => {
                                        r.insert(j, t);
                                    }
                                }
                            }
                        }
                        Err(e) => {
                            failures.fetch_add(1, Ordering::Relaxed);
                            let mut s = samples.lock().unwrap_or_else(|p| p.into_inner());
                            if s.len() < 10 {
                                s.push(e.chars().take(300).collect());
                            }
                        }
                    }
                    let n = done.fetch_add(1, Ordering::Relaxed) + 1;
                    progress(n, opts.requests);
                }
                latencies.lock().unwrap_or_else(|p| p.into_inner()).extend(mine);
            });
        }
    });
    let seconds = started.elapsed().as_secs_f64();
    let mut lat = latencies.into_inner().unwrap_or_else(|p| p.into_inner());
    lat.sort_by(f64::total_cmp);
    let pct = |q: f64| if lat.is_empty() { 0.0 } else { lat[((lat.len() - 1) as f64 * q).round() as usize] };
    let metrics = get(&probe, &format!("{root}/metrics"), opts.token.as_deref()).ok().filter(|(s, _)| *s == 200);
    let mb = |name: &str| metrics.as_ref().and_then(|(_, m)| gauge(m, name)).map(|b| b / (1024.0 * 1024.0));
    let results = results.into_inner().unwrap_or_else(|p| p.into_inner());
    let sent = posts_sent.into_inner();
    Ok(Report {
        requests: opts.requests,
        posts: sent,
        clients: opts.clients,
        seconds,
        requests_per_s: opts.requests as f64 / seconds,
        posts_per_s: sent as f64 / seconds,
        p50_ms: pct(0.50),
        p90_ms: pct(0.90),
        p99_ms: pct(0.99),
        max_ms: lat.last().copied().unwrap_or(0.0),
        failures: failures.into_inner(),
        failure_samples: samples.into_inner().unwrap_or_else(|p| p.into_inner()),
        mismatches: mismatches.into_inner(),
        directions,
        server_rss_mb: mb("reseam_resident_memory_bytes"),
        server_mapped_mb: mb("reseam_mapped_memory_bytes"),
        server,
        translations: (0..posts.len()).map(|j| results.get(&j).cloned()).collect(),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn gauges_are_read_from_an_exposition() {
        let m = "# TYPE reseam_resident_memory_bytes gauge\nreseam_resident_memory_bytes 1048576\nreseam_resident_memory_bytes_x 3\n";
        assert_eq!(gauge(m, "reseam_resident_memory_bytes"), Some(1048576.0));
        assert_eq!(gauge(m, "reseam_mapped_memory_bytes"), None);
    }

    #[test]
    fn a_server_that_is_not_there_is_named() {
        let posts = vec![Post { from: "es".into(), to: "en".into(), text: "Hola".into() }];
        let opts = Options {
            url: "http://127.0.0.1:9".into(),
            requests: 1,
            clients: 1,
            texts_per_request: 1,
            token: None,
            timeout: Duration::from_secs(2),
        };
        let e = run(&posts, &opts, &|_, _| {}).unwrap_err();
        assert!(e.to_string().contains("127.0.0.1:9"), "{e}");
    }
}
