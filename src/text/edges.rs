//! Mentions and hashtags at the edges of a sentence are not part of what it says: reply handles
//! ("@ana Tiene razón"), retweet prefixes ("RT @x: ..."), credits ("... (@comisión)") and the
//! trailing list of tags ("... #UE #Presupuesto2026"). They are kept out of the text the model sees,
//! with the punctuation attached to them, and put back byte for byte, so they can never be lost or
//! renamed and the model gets a clean sentence.

use std::ops::Range;

use super::{hashtags, mentions};

/// Splits a sentence (no spacing at its ends) into `(prefix, middle, suffix)` byte ranges: the
/// prefix and suffix are whole words made only of mentions and hashtags with their wrapping
/// punctuation (plus a leading `RT` before a mention); the middle is what remains. A sentence of
/// nothing else is all prefix.
pub(crate) fn split(sentence: &str) -> (Range<usize>, Range<usize>, Range<usize>) {
    // Peeling tags can uncover stray punctuation and the other way round: "(ojo)) @ana".
    let mut middle = 0..sentence.len();
    loop {
        let (start, end) = stray_punctuation(&sentence[middle.clone()]);
        let inner = middle.start + start..middle.start + end;
        let (_, words, _) = split_words(&sentence[inner.clone()]);
        let next = inner.start + words.start..inner.start + words.end;
        if next == middle {
            return (0..middle.start, middle.clone(), middle.end..sentence.len());
        }
        middle = next;
    }
}

/// Punctuation that closes or continues what came before (a bracket or quote opened before a
/// link, the comma after one: "(see https://x.org/a), and") cannot start a sentence, and an
/// opening one cannot end it; nor does a bracket or quote belong to it whose other half is not in
/// it. Such punctuation is kept out, with the spacing next to it. Returns the range left inside.
fn stray_punctuation(sentence: &str) -> (usize, usize) {
    let (mut start, mut end) = (0, sentence.len());
    loop {
        let inner = &sentence[start..end];
        let trimmed = inner
            .trim_start_matches(|c: char| ")]}»”’›,;:.…".contains(c) || c.is_whitespace())
            .trim_end_matches(|c: char| "([{«“‘‹¿¡".contains(c) || c.is_whitespace());
        let trimmed = unpaired(trimmed);
        if trimmed.len() == inner.len() {
            return (start, end);
        }
        // `trimmed` is a subslice of `inner`: find where it starts.
        start += trimmed.as_ptr() as usize - inner.as_ptr() as usize;
        end = start + trimmed.len();
    }
}

const PAIRS: [(char, char); 5] = [('(', ')'), ('[', ']'), ('{', '}'), ('«', '»'), ('“', '”')];

/// `s` without an opening bracket at its start, or a closing one at its end, that has no partner.
fn unpaired(s: &str) -> &str {
    let mut s = s;
    if let Some(&(open, close)) = PAIRS.iter().find(|(open, _)| s.starts_with(*open))
        && s.matches(close).count() < s.matches(open).count()
    {
        s = s[open.len_utf8()..].trim_start();
    }
    if let Some(&(open, close)) = PAIRS.iter().find(|(_, close)| s.ends_with(*close))
        && s.matches(open).count() < s.matches(close).count()
    {
        s = s[..s.len() - close.len_utf8()].trim_end();
    }
    s
}

fn split_words(sentence: &str) -> (Range<usize>, Range<usize>, Range<usize>) {
    let words: Vec<Range<usize>> = word_ranges(sentence);
    let end = sentence.len();
    let passive = |i: usize| {
        let word = &sentence[words[i].clone()];
        is_tag_word(word) || (i == 0 && word == "RT" && words.get(1).is_some_and(|w| is_tag_word(&sentence[w.clone()])))
    };
    let first = (0..words.len()).find(|&i| !passive(i));
    let Some(first) = first else { return (0..end, end..end, end..end) };
    // `first` is not passive, so this search stops at or after it.
    let last = (first..words.len()).rev().find(|&i| !passive(i)).unwrap_or(first);
    let (start, stop) = (words[first].start, words[last].end);
    (0..start, start..stop, stop..end)
}

fn word_ranges(s: &str) -> Vec<Range<usize>> {
    let mut words = Vec::new();
    let mut start = None;
    for (i, c) in s.char_indices() {
        match (c.is_whitespace(), start) {
            (true, Some(st)) => {
                words.push(st..i);
                start = None;
            }
            (false, None) => start = Some(i),
            _ => {}
        }
    }
    if let Some(st) = start {
        words.push(st..s.len());
    }
    words
}

/// Punctuation that may wrap a tag word: `(@x)`, `«#UE»`, `@x:`, `#UE,`.
const OPENING: &str = "([{\"'«“‘¿¡—–-";
const CLOSING: &str = ")]}\"'»”’:,;.!?…";

/// Whether a whitespace-free word is one or more mentions or hashtags and wrapping punctuation.
fn is_tag_word(word: &str) -> bool {
    let core = word.trim_start_matches(|c| OPENING.contains(c)).trim_end_matches(|c| CLOSING.contains(c));
    if core.is_empty() {
        return false;
    }
    let mut tags: Vec<Range<usize>> = mentions::find(core);
    tags.extend(hashtags::find(core));
    tags.sort_by_key(|r| r.start);
    let mut pos = 0;
    for tag in tags {
        if tag.start != pos {
            return false;
        }
        pos = tag.end;
    }
    pos == core.len()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn parts(s: &str) -> (&str, &str, &str) {
        let (a, b, c) = split(s);
        (&s[a], &s[b], &s[c])
    }

    #[test]
    fn peels_handles_and_tags_at_the_edges() {
        assert_eq!(
            parts("@_x_ Voy a permanecer. #UE #Presupuesto2026"),
            ("@_x_ ", "Voy a permanecer.", " #UE #Presupuesto2026")
        );
        assert_eq!(parts("RT @usuario_123: Como saben, esto."), ("RT @usuario_123: ", "Como saben, esto.", ""));
        assert_eq!(parts("(@Parlamento_UE)"), ("(@Parlamento_UE)", "", ""));
        assert_eq!(parts("Gracias a @ana."), ("", "Gracias a", " @ana."));
        assert_eq!(parts("@_x_ #NoticiasHoy"), ("@_x_ #NoticiasHoy", "", ""));
        assert_eq!(parts("hoy. #última_hora"), ("", "hoy.", " #última_hora"));
        assert_eq!(parts("#UE, #Brexit: sí"), ("#UE, #Brexit: ", "sí", ""));
        assert_eq!(parts("#UE#Brexit sí"), ("", "#UE#Brexit sí", ""));
    }

    #[test]
    fn leaves_tags_inside_sentences_and_other_words_alone() {
        assert_eq!(parts("El #Brexit es un desastre"), ("", "El #Brexit es un desastre", ""));
        assert_eq!(parts("Hablé con @ana ayer."), ("", "Hablé con @ana ayer.", ""));
        assert_eq!(parts("RT esto"), ("", "RT esto", ""));
        assert_eq!(parts("RT"), ("", "RT", ""));
        assert_eq!(parts("C# es #1"), ("", "C# es #1", ""));
        assert_eq!(parts("@ana_y_más"), ("@ana_y_más", "", ""));
        assert_eq!(parts("— vía"), ("", "— vía", ""));
    }

    #[test]
    fn keeps_stray_brackets_and_commas_out() {
        assert_eq!(parts("), and"), ("), ", "and", ""));
        assert_eq!(parts("see ("), ("", "see", " ("));
        assert_eq!(parts("» , y @ana: dime ¿"), ("» , ", "y @ana: dime", " ¿"));
        assert_eq!(parts(")."), (").", "", ""));
        assert_eq!(parts("(see"), ("(", "see", ""));
        assert_eq!(parts("«Fin» y (ya)"), ("", "«Fin» y (ya)", ""));
        assert_eq!(parts("dijo) y"), ("", "dijo) y", ""));
        assert_eq!(parts("y (ojo)) @ana"), ("", "y (ojo)", ") @ana"));
    }
}
