//! Sentences longer than the model's limit are translated in pieces. Firefox cuts them every 127
//! SentencePiece pieces, wherever that falls (mid-word); here the cut goes at the last sensible
//! point that fits: after clause punctuation (`;:.!?…`, and `。！？；：` in scripts without
//! spaces), else after a comma (`,，、`), else at a space, and only in a word that is
//! longer than the limit by itself at a grapheme boundary. A clause or comma cut is preferred
//! to a later space when its piece is at least half as long.

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
/// A single grapheme longer than `max` tokens still makes a piece of its own.
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
        pieces.push(start..start + chosen.end);
        start += chosen.next;
    }
    pieces
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
