//! Language tags as Firefox compares them, folder names as pairs, the pivot rule through English
//! (`route`, the only one), and the `LANGS` argument (`es,ja` or `es-de`).

/// English: every Mozilla model has it on one side, and other pairs pivot through it.
pub const PIVOT: &str = "en";

/// The pivot rule, the only one (Firefox's `getRecordsForTranslatingToAndFromPair`): the direct
/// pair, else `from`→English and English→`to`, never through English when one side is English.
/// `find` looks one direction up (installed folders, the registry's models, a source's records);
/// Err names the first direction missing.
pub fn route<T>(from: &str, to: &str, find: impl Fn(&str, &str) -> Option<T>) -> Result<Vec<T>, (String, String)> {
    if let Some(p) = find(from, to) {
        return Ok(vec![p]);
    }
    if tags_match(from, PIVOT) || tags_match(to, PIVOT) {
        return Err((from.to_string(), to.to_string()));
    }
    let first = find(from, PIVOT).ok_or((from.to_string(), PIVOT.to_string()))?;
    let second = find(PIVOT, to).ok_or((PIVOT.to_string(), to.to_string()))?;
    Ok(vec![first, second])
}

/// `TranslationsUtils.langTagsMatch`: the same tag, or the same primary language with the same
/// script once a missing script is filled in from likely subtags (`zh` = `zh-Hans`, `zh-TW` =
/// `zh-Hant`, `sr` = `sr-Cyrl`). Firefox compares the primary subtags case-sensitively; reseam
/// ignores case there, since people type `ES` too.
pub fn tags_match(a: &str, b: &str) -> bool {
    if a.is_empty() || b.is_empty() {
        return false;
    }
    if a == b {
        return true;
    }
    match (normalize(a), normalize(b)) {
        (Some(x), Some(y)) => x == y,
        _ => false,
    }
}

/// `language-Script` after filling in the likely script; None if the tag does not parse.
fn normalize(tag: &str) -> Option<(String, String)> {
    let t = parse(tag)?;
    let script = t.script.unwrap_or_else(|| likely_script(&t.language, t.region.as_deref()).to_string());
    Some((t.language, script))
}

struct Tag {
    language: String,
    script: Option<String>,
    region: Option<String>,
}

/// The subtags that matter here, from a BCP 47 tag (extlangs, variants and extensions are read
/// past). None if it is not a well-formed tag.
fn parse(tag: &str) -> Option<Tag> {
    let mut parts = tag.split(['-', '_']);
    let language = parts.next()?;
    if !(matches!(language.len(), 2 | 3 | 5..=8) && language.chars().all(|c| c.is_ascii_alphabetic())) {
        return None;
    }
    let mut t = Tag { language: language.to_ascii_lowercase(), script: None, region: None };
    let mut stage = 0; // 0: extlang or later, 1: after script, 2: after region
    for p in parts {
        if p.is_empty() || p.len() > 8 || !p.chars().all(|c| c.is_ascii_alphanumeric()) {
            return None;
        }
        let alpha = p.chars().all(|c| c.is_ascii_alphabetic());
        if stage == 0 && p.len() == 3 && alpha && t.script.is_none() {
            continue; // extlang
        }
        if stage == 0 && p.len() == 4 && alpha {
            let mut s = p.to_ascii_lowercase();
            s[..1].make_ascii_uppercase();
            t.script = Some(s);
            stage = 1;
        } else if stage <= 1 && ((p.len() == 2 && alpha) || (p.len() == 3 && p.chars().all(|c| c.is_ascii_digit()))) {
            t.region = Some(p.to_ascii_uppercase());
            stage = 2;
        } else {
            stage = 3; // variants, extensions: not used for matching
        }
    }
    Some(t)
}

/// A model folder's name as its pair, the one rule of every reader of a models folder (the
/// registry, `detect`'s candidates, `pack`): `es-en`, `zh-Hant-en` → (`zh-Hant`, `en`), `en-pt-BR`
/// are cut where both sides are language tags and one is English (every Firefox model has English
/// on one side, and tags hold hyphens themselves); `es-de` (a model made elsewhere), two tags of
/// two or three lowercase letters, at its hyphen.
pub fn pair_name(name: &str) -> Option<(&str, &str)> {
    let english = |t: &str| tags_match(t, PIVOT);
    let mut cuts = name.match_indices('-').map(|(i, _)| (&name[..i], &name[i + 1..]));
    cuts.find(|&(a, b)| is_valid(a) && is_valid(b) && (english(a) || english(b))).or_else(|| {
        let (a, b) = name.split_once('-')?;
        let plain = |s: &str| (2..=3).contains(&s.len()) && s.chars().all(|c| c.is_ascii_lowercase());
        (plain(a) && plain(b)).then_some((a, b))
    })
}

/// Whether `tag` is a well-formed language tag (what may name a folder or a record's language).
pub fn is_valid(tag: &str) -> bool {
    tag.len() <= 35 && !tag.contains('_') && parse(tag).is_some()
}

/// The script `Intl.Locale.maximize()` fills in, for the languages where it is not Latin, plus the
/// regions that change it. Latin for everything else.
fn likely_script(language: &str, region: Option<&str>) -> &'static str {
    match (language, region) {
        ("zh", Some("TW" | "HK" | "MO")) => "Hant",
        ("zh", _) => "Hans",
        ("sr", Some("ME" | "XK")) | ("uz", None | Some("UZ")) | ("az", None | Some("AZ")) => "Latn",
        ("pa", Some("PK")) | ("uz", Some("AF")) | ("az", Some("IR")) | ("ms", Some("CC")) => "Arab",
        ("mn", Some("CN")) => "Mong",
        ("ar" | "fa" | "ur" | "ps" | "sd" | "ckb" | "ug" | "ks", _) => "Arab",
        ("he" | "yi", _) => "Hebr",
        ("ru" | "uk" | "be" | "bg" | "mk" | "sr" | "kk" | "ky" | "tg" | "mn" | "tt" | "ba" | "cv" | "ce", _) => "Cyrl",
        ("uz" | "az", _) => "Latn",
        ("el", _) => "Grek",
        ("hy", _) => "Armn",
        ("ka", _) => "Geor",
        ("hi" | "mr" | "ne" | "sa" | "mai" | "bho", _) => "Deva",
        ("bn" | "as", _) => "Beng",
        ("gu", _) => "Gujr",
        ("pa", _) => "Guru",
        ("ta", _) => "Taml",
        ("te", _) => "Telu",
        ("kn", _) => "Knda",
        ("ml", _) => "Mlym",
        ("si", _) => "Sinh",
        ("or", _) => "Orya",
        ("th", _) => "Thai",
        ("lo", _) => "Laoo",
        ("km", _) => "Khmr",
        ("my", _) => "Mymr",
        ("ja", _) => "Jpan",
        ("ko", _) => "Kore",
        ("am" | "ti", _) => "Ethi",
        ("dv", _) => "Thaa",
        ("bo" | "dz", _) => "Tibt",
        _ => "Latn",
    }
}

/// One item of `LANGS`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Want {
    /// A language: both directions with English, whichever the source offers.
    Language(String),
    /// A direction: the direct model, or the two models through English.
    Pair(String, String),
}

/// Splits `LANGS` into languages and pairs. `offered(tag)` says whether the source has models for a
/// language; it settles tags that contain hyphens themselves (`zh-Hant-en` is zh-Hant → en, and
/// `pt-BR` is a language unless the source offers a language `BR`).
pub fn parse_langs(spec: &str, offered: &dyn Fn(&str) -> bool) -> Result<Vec<Want>, String> {
    let mut wants = Vec::new();
    for item in spec.split(',').map(str::trim).filter(|s| !s.is_empty()) {
        let want = parse_item(item, offered)?;
        match &want {
            Want::Language(l) if tags_match(l, PIVOT) => {
                return Err(format!(
                    "`{item}`: English is the pivot language; name the other language (e.g. `es` fetches es-en and en-es)"
                ));
            }
            Want::Pair(a, b) if tags_match(a, b) => {
                return Err(format!("`{item}`: the source and target languages are the same"));
            }
            _ => {}
        }
        if !wants.contains(&want) {
            wants.push(want);
        }
    }
    if wants.is_empty() {
        return Err("no languages given (e.g. `es,ja` or `es-de`)".into());
    }
    Ok(wants)
}

fn parse_item(item: &str, offered: &dyn Fn(&str) -> bool) -> Result<Want, String> {
    let known = |t: &str| tags_match(t, PIVOT) || offered(t);
    let splits: Vec<(&str, &str)> = item
        .match_indices('-')
        .map(|(i, _)| (&item[..i], &item[i + 1..]))
        .filter(|(a, b)| is_valid(a) && is_valid(b))
        .collect();
    let offered_splits: Vec<_> = splits.iter().filter(|(a, b)| known(a) && known(b)).collect();
    match offered_splits.as_slice() {
        [(a, b)] => return Ok(Want::Pair(a.to_string(), b.to_string())),
        [] => {}
        _ => return Err(format!("`{item}` can be read as several language pairs; write it as one `from-to` pair")),
    }
    if is_valid(item) && (known(item) || splits.is_empty()) {
        return Ok(Want::Language(item.to_string()));
    }
    match splits.as_slice() {
        [(a, b)] => Ok(Want::Pair(a.to_string(), b.to_string())),
        [] => Err(format!("`{item}` is not a language tag or a `from-to` pair (e.g. `es`, `zh-Hant`, `es-de`)")),
        _ => Err(format!("`{item}` can be read as several language pairs; write it as one `from-to` pair")),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn tags_match_like_firefox() {
        for (a, b) in [
            ("es", "es"),
            ("zh", "zh-Hans"),
            ("zh-CN", "zh-Hans"),
            ("zh-TW", "zh-Hant"),
            ("sr", "sr-Cyrl"),
            ("pt-BR", "pt"),
            ("en-US", "en"),
            ("ES", "es"),
            ("sr-ME", "sr-Latn"),
            ("zh_TW", "zh-Hant"),
        ] {
            assert!(tags_match(a, b), "{a} {b}");
        }
        for (a, b) in [("zh", "zh-Hant"), ("zh-TW", "zh-Hans"), ("sr", "sr-Latn"), ("es", "en"), ("", "es"), ("es", "")]
        {
            assert!(!tags_match(a, b), "{a} {b}");
        }
    }

    #[test]
    fn tag_validity() {
        for t in ["es", "zh-Hant", "pt-BR", "es-419", "sr-Latn-RS", "ast"] {
            assert!(is_valid(t), "{t}");
        }
        for t in ["", "e", "es-", "-es", "es/en", "../x", "es en", "toolonglanguage", "e1"] {
            assert!(!is_valid(t), "{t}");
        }
    }

    #[test]
    fn langs_items() {
        let offered = |t: &str| ["es", "de", "ja", "zh-Hans", "zh-Hant", "pt"].iter().any(|o| tags_match(o, t));
        let parse = |s: &str| parse_langs(s, &offered);
        use Want::*;
        assert_eq!(parse("es,ja").unwrap(), vec![Language("es".into()), Language("ja".into())]);
        assert_eq!(parse(" es , es ").unwrap(), vec![Language("es".into())]);
        assert_eq!(parse("es-de").unwrap(), vec![Pair("es".into(), "de".into())]);
        assert_eq!(parse("zh-Hant-en").unwrap(), vec![Pair("zh-Hant".into(), "en".into())]);
        assert_eq!(parse("zh-Hant").unwrap(), vec![Language("zh-Hant".into())]);
        assert_eq!(parse("pt-BR").unwrap(), vec![Language("pt-BR".into())]);
        assert_eq!(parse("en-es").unwrap(), vec![Pair("en".into(), "es".into())]);
        // Not offered, but unambiguous: the pair is kept so the error can say it is not offered.
        assert_eq!(parse("xx-yy").unwrap(), vec![Pair("xx".into(), "yy".into())]);
        assert!(parse("en").unwrap_err().contains("pivot"));
        assert!(parse("es-es").unwrap_err().contains("same"));
        assert!(parse("").is_err());
        assert!(parse("es/de").is_err());
        assert!(parse("../..").is_err());
    }
}
