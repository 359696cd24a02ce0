//! [`TextTokenizer`] for Hugging Face `tokenizer.json` files, through the `tokenizers` crate.
//!
//! Two things the crate does not offer directly are built here once at load:
//! - the exact bytes of every token, by running the file's decoder steps on each token alone
//!   (`ByteLevel` maps symbols back to bytes, `ByteFallback` turns `<0xC5>` into the byte,
//!   `Replace`/`Metaspace` turn `▁` into a space). Sequence-level steps (`Strip` of the first
//!   space, `Fuse`) do not change a token's bytes inside running text and are skipped;
//! - a second pipeline for continuation fragments, with the word-start marker switched off
//!   (`Metaspace` `prepend_scheme: never`, no `Prepend` normalizer, no ByteLevel prefix space).

use std::collections::HashMap;
use std::path::{Path, PathBuf};

use serde_json::Value;
use tokenizers::Tokenizer;

use super::tokenizer::{TextTokenizer, Token, TokenizerError};

#[derive(Debug, thiserror::Error)]
pub enum HfTokenizerError {
    #[error("cannot load tokenizer {path}: {message}")]
    Load { path: PathBuf, message: String },
    #[error(
        "tokenizer {path}: decoder step {step} is not supported for byte-exact token text; use a tokenizer.json with ByteLevel, ByteFallback, Replace (string pattern), Metaspace, Fuse or Strip decoders"
    )]
    UnsupportedDecoder { path: PathBuf, step: String },
}

enum Entry {
    Text { start: u32, end: u32 },
    Special(String),
    Unknown,
}

/// A `tokenizer.json` with per-token bytes.
pub struct HfTokenizer {
    tok: Tokenizer,
    /// The pipeline for continuation fragments, when it differs from `tok`.
    cont: Option<Tokenizer>,
    entries: Vec<Entry>,
    bytes: Vec<u8>,
    specials: HashMap<String, u32>,
}

impl HfTokenizer {
    pub fn from_file(path: &Path) -> Result<HfTokenizer, HfTokenizerError> {
        let load = |message: String| HfTokenizerError::Load { path: path.to_path_buf(), message };
        let tok = Tokenizer::from_file(path).map_err(|e| load(e.to_string()))?;
        HfTokenizer::new(tok, path)
    }

    /// Wraps an already loaded tokenizer; `path` only names it in errors.
    pub fn new(tok: Tokenizer, path: &Path) -> Result<HfTokenizer, HfTokenizerError> {
        let load = |message: String| HfTokenizerError::Load { path: path.to_path_buf(), message };
        let steps = decoder_steps(&tok, path)?;
        let added = tok.get_added_tokens_decoder();
        let len = tok.get_vocab(true).values().map(|&id| id as usize + 1).max().unwrap_or(0);
        let mut entries = Vec::with_capacity(len);
        let mut bytes = Vec::new();
        let mut specials = HashMap::new();
        for id in 0..len as u32 {
            if let Some(a) = added.get(&id).filter(|a| a.special) {
                specials.insert(a.content.clone(), id);
                entries.push(Entry::Special(a.content.clone()));
                continue;
            }
            let Some(s) = tok.id_to_token(id) else {
                entries.push(Entry::Unknown);
                continue;
            };
            // Non-special added tokens (Qwen's `<tool_call>`) go through the decoder like any
            // token, as the crate's own decode does.
            let b = apply_steps(&steps, &s);
            let start = bytes.len() as u32;
            bytes.extend_from_slice(&b);
            entries.push(Entry::Text { start, end: bytes.len() as u32 });
        }
        let cont = continuation_pipeline(&tok).map_err(load)?;
        Ok(HfTokenizer { tok, cont, entries, bytes, specials })
    }

    /// The wrapped tokenizer (for chat templates and anything else the engine needs).
    pub fn inner(&self) -> &Tokenizer {
        &self.tok
    }
}

impl TextTokenizer for HfTokenizer {
    fn encode(&self, text: &str, add_special: bool) -> Result<Vec<u32>, TokenizerError> {
        Ok(self.tok.encode(text, add_special)?.get_ids().to_vec())
    }

    fn encode_continuation(&self, text: &str) -> Result<Vec<u32>, TokenizerError> {
        Ok(self.cont.as_ref().unwrap_or(&self.tok).encode(text, false)?.get_ids().to_vec())
    }

    fn decode(&self, ids: &[u32]) -> Result<String, TokenizerError> {
        self.tok.decode(ids, true)
    }

    fn token(&self, id: u32) -> Token<'_> {
        match self.entries.get(id as usize) {
            Some(Entry::Text { start, end }) => Token::Text(&self.bytes[*start as usize..*end as usize]),
            Some(Entry::Special(s)) => Token::Special(s),
            _ => Token::Unknown,
        }
    }

    fn special_id(&self, content: &str) -> Option<u32> {
        self.specials.get(content).copied()
    }

    fn len(&self) -> usize {
        self.entries.len()
    }
}

/// One per-token decoder step.
enum Step {
    ByteLevel,
    ByteFallback,
    Replace { from: String, to: String },
}

fn decoder_steps(tok: &Tokenizer, path: &Path) -> Result<Vec<Step>, HfTokenizerError> {
    let Some(dec) = tok.get_decoder() else { return Ok(Vec::new()) };
    let v =
        serde_json::to_value(dec).map_err(|e| HfTokenizerError::Load { path: path.into(), message: e.to_string() })?;
    let mut steps = Vec::new();
    collect_steps(&v, &mut steps, path)?;
    Ok(steps)
}

fn collect_steps(v: &Value, steps: &mut Vec<Step>, path: &Path) -> Result<(), HfTokenizerError> {
    let ty = v.get("type").and_then(Value::as_str).unwrap_or("");
    let unsupported = || HfTokenizerError::UnsupportedDecoder { path: path.into(), step: ty.to_string() };
    match ty {
        "Sequence" => {
            for d in v.get("decoders").and_then(Value::as_array).into_iter().flatten() {
                collect_steps(d, steps, path)?;
            }
        }
        "ByteLevel" => steps.push(Step::ByteLevel),
        "ByteFallback" => steps.push(Step::ByteFallback),
        "Fuse" | "Strip" => {}
        "Replace" => {
            let from = v.pointer("/pattern/String").and_then(Value::as_str).ok_or_else(unsupported)?;
            let to = v.get("content").and_then(Value::as_str).ok_or_else(unsupported)?;
            steps.push(Step::Replace { from: from.into(), to: to.into() });
        }
        "Metaspace" => {
            let from = v.get("replacement").and_then(Value::as_str).unwrap_or("\u{2581}");
            steps.push(Step::Replace { from: from.into(), to: " ".into() });
        }
        _ => return Err(unsupported()),
    }
    Ok(())
}

fn apply_steps(steps: &[Step], token: &str) -> Vec<u8> {
    let mut cur = token.as_bytes().to_vec();
    for step in steps {
        // Steps after a byte-producing step see text only if it is still valid UTF-8, as in the
        // crate, where a byte token is kept aside until the end.
        let Ok(s) = std::str::from_utf8(&cur) else { continue };
        cur = match step {
            Step::ByteLevel => {
                s.chars().map(gpt2_byte).collect::<Option<Vec<u8>>>().unwrap_or_else(|| s.as_bytes().to_vec())
            }
            Step::ByteFallback => match byte_piece(s) {
                Some(b) => vec![b],
                None => continue,
            },
            Step::Replace { from, to } => s.replace(from.as_str(), to).into_bytes(),
        };
    }
    cur
}

/// `<0xC5>` → 0xC5.
fn byte_piece(s: &str) -> Option<u8> {
    let hex = s.strip_prefix("<0x")?.strip_suffix('>')?;
    if hex.len() != 2 {
        return None;
    }
    u8::from_str_radix(hex, 16).ok()
}

/// The byte behind a GPT-2 byte-level symbol: printable Latin-1 bytes stand for themselves, the
/// other 68 bytes were shifted to U+0100.. in order.
fn gpt2_byte(c: char) -> Option<u8> {
    let printable = |b: u32| (0x21..=0x7E).contains(&b) || (0xA1..=0xAC).contains(&b) || (0xAE..=0xFF).contains(&b);
    let cp = c as u32;
    if printable(cp) {
        return Some(cp as u8);
    }
    let n = cp.checked_sub(256)?;
    (0..=255u32).filter(|&b| !printable(b)).nth(n as usize).map(|b| b as u8)
}

/// A copy of the tokenizer that does not mark the start of a fragment as a word start, or None
/// when the tokenizer never does.
fn continuation_pipeline(tok: &Tokenizer) -> Result<Option<Tokenizer>, String> {
    let mut changed = false;
    let mut out = tok.clone();
    if let Some(pre) = tok.get_pre_tokenizer() {
        let mut v = serde_json::to_value(pre).map_err(|e| e.to_string())?;
        if no_word_start(&mut v) {
            changed = true;
            let pre = serde_json::from_value::<tokenizers::PreTokenizerWrapper>(v).map_err(|e| e.to_string())?;
            out.with_pre_tokenizer(Some(pre));
        }
    }
    if let Some(norm) = tok.get_normalizer() {
        let v = serde_json::to_value(norm).map_err(|e| e.to_string())?;
        if let Some(v2) = without_prepend(&v) {
            changed = true;
            let norm = match v2 {
                Value::Null => None,
                v2 => Some(serde_json::from_value::<tokenizers::NormalizerWrapper>(v2).map_err(|e| e.to_string())?),
            };
            out.with_normalizer(norm).map_err(|e| e.to_string())?;
        }
    }
    Ok(changed.then_some(out))
}

/// Switches off word-start markers in a pre-tokenizer description; true if anything changed.
fn no_word_start(v: &mut Value) -> bool {
    let mut changed = false;
    match v {
        Value::Object(m) => {
            if m.get("prepend_scheme").and_then(Value::as_str).is_some_and(|s| s != "never") {
                m.insert("prepend_scheme".into(), Value::String("never".into()));
                changed = true;
            }
            if m.get("add_prefix_space") == Some(&Value::Bool(true)) {
                m.insert("add_prefix_space".into(), Value::Bool(false));
                changed = true;
            }
            for (_, child) in m.iter_mut() {
                changed |= no_word_start(child);
            }
        }
        Value::Array(a) => {
            for child in a {
                changed |= no_word_start(child);
            }
        }
        _ => {}
    }
    changed
}

/// The normalizer without `Prepend` steps (Llama-2-style files add `▁` there), or None when it
/// has none. `Value::Null` means no normalizer at all.
fn without_prepend(v: &Value) -> Option<Value> {
    match v.get("type").and_then(Value::as_str) {
        Some("Prepend") => Some(Value::Null),
        Some("Sequence") => {
            let list = v.get("normalizers")?.as_array()?;
            let kept: Vec<Value> =
                list.iter().filter(|n| n.get("type").and_then(Value::as_str) != Some("Prepend")).cloned().collect();
            if kept.len() == list.len() {
                return None;
            }
            let mut v = v.clone();
            v["normalizers"] = Value::Array(kept);
            Some(v)
        }
        _ => None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::speculate::tokenizer::bytes_of;

    fn fixture(model: &str) -> HfTokenizer {
        let p = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/llm").join(model).join("tokenizer.json");
        HfTokenizer::from_file(&p).expect("fixture tokenizer loads")
    }

    fn goldens(model: &str) -> Value {
        let p = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/llm/goldens").join(format!("{model}.json"));
        serde_json::from_slice(&std::fs::read(p).expect("golden file")).expect("golden json")
    }

    fn ids(v: &Value) -> Vec<u32> {
        v.as_array().expect("id list").iter().map(|x| x.as_u64().expect("id") as u32).collect()
    }

    #[test]
    fn gpt2_byte_map_is_a_bijection() {
        let mut seen = [false; 256];
        for cp in 0x21..0x200u32 {
            if let Some(b) = char::from_u32(cp).and_then(gpt2_byte) {
                assert!(!seen[b as usize], "byte {b} mapped twice");
                seen[b as usize] = true;
            }
        }
        assert!(seen.iter().all(|&s| s));
        assert_eq!(gpt2_byte('Ġ'), Some(b' '));
        assert_eq!(gpt2_byte('Ċ'), Some(b'\n'));
    }

    #[test]
    fn encodings_and_token_bytes_match_the_goldens() {
        for model in ["llama3-tiny", "mistral-tiny", "qwen2-tiny"] {
            let tok = fixture(model);
            let g = goldens(model);
            for p in g["prompts"].as_array().expect("prompts") {
                let text = p["prompt"].as_str().expect("prompt");
                let key = p["key"].as_str().unwrap_or("?");
                assert_eq!(tok.encode(text, true).unwrap(), ids(&p["ids_with_special"]), "{model} {key}");
                let plain = ids(&p["ids_no_special"]);
                assert_eq!(tok.encode(text, false).unwrap(), plain, "{model} {key}");
                let decoded = p["decode_skip_special"].as_str().expect("decode");
                assert_eq!(tok.decode(&plain).unwrap(), decoded, "{model} {key}");
                // Token bytes joined give the decoder's text, up to the one leading space that
                // mistral's decoder strips at the start of a sequence.
                let joined = String::from_utf8_lossy(&bytes_of(&tok, &plain)).into_owned();
                let joined = if model == "mistral-tiny" {
                    joined.strip_prefix(' ').map(str::to_owned).unwrap_or(joined)
                } else {
                    joined
                };
                assert_eq!(joined, decoded, "{model} {key}");
            }
        }
    }

    #[test]
    fn continuation_fragments_keep_their_exact_bytes() {
        for model in ["llama3-tiny", "mistral-tiny", "qwen2-tiny"] {
            let tok = fixture(model);
            for text in ["lita Polska", "ółć gęślą", "  two spaces", "x", "\ttab"] {
                let ids = tok.encode_continuation(text).unwrap();
                assert_eq!(bytes_of(&tok, &ids), text.as_bytes(), "{model}: {text:?} -> {ids:?}");
            }
        }
        // The ordinary encoding marks a fragment as a word start in mistral (the naive failure).
        let m = fixture("mistral-tiny");
        assert_eq!(bytes_of(&m, &m.encode("lita", false).unwrap()), b" lita");
    }

    #[test]
    fn specials_are_known_by_content() {
        let l = fixture("llama3-tiny");
        assert_eq!(l.special_id("<|eot_id|>"), Some(128009));
        assert_eq!(l.token(128000), Token::Special("<|begin_of_text|>"));
        assert_eq!(l.len(), 128256);
        let q = fixture("qwen2-tiny");
        assert_eq!(q.special_id("<|im_end|>"), Some(151645));
        assert!(matches!(q.token(151657), Token::Text(_)), "<tool_call> is an added token that is not special");
        assert_eq!(q.token(151_700), Token::Unknown);
        let m = fixture("mistral-tiny");
        assert_eq!(m.token(0x0A + 3), Token::Text(b"\n"), "byte-fallback piece <0x0A>");
        assert_eq!(m.special_id("</s>"), Some(2));
    }
}
