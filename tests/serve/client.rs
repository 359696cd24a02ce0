//! A plain HTTP/1.1 client over `TcpStream`: every byte of the request is the test's, and every
//! byte of the response is read as it came (status, headers, body), so that statuses, headers,
//! slow and malformed requests are seen exactly.

use std::io::{BufRead, BufReader, Read, Write};
use std::net::{Shutdown, SocketAddr, TcpStream};
use std::time::Duration;

use serde_json::Value;

/// How long a test waits for any one response before it fails (instead of hanging).
pub const RESPONSE_DEADLINE: Duration = Duration::from_secs(60);

/// One response.
#[derive(Debug, Clone)]
pub struct Resp {
    pub status: u16,
    pub headers: Vec<(String, String)>,
    pub body: Vec<u8>,
}

impl Resp {
    /// The value of header `name` (case-insensitive), if sent.
    pub fn header(&self, name: &str) -> Option<&str> {
        self.headers.iter().find(|(k, _)| k.eq_ignore_ascii_case(name)).map(|(_, v)| v.as_str())
    }

    pub fn text(&self) -> String {
        String::from_utf8(self.body.clone()).unwrap_or_else(|_| panic!("response body is not UTF-8: {:?}", self.body))
    }

    /// The body as JSON; fails showing the body when it is not.
    pub fn json(&self) -> Value {
        serde_json::from_slice(&self.body)
            .unwrap_or_else(|e| panic!("status {}: body is not JSON ({e}): {:?}", self.status, self.text()))
    }

    /// The JSON body, after checking the status and that it was sent as JSON.
    pub fn expect_json(&self, status: u16) -> Value {
        assert_eq!(self.status, status, "body: {}", String::from_utf8_lossy(&self.body));
        let ct = self.header("content-type").unwrap_or("");
        assert!(ct.starts_with("application/json"), "content-type {ct:?} for a JSON body");
        self.json()
    }

    /// The message of an error body `{"error": "..."}` with `status`.
    pub fn expect_error(&self, status: u16) -> String {
        let v = self.expect_json(status);
        let obj = v.as_object().unwrap_or_else(|| panic!("error body is not an object: {v}"));
        assert_eq!(obj.len(), 1, "an error body holds only `error`: {v}");
        obj["error"].as_str().unwrap_or_else(|| panic!("`error` is not a string: {v}")).to_string()
    }
}

/// A request under construction.
#[derive(Clone, Debug)]
pub struct Req {
    method: String,
    path: String,
    headers: Vec<(String, String)>,
    body: Option<Vec<u8>>,
}

impl Req {
    pub fn new(method: &str, path: &str) -> Req {
        Req { method: method.into(), path: path.into(), headers: Vec::new(), body: None }
    }

    pub fn get(path: &str) -> Req {
        Req::new("GET", path)
    }

    pub fn post(path: &str) -> Req {
        Req::new("POST", path)
    }

    pub fn header(mut self, name: &str, value: &str) -> Req {
        self.headers.push((name.into(), value.into()));
        self
    }

    pub fn json(self, v: &Value) -> Req {
        self.header("Content-Type", "application/json").body(serde_json::to_vec(v).unwrap())
    }

    /// A form body from `(name, value)` pairs, percent-encoded as browsers and `requests` do.
    pub fn form(self, fields: &[(&str, &str)]) -> Req {
        let mut s = form_urlencoded::Serializer::new(String::new());
        for (k, v) in fields {
            s.append_pair(k, v);
        }
        self.header("Content-Type", "application/x-www-form-urlencoded").body(s.finish().into_bytes())
    }

    pub fn body(mut self, body: impl Into<Vec<u8>>) -> Req {
        self.body = Some(body.into());
        self
    }

    /// The request's bytes, with `Host`, `Content-Length` (when a body is set) and
    /// `Connection: close` unless the test set its own.
    pub fn bytes(&self, keep_alive: bool) -> Vec<u8> {
        let mut out = format!("{} {} HTTP/1.1\r\nHost: 127.0.0.1\r\n", self.method, self.path).into_bytes();
        let has = |n: &str| self.headers.iter().any(|(k, _)| k.eq_ignore_ascii_case(n));
        for (k, v) in &self.headers {
            out.extend_from_slice(format!("{k}: {v}\r\n").as_bytes());
        }
        if let Some(b) = &self.body
            && !has("content-length")
            && !has("transfer-encoding")
        {
            out.extend_from_slice(format!("Content-Length: {}\r\n", b.len()).as_bytes());
        }
        if !keep_alive && !has("connection") {
            out.extend_from_slice(b"Connection: close\r\n");
        }
        out.extend_from_slice(b"\r\n");
        if let Some(b) = &self.body {
            out.extend_from_slice(b);
        }
        out
    }

    /// Sends on a new connection and reads the response.
    pub fn send(&self, addr: SocketAddr) -> Resp {
        let mut c = Conn::open(addr);
        c.write(&self.bytes(false));
        c.read_response(self.method == "HEAD").unwrap_or_else(|e| panic!("{} {}: {e}", self.method, self.path))
    }
}

/// One connection, for keep-alive, pipelined, partial or slow requests.
pub struct Conn {
    pub stream: TcpStream,
    reader: BufReader<TcpStream>,
}

impl Conn {
    pub fn open(addr: SocketAddr) -> Conn {
        let stream = TcpStream::connect(addr).unwrap_or_else(|e| panic!("connecting to {addr}: {e}"));
        stream.set_read_timeout(Some(RESPONSE_DEADLINE)).unwrap();
        stream.set_nodelay(true).unwrap();
        let reader = BufReader::new(stream.try_clone().unwrap());
        Conn { stream, reader }
    }

    pub fn write(&mut self, bytes: &[u8]) {
        self.stream.write_all(bytes).unwrap_or_else(|e| panic!("writing the request: {e}"));
    }

    /// Sends `req` and reads its response, keeping the connection open.
    pub fn send(&mut self, req: &Req) -> Resp {
        self.write(&req.bytes(true));
        self.read_response(req.method == "HEAD").unwrap_or_else(|e| panic!("{} {}: {e}", req.method, req.path))
    }

    /// No more bytes from us: the server sees the end of the stream.
    pub fn finish_writing(&self) {
        let _ = self.stream.shutdown(Shutdown::Write);
    }

    /// Reads one response; `Err` says why there was none (the connection closed first, a
    /// timeout, a malformed head).
    pub fn read_response(&mut self, head_only: bool) -> Result<Resp, String> {
        let mut status_line = String::new();
        match self.reader.read_line(&mut status_line) {
            Ok(0) => return Err("the connection closed without a response".into()),
            Ok(_) => {}
            Err(e) => return Err(format!("reading the status line: {e}")),
        }
        let mut parts = status_line.trim_end().splitn(3, ' ');
        let version = parts.next().unwrap_or("");
        if version != "HTTP/1.1" && version != "HTTP/1.0" {
            return Err(format!("not an HTTP status line: {status_line:?}"));
        }
        let status: u16 =
            parts.next().and_then(|s| s.parse().ok()).ok_or(format!("bad status line {status_line:?}"))?;
        let mut headers = Vec::new();
        loop {
            let mut line = String::new();
            self.reader.read_line(&mut line).map_err(|e| format!("reading headers: {e}"))?;
            let line = line.trim_end_matches(['\r', '\n']);
            if line.is_empty() {
                break;
            }
            let (k, v) = line.split_once(':').ok_or(format!("bad header line {line:?}"))?;
            headers.push((k.trim().to_string(), v.trim().to_string()));
        }
        let mut resp = Resp { status, headers, body: Vec::new() };
        if head_only || status == 204 || status == 304 || (100..200).contains(&status) {
            return Ok(resp);
        }
        if let Some(len) = resp.header("content-length") {
            let n: usize = len.parse().map_err(|_| format!("bad content-length {len:?}"))?;
            resp.body = vec![0; n];
            self.reader.read_exact(&mut resp.body).map_err(|e| format!("reading {n} bytes of body: {e}"))?;
        } else if resp.header("transfer-encoding").is_some_and(|t| t.eq_ignore_ascii_case("chunked")) {
            loop {
                let mut size = String::new();
                self.reader.read_line(&mut size).map_err(|e| format!("reading a chunk size: {e}"))?;
                let n = usize::from_str_radix(size.trim(), 16).map_err(|_| format!("bad chunk size {size:?}"))?;
                let mut chunk = vec![0; n + 2];
                self.reader.read_exact(&mut chunk).map_err(|e| format!("reading a chunk: {e}"))?;
                if n == 0 {
                    break;
                }
                resp.body.extend_from_slice(&chunk[..n]);
            }
        } else {
            self.reader.read_to_end(&mut resp.body).map_err(|e| format!("reading the body: {e}"))?;
        }
        Ok(resp)
    }

    /// Whether the server closed the connection (reads the end of the stream, or a reset).
    pub fn closed_by_server(&mut self) -> bool {
        let mut b = [0u8; 1];
        match self.reader.read(&mut b) {
            Ok(0) => true,
            Ok(_) => false,
            Err(e) => matches!(e.kind(), std::io::ErrorKind::ConnectionReset | std::io::ErrorKind::BrokenPipe),
        }
    }
}
