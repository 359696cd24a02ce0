//! `reseam translate` as a library call: find (or fetch) and load a model, then translate lines
//! or whole posts.
//!
//! Text flows: post → [`crate::text`] (lines, links, mentions, sentences) → SentencePiece ids →
//! [`crate::marian::search`] (greedy search) → ids → text → put back by [`crate::text`]. Without a direct
//! model the sentences go through English (`from`→en, then en→`to`), sentence by sentence, as
//! Firefox pivots. The output of a line never depends on which other lines were translated with it.

use std::io::{BufRead, Write};
use std::path::PathBuf;

use reseam_kernels::{Arithmetic, Kernels};

use crate::fetch::{FetchError, FetchOptions};
use crate::marian::search::{Buffers, DecodeError, Decoder, SearchOptions};
use crate::marian::{Model, ModelError, ModelFiles};
use crate::text::{self, Pipeline};
use crate::vocab::VocabError;

/// The pivot language: every Firefox model has English on one side.
pub const PIVOT: &str = "en";

/// Which integer arithmetic the int8 products use.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Default)]
pub enum ArithmeticChoice {
    /// What Firefox computes on this CPU class (exact with VNNI or on ARM64, else saturating).
    #[default]
    Auto,
    /// Pair-saturating, as Firefox/Bergamot on SSSE3/AVX2/AVX-512BW machines.
    Saturating,
    /// Exact int32 sums: the same output on every CPU.
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
    /// Print per-layer values to stderr (Marian's `debug()` format).
    pub debug: bool,
    /// Most sentences decoded together.
    pub max_batch: usize,
    /// Leave links, e-mail addresses, emoji and mentions to the model (sentence splitting and
    /// spacing stay): for line-for-line comparisons with other engines.
    pub raw: bool,
    /// Split lines into sentences (as Firefox does). Off: each line is one sentence unless it is
    /// over the model's limit, as Marian and Bergamot's `ssplit-mode: sentence` read input.
    pub split_sentences: bool,
    /// Where to download a missing pair from; `None` never touches the network (`--offline`).
    pub fetch: Option<FetchOptions>,
}

impl TranslateOptions {
    /// Firefox's behaviour for `from`→`to` with the models under `models`, offline.
    pub fn new(models: impl Into<PathBuf>, from: &str, to: &str) -> TranslateOptions {
        TranslateOptions {
            models: models.into(),
            model_file: None,
            from: from.into(),
            to: to.into(),
            shortlist: false,
            arithmetic: ArithmeticChoice::Auto,
            debug: false,
            max_batch: 64,
            raw: false,
            split_sentences: true,
            fetch: None,
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
    Vocab(#[from] VocabError),
    #[error("{0}")]
    Kernels(String),
    #[error(transparent)]
    Fetch(#[from] FetchError),
    #[error(transparent)]
    Text(#[from] text::Error),
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
    #[error("writing the output: {0}")]
    Output(#[source] std::io::Error),
}

/// Loaded models (one, or two through English) with their search settings.
pub struct Translator {
    /// The models a sentence goes through, in order.
    stages: Vec<Model>,
    kernels: &'static Kernels,
    arith: Arithmetic,
    debug: bool,
    search: SearchOptions,
    pipeline: Pipeline,
    /// One working memory for every stage: they run one after the other.
    buffers: Buffers,
}

impl Translator {
    /// Finds the model(s) `opts` names: the direct pair, else the pair through English already
    /// on disk, else (unless offline) downloads what is missing. Then loads them.
    pub fn load(opts: &TranslateOptions) -> Result<Translator, TranslateError> {
        let (from, to, dir) = (opts.from.as_str(), opts.to.as_str(), &opts.models);
        let direct = crate::marian::find(dir, from, to, opts.model_file.as_deref());
        let files = match direct {
            Ok(files) => vec![files],
            Err(ModelError::NotFound { .. }) if opts.model_file.is_none() => {
                let pivot = (from != PIVOT && to != PIVOT)
                    .then(|| {
                        Some(vec![
                            crate::marian::find(dir, from, PIVOT, None).ok()?,
                            crate::marian::find(dir, PIVOT, to, None).ok()?,
                        ])
                    })
                    .flatten();
                match (pivot, &opts.fetch) {
                    (Some(files), _) => files,
                    (None, Some(fetch)) => {
                        let mut fetch = fetch.clone();
                        fetch.models_dir = dir.clone();
                        let folders =
                            crate::fetch::ensure_pair(&fetch, from, to).map_err(|source| TranslateError::Download {
                                from: from.into(),
                                to: to.into(),
                                dir: dir.clone(),
                                source: Box::new(source),
                            })?;
                        let pairs: Vec<(&str, &str)> =
                            if folders.len() == 1 { vec![(from, to)] } else { vec![(from, PIVOT), (PIVOT, to)] };
                        folders
                            .iter()
                            .zip(pairs)
                            .map(|(f, (a, b))| crate::marian::find(f, a, b, None))
                            .collect::<Result<_, _>>()?
                    }
                    (None, None) => {
                        return Err(TranslateError::Offline { from: from.into(), to: to.into(), dir: dir.clone() });
                    }
                }
            }
            Err(e) => return Err(e.into()),
        };
        Translator::from_files(&files, opts)
    }

    /// Loads the models of `files` (one direct, or from→en and en→to) with `opts`' settings.
    pub fn from_files(files: &[ModelFiles], opts: &TranslateOptions) -> Result<Translator, TranslateError> {
        let stages = files.iter().map(|f| Model::load(f, opts.shortlist)).collect::<Result<Vec<_>, _>>()?;
        if stages.is_empty() {
            return Err(TranslateError::Model(ModelError::NotFound {
                from: opts.from.clone(),
                to: opts.to.clone(),
                dir: opts.models.clone(),
            }));
        }
        let kernels = reseam_kernels::dispatch::kernels().map_err(|e| TranslateError::Kernels(e.to_string()))?;
        let search =
            SearchOptions { shortlist: opts.shortlist, max_batch: opts.max_batch.max(1), ..Default::default() };
        let mut text = text::Options::new(&opts.from, &opts.to);
        text.raw = opts.raw;
        text.split_sentences = opts.split_sentences;
        Ok(Translator {
            stages,
            kernels,
            arith: opts.arithmetic.resolve(),
            debug: opts.debug,
            search,
            pipeline: Pipeline::new(&text)?,
            buffers: Buffers::default(),
        })
    }

    /// The first model a sentence goes through (the only one without pivoting).
    pub fn model(&self) -> &Model {
        &self.stages[0]
    }

    /// Every model a sentence goes through, in order.
    pub fn models(&self) -> &[Model] {
        &self.stages
    }

    pub fn arithmetic(&self) -> Arithmetic {
        self.arith
    }

    /// Translates posts (texts with any line breaks, as `serve` receives them): one output per
    /// post, with links, mentions, spacing and line breaks kept (see [`crate::text`]).
    pub fn translate_posts(&mut self, posts: &[&str]) -> Result<Vec<String>, TranslateError> {
        let pipeline = self.pipeline.clone();
        Ok(pipeline.translate_posts(posts, self)?)
    }

    /// Translates each text as one sentence (cut into chunks only when it reaches the model's
    /// limit), through every stage; one output per input.
    pub fn translate_sentences(&mut self, sentences: &[&str]) -> Result<Vec<String>, TranslateError> {
        let mut texts: Vec<String> = sentences.iter().map(|s| s.to_string()).collect();
        for stage in 0..self.stages.len() {
            texts = self.translate_stage(stage, &texts.iter().map(String::as_str).collect::<Vec<_>>())?;
        }
        Ok(texts)
    }

    fn translate_stage(&mut self, stage: usize, sentences: &[&str]) -> Result<Vec<String>, TranslateError> {
        let model = &self.stages[stage];
        let ids = sentences.iter().map(|s| model.src_vocab.encode(s)).collect::<Result<Vec<_>, _>>()?;
        let buffers = std::mem::take(&mut self.buffers);
        let mut decoder = Decoder::with_buffers(model, self.kernels, self.arith, self.debug, buffers);
        let outputs = decoder.translate(&ids, &self.search);
        self.buffers = decoder.into_buffers();
        let mut texts = Vec::with_capacity(sentences.len());
        for chunks in outputs? {
            let parts = chunks.iter().map(|ids| model.trg_vocab.decode(ids)).collect::<Result<Vec<_>, _>>()?;
            // Chunks of one over-long sentence are joined with a space, as Firefox joins them.
            texts.push(parts.into_iter().filter(|p| !p.is_empty()).collect::<Vec<_>>().join(" "));
        }
        Ok(texts)
    }

    /// Reads `input` line by line and writes one line per input line. With `interactive` (a person
    /// is typing, or reading the output as it comes) each line is translated and flushed on its
    /// own; otherwise lines are translated in batches. `progress` is told how many lines are done.
    pub fn translate_stream(
        &mut self,
        mut input: impl BufRead,
        mut output: impl Write,
        interactive: bool,
        progress: &mut dyn FnMut(usize),
    ) -> Result<usize, TranslateError> {
        let batch_lines = if interactive { 1 } else { 256 };
        let mut done = 0;
        let mut eof = false;
        while !eof {
            let mut lines: Vec<(String, &'static str)> = Vec::new();
            while lines.len() < batch_lines {
                let mut buf = Vec::new();
                let n = input.read_until(b'\n', &mut buf).map_err(TranslateError::Input)?;
                if n == 0 {
                    eof = true;
                    break;
                }
                let newline = if buf.last() == Some(&b'\n') {
                    buf.pop();
                    "\n"
                } else {
                    ""
                };
                let text =
                    String::from_utf8(buf).map_err(|_| TranslateError::InvalidUtf8 { line: done + lines.len() + 1 })?;
                lines.push((text, newline));
            }
            if lines.is_empty() {
                break;
            }
            let refs: Vec<&str> = lines.iter().map(|(l, _)| l.as_str()).collect();
            let translated = self.translate_posts(&refs)?;
            for (t, (_, nl)) in translated.iter().zip(&lines) {
                output.write_all(t.as_bytes()).map_err(TranslateError::Output)?;
                output.write_all(nl.as_bytes()).map_err(TranslateError::Output)?;
                if interactive {
                    output.flush().map_err(TranslateError::Output)?;
                }
            }
            done += lines.len();
            progress(done);
        }
        output.flush().map_err(TranslateError::Output)?;
        Ok(done)
    }
}

/// The engine behind the social-post text pipeline: segments are sentences (or pieces of one).
impl crate::text::SegmentTranslator for Translator {
    fn translate(&mut self, segments: &[&str]) -> Result<Vec<String>, crate::text::TranslatorError> {
        self.translate_sentences(segments).map_err(|e| Box::new(e) as crate::text::TranslatorError)
    }

    fn token_count(&self, segment: &str) -> usize {
        // A text SentencePiece cannot encode is counted as too long, so it gets cut.
        self.model().src_vocab.encode(segment).map(|ids| ids.len()).unwrap_or(usize::MAX)
    }

    fn max_tokens(&self) -> usize {
        self.search.max_length_break.saturating_sub(1)
    }
}
