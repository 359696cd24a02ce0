//! The `special:model.yml` text embedded in every Marian model: the architecture options.
//!
//! Marian writes it with yaml-cpp as a flat map: `key: scalar`, `key: []`/`[a, b]`, or `key:`
//! followed by indented `- item` lines. This reader accepts exactly that shape (plus comments and
//! quoting) and keeps every key; the config layer picks the ones it needs and ignores the rest, so
//! options added by newer Marian versions do not break loading.

use std::collections::BTreeMap;

/// A value of the flat map.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Value {
    Scalar(String),
    List(Vec<String>),
    /// A nested mapping or anything else this reader does not interpret; kept so the key exists.
    Other,
}

/// What is wrong with the text, with its 1-based line number.
#[derive(Debug, thiserror::Error, PartialEq, Eq)]
#[error("model.yml line {line}: {message}")]
pub struct YmlError {
    pub line: usize,
    pub message: String,
}

crate::error::fault!(YmlError);

impl YmlError {
    /// A damaged model.yml, never the caller's fault.
    pub fn is_usage(&self) -> bool {
        false
    }
}

fn unquote(s: &str) -> String {
    let s = s.trim();
    if s.len() >= 2 && ((s.starts_with('"') && s.ends_with('"')) || (s.starts_with('\'') && s.ends_with('\''))) {
        let inner = &s[1..s.len() - 1];
        if s.starts_with('"') {
            return inner.replace("\\\"", "\"").replace("\\\\", "\\");
        }
        return inner.replace("''", "'");
    }
    s.to_string()
}

/// Cuts a trailing `# comment` that is outside quotes.
fn strip_comment(line: &str) -> &str {
    let mut quote: Option<char> = None;
    let mut prev_space = true;
    for (i, ch) in line.char_indices() {
        match quote {
            Some(q) if ch == q => quote = None,
            Some(_) => {}
            None if ch == '"' || ch == '\'' => quote = Some(ch),
            None if ch == '#' && prev_space => return &line[..i],
            None => {}
        }
        prev_space = ch.is_whitespace();
    }
    line
}

fn flow_list(s: &str) -> Vec<String> {
    let inner = s.trim().trim_start_matches('[').trim_end_matches(']');
    inner.split(',').map(unquote).filter(|v| !v.is_empty()).collect()
}

/// Parses the text into its top-level keys.
pub fn parse(text: &str) -> Result<BTreeMap<String, Value>, YmlError> {
    let mut map = BTreeMap::new();
    let mut open: Option<String> = None; // key waiting for indented content
    for (n, raw) in text.lines().enumerate() {
        let line_no = n + 1;
        let line = strip_comment(raw.trim_end_matches('\r'));
        if line.trim().is_empty() || line.trim() == "---" || line.trim() == "..." {
            continue;
        }
        let indented = line.starts_with(' ') || line.starts_with('\t') || line.trim_start().starts_with("- ");
        if indented {
            let key = open.as_ref().ok_or_else(|| YmlError {
                line: line_no,
                message: format!("indented line {:?} belongs to no key", line.trim()),
            })?;
            let t = line.trim();
            let entry = map.entry(key.clone()).or_insert(Value::Other);
            match t.strip_prefix('-') {
                Some(item) => match entry {
                    Value::List(items) => items.push(unquote(item)),
                    _ => *entry = Value::List(vec![unquote(item)]),
                },
                // A nested mapping (not used by Marian models): remember only that it exists.
                None => *entry = Value::Other,
            }
            continue;
        }
        let (key, value) = line.split_once(':').ok_or_else(|| YmlError {
            line: line_no,
            message: format!("expected `key: value`, found {:?}", line.trim()),
        })?;
        let key = unquote(key);
        if key.is_empty() {
            return Err(YmlError { line: line_no, message: "empty key".into() });
        }
        let value = value.trim();
        let v = if value.is_empty() {
            open = Some(key.clone());
            Value::Other
        } else {
            open = None;
            if value.starts_with('[') {
                if !value.ends_with(']') {
                    return Err(YmlError { line: line_no, message: format!("unclosed list {value:?}") });
                }
                Value::List(flow_list(value))
            } else if value.starts_with('{') {
                Value::Other
            } else {
                Value::Scalar(unquote(value))
            }
        };
        map.insert(key, v);
    }
    Ok(map)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn reads_marian_style() {
        let text = "dec-depth: 2\ndim-vocabs:\n  - 8000\n  - 8000\ninput-types: []\nlemma-dependency: \"\"\n\
                    separator-symbol: \"[eos]\" # comment\ntransformer-preprocess: \"\"\nversion: v1.12 b7 2025\n";
        let m = parse(text).unwrap();
        assert_eq!(m["dec-depth"], Value::Scalar("2".into()));
        assert_eq!(m["dim-vocabs"], Value::List(vec!["8000".into(), "8000".into()]));
        assert_eq!(m["input-types"], Value::List(vec![]));
        assert_eq!(m["lemma-dependency"], Value::Scalar(String::new()));
        assert_eq!(m["separator-symbol"], Value::Scalar("[eos]".into()));
        assert_eq!(m["version"], Value::Scalar("v1.12 b7 2025".into()));
    }

    #[test]
    fn flow_lists_and_nested_maps() {
        let m = parse("dim-vocabs: [32000, 32000]\nnested:\n  a: 1\n  b: 2\nx: y\n").unwrap();
        assert_eq!(m["dim-vocabs"], Value::List(vec!["32000".into(), "32000".into()]));
        assert_eq!(m["nested"], Value::Other);
        assert_eq!(m["x"], Value::Scalar("y".into()));
    }

    #[test]
    fn garbage_is_an_error_with_a_line() {
        let e = parse("a: 1\nthis is not yaml\n").unwrap_err();
        assert_eq!(e.line, 2);
        assert!(parse("  - orphan\n").is_err());
        assert!(parse("a: [1, 2\n").is_err());
    }
}
