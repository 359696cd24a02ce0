//! Where sentences longer than the model's limit are cut: the one home of both cutting rules.
//!
//! A model takes at most `max_length_break − 1` source pieces at a time ([`limit`]; Firefox's
//! models: 127 of `max-length-break` 128). Longer text is translated in pieces, cut by one of two
//! rules:
//!
//! - [`cut`], the text pipeline's rule, for every sentence of a post (`translate`, `serve`,
//!   `bench translate`, `--raw` and `--no-split` included): the cut goes at the last sensible
//!   point that fits: after clause punctuation (`;:.!?…`, and `。！？；：` in scripts without
//!   spaces), else after a comma (`,，、`), else at a space, and only in a word that is longer
//!   than the limit by itself at a grapheme boundary. A clause or comma cut is preferred to a
//!   later space when its piece is at least half as long. Pieces are counted by the translator's
//!   own encoding, and the pieces it counted are the ones the engine decodes, so a segment the
//!   pipeline made never reaches the engine over the limit (except a single grapheme that is).
//! - [`chunks`], Bergamot's rule, for what reaches the engine over the limit all the same: the
//!   English text of a pivot's first stage, the sentences of a caller that skips the pipeline
//!   (`Translator::translate_sentences`) and a lone grapheme over the limit. It cuts the piece
//!   ids every `limit` pieces, wherever that falls (mid-word), as Firefox does; the engine applies
//!   it to whatever it decodes, which leaves a segment the pipeline cut whole.

use std::ops::Range;

use unicode_segmentation::UnicodeSegmentation;

/// A possible cut: the piece ends at `end` and the next one starts at `next` (after the spacing).
#[derive(Clone, Copy, Debug)]
struct Cut {
    end: usize,
    next: usize,
    /// 0 clause, 1 comma, 2 space: lower is better.
    rank: u8,
}

/// Cuts `text` (no line breaks, no spacing at its ends) into pieces of at most `max` tokens as
/// counted by `count`, returned as byte ranges in order; the text between two is their gap.
/// A single grapheme longer than `max` tokens still makes a piece of its own. Every piece is
/// counted whole (once), so a translator that keeps what it counted has each piece's tokens.
pub(crate) fn cut(text: &str, max: usize, count: impl Fn(&str) -> usize) -> Vec<Range<usize>> {
    let mut pieces = Vec::new();
    let mut start = 0;
    // No piece of `max` tokens is longer than this, so nothing beyond it is ever counted: a
    // megabyte without a space costs a bounded number of token counts per piece.
    let window = max.saturating_mul(MAX_BYTES_PER_TOKEN);
    while start < text.len() {
        let rest = &text[start..];
        if rest.len() <= window && count(rest) <= max {
            pieces.push(start..text.len());
            return pieces;
        }
        // The prefixes of `rest` counted while choosing, by their end.
        let probed = std::cell::RefCell::new(Vec::new());
        let count = |prefix: &str| {
            probed.borrow_mut().push(prefix.len());
            count(prefix)
        };
        let cuts = candidates(rest, window);
        // Token counts grow with the prefix, so the fitting cuts come first.
        let fitting = cuts.partition_point(|c| count(&rest[..c.end]) <= max);
        let chosen = match fitting.checked_sub(1) {
            Some(last) => {
                let longest = cuts[last].end;
                *cuts[..fitting]
                    .iter()
                    .filter(|c| c.end * 2 >= longest)
                    .min_by_key(|c| (c.rank, std::cmp::Reverse(c.end)))
                    .unwrap_or(&cuts[last])
            }
            None => grapheme_cut(rest, window, max, &count),
        };
        if !probed.borrow().contains(&chosen.end) {
            count(&rest[..chosen.end]);
        }
        pieces.push(start..start + chosen.end);
        start += chosen.next;
    }
    pieces
}

/// The most source pieces a model takes at a time: Bergamot's `max-length-break` − 1.
pub(crate) fn limit(max_length_break: usize) -> usize {
    max_length_break.saturating_sub(1)
}

/// Cuts a sentence's piece ids into chunks of at most [`limit`] (at least one) pieces, as
/// Bergamot's `text_processor.cpp` wraps them; each chunk gets its own `</s>` later. A sentence
/// without pieces is one empty chunk.
pub(crate) fn chunks(ids: &[u32], max_length_break: usize) -> Vec<&[u32]> {
    let size = limit(max_length_break).max(1);
    if ids.is_empty() { vec![ids] } else { ids.chunks(size).collect() }
}

/// More than any tokenizer spends on one token (a SentencePiece piece is at most 16 characters
/// of at most 4 bytes).
const MAX_BYTES_PER_TOKEN: usize = 64;

/// The possible cuts of `text` whose piece ends within `window` bytes.
fn candidates(text: &str, window: usize) -> Vec<Cut> {
    let mut cuts = Vec::new();
    let mut prev: Option<char> = None;
    let mut space_start = None;
    for (i, c) in text.char_indices() {
        if space_start.unwrap_or(i) > window {
            break;
        }
        if c.is_whitespace() {
            if space_start.is_none() {
                space_start = Some(i);
            }
            continue;
        }
        if let (Some(end), Some(p)) = (space_start.take(), prev) {
            let rank = match p {
                ';' | ':' | '.' | '!' | '?' | '…' => 0,
                ',' => 1,
                _ => 2,
            };
            cuts.push(Cut { end, next: i, rank });
        } else if let Some(p) = prev {
            let rank = match p {
                '。' | '！' | '？' | '；' | '：' => Some(0),
                '，' | '、' => Some(1),
                _ => None,
            };
            if let Some(rank) = rank {
                cuts.push(Cut { end: i, next: i, rank });
            }
        }
        prev = Some(c);
    }
    cuts
}

/// The longest run of whole graphemes within `window` bytes that fits, or the first grapheme if
/// none does.
fn grapheme_cut(text: &str, window: usize, max: usize, count: &impl Fn(&str) -> usize) -> Cut {
    let mut ends: Vec<usize> =
        text.grapheme_indices(true).map(|(i, g)| i + g.len()).take_while(|&e| e <= window).collect();
    if ends.is_empty() {
        // `text` is not empty (the caller stops at its end), so it has a first grapheme.
        ends.extend(text.grapheme_indices(true).map(|(i, g)| i + g.len()).take(1));
    }
    let fitting = ends.partition_point(|&end| count(&text[..end]) <= max);
    let end = ends[fitting.saturating_sub(1).min(ends.len() - 1)];
    Cut { end, next: end, rank: 3 }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn words(s: &str) -> usize {
        s.split_whitespace().count()
    }

    fn pieces(text: &str, max: usize, count: impl Fn(&str) -> usize) -> Vec<&str> {
        cut(text, max, count).into_iter().map(|r| &text[r]).collect()
    }

    #[test]
    fn ids_are_cut_every_127_pieces() {
        let ids: Vec<u32> = (0..300).collect();
        let c = chunks(&ids, 128);
        assert_eq!(c.iter().map(|c| c.len()).collect::<Vec<_>>(), vec![127, 127, 46]);
        assert_eq!(c.concat(), ids);
        assert_eq!(chunks(&ids[..127], 128), [&ids[..127]]);
        assert_eq!(chunks(&[], 128).len(), 1);
        assert_eq!(chunks(&ids[..3], 1).len(), 3);
    }

    #[test]
    fn every_piece_is_counted_whole() {
        let text = "a; b c d e f g h, i j k l m n o p q r s t u v w x y z";
        let counted = std::cell::RefCell::new(Vec::new());
        let count = |s: &str| {
            counted.borrow_mut().push(s.to_string());
            words(s)
        };
        for max in [1, 3, 6, 7] {
            for piece in pieces(text, max, count) {
                assert!(counted.borrow().iter().any(|c| c == piece), "{piece:?} (max {max}) was not counted");
            }
        }
    }

    #[test]
    fn short_sentences_stay_whole() {
        assert_eq!(pieces("uno dos tres", 3, words), ["uno dos tres"]);
    }

    #[test]
    fn prefers_clauses_then_commas_then_spaces() {
        let text = "uno dos tres cuatro; cinco, seis siete ocho nueve";
        assert_eq!(pieces(text, 6, words), ["uno dos tres cuatro;", "cinco, seis siete ocho nueve"]);
        let text = "uno dos tres, cuatro cinco seis siete";
        assert_eq!(pieces(text, 5, words), ["uno dos tres,", "cuatro cinco seis siete"]);
        // A clause cut that would leave a piece under half the length loses to a later space.
        let text = "a; b c d e f g h";
        assert_eq!(pieces(text, 6, words), ["a; b c d e f", "g h"]);
    }

    #[test]
    fn cuts_inside_a_word_only_when_it_is_too_long() {
        let chars = |s: &str| s.chars().count();
        assert_eq!(pieces("abcdefgh ij", 3, chars), ["abc", "def", "gh", "ij"]);
        assert_eq!(pieces("😀👍🏽x", 1, chars), ["😀", "👍🏽", "x"]);
    }

    #[test]
    fn a_megabyte_without_spaces_costs_little() {
        let text = "ab".repeat(500_000);
        let calls = std::cell::Cell::new(0usize);
        let count = |s: &str| {
            calls.set(calls.get() + 1);
            s.len().div_ceil(4)
        };
        let got = cut(&text, 100, count);
        assert_eq!(got.len(), 2500);
        assert!(got.iter().all(|r| r.len() == 400));
        assert!(calls.get() < 2500 * 16, "{} token counts", calls.get());
    }

    #[test]
    fn cuts_unspaced_scripts_after_their_punctuation() {
        let chars = |s: &str| s.chars().count();
        assert_eq!(pieces("一二三，四五六。七八", 8, chars), ["一二三，四五六。", "七八"]);
        assert_eq!(pieces("一二三，四五六七八", 7, chars), ["一二三，", "四五六七八"]);
    }
}
