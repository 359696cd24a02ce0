//! Posts as records: each record is one post (line breaks and all) through the social-post
//! pipeline, with its own languages. For `translate auto`, `--jsonl` and `-z` (the server has its own
//! grouping, in serve/core.rs).
//!
//! A record's source language is given, or `auto`: then it is identified ([`crate::detect`]),
//! and the post goes to the model of the language found. Models are loaded the first time a pair
//! is needed and kept. A post in the target language already, or with nothing to identify (only
//! links, emoji, numbers), comes back unchanged.

use std::collections::HashMap;
use std::io::{BufRead, Write};
use std::sync::Arc;

use super::{TranslateError, TranslateOptions, Translator};
use crate::detect::{Detection, Detector};
use crate::fetch::lang::tags_match;

/// The source language that asks for identification.
pub const AUTO: &str = "auto";

/// One post to translate.
#[derive(Clone, Debug, PartialEq)]
pub struct Request {
    pub text: String,
    /// A language tag, or [`AUTO`].
    pub from: String,
    pub to: String,
}

/// One translated post.
#[derive(Clone, Debug, PartialEq)]
pub struct Translated {
    pub translation: String,
    /// What identification found, when the source was [`AUTO`].
    pub detected: Option<Detection>,
}

/// Why one record was not translated.
#[derive(Debug, thiserror::Error)]
pub enum RecordError {
    /// The post was identified as a language that no model (direct or through English) covers.
    #[error("the post is in `{language}` (detected, confidence {confidence:.2}), which cannot be translated to `{to}`")]
    Detected {
        language: String,
        confidence: f64,
        to: String,
        #[source]
        source: Arc<TranslateError>,
    },
    #[error("source language `auto` needs language identification, which was not set up")]
    NoDetector,
    #[error(transparent)]
    Translate(Arc<TranslateError>),
    #[error(transparent)]
    Html(#[from] crate::html::HtmlError<TranslateError>),
}

/// Loaded translators by pair, made from one set of options.
pub struct Translators {
    base: TranslateOptions,
    /// Posts are HTML: their text is translated, their markup kept ([`crate::html`]).
    html: bool,
    detector: Option<Detector>,
    loaded: HashMap<(String, String), Result<Translator, Arc<TranslateError>>>,
}

impl Translators {
    /// Translators with `base`'s settings (its `from`/`to` are replaced by each record's);
    /// `detector` identifies the posts whose source is [`AUTO`].
    pub fn new(base: TranslateOptions, detector: Option<Detector>) -> Translators {
        Translators { base, html: false, detector, loaded: HashMap::new() }
    }

    /// Reads every post as HTML (`translate --html`, the server's `format: html`).
    pub fn with_html(mut self, html: bool) -> Translators {
        self.html = html;
        self
    }

    /// Keeps `translator`, already loaded, for `from`→`to`.
    pub fn insert(&mut self, from: &str, to: &str, translator: Translator) {
        self.loaded.insert((from.to_string(), to.to_string()), Ok(translator));
    }

    /// The translator for `from`→`to`, loaded (or downloaded, as `base` allows) the first time.
    pub fn get(&mut self, from: &str, to: &str) -> Result<&mut Translator, Arc<TranslateError>> {
        let key = (from.to_string(), to.to_string());
        let base = &self.base;
        let entry = self.loaded.entry(key).or_insert_with(|| {
            let opts = TranslateOptions { from: from.into(), to: to.into(), ..base.clone() };
            Translator::load(&opts).map_err(Arc::new)
        });
        entry.as_mut().map_err(|e| e.clone())
    }

    /// Translates each request as one post; one result per request, in order. Posts of one pair
    /// are translated together.
    pub fn translate(&mut self, requests: &[Request]) -> Vec<Result<Translated, RecordError>> {
        let mut results: Vec<Option<Result<Translated, RecordError>>> = (0..requests.len()).map(|_| None).collect();
        let mut groups: Vec<((String, String), Vec<usize>)> = Vec::new();
        let mut detections: Vec<Option<Detection>> = vec![None; requests.len()];
        for (i, request) in requests.iter().enumerate() {
            let from = if request.from.eq_ignore_ascii_case(AUTO) {
                let Some(detector) = &self.detector else {
                    results[i] = Some(Err(RecordError::NoDetector));
                    continue;
                };
                let found = if self.html {
                    detector.detect(&crate::html::text_content(&request.text))
                } else {
                    detector.detect(&request.text)
                };
                let language = found.language.clone();
                let determined = found.is_determined();
                detections[i] = Some(found);
                if !determined {
                    results[i] =
                        Some(Ok(Translated { translation: request.text.clone(), detected: detections[i].take() }));
                    continue;
                }
                language
            } else {
                request.from.clone()
            };
            if tags_match(&from, &request.to) {
                results[i] = Some(Ok(Translated { translation: request.text.clone(), detected: detections[i].take() }));
                continue;
            }
            let key = (from, request.to.clone());
            match groups.iter_mut().find(|(k, _)| *k == key) {
                Some((_, members)) => members.push(i),
                None => groups.push((key, vec![i])),
            }
        }
        for ((from, to), members) in groups {
            let html = self.html;
            let posts: Vec<&str> = members.iter().map(|&i| requests[i].text.as_str()).collect();
            let outcome = self.get(&from, &to).and_then(|t| {
                if html {
                    Ok(posts
                        .iter()
                        .map(|p| crate::html::translate(p, |texts| t.translate_posts_aligned(texts)))
                        .collect())
                } else {
                    let translations = t.translate_posts(&posts).map_err(Arc::new)?;
                    Ok(translations.into_iter().map(Ok).collect::<Vec<_>>())
                }
            });
            let mut outcome = outcome.map(|v| v.into_iter().map(Some).collect::<Vec<_>>());
            for (k, &i) in members.iter().enumerate() {
                let detected = detections[i].take();
                results[i] = Some(match &mut outcome {
                    Ok(translations) => match translations[k].take() {
                        Some(Ok(translation)) => Ok(Translated { translation, detected }),
                        Some(Err(e)) => Err(RecordError::Html(e)),
                        // Each translation is taken once.
                        None => Err(RecordError::NoDetector),
                    },
                    Err(e) => Err(match detected {
                        Some(d) => RecordError::Detected {
                            language: d.language,
                            confidence: d.confidence,
                            to: to.clone(),
                            source: e.clone(),
                        },
                        None => RecordError::Translate(e.clone()),
                    }),
                });
            }
        }
        // Every request got its result above: unchanged, grouped, or an error.
        results.into_iter().map(|r| r.unwrap_or(Err(RecordError::NoDetector))).collect()
    }
}

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

crate::error::fault!(RecordError);

impl RecordError {
    pub fn is_usage(&self) -> bool {
        match self {
            RecordError::Detected { .. } | RecordError::NoDetector => true,
            RecordError::Translate(e) => e.is_usage(),
            RecordError::Html(e) => e.is_usage(),
        }
    }
}

/// Reads records from `input`, translates them (`from`/`to` unless a JSON record says
/// otherwise) and writes one output record per input record. With `interactive` each record is
/// written as soon as it is translated. `progress` is told how many records are done.
pub fn translate_stream(
    translators: &mut Translators,
    framing: Framing,
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
        let mut results = translators.translate(&requests).into_iter();
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
