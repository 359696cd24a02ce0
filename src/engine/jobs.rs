//! The requests in flight, as the scheduler sees them: which sentence of which request each
//! chunk belongs to, what each stage produced, and when a request is complete.
//!
//! A sentence goes through its request's stages one after the other. At each stage it is
//! encoded with that model's source vocabulary — at the first stage only if the caller did not
//! hand in its pieces (the text pipeline does: the pieces it counted to cut long sentences) — and
//! cut by [`crate::text::wrap::chunks`] into chunks of at most `max_length_break − 1` pieces (as
//! Bergamot wraps long sentences; a sentence the pipeline cut is one chunk), each chunk decoded
//! on its own; the chunks' outputs are decoded to text and joined with a space. The text of one
//! stage is the input of the next (pivoting through English), so a sentence enters the second
//! model's queue as soon as its own first stage ends.

use std::ops::Range;
use std::sync::Arc;
use std::sync::mpsc;

use super::{EngineError, Request, Source};
use crate::marian::Model;
use crate::marian::search::SearchOptions;
use crate::text::wrap::chunks;
use crate::text::{Aligned, AlignedPiece};
use crate::vocab::Pieces;

/// Who a chunk's output belongs to.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct Owner {
    job: usize,
    generation: u64,
    sentence: usize,
    chunk: usize,
}

impl Owner {
    /// The request it belongs to (slot and generation together tell requests apart).
    pub fn request(&self) -> (usize, u64) {
        (self.job, self.generation)
    }

    #[cfg(test)]
    pub fn of(job: usize, chunk: usize) -> Owner {
        Owner { job, generation: 1, sentence: 0, chunk }
    }
}

/// A chunk waiting for (or in) a model's decoder: its owner and its source ids with `</s>`.
pub(crate) struct Unit {
    pub owner: Owner,
    pub src: Vec<u32>,
}

/// One chunk to queue: the model it goes to, and the unit.
pub(crate) type Queued = (Arc<Model>, Unit);

struct Sentence {
    stage: usize,
    text: String,
    /// The first stage's pieces as the caller encoded them, until that stage starts.
    given: Option<Pieces>,
    chunks: Vec<Vec<u32>>,
    pending: usize,
    /// With [`SearchOptions::alignment`]: each chunk's soft alignment, the pieces of this stage's
    /// source each chunk holds, and their bytes in `text`.
    weights: Vec<Vec<f32>>,
    parts: Vec<Range<usize>>,
    spans: Vec<Range<usize>>,
    /// The alignment of `text` with the request's sentence, once a stage has translated it.
    aligned: Option<Vec<AlignedPiece>>,
}

impl Sentence {
    fn new(source: Source) -> Sentence {
        Sentence {
            stage: 0,
            text: source.text,
            given: source.pieces,
            chunks: Vec::new(),
            pending: 0,
            weights: Vec::new(),
            parts: Vec::new(),
            spans: Vec::new(),
            aligned: None,
        }
    }
}

struct Job {
    generation: u64,
    stages: Vec<Arc<Model>>,
    opts: SearchOptions,
    sentences: Vec<Sentence>,
    remaining: usize,
    reply: mpsc::Sender<Result<Vec<Aligned>, EngineError>>,
}

/// Every request in flight, by slot number; a slot is reused once its request is answered, and
/// the generation tells a late chunk of a failed request from a chunk of the new one.
#[derive(Default)]
pub(crate) struct Jobs {
    slab: Vec<Option<Job>>,
    free: Vec<usize>,
    next_generation: u64,
}

impl Jobs {
    /// Takes a request in; its first chunks go to `queue`. A request with nothing to decode is
    /// answered at once, one of more than `max_pieces` source pieces is refused.
    pub fn add(&mut self, req: Request, queue: &mut Vec<Queued>, max_pieces: Option<usize>) {
        let Request { stages, sentences, opts, reply } = req;
        if stages.is_empty() {
            let _ =
                reply.send(Ok(sentences.into_iter().map(|s| Aligned { text: s.text, pieces: Vec::new() }).collect()));
            return;
        }
        self.next_generation += 1;
        let generation = self.next_generation;
        let remaining = sentences.len();
        let sentences = sentences.into_iter().map(Sentence::new).collect();
        let job = Job { generation, stages, opts, sentences, remaining, reply };
        let id = match self.free.pop() {
            Some(id) => {
                self.slab[id] = Some(job);
                id
            }
            None => {
                self.slab.push(Some(job));
                self.slab.len() - 1
            }
        };
        let n = self.slab[id].as_ref().map_or(0, |j| j.sentences.len());
        let before = queue.len();
        for s in 0..n {
            self.start_stage(id, s, queue);
        }
        if let Some(max) = max_pieces {
            // Only this request's chunks were queued since `before` (each with its `</s>`).
            let pieces: usize = queue[before..].iter().map(|(_, u)| u.src.len().saturating_sub(1)).sum();
            if pieces > max {
                queue.truncate(before);
                let owner = Owner { job: id, generation, sentence: 0, chunk: 0 };
                self.fail(&owner, EngineError::OverBudget { pieces, max });
                return;
            }
        }
        self.answer_if_done(id);
    }

    /// The search settings of a unit's request.
    pub fn options(&self, owner: &Owner) -> Option<&SearchOptions> {
        self.live(owner).map(|j| &j.opts)
    }

    /// Records a chunk's output; when the sentence's stage is complete it moves on to the next
    /// stage (its chunks go to `queue`) or is final, and a request whose sentences are all final
    /// is answered.
    pub fn complete(&mut self, owner: Owner, out: Vec<u32>, weights: Vec<f32>, queue: &mut Vec<Queued>) {
        let Some(job) = self.live_mut(&owner) else { return };
        let sent = &mut job.sentences[owner.sentence];
        sent.chunks[owner.chunk] = out;
        if job.opts.alignment {
            sent.weights[owner.chunk] = weights;
        }
        sent.pending -= 1;
        if sent.pending == 0 {
            self.finish_stage(owner.job, owner.sentence, queue);
            self.answer_if_done(owner.job);
        }
    }

    /// Answers the request of `owner` with an error; its other chunks are dropped as they come.
    pub fn fail(&mut self, owner: &Owner, err: EngineError) {
        if self.live(owner).is_some()
            && let Some(job) = self.slab[owner.job].take()
        {
            let _ = job.reply.send(Err(err));
            self.free.push(owner.job);
        }
    }

    fn live(&self, o: &Owner) -> Option<&Job> {
        self.slab.get(o.job)?.as_ref().filter(|j| j.generation == o.generation)
    }

    fn live_mut(&mut self, o: &Owner) -> Option<&mut Job> {
        self.slab.get_mut(o.job)?.as_mut().filter(|j| j.generation == o.generation)
    }

    fn start_stage(&mut self, id: usize, s: usize, queue: &mut Vec<Queued>) {
        let Some(job) = self.slab[id].as_mut() else { return };
        let generation = job.generation;
        let sent = &mut job.sentences[s];
        let model = &job.stages[sent.stage];
        let align = job.opts.alignment;
        // Pieces without the spans alignment needs are encoded again (no caller sends those).
        let encoded = match sent.given.take() {
            Some(given) if !align || given.spans.is_some() => Ok(given),
            _ => model.src_vocab.pieces(&sent.text, align),
        };
        let ids = match encoded {
            Ok(Pieces { ids, spans }) => {
                sent.spans = spans.unwrap_or_default();
                ids
            }
            Err(e) => {
                let owner = Owner { job: id, generation, sentence: s, chunk: 0 };
                self.fail(&owner, e.into());
                return;
            }
        };
        let eos = model.src_vocab.eos();
        let parts = chunks(&ids, job.opts.max_length_break);
        sent.chunks = vec![Vec::new(); parts.len()];
        sent.weights = vec![Vec::new(); parts.len()];
        sent.parts.clear();
        let mut first = 0;
        for part in &parts {
            sent.parts.push(first..first + part.len());
            first += part.len();
        }
        sent.pending = 0;
        for (c, part) in parts.into_iter().enumerate() {
            // A chunk with no pieces translates to nothing, as in Bergamot.
            if part.is_empty() {
                continue;
            }
            let mut src = Vec::with_capacity(part.len() + 1);
            src.extend_from_slice(part);
            src.push(eos);
            sent.pending += 1;
            queue.push((model.clone(), Unit { owner: Owner { job: id, generation, sentence: s, chunk: c }, src }));
        }
        if sent.pending == 0 {
            self.finish_stage(id, s, queue);
        }
    }

    fn finish_stage(&mut self, id: usize, s: usize, queue: &mut Vec<Queued>) {
        let Some(job) = self.slab[id].as_mut() else { return };
        let generation = job.generation;
        let sent = &mut job.sentences[s];
        let model = &job.stages[sent.stage];
        let align = job.opts.alignment;
        let mut parts = Vec::with_capacity(sent.chunks.len());
        for ids in &sent.chunks {
            let decoded = if align {
                model.trg_vocab.decode_spans(ids)
            } else {
                model.trg_vocab.decode(ids).map(|t| (t, Vec::new()))
            };
            match decoded {
                Ok(t) => parts.push(t),
                Err(e) => {
                    let owner = Owner { job: id, generation, sentence: s, chunk: 0 };
                    self.fail(&owner, e.into());
                    return;
                }
            }
        }
        // Chunks of one over-long sentence are joined with a space, as Firefox joins them.
        let mut text = String::new();
        let mut pieces = Vec::new();
        for (c, (part, spans)) in parts.into_iter().enumerate() {
            if part.is_empty() {
                continue;
            }
            if !text.is_empty() {
                text.push(' ');
            }
            if align {
                let rows = Rows { weights: &sent.weights[c], parts: sent.parts[c].clone(), spans: &sent.spans };
                for (i, span) in spans.into_iter().enumerate() {
                    let (source, score) = rows.hard(i);
                    pieces.push(AlignedPiece { target: text.len() + span.start..text.len() + span.end, source, score });
                }
            }
            text.push_str(&part);
        }
        if align {
            // A later stage's source is the earlier stage's translation: go through it.
            let through = match sent.aligned.take() {
                Some(before) => pieces.into_iter().map(|p| compose(&before, p)).collect(),
                None => pieces,
            };
            sent.aligned = Some(through);
        }
        sent.text = text;
        sent.chunks = Vec::new();
        sent.weights = Vec::new();
        if sent.stage + 1 < job.stages.len() {
            sent.stage += 1;
            self.start_stage(id, s, queue);
        } else {
            job.remaining -= 1;
        }
    }

    fn answer_if_done(&mut self, id: usize) {
        if self.slab[id].as_ref().is_some_and(|j| j.remaining == 0)
            && let Some(job) = self.slab[id].take()
        {
            let texts = job
                .sentences
                .into_iter()
                .map(|s| Aligned { text: s.text, pieces: s.aligned.unwrap_or_default() })
                .collect();
            let _ = job.reply.send(Ok(texts));
            self.free.push(id);
        }
    }
}

/// One chunk's soft alignment: a row per output piece over the chunk's source pieces and `</s>`.
struct Rows<'a> {
    weights: &'a [f32],
    /// The chunk's pieces among the sentence's.
    parts: Range<usize>,
    /// Every piece's bytes in the sentence.
    spans: &'a [Range<usize>],
}

impl Rows<'_> {
    /// Output piece `i`'s source bytes and weight: the source piece of highest weight (the first
    /// of equal ones, as `std::max_element` in Bergamot's `hardAlignments`); `</s>` is the empty
    /// range after the chunk's last piece.
    fn hard(&self, i: usize) -> (Range<usize>, f32) {
        let width = self.parts.len() + 1;
        let end = self.parts.end.checked_sub(1).and_then(|p| self.spans.get(p)).map_or(0, |r| r.end);
        let Some(row) = self.weights.get(i * width..(i + 1) * width) else { return (end..end, 0.0) };
        let mut best = 0;
        for (j, &w) in row.iter().enumerate() {
            if w > row[best] {
                best = j;
            }
        }
        let source = self.spans.get(self.parts.start + best).filter(|_| best + 1 < width).cloned();
        (source.unwrap_or(end..end), row[best])
    }
}

/// `piece` (aligned with a text that `before` aligns with the original) aligned with the
/// original: through the piece of `before` its source overlaps most (or that holds its start).
fn compose(before: &[AlignedPiece], piece: AlignedPiece) -> AlignedPiece {
    let overlap = |b: &AlignedPiece| {
        let (s, e) = (b.target.start.max(piece.source.start), b.target.end.min(piece.source.end));
        let holds = b.target.start <= piece.source.start && piece.source.start < b.target.end;
        (e.saturating_sub(s), holds)
    };
    match before.iter().max_by_key(|b| overlap(b)).filter(|b| overlap(b) != (0, false)) {
        Some(b) => AlignedPiece { target: piece.target, source: b.source.clone(), score: piece.score * b.score },
        None => {
            let end = before.last().map_or(0, |b| b.source.end);
            AlignedPiece { target: piece.target, source: end..end, score: 0.0 }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_piece_takes_the_source_piece_of_most_weight() {
        // Sentence pieces at bytes 0..4, 4..10, 10..11; the second chunk holds pieces 1..3.
        let spans = [0..4, 4..10, 10..11];
        let weights = [0.1, 0.7, 0.2, /* next row */ 0.3, 0.3, 0.4, /* next */ 0.5, 0.5, 0.0];
        let rows = Rows { weights: &weights, parts: 1..3, spans: &spans };
        assert_eq!(rows.hard(0), (10..11, 0.7));
        // `</s>` (the last column) is the empty range after the chunk.
        assert_eq!(rows.hard(1), (11..11, 0.4));
        // Equal weights: the first.
        assert_eq!(rows.hard(2), (4..10, 0.5));
        // A row that is not there (a step without weights) points at the end.
        assert_eq!(rows.hard(3), (11..11, 0.0));
    }

    #[test]
    fn a_pivot_goes_through_the_middle_text() {
        let p = |t: Range<usize>, s: Range<usize>, score| AlignedPiece { target: t, source: s, score };
        // es "Hola mundo" → en "Hello world" → es2: its pieces point at bytes of "Hello world".
        let first = [p(0..5, 0..4, 0.5), p(5..11, 4..10, 1.0)];
        assert_eq!(compose(&first, p(0..3, 6..11, 0.5)), p(0..3, 4..10, 0.5));
        assert_eq!(compose(&first, p(3..5, 4..7, 1.0)), p(3..5, 4..10, 1.0));
        // An empty source (`</s>`) at the end goes through the piece that holds it, or to the end.
        assert_eq!(compose(&first, p(5..6, 11..11, 1.0)), p(5..6, 10..10, 0.0));
        assert_eq!(compose(&first, p(5..6, 2..2, 1.0)), p(5..6, 0..4, 0.5));
    }
}
