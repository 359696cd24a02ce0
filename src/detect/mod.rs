//! Language identification: which of the candidate languages a post is written in, with a
//! confidence, before it goes to the model of that language (`translate auto`, `serve`'s
//! `source: auto`, `reseam detect`).
//!
//! Text flows: post → [`crate::text::prose`] (links, mentions, hashtags, emoji blanked) →
//! whatlang (trigram profiles; its ten best guesses among the candidates it knows) → lingua's
//! method among those guesses, their close languages and the candidates whatlang has no profile
//! of: its rules (a script or characters only one candidate writes decide; characters only a few
//! write narrow the candidates, [`rules`]), then its character 1- to 5-gram models compared with
//! the text's (high accuracy mode, [`model`]) → a Firefox language tag.
//!
//! Why lingua's method: measured against whatlang on 5,100 sentences of 20–100 characters (100 per
//! language, 51 of Firefox's languages, from lingua-rs's held-out test files) among all 51
//! candidates, lingua was right on 95.1% and whatlang on 83.4%; among ten (en es fr de it pt nl pl
//! ru uk), 99.4% and 90.8%; it tells Bosnian, Croatian and Serbian, and Bokmål and Nynorsk, apart,
//! which whatlang cannot. Why not the lingua crate: its models are 228 MB compiled in (the binary
//! was 255 MB, a cold build of them 4 minutes). Here is its scoring, rewritten over the same kind
//! of `fst` maps (checked against lingua 1.8 with its full models: the same first language on all
//! 1,966 texts of tests/data/langid and on 5,100 more of its test sentences, confidences within 1e-13),
//! with models pruned by `examples/lid_models.rs` from lingua's (Apache-2.0): per language every
//! unigram and the 6,000 bigrams and 30,000 tri-, four- and five-grams that weigh most on the
//! scores, `ln p` in steps of 1/12 (quantizing changed no answer), 16 MB of maps, 8.7 MB
//! zstd-compressed in the binary. Measured among the 51 languages (`lid_models eval`): on the
//! labelled texts 95.1% of those of 20+ characters and 89.6% of the shorter ones (lingua's full
//! models with the first pass of five: 95.0% and 88.5%; alone: 95.4% and 88.5%), and on 5,100
//! sentences held out of every choice 94.7% (full models: 94.7%). Smaller models lost accuracy:
//! 6.8 MB of maps 93.9%, 9.6 MB 94.6% (the 20+ texts); keeping the most frequent n-grams instead
//! of those that weigh most, 12 MB gave 94.3%. fastText's lid.176 (0.9 MB) was measured too, 90.1%
//! and 78.7%: it cannot tell the close pairs apart.
//!
//! Why whatlang first: it is fast and its first guesses nearly always hold the right language, so
//! the models compare ten to fifteen languages instead of 51; with ten guesses the two are as
//! accurate as the models alone among 51 (95.1% against 95.0%, five guesses: 94.7%).
//!
//! Chinese is one language to lingua; its script decides `zh-Hans` or `zh-Hant` (characters
//! written differently in the two, [`chinese_script`]).

mod chinese;
mod languages;
mod model;
mod rules;
mod script;

use std::path::Path;
use std::sync::{Arc, LazyLock};

use languages::{Language, LanguageSet};

pub use chinese::chinese_script;
pub use model::{Models, ModelsError};

/// The n-gram models compiled in, zstd-compressed (see the module doc for how they were made),
/// unpacked on the first detection.
static BUILTIN: LazyLock<Models> = LazyLock::new(|| {
    // Checked by the tests of every build; a broken file here is a build defect, not bad input.
    let bytes = zstd::decode_all(&include_bytes!("ngrams.bin.zst")[..]).expect("src/detect/ngrams.bin.zst unpacks");
    Models::parse(&bytes).expect("src/detect/ngrams.bin.zst is a valid models file")
});

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
    /// candidates (lingua's relative confidence: the softmax of the candidates' mean n-gram log
    /// probabilities, 1 when a rule decided); 0 when undetermined.
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

/// Identifies posts among a fixed set of candidate languages. Built once (the compiled-in n-gram
/// models are unpacked by the first detection), then shared: `detect` takes `&self`.
pub struct Detector {
    /// None for the compiled-in models, unpacked by the first detection of any detector.
    models: Option<Arc<Models>>,
    /// (the language, the candidate tags it stands for: two for Chinese).
    tags: Vec<(Language, Vec<String>)>,
    /// The candidates' languages.
    all: LanguageSet,
    /// The first pass, when there are more candidates than [`NARROW_ABOVE`]: the candidates
    /// whatlang knows, as (whatlang's language, ours).
    whatlang: Vec<(whatlang::Lang, Language)>,
}

/// With at most this many candidates the n-gram models compare them all; with more, whatlang
/// first narrows them down.
const NARROW_ABOVE: usize = 4;

/// How many of whatlang's best guesses go on to the n-gram models: the right language is among
/// whatlang's first few far more often than it is its first (whatlang alone was right on 83% of
/// short texts among 51 languages, lingua's method on 95%). Ten among many candidates (measured on
/// the labelled texts among 51 with the compiled-in models: 94.7% with five, 95.1% with ten, the
/// models alone 95.0%); fewer among few, where the models would compare nearly all anyway.
fn guesses(candidates: usize) -> usize {
    (candidates / 3).clamp(2, 10)
}

/// Languages so close that a first pass that names one must leave the others to the models (the
/// confusions lingua's method itself makes most: Bosnian/Croatian/Serbian, the Scandinavian languages,
/// Malay/Indonesian, Czech/Slovak, Catalan/Spanish/Portuguese).
const CLOSE: &[&[&str]] = &[
    &["bs", "hr", "sr", "sl"],
    &["nb", "nn", "da", "sv", "is"],
    &["ms", "id"],
    &["cs", "sk"],
    &["ca", "es", "pt"],
    &["ru", "uk", "be", "bg"],
    &["fa", "ur", "ar"],
    &["hi", "ur"],
];

impl std::fmt::Debug for Detector {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Detector").field("candidates", &self.candidates()).finish()
    }
}

impl Detector {
    /// A detector choosing among `candidates` (Firefox tags: `es`, `pt-BR`, `zh-Hant`). A tag
    /// the models do not know is an error naming it, so that a typo is not silently ignored.
    pub fn new<S: AsRef<str>>(candidates: &[S]) -> Result<Detector, DetectError> {
        Detector::build(candidates, None)
    }

    /// [`Detector::new`] with other n-gram models than those compiled in (the generator of
    /// `src/detect/ngrams.bin.zst` measures candidate models with it).
    #[doc(hidden)]
    pub fn with_models<S: AsRef<str>>(candidates: &[S], models: Arc<Models>) -> Result<Detector, DetectError> {
        Detector::build(candidates, Some(models))
    }

    fn build<S: AsRef<str>>(candidates: &[S], models: Option<Arc<Models>>) -> Result<Detector, DetectError> {
        // The compiled-in models hold every language of the table.
        let known = models.as_ref().map_or(u64::MAX, |m| m.languages());
        let mut tags: Vec<(Language, Vec<String>)> = Vec::new();
        for tag in candidates {
            let tag = tag.as_ref().trim();
            if tag.is_empty() {
                continue;
            }
            if !crate::fetch::tags::is_valid(tag) {
                return Err(DetectError::NotATag(tag.to_string()));
            }
            let language = language_of(tag)
                .filter(|l| known & l.bit() != 0)
                .ok_or_else(|| DetectError::Unsupported(tag.to_string()))?;
            match tags.iter_mut().find(|(l, _)| *l == language) {
                Some((_, t)) if !t.iter().any(|t| t == tag) => t.push(tag.to_string()),
                Some(_) => {}
                None => tags.push((language, vec![tag.to_string()])),
            }
        }
        if tags.is_empty() {
            return Err(DetectError::Empty);
        }
        let all = tags.iter().fold(0, |s, (l, _)| s | l.bit());
        let whatlang = if tags.len() > NARROW_ABOVE {
            tags.iter().filter_map(|&(l, _)| whatlang_lang(l).map(|w| (w, l))).collect()
        } else {
            Vec::new()
        };
        Ok(Detector { models, tags, all, whatlang })
    }

    /// lingua's confidence values among `languages`: its rules first (a script or characters
    /// only one candidate writes), then the n-gram models among the candidates the rules leave.
    fn confidences(&self, prose: &str, languages: LanguageSet) -> Vec<(Language, f64)> {
        let mut values: Vec<(Language, f64)> = languages::members(languages).map(|l| (l, 0.0)).collect();
        let words = rules::words(prose);
        if words.is_empty() {
            return values;
        }
        if let Some(l) = rules::decide(&words, languages) {
            model::set(&mut values, l, 1.0);
        } else {
            let left = rules::filter(&words, languages);
            if left.count_ones() == 1 {
                languages::members(left).for_each(|l| model::set(&mut values, l, 1.0));
            } else {
                let models = self.models.as_deref().unwrap_or_else(|| &BUILTIN);
                for (l, c) in models.confidences(&words, left) {
                    model::set(&mut values, l, c);
                }
            }
        }
        model::sort(&mut values);
        values
    }

    /// The few candidates worth comparing closely (whatlang's best guesses among the candidates
    /// it knows, their close languages, and when it is unsure the candidates it does not know),
    /// or None to compare them all (few candidates, or a text whatlang finds nothing in).
    fn narrow(&self, prose: &str) -> Option<LanguageSet> {
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
            .map(|g| g.iter().filter_map(|c| Language::from_iso_639_1(c)).collect::<Vec<_>>())
            .filter(|g| g.iter().any(|l| chosen.contains(l)))
            .flat_map(|g| g.into_iter().filter(|l| ours.contains(l)))
            .collect();
        chosen.extend(close);
        // whatlang cannot guess a language it has no profile of (Albanian, Icelandic, Malay,
        // ...): on such a text it names another one, so these always go on to the models.
        let script = first.script();
        chosen
            .extend(ours.iter().filter(|l| whatlang_lang(**l).is_none() && writes_in(**l).is_none_or(|s| s == script)));
        chosen.sort();
        chosen.dedup();
        if chosen.len() < 2 {
            // A confidence among one would say nothing.
            return None;
        }
        Some(chosen.iter().fold(0, |s, l| s | l.bit()))
    }

    /// A detector over the languages that can be translated with the models under `models`
    /// (every language of an installed pair), or over all of Firefox's languages (those the
    /// models know) when none is installed.
    pub fn for_models(models: &Path) -> Result<Detector, DetectError> {
        let installed = installed_languages(models);
        let firefox = || FIREFOX_LANGUAGES.iter().map(|t| t.to_string()).collect();
        let tags = if installed.is_empty() { firefox() } else { installed };
        Detector::among_known(&tags).ok_or(DetectError::Empty)
    }

    /// A detector over those of `tags` that identification [`knows`], the others left out (a
    /// model of a language it has no n-grams for can still be translated from by name); `None`
    /// when it knows none of them.
    pub fn among_known<S: AsRef<str>>(tags: &[S]) -> Option<Detector> {
        let known: Vec<&str> = tags.iter().map(|t| t.as_ref().trim()).filter(|t| knows(t)).collect();
        Detector::new(&known).ok()
    }

    /// The confidence of every candidate language (ISO 639-1) that `text` is written in it, best
    /// first, compared among all candidates without the first pass: what the generator of the
    /// models checks against lingua itself.
    #[doc(hidden)]
    pub fn scores(&self, text: &str) -> Vec<(&'static str, f64)> {
        self.confidences(&crate::text::prose(text), self.all).into_iter().map(|(l, c)| (l.iso_639_1(), c)).collect()
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
                .unwrap_or_else(|| language.iso_639_1().to_string())
        };
        if self.tags.len() == 1 {
            let (language, tags) = &self.tags[0];
            return Detection { language: tag(*language, tags), confidence: 1.0 };
        }
        let values = self.confidences(&prose, self.narrow(&prose).unwrap_or(self.all));
        match values.first() {
            Some(&(language, confidence)) if confidence > 0.0 => {
                // Every language scored is one of ours.
                let tags = self.tags.iter().find(|(l, _)| *l == language).map(|(_, t)| t.as_slice()).unwrap_or(&[]);
                Detection { language: tag(language, tags), confidence }
            }
            // Letters, but of no candidate's script (Cyrillic among Latin-script candidates).
            _ => Detection { language: UNDETERMINED.to_string(), confidence: 0.0 },
        }
    }
}

/// The languages a models file may hold, as (lingua's name, ISO 639-1, ISO 639-3), for its generator.
#[doc(hidden)]
pub fn model_languages() -> Vec<(&'static str, &'static str, &'static str)> {
    Language::all().map(|l| (l.name(), l.iso_639_1(), l.iso_639_3())).collect()
}

/// Whether identification knows the language of `tag` (a language tag whose primary language the
/// compiled-in models hold): the one rule for which installed languages `auto` chooses among.
pub fn knows(tag: &str) -> bool {
    crate::fetch::tags::is_valid(tag) && language_of(tag).is_some()
}

/// The language of a Firefox tag: by its primary subtag (`pt-BR` → Portuguese, `zh-Hant` →
/// Chinese); `no` is read as Bokmål, as Firefox's `nb`.
fn language_of(tag: &str) -> Option<Language> {
    let primary = tag.split(['-', '_']).next()?.to_ascii_lowercase();
    let primary = if primary == "no" { "nb".to_string() } else { primary };
    Language::from_iso_639_1(&primary)
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
            let Some((from, to)) = crate::fetch::tags::pair_name(&name) else { continue };
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

/// whatlang's language for ours, by ISO 639-3 code (whatlang names Persian by its Iranian
/// variety and Chinese as Mandarin); None for the languages whatlang has no profile of.
fn whatlang_lang(language: Language) -> Option<whatlang::Lang> {
    let code = match language.iso_639_1() {
        "fa" => "pes",
        "zh" => "cmn",
        _ => language.iso_639_3(),
    };
    whatlang::Lang::from_code(code)
}

/// The script of a language whatlang does not know, where it has one (so that, say, Albanian
/// joins only Latin-script texts); None lets it join any.
fn writes_in(language: Language) -> Option<whatlang::Script> {
    ["sq", "bs", "is", "ms", "nn"].contains(&language.iso_639_1()).then_some(whatlang::Script::Latin)
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
