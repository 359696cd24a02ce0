//! `reseam translate` as a library call: find and load a model, then translate lines.
//!
//! Text flows: line → [`split`] (sentences and the gaps between them) → SentencePiece ids →
//! [`crate::decode`] (greedy search) → ids → text → joined with the original gaps. The output of
//! a line never depends on which other lines were translated with it.

pub mod split;

use std::io::{BufRead, Write};
use std::path::PathBuf;

use reseam_kernels::{Arithmetic, Kernels};

use crate::decode::{Buffers, DecodeError, Decoder, SearchOptions};
use crate::model::{Model, ModelError, ModelFiles};
use crate::vocab::VocabError;
use split::{LineSplitter, SimpleSplitter};

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
    #[error("input line {line} is not valid UTF-8; convert the input to UTF-8 first (e.g. with iconv)")]
    InvalidUtf8 { line: usize },
    #[error("reading the input: {0}")]
    Input(std::io::Error),
    #[error("writing the output: {0}")]
    Output(#[source] std::io::Error),
}

/// A loaded model with its search settings.
pub struct Translator {
    model: Model,
    kernels: &'static Kernels,
    arith: Arithmetic,
    debug: bool,
    search: SearchOptions,
    splitter: Box<dyn LineSplitter + Send + Sync>,
    buffers: Buffers,
}

impl Translator {
    /// Finds and loads the model `opts` names.
    pub fn load(opts: &TranslateOptions) -> Result<Translator, TranslateError> {
        // Seam for downloads: a `ModelError::NotFound` here is where `crate::fetch::ensure_pair`
        // can install the pair (or its pivot through English) before trying again.
        let files = crate::model::find(&opts.models, &opts.from, &opts.to, opts.model_file.as_deref())?;
        Translator::from_files(&files, opts)
    }

    pub fn from_files(files: &ModelFiles, opts: &TranslateOptions) -> Result<Translator, TranslateError> {
        let model = Model::load(files, opts.shortlist)?;
        let kernels = reseam_kernels::dispatch::kernels().map_err(|e| TranslateError::Kernels(e.to_string()))?;
        let search =
            SearchOptions { shortlist: opts.shortlist, max_batch: opts.max_batch.max(1), ..Default::default() };
        Ok(Translator {
            model,
            kernels,
            arith: opts.arithmetic.resolve(),
            debug: opts.debug,
            search,
            splitter: Box::new(SimpleSplitter),
            buffers: Buffers::default(),
        })
    }

    pub fn model(&self) -> &Model {
        &self.model
    }

    pub fn arithmetic(&self) -> Arithmetic {
        self.arith
    }

    /// Replaces the line splitter (the text pipeline plugs in here).
    pub fn set_splitter(&mut self, splitter: Box<dyn LineSplitter + Send + Sync>) {
        self.splitter = splitter;
    }

    /// Translates lines (without their line breaks); one output per line.
    pub fn translate_lines(&mut self, lines: &[&str]) -> Result<Vec<String>, TranslateError> {
        let segmented = {
            let vocab = &self.model.src_vocab;
            let limit = self.search.max_length_break.saturating_sub(1);
            let fits = |s: &str| vocab.encode(s).map(|ids| ids.len() <= limit).unwrap_or(true);
            lines.iter().map(|l| self.splitter.split(l, &fits)).collect::<Vec<_>>()
        };
        let sentences: Vec<&str> = segmented.iter().flat_map(|s| s.sentences.iter().map(|(t, _)| *t)).collect();
        let texts = self.translate_sentences(&sentences)?;
        let mut at = 0;
        Ok(segmented
            .iter()
            .map(|seg| {
                let n = seg.sentences.len();
                let line = seg.join(&texts[at..at + n]);
                at += n;
                line
            })
            .collect())
    }

    /// Translates each text as one sentence (cut into chunks only when it reaches the model's
    /// limit); one output per input.
    pub fn translate_sentences(&mut self, sentences: &[&str]) -> Result<Vec<String>, TranslateError> {
        let ids = sentences.iter().map(|s| self.model.src_vocab.encode(s)).collect::<Result<Vec<_>, _>>()?;
        let buffers = std::mem::take(&mut self.buffers);
        let mut decoder = Decoder::with_buffers(&self.model, self.kernels, self.arith, self.debug, buffers);
        let outputs = decoder.translate(&ids, &self.search);
        self.buffers = decoder.into_buffers();
        let mut texts = Vec::with_capacity(sentences.len());
        for chunks in outputs? {
            let parts = chunks.iter().map(|ids| self.model.trg_vocab.decode(ids)).collect::<Result<Vec<_>, _>>()?;
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
            let translated = self.translate_lines(&refs)?;
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
        self.model.src_vocab.encode(segment).map(|ids| ids.len()).unwrap_or(usize::MAX)
    }

    fn max_tokens(&self) -> usize {
        self.search.max_length_break.saturating_sub(1)
    }
}
