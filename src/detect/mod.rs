//! Language identification: which of the candidate languages a post is written in, with a
//! confidence, before it goes to the model of that language (`translate auto`, `serve`'s
//! `source: auto`, `reseam detect`).
//!
//! Text flows: post → [`crate::text::prose`] (links, mentions, hashtags, emoji blanked) →
//! `lingua` (character n-gram models of each candidate language, compared with the text's; high
//! accuracy mode, so short texts are read as well as they can be) → a Firefox language tag.
//!
//! Why lingua: measured against whatlang on 5,100 sentences of 20–100 characters (100 per language,
//! 51 of Firefox's languages, from lingua-rs's held-out test files) among all 51 candidates,
//! lingua was right on 95.1% and whatlang on 83.4%; among ten (en es fr de it pt nl pl ru uk),
//! 99.4% and 90.8%. lingua can be restricted to the candidate languages (the fewer, the more
//! accurate and the faster), and it tells Bosnian, Croatian and Serbian, and Bokmål and Nynorsk,
//! apart, which whatlang cannot. The price: its n-gram models are built into the binary (about
//! 230 MB for these 51 languages; a cold build of them takes about 4 minutes on 2 cores), and it is
//! slower, 5 ms per text among 51 candidates against whatlang's 0.15 ms (1.5 ms among ten), on a
//! loaded 2-core VM; the time grows with the number of candidates.
//!
//! Chinese is one language to lingua; its script decides `zh-Hans` or `zh-Hant` (characters
//! written differently in the two, [`chinese_script`]).

mod chinese;

use std::path::Path;
use std::str::FromStr;

use lingua::{IsoCode639_1, Language, LanguageDetector, LanguageDetectorBuilder};

pub use chinese::chinese_script;

/// The languages of Firefox's translation models (both sides of its pairs with English), as
/// Firefox tags them. Candidates when no model is installed.
pub const FIREFOX_LANGUAGES: &[&str] = &[
    "ar", "az", "be", "bg", "bn", "bs", "ca", "cs", "cy", "da", "de", "el", "en", "es", "et", "fa", "fi", "fr", "gu",
    "he", "hi", "hr", "hu", "id", "is", "it", "ja", "kn", "ko", "lt", "lv", "ml", "ms", "nb", "nl", "nn", "pl", "pt",
    "ro", "ru", "sk", "sl", "sq", "sr", "sv", "ta", "te", "th", "tr", "uk", "ur", "vi", "zh-Hans", "zh-Hant",
];

/// The tag printed and returned when a text holds nothing to identify (BCP 47's "undetermined").
pub const UNDETERMINED: &str = "und";

/// What [`Detector::detect`] found.
#[derive(Clone, Debug, PartialEq)]
pub struct Detection {
    /// A candidate's tag, or [`UNDETERMINED`] when the text holds no letters outside links,
    /// mentions, hashtags and emoji.
    pub language: String,
    /// 0 to 1: the share of the evidence that points to `language` rather than to the other
    /// candidates (lingua's relative confidence); 0 when undetermined.
    pub confidence: f64,
}

impl Detection {
    /// Whether there was anything to identify.
    pub fn is_determined(&self) -> bool {
        self.language != UNDETERMINED
    }
}

#[derive(Debug, thiserror::Error)]
pub enum DetectError {
    #[error("--languages: `{0}` is not a language tag such as `es` or `zh-Hant`")]
    NotATag(String),
    #[error(
        "--languages: reseam cannot identify {0} (its language identification knows none of Firefox's \
         languages by that tag); leave it out of the candidates"
    )]
    Unsupported(String),
    #[error("--languages: no candidate language given")]
    Empty,
}

impl DetectError {
    pub fn is_usage(&self) -> bool {
        true
    }
}

/// Identifies posts among a fixed set of candidate languages. Built once (the n-gram models are
/// read on its first detection), then shared: `detect` takes `&self`.
pub struct Detector {
    inner: LanguageDetector,
    /// (lingua's language, the candidate tags it stands for: two for Chinese).
    tags: Vec<(Language, Vec<String>)>,
}

impl std::fmt::Debug for Detector {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Detector").field("candidates", &self.candidates()).finish()
    }
}

impl Detector {
    /// A detector choosing among `candidates` (Firefox tags: `es`, `pt-BR`, `zh-Hant`). A tag
    /// lingua does not know is an error naming it, so that a typo is not silently ignored.
    pub fn new<S: AsRef<str>>(candidates: &[S]) -> Result<Detector, DetectError> {
        let mut tags: Vec<(Language, Vec<String>)> = Vec::new();
        for tag in candidates {
            let tag = tag.as_ref().trim();
            if tag.is_empty() {
                continue;
            }
            if !crate::fetch::lang::is_valid(tag) {
                return Err(DetectError::NotATag(tag.to_string()));
            }
            let language = lingua_language(tag).ok_or_else(|| DetectError::Unsupported(tag.to_string()))?;
            match tags.iter_mut().find(|(l, _)| *l == language) {
                Some((_, t)) if !t.iter().any(|t| t == tag) => t.push(tag.to_string()),
                Some(_) => {}
                None => tags.push((language, vec![tag.to_string()])),
            }
        }
        if tags.is_empty() {
            return Err(DetectError::Empty);
        }
        let languages: Vec<Language> = tags.iter().map(|(l, _)| *l).collect();
        // lingua needs two languages to compare; one candidate is then always the answer. The
        // models are read on the first detection, so a detector that is never used costs nothing.
        let inner = if languages.len() >= 2 {
            LanguageDetectorBuilder::from_languages(&languages).build()
        } else {
            LanguageDetectorBuilder::from_languages(&[languages[0], Language::English]).build()
        };
        Ok(Detector { inner, tags })
    }

    /// A detector over the languages that can be translated with the models under `models`
    /// (every language of an installed pair), or over all of Firefox's languages (those lingua
    /// knows) when none is installed.
    pub fn for_models(models: &Path) -> Result<Detector, DetectError> {
        let installed = installed_languages(models);
        if installed.is_empty() {
            let known: Vec<&str> = FIREFOX_LANGUAGES.iter().copied().filter(|t| lingua_language(t).is_some()).collect();
            Detector::new(&known)
        } else {
            Detector::new(&installed)
        }
    }

    /// The candidate tags, in the order given.
    pub fn candidates(&self) -> Vec<&str> {
        self.tags.iter().flat_map(|(_, t)| t.iter().map(String::as_str)).collect()
    }

    /// The language of `text`. A text without letters (only links, mentions, hashtags, emoji,
    /// numbers) is [`UNDETERMINED`] with confidence 0, never an error.
    pub fn detect(&self, text: &str) -> Detection {
        let prose = crate::text::prose(text);
        if !prose.chars().any(char::is_alphabetic) {
            return Detection { language: UNDETERMINED.to_string(), confidence: 0.0 };
        }
        let tag = |language: Language, tags: &[String]| -> String {
            if tags.len() == 1 {
                return tags[0].clone();
            }
            // Chinese given as both zh-Hans and zh-Hant (the only tags that share a language).
            let script = chinese_script(&prose);
            tags.iter()
                .find(|t| t.contains(script))
                .or_else(|| tags.first())
                .cloned()
                .unwrap_or_else(|| language.iso_code_639_1().to_string())
        };
        if self.tags.len() == 1 {
            let (language, tags) = &self.tags[0];
            return Detection { language: tag(*language, tags), confidence: 1.0 };
        }
        let values = self.inner.compute_language_confidence_values(&prose);
        match values.first() {
            Some(&(language, confidence)) if confidence > 0.0 => {
                // Every language lingua returns is one of ours: it was built from them.
                let tags = self.tags.iter().find(|(l, _)| *l == language).map(|(_, t)| t.as_slice()).unwrap_or(&[]);
                Detection { language: tag(language, tags), confidence }
            }
            // Letters, but of no candidate's script (Cyrillic among Latin-script candidates).
            _ => Detection { language: UNDETERMINED.to_string(), confidence: 0.0 },
        }
    }
}

/// lingua's language for a Firefox tag: by its primary subtag (`pt-BR` → Portuguese, `zh-Hant`
/// → Chinese); `no` is read as Bokmål, as Firefox's `nb`.
fn lingua_language(tag: &str) -> Option<Language> {
    let primary = tag.split(['-', '_']).next()?.to_ascii_lowercase();
    let primary = if primary == "no" { "nb".to_string() } else { primary };
    let code = IsoCode639_1::from_str(&primary).ok()?;
    let language = Language::from_iso_code_639_1(&code);
    Language::all().contains(&language).then_some(language)
}

/// Every language on either side of a pair installed under `models` (`reseam fetch`'s folders
/// with a complete manifest, or `<from>-<to>/` folders holding a model copied by hand), sorted.
pub fn installed_languages(models: &Path) -> Vec<String> {
    let mut langs: Vec<String> = Vec::new();
    for (from, to, _) in crate::fetch::installed(models) {
        langs.extend([from, to]);
    }
    if let Ok(entries) = std::fs::read_dir(models) {
        for entry in entries.filter_map(Result::ok) {
            let name = entry.file_name().to_string_lossy().into_owned();
            let Some((from, to)) = split_pair(&name) else { continue };
            if crate::marian::find(models, from, to, None).is_ok() {
                langs.extend([from.to_string(), to.to_string()]);
            }
        }
    }
    if langs.is_empty()
        && let Some((from, to)) = folder_pair(models)
    {
        langs.extend([from, to]);
    }
    langs.sort();
    langs.dedup();
    langs
}

/// `es-en` → (`es`, `en`), `zh-Hant-en` → (`zh-Hant`, `en`), `en-pt-BR` → (`en`, `pt-BR`): a
/// folder name cut where one side is English (every Firefox model has English on one side, and
/// tags hold hyphens themselves); None for other names.
fn split_pair(name: &str) -> Option<(&str, &str)> {
    let is_en = |t: &str| crate::fetch::lang::tags_match(t, crate::fetch::lang::PIVOT);
    let valid = crate::fetch::lang::is_valid;
    (1..name.len()).filter(|&i| name.as_bytes()[i] == b'-').find_map(|i| {
        let (a, b) = (&name[..i], &name[i + 1..]);
        (valid(a) && valid(b) && (is_en(a) || is_en(b))).then_some((a, b))
    })
}

/// The pair of a single model folder given as the models folder (`model.esen.*.bin`).
fn folder_pair(models: &Path) -> Option<(String, String)> {
    std::fs::read_dir(models).ok()?.filter_map(Result::ok).find_map(|entry| {
        let name = entry.file_name().into_string().ok()?;
        let pair = name.strip_prefix("model.")?.split('.').next()?.to_string();
        (pair.len() == 4 && pair.chars().all(|c| c.is_ascii_lowercase()))
            .then(|| (pair[..2].to_string(), pair[2..].to_string()))
    })
}

#[cfg(test)]
mod tests;
