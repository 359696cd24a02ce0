//! What speculative decoding needs from a tokenizer, and byte-level helpers built on it.
//!
//! Text crosses between vocabularies as bytes, never as `String`: a byte-level BPE token can end
//! inside a multi-byte UTF-8 character (a Polish `ą` split over two tokens), and decoding such a
//! token alone gives U+FFFD. Each tokenizer therefore tells the exact bytes every token stands for.

/// A tokenizer's failure, passed through unchanged.
pub type TokenizerError = Box<dyn std::error::Error + Send + Sync>;

pub use crate::llm::tokenizer::Token;

/// A tokenizer as seen by speculative decoding.
pub trait TextTokenizer {
    /// Ids for `text`; with `add_special` the tokenizer's own additions (BOS) as its
    /// post-processor makes them.
    fn encode(&self, text: &str, add_special: bool) -> Result<Vec<u32>, TokenizerError>;

    /// Ids for text that continues earlier text: no special tokens, and no word-start marker
    /// added in front (SentencePiece-style tokenizers otherwise add `▁` to every fragment, so
    /// the rest of a word would be encoded as a new word).
    fn encode_continuation(&self, text: &str) -> Result<Vec<u32>, TokenizerError> {
        self.encode(text, false)
    }

    /// Text for ids as the tokenizer's own decoder makes it, special tokens skipped.
    fn decode(&self, ids: &[u32]) -> Result<String, TokenizerError>;

    /// What `id` stands for.
    fn token(&self, id: u32) -> Token<'_>;

    /// The id of a special token by its text (`</s>`, `<|im_end|>`), if the tokenizer has it.
    fn special_id(&self, content: &str) -> Option<u32>;

    /// Number of ids (the highest id + 1).
    fn len(&self) -> usize;

    fn is_empty(&self) -> bool {
        self.len() == 0
    }
}

/// The bytes of `id` if it is ordinary text.
pub fn text_bytes<T: TextTokenizer + ?Sized>(tok: &T, id: u32) -> Option<&[u8]> {
    match tok.token(id) {
        Token::Text(b) => Some(b),
        _ => None,
    }
}

/// The bytes of a run of ids; specials and unknown ids contribute nothing.
pub fn bytes_of<T: TextTokenizer + ?Sized>(tok: &T, ids: &[u32]) -> Vec<u8> {
    let mut out = Vec::new();
    for &id in ids {
        if let Some(b) = text_bytes(tok, id) {
            out.extend_from_slice(b);
        }
    }
    out
}

/// Whether two tokenizers give every id the same meaning, so ids can cross unchanged in both
/// directions (draft and target of one family, or Qwen checkpoints of different sizes).
pub fn same_vocabulary<A: TextTokenizer + ?Sized, B: TextTokenizer + ?Sized>(a: &A, b: &B) -> bool {
    a.len() == b.len() && (0..a.len() as u32).all(|id| a.token(id) == b.token(id))
}

/// Length of the longest prefix of `bytes` that is complete UTF-8 (an incomplete character at
/// the end is cut; an invalid sequence in the middle ends the prefix there).
pub fn complete_utf8_prefix(bytes: &[u8]) -> usize {
    match std::str::from_utf8(bytes) {
        Ok(_) => bytes.len(),
        Err(e) => e.valid_up_to(),
    }
}

/// Whether `b` can start a UTF-8 character (is not a continuation byte).
pub fn is_char_start(b: u8) -> bool {
    (b & 0b1100_0000) != 0b1000_0000
}

/// Whether a token's text starts a new word (leading whitespace), a good place to start
/// re-encoding because no merge reaches across it in the tokenizers used here.
pub fn starts_word(bytes: &[u8]) -> bool {
    bytes.first().is_some_and(|b| b.is_ascii_whitespace())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn utf8_tail_is_held_back() {
        let s = "ząb".as_bytes();
        assert_eq!(complete_utf8_prefix(s), s.len());
        assert_eq!(complete_utf8_prefix(&s[..2]), 1, "the first byte of ą alone is incomplete");
        assert_eq!(complete_utf8_prefix(&[b'a', 0x80, b'b']), 1, "a stray continuation byte ends the prefix");
    }

    #[test]
    fn char_starts_and_word_starts() {
        assert!(is_char_start(b'a') && is_char_start(0xC4) && !is_char_start(0x85));
        assert!(starts_word(b" word") && starts_word(b"\nx") && !starts_word(b"word") && !starts_word(b""));
    }
}
