//! Greedy search over sentence slots, as Firefox runs Bergamot (beam 1, normalize 1, no word
//! penalty, `<unk>` suppressed, max-length-factor 2, max-length-break 128).
//!
//! A sentence in flight is a [`Slot`]: its decoder state, its output so far, its path score, its
//! own shortlist and its own length limit. A decoder step runs over whichever slots are alive and
//! a finished slot simply leaves, so nothing about a sentence depends on the others it shares a
//! batch with. (Bergamot's length limit uses the longest sentence of the batch and its shortlist
//! the union of the batch's source words; reseam's are per sentence and equal Bergamot's for a
//! sentence translated alone.)

use reseam_kernels::scan::Top2;
use reseam_kernels::{Arithmetic, Kernels, ShapeError};

use crate::marian::Model;
use crate::marian::layers::softmax::{log_softmax, max_and_log_sum};
use crate::marian::transformer::{
    DecoderState, EncoderOut, RowTops, Runtime, ShortOutput, StepInput, StepRow, Workspace,
};
use crate::profile::{self, Count, Kind};
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
    choice: Choice,
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
            choice: Choice::default(),
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

    /// The token Marian picks from `row`, or `None` when the sentence has to be replayed.
    fn pick(&mut self, kern: &Kernels, row: &[f32], unk: u32) -> Option<u32> {
        let ids = self.short.as_ref().map(|s| s.ids.as_slice());
        let col = self.choice.pick(kern, row, ids, unk)?;
        Some(ids.map_or(col as u32, |v| v[col]))
    }

    /// Starts the sentence again from its first step, with the full form at every step so
    /// that its path score is exact where a near-tie needs it. The greedy output of a sentence
    /// does not depend on the other rows of its steps, so the replay gives Marian's ids.
    fn replay(&mut self) {
        self.state.restart();
        self.out.clear();
        if let Some(a) = &mut self.align {
            a.clear();
        }
        self.choice = Choice::replaying();
    }
}

/// A sentence's path score and how its next choice is made.
#[derive(Clone, Copy, Debug, Default)]
struct Choice {
    /// Marian's path score while `!inexact`; after a step chosen from the raw logits it is not
    /// known (its log-sum was skipped) and `bound` holds an upper bound of its magnitude.
    path: f32,
    inexact: bool,
    bound: f32,
    /// Every step computes the log-softmax: the sentence is being replayed (see [`raw_pick`]).
    full: bool,
}

impl Choice {
    fn replaying() -> Choice {
        Choice { full: true, ..Choice::default() }
    }

    /// The column Marian picks from `row` (as [`choose`]), or `None` when the sentence has to
    /// be replayed: from the raw logits where they decide it ([`raw_pick`]), else from the
    /// log-softmax, which needs the exact path score.
    fn pick(&mut self, kern: &Kernels, row: &[f32], ids: Option<&[u32]>, unk: u32) -> Option<usize> {
        if !self.full {
            let bound = if self.inexact { self.bound } else { self.path.abs() };
            let raw = {
                let _t = profile::time(Kind::Argmax);
                raw_pick(kern, row, unk_column(ids, unk), bound)
            };
            match raw {
                Some((col, bound)) => {
                    profile::count(Count::RawRows);
                    self.inexact = true;
                    self.bound = bound;
                    return Some(col);
                }
                None if self.inexact => {
                    profile::count(Count::Replays);
                    return None;
                }
                None => {}
            }
        }
        profile::count(Count::FullRows);
        let (col, score) = choose(kern, row, self.path, ids, unk);
        self.path = score;
        Some(col)
    }

    /// The column Marian picks from a row of `n` logits given only its [`RowTops`], where they
    /// decide it; `None` when the row itself is needed ([`Choice::pick`] then, which makes the
    /// same decision from the same tops first).
    fn pick_tops(&mut self, tops: &RowTops, n: usize, unk_col: Option<usize>) -> Option<usize> {
        if self.full {
            return None;
        }
        let bound = if self.inexact { self.bound } else { self.path.abs() };
        let after_start = unk_col.map_or(n, |u| u + 1);
        match raw_decide(tops.before, tops.after, after_start, tops.unk, n, bound) {
            Raw::Pick(col, bound) => {
                profile::count(Count::RawRows);
                self.inexact = true;
                self.bound = bound;
                Some(col)
            }
            Raw::Look { .. } | Raw::Full => None,
        }
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
    tops: Vec<RowTops>,
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
    let (eos, unk) = (model.trg_vocab.eos(), model.trg_vocab.unk());
    // Without shortlists, each row's choice from its tops where they decide it, and from its
    // logits computed again alone where not (a near-tie, a replayed sentence: a few rows in
    // thousands); otherwise every row's logits.
    let unk_col = unk_column(None, unk);
    let tops =
        slots.iter().all(|s| s.short.is_none()) && m.logit_tops(rt, &mut buf.ws, rows, unk_col, &mut buf.tops)?;
    if !tops {
        if buf.logits.len() < rows * vocab {
            buf.logits.resize(rows * vocab, 0.0);
        }
        m.logits(rt, &mut buf.ws, rows, &|r| slots[r].short.as_ref(), &mut buf.logits, vocab)?;
    } else if buf.logits.len() < vocab {
        buf.logits.resize(vocab, 0.0);
    }
    for (r, slot) in slots.iter_mut().enumerate() {
        let picked =
            if tops { slot.choice.pick_tops(&buf.tops[r], vocab, unk_col).map(|col| col as u32) } else { None };
        let token = match picked {
            Some(t) => t,
            None => {
                let row = if tops {
                    let row = &mut buf.logits[..vocab];
                    m.logits_row(rt, &mut buf.ws, r, row)?;
                    &row[..]
                } else {
                    let ids = slot.short.as_ref().map(|s| s.ids.as_slice());
                    let n = ids.map(|v| v.len()).unwrap_or(vocab);
                    &buf.logits[r * vocab..r * vocab + n]
                };
                let Some(token) = slot.pick(rt.kernels, row, unk) else {
                    slot.replay();
                    continue;
                };
                token
            }
        };
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
    let unk_col = unk_column(ids, unk);
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

/// The column of `<unk>` in a row: its id, or its place in the shortlist.
fn unk_column(ids: Option<&[u32]>, unk: u32) -> Option<usize> {
    match ids {
        Some(v) => v.iter().position(|&i| i == unk),
        None => Some(unk as usize),
    }
}

/// Marian's greedy choice from the raw logits, without the log-sum, where they decide it:
/// `Some((column, bound))` with [`choose`]'s column and an upper bound of the magnitude of its
/// new path score, given `path_bound` ≥ |path|; `None` where the log-softmax has to decide.
///
/// Why the raw logits decide: each operation of the score `path + ((x − max) − log_sum)`
/// rounds to nearest, so each is non-decreasing in `x`, and so is the score. The largest score
/// is then the score of the largest candidate logit `m`, and the choice (the first column of
/// the largest score) is the first column of `m` unless an earlier candidate's smaller logit
/// rounds to the same score. Here that cannot happen: every earlier candidate `x` is below
/// `t = fl(m − δ)`, δ = 2⁻²⁰·B, B = path_bound + L̂ + 2(|max| + |m|) + 1, L̂ = ln(n) + 1 ≥
/// |log_sum| (the sum of n exponentials of values ≤ 0, with the term of `max` itself 1, lies
/// in [1, n(1 + 10⁻³)] for n ≤ 10⁶). By monotony it is enough to show score(x₀) < score(m)
/// for x₀ the largest float below t. At x₀ and at m every exact intermediate (`x − max`,
/// `− log_sum`, `path +`) has magnitude below B (δ ≤ 2⁻⁴ as B ≤ 2¹⁶ is required), and each of
/// the six roundings errs by at most u·B with u = 2⁻²⁴ (half an ulp; B ≥ 1 covers subnormal
/// results), so the computed scores differ from the exact ones, whose gap is m − x₀ ≥
/// m − t, by less than 6.01·u·B together; and m − t ≥ δ − u·B = 15·u·B (the rounding of `t`).
/// So score(x₀) < score(m), with a margin of more than two.
///
/// Non-finite values (NaN, infinities) and rows with no candidate leave it to the full form,
/// as do logits so large that B > 2¹⁶ and rows of more than 10⁶ values. The caller falls back when this returns `None`: to the
/// full form if its path is exact, else it replays the sentence (a near-tie then needs the
/// path score, and that is the sum of every earlier step's log-sum).
fn raw_pick(kern: &Kernels, row: &[f32], unk_col: Option<usize>, path_bound: f32) -> Option<(usize, f32)> {
    let (before, after, unk_x) = match unk_col {
        Some(u) if u < row.len() => (&row[..u], &row[u + 1..], Some(row[u])),
        _ => (row, &row[..0], None),
    };
    // One pass over each side of `<unk>`: finiteness, the largest candidate `m` and its first
    // column, and the runner-up (the largest after taking `m` out once).
    match raw_decide(kern.top2(before), kern.top2(after), before.len() + 1, unk_x, row.len(), path_bound) {
        Raw::Pick(col, bound) => Some((col, bound)),
        Raw::Full => None,
        Raw::Look { t, m, bound } => {
            let col = match first_at_least(before, t) {
                Some(j) => j,
                None => before.len() + 1 + first_at_least(after, t)?,
            };
            (row[col] == m).then_some((col, bound))
        }
    }
}

/// What [`raw_pick`] makes of a row from its two sides' [`Top2`]s alone.
enum Raw {
    /// The column and the new path score's bound.
    Pick(usize, f32),
    /// A tie or a near-tie: the choice is the first candidate at least `t` if that is `m`,
    /// else the full form's; `bound` as for `Pick`.
    Look { t: f32, m: f32, bound: f32 },
    /// The full form decides.
    Full,
}

/// [`raw_pick`]'s decision for a row of `n` values: `b` and `a` scan the candidates before and
/// after `<unk>` (whose own value is `unk_x`), `a` from column `after_start`.
fn raw_decide(b: Top2, a: Top2, after_start: usize, unk_x: Option<f32>, n: usize, path_bound: f32) -> Raw {
    const SCALE: f32 = 1.0 / (1u32 << 20) as f32;
    if !(b.finite && a.finite && unk_x.is_none_or(f32::is_finite)) {
        return Raw::Full;
    }
    let (m, first, second) = if a.max > b.max {
        (a.max, after_start + a.at, a.second.max(b.max))
    } else {
        (b.max, b.at, b.second.max(a.max))
    };
    if !m.is_finite() {
        return Raw::Full;
    }
    let max = unk_x.map_or(m, |x| x.max(m));
    let lhat = (n as f32).ln() + 1.0;
    let bound = path_bound + lhat + 2.0 * (max.abs() + m.abs()) + 1.0;
    if bound.is_nan() || bound > 65536.0 || n > 1_000_000 {
        return Raw::Full;
    }
    let t = m - bound * SCALE;
    // |fl(path + ((m − max) − log_sum))| ≤ (|path| + (max − m) + |log_sum|)(1 + u)³, and the
    // factor 1 + 16u also covers the rounding of this sum.
    let new_bound = (path_bound + (max - m) + lhat) * (1.0 + SCALE);
    // Every candidate but the first `m` is at most `second`: when that is below `t`, the first
    // candidate at least `t` is the first `m`. Otherwise (a tie or a near-tie) look for it.
    if second < t { Raw::Pick(first, new_bound) } else { Raw::Look { t, m, bound: new_bound } }
}

/// The first index of a value ≥ `t`, a block of 16 at a time.
#[inline]
fn first_at_least(xs: &[f32], t: f32) -> Option<usize> {
    let chunks = xs.chunks_exact(16);
    let start = xs.len() - chunks.remainder().len();
    for (k, c) in chunks.enumerate() {
        if c.iter().fold(false, |any, &x| any | (x >= t)) {
            return c.iter().position(|&x| x >= t).map(|j| k * 16 + j);
        }
    }
    xs[start..].iter().position(|&x| x >= t).map(|j| start + j)
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
mod tests;
