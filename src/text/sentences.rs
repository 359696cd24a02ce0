//! Sentence splitting: the Unicode sentence boundaries of UAX #29 (`unicode-segmentation`,
//! which Firefox's `Intl.Segmenter` also implements), corrected with per-language abbreviation
//! lists and a few rules the Unicode algorithm leaves to tailoring:
//!
//! - no split after an abbreviation that never ends a sentence ("Sr. López", "EE. UU.", "p. ej. La"),
//!   nor after a numeric one before a number ("pág. 12"), nor after an initial ("J. K. Rowling");
//! - a split after an ellipsis `…` when a capital (or `¿`, `¡`, a quote and a capital) follows, as
//!   after `...`;
//! - no split where the text has no space, except after the full stops of Chinese and Japanese
//!   (`。！？`), so "Yahoo!Mail" or "¡Hola!¿Qué?" stay whole;
//! - opening quotes and brackets go with the sentence they open (UAX #29 counts `“` as closing,
//!   which in `。“你好。”` would end the first sentence with the second's quote: Firefox inserts a
//!   space there for ja/ko/zh sources; moving the boundary does the same without changing the text);
//! - a split before a dialogue dash that opens a new sentence ("¿Vienes? —Sí, ahora."), which
//!   UAX #29 treats as a continuation; none before a lower-case tag ("¿Vienes? —preguntó"), nor after a
//!   quoted question before lower case (`"Are you coming?" and left`);
//! - a piece without letters or digits ("👋", "!!!", ":)") stays with the sentence before it.
//!
//! Decimals ("3.5", "3,5"), ellipses before lower case, `?`/`!` runs and closing quotes and
//! brackets after the full stop are already handled by the Unicode rules.

use std::ops::Range;

use unicode_properties::{GeneralCategory, UnicodeGeneralCategory};
use unicode_segmentation::UnicodeSegmentation;

use super::writing::Lang;

/// Byte ranges of the sentences of `text` (which has no line breaks and no spacing at its ends),
/// in order; each range has no spacing at its ends, and the text between two is their gap.
pub(crate) fn split(text: &str, lang: &Lang) -> Vec<Range<usize>> {
    let mut cuts: Vec<usize> = text.split_sentence_bound_indices().map(|(i, _)| i).filter(|&i| i > 0).collect();
    cuts.extend(ellipsis_cuts(text));
    cuts.extend(dialogue_cuts(text));
    cuts.sort_unstable();
    cuts.dedup();
    let mut sentences: Vec<Range<usize>> = Vec::new();
    let mut start = 0;
    for cut in cuts {
        let cut = move_openers_forward(text, start, cut);
        if cut > start && keep_cut(&text[start..cut], &text[cut..], lang) {
            sentences.push(start..start + text[start..cut].trim_end().len());
            start = cut;
        }
    }
    if start < text.len() || sentences.is_empty() {
        sentences.push(start..text.len());
    }
    // A piece without letters or digits ("👋", "!!!") stays with the sentence before it.
    let mut merged: Vec<Range<usize>> = Vec::with_capacity(sentences.len());
    for sentence in sentences {
        match merged.last_mut() {
            Some(last) if !text[sentence.clone()].chars().any(char::is_alphanumeric) => last.end = sentence.end,
            _ => merged.push(sentence),
        }
    }
    merged
}

/// Whether to cut between `before` (the sentence so far) and `after` (the rest of the text).
fn keep_cut(before: &str, after: &str, lang: &Lang) -> bool {
    let trimmed = before.trim_end();
    if trimmed.len() == before.len() && !ends_with_unspaced_stop(trimmed) {
        return false;
    }
    let last_word = trimmed.rsplit(char::is_whitespace).next().unwrap_or(trimmed);
    let last_word = last_word.trim_start_matches(|c: char| !c.is_alphanumeric());
    if let Some(abbr) = last_word.strip_suffix('.') {
        let mut letters = abbr.chars();
        let initial = letters.next().is_some_and(char::is_alphabetic) && letters.next().is_none();
        let before_number = after.chars().next().is_some_and(|c| c.is_ascii_digit());
        if initial || lang.abbreviations.is_prefix(abbr) || (before_number && lang.abbreviations.is_numeric(abbr)) {
            return false;
        }
    }
    // A question or exclamation quoted inside a sentence: `He asked, "Are you coming?" and left.`
    let unquoted = trimmed.trim_end_matches(is_closing);
    if unquoted.len() < trimmed.len() && unquoted.ends_with(['?', '!']) && after.starts_with(char::is_lowercase) {
        return false;
    }
    // Spanish dialogue: "¿Vienes? —preguntó él."
    let mut next = after.chars();
    if trimmed.ends_with(['?', '!']) && next.next().is_some_and(|c| c == '—' || c == '–') {
        return !next.next().is_some_and(char::is_lowercase);
    }
    true
}

/// Stops of scripts without spaces (with closing quotes or brackets after them), which end a
/// sentence even when the next one follows without a space.
fn ends_with_unspaced_stop(s: &str) -> bool {
    let core = s.trim_end_matches(is_closing);
    core.ends_with(['。', '！', '？', '｡', '．'])
}

fn is_closing(c: char) -> bool {
    matches!(c.general_category(), GeneralCategory::ClosePunctuation | GeneralCategory::FinalPunctuation)
        || "\"'".contains(c)
}

fn is_opening(c: char) -> bool {
    matches!(c.general_category(), GeneralCategory::OpenPunctuation | GeneralCategory::InitialPunctuation)
}

/// When the sentence before `cut` ends in opening quotes or brackets with no space before the
/// cut, the cut moves before them.
fn move_openers_forward(text: &str, start: usize, cut: usize) -> usize {
    let before = &text[start..cut];
    let kept = before.trim_end_matches(is_opening).len();
    if kept < before.len() && kept > 0 { start + kept } else { cut }
}

/// Cuts after `…` followed by spacing and a capital (perhaps after `¿¡` or an opening quote).
fn ellipsis_cuts(text: &str) -> Vec<usize> {
    let mut cuts = Vec::new();
    for (i, _) in text.match_indices('…') {
        let rest = &text[i + '…'.len_utf8()..];
        let rest = rest.trim_start_matches(is_closing);
        let after_space = rest.trim_start();
        if after_space.len() == rest.len() {
            continue;
        }
        let word = after_space.trim_start_matches(|c: char| "¿¡".contains(c) || is_opening(c) || c == '"');
        if word.chars().next().is_some_and(char::is_uppercase) {
            cuts.push(text.len() - after_space.len());
        }
    }
    cuts
}

/// Cuts before a dash that opens a line of dialogue after a finished sentence: `. —Sí`, `? —¿Y tú?`.
fn dialogue_cuts(text: &str) -> Vec<usize> {
    let mut cuts = Vec::new();
    for (i, dash) in text.match_indices(['—', '–']) {
        let before = text[..i].trim_end();
        if before.len() == i || !before.trim_end_matches(is_closing).ends_with(['.', '?', '!', '…']) {
            continue;
        }
        let word = text[i + dash.len()..].trim_start_matches(['¿', '¡']);
        if word.chars().next().is_some_and(char::is_uppercase) {
            cuts.push(i);
        }
    }
    cuts
}

#[cfg(test)]
mod tests {
    use super::*;

    fn sentences<'a>(text: &'a str, lang: &str) -> Vec<&'a str> {
        let lang = Lang::parse(lang, "source").unwrap();
        split(text, &lang).into_iter().map(|r| &text[r]).collect()
    }

    #[test]
    fn ranges_cover_the_text_without_edge_spacing() {
        let text = "Uno.  Dos.\tTres";
        let lang = Lang::parse("es", "source").unwrap();
        let ranges = split(text, &lang);
        assert_eq!(ranges, [0..4, 6..10, 11..15]);
        assert_eq!(sentences("", "es"), [""]);
        assert_eq!(sentences("x", "es"), ["x"]);
    }

    #[test]
    fn moves_opening_quotes_to_their_sentence() {
        assert_eq!(sentences("中文。“你好。”他说。", "zh"), ["中文。", "“你好。”", "他说。"]);
        assert_eq!(sentences("日本語です。次の文です。", "ja"), ["日本語です。", "次の文です。"]);
    }
}
