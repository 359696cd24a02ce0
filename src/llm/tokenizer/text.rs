//! The tokenizer inside running text, as speculative decoding needs it: the exact bytes of every
//! token inside running text, special tokens by their text, and an encoder for text that
//! continues earlier text (no word-start marker in front of it).

use std::collections::HashMap;

use serde_json::Value;

use super::{Backend, Tokenizer};

/// What one id stands for.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Token<'a> {
    /// Ordinary text: the exact bytes inside running text (SentencePiece's `▁` as a space,
    /// byte-fallback pieces as their byte, byte-level BPE symbols as their bytes).
    Text(&'a [u8]),
    /// A control token (BOS, EOS, chat markers): never travels through text.
    Special(&'a str),
    /// An id the tokenizer does not have (e.g. padded embedding rows).
    Unknown,
}

enum Entry {
    Text { start: u32, end: u32 },
    Special(u32),
    Unknown,
}

/// Per id: what it stands for; built once, on first use.
pub(super) struct TokenTable {
    entries: Vec<Entry>,
    bytes: Vec<u8>,
    /// Texts of special tokens, indexed by `Entry::Special`.
    special_text: Vec<String>,
    specials: HashMap<String, u32>,
}

impl TokenTable {
    fn build(t: &Tokenizer) -> TokenTable {
        let mut table = TokenTable {
            entries: Vec::with_capacity(t.len()),
            bytes: Vec::new(),
            special_text: Vec::new(),
            specials: HashMap::new(),
        };
        for id in 0..t.len() as u32 {
            let Some(s) = t.id_to_token(id) else {
                table.entries.push(Entry::Unknown);
                continue;
            };
            if t.is_special(id) {
                table.specials.insert(s.clone(), id);
                table.entries.push(Entry::Special(table.special_text.len() as u32));
                table.special_text.push(s);
                continue;
            }
            // Non-special added tokens (Qwen's `<tool_call>`) are text, as the decoder treats
            // them. As a continuation, nothing is stripped that only a text's start loses.
            let b = t.decode_continuation(&[id], false);
            let start = table.bytes.len() as u32;
            table.bytes.extend_from_slice(&b);
            table.entries.push(Entry::Text { start, end: table.bytes.len() as u32 });
        }
        table
    }
}

impl Tokenizer {
    fn table(&self) -> &TokenTable {
        self.table.get_or_init(|| TokenTable::build(self))
    }

    /// Ids for `text` as it continues earlier text: no special tokens, no word-start marker in
    /// front (SentencePiece-style tokenizers otherwise mark every fragment as a new word).
    pub fn encode_continuation(&self, text: &str) -> super::Result<Vec<u32>> {
        match &self.backend {
            Backend::Hf { tok, cont, .. } => {
                Ok(cont.as_deref().unwrap_or(tok).encode(text, false).map_err(|e| self.err(e))?.get_ids().to_vec())
            }
            Backend::Spm { sp, cont, .. } => Ok(cont.as_deref().unwrap_or(sp).encode_ids(text)),
        }
    }
}

impl Tokenizer {
    /// What `id` stands for inside running text: its exact bytes, a special token's text, or
    /// nothing (ids past the vocabulary).
    pub fn token(&self, id: u32) -> Token<'_> {
        let t = self.table();
        match t.entries.get(id as usize) {
            Some(Entry::Text { start, end }) => Token::Text(&t.bytes[*start as usize..*end as usize]),
            Some(Entry::Special(i)) => Token::Special(&t.special_text[*i as usize]),
            _ => Token::Unknown,
        }
    }

    /// The id of the special token whose text is `content`.
    pub fn special_id(&self, content: &str) -> Option<u32> {
        self.table().specials.get(content).copied()
    }
}

/// A copy of the tokenizer that does not mark the start of a text as a word start, or None when
/// the tokenizer never does.
pub(super) fn continuation_pipeline(tok: &tokenizers::Tokenizer) -> Result<Option<tokenizers::Tokenizer>, String> {
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
    use std::path::{Path, PathBuf};

    use super::*;
    use crate::llm::tokenizer::read_tokenizer_config;

    /// The bytes of a run of ids as running text; specials and unknown ids give none.
    fn bytes_of(tok: &Tokenizer, ids: &[u32]) -> Vec<u8> {
        let mut out = Vec::new();
        for &id in ids {
            if let Token::Text(b) = tok.token(id) {
                out.extend_from_slice(b);
            }
        }
        out
    }

    const MODELS: [&str; 3] = ["llama3-tiny", "mistral-tiny", "qwen2-tiny"];

    fn dir(model: &str) -> PathBuf {
        Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/llm").join(model)
    }

    fn goldens(model: &str) -> Value {
        let p = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/llm/goldens").join(format!("{model}.json"));
        serde_json::from_slice(&std::fs::read(p).expect("golden file")).expect("golden json")
    }

    fn ids(v: &Value) -> Vec<u32> {
        v.as_array().expect("id list").iter().map(|x| x.as_u64().expect("id") as u32).collect()
    }

    #[test]
    fn token_bytes_join_to_the_decoded_text() {
        for model in MODELS {
            let tok = Tokenizer::from_dir(&dir(model)).unwrap();
            for p in goldens(model)["prompts"].as_array().expect("prompts") {
                let key = p["key"].as_str().unwrap_or("?");
                let plain = ids(&p["ids_no_special"]);
                let decoded = p["decode_skip_special"].as_str().expect("decode");
                assert_eq!(tok.decode(&plain, true).unwrap(), decoded, "{model} {key}");
                // Joined token bytes give the decoder's text, up to the one leading space that
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
        let m = Tokenizer::from_dir(&dir("mistral-tiny")).unwrap();
        let spm = Tokenizer::from_sentencepiece(
            &dir("mistral-tiny").join("tokenizer.model"),
            &read_tokenizer_config(&dir("mistral-tiny")).unwrap(),
        )
        .unwrap();
        let mut all: Vec<(String, Tokenizer)> =
            MODELS.iter().map(|m| (m.to_string(), Tokenizer::from_dir(&dir(m)).unwrap())).collect();
        all.push(("mistral sentencepiece".into(), spm));
        for (model, tok) in &all {
            for text in ["lita Polska", "ółć gęślą", "  two spaces", "x", "\ttab", "a  b "] {
                let ids = tok.encode_continuation(text).unwrap();
                assert_eq!(bytes_of(tok, &ids), text.as_bytes(), "{model}: {text:?} -> {ids:?}");
            }
        }
        // The ordinary encoding marks a fragment as a word start (the naive strategy's failure).
        assert_eq!(bytes_of(&m, &Tokenizer::encode(&m, "lita", false).unwrap()), b" lita");
    }

    #[test]
    fn specials_are_known_by_content() {
        let l = Tokenizer::from_dir(&dir("llama3-tiny")).unwrap();
        assert_eq!(l.special_id("<|eot_id|>"), Some(128009));
        assert_eq!(l.token(128000), Token::Special("<|begin_of_text|>"));
        assert_eq!(l.len(), 128256);
        let q = Tokenizer::from_dir(&dir("qwen2-tiny")).unwrap();
        assert_eq!(q.special_id("<|im_end|>"), Some(151645));
        assert!(matches!(q.token(151657), Token::Text(_)), "<tool_call> is an added token that is not special");
        assert_eq!(q.token(151_700), Token::Unknown, "padded embedding rows are no tokens");
        let m = Tokenizer::from_dir(&dir("mistral-tiny")).unwrap();
        assert_eq!(m.token(0x0A + 3), Token::Text(b"\n"), "byte-fallback piece <0x0A>");
        assert_eq!(m.token(28705), Token::Text(b" "), "the lone word-start piece keeps its space");
        assert_eq!(m.special_id("</s>"), Some(2));
    }
}
