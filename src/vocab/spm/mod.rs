//! SentencePiece in Rust: the library's encoding (unigram Viterbi or BPE merges over the
//! normalized text, unknown characters merged or spelled as byte pieces) and decoding, giving
//! the ids and text of the C++ library (sentencepiece_processor.cc, unigram_model.cc,
//! bpe_model.cc, normalizer.cc of sentencepiece 0.2) on the models Firefox's translations and
//! Llama-family checkpoints ship. Held to the library by goldens its Python binding wrote
//! (tests/fixtures/spm-goldens) and, with the `cpp-sentencepiece` feature, to the C++ library
//! itself on random text.

mod bpe;
mod normalize;
mod proto;
mod trie;
mod unigram;

#[cfg(all(test, feature = "cpp-sentencepiece"))]
mod random_text;
#[cfg(test)]
mod tests;

use std::collections::HashMap;
use std::ops::Range;

use proto::{ModelProto, Piece};
pub use proto::{ModelType, PieceType};
use trie::Trie;
pub use unigram::Arithmetic;

#[derive(Debug, thiserror::Error)]
pub enum SpmError {
    #[error("{0}")]
    Proto(String),
    #[error("{0}")]
    Model(String),
    #[error("id {0} is not in the vocabulary")]
    Id(u32),
}

/// One encoded piece: its id, its text and the bytes of the input it covers.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Encoded {
    pub id: u32,
    pub piece: String,
    pub span: Range<usize>,
}

/// A loaded model (SentencePieceProcessor).
#[derive(Clone, Debug)]
pub struct SentencePiece {
    pieces: Vec<Piece>,
    /// NORMAL, USER_DEFINED and UNUSED pieces: what encoding matches (the library's `pieces_`).
    trie: Trie,
    /// USER_DEFINED pieces: matched whole before normalization and BPE's splitting.
    user: Trie,
    /// The other pieces (control, unknown, byte) by text (`reserved_id_map_`).
    reserved: HashMap<String, u32>,
    normalizer: normalize::Normalizer,
    denormalizer: Option<normalize::Normalizer>,
    model_type: ModelType,
    byte_fallback: bool,
    unk: u32,
    unk_surface: String,
    /// The id of `<0xNN>` for each byte (the unknown id where a model lacks one).
    bytes: Vec<u32>,
    /// Which library version's arithmetic breaks the unigram model's rounding ties.
    arithmetic: Arithmetic,
    /// Unigram: the lowest and highest score of a NORMAL piece (the latter at least
    /// FLT_MIN, as the library starts it there).
    min_score: f32,
    max_score: f32,
    names: [String; 4],
}

impl SentencePiece {
    /// Reads a serialized `ModelProto`, with the checks of the library's loader.
    pub fn from_bytes(bytes: &[u8]) -> Result<SentencePiece, SpmError> {
        let m = ModelProto::parse(bytes)?;
        let bad = |why: String| Err(SpmError::Model(why));
        if m.pieces.is_empty() {
            return bad("it has no pieces".into());
        }
        match m.trainer.model_type {
            ModelType::Unigram | ModelType::Bpe => {}
            t => return bad(format!("its model type {t:?} is not supported (only unigram and BPE)")),
        }
        if m.trainer.treat_whitespace_as_suffix {
            return bad("treat_whitespace_as_suffix is not supported".into());
        }
        let mut reserved = HashMap::new();
        let mut normal = HashMap::new();
        let mut user = Vec::new();
        let mut unk = None;
        for (i, p) in m.pieces.iter().enumerate() {
            let id = i as u32;
            if p.text.is_empty() {
                return bad(format!("piece {i} is empty"));
            }
            let ordinary = matches!(p.kind, PieceType::Normal | PieceType::UserDefined | PieceType::Unused);
            let map = if ordinary { &mut normal } else { &mut reserved };
            if map.insert(p.text.clone(), id).is_some() {
                return bad(format!("piece {i} ({:?}) is defined twice", p.text));
            }
            match p.kind {
                PieceType::UserDefined => user.push((p.text.as_str(), id)),
                PieceType::Unknown if unk.is_some() => return bad("it defines two unknown pieces".into()),
                PieceType::Unknown => unk = Some(id),
                PieceType::Byte if !m.trainer.byte_fallback => {
                    return bad(format!("piece {i} is a byte piece but byte_fallback is off"));
                }
                _ => {}
            }
        }
        let Some(unk) = unk else { return bad("it defines no unknown piece".into()) };
        let trie = Trie::new(normal.iter().map(|(k, &id)| (k.as_str(), id)));
        let (mut min_score, mut max_score) = (f32::MAX, f32::MIN_POSITIVE);
        for p in m.pieces.iter().filter(|p| p.kind == PieceType::Normal) {
            min_score = min_score.min(p.score);
            max_score = max_score.max(p.score);
        }
        let user = Trie::new(user);
        let normalizer = normalize::Normalizer::new(m.normalizer.clone(), user.clone())?;
        let denormalizer = match m.denormalizer {
            Some(spec) if !spec.precompiled_charsmap.is_empty() => {
                Some(normalize::Normalizer::new(spec, Trie::default())?)
            }
            _ => None,
        };
        let mut sp = SentencePiece {
            pieces: m.pieces,
            trie,
            user,
            reserved,
            normalizer,
            denormalizer,
            model_type: m.trainer.model_type,
            byte_fallback: m.trainer.byte_fallback,
            unk,
            unk_surface: m.trainer.unk_surface,
            bytes: Vec::new(),
            arithmetic: Arithmetic::default(),
            min_score,
            max_score,
            names: [m.trainer.unk_piece, m.trainer.bos_piece, m.trainer.eos_piece, m.trainer.pad_piece],
        };
        sp.bytes = (0..=255u8).map(|b| sp.piece_to_id(&byte_piece(b))).collect();
        Ok(sp)
    }

    /// The same model, breaking the unigram model's rounding ties as another library version
    /// does (the default is sentencepiece 0.2.1's arithmetic, the engine's since it matched
    /// Bergamot; the goldens ask for 0.2.3's).
    pub fn with_arithmetic(mut self, arithmetic: Arithmetic) -> SentencePiece {
        self.arithmetic = arithmetic;
        self
    }

    /// Whether encoding puts `▁` in front of a text (the normalizer's `add_dummy_prefix`).
    pub fn adds_dummy_prefix(&self) -> bool {
        self.normalizer.spec().add_dummy_prefix
    }

    /// The same model with the normalizer's `add_dummy_prefix` and `remove_extra_whitespaces`
    /// off: encoding a piece of running text then gives pieces that spell exactly that text, with
    /// no `▁` added in front and spaces kept.
    pub fn for_continuations(&self) -> SentencePiece {
        SentencePiece { normalizer: self.normalizer.without_prefix_rules(), ..self.clone() }
    }

    pub fn len(&self) -> usize {
        self.pieces.len()
    }

    pub fn is_empty(&self) -> bool {
        self.pieces.is_empty()
    }

    pub fn model_type(&self) -> ModelType {
        self.model_type
    }

    pub fn piece_type(&self, id: u32) -> Option<PieceType> {
        self.pieces.get(id as usize).map(|p| p.kind)
    }

    pub fn id_to_piece(&self, id: u32) -> Option<&str> {
        self.pieces.get(id as usize).map(|p| p.text.as_str())
    }

    pub fn score(&self, id: u32) -> f32 {
        self.pieces.get(id as usize).map_or(0.0, |p| p.score)
    }

    /// The id of a piece's text; the unknown id for a text that is no piece (PieceToId).
    pub fn piece_to_id(&self, piece: &str) -> u32 {
        self.reserved.get(piece).copied().or_else(|| self.trie.get(piece.as_bytes())).unwrap_or(self.unk)
    }

    fn is(&self, id: u32, kind: PieceType) -> bool {
        self.piece_type(id) == Some(kind)
    }

    fn named(&self, which: usize, kind: PieceType) -> Option<u32> {
        let id = self.piece_to_id(&self.names[which]);
        self.is(id, kind).then_some(id)
    }

    pub fn unk_id(&self) -> u32 {
        self.unk
    }

    pub fn bos_id(&self) -> Option<u32> {
        self.named(1, PieceType::Control)
    }

    pub fn eos_id(&self) -> Option<u32> {
        self.named(2, PieceType::Control)
    }

    pub fn pad_id(&self) -> Option<u32> {
        self.named(3, PieceType::Control)
    }

    /// The normalized text (with `▁` for spaces) and the input byte of each of its bytes.
    pub fn normalize(&self, text: &str) -> (String, Vec<usize>) {
        let n = self.normalizer.normalize(text);
        (n.text, n.to_orig)
    }

    /// The ids of `text` (Encode → ids).
    pub fn encode_ids(&self, text: &str) -> Vec<u32> {
        let mut ids = Vec::with_capacity(text.len() / 3 + 2);
        self.encode_with(text, |id, _, _| ids.push(id));
        ids
    }

    /// The pieces of `text` with their spans in it (Encode → SentencePieceText).
    pub fn encode(&self, text: &str) -> Vec<Encoded> {
        let mut out: Vec<Encoded> = Vec::with_capacity(text.len() / 3 + 2);
        self.encode_with(text, |id, piece, span| out.push(Encoded { id, piece: piece.to_string(), span }));
        out
    }

    /// Encodes, calling `f(id, piece, span)` per piece of the result (PopulateSentencePieceText:
    /// byte pieces for unknown characters when the model has them, else runs of unknown
    /// characters as one unknown piece).
    fn encode_with(&self, text: &str, mut f: impl FnMut(u32, &str, Range<usize>)) {
        let n = self.normalizer.normalize(text);
        let raw = match self.model_type {
            ModelType::Bpe => self.bpe(&n.text),
            _ => self.unigram(&n.text),
        };
        let mut consumed = 0;
        // A run of unknown pieces waiting to be merged: (normalized range, span).
        let mut pending: Option<(Range<usize>, Range<usize>)> = None;
        let flush = |pending: &mut Option<(Range<usize>, Range<usize>)>, f: &mut dyn FnMut(u32, &str, Range<usize>)| {
            if let Some((r, span)) = pending.take() {
                f(self.unk, &n.text[r], span);
            }
        };
        for (len, id) in raw {
            let (begin, end) = (consumed, consumed + len);
            consumed = end;
            let span = n.to_orig[begin]..n.to_orig[end].max(n.to_orig[begin]);
            if self.is(id, PieceType::Control) {
                flush(&mut pending, &mut f);
                f(id, &n.text[begin..end], n.to_orig[begin]..n.to_orig[begin]);
            } else if id == self.unk && self.byte_fallback {
                flush(&mut pending, &mut f);
                let w = &n.text.as_bytes()[begin..end];
                for (i, &b) in w.iter().enumerate() {
                    let id = self.bytes[b as usize];
                    let s = if i + 1 == w.len() { span.clone() } else { span.start..span.start };
                    f(id, self.id_to_piece(id).unwrap_or(""), s);
                }
            } else if id == self.unk {
                match &mut pending {
                    Some((r, s)) => {
                        r.end = end;
                        s.end = span.end;
                    }
                    None => pending = Some((begin..end, span)),
                }
            } else {
                flush(&mut pending, &mut f);
                f(id, &n.text[begin..end], span);
            }
        }
        flush(&mut pending, &mut f);
    }

    /// The text of `ids` (Decode); an id past the vocabulary is an error.
    pub fn decode(&self, ids: &[u32]) -> Result<String, SpmError> {
        if let Some(&bad) = ids.iter().find(|&&i| i as usize >= self.pieces.len()) {
            return Err(SpmError::Id(bad));
        }
        let spec = self.normalizer.spec();
        let strip_first = spec.add_dummy_prefix || spec.remove_extra_whitespaces;
        let mut text = String::new();
        let mut bytes: Vec<u8> = Vec::new();
        let (mut is_bos_ws, mut bos_ws_seen) = (true, false);
        for &id in ids {
            // Decoding goes through the pieces' texts, as the library's does.
            let piece = &self.pieces[id as usize].text;
            let id = self.piece_to_id(piece);
            if self.is(id, PieceType::Byte) {
                bytes.push(piece_byte(piece).unwrap_or(0));
                continue;
            }
            push_bytes(&mut text, &mut bytes);
            if bos_ws_seen || !text.is_empty() {
                is_bos_ws = false;
            }
            let kind = self.piece_type(id);
            if kind == Some(PieceType::Control) {
                bos_ws_seen = false;
            } else if id == self.unk {
                bos_ws_seen = false;
                text.push_str(if self.pieces[id as usize].text == *piece { &self.unk_surface } else { piece });
            } else {
                let mut p = piece.as_str();
                bos_ws_seen = false;
                if is_bos_ws
                    && strip_first
                    && let Some(rest) = p.strip_prefix(normalize::SPACE)
                {
                    p = rest;
                    bos_ws_seen = !spec.remove_extra_whitespaces;
                }
                text.push_str(&p.replace(normalize::SPACE, " "));
            }
        }
        push_bytes(&mut text, &mut bytes);
        if let Some(d) = &self.denormalizer {
            text = d.normalize(&text).text;
        }
        Ok(text)
    }
}

/// `<0x41>` for 0x41.
fn byte_piece(b: u8) -> String {
    format!("<0x{b:02X}>")
}

/// The byte of a `<0xNN>` piece.
fn piece_byte(piece: &str) -> Option<u8> {
    let hex = piece.strip_prefix("<0x")?.strip_suffix('>')?;
    (hex.len() == 2).then(|| u8::from_str_radix(hex, 16).ok()).flatten()
}

/// Appends bytes from byte pieces: each complete UTF-8 character as itself, each byte that
/// starts none as U+FFFD (ProcessBytePieces).
fn push_bytes(text: &mut String, bytes: &mut Vec<u8>) {
    let mut rest = &bytes[..];
    while !rest.is_empty() {
        match std::str::from_utf8(rest) {
            Ok(s) => {
                text.push_str(s);
                break;
            }
            Err(e) => {
                let good = e.valid_up_to();
                text.push_str(std::str::from_utf8(&rest[..good]).unwrap_or_default());
                text.push('\u{FFFD}');
                rest = &rest[good + 1..];
            }
        }
    }
    bytes.clear();
}
