//! Records on the command line's streams: each record is one post (line breaks and all), read
//! as a line, a NUL-terminated record or a JSON object, and given to [`Service::translate`].

use std::io::{BufRead, Write};

pub use super::service::{AUTO, RecordError, Request, Translated};
use super::service::{Call, Service};

/// How records are separated in the input and output streams.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Framing {
    /// One post per line (a post cannot hold a line break).
    Lines,
    /// Posts separated by NUL bytes (`sort -z`, `xargs -0`); every output record ends with NUL.
    Null,
    /// One JSON object per line: `text`, optional `from`, `to`, `id` and any other fields; the
    /// object comes back as it was with `translation` added (and `detected` for `auto`), or
    /// with `error` for a record that could not be translated.
    Jsonl,
}

/// What went wrong with the stream as a whole (a bad record in JSON Lines is not one of these).
#[derive(Debug, thiserror::Error)]
pub enum StreamError {
    #[error("input record {record}")]
    Record {
        record: usize,
        #[source]
        source: RecordError,
    },
    #[error("input record {record} is not valid UTF-8; convert the input to UTF-8 first (e.g. with iconv)")]
    InvalidUtf8 { record: usize },
    #[error("reading the input")]
    Input(#[source] std::io::Error),
    #[error("writing the output")]
    Output(#[source] std::io::Error),
}

crate::error::fault!(StreamError);

impl StreamError {
    pub fn is_usage(&self) -> bool {
        // A record's own error is the next link of the chain.
        matches!(self, StreamError::InvalidUtf8 { .. })
    }
}

/// Reads records from `input`, translates them (`from`/`to` unless a JSON record says
/// otherwise; as HTML with `html`) and writes one output record per input record. With
/// `interactive` each record is written as soon as it is translated. `progress` is told how many
/// records are done.
#[allow(clippy::too_many_arguments)]
pub fn translate_stream(
    service: &Service,
    framing: Framing,
    html: bool,
    (from, to): (&str, &str),
    mut input: impl BufRead,
    mut output: impl Write,
    interactive: bool,
    progress: &mut dyn FnMut(usize),
) -> Result<usize, StreamError> {
    let batch = if interactive { 1 } else { 256 };
    let separator = if framing == Framing::Null { 0 } else { b'\n' };
    let mut done = 0;
    loop {
        let mut raw: Vec<(String, bool)> = Vec::new();
        while raw.len() < batch {
            let mut buf = Vec::new();
            let n = input.read_until(separator, &mut buf).map_err(StreamError::Input)?;
            if n == 0 {
                break;
            }
            let ended = buf.last() == Some(&separator);
            if ended {
                buf.pop();
            }
            let record = done + raw.len() + 1;
            raw.push((String::from_utf8(buf).map_err(|_| StreamError::InvalidUtf8 { record })?, ended));
        }
        if raw.is_empty() {
            break;
        }
        let parsed: Vec<Parsed> = raw
            .iter()
            .map(|(r, _)| if framing == Framing::Jsonl { parse_json(r, from, to) } else { plain(r, from, to) })
            .collect();
        let requests: Vec<Request> = parsed.iter().filter_map(|p| p.request.clone()).collect();
        let call = Call { html, split_sentences: None };
        let mut results = service.translate(&requests, call, &mut |_| {}).into_iter();
        for (k, (p, (line, ended))) in parsed.iter().zip(&raw).enumerate() {
            let record = done + k + 1;
            let text = match (&p.request, framing) {
                (None, _) => p
                    .error
                    .clone()
                    .map(|e| json_with(line, &[("error", serde_json::Value::String(e))]))
                    .unwrap_or_default(),
                (Some(_), Framing::Jsonl) => match results.next() {
                    Some(Ok(t)) => json_with(line, &translated_fields(&t)),
                    Some(Err(e)) => json_with(line, &[("error", serde_json::Value::String(error_chain(&e)))]),
                    None => String::new(),
                },
                (Some(_), _) => match results.next() {
                    Some(Ok(t)) => t.translation,
                    Some(Err(source)) => return Err(StreamError::Record { record, source }),
                    None => String::new(),
                },
            };
            output.write_all(text.as_bytes()).map_err(StreamError::Output)?;
            let end: &[u8] = match framing {
                Framing::Null => b"\0",
                _ if *ended => b"\n",
                _ => b"",
            };
            output.write_all(end).map_err(StreamError::Output)?;
            if interactive {
                output.flush().map_err(StreamError::Output)?;
            }
        }
        done += raw.len();
        progress(done);
    }
    output.flush().map_err(StreamError::Output)?;
    Ok(done)
}

/// A record read from the input: what to translate, or why it cannot be (JSON Lines only).
struct Parsed {
    request: Option<Request>,
    error: Option<String>,
}

fn plain(text: &str, from: &str, to: &str) -> Parsed {
    Parsed { request: Some(Request { text: text.into(), from: from.into(), to: to.into() }), error: None }
}

/// A JSON Lines record: an object with a string `text` and optional string `from`/`to`. An
/// empty line stays an empty line.
fn parse_json(line: &str, from: &str, to: &str) -> Parsed {
    let failed = |e: String| Parsed { request: None, error: Some(e) };
    if line.trim().is_empty() {
        return Parsed { request: None, error: None };
    }
    let value: serde_json::Value = match serde_json::from_str(line) {
        Ok(v) => v,
        Err(e) => return failed(format!("not a JSON object: {e}")),
    };
    let Some(object) = value.as_object() else { return failed("not a JSON object".into()) };
    for taken in ["translation", "error", "detected"] {
        if object.contains_key(taken) {
            return failed(format!("the record already has a `{taken}` field, which reseam would write"));
        }
    }
    let field = |name: &str, default: &str| -> Result<String, String> {
        match object.get(name) {
            None | Some(serde_json::Value::Null) => Ok(default.to_string()),
            Some(serde_json::Value::String(s)) => Ok(s.clone()),
            Some(_) => Err(format!("`{name}` must be a string")),
        }
    };
    let text = match object.get("text") {
        Some(serde_json::Value::String(s)) => s.clone(),
        Some(_) => return failed("`text` must be a string".into()),
        None => return failed("no `text` field".into()),
    };
    match (field("from", from), field("to", to)) {
        (Ok(from), Ok(to)) => Parsed { request: Some(Request { text, from, to }), error: None },
        (Err(e), _) | (_, Err(e)) => failed(e),
    }
}

fn translated_fields(t: &Translated) -> Vec<(&'static str, serde_json::Value)> {
    let mut fields = vec![("translation", serde_json::Value::String(t.translation.clone()))];
    if let Some(d) = &t.detected {
        fields.push(("detected", serde_json::json!({ "language": d.language, "confidence": d.confidence })));
    }
    fields
}

/// `line` (a JSON object, or anything else) with `fields` added at its end. An object keeps its
/// own bytes, key order and spacing; anything else becomes `{"input": <line>, ...}`.
fn json_with(line: &str, fields: &[(&str, serde_json::Value)]) -> String {
    let added: Vec<String> = fields
        .iter()
        // A string key and a Value always serialize.
        .map(|(k, v)| format!("{}:{}", serde_json::Value::String(k.to_string()), v))
        .collect();
    let trimmed = line.trim_end();
    let is_object = matches!(serde_json::from_str::<serde_json::Value>(line), Ok(serde_json::Value::Object(_)));
    if is_object && let Some(body) = trimmed.strip_suffix('}') {
        let empty = body.trim_start().strip_prefix('{').is_some_and(|inner| inner.trim().is_empty());
        return format!("{body}{}{}}}", if empty { "" } else { "," }, added.join(","));
    }
    format!("{{\"input\":{},{}}}", serde_json::Value::String(line.to_string()), added.join(","))
}

/// The error and its causes on one line, as the binary prints errors.
fn error_chain(e: &dyn std::error::Error) -> String {
    let mut out = e.to_string();
    let mut source = e.source();
    while let Some(s) = source {
        out.push_str(": ");
        out.push_str(&s.to_string());
        source = s.source();
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn json_records_keep_their_bytes_and_get_fields_added() {
        let s = serde_json::Value::String("x".into());
        assert_eq!(
            json_with(r#"{"id": 7, "text": "a"}"#, &[("translation", s.clone())]),
            r#"{"id": 7, "text": "a","translation":"x"}"#
        );
        assert_eq!(json_with("{ }", &[("error", s.clone())]), r#"{ "error":"x"}"#);
        assert_eq!(json_with("[1]", &[("error", s.clone())]), r#"{"input":"[1]","error":"x"}"#);
        assert_eq!(json_with(r#"{"a":"}"}  "#, &[("t", s)]), r#"{"a":"}","t":"x"}"#);
    }

    #[test]
    fn bad_json_records_say_what_is_wrong() {
        let error = |line: &str| parse_json(line, "es", "en").error.unwrap();
        assert!(error("{").starts_with("not a JSON object"));
        assert_eq!(error("3"), "not a JSON object");
        assert_eq!(error(r#"{"id": 1}"#), "no `text` field");
        assert_eq!(error(r#"{"text": 1}"#), "`text` must be a string");
        assert_eq!(error(r#"{"text": "a", "to": 2}"#), "`to` must be a string");
        assert!(error(r#"{"text": "a", "translation": ""}"#).contains("`translation`"));
        let ok = parse_json(r#"{"text": "a\nb", "from": "auto", "id": [1]}"#, "es", "en").request.unwrap();
        assert_eq!(ok, Request { text: "a\nb".into(), from: "auto".into(), to: "en".into() });
        assert!(parse_json("  ", "es", "en").request.is_none());
    }
}
