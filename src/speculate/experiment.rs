//! `reseam speculate`: the speculative-decoding experiment on checkpoint folders.
//!
//! Loads the target and, if given, the draft, reads and renders the prompts for each (the
//! target's chat template decides what is measured; the draft gets the same conversation in its
//! own template, or the plain text when it has none), and runs [`crate::speculate::run`]: the
//! target alone as the baseline, then every strategy × draft length on the same prompts. Without
//! a draft the report holds the baseline alone.

use std::path::{Path, PathBuf};

use crate::llm::{Error as LlmError, Llm, LoadOptions, Precision, prompts};
use crate::speculate::SpeculateError;
use crate::speculate::clock::WallClock;
use crate::speculate::energy::EnergyMeter;
use crate::speculate::report::{KSetting, Report};
use crate::speculate::rounds::{BaselineTiming, DecodeOptions, RunOrder, Verify};
use crate::speculate::run::{self, Draft, Prompt, RunOptions};
use crate::speculate::strategy::{Pair, Strategy};

/// Why an experiment could not run.
#[derive(Debug, thiserror::Error)]
pub enum Error {
    #[error("--target {}", dir.display())]
    Target {
        dir: PathBuf,
        #[source]
        source: Box<LlmError>,
    },
    #[error("--draft {}", dir.display())]
    Draft {
        dir: PathBuf,
        #[source]
        source: Box<LlmError>,
    },
    #[error("--prompts")]
    Prompts(#[source] Box<LlmError>),
    #[error("{}: no prompts in the file: give one prompt per line (or JSON Lines with a \"prompt\" field)", path.display())]
    NoPrompts { path: PathBuf },
    #[error(
        "{}: line {line}: the prompt encodes to no tokens for the target (its tokenizer adds no BOS); give it some text",
        path.display()
    )]
    EmptyPrompt { path: PathBuf, line: usize },
    #[error("{0}")]
    Settings(String),
    #[error("--draft-vocab-corpus {}: {msg}", path.display())]
    DraftVocab { path: PathBuf, msg: String },
    #[error(transparent)]
    Run(#[from] SpeculateError),
}

crate::error::fault!(Error);

impl Error {
    /// Bad settings and prompt files are the caller's fault (see [`crate::error`]); what a model
    /// folder or the prompt file's reader reported is the next link of the chain.
    pub fn is_usage(&self) -> bool {
        match self {
            Error::NoPrompts { .. } | Error::EmptyPrompt { .. } | Error::Settings(_) | Error::DraftVocab { .. } => true,
            Error::Run(e) => e.is_usage(),
            Error::Target { .. } | Error::Draft { .. } | Error::Prompts(_) => false,
        }
    }
}

/// How the experiment runs (everything but the model and prompt files).
#[derive(Clone, Debug)]
pub struct Settings {
    /// Draft lengths to try (each fixed, or `auto`).
    pub ks: Vec<KSetting>,
    pub strategies: Vec<Strategy>,
    /// Committed target tokens the `context` strategy prefixes to the draft text.
    pub prefix: usize,
    /// Draft tokens the re-sync may look back for a word start.
    pub lookbehind: usize,
    /// Longest draft `-k auto` may choose.
    pub k_max_auto: usize,
    pub verify: Verify,
    pub max_new_tokens: usize,
    /// Render prompts with the chat templates.
    pub chat: bool,
    /// Keep generating through end-of-sequence tokens.
    pub ignore_eos: bool,
    /// Largest baseline logit margin at which a batched-verification divergence counts as a
    /// near-tie (numerics of the k+1-row pass) rather than a bug.
    pub divergence_tolerance: f32,
    /// When the target alone is timed for the speedups.
    pub baseline: BaselineTiming,
    /// Whether each prompt goes through every configuration in turn or the other way round.
    pub order: RunOrder,
    /// The draft's output layer cut to a corpus's most frequent ids (`None`: all rows).
    pub draft_vocab: Option<DraftVocab>,
}

/// Where the draft's output ids come from: the `size` ids most frequent in `corpus` (0: all that
/// occur), see [`crate::speculate::draft_vocab`].
#[derive(Clone, Debug)]
pub struct DraftVocab {
    pub corpus: PathBuf,
    pub size: usize,
}

impl Default for Settings {
    fn default() -> Settings {
        Settings {
            ks: vec![KSetting::Fixed(2)],
            strategies: vec![Strategy::Context],
            prefix: 5,
            lookbehind: 8,
            k_max_auto: 8,
            verify: Verify::Batched,
            max_new_tokens: 128,
            chat: false,
            ignore_eos: false,
            // The fixtures' README: float32 engines differ by about 1e-4; 1e-3 leaves 10x.
            divergence_tolerance: 1e-3,
            baseline: BaselineTiming::Paired,
            order: RunOrder::Interleaved,
            draft_vocab: None,
        }
    }
}

/// A whole experiment: the checkpoint folders, the prompt file, how to load, how to run.
#[derive(Clone, Debug)]
pub struct Options {
    pub target: PathBuf,
    /// Without a draft the target runs alone (the report's baseline, no configurations).
    pub draft: Option<PathBuf>,
    pub prompts: PathBuf,
    pub load: LoadOptions,
    pub settings: Settings,
}

/// What the experiment is doing, for progress bars and log lines.
#[derive(Clone, Debug)]
pub enum Event<'a> {
    /// Quantizing and packing int8 weights of "target" or "draft" (first run of a checkpoint).
    Packing { model: &'static str, done: usize, total: usize },
    /// Decoding: which configuration, prompts done over all configurations.
    Run(&'a run::Progress),
}

impl Settings {
    fn check(&self) -> Result<(), Error> {
        let bad = |m: &str| Err(Error::Settings(m.to_string()));
        if self.ks.is_empty() {
            return bad("-k: give at least one draft length");
        }
        if self.ks.contains(&KSetting::Fixed(0)) {
            return bad("-k 0 is the target alone, which always runs as the baseline: give k >= 1");
        }
        if self.strategies.is_empty() {
            return bad("--strategy: give at least one of none, naive, context");
        }
        if self.max_new_tokens == 0 {
            return bad("--max-new-tokens must be at least 1");
        }
        if self.ks.contains(&KSetting::Auto) && self.k_max_auto == 0 {
            return bad("--k-max must be at least 1 with -k auto");
        }
        Ok(())
    }
}

/// Loads the checkpoints and runs the experiment over the prompt file.
pub fn run(opts: &Options, energy: &mut dyn EnergyMeter, progress: &mut dyn FnMut(Event)) -> Result<Report, Error> {
    opts.settings.check()?;
    if opts.settings.draft_vocab.is_some() && opts.draft.is_none() {
        return Err(Error::Settings("--draft-vocab-corpus narrows a draft: give --draft DIR".into()));
    }
    let prompts = prompts::read(&opts.prompts).map_err(|e| Error::Prompts(Box::new(e)))?;
    if prompts.is_empty() {
        return Err(Error::NoPrompts { path: opts.prompts.clone() });
    }
    let packing = std::sync::Mutex::new(Vec::new());
    let load = |dir: &Path, model: &'static str| {
        Llm::open_with_progress(dir, &opts.load, &|done, total| {
            if let Ok(mut p) = packing.lock() {
                p.push((model, done, total));
            }
        })
    };
    // Packing reports arrive from worker threads; pass them on from here.
    let target = load(&opts.target, "target")
        .map_err(|source| Error::Target { dir: opts.target.clone(), source: Box::new(source) })?;
    flush(&packing, progress);
    let mut draft = match &opts.draft {
        Some(dir) => {
            Some(load(dir, "draft").map_err(|source| Error::Draft { dir: dir.clone(), source: Box::new(source) })?)
        }
        None => None,
    };
    flush(&packing, progress);
    let narrowed = match (&opts.settings.draft_vocab, draft.as_mut()) {
        (Some(dv), Some(d)) => Some(narrow_draft(d, dv)?),
        _ => None,
    };
    let labelled: Vec<(usize, String)> = prompts.into_iter().map(|p| (p.line, p.text)).collect();
    let mut report = run_models(&target, draft.as_ref(), &labelled, &opts.prompts, &opts.settings, energy, progress)?;
    report.settings.draft_vocab = narrowed;
    Ok(report)
}

/// Cuts the draft's output layer to the corpus's most frequent ids (and its EOS ids).
fn narrow_draft(d: &mut Llm, dv: &DraftVocab) -> Result<crate::speculate::report::DraftVocabUsed, Error> {
    let err = |msg: String| Error::DraftVocab { path: dv.corpus.clone(), msg };
    let raw = std::fs::read(&dv.corpus).map_err(|e| err(format!("cannot read it: {e}")))?;
    let text = std::str::from_utf8(&raw).map_err(|e| {
        let line = raw[..e.valid_up_to()].iter().filter(|&&b| b == b'\n').count() + 1;
        err(format!("line {line}: not UTF-8"))
    })?;
    let rows = d.model.vocab_size();
    let ids = crate::speculate::draft_vocab::frequent_ids(&d.tokenizer, text.lines(), dv.size, &d.eos, rows)
        .map_err(|e| err(format!("the draft's tokenizer failed: {e}")))?;
    if ids.iter().all(|id| d.eos.contains(id)) {
        return Err(err("no text in it: give one line of text or more in the prompts' language".into()));
    }
    let kept = ids.len();
    d.model
        .narrow_outputs(Some(ids))
        .map_err(|source| Error::Draft { dir: d.dir.clone(), source: Box::new(source) })?;
    Ok(crate::speculate::report::DraftVocabUsed {
        corpus: dv.corpus.display().to_string(),
        size: dv.size,
        ids: kept,
        rows,
    })
}

fn flush(packing: &std::sync::Mutex<Vec<(&'static str, usize, usize)>>, progress: &mut dyn FnMut(Event)) {
    if let Ok(mut p) = packing.lock() {
        for (model, done, total) in p.drain(..) {
            progress(Event::Packing { model, done, total });
        }
    }
}

/// Encodes one prompt for the target and the draft (none without a draft).
fn encode(
    target: &Llm,
    draft: Option<&Llm>,
    identical: bool,
    text: &str,
    chat: bool,
) -> Result<(Vec<u32>, Vec<u32>), Error> {
    let t = target
        .prompt_ids(text, chat)
        .map_err(|source| Error::Target { dir: target.dir.clone(), source: Box::new(source) })?;
    let Some(draft) = draft else {
        return Ok((t, Vec::new()));
    };
    if identical {
        return Ok((t.clone(), t));
    }
    // A draft without a chat template reads the plain text: it still predicts the answer's words.
    let draft_chat = chat && draft.chat.is_some();
    let d = draft
        .prompt_ids(text, draft_chat)
        .map_err(|source| Error::Draft { dir: draft.dir.clone(), source: Box::new(source) })?;
    Ok((t, d))
}

/// Runs the experiment on loaded models; `prompts` are (line, text) pairs of `prompts_path`.
pub fn run_models(
    target: &Llm,
    draft: Option<&Llm>,
    prompts: &[(usize, String)],
    prompts_path: &Path,
    settings: &Settings,
    energy: &mut dyn EnergyMeter,
    progress: &mut dyn FnMut(Event),
) -> Result<Report, Error> {
    settings.check()?;
    let pair = draft.map(|d| {
        Pair::new(&target.tokenizer, &d.tokenizer, target.eos.clone(), d.eos.clone(), target.model.vocab_size())
    });
    let identical = pair.as_ref().is_some_and(|p| p.identical);
    let mut encoded = Vec::with_capacity(prompts.len());
    for (line, text) in prompts {
        let (target_ids, draft_ids) = encode(target, draft, identical, text, settings.chat)?;
        if target_ids.is_empty() {
            return Err(Error::EmptyPrompt { path: prompts_path.to_path_buf(), line: *line });
        }
        encoded.push(Prompt { text: text.clone(), target_ids, draft_ids });
    }
    let kernel = match target.model.precision() {
        Precision::Int8 => reseam_kernels::dispatch::kernels()
            .map_err(|source| Error::Target { dir: target.dir.clone(), source: Box::new(LlmError::Kernels(source)) })?
            .isa()
            .name()
            .to_string(),
        _ => "none".into(),
    };
    let opts = RunOptions {
        ks: settings.ks.clone(),
        strategies: settings.strategies.clone(),
        decode: DecodeOptions {
            max_new_tokens: settings.max_new_tokens,
            stop: if settings.ignore_eos { Vec::new() } else { target.eos.clone() },
        },
        verify: settings.verify,
        prefix: settings.prefix,
        lookbehind: settings.lookbehind,
        k_max_auto: settings.k_max_auto,
        divergence_tolerance: settings.divergence_tolerance,
        baseline: settings.baseline,
        order: settings.order,
        target_label: label(target),
        kernel_label: kernel,
        clock_label: "wall".into(),
    };
    let clock = WallClock::new();
    let draft = match (draft, &pair) {
        (Some(d), Some(pair)) => Some(Draft { model: &d.model, pair, label: label(d) }),
        _ => None,
    };
    Ok(run::run(&target.model, &target.tokenizer, draft, &encoded, &opts, &clock, energy, &mut |p| {
        progress(Event::Run(p))
    })?)
}

/// "folder (Architecture, precision)".
fn label(m: &Llm) -> String {
    let name = m.dir.file_name().map_or_else(|| m.dir.display().to_string(), |n| n.to_string_lossy().into_owned());
    format!("{name} ({}, {})", m.model.architecture().name(), m.model.precision().name())
}

#[cfg(test)]
mod tests;
