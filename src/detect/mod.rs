//! Language identification: which of the candidate languages a post is written in, with a
//! confidence, before it goes to the model of that language (`translate auto`, `serve`'s
//! `source: auto`, `reseam detect`).
//!
//! Text flows: post → [`crate::text::prose`] (links, mentions, hashtags, emoji blanked) →
//! whatlang (trigram profiles; its five best guesses among the candidates it knows) → `lingua`
//! among those guesses, their close languages and the candidates whatlang has no profile of
//! (character 1- to 5-gram models compared with the text's; high accuracy mode, so short texts are
//! read as well as they can be) → a Firefox language tag.
//!
//! Why lingua: measured against whatlang on 5,100 sentences of 20–100 characters (100 per language,
//! 51 of Firefox's languages, from lingua-rs's held-out test files) among all 51 candidates,
//! lingua was right on 95.1% and whatlang on 83.4%; among ten (en es fr de it pt nl pl ru uk),
//! 99.4% and 90.8%. lingua can be restricted to the candidate languages (the fewer, the more
//! accurate and the faster), and it tells Bosnian, Croatian and Serbian, and Bokmål and Nynorsk,
//! apart, which whatlang cannot. The price: its n-gram models are built into the binary (about
//! 230 MB for these 51 languages; a cold build of them takes about 4 minutes on 2 cores), and its
//! time grows with the number of candidates: 5–9 ms per text among 51 against whatlang's
//! 0.06 ms. Why both: whatlang's first guesses nearly always hold the right language, so lingua
//! compares five to ten languages instead of 51, and the two together are as accurate as lingua
//! alone (95.0% against 95.4% on the labelled texts of 20+ characters) at 0.5 ms a text.
//!
//! Chinese is one language to lingua; its script decides `zh-Hans` or `zh-Hant` (characters
//! written differently in the two, [`chinese_script`]).

mod chinese;

use std::collections::HashMap;
use std::path::Path;
use std::str::FromStr;
use std::sync::{Arc, Mutex};

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

crate::error::fault!(DetectError);

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
    /// The first pass, when there are more candidates than [`NARROW_ABOVE`]: the candidates
    /// whatlang knows, as (whatlang's language, lingua's).
    whatlang: Vec<(whatlang::Lang, Language)>,
    /// lingua detectors over the few candidates a first pass left, by those candidates (sorted):
    /// the same few recur, and building one walks every candidate's alphabet.
    narrowed: Mutex<HashMap<Vec<Language>, Arc<LanguageDetector>>>,
}

/// With at most this many candidates lingua compares them all (about 0.2 ms per candidate on a
/// short text); with more, whatlang first narrows them down.
const NARROW_ABOVE: usize = 4;

/// How many of whatlang's best guesses go on to lingua: the right language is among whatlang's
/// first few far more often than it is its first (whatlang alone was right on 83% of short texts
/// among 51 languages, lingua on 95%). Five among many candidates (measured on the labelled
/// texts among 51: 94.5% with three, 95.0% with five, as lingua alone within 0.4 points, at
/// under a tenth of its time); fewer among few, where lingua would compare nearly all anyway.
fn guesses(candidates: usize) -> usize {
    (candidates / 3).clamp(2, 5)
}

/// Languages so close that a first pass that names one must leave the others to lingua (the
/// confusions lingua itself makes most: Bosnian/Croatian/Serbian, the Scandinavian languages,
/// Malay/Indonesian, Czech/Slovak, Catalan/Spanish/Portuguese).
const CLOSE: &[&[Language]] = &[
    &[Language::Bosnian, Language::Croatian, Language::Serbian, Language::Slovene],
    &[Language::Bokmal, Language::Nynorsk, Language::Danish, Language::Swedish, Language::Icelandic],
    &[Language::Malay, Language::Indonesian],
    &[Language::Czech, Language::Slovak],
    &[Language::Catalan, Language::Spanish, Language::Portuguese],
    &[Language::Russian, Language::Ukrainian, Language::Belarusian, Language::Bulgarian],
    &[Language::Persian, Language::Urdu, Language::Arabic],
    &[Language::Hindi, Language::Urdu],
];

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
        let whatlang = if languages.len() > NARROW_ABOVE {
            languages.iter().filter_map(|&l| whatlang_lang(l).map(|w| (w, l))).collect()
        } else {
            Vec::new()
        };
        Ok(Detector { inner, tags, whatlang, narrowed: Mutex::default() })
    }

    /// The few candidates worth comparing closely (whatlang's best guesses among the candidates
    /// it knows, their close languages, and when it is unsure the candidates it does not know),
    /// or None to compare them all (few candidates, or a text whatlang finds nothing in).
    fn narrow(&self, prose: &str) -> Option<Arc<LanguageDetector>> {
        if self.whatlang.is_empty() {
            return None;
        }
        let mut left: Vec<whatlang::Lang> = self.whatlang.iter().map(|(w, _)| *w).collect();
        let mut chosen: Vec<Language> = Vec::new();
        let mut first: Option<whatlang::Info> = None;
        for _ in 0..guesses(self.tags.len()) {
            let Some(info) = whatlang::Detector::with_allowlist(left.clone()).detect(prose) else { break };
            left.retain(|w| *w != info.lang());
            chosen.extend(self.whatlang.iter().filter(|(w, _)| *w == info.lang()).map(|(_, l)| *l));
            first.get_or_insert(info);
        }
        let first = first?;
        let ours: Vec<Language> = self.tags.iter().map(|(l, _)| *l).collect();
        let close: Vec<Language> = CLOSE
            .iter()
            .filter(|g| g.iter().any(|l| chosen.contains(l)))
            .flat_map(|g| g.iter().copied().filter(|l| ours.contains(l)))
            .collect();
        chosen.extend(close);
        // whatlang cannot guess a language it has no profile of (Albanian, Icelandic, Malay,
        // ...): on such a text it names another one, so these always go on to lingua.
        let script = first.script();
        chosen
            .extend(ours.iter().filter(|l| whatlang_lang(**l).is_none() && writes_in(**l).is_none_or(|s| s == script)));
        chosen.sort();
        chosen.dedup();
        if chosen.len() < 2 {
            // lingua needs two to compare; its confidence among one would say nothing.
            return None;
        }
        let mut cache = self.narrowed.lock().unwrap_or_else(|e| e.into_inner());
        if cache.len() > 4096 {
            cache.clear();
        }
        let d =
            cache.entry(chosen).or_insert_with_key(|c| Arc::new(LanguageDetectorBuilder::from_languages(c).build()));
        Some(d.clone())
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
        let values = match self.narrow(&prose) {
            Some(narrowed) => narrowed.compute_language_confidence_values(&prose),
            None => self.inner.compute_language_confidence_values(&prose),
        };
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
            let Some((from, to)) = crate::fetch::lang::pair_name(&name) else { continue };
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

/// whatlang's language for lingua's, by ISO 639-3 code (whatlang names Persian by its Iranian
/// variety and Chinese as Mandarin); None for the languages whatlang has no profile of.
fn whatlang_lang(language: Language) -> Option<whatlang::Lang> {
    let code = match language {
        Language::Persian => "pes".to_string(),
        Language::Chinese => "cmn".to_string(),
        l => l.iso_code_639_3().to_string(),
    };
    whatlang::Lang::from_code(code)
}

/// The script of a language whatlang does not know, where it has one (so that, say, Albanian
/// joins only Latin-script texts); None lets it join any.
fn writes_in(language: Language) -> Option<whatlang::Script> {
    match language {
        Language::Albanian | Language::Bosnian | Language::Icelandic | Language::Malay | Language::Nynorsk => {
            Some(whatlang::Script::Latin)
        }
        _ => None,
    }
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
