//! What the pipeline needs to know about a language: its abbreviations (for sentence splitting),
//! whether it writes spaces between words, and how scripts without spaces are recognised.

use super::Error;
use super::abbreviations::{self, Abbreviations};

/// The parts of a language tag the pipeline uses.
#[derive(Clone, Debug)]
pub(crate) struct Lang {
    /// Lower-case primary subtag (`es` for `es-MX`).
    pub code: String,
    pub abbreviations: &'static Abbreviations,
}

impl Lang {
    /// Parses a BCP 47-like tag (`es`, `pt-BR`, `zh_Hant`); `which` names the option for errors.
    pub fn parse(tag: &str, which: &'static str) -> Result<Lang, Error> {
        let bad = || Error::Language { which, tag: tag.to_string() };
        let primary = tag.split(['-', '_']).next().ok_or_else(bad)?;
        let valid = (2..=3).contains(&primary.len())
            && primary.chars().all(|c| c.is_ascii_alphabetic())
            && tag.chars().all(|c| c.is_ascii_alphanumeric() || c == '-' || c == '_');
        if !valid {
            return Err(bad());
        }
        let code = primary.to_ascii_lowercase();
        Ok(Lang { abbreviations: abbreviations::for_language(&code), code })
    }

    /// Whether words are separated by spaces. Firefox only knows ja and zh as languages without
    /// them; the scripts of Thai, Lao, Khmer and Burmese do not use them either.
    pub fn uses_spaces(&self) -> bool {
        !matches!(self.code.as_str(), "ja" | "zh" | "yue" | "th" | "lo" | "km" | "my")
    }
}

/// Characters of scripts written without spaces between words (Han, kana, Thai, Lao, Khmer,
/// Burmese) and their punctuation. Two pieces of such text cut apart without a space need a space
/// between their translations into a language that uses spaces.
pub(crate) fn is_unspaced_script(c: char) -> bool {
    matches!(c as u32,
        0x0E00..=0x0EFF       // Thai, Lao
        | 0x1000..=0x109F     // Myanmar
        | 0x1780..=0x17FF     // Khmer
        | 0x2E80..=0x2FDF     // CJK radicals
        | 0x3000..=0x30FF     // CJK punctuation, hiragana, katakana
        | 0x3100..=0x31FF     // bopomofo, kana extensions
        | 0x3400..=0x4DBF     // CJK extension A
        | 0x4E00..=0x9FFF     // CJK unified ideographs
        | 0xF900..=0xFAFF     // CJK compatibility ideographs
        | 0xFF00..=0xFFEF     // full-width forms
        | 0x20000..=0x3FFFF) // CJK extensions B and later
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parses_tags_and_rejects_junk() {
        assert_eq!(Lang::parse("es", "source").unwrap().code, "es");
        assert_eq!(Lang::parse("pt-BR", "source").unwrap().code, "pt");
        assert_eq!(Lang::parse("ZH_Hant", "target").unwrap().code, "zh");
        for bad in ["", "e", "español", "es es", "1s", "-es"] {
            let err = Lang::parse(bad, "target").unwrap_err().to_string();
            assert!(err.contains("target"), "{err}");
        }
    }

    #[test]
    fn knows_languages_without_spaces() {
        assert!(Lang::parse("en", "t").unwrap().uses_spaces());
        assert!(Lang::parse("ko", "t").unwrap().uses_spaces());
        assert!(!Lang::parse("ja", "t").unwrap().uses_spaces());
        assert!(!Lang::parse("zh-Hans", "t").unwrap().uses_spaces());
        assert!(is_unspaced_script('中') && is_unspaced_script('。') && is_unspaced_script('カ'));
        assert!(!is_unspaced_script('a') && !is_unspaced_script('한'));
    }
}
