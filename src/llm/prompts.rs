//! Prompt files: one prompt per line, or JSON Lines with a `prompt` field or an `instruction`
//! field (pl_alpaca: `instruction`, optional `input`, which is appended after a blank line).
//! A file whose first non-blank line starts with `{` is JSON Lines. Blank lines are skipped in
//! both forms (a line holding only spaces is a prompt in the plain form).

use std::io::Read;
use std::path::Path;

use serde_json::Value;

use super::{Error, Result};

/// A prompt and the line it came from (1-based).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Prompt {
    pub line: usize,
    pub text: String,
}

/// Reads a prompt file (`-`: standard input).
pub fn read(path: &Path) -> Result<Vec<Prompt>> {
    let mut raw = Vec::new();
    let io = |source| Error::Io { path: path.to_path_buf(), source };
    if path == Path::new("-") {
        std::io::stdin().read_to_end(&mut raw).map_err(io)?;
    } else {
        raw = std::fs::read(path).map_err(io)?;
    }
    parse(&raw, path)
}

/// Parses the bytes of a prompt file named `path`.
pub fn parse(raw: &[u8], path: &Path) -> Result<Vec<Prompt>> {
    let err = |line: usize, msg: String| Error::Prompts { path: path.to_path_buf(), line, msg };
    let mut lines = Vec::new();
    for (i, l) in raw.split(|b| *b == b'\n').enumerate() {
        let l = l.strip_suffix(b"\r").unwrap_or(l);
        let text = std::str::from_utf8(l).map_err(|e| err(i + 1, format!("not UTF-8 ({e})")))?;
        lines.push((i + 1, text));
    }
    let jsonl = lines.iter().find(|(_, l)| !l.trim().is_empty()).is_some_and(|(_, l)| l.trim_start().starts_with('{'));
    let mut out = Vec::new();
    for (line, text) in lines {
        if text.is_empty() || (jsonl && text.trim().is_empty()) {
            continue;
        }
        if !jsonl {
            out.push(Prompt { line, text: text.to_string() });
            continue;
        }
        let v: Value = serde_json::from_str(text).map_err(|e| err(line, format!("not a JSON object: {e}")))?;
        let field = |k: &str| v.get(k).and_then(Value::as_str);
        let prompt = if let Some(p) = field("prompt") {
            p.to_string()
        } else if let Some(ins) = field("instruction") {
            match field("input").filter(|s| !s.trim().is_empty()) {
                Some(input) => format!("{ins}\n\n{input}"),
                None => ins.to_string(),
            }
        } else {
            return Err(err(line, "has neither a \"prompt\" nor an \"instruction\" string field".into()));
        };
        out.push(Prompt { line, text: prompt });
    }
    if out.is_empty() {
        return Err(err(0, "no prompts in the file".into()));
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn p(s: &[u8]) -> Result<Vec<Prompt>> {
        parse(s, Path::new("p.txt"))
    }

    #[test]
    fn plain_lines() {
        let got = p(b"Ala ma kota\r\n\n \nZa\xc5\xbc\n").unwrap();
        let texts: Vec<_> = got.iter().map(|x| (x.line, x.text.as_str())).collect();
        assert_eq!(texts, vec![(1, "Ala ma kota"), (3, " "), (4, "Zaż")]);
    }

    #[test]
    fn json_lines_with_prompt_or_instruction() {
        let got = p(b"{\"prompt\": \"a\\nb\"}\n\n{\"instruction\": \"Wymie\xc5\x84\", \"input\": \"x\", \"output\": \"y\"}\n{\"instruction\": \"z\", \"input\": \"\"}\n").unwrap();
        let texts: Vec<_> = got.iter().map(|x| x.text.as_str()).collect();
        assert_eq!(texts, vec!["a\nb", "Wymień\n\nx", "z"]);
    }

    #[test]
    fn errors_name_the_line() {
        let e = p(b"{\"prompt\": \"a\"}\n{\"text\": 1}\n").unwrap_err().to_string();
        assert!(e.contains("p.txt: line 2") && e.contains("instruction"), "{e}");
        let e = p(b"{\"prompt\": \"a\"}\n{oops\n").unwrap_err().to_string();
        assert!(e.contains("line 2"), "{e}");
        assert!(p(b"ok\n\xff\xfe\n").unwrap_err().to_string().contains("line 2"));
        assert!(p(b"\n\n").is_err());
    }
}
