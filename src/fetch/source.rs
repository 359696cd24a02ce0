//! Where records and attachments come from: a Remote Settings server, or a folder with the same
//! layout (what `reseam fetch --mirror` writes).
//!
//! Server: records from `<root>/buckets/main/collections/translations-models-v2/records`, the
//! attachments' base URL from `GET <root>/` → `capabilities.attachments.base_url`, and each file
//! at `<base_url><attachment.location>`. Folder: `index.json` (the root document; its `base_url`
//! is relative, `attachments/`), `buckets/main/collections/translations-models-v2/records`, and
//! `attachments/<location>`. Served over HTTP, such a folder is a server too.

use std::fs::File;
use std::io::{self, Read, Seek, SeekFrom};
use std::path::{Path, PathBuf};
use std::time::Duration;

use serde_json::Value;

use super::error::FetchError;

/// The production server Firefox release and beta use (`services/settings/Utils.sys.mjs`).
pub const PRODUCTION: &str = "https://firefox.settings.services.mozilla.com/v1";
pub const RECORDS_PATH: &str = "buckets/main/collections/translations-models-v2/records";
/// Where a mirror folder keeps attachments, relative to its root.
pub const MIRROR_ATTACHMENTS: &str = "attachments/";
/// Records documents are small (hundreds of records); more than this is not a records document.
const MAX_DOCUMENT: u64 = 64 << 20;
/// A records list longer than this many pages is not a translations collection.
const MAX_PAGES: usize = 1000;

/// A source as given on the command line.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Source {
    /// The `/v1` root of a Remote Settings server (or of a mirror folder served over HTTP).
    Url(String),
    /// A folder written by `reseam fetch --mirror`.
    Dir(PathBuf),
}

impl Source {
    /// `http://` and `https://` are servers, `file://` and anything else folders.
    pub fn parse(s: &str) -> Source {
        let lower = s.to_ascii_lowercase();
        if lower.starts_with("http://") || lower.starts_with("https://") {
            Source::Url(s.trim_end_matches('/').to_string())
        } else {
            Source::Dir(PathBuf::from(s.strip_prefix("file://").unwrap_or(s)))
        }
    }
}

impl std::fmt::Display for Source {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Source::Url(u) => f.write_str(u),
            Source::Dir(d) => write!(f, "{}", d.display()),
        }
    }
}

/// Network settings.
#[derive(Debug, Clone, Copy)]
pub struct NetConfig {
    /// Attempts after the first one, on network errors, 5xx and 429.
    pub retries: u32,
    /// Limit for connecting, for the answer to start, and for each read (a stall).
    pub timeout: Duration,
}

/// A source that is ready to be read: for a server, the attachments base URL is known.
pub struct Opened {
    source: Source,
    agent: Option<ureq::Agent>,
    attachments_base: String,
    net: NetConfig,
}

/// How one attempt failed.
pub enum Failure {
    /// Worth another attempt (network error, timeout, 5xx, 429).
    Transient(String),
    Fatal(FetchError),
}

/// An attachment stream and the offset it starts at (0 when the server ignored the range).
pub struct Body {
    pub reader: Box<dyn Read>,
    pub start: u64,
}

impl Opened {
    /// Connects: for a server, reads the root document for the attachments base URL.
    pub fn open(source: &Source, net: NetConfig) -> Result<Opened, FetchError> {
        match source {
            Source::Dir(dir) => {
                if !dir.is_dir() {
                    let why = io::Error::new(io::ErrorKind::NotFound, "no such folder (is --source right?)");
                    return Err(FetchError::io(dir, why));
                }
                let index = dir.join("index.json");
                let base = match std::fs::read(&index) {
                    Ok(bytes) => base_url(&bytes).map_err(|detail| FetchError::BadDocument {
                        what: "server root document",
                        location: index.display().to_string(),
                        detail,
                    })?,
                    Err(e) if e.kind() == io::ErrorKind::NotFound => MIRROR_ATTACHMENTS.to_string(),
                    Err(e) => return Err(FetchError::io(&index, e)),
                };
                if base.contains("://") || base.starts_with('/') {
                    return Err(FetchError::BadDocument {
                        what: "server root document",
                        location: index.display().to_string(),
                        detail: format!("a folder source needs a relative attachments base_url, not {base:?}"),
                    });
                }
                Ok(Opened { source: source.clone(), agent: None, attachments_base: base, net })
            }
            Source::Url(root) => {
                let agent: ureq::Agent = ureq::Agent::config_builder()
                    .http_status_as_error(false)
                    .user_agent(concat!("reseam/", env!("CARGO_PKG_VERSION")))
                    .timeout_connect(Some(net.timeout))
                    .timeout_recv_response(Some(net.timeout))
                    .timeout_per_read(Some(net.timeout))
                    .build()
                    .into();
                let mut opened =
                    Opened { source: source.clone(), agent: Some(agent), attachments_base: String::new(), net };
                let root_url = format!("{root}/");
                let doc = opened.get_document(&root_url, "server root document")?;
                let base = match base_url(&doc) {
                    Ok(b) => b,
                    // A mirror folder behind a plain static file server answers `/` with a listing.
                    Err(first) => {
                        let index = format!("{root}/index.json");
                        match opened.get_document(&index, "server root document").ok().and_then(|d| base_url(&d).ok()) {
                            Some(b) => b,
                            None => {
                                return Err(FetchError::BadDocument {
                                    what: "server root document",
                                    location: root_url,
                                    detail: first,
                                });
                            }
                        }
                    }
                };
                opened.attachments_base = resolve(root, &base);
                Ok(opened)
            }
        }
    }

    pub fn source(&self) -> &Source {
        &self.source
    }

    /// The records document, as bytes.
    pub fn records(&self) -> Result<Vec<u8>, FetchError> {
        match &self.source {
            Source::Dir(dir) => {
                let path = dir.join(RECORDS_PATH);
                std::fs::read(&path).map_err(|e| FetchError::io(path, e))
            }
            Source::Url(root) => {
                // Kinto splits long lists into pages linked by a `Next-Page` header.
                let mut url = format!("{root}/{RECORDS_PATH}");
                let (first, mut next) = self.get_page(&url, "records document")?;
                if next.is_none() {
                    return Ok(first);
                }
                let mut data = page_data(&first, &url)?;
                let mut pages = 1;
                while let Some(n) = next.take() {
                    pages += 1;
                    if pages > MAX_PAGES {
                        return Err(FetchError::BadDocument {
                            what: "records document",
                            location: url,
                            detail: format!("more than {MAX_PAGES} pages"),
                        });
                    }
                    url = n;
                    let (page, after) = self.get_page(&url, "records document")?;
                    data.extend(page_data(&page, &url)?);
                    next = after;
                }
                // Serializing a list of JSON values cannot fail.
                Ok(serde_json::to_vec(&serde_json::json!({ "data": data })).expect("JSON serializes"))
            }
        }
    }

    /// Where the records came from, for messages.
    pub fn records_location(&self) -> String {
        match &self.source {
            Source::Dir(dir) => dir.join(RECORDS_PATH).display().to_string(),
            Source::Url(root) => format!("{root}/{RECORDS_PATH}"),
        }
    }

    /// The URL or path of an attachment, for messages.
    pub fn attachment_origin(&self, location: &str) -> String {
        match &self.source {
            Source::Dir(dir) => dir.join(&self.attachments_base).join(location).display().to_string(),
            Source::Url(_) => format!("{}{location}", self.attachments_base),
        }
    }

    pub fn retries(&self) -> u32 {
        self.net.retries
    }

    /// Opens an attachment at byte `offset` (one attempt).
    pub fn attachment(&self, location: &str, offset: u64) -> Result<Body, Failure> {
        match &self.source {
            Source::Dir(_) => {
                let path = PathBuf::from(self.attachment_origin(location));
                let mut f = File::open(&path).map_err(|e| Failure::Fatal(FetchError::io(&path, e)))?;
                f.seek(SeekFrom::Start(offset)).map_err(|e| Failure::Fatal(FetchError::io(&path, e)))?;
                Ok(Body { reader: Box::new(f), start: offset })
            }
            Source::Url(_) => {
                let url = self.attachment_origin(location);
                let agent = self.agent.as_ref().expect("a URL source always has an agent");
                let mut req = agent.get(&url).header("Accept-Encoding", "identity");
                if offset > 0 {
                    req = req.header("Range", format!("bytes={offset}-"));
                }
                let resp = req.call().map_err(|e| classify(&url, e))?;
                let status = resp.status().as_u16();
                let start = match status {
                    200 => 0,
                    206 => content_range_start(&resp).filter(|s| *s == offset).ok_or_else(|| {
                        Failure::Transient(format!("{url}: the server answered a different byte range"))
                    })?,
                    // The part on disk is not a prefix of this file any more: start over.
                    416 => return Err(Failure::Transient(format!("{url}: range not satisfiable"))),
                    _ => return Err(status_failure(&url, status)),
                };
                Ok(Body { reader: Box::new(resp.into_body().into_reader()), start })
            }
        }
    }

    /// GET a JSON document with retries.
    fn get_document(&self, url: &str, what: &'static str) -> Result<Vec<u8>, FetchError> {
        self.get_page(url, what).map(|(body, _)| body)
    }

    /// GET a JSON document with retries; also returns the `Next-Page` URL, if any.
    fn get_page(&self, url: &str, what: &'static str) -> Result<(Vec<u8>, Option<String>), FetchError> {
        let agent = self.agent.as_ref().expect("documents are fetched from URL sources only");
        retry(self.net, url, |_| {
            let resp = agent.get(url).call().map_err(|e| classify(url, e))?;
            let status = resp.status().as_u16();
            if status != 200 {
                return Err(status_failure(url, status));
            }
            let next = resp.headers().get("next-page").and_then(|v| v.to_str().ok()).map(str::to_string);
            let mut body = resp.into_body();
            body.with_config()
                .limit(MAX_DOCUMENT)
                .read_to_vec()
                .map_err(|e| match e {
                    ureq::Error::BodyExceedsLimit(_) => Failure::Fatal(FetchError::BadDocument {
                        what,
                        location: url.to_string(),
                        detail: format!("larger than {} MiB", MAX_DOCUMENT >> 20),
                    }),
                    e => Failure::Transient(e.to_string()),
                })
                .map(|body| (body, next.clone()))
        })
    }
}

/// Runs `attempt` until it succeeds, fails fatally, or the retries are spent, waiting longer each
/// time (0.5 s, 1 s, 2 s, ... up to 8 s).
pub fn retry<T>(
    net: NetConfig,
    url: &str,
    mut attempt: impl FnMut(u32) -> Result<T, Failure>,
) -> Result<T, FetchError> {
    let mut n = 0;
    loop {
        match attempt(n) {
            Ok(v) => return Ok(v),
            Err(Failure::Fatal(e)) => return Err(e),
            Err(Failure::Transient(detail)) => {
                if n >= net.retries {
                    return Err(FetchError::Network { url: url.to_string(), detail, attempts: n + 1 });
                }
                std::thread::sleep(backoff(n));
                n += 1;
            }
        }
    }
}

pub fn backoff(attempt: u32) -> Duration {
    Duration::from_millis(500u64 << attempt.min(4))
}

fn classify(url: &str, e: ureq::Error) -> Failure {
    match e {
        ureq::Error::Io(_)
        | ureq::Error::Timeout(_)
        | ureq::Error::ConnectionFailed
        | ureq::Error::HostNotFound
        | ureq::Error::Protocol(_) => Failure::Transient(e.to_string()),
        e => Failure::Fatal(FetchError::Network { url: url.to_string(), detail: e.to_string(), attempts: 1 }),
    }
}

fn status_failure(url: &str, status: u16) -> Failure {
    if status >= 500 || status == 429 || status == 408 {
        return Failure::Transient(format!("HTTP {status}"));
    }
    let hint = match status {
        404 => " (not found: is --source the /v1 root of a Remote Settings server or a mirror folder?)",
        401 | 403 => " (access denied)",
        _ => "",
    };
    Failure::Fatal(FetchError::Http { url: url.to_string(), status, hint })
}

fn content_range_start(resp: &ureq::http::Response<ureq::Body>) -> Option<u64> {
    let v = resp.headers().get("content-range")?.to_str().ok()?;
    let range = v.trim().strip_prefix("bytes")?.trim_start();
    range.split('-').next()?.trim().parse().ok()
}

/// The `data` list of one page of records.
fn page_data(page: &[u8], url: &str) -> Result<Vec<Value>, FetchError> {
    serde_json::from_slice::<Value>(page)
        .ok()
        .and_then(|mut v| v.get_mut("data").map(Value::take))
        .and_then(|d| if let Value::Array(a) = d { Some(a) } else { None })
        .ok_or_else(|| FetchError::BadDocument {
            what: "records document",
            location: url.to_string(),
            detail: "a page without a `data` list".into(),
        })
}

/// `capabilities.attachments.base_url` of a root document, with a trailing `/`.
fn base_url(doc: &[u8]) -> Result<String, String> {
    let v: Value = serde_json::from_slice(doc).map_err(|e| format!("not JSON ({e})"))?;
    let base = v
        .pointer("/capabilities/attachments/base_url")
        .and_then(Value::as_str)
        .ok_or("no `capabilities.attachments.base_url` (is this the /v1 root of a Remote Settings server?)")?;
    if base.is_empty() {
        return Err("`capabilities.attachments.base_url` is empty".into());
    }
    Ok(if base.ends_with('/') { base.to_string() } else { format!("{base}/") })
}

/// Resolves a base URL against the server root: absolute URLs stay, `/x` is on the same host,
/// anything else is relative to `<root>/`.
fn resolve(root: &str, base: &str) -> String {
    if base.contains("://") {
        return base.to_string();
    }
    if let Some(path) = base.strip_prefix('/') {
        let after_scheme = root.find("://").map_or(0, |i| i + 3);
        let host_end = root[after_scheme..].find('/').map_or(root.len(), |i| after_scheme + i);
        return format!("{}/{path}", &root[..host_end]);
    }
    format!("{root}/{base}")
}

/// The attachments folder of a folder source.
pub fn mirror_attachment_path(dir: &Path, location: &str) -> PathBuf {
    dir.join(MIRROR_ATTACHMENTS).join(location)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sources_parse() {
        assert_eq!(Source::parse("https://x.test/v1/"), Source::Url("https://x.test/v1".into()));
        assert_eq!(Source::parse("HTTP://x.test/v1"), Source::Url("HTTP://x.test/v1".into()));
        assert_eq!(Source::parse("/srv/mirror"), Source::Dir("/srv/mirror".into()));
        assert_eq!(Source::parse("file:///srv/mirror"), Source::Dir("/srv/mirror".into()));
    }

    #[test]
    fn base_urls() {
        let doc = br#"{"capabilities": {"attachments": {"base_url": "https://cdn.test/"}}}"#;
        assert_eq!(base_url(doc).unwrap(), "https://cdn.test/");
        let doc = br#"{"capabilities": {"attachments": {"base_url": "http://localhost:8888/attachments"}}}"#;
        assert_eq!(base_url(doc).unwrap(), "http://localhost:8888/attachments/");
        assert!(base_url(br#"{"capabilities": {}}"#).unwrap_err().contains("base_url"));
        assert!(base_url(b"<html>").unwrap_err().contains("not JSON"));
        assert_eq!(resolve("http://h:1/v1", "https://cdn.test/"), "https://cdn.test/");
        assert_eq!(resolve("http://h:1/v1", "/att/"), "http://h:1/att/");
        assert_eq!(resolve("http://h:1/v1", "attachments/"), "http://h:1/v1/attachments/");
        assert_eq!(resolve("http://h:1", "/att/"), "http://h:1/att/");
    }

    #[test]
    fn backoff_grows_and_is_capped() {
        assert_eq!(backoff(0), Duration::from_millis(500));
        assert_eq!(backoff(1), Duration::from_secs(1));
        assert_eq!(backoff(9), Duration::from_secs(8));
    }
}
