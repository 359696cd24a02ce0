//! The one door to the engine for every caller (`translate` in each framing, `serve` in each
//! dialect, `bench translate`): the installed models ([`Registry`], the only router), one shared
//! [`Engine`] and the language identifier, with one call, [`Service::translate`], that takes
//! records (posts or HTML, from a language or `auto`) and gives their translations back.
//!
//! A record's source language is given, or [`AUTO`]: then it is identified ([`crate::detect`]).
//! A post in the target language already, or with nothing to identify (only links, emoji,
//! numbers), comes back unchanged. The other records are grouped by pair, each group goes
//! through the social-post pipeline (or [`crate::html`]) and the engine, and the results are put
//! back in the records' order. Every pair shares the one engine, so their sentences share
//! decoder steps.

use std::collections::HashMap;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use super::{TranslateError, TranslateOptions, Translator};
use crate::detect::{Detection, Detector};
use crate::engine::Engine;
use crate::engine::registry::{Registry, RegistryError, RegistryOptions};
use crate::fetch::tags::PIVOT;
use crate::fetch::tags::tags_match;
use crate::marian::{Model, ModelError};

/// The source language that asks for identification.
pub const AUTO: &str = "auto";

/// One post to translate.
#[derive(Clone, Debug, PartialEq)]
pub struct Request {
    pub text: String,
    /// A language tag, or [`AUTO`].
    pub from: String,
    pub to: String,
}

/// One translated post.
#[derive(Clone, Debug, PartialEq)]
pub struct Translated {
    pub translation: String,
    /// What identification found, when the source was [`AUTO`].
    pub detected: Option<Detection>,
    /// The language it was translated from: the one given, or the one identified (`None` when
    /// nothing could be identified).
    pub source: Option<String>,
}

/// Why one record was not translated.
#[derive(Debug, thiserror::Error)]
pub enum RecordError {
    /// The post was identified as a language that no model (direct or through English) covers.
    #[error("the post is in `{language}` (detected, confidence {confidence:.2}), which cannot be translated to `{to}`")]
    Detected {
        language: String,
        confidence: f64,
        to: String,
        #[source]
        source: Arc<TranslateError>,
    },
    #[error("source language `auto` needs language identification, which was not set up")]
    NoDetector,
    #[error(transparent)]
    Translate(Arc<TranslateError>),
    #[error(transparent)]
    Html(#[from] crate::html::HtmlError<TranslateError>),
}

crate::error::fault!(RecordError);

impl RecordError {
    pub fn is_usage(&self) -> bool {
        match self {
            RecordError::Detected { .. } | RecordError::NoDetector => true,
            RecordError::Translate(e) => e.is_usage(),
            RecordError::Html(e) => e.is_usage(),
        }
    }

    /// The translation error behind this one, if there is one.
    pub fn translate_error(&self) -> Option<&TranslateError> {
        match self {
            RecordError::Detected { source, .. } | RecordError::Translate(source) => Some(source),
            RecordError::NoDetector | RecordError::Html(_) => None,
        }
    }
}

/// How one call reads its records.
#[derive(Clone, Copy, Debug, Default)]
pub struct Call {
    /// The records are HTML: their text is translated, their markup kept ([`crate::html`]).
    pub html: bool,
    /// Split lines into sentences; `None`: as the service was set up.
    pub split_sentences: Option<bool>,
}

/// The posts of one pair in a call, once translated (what `serve` counts in its metrics).
#[derive(Clone, Debug)]
pub struct Group<'a> {
    pub from: &'a str,
    pub to: &'a str,
    pub posts: usize,
    /// Bytes of the posts.
    pub chars: usize,
    pub elapsed: Duration,
}

/// The models, the engine and the identifier, shared by every thread that translates.
pub struct Service {
    engine: Arc<Engine>,
    registry: Arc<Registry>,
    detector: Option<Detector>,
    /// Settings of every translation (its `from`/`to` are each record's).
    base: TranslateOptions,
    /// The command line's service (see [`Service::stages`]); the server's routes only what the
    /// registry lists.
    command_line: bool,
    /// Pairs that could not be found or downloaded, kept so that each is tried once.
    failed: Mutex<HashMap<(String, String), Arc<TranslateError>>>,
}

impl Service {
    /// The command line's service: one engine with `base`'s settings over the models under
    /// `base.models` (a folder of `<from>-<to>/` folders, or one model's folder), each loaded on
    /// first use and kept; a pair that is missing is downloaded as `base.fetch` allows.
    pub fn open(base: TranslateOptions, detector: Option<Detector>) -> Result<Service, TranslateError> {
        let engine = Arc::new(Engine::new(&base.engine_options())?);
        let opts = RegistryOptions {
            load: base.load_options(),
            // One run: the models stay loaded until it ends.
            idle_seconds: 0,
            preload: false,
            ..RegistryOptions::default()
        };
        // A folder that does not exist yet is one to download into.
        let registry =
            Registry::open(&base.models, opts.clone()).unwrap_or_else(|_| Registry::empty(&base.models, opts));
        let mut service = Service::on_engine(engine, Arc::new(registry), detector, base);
        service.command_line = true;
        Ok(service)
    }

    /// A service over `registry` on a running `engine` (the server's, made again around the same
    /// engine at each reload).
    pub fn on_engine(
        engine: Arc<Engine>,
        registry: Arc<Registry>,
        detector: Option<Detector>,
        base: TranslateOptions,
    ) -> Service {
        Service { engine, registry, detector, base, command_line: false, failed: Mutex::default() }
    }

    pub fn engine(&self) -> &Arc<Engine> {
        &self.engine
    }

    pub fn registry(&self) -> &Arc<Registry> {
        &self.registry
    }

    pub fn detector(&self) -> Option<&Detector> {
        self.detector.as_ref()
    }

    /// The models a sentence from `from` to `to` goes through, as the registry routes it. On the
    /// command line a pair the registry does not list may still be the models folder itself (a
    /// model folder of any name, or `--model`'s file), or be downloaded; a pair that failed
    /// there fails again at once (no second download).
    pub fn stages(&self, from: &str, to: &str) -> Result<Vec<Arc<Model>>, Arc<TranslateError>> {
        if !self.command_line {
            return self.route(from, to).map_err(Arc::new);
        }
        let key = (from.to_string(), to.to_string());
        if let Some(e) = self.lock_failed().get(&key) {
            return Err(e.clone());
        }
        self.route(from, to).map_err(|e| self.lock_failed().entry(key).or_insert_with(|| Arc::new(e)).clone())
    }

    fn lock_failed(&self) -> std::sync::MutexGuard<'_, HashMap<(String, String), Arc<TranslateError>>> {
        self.failed.lock().unwrap_or_else(|p| p.into_inner())
    }

    pub(super) fn route(&self, from: &str, to: &str) -> Result<Vec<Arc<Model>>, TranslateError> {
        let dir = &self.base.models;
        if !self.command_line {
            return Ok(self.registry.route(from, to)?);
        }
        if let Some(file) = &self.base.model_file {
            // A model file names one model: no route through English, no download.
            let files = crate::marian::find(dir, from, to, Some(file))?;
            self.registry.install(from, to, files);
            return Ok(self.registry.route(from, to)?);
        }
        match self.registry.route(from, to) {
            Err(RegistryError::NoRoute { .. }) => {}
            routed => return Ok(routed?),
        }
        match crate::marian::find(dir, from, to, None) {
            Ok(files) => {
                self.registry.install(from, to, files);
                return Ok(self.registry.route(from, to)?);
            }
            Err(ModelError::NotFound { .. }) => {}
            Err(e) => return Err(e.into()),
        }
        let Some(fetch) = &self.base.fetch else {
            return Err(TranslateError::Offline { from: from.into(), to: to.into(), dir: dir.clone() });
        };
        let mut fetch = fetch.clone();
        fetch.models_dir = dir.clone();
        let folders = crate::fetch::ensure_pair(&fetch, from, to).map_err(|source| TranslateError::Download {
            from: from.into(),
            to: to.into(),
            dir: dir.clone(),
            source: Box::new(source),
        })?;
        let pairs: Vec<(&str, &str)> =
            if folders.len() == 1 { vec![(from, to)] } else { vec![(from, PIVOT), (PIVOT, to)] };
        for (folder, (a, b)) in folders.iter().zip(pairs) {
            self.registry.install(a, b, crate::marian::find(folder, a, b, None)?);
        }
        Ok(self.registry.route(from, to)?)
    }

    /// The translator of one pair with the service's settings, or why there is none: what the
    /// command line checks before it reads any input.
    pub fn pair(&self, from: &str, to: &str) -> Result<Translator, TranslateError> {
        let opts = TranslateOptions { from: from.into(), to: to.into(), ..self.base.clone() };
        Translator::on_engine(self.engine.clone(), self.route(from, to)?, &opts)
    }

    /// The translator of one pair, on the shared engine; `split_sentences` as the service's
    /// settings unless given.
    pub fn translator(
        &self,
        from: &str,
        to: &str,
        split_sentences: Option<bool>,
    ) -> Result<Translator, Arc<TranslateError>> {
        let stages = self.stages(from, to)?;
        let opts = TranslateOptions {
            from: from.into(),
            to: to.into(),
            split_sentences: split_sentences.unwrap_or(self.base.split_sentences),
            ..self.base.clone()
        };
        Translator::on_engine(self.engine.clone(), stages, &opts).map_err(Arc::new)
    }

    /// Translates each request as one post (or HTML document); one result per request, in
    /// order. Posts of one pair are translated together; `done` hears of each pair's group once
    /// it is translated.
    pub fn translate(
        &self,
        requests: &[Request],
        call: Call,
        done: &mut dyn FnMut(&Group),
    ) -> Vec<Result<Translated, RecordError>> {
        let mut results: Vec<Option<Result<Translated, RecordError>>> = (0..requests.len()).map(|_| None).collect();
        let mut groups: Vec<((String, String), Vec<usize>)> = Vec::new();
        let mut detections: Vec<Option<Detection>> = vec![None; requests.len()];
        for (i, request) in requests.iter().enumerate() {
            let from = if request.from.eq_ignore_ascii_case(AUTO) {
                let Some(detector) = &self.detector else {
                    results[i] = Some(Err(RecordError::NoDetector));
                    continue;
                };
                let found = identify(detector, &request.text, call.html);
                let determined = found.is_determined();
                detections[i] = Some(found);
                if !determined {
                    let detected = detections[i].take();
                    results[i] = Some(Ok(Translated { translation: request.text.clone(), detected, source: None }));
                    continue;
                }
                detections[i].as_ref().map_or(String::new(), |d| d.language.clone())
            } else {
                request.from.clone()
            };
            if tags_match(&from, &request.to) {
                let (detected, source) = (detections[i].take(), Some(from));
                results[i] = Some(Ok(Translated { translation: request.text.clone(), detected, source }));
                continue;
            }
            let key = (from, request.to.clone());
            match groups.iter_mut().find(|(k, _)| *k == key) {
                Some((_, members)) => members.push(i),
                None => groups.push((key, vec![i])),
            }
        }
        for ((from, to), members) in &groups {
            let (from, to) = (from.as_str(), to.as_str());
            let started = Instant::now();
            let posts: Vec<&str> = members.iter().map(|&i| requests[i].text.as_str()).collect();
            let outcome: Result<Vec<Result<String, RecordError>>, Arc<TranslateError>> =
                self.translator(from, to, call.split_sentences).and_then(|t| {
                    if call.html {
                        Ok(posts
                            .iter()
                            .map(|p| {
                                crate::html::translate(p, |texts| t.translate_posts_aligned(texts)).map_err(Into::into)
                            })
                            .collect())
                    } else {
                        Ok(t.translate_posts(&posts).map_err(Arc::new)?.into_iter().map(Ok).collect())
                    }
                });
            if outcome.is_ok() {
                let chars = posts.iter().map(|p| p.len()).sum();
                done(&Group { from, to, posts: posts.len(), chars, elapsed: started.elapsed() });
            }
            let mut outcome = outcome.map(|v| v.into_iter().map(Some).collect::<Vec<_>>());
            for (k, &i) in members.iter().enumerate() {
                let detected = detections[i].take();
                results[i] = Some(match &mut outcome {
                    Ok(translations) => match translations[k].take() {
                        Some(Ok(translation)) => Ok(Translated { translation, detected, source: Some(from.into()) }),
                        Some(Err(e)) => Err(e),
                        // Each translation is taken once.
                        None => Err(RecordError::NoDetector),
                    },
                    Err(e) => Err(match detected {
                        Some(d) => RecordError::Detected {
                            language: d.language,
                            confidence: d.confidence,
                            to: to.into(),
                            source: e.clone(),
                        },
                        None => RecordError::Translate(e.clone()),
                    }),
                });
            }
        }
        // Every request got its result above: unchanged, grouped, or an error.
        results.into_iter().map(|r| r.unwrap_or(Err(RecordError::NoDetector))).collect()
    }
}

/// The language of one text; of an HTML text, of the text it shows.
pub fn identify(detector: &Detector, text: &str, html: bool) -> Detection {
    if html { detector.detect(&crate::html::text_content(text)) } else { detector.detect(text) }
}
