//! The pipeline: a post is planned into pieces (source bytes kept as they are, and segments to
//! translate), all segments of all posts go to the translator in one batch, and the results are
//! put back between the kept pieces.

use std::ops::Range;

use super::writing::{Lang, is_unspaced_script};
use super::{
    Aligned, AlignedPiece, Error, SegmentTranslator, clean, edges, emoji, hashtags, lines, links, mentions, sentences,
    wrap,
};

/// What the pipeline is told by its caller (`translate`, `serve`, `bench`).
#[derive(Clone, Debug)]
pub struct Options {
    /// Language tag of the posts (`es`, `pt-BR`): picks the abbreviation list of the sentence
    /// splitter and the rules for scripts without spaces.
    pub source_lang: String,
    /// Language tag of the translations: whether pieces cut apart without a space get one.
    pub target_lang: String,
    /// Send everything to the translator: no links, e-mail addresses, emoji, mentions or
    /// hashtags are kept out or restored. Lines, spacing, sentence splitting, long-sentence
    /// cutting and cleaning stay, so the output compares line for line with other engines'. The
    /// translations are used as the translator gives them, spacing at their ends included
    /// (only line breaks become spaces).
    pub raw: bool,
    /// Split lines into sentences (Firefox, and Bergamot's `ssplit-mode: paragraph`). Off, each
    /// line (or run between links) is one sentence, as Marian's command line and Bergamot's
    /// `ssplit-mode: sentence` take their input; long ones are still cut to the model's limit.
    pub split_sentences: bool,
}

impl Options {
    /// Options for translating posts from `source_lang` to `target_lang`: links, emoji,
    /// mentions and hashtags handled, sentences split.
    pub fn new(source_lang: &str, target_lang: &str) -> Options {
        Options {
            source_lang: source_lang.to_string(),
            target_lang: target_lang.to_string(),
            raw: false,
            split_sentences: true,
        }
    }
}

/// Turns posts into segments for a [`SegmentTranslator`] and its results back into posts.
#[derive(Clone, Debug)]
pub struct Pipeline {
    source: Lang,
    target: Lang,
    raw: bool,
    split_sentences: bool,
}

/// One part of a planned post.
#[derive(Clone, Debug)]
enum Piece {
    /// Bytes of the post, kept as they are.
    Source(Range<usize>),
    /// Spacing taken from cleaned text, or the space that joins two pieces cut apart without one.
    Text(String),
    /// The translation of segment `n` of the plan.
    Segment(usize),
}

/// Posts cut into segments, waiting for their translations. For callers that schedule the
/// translation themselves (a server batching across requests); others call
/// [`Pipeline::translate_posts`].
#[derive(Debug)]
pub struct Plan<'a> {
    raw: bool,
    posts: Vec<(&'a str, Vec<Piece>)>,
    segments: Vec<String>,
    /// Where each segment is in its post: its bytes exactly, or (`false`) the sentence it was
    /// cleaned from.
    sources: Vec<(Range<usize>, bool)>,
}

impl Pipeline {
    /// Checks the language tags (error names the option at fault).
    pub fn new(options: &Options) -> Result<Pipeline, Error> {
        Ok(Pipeline {
            source: Lang::parse(&options.source_lang, "source language")?,
            target: Lang::parse(&options.target_lang, "target language")?,
            raw: options.raw,
            split_sentences: options.split_sentences,
        })
    }

    /// Translates posts (each may hold line breaks), with one call to `translator` for all
    /// their segments (none when no post has anything to translate). One output per post.
    pub fn translate_posts<T: SegmentTranslator + ?Sized>(
        &self,
        posts: &[&str],
        translator: &mut T,
    ) -> Result<Vec<String>, Error> {
        let plan = self.plan(posts, &*translator)?;
        if plan.segments.is_empty() {
            return plan.finish(Vec::new());
        }
        let segments: Vec<&str> = plan.segments().iter().map(String::as_str).collect();
        let translations =
            translator.translate(&segments).map_err(|source| Error::Translator { segments: segments.len(), source })?;
        plan.finish(translations)
    }

    /// [`Pipeline::translate_posts`] with each output's alignment to its post (see
    /// [`Plan::finish_aligned`]).
    pub fn translate_posts_aligned<T: SegmentTranslator + ?Sized>(
        &self,
        posts: &[&str],
        translator: &mut T,
    ) -> Result<Vec<Aligned>, Error> {
        let plan = self.plan(posts, &*translator)?;
        if plan.segments.is_empty() {
            return plan.finish_aligned(Vec::new());
        }
        let segments: Vec<&str> = plan.segments().iter().map(String::as_str).collect();
        let translations = translator
            .translate_aligned(&segments)
            .map_err(|source| Error::Translator { segments: segments.len(), source })?;
        plan.finish_aligned(translations)
    }

    /// [`Pipeline::translate_posts`] for one post.
    pub fn translate_post<T: SegmentTranslator + ?Sized>(
        &self,
        post: &str,
        translator: &mut T,
    ) -> Result<String, Error> {
        // One post in, so exactly one out.
        Ok(self.translate_posts(&[post], translator)?.remove(0))
    }

    /// Cuts posts into segments; `translator` is asked only for token counts and its limit.
    pub fn plan<'a, T: SegmentTranslator + ?Sized>(
        &self,
        posts: &[&'a str],
        translator: &T,
    ) -> Result<Plan<'a>, Error> {
        let max_tokens = translator.max_tokens();
        if max_tokens == 0 {
            return Err(Error::NoTokenBudget);
        }
        let mut segments = Vec::new();
        let mut sources = Vec::new();
        let mut planned = Vec::with_capacity(posts.len());
        for &post in posts {
            let mut planner = Planner {
                pipeline: self,
                count: &|s: &str| translator.token_count(s),
                max_tokens,
                text: post,
                pieces: Vec::new(),
                segments: &mut segments,
                sources: &mut sources,
            };
            for (line, terminator) in lines::split(post) {
                planner.line(line);
                planner.keep(terminator);
            }
            let pieces = planner.pieces;
            planned.push((post, pieces));
        }
        Ok(Plan { raw: self.raw, posts: planned, segments, sources })
    }
}

impl Plan<'_> {
    /// The segments to translate: sentences or pieces of them, without line breaks or spacing
    /// at their ends, never empty.
    pub fn segments(&self) -> &[String] {
        &self.segments
    }

    /// Puts `translations` (one per segment, in order) into the posts.
    pub fn finish(self, translations: Vec<String>) -> Result<Vec<String>, Error> {
        let aligned = translations.into_iter().map(|text| Aligned { text, pieces: Vec::new() }).collect();
        Ok(self.assemble(aligned, false)?.into_iter().map(|a| a.text).collect())
    }

    /// [`Plan::finish`] with alignments: each output's pieces aligned with bytes of its post.
    /// Bytes kept from the post are aligned with themselves; a translation's pieces with the
    /// segment's bytes as the translator aligned them, or, where the translator gave no
    /// alignment or the pipeline changed the translation (a mention put back), the whole
    /// translation with the whole segment.
    pub fn finish_aligned(self, translations: Vec<Aligned>) -> Result<Vec<Aligned>, Error> {
        self.assemble(translations, true)
    }

    /// Both finishes; without `align` no alignment is made (no copy of each translation, no
    /// pieces), since plain translation is the common path.
    fn assemble(self, translations: Vec<Aligned>, align: bool) -> Result<Vec<Aligned>, Error> {
        if translations.len() != self.segments.len() {
            return Err(Error::TranslationCount { expected: self.segments.len(), got: translations.len() });
        }
        let finished: Vec<Aligned> = translations
            .into_iter()
            .zip(&self.segments)
            .zip(&self.sources)
            .map(|((translation, source), (at, exact))| {
                let Aligned { text, pieces } = translation;
                let raw_text = if align { text.clone() } else { String::new() };
                let out = if self.raw {
                    flatten(text)
                } else {
                    hashtags::restore(source, mentions::restore(source, tidy(text)))
                };
                let pieces =
                    if align { segment_pieces(&raw_text, &out, pieces, at.clone(), *exact) } else { Vec::new() };
                Aligned { text: out, pieces }
            })
            .collect();
        Ok(self
            .posts
            .into_iter()
            .map(|(post, pieces)| {
                let mut out = String::with_capacity(post.len() * 2);
                let mut aligned = Vec::new();
                for piece in pieces {
                    match piece {
                        Piece::Source(range) => {
                            let at = out.len();
                            out.push_str(&post[range.clone()]);
                            if align {
                                aligned.push(AlignedPiece { target: at..out.len(), source: range, score: 1.0 });
                            }
                        }
                        Piece::Text(text) => out.push_str(&text),
                        Piece::Segment(n) => {
                            let at = out.len();
                            out.push_str(&finished[n].text);
                            aligned.extend(
                                finished[n].pieces.iter().map(|p| AlignedPiece {
                                    target: at + p.target.start..at + p.target.end,
                                    ..p.clone()
                                }),
                            );
                        }
                    }
                }
                Aligned { text: out, pieces: aligned }
            })
            .collect())
    }
}

/// The pieces of `out` (the pipeline's text of translation `raw`, whose pieces are `pieces`)
/// aligned with the post: the segment is at `at`, exactly or (`exact` false) somewhere in it.
fn segment_pieces(raw: &str, out: &str, pieces: Vec<AlignedPiece>, at: Range<usize>, exact: bool) -> Vec<AlignedPiece> {
    let whole = || vec![AlignedPiece { target: 0..out.len(), source: at.clone(), score: 0.0 }];
    // Tidying cuts spacing off the ends; anything else the pipeline changed leaves the
    // translator's pieces meaningless.
    let lead = raw.len() - raw.trim_start().len();
    if out.is_empty() || pieces.is_empty() || raw.get(lead..lead + out.len()) != Some(out) {
        return if out.is_empty() { Vec::new() } else { whole() };
    }
    let clip = |r: &Range<usize>, len: usize| r.start.min(len)..r.end.min(len);
    pieces
        .into_iter()
        .filter_map(|p| {
            let target =
                p.target.start.saturating_sub(lead).min(out.len())..p.target.end.saturating_sub(lead).min(out.len());
            if target.is_empty() {
                return None;
            }
            let source = if exact {
                let s = clip(&p.source, at.len());
                at.start + s.start..at.start + s.end
            } else {
                at.clone()
            };
            Some(AlignedPiece { target, source, score: p.score })
        })
        .collect()
}

/// A translation as it goes into the post: no line breaks (each line is translated on its own,
/// so a break the model made up would add a line) and no spacing at its ends (the source's is put
/// back around it).
fn tidy(translation: String) -> String {
    let flat = flatten(translation);
    let trimmed = flat.trim();
    if trimmed.len() == flat.len() { flat } else { trimmed.to_string() }
}

/// A translation without line breaks; in raw mode that is all that changes, so the engine's
/// own output (a trailing space where the model stopped on a lone `▁`) can be compared with
/// other engines'.
fn flatten(translation: String) -> String {
    if translation.contains(lines::is_break) { translation.replace(lines::is_break, " ") } else { translation }
}

struct Planner<'p, 'a> {
    pipeline: &'p Pipeline,
    count: &'p dyn Fn(&str) -> usize,
    max_tokens: usize,
    text: &'a str,
    pieces: Vec<Piece>,
    segments: &'p mut Vec<String>,
    sources: &'p mut Vec<(Range<usize>, bool)>,
}

impl Planner<'_, '_> {
    fn keep(&mut self, range: Range<usize>) {
        if range.is_empty() {
            return;
        }
        match self.pieces.last_mut() {
            Some(Piece::Source(last)) if last.end == range.start => last.end = range.end,
            _ => self.pieces.push(Piece::Source(range)),
        }
    }

    /// A line: links, e-mail addresses and emoji are kept; the runs of text between them are
    /// translated each on its own.
    fn line(&mut self, line: Range<usize>) {
        let mut pos = line.start;
        if !self.pipeline.raw {
            for span in protected(&self.text[line.clone()]) {
                self.run(pos..line.start + span.start);
                self.keep(line.start + span.start..line.start + span.end);
                pos = line.start + span.end;
            }
        }
        self.run(pos..line.end);
    }

    /// Text without line breaks or protected spans: spacing at its ends kept, the rest split into
    /// sentences with the gaps between them kept.
    fn run(&mut self, run: Range<usize>) {
        let (leading, core, trailing) = lines::trim(self.text, run);
        self.keep(leading);
        if !core.is_empty() {
            let mut previous: Option<Range<usize>> = None;
            let sentences = if self.pipeline.split_sentences {
                sentences::split(&self.text[core.clone()], &self.pipeline.source)
            } else {
                std::iter::once(0..core.len()).collect()
            };
            for sentence in sentences {
                let sentence = core.start + sentence.start..core.start + sentence.end;
                if let Some(previous) = previous {
                    self.gap(previous.end..sentence.start);
                }
                self.sentence(sentence.clone());
                previous = Some(sentence);
            }
        }
        self.keep(trailing);
    }

    fn sentence(&mut self, sentence: Range<usize>) {
        let (prefix, middle, suffix) = if self.pipeline.raw {
            (sentence.start..sentence.start, sentence.clone(), sentence.end..sentence.end)
        } else {
            let (p, m, s) = edges::split(&self.text[sentence.clone()]);
            let at = |r: Range<usize>| sentence.start + r.start..sentence.start + r.end;
            (at(p), at(m), at(s))
        };
        self.keep(prefix);
        let text = &self.text[middle.clone()];
        if !self.pipeline.raw && !text.chars().any(char::is_alphabetic) {
            // Nothing a model could translate (numbers, punctuation): sending it would only invite
            // made-up words.
            self.keep(middle);
        } else if !text.is_empty() {
            let cleaned = clean::for_translator(text);
            // Where the cleaned text is in the post: exactly when cleaning changed nothing.
            let exact = cleaned == text;
            let lead = middle.start + (cleaned.len() - cleaned.trim_start().len());
            let cleaned = cleaned.trim();
            let mut previous: Option<Range<usize>> = None;
            for piece in wrap::cut(cleaned, self.max_tokens, self.count) {
                if let Some(previous) = previous {
                    self.gap_in(cleaned, previous.end..piece.start);
                }
                self.sources.push(if exact {
                    (lead + piece.start..lead + piece.end, true)
                } else {
                    (middle.clone(), false)
                });
                self.segments.push(cleaned[piece.clone()].to_string());
                self.pieces.push(Piece::Segment(self.segments.len() - 1));
                previous = Some(piece);
            }
        }
        self.keep(suffix);
    }

    /// The spacing between two sentences of the post: kept, or joined (see `join`) if empty.
    fn gap(&mut self, gap: Range<usize>) {
        if gap.is_empty() {
            self.join(self.text, gap.start);
        } else {
            self.keep(gap);
        }
    }

    /// The spacing between two pieces of one cleaned sentence.
    fn gap_in(&mut self, cleaned: &str, gap: Range<usize>) {
        if gap.is_empty() {
            self.join(cleaned, gap.start);
        } else {
            self.pieces.push(Piece::Text(cleaned[gap].to_string()));
        }
    }

    /// Two pieces the source wrote without a space between them (`text` is cut at `at`) get one
    /// when they are in a script without spaces and the target language uses them, as Firefox
    /// joins sentences; a word cut because it was too long stays joined.
    fn join(&mut self, text: &str, at: usize) {
        let before = text[..at].chars().next_back();
        let after = text[at..].chars().next();
        let unspaced = before.is_some_and(is_unspaced_script) || after.is_some_and(is_unspaced_script);
        if unspaced && self.pipeline.target.uses_spaces() {
            self.pieces.push(Piece::Text(" ".to_string()));
        }
    }
}

/// Links, e-mail addresses and emoji of a line, in order, as byte ranges of the line.
fn protected(line: &str) -> Vec<Range<usize>> {
    let mut spans = Vec::new();
    let mut pos = 0;
    let emoji_in = |spans: &mut Vec<Range<usize>>, range: Range<usize>| {
        spans.extend(emoji::find(&line[range.clone()]).into_iter().map(|e| range.start + e.start..range.start + e.end));
    };
    for link in links::find(line) {
        emoji_in(&mut spans, pos..link.start);
        pos = link.end;
        spans.push(link);
    }
    emoji_in(&mut spans, pos..line.len());
    spans
}
