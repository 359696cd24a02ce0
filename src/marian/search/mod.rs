//! Greedy search over sentence slots, as Firefox runs Bergamot (beam 1, normalize 1, no word
//! penalty, `<unk>` suppressed, max-length-factor 2, max-length-break 128).
//!
//! A sentence in flight is a [`Slot`]: its decoder state, its output so far, its path score, its
//! own shortlist and its own length limit. A decoder step runs over whichever slots are alive and
//! a finished slot simply leaves, so nothing about a sentence depends on the others it shares a
//! batch with. (Bergamot's length limit uses the longest sentence of the batch and its shortlist
//! the union of the batch's source words; reseam's are per sentence and equal Bergamot's for a
//! sentence translated alone.)

use reseam_kernels::{Arithmetic, Kernels, ShapeError};

use crate::marian::Model;
use crate::marian::layers::softmax::log_softmax;
use crate::marian::transformer::{DecoderState, ShortOutput, StepInput, Workspace};

/// Search settings (Firefox's values by default).
#[derive(Clone, Debug)]
pub struct SearchOptions {
    /// Output length limit as a multiple of the source length (including `</s>`).
    pub max_length_factor: f32,
    /// Sentences of this many pieces or more are cut into chunks of `max_length_break − 1` pieces
    /// (Bergamot's `max-length-break`), each translated on its own.
    pub max_length_break: usize,
    /// Restrict each sentence's output to its lexical shortlist.
    pub shortlist: bool,
    /// Most sentences encoded and decoded together.
    pub max_batch: usize,
}

impl Default for SearchOptions {
    fn default() -> SearchOptions {
        SearchOptions { max_length_factor: 2.0, max_length_break: 128, shortlist: false, max_batch: 64 }
    }
}

#[derive(Debug, thiserror::Error)]
pub enum DecodeError {
    #[error("internal error: a product's shapes did not fit ({0}); please report this")]
    Shape(#[from] ShapeError),
    #[error("--shortlist needs the model folder's lex.*.s2t.bin, which was not loaded")]
    NoShortlist,
}

/// One sentence in flight.
struct Slot {
    /// Index of the chunk this slot translates.
    chunk: usize,
    state: DecoderState,
    out: Vec<u32>,
    path: f32,
    limit: usize,
    short: Option<ShortOutput>,
    done: bool,
}

/// Working memory of a decoder, kept between calls so it is allocated once.
#[derive(Default)]
pub struct Buffers {
    ws: Workspace,
    logits: Vec<f32>,
}

/// The greedy decoder for one model.
pub struct Decoder<'m> {
    model: &'m Model,
    kernels: &'m Kernels,
    arith: Arithmetic,
    debug: bool,
    ws: Workspace,
    logits: Vec<f32>,
}

/// Output token limit for a source of `len` pieces including `</s>`: Marian stops once
/// `t + 1 >= factor · len` after step `t`.
pub fn length_limit(len: usize, factor: f32) -> usize {
    let limit = (factor * len as f32).ceil();
    if limit.is_finite() && limit >= 1.0 { limit as usize } else { 1 }
}

/// Cuts a sentence's pieces into chunks of at most `max_break − 1` (Bergamot `text_processor.cpp`
/// wrap); each chunk gets its own `</s>` later.
pub fn chunks(ids: &[u32], max_break: usize) -> Vec<&[u32]> {
    let size = max_break.saturating_sub(1).max(1);
    if ids.is_empty() { vec![ids] } else { ids.chunks(size).collect() }
}

impl<'m> Decoder<'m> {
    pub fn new(model: &'m Model, kernels: &'m Kernels, arith: Arithmetic, debug: bool) -> Decoder<'m> {
        Decoder::with_buffers(model, kernels, arith, debug, Buffers::default())
    }

    /// A decoder reusing the working memory of an earlier one.
    pub fn with_buffers(
        model: &'m Model,
        kernels: &'m Kernels,
        arith: Arithmetic,
        debug: bool,
        b: Buffers,
    ) -> Decoder<'m> {
        Decoder { model, kernels, arith, debug, ws: b.ws, logits: b.logits }
    }

    /// Gives the working memory back for the next decoder.
    pub fn into_buffers(self) -> Buffers {
        Buffers { ws: self.ws, logits: self.logits }
    }

    fn runtime(&self) -> crate::marian::transformer::Runtime<'m> {
        crate::marian::transformer::Runtime { kernels: self.kernels, arith: self.arith, debug: self.debug }
    }

    /// Translates sentences given as source piece ids (without `</s>`). Returns, per sentence, the
    /// output ids of each of its chunks (one chunk unless the sentence reaches
    /// `max_length_break`), without `</s>`.
    pub fn translate(
        &mut self,
        sentences: &[Vec<u32>],
        opts: &SearchOptions,
    ) -> Result<Vec<Vec<Vec<u32>>>, DecodeError> {
        let eos = self.model.trg_vocab.eos();
        // Flatten into chunks, remembering their sentence.
        let mut inputs: Vec<Vec<u32>> = Vec::new();
        let mut owner: Vec<usize> = Vec::new();
        for (s, ids) in sentences.iter().enumerate() {
            for c in chunks(ids, opts.max_length_break) {
                let mut v = c.to_vec();
                v.push(self.model.src_vocab.eos());
                inputs.push(v);
                owner.push(s);
            }
        }
        let mut outputs: Vec<Vec<u32>> = vec![Vec::new(); inputs.len()];
        // Work in batches of similar length so encoder batches are even.
        let mut order: Vec<usize> = (0..inputs.len()).filter(|&i| inputs[i].len() > 1).collect();
        order.sort_by_key(|&i| inputs[i].len());
        for batch in order.chunks(opts.max_batch.max(1)) {
            self.run_batch(&inputs, batch, opts, eos, &mut outputs)?;
        }
        let mut result: Vec<Vec<Vec<u32>>> = vec![Vec::new(); sentences.len()];
        for (c, out) in outputs.into_iter().enumerate() {
            result[owner[c]].push(out);
        }
        Ok(result)
    }

    fn run_batch(
        &mut self,
        inputs: &[Vec<u32>],
        batch: &[usize],
        opts: &SearchOptions,
        eos: u32,
        outputs: &mut [Vec<u32>],
    ) -> Result<(), DecodeError> {
        let rt = self.runtime();
        let model = self.model;
        let srcs: Vec<&[u32]> = batch.iter().map(|&i| inputs[i].as_slice()).collect();
        let encoded = model.marian.encode(&rt, &mut self.ws, &srcs)?;
        let mut slots = Vec::with_capacity(batch.len());
        for ((&chunk, enc), src) in batch.iter().zip(encoded).zip(&srcs) {
            let short = if opts.shortlist {
                let sl = model.shortlist.as_ref().ok_or(DecodeError::NoShortlist)?;
                let ids = sl.candidates(src, model.shared_vocab, model.marian.trg_vocab());
                Some(model.marian.output().shortlisted(ids))
            } else {
                None
            };
            slots.push(Slot {
                chunk,
                limit: length_limit(src.len(), opts.max_length_factor),
                state: model.marian.start(enc),
                out: Vec::new(),
                path: 0.0,
                short,
                done: false,
            });
        }
        let vocab = model.marian.trg_vocab();
        let unk = model.trg_vocab.unk();
        while slots.iter().any(|s| !s.done) {
            let alive: Vec<usize> = (0..slots.len()).filter(|&i| !slots[i].done).collect();
            let inputs: Vec<StepInput> = alive
                .iter()
                .map(|&i| StepInput { prev: slots[i].out.last().copied(), pos: slots[i].out.len() })
                .collect();
            {
                let mut states: Vec<&mut DecoderState> =
                    slots.iter_mut().filter(|s| !s.done).map(|s| &mut s.state).collect();
                model.marian.step(&rt, &mut self.ws, &mut states, &inputs)?;
            }
            let rows = alive.len();
            if self.logits.len() < rows * vocab {
                self.logits.resize(rows * vocab, 0.0);
            }
            let shorts: Option<Vec<&ShortOutput>> =
                if opts.shortlist { alive.iter().map(|&i| slots[i].short.as_ref()).collect() } else { None };
            model.marian.logits(&rt, &mut self.ws, rows, shorts.as_deref(), &mut self.logits, vocab)?;
            for (r, &i) in alive.iter().enumerate() {
                let slot = &mut slots[i];
                let ids = slot.short.as_ref().map(|s| s.ids.as_slice());
                let n = ids.map(|v| v.len()).unwrap_or(vocab);
                let row = &mut self.logits[r * vocab..r * vocab + n];
                let (col, score) = choose(row, slot.path, ids, unk);
                let token = ids.map(|v| v[col]).unwrap_or(col as u32);
                slot.path = score;
                if token == eos {
                    slot.done = true;
                } else {
                    slot.out.push(token);
                    if slot.out.len() >= slot.limit {
                        slot.done = true;
                    }
                }
            }
        }
        for s in slots {
            outputs[s.chunk] = s.out;
        }
        Ok(())
    }

    /// Teacher-forced log-probabilities of each target (ids including the final `</s>`) given its
    /// source (ids including `</s>`), over the full vocabulary: what
    /// `marian score --word-scores` reports. Pairs are scored together in batches.
    pub fn score(&mut self, pairs: &[(&[u32], &[u32])], max_batch: usize) -> Result<Vec<Vec<f32>>, DecodeError> {
        let rt = self.runtime();
        let model = self.model;
        let vocab = model.marian.trg_vocab();
        let mut result = Vec::with_capacity(pairs.len());
        for batch in pairs.chunks(max_batch.max(1)) {
            let srcs: Vec<&[u32]> = batch.iter().map(|p| p.0).collect();
            let encoded = model.marian.encode(&rt, &mut self.ws, &srcs)?;
            let mut states: Vec<DecoderState> = encoded.into_iter().map(|e| model.marian.start(e)).collect();
            let mut scores: Vec<Vec<f32>> = batch.iter().map(|p| Vec::with_capacity(p.1.len())).collect();
            let longest = batch.iter().map(|p| p.1.len()).max().unwrap_or(0);
            for t in 0..longest {
                let alive: Vec<usize> = (0..batch.len()).filter(|&i| t < batch[i].1.len()).collect();
                let inputs: Vec<StepInput> = alive
                    .iter()
                    .map(|&i| StepInput { prev: if t == 0 { None } else { Some(batch[i].1[t - 1]) }, pos: t })
                    .collect();
                let mut live: Vec<&mut DecoderState> =
                    states.iter_mut().enumerate().filter(|(i, _)| t < batch[*i].1.len()).map(|(_, s)| s).collect();
                model.marian.step(&rt, &mut self.ws, &mut live, &inputs)?;
                if self.logits.len() < alive.len() * vocab {
                    self.logits.resize(alive.len() * vocab, 0.0);
                }
                model.marian.logits(&rt, &mut self.ws, alive.len(), None, &mut self.logits, vocab)?;
                for (r, &i) in alive.iter().enumerate() {
                    let row = &mut self.logits[r * vocab..(r + 1) * vocab];
                    log_softmax(row);
                    let tok = batch[i].1[t] as usize;
                    scores[i].push(row.get(tok).copied().unwrap_or(f32::NEG_INFINITY));
                }
            }
            result.extend(scores);
        }
        Ok(result)
    }
}

/// Marian's greedy choice: log-softmax the row, add the path score, never pick `<unk>`, take the
/// first maximum (`std::partial_sort` with beam 1 keeps the earliest of equal scores). Returns
/// the column and its new path score.
pub fn choose(row: &mut [f32], path: f32, ids: Option<&[u32]>, unk: u32) -> (usize, f32) {
    log_softmax(row);
    let unk_col = match ids {
        Some(v) => v.iter().position(|&i| i == unk),
        None => Some(unk as usize),
    };
    let mut best = (usize::MAX, f32::NEG_INFINITY);
    for (j, &lp) in row.iter().enumerate() {
        if Some(j) == unk_col {
            continue;
        }
        let s = path + lp;
        if best.0 == usize::MAX || s > best.1 {
            best = (j, s);
        }
    }
    if best.0 == usize::MAX { (0, path) } else { best }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn limits_and_chunks() {
        assert_eq!(length_limit(17, 2.0), 34);
        assert_eq!(length_limit(3, 1.5), 5);
        let ids: Vec<u32> = (0..300).collect();
        let c = chunks(&ids, 128);
        assert_eq!(c.iter().map(|c| c.len()).collect::<Vec<_>>(), vec![127, 127, 46]);
        assert_eq!(chunks(&[], 128).len(), 1);
    }

    #[test]
    fn choice_skips_unk_and_keeps_the_first_maximum() {
        let mut row = vec![0.0, 5.0, 1.0, 1.0];
        assert_eq!(choose(&mut row, 0.0, None, 1).0, 2);
        let mut row = vec![0.0, 5.0, 1.0, 1.0];
        assert_eq!(choose(&mut row, 0.0, Some(&[0, 7, 1, 9]), 1).0, 1);
    }
}
