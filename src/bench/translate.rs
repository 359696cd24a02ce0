//! `reseam bench translate`: the service's benchmark. Posts of a corpus over its directions go
//! through one shared engine from many concurrent clients (throughput, latency under load), then
//! one at a time on the idle engine (latency), with the process's memory.
//!
//! A corpus line is `from<TAB>to<TAB>text`. Every direction's models are loaded before timing
//! starts (pairs without a direct model go through English), each folder once, so pivots share
//! the models of the direct pairs.

use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::{Duration, Instant};

use serde::Serialize;

use crate::translate::{Service, TranslateError, TranslateOptions, Translator};

/// One post of the corpus.
#[derive(Clone, Debug)]
pub struct Post {
    pub from: String,
    pub to: String,
    pub text: String,
}

#[derive(Debug, thiserror::Error)]
pub enum Error {
    #[error("cannot read the corpus {path}")]
    Read { path: PathBuf, source: std::io::Error },
    #[error("{path}:{line}: expected from<TAB>to<TAB>text")]
    Line { path: PathBuf, line: usize },
    #[error("{path}: no posts")]
    Empty { path: PathBuf },
    #[error("{from}→{to}")]
    Direction { from: String, to: String, source: Box<TranslateError> },
    #[error(transparent)]
    Translate(#[from] TranslateError),
}

crate::error::fault!(Error);

impl Error {
    /// A corpus that cannot be read or parsed is the caller's fault (see [`crate::error`]); a
    /// direction's failure is the next link of the chain, which says for itself.
    pub fn is_usage(&self) -> bool {
        match self {
            Error::Read { source, .. } => crate::paths::unreadable_by_name(source),
            Error::Line { .. } | Error::Empty { .. } => true,
            Error::Translate(e) => e.is_usage(),
            Error::Direction { .. } => false,
        }
    }
}

/// Reads `from<TAB>to<TAB>text` lines (a text may hold `\n` escapes for line breaks).
pub fn read_corpus(path: &Path) -> Result<Vec<Post>, Error> {
    let text = std::fs::read_to_string(path).map_err(|source| Error::Read { path: path.into(), source })?;
    let mut posts = Vec::new();
    for (i, line) in text.lines().enumerate() {
        if line.is_empty() {
            continue;
        }
        let mut f = line.splitn(3, '\t');
        match (f.next(), f.next(), f.next()) {
            (Some(a), Some(b), Some(t)) if !a.is_empty() && !b.is_empty() => {
                posts.push(Post { from: a.into(), to: b.into(), text: t.replace("\\n", "\n") })
            }
            _ => return Err(Error::Line { path: path.into(), line: i + 1 }),
        }
    }
    if posts.is_empty() {
        return Err(Error::Empty { path: path.into() });
    }
    Ok(posts)
}

/// How the benchmark runs.
#[derive(Clone, Debug)]
pub struct Options {
    /// The models folder and the engine's settings, as `translate` takes them.
    pub engine: TranslateOptions,
    pub requests: usize,
    pub clients: usize,
    pub skip_latency: bool,
    /// Requests of the idle-latency phase.
    pub latency_requests: usize,
}

/// One request's figures.
#[derive(Clone, Debug, Serialize)]
pub struct Sample {
    pub direction: String,
    pub chars: usize,
    pub ms: f64,
}

#[derive(Clone, Debug, Serialize)]
pub struct Report {
    pub posts: usize,
    pub directions: usize,
    pub models: usize,
    pub load_s: f64,
    pub seconds: f64,
    pub posts_per_s: f64,
    pub words_per_s: f64,
    pub p50_ms: f64,
    pub p99_ms: f64,
    pub idle_p50_ms: Option<f64>,
    pub idle_p99_ms: Option<f64>,
    pub rss_mb: f64,
    pub peak_rss_mb: f64,
    pub mapped_mb: f64,
    pub anon_mb: f64,
    pub threads: usize,
    pub clients: usize,
    pub max_batch: usize,
    pub isa: String,
    pub arithmetic: String,
    pub shortlist: bool,
    #[serde(skip)]
    pub samples: Vec<Sample>,
}

/// A translator per direction (from, to).
type Directions = HashMap<(String, String), Translator>;

/// Every direction of `posts` through one service (its registry routes them and loads each
/// model once); also says how many models that made.
fn translators(posts: &[Post], service: &Service) -> Result<(Directions, usize), Error> {
    let mut out = HashMap::new();
    for p in posts {
        let key = (p.from.clone(), p.to.clone());
        if out.contains_key(&key) {
            continue;
        }
        let tr = service.pair(&p.from, &p.to).map_err(|e| Error::Direction {
            from: p.from.clone(),
            to: p.to.clone(),
            source: Box::new(e),
        })?;
        out.insert(key, tr);
    }
    Ok((out, service.registry().loaded()))
}

fn percentile(sorted: &[f64], p: f64) -> f64 {
    if sorted.is_empty() {
        return 0.0;
    }
    let i = ((p / 100.0) * (sorted.len() - 1) as f64).round() as usize;
    sorted[i.min(sorted.len() - 1)]
}

/// Runs both phases. `progress(done, total)` is called as requests finish.
pub fn run(posts: &[Post], opts: &Options, progress: &(dyn Fn(usize, usize) + Sync)) -> Result<Report, Error> {
    let load = Instant::now();
    let arith = opts.engine.arithmetic.resolve();
    let service = Service::open(opts.engine.clone(), None)?;
    let engine = service.engine().clone();
    let (tr, models) = translators(posts, &service)?;
    let load_s = load.elapsed().as_secs_f64();
    let directions = tr.len();

    // Throughput: `clients` clients, each sending one post and waiting for it.
    let next = AtomicUsize::new(0);
    let done = AtomicUsize::new(0);
    let n = opts.requests.max(1);
    let start = Instant::now();
    let results: Vec<Result<Vec<Sample>, TranslateError>> = std::thread::scope(|s| {
        let handles: Vec<_> = (0..opts.clients.max(1))
            .map(|_| {
                s.spawn(|| {
                    let mut mine = Vec::new();
                    loop {
                        let i = next.fetch_add(1, Ordering::Relaxed);
                        if i >= n {
                            return Ok(mine);
                        }
                        let p = &posts[i % posts.len()];
                        let t0 = Instant::now();
                        tr[&(p.from.clone(), p.to.clone())].translate_posts(&[p.text.as_str()])?;
                        mine.push(Sample {
                            direction: format!("{}-{}", p.from, p.to),
                            chars: p.text.len(),
                            ms: t0.elapsed().as_secs_f64() * 1e3,
                        });
                        progress(done.fetch_add(1, Ordering::Relaxed) + 1, n);
                    }
                })
            })
            .collect();
        handles.into_iter().map(|h| h.join().unwrap_or_else(|_| Ok(Vec::new()))).collect()
    });
    let seconds = start.elapsed().as_secs_f64();
    let mut samples = Vec::with_capacity(n);
    for r in results {
        samples.extend(r?);
    }
    let words: usize = (0..n).map(|i| posts[i % posts.len()].text.split_whitespace().count()).sum();
    let mut lat: Vec<f64> = samples.iter().map(|s| s.ms).collect();
    lat.sort_by(f64::total_cmp);

    // Latency: one post at a time on the idle engine.
    let (idle_p50_ms, idle_p99_ms) = if opts.skip_latency {
        (None, None)
    } else {
        std::thread::sleep(Duration::from_millis(50));
        let mut idle = Vec::new();
        for i in 0..opts.latency_requests.max(1) {
            let p = &posts[i % posts.len()];
            let t0 = Instant::now();
            tr[&(p.from.clone(), p.to.clone())].translate_posts(&[p.text.as_str()])?;
            idle.push(t0.elapsed().as_secs_f64() * 1e3);
        }
        idle.sort_by(f64::total_cmp);
        (Some(percentile(&idle, 50.0)), Some(percentile(&idle, 99.0)))
    };
    let mem = crate::procfs::Memory::read();
    Ok(Report {
        posts: n,
        directions,
        models,
        load_s,
        seconds,
        posts_per_s: n as f64 / seconds,
        words_per_s: words as f64 / seconds,
        p50_ms: percentile(&lat, 50.0),
        p99_ms: percentile(&lat, 99.0),
        idle_p50_ms,
        idle_p99_ms,
        rss_mb: mem.rss_mb,
        peak_rss_mb: mem.peak_rss_mb,
        mapped_mb: mem.mapped_mb,
        anon_mb: mem.anon_mb,
        threads: engine.threads(),
        clients: opts.clients.max(1),
        max_batch: opts.engine.max_batch.max(1),
        isa: engine.kernels().kernel_for(arith).name().into(),
        arithmetic: format!("{arith:?}").to_lowercase(),
        shortlist: opts.engine.shortlist,
        samples,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn corpus_lines_are_checked() {
        let dir = tempfile::tempdir().unwrap();
        let p = dir.path().join("c.tsv");
        std::fs::write(&p, "es\ten\tHola\\nmundo\n\nde\ten\tHallo\n").unwrap();
        let posts = read_corpus(&p).unwrap();
        assert_eq!(posts.len(), 2);
        assert_eq!(posts[0].text, "Hola\nmundo");
        std::fs::write(&p, "es\ten\tok\nbroken line\n").unwrap();
        let e = read_corpus(&p).unwrap_err();
        assert!(e.to_string().contains(":2:"), "{e}");
        std::fs::write(&p, "").unwrap();
        assert!(matches!(read_corpus(&p), Err(Error::Empty { .. })));
    }

    #[test]
    fn percentiles_pick_ranks() {
        let v: Vec<f64> = (1..=100).map(f64::from).collect();
        assert_eq!(percentile(&v, 50.0), 51.0);
        assert_eq!(percentile(&v, 99.0), 99.0);
        assert_eq!(percentile(&[], 50.0), 0.0);
    }
}
