//! A translator without a model, for tests and for trying the pipeline: it transforms each
//! segment in a way a test can undo or predict, and can misbehave on purpose (drop or rename
//! mentions and hashtags, fail, return too few translations).

use super::{SegmentTranslator, TranslatorError, hashtags, mentions};

/// What a [`StandIn`] does to each segment.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum StandInMode {
    /// Returns the segment unchanged.
    Identity,
    /// Returns `⟦segment⟧`, so that a test can see where segments were cut.
    Bracket,
    /// Upper-cases ASCII letters (as a model would change every word, links and handles included).
    AsciiUpper,
    /// Returns the segment with line breaks for spaces and spacing around it: a sloppy model.
    Messy,
    /// Renames every mention to `@someone` (as many mentions as the source).
    RenameMentions,
    /// Removes every mention (fewer mentions than the source).
    DropMentions,
    /// Renames every hashtag to `#tag`.
    RenameHashtags,
    /// Removes every hashtag.
    DropHashtags,
    /// Fails.
    Fail,
    /// Returns one translation fewer than asked for.
    TooFew,
}

/// A stand-in translator; it counts one token per run of letters and digits and one per other
/// visible character, and records every batch it was given.
#[derive(Clone, Debug)]
pub struct StandIn {
    pub mode: StandInMode,
    pub max_tokens: usize,
    /// Every batch of segments it was asked to translate, in order.
    pub batches: Vec<Vec<String>>,
}

impl StandIn {
    pub fn new(mode: StandInMode) -> StandIn {
        StandIn { mode, max_tokens: 64, batches: Vec::new() }
    }

    pub fn identity() -> StandIn {
        StandIn::new(StandInMode::Identity)
    }

    pub fn ascii_upper() -> StandIn {
        StandIn::new(StandInMode::AsciiUpper)
    }

    /// The same with another token limit.
    pub fn with_max_tokens(mut self, max_tokens: usize) -> StandIn {
        self.max_tokens = max_tokens;
        self
    }

    fn one(&self, segment: &str) -> String {
        match self.mode {
            StandInMode::Identity | StandInMode::Fail | StandInMode::TooFew => segment.to_string(),
            StandInMode::Bracket => format!("⟦{segment}⟧"),
            StandInMode::AsciiUpper => segment.to_ascii_uppercase(),
            StandInMode::Messy => format!(" \t{}\r\n ", segment.replace(' ', "\n")),
            StandInMode::RenameMentions => replace(segment, mentions::find(segment), "@someone"),
            StandInMode::DropMentions => replace(segment, mentions::find(segment), ""),
            StandInMode::RenameHashtags => replace(segment, hashtags::find(segment), "#tag"),
            StandInMode::DropHashtags => replace(segment, hashtags::find(segment), ""),
        }
    }
}

fn replace(text: &str, spans: Vec<std::ops::Range<usize>>, with: &str) -> String {
    mentions::replace_in_order(text, &spans, std::iter::repeat(with))
}

impl SegmentTranslator for StandIn {
    fn translate(&mut self, segments: &[&str]) -> Result<Vec<String>, TranslatorError> {
        self.batches.push(segments.iter().map(|s| s.to_string()).collect());
        if self.mode == StandInMode::Fail {
            return Err("the stand-in translator fails on purpose".into());
        }
        let mut out: Vec<String> = segments.iter().map(|s| self.one(s)).collect();
        if self.mode == StandInMode::TooFew {
            out.pop();
        }
        Ok(out)
    }

    fn token_count(&self, segment: &str) -> usize {
        let mut count = 0;
        let mut in_word = false;
        for c in segment.chars() {
            if c.is_alphanumeric() {
                count += usize::from(!in_word);
                in_word = true;
            } else {
                count += usize::from(!c.is_whitespace());
                in_word = false;
            }
        }
        count
    }

    fn max_tokens(&self) -> usize {
        self.max_tokens
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn counts_words_and_symbols() {
        let s = StandIn::identity();
        assert_eq!(s.token_count(""), 0);
        assert_eq!(s.token_count("hola, mundo 3.5 👍🏽"), 8);
    }

    #[test]
    fn misbehaves_as_asked() {
        let seg = ["Hola @ana y #UE"];
        let run = |mode| StandIn::new(mode).translate(&seg).unwrap().remove(0);
        assert_eq!(run(StandInMode::RenameMentions), "Hola @someone y #UE");
        assert_eq!(run(StandInMode::DropMentions), "Hola  y #UE");
        assert_eq!(run(StandInMode::RenameHashtags), "Hola @ana y #tag");
        assert_eq!(run(StandInMode::DropHashtags), "Hola @ana y ");
        assert_eq!(run(StandInMode::Bracket), "⟦Hola @ana y #UE⟧");
        assert!(StandIn::new(StandInMode::Fail).translate(&seg).is_err());
        assert!(StandIn::new(StandInMode::TooFew).translate(&seg).unwrap().is_empty());
    }
}
