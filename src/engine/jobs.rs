//! The requests in flight, as the scheduler sees them: which sentence of which request each
//! chunk belongs to, what each stage produced, and when a request is complete.
//!
//! A sentence goes through its request's stages one after the other; at each stage it is
//! encoded with that model's source vocabulary and cut into chunks of at most
//! `max_length_break − 1` pieces (as Bergamot wraps long sentences), each chunk decoded on its
//! own; the chunks' outputs are decoded to text and joined with a space. The text of one stage is
//! the input of the next (pivoting through English), so a sentence enters the second model's queue
//! as soon as its own first stage ends.

use std::sync::Arc;
use std::sync::mpsc;

use super::{EngineError, Request};
use crate::marian::Model;
use crate::marian::search::{SearchOptions, chunks};

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
    chunks: Vec<Vec<u32>>,
    pending: usize,
}

struct Job {
    generation: u64,
    stages: Vec<Arc<Model>>,
    opts: SearchOptions,
    sentences: Vec<Sentence>,
    remaining: usize,
    reply: mpsc::Sender<Result<Vec<String>, EngineError>>,
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
    /// answered at once.
    pub fn add(&mut self, req: Request, queue: &mut Vec<Queued>) {
        let Request { stages, sentences, opts, reply } = req;
        if stages.is_empty() {
            let _ = reply.send(Ok(sentences));
            return;
        }
        self.next_generation += 1;
        let generation = self.next_generation;
        let remaining = sentences.len();
        let sentences =
            sentences.into_iter().map(|text| Sentence { stage: 0, text, chunks: Vec::new(), pending: 0 }).collect();
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
        for s in 0..n {
            self.start_stage(id, s, queue);
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
    pub fn complete(&mut self, owner: Owner, out: Vec<u32>, queue: &mut Vec<Queued>) {
        let Some(job) = self.live_mut(&owner) else { return };
        let sent = &mut job.sentences[owner.sentence];
        sent.chunks[owner.chunk] = out;
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
        let ids = match model.src_vocab.encode(&sent.text) {
            Ok(ids) => ids,
            Err(e) => {
                let owner = Owner { job: id, generation, sentence: s, chunk: 0 };
                self.fail(&owner, e.into());
                return;
            }
        };
        let eos = model.src_vocab.eos();
        let parts = chunks(&ids, job.opts.max_length_break);
        sent.chunks = vec![Vec::new(); parts.len()];
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
        let mut parts = Vec::with_capacity(sent.chunks.len());
        for ids in &sent.chunks {
            match model.trg_vocab.decode(ids) {
                Ok(t) => parts.push(t),
                Err(e) => {
                    let owner = Owner { job: id, generation, sentence: s, chunk: 0 };
                    self.fail(&owner, e.into());
                    return;
                }
            }
        }
        // Chunks of one over-long sentence are joined with a space, as Firefox joins them.
        sent.text = parts.into_iter().filter(|p| !p.is_empty()).collect::<Vec<_>>().join(" ");
        sent.chunks = Vec::new();
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
            let texts = job.sentences.into_iter().map(|s| s.text).collect();
            let _ = job.reply.send(Ok(texts));
            self.free.push(id);
        }
    }
}
