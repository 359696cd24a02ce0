//! lingua's rules, which settle a text before (or instead of) its n-gram models: a script only
//! one candidate writes, characters only one writes, and characters only a few write (which
//! narrow the candidates). As lingua-rs 1.8.0's `detect_language_with_rules` and
//! `filter_languages_by_rules` (Apache-2.0), over the 51 languages of [`super::languages`].

use std::collections::BTreeMap;
use std::sync::LazyLock;

use regex::Regex;

use super::languages::{CHARS_TO_LANGUAGES, Language, LanguageSet, members};
use super::script::{ALPHABETS, Alphabet};

/// Words as lingua cuts them: runs of letters, but one token per Han, Hiragana or Katakana
/// character (those scripts do not separate words).
static TOKENS: LazyLock<Regex> = LazyLock::new(|| {
    Regex::new(
        r"\p{Bengali}+|\p{Devanagari}+|\p{Gujarati}+|\p{Gurmukhi}+|\p{Han}|\p{Hangul}+|\p{Hiragana}|\p{Katakana}|\p{Tamil}+|\p{Telugu}+|\p{Thai}+|\p{L}+",
    )
    .expect("a valid pattern")
});

/// The characters of [`CHARS_TO_LANGUAGES`] with their languages as sets.
static CHARS_TO_SETS: LazyLock<Vec<(&'static str, LanguageSet)>> = LazyLock::new(|| {
    CHARS_TO_LANGUAGES
        .iter()
        .map(|(chars, names)| {
            let set = names.iter().filter_map(|n| Language::by_name(n)).fold(0, |s, l| s | l.bit());
            (*chars, set)
        })
        .collect()
});

/// The text's words, lowercased.
pub(crate) fn words(text: &str) -> Vec<String> {
    TOKENS.find_iter(&text.trim().to_lowercase()).map(|m| m.as_str().to_string()).collect()
}

/// The alphabets that only one of lingua's languages writes, with that language (among those
/// compiled in, as lingua computes it: Bengali, Devanagari for Hindi, Greek, Hangul, Hebrew, ...).
fn single_language_alphabets() -> Vec<(Alphabet, Language)> {
    ALPHABETS
        .iter()
        .filter_map(|&a| {
            let mut writers = Language::all().filter(|l| l.alphabets().contains(&a));
            match (writers.next(), writers.next()) {
                (Some(l), None) => Some((a, l)),
                _ => None,
            }
        })
        .collect()
}

static SINGLE: LazyLock<Vec<(Alphabet, Language)>> = LazyLock::new(single_language_alphabets);

/// The two most frequent keys of a count, ordered as lingua's counter orders them (count
/// descending, then key ascending).
fn top2<K: Ord + Copy>(counts: &BTreeMap<K, usize>) -> ((K, usize), Option<(K, usize)>) {
    let mut items: Vec<(K, usize)> = counts.iter().map(|(k, c)| (*k, *c)).collect();
    items.sort_by(|a, b| b.1.cmp(&a.1).then(a.0.cmp(&b.0)));
    (items[0], items.get(1).copied())
}

/// The language the rules alone decide on among `languages`, if any: most words written in a
/// script or with characters only one candidate uses.
pub(crate) fn decide(words: &[String], languages: LanguageSet) -> Option<Language> {
    let single: Vec<(Alphabet, Language)> = SINGLE.iter().copied().filter(|(_, l)| languages & l.bit() != 0).collect();
    let with_unique: Vec<Language> = members(languages).filter(|l| !l.unique_characters().is_empty()).collect();
    let mut total: BTreeMap<Option<Language>, usize> = BTreeMap::new();
    for word in words {
        let mut counts: BTreeMap<Language, usize> = BTreeMap::new();
        for c in word.chars() {
            if let Some((_, l)) = single.iter().find(|(a, _)| a.matches_char(c)) {
                *counts.entry(*l).or_default() += 1;
            } else if Alphabet::Han.matches_char(c) {
                *counts.entry(Language::CHINESE).or_default() += 1;
            } else if [Alphabet::Hiragana, Alphabet::Katakana].iter().any(|a| a.matches_char(c)) {
                *counts.entry(Language::JAPANESE).or_default() += 1;
            } else if [Alphabet::Latin, Alphabet::Cyrillic, Alphabet::Devanagari].iter().any(|a| a.matches_char(c)) {
                for l in with_unique.iter().filter(|l| l.unique_characters().contains(c)) {
                    *counts.entry(*l).or_default() += 1;
                }
            }
        }
        let vote = if counts.is_empty() {
            None
        } else if counts.len() == 1 {
            counts.keys().next().copied().filter(|l| languages & l.bit() != 0)
        } else if counts.contains_key(&Language::CHINESE) && counts.contains_key(&Language::JAPANESE) {
            Some(Language::JAPANESE)
        } else {
            let ((first, n1), second) = top2(&counts);
            (second.is_none_or(|(_, n2)| n1 > n2) && languages & first.bit() != 0).then_some(first)
        };
        *total.entry(vote).or_default() += 1;
    }
    let unknown = total.get(&None).copied().unwrap_or(0) as f64;
    if unknown < words.len() as f64 * 0.5 {
        total.remove(&None);
    }
    if total.is_empty() {
        return None;
    }
    if total.len() == 1 {
        return *total.keys().next()?;
    }
    let ((first, n1), second) = top2(&total);
    let (second, n2) = second?;
    let pair = [first, second];
    if pair.contains(&Some(Language::JAPANESE)) && pair.contains(&Some(Language::CHINESE)) {
        return Some(Language::JAPANESE);
    }
    if n1 == n2 { None } else { first }
}

/// The candidates worth scoring: those writing the text's main alphabet, and among them those
/// writing the characters only a few languages write, when half the words hold such characters.
pub(crate) fn filter(words: &[String], languages: LanguageSet) -> LanguageSet {
    let mut alphabets: BTreeMap<Alphabet, usize> = BTreeMap::new();
    for word in words {
        if let Some(a) = ALPHABETS.iter().find(|a| a.matches(word)) {
            *alphabets.entry(*a).or_default() += word.chars().count();
        }
    }
    if alphabets.is_empty() {
        return languages;
    }
    if alphabets.len() > 1 {
        let first = alphabets.values().next().copied();
        if alphabets.values().all(|c| Some(*c) == first) {
            return languages;
        }
    }
    let ((main, _), _) = top2(&alphabets);
    let filtered = members(languages).filter(|l| l.alphabets().contains(&main)).fold(0, |s, l| s | l.bit());
    let mut counts: BTreeMap<Language, usize> = BTreeMap::new();
    for (chars, set) in CHARS_TO_SETS.iter() {
        let relevant = filtered & set;
        if relevant == 0 {
            continue;
        }
        for word in words {
            for c in chars.chars() {
                if word.contains(c) {
                    for l in members(relevant) {
                        *counts.entry(l).or_default() += 1;
                    }
                }
            }
        }
    }
    let half = words.len() as f64 * 0.5;
    let subset = counts.iter().filter(|(_, c)| **c as f64 >= half).fold(0, |s, (l, _)| s | l.bit());
    if subset != 0 { subset } else { filtered }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn set(codes: &[&str]) -> LanguageSet {
        codes.iter().map(|c| Language::from_iso_639_1(c).unwrap().bit()).fold(0, |s, b| s | b)
    }

    #[test]
    fn the_fixed_indices_name_their_languages() {
        assert_eq!(Language::CHINESE.name(), "Chinese");
        assert_eq!(Language::JAPANESE.name(), "Japanese");
        let single: Vec<&str> = SINGLE.iter().map(|(_, l)| l.iso_639_1()).collect();
        assert_eq!(single, ["bn", "hi", "el", "gu", "ko", "he", "ja", "ja", "ta", "te", "th"]);
    }

    #[test]
    fn rules_decide_on_scripts_and_unique_characters() {
        let all = Language::all().fold(0, |s, l| s | l.bit());
        let decide_text = |t: &str, among: LanguageSet| decide(&words(t), among).map(|l| l.iso_639_1());
        assert_eq!(decide_text("Καλημέρα σας", all), Some("el"));
        assert_eq!(decide_text("これは日本語です", all), Some("ja"));
        assert_eq!(decide_text("Straße groß", all), Some("de"));
        assert_eq!(decide_text("the house", all), None);
        assert_eq!(decide_text("Καλημέρα", set(&["en", "de"])), None);
        assert_eq!(filter(&words("Добрий ранок"), all) & set(&["en", "de"]), 0);
        assert_eq!(filter(&words("año niño"), all), set(&["es"]));
    }
}
