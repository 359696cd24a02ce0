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

use crate::detect::{Detection, Detector};
use crate::engine::Engine;
use crate::engine::registry::{Registry, RegistryError, RegistryOptions};
use crate::translate::service::{self, Call, RecordError, Request, Service};
use crate::translate::{TranslateError, TranslateOptions};

use super::error::ApiError;
use super::lang_codes::{self, LangError};
use super::metrics::Metrics;

/// Request limits (the seed's MAX_TEXTS, MAX_CHARS).
#[derive(Clone, Copy, Debug)]
pub struct Limits {
    pub max_texts: usize,
    pub max_chars: usize,
}

/// One translation request, in any dialect.
#[derive(Clone, Debug)]
pub struct ApiRequest {
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

/// The translations of an [`ApiRequest`], in order, and what identification found for each text
/// (when the source was `auto`).
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
    /// The registry, identification among the installed languages (none when it cannot be set
    /// up) and the shared engine.
    pub service: Service,
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
        engine: &Arc<Engine>,
        base: &TranslateOptions,
    ) -> Result<Models, RegistryError> {
        let registry = Arc::new(Registry::open_after(dir, opts, previous.map(|m| m.registry.as_ref()))?);
        // IDLE_SECONDS: the timer holds the registry weakly, so it ends with it (after a reload,
        // when the last request on the old models is done).
        drop(registry.idle_timer());
        let mut languages: Vec<String> = registry.pairs().into_iter().flat_map(|(a, b)| [a, b]).collect();
        languages.sort();
        languages.dedup();
        // Only the languages identification knows (its models have no Kannada, for one).
        let detector = Detector::among_known(&languages);
        if let Some(d) = &detector {
            // The n-gram models are unpacked on first use (~0.1 s): pay that before the first request.
            let _ = d.detect("warm up");
        }
        let service = Service::on_engine(engine.clone(), registry.clone(), detector, base.clone());
        Ok(Models { registry, service, languages })
    }

    /// Every target reachable from `from`, as the registry routes.
    pub fn targets(&self, from: &str) -> Vec<String> {
        self.registry.targets(from)
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
        let listing = RegistryOptions { preload: false, ..registry_opts.clone() };
        let models = Models::open(&dir, listing, None, &engine, &base)?;
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
        let models =
            Models::open(&self.dir, self.registry_opts.clone(), Some(&self.models()), &self.engine, &self.base)?;
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
        lang_codes::resolve(code, &models.languages).map(str::to_string).map_err(|e| match e {
            LangError::Malformed(_) | LangError::NotInstalled(_) => {
                ApiError::bad_request(format!("{e}; {what} languages: {}", models.languages.join(", ")))
            }
        })
    }

    /// Identifies the language of each text.
    pub fn detect(&self, texts: &[String], html: bool) -> Result<Vec<Detection>, ApiError> {
        let models = self.models();
        let detector = models.service.detector().ok_or_else(ApiError::no_detection)?;
        Ok(texts.iter().map(|t| service::identify(detector, t, html)).collect())
    }

    /// Translates `job`, each text as one post (or HTML document); order kept.
    pub fn translate(&self, job: &ApiRequest) -> Result<Output, ApiError> {
        self.check_limits(&job.texts)?;
        let models = self.models();
        let to = self.language(&models, &job.to, "target")?;
        let auto = job.from.as_deref().is_none_or(|f| f.trim().eq_ignore_ascii_case("auto"));
        let from = if auto {
            models.service.detector().ok_or_else(ApiError::no_detection)?;
            service::AUTO.to_string()
        } else {
            self.language(&models, job.from.as_deref().unwrap_or(""), "source")?
        };
        let requests: Vec<Request> =
            job.texts.iter().map(|text| Request { text: text.clone(), from: from.clone(), to: to.clone() }).collect();
        let call = Call { html: job.html, split_sentences: job.split_sentences };
        let metrics = &self.metrics;
        let results = models
            .service
            .translate(&requests, call, &mut |g| metrics.translated(g.from, g.to, g.posts, g.chars, g.elapsed));
        let n = results.len();
        let (mut translations, mut detected, mut sources) =
            (Vec::with_capacity(n), Vec::with_capacity(n), Vec::with_capacity(n));
        for r in results {
            let t = r.map_err(|e| self.failed(&models, &e))?;
            translations.push(t.translation);
            detected.push(t.detected);
            sources.push(t.source);
        }
        Ok(Output { translations, detected, sources })
    }

    /// A record's error as the client sees it: a pair without a route is a bad request naming
    /// the installed pairs.
    fn failed(&self, models: &Models, e: &RecordError) -> ApiError {
        match e.translate_error() {
            Some(TranslateError::Route(RegistryError::NoRoute { from, to, .. })) => ApiError::bad_request(format!(
                "{} ({to}) is not available as a target language from {} ({from}); installed pairs: {}",
                lang_codes::name(to),
                lang_codes::name(from),
                models.registry.pairs().iter().map(|(a, b)| format!("{a}-{b}")).collect::<Vec<_>>().join(", ")
            )),
            Some(TranslateError::Route(other)) => ApiError::internal(other),
            Some(e) => ApiError::from_error(e),
            None => ApiError::from_error(e),
        }
    }
}
