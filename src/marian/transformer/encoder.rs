//! The encoder over a batch of sentences.
//!
//! Sentences are packed row after row without padding: every operation but attention works on
//! rows independently, and attention runs per sentence over its own positions. So a sentence's
//! result is the same alone or in any batch, and no work is spent on padding. (Marian pads to the
//! longest sentence and masks with −99999999; masked positions get exactly zero weight, but the
//! padded length still changes the softmax's SIMD path and the BLAS kernel's summation order,
//! which is why Bergamot's output can depend on the batch and reseam's does not.)

use std::ops::Range;

use reseam_kernels::ShapeError;
use reseam_kernels::transpose::Transpose;

use super::{Marian, Runtime, Workspace, dump, dump_layer, ffn, fused, grow, linear};
use crate::marian::layers::attention::{Heads, Rows, View, attend};
use crate::marian::layers::norm::add_layer_norm;

/// One sentence's encoder result, in the form the decoder reads it: for every decoder layer, the
/// cross-attention keys and values of each source position.
///
/// The keys are kept only transposed: the decoder's one query row scores every key from them, and
/// never reads a key's row. So each sentence holds two of its three `len × d` blocks per layer,
/// and its values are one contiguous block: every step of every live sentence reads them all,
/// and together they are more than L2 holds (see `Marian::step`).
pub struct EncoderOut {
    pub len: usize,
    /// Per decoder layer, the values (`len` rows of `d`).
    pub values: Vec<Vec<f32>>,
    /// Per decoder layer, the keys transposed per head (`[head][dim][position]`), so that one
    /// vector instruction scores many positions.
    pub keys_t: Vec<Vec<f32>>,
}

/// Rows (source pieces of whole sentences) that go through the encoder's layers together. A
/// round's batch can hold thousands; taken whole, every layer streamed its activations (2,048
/// rows of the fused QKV product alone are 6 MB in float on the tiny model) through the last
/// level cache, between operations that each read them once. In blocks of this many rows they
/// stay in L2, and a block still gives every product enough rows to reuse each weight it loads.
/// Rows are independent but in attention, which stays within a sentence, so the blocks change
/// no result. Measured on the 2-vCPU Zen 4 (`RESEAM_MT_PROFILE=1`, encoder seconds, one thread,
/// best of three; batches of up to 2,048 pieces): tiny 3.33 s whole, 3.06–3.14 s for blocks of
/// 64 to 512 rows; base-memory 2.54 s whole, 2.40 s at 128, 2.36 s at 256, 2.43 s at 512.
pub const ENCODE_BLOCK_ROWS: usize = 256;

impl Marian {
    /// Encodes sentences given as source ids including the final `</s>`, in blocks of whole
    /// sentences of at most [`ENCODE_BLOCK_ROWS`] rows (a longer sentence is a block alone).
    pub fn encode(
        &self,
        rt: &Runtime,
        ws: &mut Workspace,
        sentences: &[&[u32]],
    ) -> Result<Vec<EncoderOut>, ShapeError> {
        let mut outs = Vec::with_capacity(sentences.len());
        let mut rest = sentences;
        while !rest.is_empty() {
            let mut rows = rest[0].len();
            let mut n = 1;
            while n < rest.len() && rows + rest[n].len() <= ENCODE_BLOCK_ROWS {
                rows += rest[n].len();
                n += 1;
            }
            outs.extend(self.encode_block(rt, ws, &rest[..n])?);
            rest = &rest[n..];
        }
        Ok(outs)
    }

    fn encode_block(
        &self,
        rt: &Runtime,
        ws: &mut Workspace,
        sentences: &[&[u32]],
    ) -> Result<Vec<EncoderOut>, ShapeError> {
        let d = self.config.dim;
        let (heads, dk) = (self.config.heads, self.config.head_dim());
        let scale = 1.0f32 / (dk as f32).sqrt();
        let mut groups: Vec<Range<usize>> = Vec::with_capacity(sentences.len());
        let mut rows = 0;
        for s in sentences {
            groups.push(rows..rows + s.len());
            rows += s.len();
        }
        let x = grow(&mut ws.x, rows * d);
        for (s, g) in sentences.iter().zip(&groups) {
            for (p, (&id, row)) in s.iter().zip(x[g.start * d..g.end * d].chunks_exact_mut(d)).enumerate() {
                self.embed(&self.src_emb, Some(id), p, row);
            }
        }
        dump(rt, "encoder_emb", "embeddings", &[rows, d], x);

        for layer in &self.enc {
            let qkv = grow(&mut ws.y, rows * 3 * d);
            fused(rt, &mut ws.int8, &layer.qkv, &ws.x[..rows * d], rows, &groups, qkv, &mut ws.wide)?;
            let ctx = grow(&mut ws.ctx, rows * d);
            let attention = crate::profile::time(crate::profile::Kind::Attention);
            for g in &groups {
                let len = g.len();
                let base = &qkv[g.start * 3 * d..g.end * 3 * d];
                let view = |col| View { data: base, stride: 3 * d, col };
                // Every head of the sentence at once: their softmaxes run side by side.
                let a =
                    Heads { heads, dk, q: view(0), m: len, k: view(d), keys_t: None, v: view(2 * d), n: len, scale };
                let out = Rows { data: &mut ctx[g.start * d..g.end * d], stride: d, col: 0 };
                attend(rt.kernels, rt.mkl, &a, &mut ws.scores, out);
            }
            drop(attention);
            let o = grow(&mut ws.z, rows * d);
            linear(rt, &mut ws.int8, &layer.wo, ctx, rows, &groups, false, o)?;
            let x = &mut ws.x[..rows * d];
            add_layer_norm(rt.kernels, x, o, &layer.ln_att.gamma, &layer.ln_att.beta, &mut ws.norm);
            dump_layer(rt, &layer.name, "_self", "layer_normalization", &[rows, d], x);

            let f = grow(&mut ws.z, rows * d);
            ffn(rt, &mut ws.int8, &mut ws.hidden, &mut ws.wide, &layer.ffn, &ws.x[..rows * d], rows, &groups, f)?;
            let x = &mut ws.x[..rows * d];
            add_layer_norm(rt.kernels, x, f, &layer.ln_ffn.gamma, &layer.ln_ffn.beta, &mut ws.norm);
            dump_layer(rt, &layer.name, "_ffn", "layer_normalization", &[rows, d], x);
        }

        let mut outs: Vec<EncoderOut> = groups
            .iter()
            .map(|g| EncoderOut {
                len: g.len(),
                values: Vec::with_capacity(self.dec.len()),
                keys_t: Vec::with_capacity(self.dec.len()),
            })
            .collect();
        for layer in &self.dec {
            let kv = grow(&mut ws.y, rows * 2 * d);
            fused(rt, &mut ws.int8, &layer.kv, &ws.x[..rows * d], rows, &groups, kv, &mut ws.wide)?;
            for (o, g) in outs.iter_mut().zip(&groups) {
                let rows = &kv[g.start * 2 * d..g.end * 2 * d];
                let len = g.len();
                let mut kt = vec![0f32; d * len];
                // `x · 1.0` is `x`: the keys' bits as they are.
                let t = Transpose { src: rows, lds: 2 * d, rows: len, cols: d, scale: 1.0, ldd: len };
                rt.kernels.transpose_scaled(&t, &mut kt);
                let mut values = Vec::with_capacity(len * d);
                for r in rows.chunks_exact(2 * d) {
                    values.extend_from_slice(&r[d..]);
                }
                o.values.push(values);
                o.keys_t.push(kt);
            }
        }
        Ok(outs)
    }
}
