//! The scripts lingua's rules tell languages apart by (its `Alphabet`), as Unicode script ranges.

use std::sync::LazyLock;

/// lingua's alphabets, in its order (the first that covers a whole word is the word's).
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub(crate) enum Alphabet {
    Arabic,
    Armenian,
    Bengali,
    Cyrillic,
    Devanagari,
    Georgian,
    Greek,
    Gujarati,
    Gurmukhi,
    Han,
    Hangul,
    Hebrew,
    Hiragana,
    Katakana,
    Latin,
    Tamil,
    Telugu,
    Thai,
}

pub(crate) const ALPHABETS: [Alphabet; 18] = [
    Alphabet::Arabic,
    Alphabet::Armenian,
    Alphabet::Bengali,
    Alphabet::Cyrillic,
    Alphabet::Devanagari,
    Alphabet::Georgian,
    Alphabet::Greek,
    Alphabet::Gujarati,
    Alphabet::Gurmukhi,
    Alphabet::Han,
    Alphabet::Hangul,
    Alphabet::Hebrew,
    Alphabet::Hiragana,
    Alphabet::Katakana,
    Alphabet::Latin,
    Alphabet::Tamil,
    Alphabet::Telugu,
    Alphabet::Thai,
];

/// Each alphabet's code point ranges (sorted), from the Unicode script tables regex-syntax carries.
static RANGES: LazyLock<Vec<Vec<(char, char)>>> =
    LazyLock::new(|| ALPHABETS.iter().map(|a| script_ranges(&format!("{a:?}"))).collect());

fn script_ranges(script: &str) -> Vec<(char, char)> {
    use regex_syntax::hir::{Class, HirKind};
    // Script names are fixed above; regex-syntax knows every one of them.
    let hir = regex_syntax::Parser::new().parse(&format!(r"\p{{sc={script}}}")).expect("a Unicode script");
    match hir.kind() {
        HirKind::Class(Class::Unicode(class)) => class.ranges().iter().map(|r| (r.start(), r.end())).collect(),
        _ => Vec::new(),
    }
}

impl Alphabet {
    pub(crate) fn matches_char(self, c: char) -> bool {
        let ranges = &RANGES[self as usize];
        let i = ranges.partition_point(|&(_, end)| end < c);
        ranges.get(i).is_some_and(|&(start, _)| start <= c)
    }

    /// Whether every character of `word` is of this alphabet.
    pub(crate) fn matches(self, word: &str) -> bool {
        word.chars().all(|c| self.matches_char(c))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn scripts_are_read_from_the_unicode_tables() {
        assert!(Alphabet::Latin.matches("señorça"));
        assert!(!Alphabet::Latin.matches("señor1"));
        assert!(Alphabet::Cyrillic.matches("ђак"));
        assert!(Alphabet::Han.matches_char('们') && !Alphabet::Han.matches_char('の'));
        assert!(Alphabet::Hiragana.matches_char('の') && Alphabet::Katakana.matches_char('カ'));
        assert!(Alphabet::Devanagari.matches("हिन्दी"));
        for a in ALPHABETS {
            assert!(!RANGES[a as usize].is_empty(), "{a:?}");
        }
    }
}
