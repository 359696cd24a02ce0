//! Between posts and the engine: what a translation of a social post must keep.
//!
//! A post becomes lines; a line becomes runs of text between links, e-mail addresses and emoji;
//! a run becomes sentences; a sentence loses the mentions and hashtags at its edges and, when too
//! long for the model, is cut into pieces. The remaining segments of all posts go to a
//! [`SegmentTranslator`] in one batch, and the translations are put back between the bytes that
//! were kept:
//!
//! | what | how |
//! | --- | --- |
//! | line breaks (LF, CRLF, CR, U+2028...) | kept byte for byte; each line is translated on its own; empty lines stay empty |
//! | spacing at line ends, around links and emoji, between sentences | kept byte for byte |
//! | URLs, e-mail addresses (`links`) | cut out, put back byte for byte; the text around them is translated on its own, exactly as it would be alone |
//! | emoji, incl. ZWJ sequences, flags, skin tones (`emoji`) | cut out like links (a byte-fallback model garbles them) |
//! | mentions and hashtags at a sentence's edges (`edges`) | kept out of the sentence, put back byte for byte |
//! | mentions inside a sentence (`mentions`) | translated with it; put back in order when the translation has as many |
//! | hashtags inside a sentence (`hashtags`) | the same, and any the translation lost is appended |
//! | brackets, quotes and commas a sentence cannot start or end with (`edges`) | kept out, put back |
//! | text without letters (numbers, punctuation) | kept, never sent |
//! | sentences (`sentences`) | UAX #29 boundaries, abbreviation lists (es, en, fr, de, it, pt), rules for quotes, ellipses, dialogue |
//! | sentences over the model's limit (`wrap`) | cut at clause punctuation, commas, then spaces |
//! | soft hyphens (`clean`) | removed, as Firefox does |
//!
//! With [`Options::raw`] only lines, spacing, sentences, long-sentence cuts and cleaning remain,
//! for line-for-line comparisons with other engines; with [`Options::split_sentences`] off each
//! line is one sentence, as Marian and Bergamot's `ssplit-mode: sentence` read their input.
//!
//! Why cut out rather than restore: links must come back byte for byte, and a model reproduces
//! a long query string, a ZWJ family or a flag only most of the time; the text on either side of
//! them is as well translated on its own. Mentions and hashtags inside a sentence are words of it
//! (the subject, an object), so they stay and are restored; at its edges they are not, so they are
//! kept out. Every segment depends only on its own text, never on what surrounds it, so a piece
//! between two links translates exactly as the same piece alone, and a post exactly as its lines.
//!
//! [`Pipeline::translate_posts`] does it all; [`Pipeline::plan`] and [`Plan::finish`] split it
//! for callers that schedule the translation themselves; [`check::violations`] tells what a
//! translation failed to keep.
//!
//! ```
//! use reseam::text::{Options, Pipeline, StandIn};
//!
//! let pipeline = Pipeline::new(&Options::new("es", "en"))?;
//! let mut shout = StandIn::ascii_upper();
//! let out = pipeline.translate_posts(&["@ana Mira https://x.org/a_(b). ¡Hola!\r\n#UE 🇪🇸 "], &mut shout)?;
//! assert_eq!(out, ["@ana MIRA https://x.org/a_(b). ¡HOLA!\r\n#UE 🇪🇸 "]);
//! # Ok::<(), reseam::text::Error>(())
//! ```

mod abbreviations;
pub mod check;
mod clean;
mod edges;
mod emoji;
mod hashtags;
mod lines;
mod links;
mod mentions;
mod pipeline;
mod sentences;
mod standin;
#[cfg(test)]
mod tests;
pub(crate) mod wrap;
mod writing;

pub use pipeline::{Options, Pipeline, Plan};
pub use standin::{StandIn, StandInMode};

/// The words of a post, for language identification: links, e-mail addresses, mentions, hashtags
/// and emoji blanked out (each becomes one space), since they belong to no language and a handle
/// or a host name would sway the guess.
pub fn prose(post: &str) -> String {
    let mut out = post.to_string();
    let blank = |text: &mut String, find: fn(&str) -> Vec<std::ops::Range<usize>>| {
        for span in find(text).into_iter().rev() {
            text.replace_range(span, " ");
        }
    };
    blank(&mut out, links::find);
    blank(&mut out, mentions::find);
    blank(&mut out, hashtags::find);
    blank(&mut out, emoji::find);
    out
}

/// Whatever a translator reports when it fails.
pub type TranslatorError = Box<dyn std::error::Error + Send + Sync + 'static>;

/// A translation with its alignment to the text it translates.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Aligned {
    pub text: String,
    /// Pieces of `text` in order, each with the bytes of the source it is aligned with. May be
    /// empty (the translator gives no alignment): then the whole text is aligned with the whole
    /// source.
    pub pieces: Vec<AlignedPiece>,
}

/// One piece of a translation (bytes of the target) and the source bytes it is aligned with: the
/// source piece of highest attention weight (`score`), as Marian's hard alignment.
#[derive(Clone, Debug, PartialEq)]
pub struct AlignedPiece {
    pub target: std::ops::Range<usize>,
    pub source: std::ops::Range<usize>,
    pub score: f32,
}

/// What the pipeline needs from a translation engine.
pub trait SegmentTranslator {
    /// Translates a batch of plain-text segments (sentences or pieces of one, without line breaks
    /// or spacing at their ends), returning exactly one translation per segment, in order.
    fn translate(&mut self, segments: &[&str]) -> Result<Vec<String>, TranslatorError>;

    /// Number of model tokens of `segment` (without the end-of-sentence token), so that segments
    /// over [`SegmentTranslator::max_tokens`] can be cut at sensible points.
    fn token_count(&self, segment: &str) -> usize;

    /// The most tokens a segment may have (Firefox's engine: `max-length-break` 128 − 1).
    fn max_tokens(&self) -> usize;

    /// [`SegmentTranslator::translate`] with each translation's alignment to its segment. By
    /// default there is none (each translation is aligned as a whole).
    fn translate_aligned(&mut self, segments: &[&str]) -> Result<Vec<Aligned>, TranslatorError> {
        Ok(self.translate(segments)?.into_iter().map(|text| Aligned { text, pieces: Vec::new() }).collect())
    }
}

impl<T: SegmentTranslator + ?Sized> SegmentTranslator for &mut T {
    fn translate(&mut self, segments: &[&str]) -> Result<Vec<String>, TranslatorError> {
        (**self).translate(segments)
    }
    fn token_count(&self, segment: &str) -> usize {
        (**self).token_count(segment)
    }
    fn max_tokens(&self) -> usize {
        (**self).max_tokens()
    }
    fn translate_aligned(&mut self, segments: &[&str]) -> Result<Vec<Aligned>, TranslatorError> {
        (**self).translate_aligned(segments)
    }
}

/// What can go wrong between posts and the engine.
#[derive(Debug, thiserror::Error)]
pub enum Error {
    /// The translator failed; its error is the source.
    #[error("the translator failed on a batch of {segments} segments")]
    Translator {
        segments: usize,
        #[source]
        source: TranslatorError,
    },
    /// The translator broke its contract.
    #[error(
        "the translator returned {got} translations for {expected} segments; it must return exactly one per segment \
         (a bug in the engine, please report it)"
    )]
    TranslationCount { expected: usize, got: usize },
    /// The translator allows no tokens at all.
    #[error("the translator allows 0 tokens per segment; check the model's length limit (max-length-break)")]
    NoTokenBudget,
    /// A language option is not a language tag.
    #[error("{which} {tag:?} is not a language tag such as `es` or `pt-BR`; give the model's language codes")]
    Language { which: &'static str, tag: String },
}

crate::error::fault!(Error);

impl Error {
    /// A bad language option is the caller's fault (see [`crate::error`]); the translator's own
    /// error is the next link of the chain.
    pub fn is_usage(&self) -> bool {
        match self {
            Error::Language { .. } => true,
            Error::Translator { .. } | Error::TranslationCount { .. } | Error::NoTokenBudget => false,
        }
    }
}
