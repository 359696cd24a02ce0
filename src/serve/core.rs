//! The one call every dialect makes: texts from one language (or `auto`) to another, as posts or
//! HTML, through the shared engine; plus what the dialects list (languages, pairs).
//!
//! Blocking: a caller waits for its sentences while they share decoder steps with every other
//! request's ([`crate::engine`]). The installed models live in one [`Models`] value that a
//! reload replaces whole; a request holds the one it started with, so it finishes on the models
//! it began on.

use std::path::PathBuf;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, RwLock};
use std::time::Instant;

use crate::detect::{Detection, Detector};
use crate::engine::Engine;
use crate::engine::registry::{Registry, RegistryError, RegistryOptions};
use crate::fetch::lang::tags_match;
use crate::marian::PIVOT;
use crate::translate::{TranslateOptions, Translator};

use super::error::ApiError;
use super::lang::{self, LangError};
use super::metrics::Metrics;

/// Request limits (the seed's MAX_TEXTS, MAX_CHARS).
#[derive(Clone, Copy, Debug)]
pub struct Limits {
    pub max_texts: usize,
    pub max_chars: usize,
}

/// One translation request, in any dialect.
#[derive(Clone, Debug)]
pub struct Job {
    /// A client's language code; `None` or `auto`: identify each text's language.
    pub from: Option<String>,
    pub to: String,
    pub texts: Vec<String>,
    /// The texts are HTML: their markup is kept ([`crate::html`]).
    pub html: bool,
    /// Split lines into sentences; `None`: as the server is set up (DeepL's `split_sentences=0`
    /// asks for each line as one sentence).
    pub split_sentences: Option<bool>,
}

/// The translations of a [`Job`], in order, and what identification found for each text (when
/// the source was `auto`).
#[derive(Clone, Debug)]
pub struct Output {
    pub translations: Vec<String>,
    pub detected: Vec<Option<Detection>>,
    /// The installed source language each text was translated from (after normalising or
    /// identification); `None` when it could not be identified.
    pub sources: Vec<Option<String>>,
}

/// The installed models and what is derived from them; replaced whole by a reload.
pub struct Models {
    pub registry: Arc<Registry>,
    /// Identification among the installed languages (None when it cannot be set up).
    pub detector: Option<Detector>,
    /// Every language on either side of an installed pair, sorted.
    pub languages: Vec<String>,
}

impl Models {
    /// The models under `dir`; a reload passes the models it replaces, whose loaded models
    /// are carried over where their files did not change.
    pub fn open(
        dir: &std::path::Path,
        opts: RegistryOptions,
        previous: Option<&Models>,
    ) -> Result<Models, RegistryError> {
        let registry = Arc::new(Registry::open_after(dir, opts, previous.map(|m| m.registry.as_ref()))?);
        // IDLE_SECONDS: the timer holds the registry weakly, so it ends with it (after a reload,
        // when the last request on the old models is done).
        drop(registry.idle_timer());
        let mut languages: Vec<String> = registry.pairs().into_iter().flat_map(|(a, b)| [a, b]).collect();
        languages.sort();
        languages.dedup();
        // Only the languages identification knows (lingua has no Kannada model, for one).
        let known: Vec<&String> = languages.iter().filter(|l| Detector::new(&[l.as_str()]).is_ok()).collect();
        let detector = if known.is_empty() { None } else { Detector::new(&known).ok() };
        if let Some(d) = &detector {
            // lingua reads its n-gram models on first use: pay that before the first request.
            let _ = d.detect("warm up");
        }
        Ok(Models { registry, detector, languages })
    }

    /// Every target reachable from `from`: direct pairs, and through English.
    pub fn targets(&self, from: &str) -> Vec<String> {
        let pairs = self.registry.pairs();
        let mut out: Vec<String> = pairs.iter().filter(|(a, _)| a == from).map(|(_, b)| b.clone()).collect();
        if from != PIVOT && pairs.iter().any(|(a, b)| a == from && b == PIVOT) {
            out.extend(pairs.iter().filter(|(a, b)| a == PIVOT && b != from).map(|(_, b)| b.clone()));
        }
        out.sort();
        out.dedup();
        out
    }
}

/// The service behind every route.
pub struct Core {
    pub dir: PathBuf,
    registry_opts: RegistryOptions,
    models: RwLock<Arc<Models>>,
    /// One reload at a time, so that two quick SIGHUPs cannot swap in the older view last.
    reloading: std::sync::Mutex<()>,
    pub engine: Arc<Engine>,
    /// Settings of every translator (its `from`/`to` are each request's).
    base: TranslateOptions,
    pub limits: Limits,
    /// Whether requests need TRANSLATE_TOKEN (the token itself stays with the HTTP layer).
    pub token_required: bool,
    pub metrics: Metrics,
    /// Preloading is done (or was not asked for).
    pub loaded: AtomicBool,
    /// SIGTERM came: finishing what is in flight.
    pub draining: AtomicBool,
}

impl Core {
    pub fn new(
        dir: PathBuf,
        registry_opts: RegistryOptions,
        engine: Arc<Engine>,
        base: TranslateOptions,
        limits: Limits,
        token_required: bool,
    ) -> Result<Core, RegistryError> {
        // Listing only: preloading is [`Core::preload`]'s, after the port is open.
        let models = Models::open(&dir, RegistryOptions { preload: false, ..registry_opts.clone() }, None)?;
        Ok(Core {
            dir,
            registry_opts,
            models: RwLock::new(Arc::new(models)),
            reloading: std::sync::Mutex::new(()),
            engine,
            base,
            limits,
            token_required,
            metrics: Metrics::default(),
            loaded: AtomicBool::new(false),
            draining: AtomicBool::new(false),
        })
    }

    /// The installed models as of now.
    pub fn models(&self) -> Arc<Models> {
        self.models.read().unwrap_or_else(|p| p.into_inner()).clone()
    }

    /// With PRELOAD, loads and pages in every model; then the server is ready.
    pub fn preload(&self) -> Result<(), RegistryError> {
        if self.registry_opts.preload {
            self.models().registry.preload()?;
        }
        self.loaded.store(true, Ordering::SeqCst);
        Ok(())
    }

    /// Reads the models folder again: new pairs are served, changed models are loaded anew for
    /// new requests, removed pairs are gone. Requests in flight keep the models they started on.
    /// On failure the old models stay.
    pub fn reload(&self) -> Result<usize, RegistryError> {
        let _one = self.reloading.lock().unwrap_or_else(|p| p.into_inner());
        let models = Models::open(&self.dir, self.registry_opts.clone(), Some(&self.models()))?;
        let n = models.registry.pairs().len();
        let old = std::mem::replace(&mut *self.models.write().unwrap_or_else(|p| p.into_inner()), Arc::new(models));
        // The old registry's idle timer ends when its last request drops it.
        drop(old);
        Ok(n)
    }

    pub fn ready(&self) -> bool {
        self.loaded.load(Ordering::SeqCst) && !self.draining.load(Ordering::SeqCst)
    }

    /// Checks the count and size limits of a request.
    pub fn check_limits(&self, texts: &[String]) -> Result<(), ApiError> {
        if texts.len() > self.limits.max_texts {
            return Err(ApiError::too_large(format!(
                "Invalid request: request ({}) exceeds text limit ({})",
                texts.len(),
                self.limits.max_texts
            )));
        }
        let chars: usize = texts.iter().map(String::len).sum();
        if chars > self.limits.max_chars {
            return Err(ApiError::too_large(format!(
                "Invalid request: request ({chars}) exceeds character limit ({})",
                self.limits.max_chars
            )));
        }
        Ok(())
    }

    /// The installed language a client's code names.
    pub fn language(&self, models: &Models, code: &str, what: &str) -> Result<String, ApiError> {
        lang::resolve(code, &models.languages).map(str::to_string).map_err(|e| match e {
            LangError::Malformed(_) | LangError::NotInstalled(_) => {
                ApiError::bad_request(format!("{e}; {what} languages: {}", models.languages.join(", ")))
            }
        })
    }

    /// Identifies the language of each text.
    pub fn detect(&self, texts: &[String], html: bool) -> Result<Vec<Detection>, ApiError> {
        let models = self.models();
        let detector = models.detector.as_ref().ok_or_else(ApiError::no_detection)?;
        Ok(texts.iter().map(|t| identify(detector, t, html)).collect())
    }

    /// Translates `job`, each text as one post (or HTML document); order kept.
    pub fn translate(&self, job: &Job) -> Result<Output, ApiError> {
        self.check_limits(&job.texts)?;
        let models = self.models();
        let to = self.language(&models, &job.to, "target")?;
        let auto = job.from.as_deref().is_none_or(|f| f.trim().eq_ignore_ascii_case("auto"));
        let n = job.texts.len();
        let mut detected: Vec<Option<Detection>> = vec![None; n];
        let mut sources: Vec<Option<String>> = vec![None; n];
        if auto {
            let detector = models.detector.as_ref().ok_or_else(ApiError::no_detection)?;
            for (i, t) in job.texts.iter().enumerate() {
                let d = identify(detector, t, job.html);
                if d.is_determined() {
                    sources[i] = Some(d.language.clone());
                }
                detected[i] = Some(d);
            }
        } else {
            let from = self.language(&models, job.from.as_deref().unwrap_or(""), "source")?;
            sources.iter_mut().for_each(|s| *s = Some(from.clone()));
        }
        let mut translations: Vec<Option<String>> = vec![None; n];
        // Texts by source language; a text already in the target language, or with nothing to
        // identify, comes back as it was.
        let mut groups: Vec<(String, Vec<usize>)> = Vec::new();
        for (i, s) in sources.iter().enumerate() {
            match s {
                Some(from) if !tags_match(from, &to) => match groups.iter_mut().find(|(f, _)| f == from) {
                    Some((_, members)) => members.push(i),
                    None => groups.push((from.clone(), vec![i])),
                },
                _ => translations[i] = Some(job.texts[i].clone()),
            }
        }
        for (from, members) in groups {
            let started = Instant::now();
            let stages = models.registry.route(&from, &to).map_err(|e| match e {
                RegistryError::NoRoute { .. } => ApiError::bad_request(format!(
                    "{} ({to}) is not available as a target language from {} ({from}); installed pairs: {}",
                    lang::name(&to),
                    lang::name(&from),
                    models.registry.pairs().iter().map(|(a, b)| format!("{a}-{b}")).collect::<Vec<_>>().join(", ")
                )),
                other => ApiError::internal(&other),
            })?;
            let opts = TranslateOptions {
                from: from.clone(),
                to: to.clone(),
                split_sentences: job.split_sentences.unwrap_or(self.base.split_sentences),
                ..self.base.clone()
            };
            let translator =
                Translator::on_engine(self.engine.clone(), stages, &opts).map_err(|e| ApiError::from_error(&e))?;
            let posts: Vec<&str> = members.iter().map(|&i| job.texts[i].as_str()).collect();
            let out: Vec<String> = if job.html {
                let mut out = Vec::with_capacity(posts.len());
                for p in &posts {
                    out.push(
                        crate::html::translate(p, |texts| translator.translate_posts_aligned(texts))
                            .map_err(|e| ApiError::from_error(&e))?,
                    );
                }
                out
            } else {
                translator.translate_posts(&posts).map_err(|e| ApiError::from_error(&e))?
            };
            let chars: usize = posts.iter().map(|p| p.len()).sum();
            self.metrics.translated(&from, &to, posts.len(), chars, started.elapsed());
            for (k, t) in members.into_iter().zip(out) {
                translations[k] = Some(t);
            }
        }
        Ok(Output {
            translations: translations.into_iter().map(Option::unwrap_or_default).collect(),
            detected,
            sources,
        })
    }
}

/// The language of one text; of an HTML text, of the text it shows.
fn identify(detector: &Detector, text: &str, html: bool) -> Detection {
    if html { detector.detect(&crate::html::text_content(text)) } else { detector.detect(text) }
}
