//! One decoder step over any set of sentences, each at its own position.
//!
//! The SSRU decoder keeps one vector per layer per sentence (no growing self-attention cache), and
//! cross-attention reads the sentence's own keys and values, so the rows of a step are
//! independent except inside the matrix products, whose integer accumulation is exact.

use reseam_kernels::ShapeError;

use super::{EncoderOut, Marian, RowTops, Runtime, ShortOutput, Workspace, dump, dump_layer, ffn, fused, grow, linear};
use crate::marian::layers::attention::{Heads, Rows, View, attend, prefetch_one_row};
use crate::marian::layers::norm::add_layer_norm;

/// A sentence's decoder state: its encoder result and the SSRU cell of every layer.
pub struct DecoderState {
    pub enc: EncoderOut,
    cells: Vec<f32>,
}

impl DecoderState {
    /// Back to the state before the first step, keeping the encoder result (the greedy search
    /// replays a sentence with it); allocates nothing.
    pub fn restart(&mut self) {
        self.cells.fill(0.0);
    }
}

/// What one row of a step reads: the previous output (`None` at the first step) and the position.
#[derive(Clone, Copy, Debug)]
pub struct StepInput {
    pub prev: Option<u32>,
    pub pos: usize,
}

/// One row of a decoder step: a sentence's state and what it reads at this step. The search's
/// slots implement it, so a step runs over them in place.
pub trait StepRow {
    fn state(&self) -> &DecoderState;
    fn state_mut(&mut self) -> &mut DecoderState;
    fn input(&self) -> StepInput;
    /// Where this row's soft alignment goes, if it wants one: each step appends the last decoder
    /// layer's cross-attention weights of head 0 over the source pieces (`</s>` included), which
    /// is what Marian returns as `alignment: soft` (`transformer-guided-alignment-layer: last`).
    /// The buffer should have room reserved, so that a step allocates nothing.
    fn alignment(&mut self) -> Option<&mut Vec<f32>> {
        None
    }
}

/// A bare state with its input (teacher forcing and tests).
impl StepRow for (&mut DecoderState, StepInput) {
    fn state(&self) -> &DecoderState {
        self.0
    }
    fn state_mut(&mut self) -> &mut DecoderState {
        self.0
    }
    fn input(&self) -> StepInput {
        self.1
    }
}

impl Marian {
    /// The state before the first step (all SSRU cells zero, as Marian's `startState`).
    pub fn start(&self, enc: EncoderOut) -> DecoderState {
        DecoderState { enc, cells: vec![0.0; self.dec.len() * self.config.dim] }
    }

    /// Runs one step for `states.len()` sentences, each reading its own input; returns the final hidden rows (`rows × d`) in
    /// `ws`, ready for [`Marian::logits`].
    pub fn step<S: StepRow>(&self, rt: &Runtime, ws: &mut Workspace, states: &mut [S]) -> Result<(), ShapeError> {
        // Each row is its own activation group (per-sentence scales of dynamic int8 models); the
        // list is kept in the workspace so that a step allocates nothing.
        let mut groups = std::mem::take(&mut ws.groups);
        groups.clear();
        groups.extend((0..states.len()).map(|r| r..r + 1));
        let result = self.step_rows(rt, ws, states, &groups);
        ws.groups = groups;
        result
    }

    fn step_rows<S: StepRow>(
        &self,
        rt: &Runtime,
        ws: &mut Workspace,
        states: &mut [S],
        groups: &[std::ops::Range<usize>],
    ) -> Result<(), ShapeError> {
        let d = self.config.dim;
        let (heads, dk) = (self.config.heads, self.config.head_dim());
        let scale = 1.0f32 / (dk as f32).sqrt();
        let rows = states.len();
        let groups = &groups[..rows];
        let x = grow(&mut ws.x, rows * d);
        for (st, row) in states.iter().zip(x.chunks_exact_mut(d)) {
            let inp = st.input();
            self.embed(&self.trg_emb, inp.prev, inp.pos, row);
        }
        dump(rt, "decoder_emb", "embeddings", &[rows, d], x);

        for (l, layer) in self.dec.iter().enumerate() {
            // SSRU: c = σ(f)·c' + (1−σ(f))·x̃ with x̃ = y·W, f = y·Wf + bf; output relu(c).
            let xf = grow(&mut ws.y, rows * 2 * d);
            fused(rt, &mut ws.int8, &layer.ssru, &ws.x[..rows * d], rows, groups, xf, &mut ws.wide)?;
            let hrow = grow(&mut ws.z, rows * d);
            for (r, st) in states.iter_mut().enumerate() {
                let c = &mut st.state_mut().cells[l * d..(l + 1) * d];
                let (xw, f) = xf[r * 2 * d..(r + 1) * 2 * d].split_at(d);
                rt.kernels.ssru(c, xw, f, &mut hrow[r * d..(r + 1) * d]);
            }
            let x = &mut ws.x[..rows * d];
            add_layer_norm(rt.kernels, x, hrow, &layer.ln_rnn.gamma, &layer.ln_rnn.beta, &mut ws.norm);
            dump_layer(rt, &layer.name, "_rnn", "layer_normalization", &[rows, d], x);

            // Cross-attention over the sentence's own keys and values.
            let q = grow(&mut ws.y, rows * d);
            linear(rt, &mut ws.int8, &layer.q, &ws.x[..rows * d], rows, groups, false, q)?;
            let ctx = grow(&mut ws.ctx, rows * d);
            let attention = crate::profile::time(crate::profile::Kind::Attention);
            let last = l + 1 == self.dec.len();
            for r in 0..states.len() {
                if let Some(next) = states.get(r + 1) {
                    // Its keys and values stream in (from L3: all sentences' are more than L2
                    // holds) while this sentence's attention computes.
                    let enc = &next.state().enc;
                    let kt = View { data: &enc.keys_t[l], stride: enc.len, col: 0 };
                    let v = View { data: &enc.values[l], stride: d, col: 0 };
                    prefetch_one_row(rt.kernels, kt, v, enc.len, d);
                }
                let st = &mut states[r];
                let enc = &st.state().enc;
                crate::profile::read(
                    crate::profile::Read::KeysValues,
                    size_of_val(&enc.keys_t[l][..]) + size_of_val(&enc.values[l][..]),
                );
                // Every head of the query at once: their softmaxes run side by side.
                let a = Heads {
                    heads,
                    dk,
                    q: View { data: &q[r * d..(r + 1) * d], stride: d, col: 0 },
                    m: 1,
                    // One query row reads the keys transposed only (see [`attend`]).
                    k: View { data: &[], stride: d, col: 0 },
                    keys_t: Some(View { data: &enc.keys_t[l], stride: enc.len, col: 0 }),
                    v: View { data: &enc.values[l], stride: d, col: 0 },
                    n: enc.len,
                    scale,
                };
                let out = Rows { data: &mut ctx[r * d..(r + 1) * d], stride: d, col: 0 };
                attend(rt.kernels, rt.mkl, &a, &mut ws.scores, out);
                if last {
                    // One query row: the first head's softmax weights are the first `len` scores.
                    let n = enc.len;
                    if let Some(row) = st.alignment() {
                        row.extend_from_slice(&ws.scores[..n]);
                    }
                }
            }
            drop(attention);
            let o = grow(&mut ws.z, rows * d);
            linear(rt, &mut ws.int8, &layer.wo, ctx, rows, groups, false, o)?;
            let x = &mut ws.x[..rows * d];
            add_layer_norm(rt.kernels, x, o, &layer.ln_ctx.gamma, &layer.ln_ctx.beta, &mut ws.norm);
            dump_layer(rt, &layer.name, "_context", "layer_normalization", &[rows, d], x);

            let f = grow(&mut ws.z, rows * d);
            ffn(rt, &mut ws.int8, &mut ws.hidden, &mut ws.wide, &layer.ffn, &ws.x[..rows * d], rows, groups, f)?;
            let x = &mut ws.x[..rows * d];
            add_layer_norm(rt.kernels, x, f, &layer.ln_ffn.gamma, &layer.ln_ffn.beta, &mut ws.norm);
            dump_layer(rt, &layer.name, "_ffn", "layer_normalization", &[rows, d], x);
        }
        Ok(())
    }

    /// [`RowTops`] of the rows the last [`Marian::step`] left in `ws`, over the full vocabulary
    /// (see [`OutputLayer::tops`](super::OutputLayer::tops), cut by columns over `rt.columns`);
    /// `Ok(false)` when this model's output layer cannot give them, or when the debug dumps
    /// want the logits themselves: then [`Marian::logits`] it is.
    pub fn logit_tops(
        &self,
        rt: &Runtime,
        ws: &mut Workspace,
        rows: usize,
        unk: Option<usize>,
        tops: &mut Vec<RowTops>,
    ) -> Result<bool, ShapeError> {
        if rt.debug || !self.out.has_tops() {
            return Ok(false);
        }
        let d = self.config.dim;
        self.out.tops(&rt.products(), &ws.x[..rows * d], d, rows, unk, tops, &mut ws.wide, &mut ws.int8.a)
    }

    /// Logits of row `r` of the last [`Marian::step`] over the full vocabulary, into `out`.
    pub fn logits_row(&self, rt: &Runtime, ws: &mut Workspace, r: usize, out: &mut [f32]) -> Result<(), ShapeError> {
        let d = self.config.dim;
        let _t = crate::profile::time(crate::profile::Kind::OutputProduct);
        let n = out.len();
        self.out.forward(&rt.products(), &ws.x[r * d..(r + 1) * d], d, 1, &|_| None, out, n, &mut ws.int8.a)
    }

    /// Logits of the rows the last [`Marian::step`] left in `ws`: row `r` over the full vocabulary,
    /// or over `short(r)`'s ids when it has a shortlist, written at `out[r * stride ..]`.
    pub fn logits<'s>(
        &self,
        rt: &Runtime,
        ws: &mut Workspace,
        rows: usize,
        short: &dyn Fn(usize) -> Option<&'s ShortOutput>,
        out: &mut [f32],
        stride: usize,
    ) -> Result<(), ShapeError> {
        let d = self.config.dim;
        let _t = crate::profile::time(crate::profile::Kind::OutputProduct);
        self.out.forward(&rt.products(), &ws.x[..rows * d], d, rows, short, out, stride, &mut ws.int8.a)?;
        dump(rt, "decoder_ff_logit_out", "affine", &[rows, stride], &out[..rows * stride]);
        Ok(())
    }
}
