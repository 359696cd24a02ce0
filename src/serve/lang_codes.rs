//! Language codes as clients send them (`zh-CN`, `ZH-HANS`, `pt_BR`, `EN-US`, `nb`, LibreTranslate's
//! `zt` and `pb`), mapped onto the languages of the installed models.
//!
//! MTranServer's table (lowercase, `_` → `-`, Chinese by script, regional variants of languages
//! written in one script dropped, `jp`/`kr`/`no` aliases) is what those clients are known to need;
//! here the same is done by Firefox's own tag matching ([`tags_match`]: the primary language and
//! the script, filled in from likely subtags) against each installed language, so that `zh-TW`
//! never lands on a Simplified Chinese model.

use crate::fetch::tags::{is_valid, tags_match};

/// Why a code names no installed language.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum LangError {
    /// Not a language tag at all.
    Malformed(String),
    /// A language, but no installed model has it.
    NotInstalled(String),
}

impl std::fmt::Display for LangError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            // LibreTranslate's wording ("zz is not supported"), which Dialect looks for.
            LangError::Malformed(c) => {
                write!(f, "{c} is not supported (not a language code such as `es` or `zh-Hant`)")
            }
            LangError::NotInstalled(c) => write!(f, "{c} is not supported (no installed model has this language)"),
        }
    }
}

/// Older or client-specific codes, as their standard tag.
fn alias(code: &str) -> &str {
    match code {
        // LibreTranslate's model codes for Traditional Chinese and Brazilian Portuguese.
        "zt" => "zh-Hant",
        "pb" => "pt-BR",
        "cmn" => "zh",
        "jp" => "ja",
        "kr" => "ko",
        "iw" => "he",
        "in" => "id",
        "ji" => "yi",
        other => other,
    }
}

/// The installed language that `code` names: an exact (case-insensitive) match first, then
/// Firefox's matching by language and script. `nb`, `no` and `nn`'s shared parent are tried
/// against each other since clients use them interchangeably.
pub fn resolve<'a>(code: &str, installed: &'a [String]) -> Result<&'a str, LangError> {
    let trimmed = code.trim();
    let norm = trimmed.replace('_', "-");
    let norm = alias(&norm.to_ascii_lowercase()).to_string();
    if norm.is_empty() || !is_valid(&norm) {
        return Err(LangError::Malformed(shown(code)));
    }
    if let Some(i) = installed.iter().find(|i| i.eq_ignore_ascii_case(&norm)) {
        return Ok(i);
    }
    if let Some(i) = installed.iter().find(|i| tags_match(&norm, i)) {
        return Ok(i);
    }
    let primary = norm.split('-').next().unwrap_or("");
    let norwegian = |p: &str| matches!(p, "no" | "nb");
    if norwegian(primary)
        && let Some(i) = installed.iter().find(|i| norwegian(i.split('-').next().unwrap_or("")))
    {
        return Ok(i);
    }
    Err(LangError::NotInstalled(shown(code)))
}

/// A client's code as it may be shown in an error: at most 35 characters, no control characters.
fn shown(code: &str) -> String {
    let clean: String = code.chars().filter(|c| !c.is_control()).take(35).collect();
    if clean.is_empty() { "(empty)".to_string() } else { clean }
}

/// English names of Firefox's languages (for LibreTranslate's and DeepL's language lists).
pub fn name(code: &str) -> &'static str {
    let primary = code.split(['-', '_']).next().unwrap_or("").to_ascii_lowercase();
    match (primary.as_str(), code) {
        ("zh", c) if c.eq_ignore_ascii_case("zh-Hant") => "Chinese (Traditional)",
        ("zh", _) => "Chinese",
        ("pt", c) if c.eq_ignore_ascii_case("pt-BR") => "Portuguese (Brazil)",
        (p, _) => NAMES.iter().find(|(c, _)| *c == p).map(|(_, n)| *n).unwrap_or("Unknown"),
    }
}

const NAMES: &[(&str, &str)] = &[
    ("ar", "Arabic"),
    ("az", "Azerbaijani"),
    ("be", "Belarusian"),
    ("bg", "Bulgarian"),
    ("bn", "Bengali"),
    ("bs", "Bosnian"),
    ("ca", "Catalan"),
    ("cs", "Czech"),
    ("cy", "Welsh"),
    ("da", "Danish"),
    ("de", "German"),
    ("el", "Greek"),
    ("en", "English"),
    ("es", "Spanish"),
    ("et", "Estonian"),
    ("eu", "Basque"),
    ("fa", "Persian"),
    ("fi", "Finnish"),
    ("fr", "French"),
    ("ga", "Irish"),
    ("gl", "Galician"),
    ("gu", "Gujarati"),
    ("he", "Hebrew"),
    ("hi", "Hindi"),
    ("hr", "Croatian"),
    ("hu", "Hungarian"),
    ("hy", "Armenian"),
    ("id", "Indonesian"),
    ("is", "Icelandic"),
    ("it", "Italian"),
    ("ja", "Japanese"),
    ("ka", "Georgian"),
    ("kk", "Kazakh"),
    ("kn", "Kannada"),
    ("ko", "Korean"),
    ("lt", "Lithuanian"),
    ("lv", "Latvian"),
    ("mk", "Macedonian"),
    ("ml", "Malayalam"),
    ("ms", "Malay"),
    ("mt", "Maltese"),
    ("nb", "Norwegian Bokmål"),
    ("nl", "Dutch"),
    ("nn", "Norwegian Nynorsk"),
    ("no", "Norwegian"),
    ("pl", "Polish"),
    ("pt", "Portuguese"),
    ("ro", "Romanian"),
    ("ru", "Russian"),
    ("sk", "Slovak"),
    ("sl", "Slovenian"),
    ("sq", "Albanian"),
    ("sr", "Serbian"),
    ("sv", "Swedish"),
    ("ta", "Tamil"),
    ("te", "Telugu"),
    ("th", "Thai"),
    ("tr", "Turkish"),
    ("uk", "Ukrainian"),
    ("ur", "Urdu"),
    ("vi", "Vietnamese"),
];

#[cfg(test)]
mod tests {
    use super::*;

    fn langs(s: &[&str]) -> Vec<String> {
        s.iter().map(|s| s.to_string()).collect()
    }

    #[test]
    fn codes_as_clients_send_them() {
        let installed = langs(&["en", "es", "zh", "pt", "nb", "ja", "zh-Hant"]);
        for (code, want) in [
            ("es", "es"),
            ("ES", "es"),
            ("EN-US", "en"),
            ("en-GB", "en"),
            ("en_US", "en"),
            ("zh-CN", "zh"),
            ("zh-Hans", "zh"),
            ("ZH-HANS", "zh"),
            ("zh", "zh"),
            ("cmn", "zh"),
            ("zh-TW", "zh-Hant"),
            ("ZH-HANT", "zh-Hant"),
            ("zt", "zh-Hant"),
            ("pt-BR", "pt"),
            ("PT-BR", "pt"),
            ("pb", "pt"),
            ("no", "nb"),
            ("jp", "ja"),
            (" es ", "es"),
        ] {
            assert_eq!(resolve(code, &installed), Ok(want), "{code}");
        }
    }

    #[test]
    fn traditional_chinese_never_lands_on_simplified() {
        let installed = langs(&["en", "zh"]);
        assert_eq!(resolve("zh-TW", &installed), Err(LangError::NotInstalled("zh-TW".into())));
        assert_eq!(resolve("zh-Hant", &installed), Err(LangError::NotInstalled("zh-Hant".into())));
    }

    #[test]
    fn unknown_and_malformed_codes_are_named() {
        let installed = langs(&["en", "es"]);
        assert_eq!(resolve("de", &installed), Err(LangError::NotInstalled("de".into())));
        assert_eq!(resolve("", &installed), Err(LangError::Malformed("(empty)".into())));
        assert_eq!(resolve("e$", &installed), Err(LangError::Malformed("e$".into())));
        let long = "x".repeat(100);
        let e = resolve(&long, &installed).unwrap_err().to_string();
        assert!(e.len() < 120 && e.contains("is not supported"), "{e}");
    }

    #[test]
    fn names() {
        assert_eq!(name("es"), "Spanish");
        assert_eq!(name("zh-Hant"), "Chinese (Traditional)");
        assert_eq!(name("zh"), "Chinese");
        assert_eq!(name("xx"), "Unknown");
    }
}
