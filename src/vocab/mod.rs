//! SentencePiece vocabularies: text → piece ids for the encoder, ids → text after the decoder.
//!
//! Firefox models use `bos_id = -1`, `eos_id = 0` (`</s>`), `unk_id = 1`. Marian appends `</s>` to
//! every source sentence and never emits a BOS, so the same here.

pub mod spm;
pub mod synthetic;

use std::ops::Range;
use std::path::{Path, PathBuf};

use spm::SentencePiece;

#[derive(Debug, thiserror::Error)]
pub enum VocabError {
    #[error("cannot read the vocabulary {path}")]
    Read { path: PathBuf, source: std::io::Error },
    #[error("{path} is not a SentencePiece model ({reason}); re-download the model folder")]
    Parse { path: PathBuf, reason: String },
    #[error("{path}: {reason}")]
    Unusable { path: PathBuf, reason: String },
    #[error("SentencePiece failed on {what}: {reason}")]
    Codec { what: &'static str, reason: String },
}

crate::error::fault!(VocabError);

impl VocabError {
    /// A vocabulary is part of a model folder: only a file that is not there (or not allowed)
    /// is the caller's fault (see [`crate::error`]).
    pub fn is_usage(&self) -> bool {
        match self {
            VocabError::Read { source, .. } => crate::paths::unreadable_by_name(source),
            VocabError::Parse { .. } | VocabError::Unusable { .. } | VocabError::Codec { .. } => false,
        }
    }
}

/// One SentencePiece model.
pub struct Vocab {
    spm: SentencePiece,
    size: usize,
    eos: u32,
    unk: u32,
    path: PathBuf,
    /// Sentences encoded so far: how a test shows that each is encoded once.
    #[cfg(test)]
    encodes: std::sync::atomic::AtomicUsize,
}

/// A sentence's piece ids as the encoder takes them (without `</s>`), with the bytes of the
/// text each covers when they were asked for (what alignment needs).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Pieces {
    pub ids: Vec<u32>,
    pub spans: Option<Vec<Range<usize>>>,
}

impl std::fmt::Debug for Vocab {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Vocab").field("path", &self.path).field("size", &self.size).finish()
    }
}

impl Vocab {
    /// Reads a vocabulary file.
    pub fn open(path: &Path) -> Result<Vocab, VocabError> {
        let bytes = std::fs::read(path).map_err(|source| VocabError::Read { path: path.into(), source })?;
        Vocab::from_bytes(&bytes, path)
    }

    /// Parses a serialized SentencePiece model; `path` only names it in errors.
    pub fn from_bytes(bytes: &[u8], path: &Path) -> Result<Vocab, VocabError> {
        let bad = |reason: String| VocabError::Parse { path: path.into(), reason };
        if bytes.is_empty() {
            return Err(bad("the file is empty".into()));
        }
        let spm = SentencePiece::from_bytes(bytes).map_err(|e| bad(e.to_string()))?;
        let size = spm.len();
        let unusable = |reason: String| VocabError::Unusable { path: path.into(), reason };
        if size < 2 {
            return Err(unusable(format!("it has {size} pieces")));
        }
        // Marian's own fallback when a vocabulary declares no EOS is `</s>` = 0.
        let eos = spm.eos_id().unwrap_or(0);
        let unk = spm.unk_id();
        if eos as usize >= size || unk as usize >= size {
            return Err(unusable(format!("eos id {eos} or unk id {unk} is outside its {size} pieces")));
        }
        Ok(Vocab {
            spm,
            size,
            eos,
            unk,
            path: path.into(),
            #[cfg(test)]
            encodes: Default::default(),
        })
    }

    pub fn len(&self) -> usize {
        self.size
    }

    pub fn is_empty(&self) -> bool {
        self.size == 0
    }

    pub fn eos(&self) -> u32 {
        self.eos
    }

    pub fn unk(&self) -> u32 {
        self.unk
    }

    pub fn path(&self) -> &Path {
        &self.path
    }

    /// The piece ids of a sentence, without the final `</s>`.
    pub fn encode(&self, text: &str) -> Result<Vec<u32>, VocabError> {
        self.counted();
        Ok(self.spm.encode_ids(text))
    }

    /// The piece ids of a sentence with the bytes of `text` each covers, without `</s>`.
    pub fn encode_spans(&self, text: &str) -> Result<Vec<(u32, Range<usize>)>, VocabError> {
        self.counted();
        Ok(self.spm.encode(text).into_iter().map(|p| (p.id, p.span)).collect())
    }

    /// The pieces of a sentence as the engine decodes them, with their spans if `spans`: the one
    /// encoding shared by whoever encodes a sentence first (the text pipeline counting pieces, or
    /// the engine).
    pub fn pieces(&self, text: &str, spans: bool) -> Result<Pieces, VocabError> {
        if spans {
            let (ids, spans) = self.encode_spans(text)?.into_iter().unzip();
            Ok(Pieces { ids, spans: Some(spans) })
        } else {
            Ok(Pieces { ids: self.encode(text)?, spans: None })
        }
    }

    /// Sentences this vocabulary has encoded.
    #[cfg(test)]
    pub(crate) fn encodes(&self) -> usize {
        self.encodes.load(std::sync::atomic::Ordering::Relaxed)
    }

    fn counted(&self) {
        #[cfg(test)]
        self.encodes.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
    }

    /// The bytes of `self.decode(ids)` each id gives, in order: piece `i` is what decoding
    /// `ids[..=i]` adds to decoding `ids[..i]` (a piece that decodes to nothing, or to part of
    /// a character, gets an empty range there).
    pub fn decode_spans(&self, ids: &[u32]) -> Result<(String, Vec<Range<usize>>), VocabError> {
        let text = self.decode(ids)?;
        let mut spans = Vec::with_capacity(ids.len());
        let mut end = 0;
        for i in 0..ids.len() {
            let prefix = self.decode(&ids[..=i])?;
            // A prefix that ends inside a byte sequence decodes to U+FFFD, not to a prefix of
            // the whole; its piece gets nothing and the next one the bytes.
            let next = if text.starts_with(&prefix) { prefix.len().max(end) } else { end };
            spans.push(end..next);
            end = next;
        }
        if let Some(last) = spans.last_mut() {
            last.end = text.len().max(last.start);
        }
        Ok((text, spans))
    }

    /// The pieces of a sentence as strings (for `--debug` output and tests).
    pub fn encode_pieces(&self, text: &str) -> Result<Vec<String>, VocabError> {
        self.counted();
        Ok(self.spm.encode(text).into_iter().map(|p| p.piece).collect())
    }

    /// Text of output ids. `</s>` and other control pieces decode to nothing; byte pieces are
    /// joined into UTF-8 (an incomplete sequence becomes U+FFFD), as in Marian.
    pub fn decode(&self, ids: &[u32]) -> Result<String, VocabError> {
        // SentencePiece rejects ids it does not know; the engine never produces them, but a model
        // whose output layer is larger than its vocabulary would.
        if let Some(bad) = ids.iter().find(|&&i| i as usize >= self.size) {
            return Err(VocabError::Codec { what: "decoding", reason: format!("id {bad} is not in the vocabulary") });
        }
        self.spm.decode(ids).map_err(|e| VocabError::Codec { what: "decoding", reason: e.to_string() })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn fixture() -> PathBuf {
        Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/tiny-esen/vocab.esen.spm")
    }

    #[test]
    fn encodes_like_python_sentencepiece() {
        let v = Vocab::open(&fixture()).unwrap();
        assert_eq!((v.len(), v.eos(), v.unk()), (8000, 0, 1));
        // First line of refs/heldout.es and its ids from python sentencepiece 0.2.3.
        let ids = v.encode("Espero que esto pueda entrar en vigor en julio de 2010.").unwrap();
        assert_eq!(ids, vec![3674, 283, 451, 1370, 2868, 284, 2691, 284, 3596, 277, 279, 319, 294, 304, 294, 274]);
        assert_eq!(v.decode(&[3674, 283, 0]).unwrap(), "Espero que");
        assert!(v.decode(&[9000]).is_err());
    }

    #[test]
    fn garbage_and_truncation_are_errors() {
        let bytes = std::fs::read(fixture()).unwrap();
        let p = Path::new("x.spm");
        assert!(Vocab::from_bytes(&[], p).is_err());
        for cut in [1, 10, 100, 1000, bytes.len() / 2, bytes.len() - 1] {
            // A cut protobuf either fails to parse or loses pieces; it must not crash.
            if let Ok(v) = Vocab::from_bytes(&bytes[..cut], p) {
                assert!(v.len() < 8000);
            }
        }
        let mut seed = 7u64;
        for len in [4usize, 64, 4096] {
            for _ in 0..20 {
                let noise: Vec<u8> = (0..len)
                    .map(|_| {
                        seed = seed.wrapping_mul(6364136223846793005).wrapping_add(1);
                        (seed >> 33) as u8
                    })
                    .collect();
                let _ = Vocab::from_bytes(&noise, p);
            }
        }
    }
}
