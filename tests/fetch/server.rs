//! A Remote Settings look-alike on a loopback port (port 0), serving the tiny-esen fixture as
//! zstd attachments, with switches for the failures the tests need.

use std::collections::HashMap;
use std::io::{Cursor, Write};
use std::path::Path;
use std::sync::{Arc, Condvar, Mutex, OnceLock};
use std::thread::JoinHandle;
use std::time::Duration;

use serde_json::{Value, json};
use sha2::{Digest, Sha256};

use crate::common::fixtures;

pub const RECORDS: &str = "/v1/buckets/main/collections/translations-models-v2/records";

/// One fixture file, raw and compressed.
pub struct Fixture {
    pub name: &'static str,
    pub file_type: &'static str,
    pub raw: Vec<u8>,
    pub zst: Vec<u8>,
    pub zst_hash: String,
}

/// The tiny-esen model, vocab and shortlist, compressed once per test binary.
pub fn esen() -> &'static [Fixture] {
    static FILES: OnceLock<Vec<Fixture>> = OnceLock::new();
    FILES.get_or_init(|| {
        [("model.esen.intgemm.alphas.bin", "model"), ("vocab.esen.spm", "vocab"), ("lex.50.50.esen.s2t.bin", "lex")]
            .into_iter()
            .map(|(name, file_type)| {
                let raw = std::fs::read(fixtures().join("tiny-esen").join(name)).expect("fixture file");
                let zst = zstd::encode_all(Cursor::new(&raw), 1).expect("zstd");
                let zst_hash = sha256(&zst);
                Fixture { name, file_type, raw, zst, zst_hash }
            })
            .collect()
    })
}

pub fn sha256(bytes: &[u8]) -> String {
    Sha256::digest(bytes).iter().map(|b| format!("{b:02x}")).collect()
}

/// A v2 record for `bytes` stored compressed as `zst`, shaped like the server's answer.
#[allow(clippy::too_many_arguments)]
pub fn record(
    name: &str,
    file_type: &str,
    src: &str,
    trg: &str,
    version: &str,
    filter: &str,
    raw: &[u8],
    zst: &[u8],
) -> Value {
    let id = format!(
        "{:0>8}-0000-4000-8000-{}",
        &sha256(format!("{name}{src}{trg}{version}").as_bytes())[..8],
        &sha256(name.as_bytes())[..12]
    );
    json!({
        "name": name,
        "sourceLanguage": src,
        "targetLanguage": trg,
        "architecture": "tiny",
        "version": version,
        "fileType": file_type,
        "filter_expression": filter,
        "decompressedSize": raw.len(),
        "decompressedHash": sha256(raw),
        "id": id,
        "schema": 1749570042331u64,
        "attachment": {
            "filename": format!("{name}.zst"),
            "location": format!("main/translations-models-v2/{id}.zst"),
            "hash": sha256(zst),
            "mimetype": "application/zstd",
            "size": zst.len(),
        },
        "last_modified": 1749570482492u64,
    })
}

/// Records for the fixture as pair `src`-`trg` (file names renamed to the pair, as Mozilla
/// names them), at `version`.
pub fn pair_records(src: &str, trg: &str, version: &str, filter: &str) -> Vec<Value> {
    esen()
        .iter()
        .map(|f| {
            let name = f.name.replace("esen", &format!("{src}{trg}"));
            record(&name, f.file_type, src, trg, version, filter, &f.raw, &f.zst)
        })
        .collect()
}

/// Attachment bytes by location, for the records given.
pub fn attachments_for(records: &[Value]) -> HashMap<String, Vec<u8>> {
    let mut out = HashMap::new();
    for r in records {
        let hash = r["attachment"]["hash"].as_str().unwrap();
        let zst = esen().iter().find(|f| f.zst_hash == hash).map(|f| f.zst.clone());
        // Records whose hash was spoiled by a test still serve the real bytes.
        let zst = zst.unwrap_or_else(|| {
            let size = r["decompressedSize"].as_u64().unwrap() as usize;
            esen().iter().find(|f| f.raw.len() == size).unwrap().zst.clone()
        });
        out.insert(r["attachment"]["location"].as_str().unwrap().to_string(), zst);
    }
    out
}

/// Records and attachments for other files than the fixture's (another model), as pair
/// `src`-`trg` at `version`; the file type is read from Mozilla's file name.
pub fn files_records(
    src: &str,
    trg: &str,
    version: &str,
    files: &[(String, Vec<u8>)],
) -> (Vec<Value>, HashMap<String, Vec<u8>>) {
    let mut attachments = HashMap::new();
    let records = files
        .iter()
        .map(|(name, raw)| {
            let file_type = name.split('.').next().unwrap();
            let zst = zstd::encode_all(Cursor::new(raw), 1).expect("zstd");
            let r = record(name, file_type, src, trg, version, "", raw, &zst);
            attachments.insert(r["attachment"]["location"].as_str().unwrap().to_string(), zst);
            r
        })
        .collect();
    (records, attachments)
}

/// Writes the folder layout `--source DIR` reads.
pub fn write_mirror(dir: &Path, records: &[Value]) {
    write_mirror_with(dir, records, &attachments_for(records));
}

/// [`write_mirror`] with the attachments given, by location.
pub fn write_mirror_with(dir: &Path, records: &[Value], attachments: &HashMap<String, Vec<u8>>) {
    let records_path = dir.join(RECORDS.trim_start_matches("/v1/"));
    std::fs::create_dir_all(records_path.parent().unwrap()).unwrap();
    std::fs::write(&records_path, serde_json::to_vec(&json!({ "data": records })).unwrap()).unwrap();
    std::fs::write(dir.join("index.json"), br#"{"capabilities": {"attachments": {"base_url": "attachments/"}}}"#)
        .unwrap();
    for (location, bytes) in attachments {
        let path = dir.join("attachments").join(location);
        std::fs::create_dir_all(path.parent().unwrap()).unwrap();
        std::fs::write(path, bytes).unwrap();
    }
}

/// What the server does; tests change it between runs.
#[derive(Default)]
pub struct Behaviour {
    pub records: Vec<Value>,
    /// Paths answered with 503 this many more times.
    pub fail: HashMap<String, u32>,
    /// Attachment paths whose body ends after half the bytes (a complete, short response).
    pub truncate: Vec<String>,
    /// Attachment path that sends this many bytes of a full-length response and then hangs
    /// until [`Server::release`].
    pub stall: Option<(String, usize)>,
    pub ignore_ranges: bool,
    /// Records are served in pages of this many, linked by `Next-Page` as Kinto does.
    pub page_size: Option<usize>,
}

/// A request as the server saw it: path and Range header.
pub type Seen = (String, Option<String>);

pub struct Server {
    pub url: String,
    server: Arc<tiny_http::Server>,
    state: Arc<Mutex<(Behaviour, Vec<Seen>)>>,
    released: Arc<(Mutex<bool>, Condvar)>,
    thread: Option<JoinHandle<()>>,
}

impl Server {
    pub fn start(records: Vec<Value>) -> Server {
        let server = Arc::new(tiny_http::Server::http("127.0.0.1:0").expect("bind a loopback port"));
        let port = server.server_addr().to_ip().expect("an IP address").port();
        let url = format!("http://127.0.0.1:{port}/v1");
        let state = Arc::new(Mutex::new((Behaviour { records, ..Behaviour::default() }, Vec::new())));
        let released = Arc::new((Mutex::new(false), Condvar::new()));
        let (s, st, rel) = (server.clone(), state.clone(), released.clone());
        let base = format!("http://127.0.0.1:{port}/attachments/");
        let thread = std::thread::spawn(move || {
            for request in s.incoming_requests() {
                let (st, rel, base) = (st.clone(), rel.clone(), base.clone());
                std::thread::spawn(move || handle(request, &st, &rel, &base));
            }
        });
        Server { url, server, state, released, thread: Some(thread) }
    }

    pub fn behave(&self, f: impl FnOnce(&mut Behaviour)) {
        f(&mut self.state.lock().unwrap().0);
    }

    /// Requests seen so far, and forget them.
    pub fn take_log(&self) -> Vec<Seen> {
        std::mem::take(&mut self.state.lock().unwrap().1)
    }

    /// Lets a stalled response finish (its connection closes without the rest of the body).
    pub fn release(&self) {
        let (lock, cv) = &*self.released;
        *lock.lock().unwrap() = true;
        cv.notify_all();
    }

    pub fn attachment_path(&self, name: &str) -> String {
        let st = self.state.lock().unwrap();
        let r = st.0.records.iter().find(|r| r["name"] == name).expect("record by name");
        format!("/attachments/{}", r["attachment"]["location"].as_str().unwrap())
    }
}

impl Drop for Server {
    fn drop(&mut self) {
        self.release();
        self.server.unblock();
        if let Some(t) = self.thread.take() {
            let _ = t.join();
        }
    }
}

fn handle(
    req: tiny_http::Request,
    state: &Mutex<(Behaviour, Vec<Seen>)>,
    released: &(Mutex<bool>, Condvar),
    base: &str,
) {
    let path = req.url().to_string();
    let range = req.headers().iter().find(|h| h.field.equiv("Range")).map(|h| h.value.to_string());
    let mut st = state.lock().unwrap();
    st.1.push((path.clone(), range.clone()));
    let b = &mut st.0;
    if let Some(n) = b.fail.get_mut(&path).filter(|n| **n > 0) {
        *n -= 1;
        drop(st);
        let _ = req.respond(tiny_http::Response::from_string("busy").with_status_code(503));
        return;
    }
    let json_header = tiny_http::Header::from_bytes("Content-Type", "application/json").unwrap();
    if path == "/v1/" {
        let root = json!({
            "project_name": "Remote Settings PROD",
            "project_version": "18.0.0",
            "http_api_version": "1.23",
            "url": format!("{}v1/", base.trim_end_matches("attachments/")),
            "capabilities": {
                "attachments": {
                    "description": "Add file attachments to records",
                    "url": "https://github.com/Kinto/kinto-attachment/",
                    "version": "7.1.0",
                    "base_url": base,
                },
                "signer": {"description": "Digital signatures for integrity and authenticity of records."},
            },
        });
        drop(st);
        let _ = req.respond(tiny_http::Response::from_string(root.to_string()).with_header(json_header));
        return;
    }
    if let Some(query) = path.strip_prefix(RECORDS) {
        let page: usize = query.strip_prefix("?_page=").and_then(|p| p.parse().ok()).unwrap_or(0);
        let size = b.page_size.unwrap_or(usize::MAX);
        let data: Vec<&Value> = b.records.iter().skip(page.saturating_mul(size)).take(size).collect();
        let more = page.saturating_add(1).saturating_mul(size) < b.records.len();
        let body = json!({ "data": data }).to_string();
        drop(st);
        let mut resp = tiny_http::Response::from_string(body).with_header(json_header);
        if more {
            let next = format!("{}{RECORDS}?_page={}", base.trim_end_matches("/attachments/"), page + 1);
            resp.add_header(tiny_http::Header::from_bytes("Next-Page", next).unwrap());
        }
        let _ = req.respond(resp);
        return;
    }
    let Some(location) = path.strip_prefix("/attachments/") else {
        drop(st);
        let _ = req.respond(tiny_http::Response::from_string("no such path").with_status_code(404));
        return;
    };
    let Some(bytes) = attachments_for(&b.records).remove(location) else {
        drop(st);
        let _ = req.respond(tiny_http::Response::from_string("no such attachment").with_status_code(404));
        return;
    };
    if let Some((_, n)) = b.stall.clone().filter(|(p, _)| *p == path) {
        b.stall = None;
        drop(st);
        let mut w = req.into_writer();
        let head =
            format!("HTTP/1.1 200 OK\r\nContent-Length: {}\r\nContent-Type: application/zstd\r\n\r\n", bytes.len());
        let _ = w.write_all(head.as_bytes()).and_then(|_| w.write_all(&bytes[..n])).and_then(|_| w.flush());
        let (lock, cv) = released;
        let mut done = lock.lock().unwrap();
        while !*done {
            let (g, timeout) = cv.wait_timeout(done, Duration::from_secs(60)).unwrap();
            done = g;
            if timeout.timed_out() {
                break;
            }
        }
        return;
    }
    let start = range
        .filter(|_| !b.ignore_ranges)
        .and_then(|r| r.strip_prefix("bytes=")?.strip_suffix('-')?.parse::<usize>().ok())
        .filter(|s| *s < bytes.len());
    let truncate = b.truncate.contains(&path);
    drop(st);
    let (status, body, extra) = match start {
        Some(s) => (206, bytes[s..].to_vec(), Some(format!("bytes {s}-{}/{}", bytes.len() - 1, bytes.len()))),
        None => (200, bytes, None),
    };
    let body = if truncate { body[..body.len() / 2].to_vec() } else { body };
    let mut resp = tiny_http::Response::from_data(body).with_status_code(status);
    if let Some(cr) = extra {
        resp.add_header(tiny_http::Header::from_bytes("Content-Range", cr).unwrap());
    }
    let _ = req.respond(resp);
}
