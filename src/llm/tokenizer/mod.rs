//! Tokenizers of checkpoint folders, encoding and decoding as Transformers does:
//! `tokenizer.json` through the `tokenizers` library, else `tokenizer.model` through
//! SentencePiece; `tokenizer_config.json` for the special tokens and BOS/EOS rules.
//!
//! Beyond Transformers' `encode`/`decode`, cross-tokenizer drafting needs: decoding to bytes
//! (a token may end inside a UTF-8 character), decoding a continuation (without what a decoder
//! strips at the start of a text), and encoding a text fragment with special-token text taken
//! as plain text and no BOS.

mod bytes;
mod spm;
mod text;
pub use text::Token;

use std::collections::HashMap;
use std::path::{Path, PathBuf};

use serde_json::Value;

use super::{Error, Result};
use crate::vocab::spm::{PieceType, SentencePiece};
use bytes::ByteDecoder;
use spm::piece_bytes;

/// The special tokens a tokenizer declares.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct SpecialTokens {
    pub bos: Option<u32>,
    pub eos: Option<u32>,
    pub unk: Option<u32>,
    pub pad: Option<u32>,
    /// Their texts, by Transformers' names (`bos_token`, `eos_token`, `unk_token`,
    /// `pad_token`), for chat templates.
    pub texts: Vec<(String, String)>,
}

enum Backend {
    Hf {
        tok: Box<tokenizers::Tokenizer>,
        /// The same with special-token text matched as plain text (fragments).
        plain: Box<tokenizers::Tokenizer>,
        /// The same without a word-start marker in front of a text (continuations), when the
        /// tokenizer adds one.
        cont: Option<Box<tokenizers::Tokenizer>>,
        bytes: Option<ByteDecoder>,
    },
    Spm {
        sp: Box<SentencePiece>,
        /// The same model without the dummy `▁` prefix and whitespace clean-up (continuations).
        cont: Option<Box<SentencePiece>>,
        add_bos: bool,
        add_eos: bool,
    },
}

/// A checkpoint's tokenizer.
pub struct Tokenizer {
    path: PathBuf,
    backend: Backend,
    /// Per id: skipped by `skip_special_tokens`.
    special: Vec<bool>,
    specials: SpecialTokens,
    /// Every id's bytes inside running text, built on first use (speculative decoding only).
    table: std::sync::OnceLock<text::TokenTable>,
}

impl std::fmt::Debug for Tokenizer {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Tokenizer").field("path", &self.path).field("len", &self.len()).finish()
    }
}

/// A special token entry of `tokenizer_config.json`: a string or `{"content": ...}`.
fn token_text(v: Option<&Value>) -> Option<String> {
    match v? {
        Value::String(s) => Some(s.clone()),
        Value::Object(o) => o.get("content").and_then(Value::as_str).map(str::to_string),
        _ => None,
    }
}

/// Reads `tokenizer_config.json` (and `special_tokens_map.json` for what it lacks); missing
/// files are empty objects.
pub fn read_tokenizer_config(dir: &Path) -> Result<Value> {
    let mut cfg = read_json_or_empty(&dir.join("tokenizer_config.json"))?;
    let map = read_json_or_empty(&dir.join("special_tokens_map.json"))?;
    if let (Some(c), Some(m)) = (cfg.as_object_mut(), map.as_object()) {
        for (k, v) in m {
            c.entry(k.clone()).or_insert(v.clone());
        }
    }
    Ok(cfg)
}

fn read_json_or_empty(path: &Path) -> Result<Value> {
    match std::fs::read(path) {
        Ok(b) => serde_json::from_slice(&b).map_err(|e| Error::Json { path: path.to_path_buf(), source: e }),
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(Value::Object(Default::default())),
        Err(source) => Err(Error::Io { path: path.to_path_buf(), source }),
    }
}

impl Tokenizer {
    /// Loads the tokenizer of a checkpoint folder.
    pub fn from_dir(dir: &Path) -> Result<Tokenizer> {
        let config = read_tokenizer_config(dir)?;
        let json = dir.join("tokenizer.json");
        if json.is_file() {
            return Self::from_json(&json, &config);
        }
        let model = dir.join("tokenizer.model");
        if model.is_file() {
            return Self::from_sentencepiece(&model, &config);
        }
        Err(Error::Tokenizer {
            path: dir.to_path_buf(),
            msg: "no tokenizer.json or tokenizer.model in the checkpoint folder".into(),
        })
    }

    /// A `tokenizer.json`, with the rules of a `tokenizer_config.json`.
    pub fn from_json(path: &Path, config: &Value) -> Result<Tokenizer> {
        let err = |msg: String| Error::Tokenizer { path: path.to_path_buf(), msg };
        let raw = std::fs::read(path).map_err(|source| Error::Io { path: path.to_path_buf(), source })?;
        let mut tok = tokenizers::Tokenizer::from_bytes(&raw).map_err(|e| err(e.to_string()))?;
        let json: Value =
            serde_json::from_slice(&raw).map_err(|e| Error::Json { path: path.to_path_buf(), source: e })?;
        let bytes = json.get("decoder").and_then(ByteDecoder::from_json);

        let id_of = |name: &str| token_text(config.get(name)).and_then(|t| tok.token_to_id(&t));
        let specials = SpecialTokens {
            bos: id_of("bos_token"),
            eos: id_of("eos_token"),
            unk: id_of("unk_token"),
            pad: id_of("pad_token"),
            texts: special_texts(config),
        };
        apply_bos_eos_rules(&mut tok, config, &specials).map_err(err)?;

        let len = tok.get_vocab_size(true);
        let mut special = vec![false; len];
        for (id, t) in tok.get_added_tokens_decoder() {
            if t.special && (id as usize) < len {
                special[id as usize] = true;
            }
        }
        let mut plain = tok.clone();
        plain.set_encode_special_tokens(true);
        let cont = text::continuation_pipeline(&tok).map_err(err)?.map(Box::new);
        Ok(Tokenizer {
            path: path.to_path_buf(),
            backend: Backend::Hf { tok: Box::new(tok), plain: Box::new(plain), cont, bytes },
            special,
            specials,
            table: Default::default(),
        })
    }

    /// A SentencePiece `tokenizer.model` (BOS/EOS from `add_bos_token`/`add_eos_token`,
    /// defaulting to BOS only as Llama's tokenizer does).
    pub fn from_sentencepiece(path: &Path, config: &Value) -> Result<Tokenizer> {
        let err = |msg: String| Error::Tokenizer { path: path.to_path_buf(), msg };
        let raw = std::fs::read(path).map_err(|source| Error::Io { path: path.to_path_buf(), source })?;
        let sp = SentencePiece::from_bytes(&raw).map_err(|e| err(e.to_string()))?;
        let piece_id = |name: &str| token_text(config.get(name)).and_then(|t| piece_to_id(&sp, &t));
        let specials = SpecialTokens {
            bos: piece_id("bos_token").or(sp.bos_id()),
            eos: piece_id("eos_token").or(sp.eos_id()),
            unk: piece_id("unk_token").or(Some(sp.unk_id())),
            pad: piece_id("pad_token").or(sp.pad_id()),
            texts: special_texts(config),
        };
        let mut special: Vec<bool> =
            (0..sp.len() as u32).map(|id| sp.piece_type(id) == Some(PieceType::Control)).collect();
        for id in [specials.bos, specials.eos, specials.unk, specials.pad].into_iter().flatten() {
            if let Some(s) = special.get_mut(id as usize) {
                *s = true;
            }
        }
        let flag = |k: &str, d: bool| config.get(k).and_then(Value::as_bool).unwrap_or(d);
        let cont = Some(Box::new(sp.for_continuations()));
        Ok(Tokenizer {
            path: path.to_path_buf(),
            backend: Backend::Spm {
                sp: Box::new(sp),
                cont,
                add_bos: flag("add_bos_token", true),
                add_eos: flag("add_eos_token", false),
            },
            special,
            specials,
            table: Default::default(),
        })
    }

    /// The file the tokenizer was read from.
    pub fn path(&self) -> &Path {
        &self.path
    }

    /// Tokens in the vocabulary, added tokens included.
    pub fn len(&self) -> usize {
        self.special.len()
    }

    pub fn is_empty(&self) -> bool {
        self.special.is_empty()
    }

    pub fn special_tokens(&self) -> &SpecialTokens {
        &self.specials
    }

    /// Whether `skip_special_tokens` drops this id (special added tokens, control pieces).
    pub fn is_special(&self, id: u32) -> bool {
        self.special.get(id as usize).copied().unwrap_or(false)
    }

    /// `tokenizer(text, add_special_tokens=...)["input_ids"]`: special-token text in `text`
    /// is matched as special tokens, as Transformers does.
    pub fn encode(&self, text: &str, add_special_tokens: bool) -> Result<Vec<u32>> {
        match &self.backend {
            Backend::Hf { tok, .. } => {
                Ok(tok.encode(text, add_special_tokens).map_err(|e| self.err(e))?.get_ids().to_vec())
            }
            Backend::Spm { sp, add_bos, add_eos, .. } => {
                let mut ids = sp.encode_ids(text);
                if add_special_tokens {
                    if let (true, Some(b)) = (*add_bos, self.specials.bos) {
                        ids.insert(0, b);
                    }
                    if let (true, Some(e)) = (*add_eos, self.specials.eos) {
                        ids.push(e);
                    }
                }
                Ok(ids)
            }
        }
    }

    /// Encodes a piece of running text: no BOS/EOS, and special-token text (`<|im_end|>`, `<s>`)
    /// stays plain text, so text can never smuggle a control token in.
    pub fn encode_fragment(&self, text: &str) -> Result<Vec<u32>> {
        match &self.backend {
            Backend::Hf { plain, .. } => Ok(plain.encode(text, false).map_err(|e| self.err(e))?.get_ids().to_vec()),
            Backend::Spm { .. } => self.encode(text, false),
        }
    }

    /// `tokenizer.decode(ids, skip_special_tokens=...)`, without clean-up of spaces (as
    /// Transformers 5 and the `tokenizers` library decode).
    pub fn decode(&self, ids: &[u32], skip_special_tokens: bool) -> Result<String> {
        match &self.backend {
            Backend::Hf { tok, .. } => tok.decode(ids, skip_special_tokens).map_err(|e| self.err(e)),
            Backend::Spm { .. } => {
                Ok(String::from_utf8_lossy(&self.decode_bytes(ids, skip_special_tokens)).into_owned())
            }
        }
    }

    /// [`Tokenizer::decode`] as bytes, without replacing incomplete UTF-8 sequences.
    pub fn decode_bytes(&self, ids: &[u32], skip_special_tokens: bool) -> Vec<u8> {
        self.bytes_of(ids, skip_special_tokens, false)
    }

    /// The bytes `ids` add when they follow earlier tokens: like [`Tokenizer::decode_bytes`]
    /// but without what decoders strip at the start of a text (SentencePiece's leading space).
    pub fn decode_continuation(&self, ids: &[u32], skip_special_tokens: bool) -> Vec<u8> {
        self.bytes_of(ids, skip_special_tokens, true)
    }

    fn bytes_of(&self, ids: &[u32], skip: bool, continuation: bool) -> Vec<u8> {
        let kept = ids.iter().copied().filter(|&id| !(skip && self.is_special(id)));
        match &self.backend {
            Backend::Hf { tok, bytes, .. } => {
                let tokens: Vec<String> = kept.filter_map(|id| tok.id_to_token(id)).collect();
                match bytes {
                    Some(d) => d.decode(&tokens.iter().map(String::as_str).collect::<Vec<_>>(), continuation),
                    None => {
                        // A decoder chain we do not replay: the library's string is the best
                        // there is.
                        let ids: Vec<u32> = ids.iter().copied().filter(|&id| !(skip && self.is_special(id))).collect();
                        tok.decode(&ids, false).unwrap_or_default().into_bytes()
                    }
                }
            }
            Backend::Spm { sp, .. } => {
                let mut out = Vec::new();
                for id in kept {
                    out.extend(piece_bytes(sp, id, !skip));
                }
                if sp.adds_dummy_prefix() && !continuation && out.first() == Some(&b' ') {
                    out.remove(0);
                }
                out
            }
        }
    }

    /// The token's own string (`Ġword`, `▁word`, `<0xC5>`), as `convert_ids_to_tokens`.
    pub fn id_to_token(&self, id: u32) -> Option<String> {
        match &self.backend {
            Backend::Hf { tok, .. } => tok.id_to_token(id),
            Backend::Spm { sp, .. } => sp.id_to_piece(id).map(str::to_string),
        }
    }

    pub fn token_to_id(&self, token: &str) -> Option<u32> {
        match &self.backend {
            Backend::Hf { tok, .. } => tok.token_to_id(token),
            Backend::Spm { sp, .. } => piece_to_id(sp, token),
        }
    }

    fn err(&self, e: impl std::fmt::Display) -> Error {
        Error::Tokenizer { path: self.path.clone(), msg: e.to_string() }
    }
}

/// The id of a piece's text; None for the unknown piece and a text that is no piece (the
/// library answers the unknown id for both).
fn piece_to_id(sp: &SentencePiece, piece: &str) -> Option<u32> {
    Some(sp.piece_to_id(piece)).filter(|&id| id != sp.unk_id())
}

fn special_texts(config: &Value) -> Vec<(String, String)> {
    ["bos_token", "eos_token", "unk_token", "pad_token"]
        .into_iter()
        .filter_map(|k| token_text(config.get(k)).map(|t| (k.to_string(), t)))
        .collect()
}

/// Transformers (4.42+) rebuilds a fast tokenizer's post-processor when
/// `tokenizer_config.json` sets `add_bos_token`/`add_eos_token`: the text gets BOS before and EOS
/// after as asked. Done here only where it changes what `tokenizer.json` alone would do.
fn apply_bos_eos_rules(
    tok: &mut tokenizers::Tokenizer,
    config: &Value,
    specials: &SpecialTokens,
) -> std::result::Result<(), String> {
    let add_bos = config.get("add_bos_token").and_then(Value::as_bool);
    let add_eos = config.get("add_eos_token").and_then(Value::as_bool);
    if add_bos.is_none() && add_eos.is_none() {
        return Ok(());
    }
    let probe = |tok: &tokenizers::Tokenizer| -> std::result::Result<(bool, bool), String> {
        let with = tok.encode("a", true).map_err(|e| e.to_string())?;
        let without = tok.encode("a", false).map_err(|e| e.to_string())?;
        let (w, wo) = (with.get_ids(), without.get_ids());
        Ok((
            w.len() > wo.len() && w.first() == specials.bos.as_ref(),
            w.len() > wo.len() && w.last() == specials.eos.as_ref(),
        ))
    };
    let (has_bos, has_eos) = probe(tok)?;
    let want_bos = add_bos.unwrap_or(has_bos);
    let want_eos = add_eos.unwrap_or(has_eos);
    if (want_bos, want_eos) == (has_bos, has_eos) {
        return Ok(());
    }
    let text = |id: Option<u32>, what: &str| -> std::result::Result<(String, u32), String> {
        let id =
            id.ok_or_else(|| format!("tokenizer_config.json asks for add_{what}_token but has no {what}_token"))?;
        Ok((tok.id_to_token(id).unwrap_or_default(), id))
    };
    let mut single = Vec::new();
    let mut pieces: HashMap<String, u32> = HashMap::new();
    if want_bos {
        let (t, id) = text(specials.bos, "bos")?;
        single.push(format!("{t}:0"));
        pieces.insert(t, id);
    }
    single.push("$A:0".into());
    if want_eos {
        let (t, id) = text(specials.eos, "eos")?;
        single.push(format!("{t}:0"));
        pieces.insert(t, id);
    }
    let mut pair = single.clone();
    pair.extend(single.iter().map(|s| s.replace("$A", "$B").replace(":0", ":1")));
    let tp = tokenizers::processors::template::TemplateProcessing::builder()
        .try_single(single.join(" "))
        .and_then(|b| b.try_pair(pair.join(" ")))
        .map_err(|e| e.to_string())?
        .special_tokens(pieces.into_iter().collect::<Vec<_>>())
        .build()
        .map_err(|e| e.to_string())?;
    tok.with_post_processor(Some(tp));
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn fixtures() -> PathBuf {
        Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/llm")
    }

    fn golden(model: &str) -> Value {
        serde_json::from_slice(&std::fs::read(fixtures().join(format!("goldens/{model}.json"))).unwrap()).unwrap()
    }

    fn ids(v: &Value) -> Vec<u32> {
        v.as_array().unwrap().iter().map(|x| x.as_u64().unwrap() as u32).collect()
    }

    #[test]
    fn encodes_and_decodes_every_golden_prompt_as_transformers() {
        for model in ["llama3-tiny", "mistral-tiny", "qwen2-tiny"] {
            let t = Tokenizer::from_dir(&fixtures().join(model)).unwrap();
            let g = golden(model);
            assert_eq!(t.len() as u64, g["tokenizer_len"].as_u64().unwrap(), "{model}");
            assert_eq!(t.special_tokens().bos.map(u64::from), g["bos_token_id"].as_u64(), "{model}");
            for p in g["prompts"].as_array().unwrap() {
                let (key, text) = (p["key"].as_str().unwrap(), p["prompt"].as_str().unwrap());
                let (with, without) = (ids(&p["ids_with_special"]), ids(&p["ids_no_special"]));
                assert_eq!(t.encode(text, true).unwrap(), with, "{model} {key} with special tokens");
                assert_eq!(t.encode(text, false).unwrap(), without, "{model} {key} without");
                assert_eq!(
                    t.decode(&without, false).unwrap(),
                    p["decode_no_special"].as_str().unwrap(),
                    "{model} {key}"
                );
                assert_eq!(
                    t.decode(&with, false).unwrap(),
                    p["decode_with_special"].as_str().unwrap(),
                    "{model} {key}"
                );
                assert_eq!(t.decode(&with, true).unwrap(), p["decode_skip_special"].as_str().unwrap(), "{model} {key}");
                let toks: Vec<String> = without.iter().map(|&i| t.id_to_token(i).unwrap()).collect();
                assert_eq!(Value::from(toks), p["tokens_no_special"], "{model} {key}");
                // Bytes agree with the library's text wherever the text is valid UTF-8.
                for (list, skip) in [(&with, false), (&with, true), (&without, false)] {
                    let b = t.decode_bytes(list, skip);
                    assert_eq!(String::from_utf8(b).unwrap(), t.decode(list, skip).unwrap(), "{model} {key}");
                }
                if let Some(new) = p["model"]["greedy"]["new_ids"].as_array() {
                    let new: Vec<u32> = new.iter().map(|x| x.as_u64().unwrap() as u32).collect();
                    let text = t.decode(&new, false).unwrap();
                    assert_eq!(text, p["model"]["greedy"]["new_text"].as_str().unwrap(), "{model} {key} greedy");
                    let b = t.decode_bytes(&new, false);
                    if let Ok(s) = String::from_utf8(b.clone()) {
                        assert_eq!(s, text, "{model} {key} greedy bytes");
                    } else if model != "mistral-tiny" {
                        assert_eq!(String::from_utf8_lossy(&b), text, "{model} {key} greedy bytes");
                    }
                }
            }
        }
    }

    #[test]
    fn continuation_bytes_concatenate_to_the_whole() {
        for model in ["llama3-tiny", "mistral-tiny", "qwen2-tiny"] {
            let t = Tokenizer::from_dir(&fixtures().join(model)).unwrap();
            let ids = t.encode("Zażółć gęślą jaźń, a potem kot.", false).unwrap();
            for cut in 1..ids.len() {
                let mut b = t.decode_bytes(&ids[..cut], false);
                b.extend(t.decode_continuation(&ids[cut..], false));
                assert_eq!(b, t.decode_bytes(&ids, false), "{model} cut {cut}");
            }
        }
    }

    #[test]
    fn fragments_never_become_special_tokens() {
        let t = Tokenizer::from_dir(&fixtures().join("qwen2-tiny")).unwrap();
        let text = "a<|im_end|>b";
        assert!(t.encode(text, false).unwrap().contains(&151645));
        let f = t.encode_fragment(text).unwrap();
        assert!(!f.iter().any(|&i| t.is_special(i)), "{f:?}");
        assert_eq!(t.decode(&f, false).unwrap(), text);
        let l = Tokenizer::from_dir(&fixtures().join("llama3-tiny")).unwrap();
        assert_eq!(l.encode_fragment("kot").unwrap(), l.encode("kot", false).unwrap());
        assert!(!l.encode_fragment("x").unwrap().contains(&128000));
    }

    #[test]
    fn sentencepiece_model_matches_its_goldens() {
        let dir = fixtures().join("mistral-tiny");
        let t =
            Tokenizer::from_sentencepiece(&dir.join("tokenizer.model"), &read_tokenizer_config(&dir).unwrap()).unwrap();
        let g: Value =
            serde_json::from_slice(&std::fs::read(fixtures().join("goldens/mistral-sentencepiece.json")).unwrap())
                .unwrap();
        for row in g["rows"].as_array().unwrap() {
            let text = row["text"].as_str().unwrap();
            let want = ids(&row["sentencepiece_ids"]);
            assert_eq!(t.encode(text, false).unwrap(), want, "{text:?}");
            assert_eq!(t.encode(text, true).unwrap()[0], 1);
            assert_eq!(t.decode(&want, true).unwrap(), row["sentencepiece_decode"].as_str().unwrap(), "{text:?}");
        }
    }

    #[test]
    fn missing_and_broken_tokenizers_are_named_errors() {
        let dir = tempfile::tempdir().unwrap();
        let e = Tokenizer::from_dir(dir.path()).unwrap_err().to_string();
        assert!(e.contains("no tokenizer.json"), "{e}");
        let src = std::fs::read(fixtures().join("mistral-tiny/tokenizer.json")).unwrap();
        for len in [0, 10, src.len() / 2] {
            std::fs::write(dir.path().join("tokenizer.json"), &src[..len]).unwrap();
            let e = Tokenizer::from_dir(dir.path()).unwrap_err().to_string();
            assert!(e.contains("tokenizer.json"), "{e}");
        }
        std::fs::remove_file(dir.path().join("tokenizer.json")).unwrap();
        std::fs::write(dir.path().join("tokenizer.model"), b"\x0a\x05hello").unwrap();
        assert!(Tokenizer::from_dir(dir.path()).unwrap_err().to_string().contains("tokenizer.model"));
        std::fs::write(dir.path().join("tokenizer_config.json"), b"{oops").unwrap();
        assert!(Tokenizer::from_dir(dir.path()).unwrap_err().to_string().contains("tokenizer_config.json"));
    }
}
