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
use crate::marian::layers::softmax::{log_softmax, max_and_log_sum};
use crate::marian::transformer::{DecoderState, EncoderOut, Runtime, ShortOutput, StepInput, StepRow, Workspace};
use crate::profile::{self, Kind};
use crate::text::wrap::chunks;

/// Search settings (Firefox's values by default).
#[derive(Clone, Debug)]
pub struct SearchOptions {
    /// Output length limit as a multiple of the source length (including `</s>`).
    pub max_length_factor: f32,
    /// Sentences of this many pieces or more are cut into chunks of `max_length_break − 1` pieces
    /// (Bergamot's `max-length-break`), each translated on its own (the rules are in
    /// [`crate::text::wrap`]).
    pub max_length_break: usize,
    /// Restrict each sentence's output to its lexical shortlist.
    pub shortlist: bool,
    /// Most sentences encoded and decoded together.
    pub max_batch: usize,
    /// Keep each sentence's soft alignment (see [`Slot::alignment`]); off, a step does no extra
    /// work.
    pub alignment: bool,
}

impl Default for SearchOptions {
    fn default() -> SearchOptions {
        SearchOptions {
            max_length_factor: 2.0,
            max_length_break: 128,
            shortlist: false,
            max_batch: 64,
            alignment: false,
        }
    }
}

#[derive(Debug, thiserror::Error)]
pub enum DecodeError {
    #[error("internal error: a product's shapes did not fit; please report this")]
    Shape(#[from] ShapeError),
    #[error("--shortlist needs the model folder's lex.*.s2t.bin, which was not loaded")]
    NoShortlist,
}

crate::error::fault!(DecodeError);

impl DecodeError {
    /// `--shortlist` without a shortlist is the caller's fault; a shape error is ours.
    pub fn is_usage(&self) -> bool {
        matches!(self, DecodeError::NoShortlist)
    }
}

/// One sentence in flight: its decoder state, its output so far, its path score, its own
/// shortlist and its own length limit. A slot joins a step whenever it is ready and leaves when
/// [`Slot::is_done`]; nothing in it depends on the slots it shares a step with.
pub struct Slot {
    state: DecoderState,
    out: Vec<u32>,
    path: f32,
    limit: usize,
    short: Option<ShortOutput>,
    done: bool,
    /// With [`SearchOptions::alignment`]: one row of `src_len` weights per step.
    align: Option<Vec<f32>>,
    src_len: usize,
}

impl Slot {
    /// A sentence ready for its first decoder step: `src` are its source ids including `</s>`,
    /// `enc` their encoder result.
    pub fn new(model: &Model, enc: EncoderOut, src: &[u32], opts: &SearchOptions) -> Result<Slot, DecodeError> {
        let short = if opts.shortlist {
            let _t = crate::profile::time(crate::profile::Kind::Shortlist);
            let sl = model.shortlist.as_ref().ok_or(DecodeError::NoShortlist)?;
            let ids = sl.candidates(src, model.shared_vocab, model.marian.trg_vocab());
            Some(model.marian.output().shortlisted(ids))
        } else {
            None
        };
        let limit = length_limit(src.len(), opts.max_length_factor);
        // Room for every step up to the limit (and the `</s>` step), so steps never grow it.
        let align = opts.alignment.then(|| Vec::with_capacity((limit + 1) * src.len()));
        Ok(Slot {
            limit,
            align,
            src_len: src.len(),
            state: model.marian.start(enc),
            out: Vec::new(),
            path: 0.0,
            short,
            done: false,
        })
    }

    /// Whether the sentence has ended (`</s>` or its length limit).
    pub fn is_done(&self) -> bool {
        self.done
    }

    /// The output ids so far, without `</s>`.
    pub fn output(&self) -> &[u32] {
        &self.out
    }

    /// Room for `n` more output ids, so that later steps do not grow the output.
    pub fn reserve_output(&mut self, n: usize) {
        self.out.reserve(n);
    }

    pub fn into_output(self) -> Vec<u32> {
        self.out
    }

    /// The soft alignment so far, if it was asked for: for each step (output id, then `</s>` if
    /// the sentence ended with it), the weights over the source ids (`</s>` included), in rows
    /// of [`Slot::source_len`].
    pub fn alignment(&self) -> Option<&[f32]> {
        self.align.as_deref()
    }

    /// Source ids of the sentence, `</s>` included.
    pub fn source_len(&self) -> usize {
        self.src_len
    }

    /// The output ids and the soft alignment (empty unless asked for).
    pub fn into_parts(self) -> (Vec<u32>, Vec<f32>) {
        (self.out, self.align.unwrap_or_default())
    }
}

impl StepRow for Slot {
    fn state(&self) -> &DecoderState {
        &self.state
    }
    fn state_mut(&mut self) -> &mut DecoderState {
        &mut self.state
    }
    fn input(&self) -> StepInput {
        StepInput { prev: self.out.last().copied(), pos: self.out.len() }
    }
    fn alignment(&mut self) -> Option<&mut Vec<f32>> {
        self.align.as_mut()
    }
}

/// Working memory of the greedy search, kept between calls so that it is allocated once and a
/// step allocates nothing.
#[derive(Default)]
pub struct Buffers {
    ws: Workspace,
    logits: Vec<f32>,
}

impl Buffers {
    /// The model's scratch memory (the encoder runs in it too).
    pub fn workspace(&mut self) -> &mut Workspace {
        &mut self.ws
    }
}

/// One greedy step of every slot in `slots` (all of one model, none done): the decoder step,
/// the output layer, and each slot's choice. Slots that end are marked done; the caller takes
/// them out before the next step.
pub fn step(rt: &Runtime, model: &Model, buf: &mut Buffers, slots: &mut [Slot]) -> Result<(), DecodeError> {
    let rows = slots.len();
    if rows == 0 {
        return Ok(());
    }
    let m = &model.marian;
    m.step(rt, &mut buf.ws, slots)?;
    let vocab = m.trg_vocab();
    if buf.logits.len() < rows * vocab {
        buf.logits.resize(rows * vocab, 0.0);
    }
    m.logits(rt, &mut buf.ws, rows, &|r| slots[r].short.as_ref(), &mut buf.logits, vocab)?;
    let (eos, unk) = (model.trg_vocab.eos(), model.trg_vocab.unk());
    for (r, slot) in slots.iter_mut().enumerate() {
        let ids = slot.short.as_ref().map(|s| s.ids.as_slice());
        let n = ids.map(|v| v.len()).unwrap_or(vocab);
        let row = &buf.logits[r * vocab..r * vocab + n];
        let (col, score) = choose(rt.kernels, row, slot.path, ids, unk);
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
    Ok(())
}

/// Greedy search with one model over a batch of sentences, and forced scoring (the engine steps
/// [`Slot`]s itself); not the transformer's decoder (that is `transformer::decoder`).
pub struct GreedySearch<'m> {
    model: &'m Model,
    rt: Runtime<'m>,
    buf: Buffers,
}

/// Output token limit for a source of `len` pieces including `</s>`: Marian stops once
/// `t + 1 >= factor · len` after step `t`.
pub fn length_limit(len: usize, factor: f32) -> usize {
    let limit = (factor * len as f32).ceil();
    if limit.is_finite() && limit >= 1.0 { limit as usize } else { 1 }
}

impl<'m> GreedySearch<'m> {
    pub fn new(model: &'m Model, kernels: &'m Kernels, arith: Arithmetic, debug: bool) -> GreedySearch<'m> {
        GreedySearch::with_buffers(model, kernels, arith, debug, Buffers::default())
    }

    /// A decoder reusing the working memory of an earlier one.
    pub fn with_buffers(
        model: &'m Model,
        kernels: &'m Kernels,
        arith: Arithmetic,
        debug: bool,
        buf: Buffers,
    ) -> GreedySearch<'m> {
        GreedySearch { model, rt: Runtime::new(kernels, arith, debug), buf }
    }

    /// Gives the working memory back for the next decoder.
    pub fn into_buffers(self) -> Buffers {
        self.buf
    }

    /// Translates sentences given as source piece ids (without `</s>`). Returns, per sentence, the
    /// output ids of each of its chunks (one chunk unless the sentence reaches
    /// `max_length_break`), without `</s>`.
    pub fn translate(
        &mut self,
        sentences: &[Vec<u32>],
        opts: &SearchOptions,
    ) -> Result<Vec<Vec<Vec<u32>>>, DecodeError> {
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
            self.run_batch(&inputs, batch, opts, &mut outputs)?;
        }
        let mut result: Vec<Vec<Vec<u32>>> = vec![Vec::new(); sentences.len()];
        for (c, out) in outputs.into_iter().enumerate() {
            result[owner[c]].push(out);
        }
        Ok(result)
    }

    /// Encodes a batch and steps its slots until all are done, each leaving as it ends.
    fn run_batch(
        &mut self,
        inputs: &[Vec<u32>],
        batch: &[usize],
        opts: &SearchOptions,
        outputs: &mut [Vec<u32>],
    ) -> Result<(), DecodeError> {
        let model = self.model;
        let srcs: Vec<&[u32]> = batch.iter().map(|&i| inputs[i].as_slice()).collect();
        let encoded = model.marian.encode(&self.rt, &mut self.buf.ws, &srcs)?;
        let mut slots = Vec::with_capacity(batch.len());
        for (enc, src) in encoded.into_iter().zip(&srcs) {
            slots.push(Slot::new(model, enc, src, opts)?);
        }
        // Which chunk each slot translates; kept in step with `slots` as finished ones leave.
        let mut owners: Vec<usize> = batch.to_vec();
        while !slots.is_empty() {
            step(&self.rt, model, &mut self.buf, &mut slots)?;
            let mut i = 0;
            while i < slots.len() {
                if slots[i].is_done() {
                    outputs[owners.swap_remove(i)] = slots.swap_remove(i).into_output();
                } else {
                    i += 1;
                }
            }
        }
        Ok(())
    }
    /// Teacher-forced log-probabilities of each target (ids including the final `</s>`) given its
    /// source (ids including `</s>`), over the full vocabulary: what
    /// `marian score --word-scores` reports. Pairs are scored together in batches.
    pub fn score(&mut self, pairs: &[(&[u32], &[u32])], max_batch: usize) -> Result<Vec<Vec<f32>>, DecodeError> {
        let rt = self.rt;
        let model = self.model;
        let vocab = model.marian.trg_vocab();
        let mut result = Vec::with_capacity(pairs.len());
        for batch in pairs.chunks(max_batch.max(1)) {
            let srcs: Vec<&[u32]> = batch.iter().map(|p| p.0).collect();
            let encoded = model.marian.encode(&rt, &mut self.buf.ws, &srcs)?;
            let mut states: Vec<DecoderState> = encoded.into_iter().map(|e| model.marian.start(e)).collect();
            let mut scores: Vec<Vec<f32>> = batch.iter().map(|p| Vec::with_capacity(p.1.len())).collect();
            let longest = batch.iter().map(|p| p.1.len()).max().unwrap_or(0);
            for t in 0..longest {
                let alive: Vec<usize> = (0..batch.len()).filter(|&i| t < batch[i].1.len()).collect();
                let mut live: Vec<(&mut DecoderState, StepInput)> = states
                    .iter_mut()
                    .enumerate()
                    .filter(|(i, _)| t < batch[*i].1.len())
                    .map(|(i, s)| (s, StepInput { prev: if t == 0 { None } else { Some(batch[i].1[t - 1]) }, pos: t }))
                    .collect();
                model.marian.step(&rt, &mut self.buf.ws, &mut live)?;
                let logits = &mut self.buf.logits;
                if logits.len() < alive.len() * vocab {
                    logits.resize(alive.len() * vocab, 0.0);
                }
                model.marian.logits(&rt, &mut self.buf.ws, alive.len(), &|_| None, logits, vocab)?;
                for (r, &i) in alive.iter().enumerate() {
                    let row = &mut logits[r * vocab..(r + 1) * vocab];
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
/// the column and its new path score. The row is read, not written: each score is
/// `path + ((x − max) − log_sum)`, the float operations of Marian's log-softmax and its sum.
pub fn choose(kern: &Kernels, row: &[f32], path: f32, ids: Option<&[u32]>, unk: u32) -> (usize, f32) {
    if row.is_empty() {
        return (0, path);
    }
    let (max, log_sum) = {
        let _t = profile::time(Kind::Softmax);
        max_and_log_sum(kern, row)
    };
    let _t = profile::time(Kind::Argmax);
    let score = |x: f32| path + ((x - max) - log_sum);
    let unk_col = match ids {
        Some(v) => v.iter().position(|&i| i == unk),
        None => Some(unk as usize),
    };
    let Some(first) = (0..row.len()).find(|&j| Some(j) != unk_col) else { return (0, path) };
    let s0 = score(row[first]);
    if s0.is_nan() {
        // Nothing beats a NaN first candidate in Marian's comparison.
        return (first, s0);
    }
    // The maximum score in a vectorizable pass, then its first column: the same choice as a
    // running `s > best` over the columns (NaN never wins, the earliest of equal scores does).
    let (before, after) = match unk_col {
        Some(u) if u < row.len() => (&row[..u], &row[u + 1..]),
        _ => (row, &row[..0]),
    };
    let m = max_score(before, &score).max(max_score(after, &score)).max(s0);
    let j = (first..row.len()).find(|&j| Some(j) != unk_col && score(row[j]) == m).unwrap_or(first);
    (j, m)
}

/// The largest `score(x)` over `xs`, NaN ignored (−∞ when there is none).
#[inline]
fn max_score(xs: &[f32], score: &impl Fn(f32) -> f32) -> f32 {
    let mut acc = [f32::NEG_INFINITY; 16];
    let chunks = xs.chunks_exact(16);
    let rest = chunks.remainder();
    for c in chunks {
        for (a, &x) in acc.iter_mut().zip(c) {
            let s = score(x);
            *a = if s > *a { s } else { *a };
        }
    }
    let mut m = f32::NEG_INFINITY;
    for s in acc.into_iter().chain(rest.iter().map(|&x| score(x))) {
        if s > m {
            m = s;
        }
    }
    m
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn limits() {
        assert_eq!(length_limit(17, 2.0), 34);
        assert_eq!(length_limit(3, 1.5), 5);
    }

    /// Marian's loop as it reads: a running `s > best` from the first candidate.
    fn choose_reference(row: &mut [f32], path: f32, ids: Option<&[u32]>, unk: u32) -> (usize, f32) {
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

    #[test]
    fn the_vector_choice_equals_the_running_comparison() {
        let mut seed = 0x9E37_79B9_7F4A_7C15u64;
        let mut rnd = move |m: u64| {
            seed ^= seed << 13;
            seed ^= seed >> 7;
            seed ^= seed << 17;
            seed % m
        };
        for case in 0..3000 {
            let n = 1 + rnd(70) as usize;
            // Few distinct values, so ties are common; some infinities and NaNs.
            let mut row: Vec<f32> = (0..n)
                .map(|_| match rnd(if case % 2 == 0 { 40 } else { 4000 }) {
                    0 => f32::NAN,
                    1 => f32::NEG_INFINITY,
                    2 => f32::INFINITY,
                    v => (v % 6) as f32 * 0.5 - 1.0,
                })
                .collect();
            let path = [0.0, -3.25, -1e7, f32::NEG_INFINITY][case % 4];
            let unk = rnd(n as u64 + 2) as u32;
            let ids: Vec<u32> = (0..n as u32).map(|i| (i * 3) % (n as u32 + 1)).collect();
            for sl in [None, Some(ids.as_slice())] {
                let mut b = row.clone();
                let want = choose_reference(&mut b, path, sl, unk);
                for k in Kernels::candidates() {
                    let got = choose(&k, &row, path, sl, unk);
                    assert_eq!(got.0, want.0, "{} case {case}: {row:?} path {path} unk {unk} ids {sl:?}", k.name());
                    assert_eq!(got.1.to_bits(), want.1.to_bits(), "{} case {case}", k.name());
                }
            }
            row.reverse();
        }
    }

    /// Why every step still computes the whole log-sum, even though greedy search only needs
    /// the pick: the path score takes part in it. Two logits one ulp apart: on a fresh path the
    /// larger wins; after a path of −100 both scores `path + ((x − max) − log_sum)` round to one
    /// float (its ulp, 2^−17, dwarfs their 2^−23 difference) and the earlier column wins, as in
    /// Marian. The raw argmax picks the larger either way, so a shortcut from the raw logits
    /// would have to know the exact path, and that is the sum of every earlier step's log-sum.
    #[test]
    fn the_path_score_can_change_the_pick() {
        let k = Kernels::reference();
        let (a, b) = (1.0f32, f32::from_bits(1.0f32.to_bits() + 1));
        for row in [vec![a, b, -20.0], vec![a, b, -20.0, -20.0, -20.0, -20.0, -20.0, -20.0]] {
            assert_eq!(choose(&k, &row, 0.0, None, 99).0, 1, "{row:?}");
            let mut r = row.clone();
            assert_eq!(choose_reference(&mut r, -100.0, None, 99).0, 0, "{row:?}");
            assert_eq!(choose(&k, &row, -100.0, None, 99).0, 0, "{row:?}");
        }
    }

    #[test]
    fn choice_skips_unk_and_keeps_the_first_maximum() {
        let k = Kernels::reference();
        let row = vec![0.0, 5.0, 1.0, 1.0];
        assert_eq!(choose(&k, &row, 0.0, None, 1).0, 2);
        assert_eq!(choose(&k, &row, 0.0, Some(&[0, 7, 1, 9]), 1).0, 1);
    }
}
