//! The translator as the text pipeline sees it for one call: SentencePiece runs once per segment.
//!
//! The pipeline counts each sentence's pieces to cut long ones ([`crate::text::wrap::cut`]);
//! [`Segments`] keeps the pieces it counted, by text, and hands them to the engine with the
//! segments, so the engine decodes the very pieces the pipeline counted and encodes only what
//! nobody encoded (a pivot's second stage, a segment that was never counted whole).

use std::cell::RefCell;
use std::collections::HashMap;

use super::Translator;
use crate::engine::Source;
use crate::marian::search::SearchOptions;
use crate::text::{Aligned, SegmentTranslator, TranslatorError};
use crate::vocab::Pieces;

/// [`Translator`] behind the text pipeline for one call (see the module doc).
pub struct Segments<'t> {
    translator: &'t Translator,
    /// Encode with spans, as alignment needs.
    spans: bool,
    /// The pieces counted since the last translation, of texts short enough to be a segment.
    counted: RefCell<HashMap<String, Pieces>>,
}

impl Translator {
    /// This translator for one call of the text pipeline; `aligned`: the call translates with
    /// alignment ([`SegmentTranslator::translate_aligned`]), so the pieces are counted with
    /// their spans.
    pub fn segments(&self, aligned: bool) -> Segments<'_> {
        Segments { translator: self, spans: aligned, counted: RefCell::default() }
    }
}

impl Segments<'_> {
    fn submit(&mut self, segments: &[&str], opts: &SearchOptions) -> Result<Vec<Aligned>, TranslatorError> {
        // Segments repeat (the same sentence in two posts): each takes a copy of the pieces.
        let counted = self.counted.take();
        let sources = segments.iter().map(|&s| Source { text: s.to_string(), pieces: counted.get(s).cloned() });
        let t = self.translator;
        let ticket = t.engine.submit_sources(&t.stages, sources.collect(), opts);
        ticket.wait_aligned().map_err(|e| Box::new(super::TranslateError::from(e)) as TranslatorError)
    }
}

impl SegmentTranslator for Segments<'_> {
    fn translate(&mut self, segments: &[&str]) -> Result<Vec<String>, TranslatorError> {
        let opts = self.translator.search.clone();
        Ok(self.submit(segments, &opts)?.into_iter().map(|a| a.text).collect())
    }

    fn token_count(&self, segment: &str) -> usize {
        // A text SentencePiece cannot encode is counted as too long, so it gets cut.
        let Ok(pieces) = self.translator.model().src_vocab.pieces(segment, self.spans) else { return usize::MAX };
        let n = pieces.ids.len();
        // Longer texts are cut, so they are never a segment.
        if n <= self.max_tokens() {
            self.counted.borrow_mut().insert(segment.to_string(), pieces);
        }
        n
    }

    fn max_tokens(&self) -> usize {
        crate::text::wrap::limit(self.translator.search.max_length_break)
    }

    fn translate_aligned(&mut self, segments: &[&str]) -> Result<Vec<Aligned>, TranslatorError> {
        let opts = SearchOptions { alignment: true, ..self.translator.search.clone() };
        self.submit(segments, &opts)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::text::{Options, Pipeline};
    use crate::translate::{ArithmeticChoice, TranslateOptions};

    fn translator() -> Translator {
        let models = concat!(env!("CARGO_MANIFEST_DIR"), "/tests/fixtures/tiny-esen");
        let mut opts = TranslateOptions::new(models, "es", "en");
        opts.arithmetic = ArithmeticChoice::Exact;
        opts.threads = 1;
        Translator::load(&opts).unwrap()
    }

    /// Posts of short sentences, one of them twice, and a sentence over the model's limit.
    fn posts() -> Vec<String> {
        let long = "Espero que esto pueda entrar en vigor en julio de 2010, ".repeat(12);
        vec![
            "Tenemos que luchar contra estos delitos. Voy a permanecer de pie.".into(),
            "@_x_ Espero que esto pueda entrar en vigor. https://example.com/a Adiós.".into(),
            "Tenemos que luchar contra estos delitos.".into(),
            format!("{}fin.", long),
        ]
    }

    #[test]
    fn sentences_are_encoded_once_on_the_pipeline_path() {
        let tr = translator();
        let posts = posts();
        let short: Vec<&str> = posts[..3].iter().map(String::as_str).collect();
        let pipeline = Pipeline::new(&Options::new("es", "en")).unwrap();
        let segments = pipeline.plan(&short, &tr.segments(false)).unwrap().segments().len();
        assert_eq!(segments, 5);
        let vocab = &tr.model().src_vocab;
        for aligned in [false, true] {
            let before = vocab.encodes();
            if aligned {
                tr.translate_posts_aligned(&short).unwrap();
            } else {
                tr.translate_posts(&short).unwrap();
            }
            // Before, the pipeline counted each segment and the engine encoded it again.
            assert_eq!(vocab.encodes() - before, segments, "aligned: {aligned}");
        }
    }

    /// The pieces the pipeline counted translate exactly as the engine's own encoding of the
    /// segments, with and without alignment, a sentence over the model's limit included; and the
    /// engine encodes none of them again.
    #[test]
    fn counted_pieces_translate_as_the_engine_encoding_does() {
        let tr = translator();
        let posts = posts();
        let refs: Vec<&str> = posts.iter().map(String::as_str).collect();
        let pipeline = Pipeline::new(&Options::new("es", "en")).unwrap();
        let vocab = &tr.model().src_vocab;
        for aligned in [false, true] {
            let mut seg = tr.segments(aligned);
            let plan = pipeline.plan(&refs, &seg).unwrap();
            let texts: Vec<&str> = plan.segments().iter().map(String::as_str).collect();
            assert_eq!(texts.len(), 7, "the long sentence was not cut: {texts:?}");
            let before = vocab.encodes();
            let got = if aligned {
                seg.translate_aligned(&texts).unwrap()
            } else {
                let t = seg.translate(&texts).unwrap();
                t.into_iter().map(|text| Aligned { text, pieces: Vec::new() }).collect()
            };
            assert_eq!(vocab.encodes(), before, "the engine encoded again (aligned: {aligned})");
            let mut want = tr.translate_sentences_aligned(&texts).unwrap();
            if !aligned {
                want.iter_mut().for_each(|a| a.pieces.clear());
            }
            assert_eq!(got, want, "aligned: {aligned}");
        }
    }
}
