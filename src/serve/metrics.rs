//! Counters for `/health` and `/metrics` (the Prometheus text format, version 0.0.4). Labels are
//! bounded: routes are the server's own, pairs are the installed models'.

use std::collections::BTreeMap;
use std::fmt::Write;
use std::sync::Mutex;
use std::sync::atomic::{AtomicU64, AtomicUsize, Ordering};
use std::time::Duration;

/// Upper bounds of the duration histograms, in seconds: from a cached short post to a long
/// batch on a busy server.
const BUCKETS: &[f64] = &[0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1.0, 2.5, 5.0, 10.0, 30.0];

#[derive(Clone, Debug, Default)]
struct Histogram {
    counts: Vec<u64>,
    sum: f64,
    count: u64,
}

impl Histogram {
    fn observe(&mut self, seconds: f64) {
        if self.counts.is_empty() {
            self.counts = vec![0; BUCKETS.len()];
        }
        for (c, b) in self.counts.iter_mut().zip(BUCKETS) {
            if seconds <= *b {
                *c += 1;
            }
        }
        self.sum += seconds;
        self.count += 1;
    }

    fn render(&self, out: &mut String, name: &str, labels: &str) {
        let sep = if labels.is_empty() { "" } else { "," };
        for (i, b) in BUCKETS.iter().enumerate() {
            let _ =
                writeln!(out, "{name}_bucket{{{labels}{sep}le=\"{b}\"}} {}", self.counts.get(i).copied().unwrap_or(0));
        }
        let _ = writeln!(out, "{name}_bucket{{{labels}{sep}le=\"+Inf\"}} {}", self.count);
        let braces = if labels.is_empty() { String::new() } else { format!("{{{labels}}}") };
        let _ = writeln!(out, "{name}_sum{braces} {}", self.sum);
        let _ = writeln!(out, "{name}_count{braces} {}", self.count);
    }
}

#[derive(Default)]
struct Tables {
    requests: BTreeMap<(&'static str, u16), u64>,
    request_seconds: BTreeMap<&'static str, Histogram>,
    texts: BTreeMap<(String, String), u64>,
    chars: BTreeMap<(String, String), u64>,
    translate_seconds: BTreeMap<(String, String), Histogram>,
}

/// Everything counted since start.
#[derive(Default)]
pub struct Metrics {
    tables: Mutex<Tables>,
    pub requests: AtomicU64,
    pub texts: AtomicU64,
    pub chars: AtomicU64,
    /// Requests answered with a 4xx or 5xx.
    pub errors: AtomicU64,
    /// Characters (code points) of the texts DeepL's `/v2/translate` translated: its
    /// `/v2/usage`.
    pub billed_characters: AtomicU64,
    /// Requests waiting for a compute slot.
    pub queued: AtomicUsize,
    /// Requests being handled.
    pub in_flight: AtomicUsize,
}

/// What the process holds, read when `/metrics` is asked.
pub struct Gauges {
    pub models_loaded: usize,
    pub pairs_installed: usize,
    pub rss_bytes: f64,
    pub mapped_bytes: f64,
    pub isa: String,
    pub threads: usize,
}

fn escape(v: &str) -> String {
    v.replace('\\', "\\\\").replace('"', "\\\"").replace('\n', "\\n")
}

impl Metrics {
    fn tables(&self) -> std::sync::MutexGuard<'_, Tables> {
        self.tables.lock().unwrap_or_else(|p| p.into_inner())
    }

    /// One answered request.
    pub fn request(&self, route: &'static str, status: u16, took: Duration) {
        self.requests.fetch_add(1, Ordering::Relaxed);
        if status >= 400 {
            self.errors.fetch_add(1, Ordering::Relaxed);
        }
        let mut t = self.tables();
        *t.requests.entry((route, status)).or_default() += 1;
        t.request_seconds.entry(route).or_default().observe(took.as_secs_f64());
    }

    /// Texts translated from `from` to `to` (a pivot counted once, under its two ends).
    pub fn translated(&self, from: &str, to: &str, texts: usize, chars: usize, took: Duration) {
        self.texts.fetch_add(texts as u64, Ordering::Relaxed);
        self.chars.fetch_add(chars as u64, Ordering::Relaxed);
        let key = (from.to_string(), to.to_string());
        let mut t = self.tables();
        *t.texts.entry(key.clone()).or_default() += texts as u64;
        *t.chars.entry(key.clone()).or_default() += chars as u64;
        t.translate_seconds.entry(key).or_default().observe(took.as_secs_f64());
    }

    /// The Prometheus exposition.
    pub fn render(&self, g: &Gauges) -> String {
        let t = self.tables();
        let mut out = String::new();
        let head = |out: &mut String, name: &str, kind: &str, help: &str| {
            let _ = writeln!(out, "# HELP {name} {help}\n# TYPE {name} {kind}");
        };
        head(&mut out, "reseam_http_requests_total", "counter", "HTTP requests answered, by route and status code.");
        for ((route, code), n) in &t.requests {
            let _ = writeln!(out, "reseam_http_requests_total{{route=\"{route}\",code=\"{code}\"}} {n}");
        }
        head(&mut out, "reseam_http_request_duration_seconds", "histogram", "Time from request to response, by route.");
        for (route, h) in &t.request_seconds {
            h.render(&mut out, "reseam_http_request_duration_seconds", &format!("route=\"{route}\""));
        }
        head(&mut out, "reseam_translate_texts_total", "counter", "Texts translated, by language pair.");
        for ((a, b), n) in &t.texts {
            let _ = writeln!(out, "reseam_translate_texts_total{{src=\"{}\",tgt=\"{}\"}} {n}", escape(a), escape(b));
        }
        head(&mut out, "reseam_translate_chars_total", "counter", "Bytes of text translated, by language pair.");
        for ((a, b), n) in &t.chars {
            let _ = writeln!(out, "reseam_translate_chars_total{{src=\"{}\",tgt=\"{}\"}} {n}", escape(a), escape(b));
        }
        head(
            &mut out,
            "reseam_translate_duration_seconds",
            "histogram",
            "Time to translate one request's texts of one pair (through English counted once).",
        );
        for ((a, b), h) in &t.translate_seconds {
            h.render(
                &mut out,
                "reseam_translate_duration_seconds",
                &format!("src=\"{}\",tgt=\"{}\"", escape(a), escape(b)),
            );
        }
        let gauge = |out: &mut String, name: &str, help: &str, v: f64| {
            head(out, name, "gauge", help);
            let _ = writeln!(out, "{name} {v}");
        };
        gauge(
            &mut out,
            "reseam_queue_depth",
            "Requests waiting for a compute slot.",
            self.queued.load(Ordering::Relaxed) as f64,
        );
        gauge(
            &mut out,
            "reseam_inflight_requests",
            "Requests being handled.",
            self.in_flight.load(Ordering::Relaxed) as f64,
        );
        gauge(
            &mut out,
            "reseam_models_loaded",
            "Translation models loaded (mapped or in memory).",
            g.models_loaded as f64,
        );
        gauge(
            &mut out,
            "reseam_models_installed",
            "Language pairs installed in the models folder.",
            g.pairs_installed as f64,
        );
        gauge(&mut out, "reseam_resident_memory_bytes", "Resident memory of the process.", g.rss_bytes);
        gauge(
            &mut out,
            "reseam_mapped_memory_bytes",
            "Resident file-backed memory (mapped model weights).",
            g.mapped_bytes,
        );
        head(&mut out, "reseam_build_info", "gauge", "The running build: version, kernels, compute threads.");
        let _ = writeln!(
            out,
            "reseam_build_info{{version=\"{}\",isa=\"{}\",threads=\"{}\"}} 1",
            env!("CARGO_PKG_VERSION"),
            escape(&g.isa),
            g.threads
        );
        out
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn exposition_is_well_formed() {
        let m = Metrics::default();
        m.request("v1_translate", 200, Duration::from_millis(3));
        m.request("v1_translate", 400, Duration::from_millis(30));
        m.translated("es", "en", 2, 10, Duration::from_millis(2));
        let g = Gauges {
            models_loaded: 1,
            pairs_installed: 2,
            rss_bytes: 1e6,
            mapped_bytes: 5e5,
            isa: "avx2".into(),
            threads: 2,
        };
        let text = m.render(&g);
        assert!(text.ends_with('\n'));
        assert!(text.contains("reseam_http_requests_total{route=\"v1_translate\",code=\"400\"} 1"), "{text}");
        assert!(text.contains("reseam_http_request_duration_seconds_bucket{route=\"v1_translate\",le=\"0.005\"} 1"));
        assert!(text.contains("reseam_http_request_duration_seconds_bucket{route=\"v1_translate\",le=\"+Inf\"} 2"));
        assert!(text.contains("reseam_translate_texts_total{src=\"es\",tgt=\"en\"} 2"));
        assert!(text.contains("reseam_build_info{version="));
        // Every sample line belongs to a family announced before it.
        let mut families = std::collections::HashSet::new();
        for line in text.lines() {
            if let Some(rest) = line.strip_prefix("# TYPE ") {
                families.insert(rest.split(' ').next().unwrap().to_string());
            } else if !line.starts_with('#') {
                let name = line.split(['{', ' ']).next().unwrap();
                let base = ["_bucket", "_sum", "_count"].iter().fold(name, |n, s| n.strip_suffix(s).unwrap_or(n));
                assert!(families.contains(name) || families.contains(base), "{line}");
            }
        }
        assert_eq!(m.errors.load(Ordering::Relaxed), 1);
    }
}
