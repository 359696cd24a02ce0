//! `reseam translate` as a library call: find (or fetch) and load a model, then translate lines
//! or whole posts. [`Service`] (service.rs) is the one door every caller goes through —
//! `translate`, `serve` and `bench translate`: the registry, one shared engine and the language
//! detector, with one call over records (text or HTML, a pair or `auto`).
//!
//! Text flows: post → [`crate::text`] (lines, links, mentions, sentences, long ones cut by the
//! pieces SentencePiece gives them) → those ids, encoded once ([`Segments`]) → the engine and
//! [`crate::marian::search`] (greedy search) → ids → text → put back by [`crate::text`]. Without a direct
//! model the sentences go through English (`from`→en, then en→`to`), sentence by sentence, as
//! Firefox pivots. The output of a line never depends on which other lines were translated with it.

use std::collections::VecDeque;
use std::io::{BufRead, Write};
use std::path::PathBuf;
use std::sync::Arc;

use reseam_kernels::{Arithmetic, Kernels};

use crate::engine::registry::RegistryError;
use crate::engine::{Engine, EngineError, EngineOptions};
use crate::fetch::{FetchError, FetchOptions};
use crate::marian::layers::attention::Mkl;
use crate::marian::search::{DecodeError, SearchOptions};
use crate::marian::{LoadOptions, Model, ModelError, ModelFiles};
use crate::text::{self, Pipeline};
use crate::vocab::VocabError;

pub mod records;
mod segments;
pub mod service;

pub use segments::Segments;
pub use service::Service;

pub use crate::fetch::tags::PIVOT;

/// Which integer arithmetic the int8 products use.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Default, clap::ValueEnum)]
pub enum ArithmeticChoice {
    /// What Firefox computes on this CPU: exact on CPUs with AVX-512 VNNI or AVX-VNNI and on
    /// ARM64, saturating on other x86 CPUs (SSSE3, AVX2, AVX-512BW).
    #[default]
    Auto,
    /// Each pair of int8 products saturates to int16 before it is summed, as intgemm and Firefox
    /// compute with `maddubs`: reproduces Firefox on AVX2 machines.
    Saturating,
    /// Exact int32 sums, as VNNI, AMX and ARM64 dot products compute: the same output on every CPU.
    Exact,
}

impl ArithmeticChoice {
    pub fn resolve(self) -> Arithmetic {
        match self {
            ArithmeticChoice::Auto => Kernels::firefox_arithmetic(),
            ArithmeticChoice::Saturating => Arithmetic::Saturating,
            ArithmeticChoice::Exact => Arithmetic::Exact,
        }
    }
}

/// Whose summation orders the float attention products reproduce.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Default, clap::ValueEnum)]
pub enum MklChoice {
    /// What Firefox computes on this CPU: MKL's AMD orders on AMD CPUs with AVX2 (Zen), its
    /// Intel orders elsewhere.
    #[default]
    Auto,
    /// MKL's orders on Intel CPUs (reproduces Firefox on Intel machines).
    Intel,
    /// MKL's orders on AMD Zen CPUs (reproduces Firefox on AMD machines, Zen 1 to 5).
    Zen,
}

impl MklChoice {
    /// `Auto` is the process's orders ([`Mkl::current`]: this CPU's unless the process chose).
    pub fn resolve(self) -> Mkl {
        match self {
            MklChoice::Auto => Mkl::current(),
            MklChoice::Intel => Mkl::Intel,
            MklChoice::Zen => Mkl::Zen,
        }
    }
}

/// Everything `translate` needs to know.
#[derive(Clone, Debug)]
pub struct TranslateOptions {
    /// A model folder, or a folder of `<from>-<to>/` model folders.
    pub models: PathBuf,
    /// A model file to use when the folder holds several.
    pub model_file: Option<PathBuf>,
    pub from: String,
    pub to: String,
    pub shortlist: bool,
    pub arithmetic: ArithmeticChoice,
    pub mkl: MklChoice,
    /// Print per-layer values to stderr (Marian's `debug()` format).
    pub debug: bool,
    /// Most sentences of one model decoded together on one compute thread.
    pub max_batch: usize,
    /// Compute threads (0: one per physical core).
    pub threads: usize,
    /// Pin compute thread i to core N + i (Linux).
    pub pin_from_core: Option<usize>,
    /// Leave links, e-mail addresses, emoji and mentions to the model (sentence splitting and
    /// spacing stay): for line-for-line comparisons with other engines.
    pub raw: bool,
    /// Split lines into sentences (as Firefox does). Off: each line is one sentence unless it is
    /// over the model's limit, as Marian and Bergamot's `ssplit-mode: sentence` read input.
    pub split_sentences: bool,
    /// Where to download a missing pair from; `None` never touches the network (`--offline`).
    pub fetch: Option<FetchOptions>,
    /// Read the model files into memory instead of mapping (and first writing) their packs.
    pub no_pack: bool,
    /// Where packs go instead of next to the model or in the user cache.
    pub pack_dir: Option<PathBuf>,
}

impl TranslateOptions {
    /// How these settings load each model.
    pub fn load_options(&self) -> LoadOptions {
        LoadOptions { shortlist: self.shortlist, no_pack: self.no_pack, pack_dir: self.pack_dir.clone() }
    }

    /// The engine these settings ask for (one caller: no places kept for light requests).
    pub fn engine_options(&self) -> EngineOptions {
        EngineOptions {
            threads: self.threads,
            max_batch: self.max_batch.max(1),
            arithmetic: self.arithmetic.resolve(),
            mkl: self.mkl.resolve(),
            debug: self.debug,
            pin_from_core: self.pin_from_core,
            ..EngineOptions::default()
        }
    }

    /// Firefox's behaviour for `from`→`to` with the models under `models`, offline, the models
    /// read into memory (the CLI maps packs by default; a library caller opts in with
    /// `no_pack: false`, as writing next to a caller's model files is its decision).
    pub fn new(models: impl Into<PathBuf>, from: &str, to: &str) -> TranslateOptions {
        TranslateOptions {
            models: models.into(),
            model_file: None,
            from: from.into(),
            to: to.into(),
            shortlist: false,
            arithmetic: ArithmeticChoice::Auto,
            mkl: MklChoice::Auto,
            debug: false,
            max_batch: 64,
            threads: 0,
            pin_from_core: None,
            raw: false,
            split_sentences: true,
            fetch: None,
            no_pack: true,
            pack_dir: None,
        }
    }
}

#[derive(Debug, thiserror::Error)]
pub enum TranslateError {
    #[error(transparent)]
    Model(#[from] ModelError),
    #[error(transparent)]
    Decode(#[from] DecodeError),
    #[error(transparent)]
    Engine(#[from] EngineError),
    #[error(transparent)]
    Vocab(#[from] VocabError),
    #[error(transparent)]
    Kernels(#[from] reseam_kernels::dispatch::IsaError),
    #[error(transparent)]
    Fetch(#[from] FetchError),
    #[error(transparent)]
    Text(#[from] text::Error),
    /// No installed model, direct or through English (the server's registry).
    #[error(transparent)]
    Route(RegistryError),
    #[error(
        "no {from}→{to} model under {dir}, and --offline forbids downloading it; \
         run `reseam fetch {from}-{to}` first, or drop --offline"
    )]
    Offline { from: String, to: String, dir: PathBuf },
    #[error(
        "no {from}→{to} model under {dir}, and downloading it failed (`reseam fetch --help` shows how \
         to fetch from a mirror or a folder; --models names another models folder)"
    )]
    Download {
        from: String,
        to: String,
        dir: PathBuf,
        #[source]
        source: Box<FetchError>,
    },
    #[error("input line {line} is not valid UTF-8; convert the input to UTF-8 first (e.g. with iconv)")]
    InvalidUtf8 { line: usize },
    #[error("reading the input: {0}")]
    Input(std::io::Error),
    #[error("writing the output")]
    Output(#[source] std::io::Error),
}

// The HTML path is generic over its translator's error; this is the one it is run with.
crate::error::fault!(TranslateError, crate::html::HtmlError<TranslateError>);

impl TranslateError {
    /// The caller's fault (see [`crate::error`]): a missing model under --offline, input that is
    /// not UTF-8, and what the wrapped errors say of themselves.
    pub fn is_usage(&self) -> bool {
        match self {
            TranslateError::Model(e) => e.is_usage(),
            TranslateError::Decode(e) => e.is_usage(),
            TranslateError::Engine(e) => e.is_usage(),
            TranslateError::Vocab(e) => e.is_usage(),
            TranslateError::Kernels(e) => e.is_usage(),
            TranslateError::Fetch(e) => e.is_usage(),
            TranslateError::Text(e) => e.is_usage(),
            TranslateError::Route(e) => e.is_usage(),
            TranslateError::Offline { .. } | TranslateError::InvalidUtf8 { .. } => true,
            // The download's own error is the next link of the chain.
            TranslateError::Download { .. } | TranslateError::Input(_) | TranslateError::Output(_) => false,
        }
    }
}

impl From<RegistryError> for TranslateError {
    fn from(e: RegistryError) -> TranslateError {
        match e {
            RegistryError::Model(e) => TranslateError::Model(e),
            other => TranslateError::Route(other),
        }
    }
}

/// Loaded models (one, or two through English) with their search settings, on a shared engine.
/// Clones share the models and the engine, so several threads can translate at once and their
/// sentences are decoded together.
#[derive(Clone)]
pub struct Translator {
    /// The models a sentence goes through, in order.
    stages: Vec<Arc<Model>>,
    engine: Arc<Engine>,
    search: SearchOptions,
    pipeline: Pipeline,
}

impl Translator {
    /// Finds the model(s) `opts` names: the direct pair, else the pair through English already
    /// on disk, else (unless offline) downloads what is missing. Then loads them, on an engine of
    /// their own (a caller of several pairs opens one [`Service`] instead).
    pub fn load(opts: &TranslateOptions) -> Result<Translator, TranslateError> {
        let service = Service::open(opts.clone(), None)?;
        let stages = service.route(&opts.from, &opts.to)?;
        Translator::on_engine(service.engine().clone(), stages, opts)
    }

    /// Loads the models of `files` (one direct, or from→en and en→to) with `opts`' settings, on
    /// an engine of their own.
    pub fn from_files(files: &[ModelFiles], opts: &TranslateOptions) -> Result<Translator, TranslateError> {
        let load = opts.load_options();
        let mut stages = Vec::new();
        for f in files {
            let m = Model::open(f, &load)?;
            if let Some(note) = m.pack_status().note(f) {
                eprintln!("{note}");
            }
            stages.push(Arc::new(m));
        }
        let engine = Engine::new(&opts.engine_options())?;
        Translator::on_engine(Arc::new(engine), stages, opts)
    }

    /// A translator through `stages` on an engine shared with other callers.
    pub fn on_engine(
        engine: Arc<Engine>,
        stages: Vec<Arc<Model>>,
        opts: &TranslateOptions,
    ) -> Result<Translator, TranslateError> {
        if stages.is_empty() {
            return Err(TranslateError::Model(ModelError::NotFound {
                from: opts.from.clone(),
                to: opts.to.clone(),
                dir: opts.models.clone(),
            }));
        }
        let search =
            SearchOptions { shortlist: opts.shortlist, max_batch: opts.max_batch.max(1), ..Default::default() };
        let mut text = text::Options::new(&opts.from, &opts.to);
        text.raw = opts.raw;
        text.split_sentences = opts.split_sentences;
        Ok(Translator { stages, engine, search, pipeline: Pipeline::new(&text)? })
    }

    /// The first model a sentence goes through (the only one without pivoting).
    pub fn model(&self) -> &Model {
        &self.stages[0]
    }

    /// Every model a sentence goes through, in order.
    pub fn models(&self) -> &[Arc<Model>] {
        &self.stages
    }

    pub fn arithmetic(&self) -> Arithmetic {
        self.engine.arithmetic()
    }

    pub fn engine(&self) -> &Arc<Engine> {
        &self.engine
    }

    pub fn kernels(&self) -> &'static Kernels {
        self.engine.kernels()
    }

    /// Translates posts (texts with any line breaks, as `serve` receives them): one output per
    /// post, with links, mentions, spacing and line breaks kept (see [`crate::text`]).
    pub fn translate_posts(&self, posts: &[&str]) -> Result<Vec<String>, TranslateError> {
        Ok(self.pipeline.translate_posts(posts, &mut self.segments(false))?)
    }

    /// [`Translator::translate_posts`] with each output's alignment to its post, from the
    /// decoder's attention (what `--html` places inline markup with).
    pub fn translate_posts_aligned(&self, posts: &[&str]) -> Result<Vec<crate::text::Aligned>, TranslateError> {
        Ok(self.pipeline.translate_posts_aligned(posts, &mut self.segments(true))?)
    }

    /// [`Translator::translate_sentences`] with each translation's alignment to its sentence:
    /// Marian's soft alignment (the last decoder layer's cross-attention, head 0), hardened to
    /// the source piece of highest weight, through every stage.
    pub fn translate_sentences_aligned(&self, sentences: &[&str]) -> Result<Vec<crate::text::Aligned>, TranslateError> {
        let texts = sentences.iter().map(|s| s.to_string()).collect();
        let search = SearchOptions { alignment: true, ..self.search.clone() };
        Ok(self.engine.submit(&self.stages, texts, &search).wait_aligned()?)
    }

    /// Translates each text as one sentence (cut by Bergamot's rule only when it reaches the
    /// model's limit, see [`crate::text::wrap`]), through every stage; one output per input.
    pub fn translate_sentences(&self, sentences: &[&str]) -> Result<Vec<String>, TranslateError> {
        let texts = sentences.iter().map(|s| s.to_string()).collect();
        Ok(self.engine.translate(&self.stages, texts, &self.search)?)
    }

    /// Reads `input` line by line and writes one line per input line. With `interactive` (a person
    /// is typing, or reading the output as it comes) each line is translated and flushed on its
    /// own; otherwise blocks of lines are read while earlier blocks are being translated, several
    /// in flight so the engine batches their sentences, and written in order. `progress` is told
    /// how many lines are done.
    pub fn translate_stream(
        &self,
        mut input: impl BufRead,
        mut output: impl Write,
        interactive: bool,
        progress: &mut dyn FnMut(usize),
    ) -> Result<usize, TranslateError> {
        let block_lines = if interactive { 1 } else { STREAM_BLOCK_LINES };
        let in_flight = if interactive { 1 } else { 2 * self.engine.threads() + 2 };
        let mut read = 0;
        let mut done = 0;
        std::thread::scope(|scope| {
            let mut blocks = VecDeque::new();
            let mut eof = false;
            loop {
                while !eof && blocks.len() < in_flight {
                    let lines = read_block(&mut input, block_lines, read, &mut eof)?;
                    if lines.is_empty() {
                        break;
                    }
                    read += lines.len();
                    let me = self.clone();
                    blocks.push_back(scope.spawn(move || {
                        let refs: Vec<&str> = lines.iter().map(|(l, _)| l.as_str()).collect();
                        me.translate_posts(&refs).map(|t| (t, lines))
                    }));
                }
                let Some(block) = blocks.pop_front() else { break };
                let (translated, lines) =
                    block.join().map_err(|_| EngineError::Internal("a translating thread panicked".into()))??;
                for (t, (_, nl)) in translated.iter().zip(&lines) {
                    output.write_all(t.as_bytes()).map_err(TranslateError::Output)?;
                    output.write_all(nl.as_bytes()).map_err(TranslateError::Output)?;
                }
                if interactive {
                    output.flush().map_err(TranslateError::Output)?;
                }
                done += lines.len();
                progress(done);
            }
            output.flush().map_err(TranslateError::Output)?;
            Ok(done)
        })
    }
}

/// Lines per block of a non-interactive stream: enough sentences to fill the engine's batches
/// with a few blocks in flight.
const STREAM_BLOCK_LINES: usize = 64;

/// Up to `n` lines with their line ending; `before` lines were read earlier (for error messages).
fn read_block(
    input: &mut impl BufRead,
    n: usize,
    before: usize,
    eof: &mut bool,
) -> Result<Vec<(String, &'static str)>, TranslateError> {
    let mut lines = Vec::new();
    while lines.len() < n {
        let mut buf = Vec::new();
        let got = input.read_until(b'\n', &mut buf).map_err(TranslateError::Input)?;
        if got == 0 {
            *eof = true;
            break;
        }
        let newline = if buf.last() == Some(&b'\n') {
            buf.pop();
            "\n"
        } else {
            ""
        };
        let text =
            String::from_utf8(buf).map_err(|_| TranslateError::InvalidUtf8 { line: before + lines.len() + 1 })?;
        lines.push((text, newline));
    }
    Ok(lines)
}
