//! The Marian transformer Firefox Translations ships: a 6-layer post-norm encoder and an SSRU
//! decoder with cross-attention, tied embeddings and output layer, computed in Marian's order
//! of operations, with its int8 products (`int8shiftAlphaAll`: weights with per-matrix alphas,
//! activations shifted by +127) so that outputs equal Bergamot's (see the README, "How the
//! engine reproduces Marian/Bergamot").
//!
//! The model is immutable once built and is shared by every sentence in flight; all per-sentence
//! state lives in [`EncoderOut`] and [`DecoderState`], all scratch memory in [`Workspace`].

mod decoder;
mod encoder;
mod output;
mod pack;
mod weights;

use std::ops::Range;

use reseam_kernels::{Arithmetic, Kernels, ShapeError};

pub use decoder::{DecoderState, StepInput, StepRow};
pub use encoder::{ENCODE_BLOCK_ROWS, EncoderOut};
pub use output::{OutputLayer, RowTops, ShortOutput};
pub use weights::WeightError;

use crate::marian::binary::Item;
use crate::marian::config::Config;
use crate::marian::layers::attention::Mkl;
use crate::marian::layers::debug;
use crate::marian::layers::linear::{Columns, Int8Scratch, Linear, Products};
use crate::marian::layers::position::PositionTable;
use crate::profile::{self, Kind, Read};
use weights::{Embedding, Fused, Items, Norm};

/// How a model's weights are stored, which decides its arithmetic.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum WeightFormat {
    /// int8 with precomputed activation multipliers (`*.intgemm.alphas.bin`, int8shiftAlphaAll).
    Int8Alphas,
    /// int8 without them (`*.intgemm8.bin`, int8shiftAll): `127/max|A|` per sentence.
    Int8Dynamic,
    /// float32 everywhere (Marian's float path).
    Float32,
}

/// How to run products: which kernels, which arithmetic, and whether to print per-layer values.
#[derive(Clone, Copy, Debug)]
pub struct Runtime<'k> {
    pub kernels: &'k Kernels,
    pub arith: Arithmetic,
    pub debug: bool,
    /// Whose summation orders the attention products reproduce (MKL's on Intel or on AMD CPUs),
    /// chosen per engine beside the arithmetic.
    pub mkl: Mkl,
    /// Split each large product's columns over this pool (see
    /// [`crate::marian::layers::linear::Products`]). The output does not change.
    pub columns: Option<Columns<'k>>,
}

impl<'k> Runtime<'k> {
    /// One sentence at a time on the calling thread, in the orders of [`Mkl::current`].
    pub fn new(kernels: &'k Kernels, arith: Arithmetic, debug: bool) -> Runtime<'k> {
        Runtime { kernels, arith, debug, mkl: Mkl::current(), columns: None }
    }

    pub fn products(&self) -> Products<'k> {
        Products { kernels: self.kernels, arith: self.arith, columns: self.columns }
    }
}

/// Scratch buffers, grown to the largest batch seen and reused for every call.
#[derive(Default)]
pub struct Workspace {
    x: Vec<f32>,
    y: Vec<f32>,
    z: Vec<f32>,
    ctx: Vec<f32>,
    norm: Vec<f32>,
    wide: Vec<f32>,
    hidden: Vec<u8>,
    scores: Vec<f32>,
    int8: Int8Scratch,
    groups: Vec<Range<usize>>,
}

/// Grows a buffer to at least `n` elements without shrinking it.
fn grow<T: Default + Clone>(v: &mut Vec<T>, n: usize) -> &mut [T] {
    if v.len() < n {
        v.resize(n, T::default());
    }
    &mut v[..n]
}

struct Ffn {
    w1: Linear,
    w2: Linear,
}

struct EncoderLayer {
    name: String,
    qkv: Fused,
    wo: Linear,
    ln_att: Norm,
    ffn: Ffn,
    ln_ffn: Norm,
}

struct DecoderLayer {
    name: String,
    /// `[W | Wf]` of the SSRU (W without bias, Wf with `bf`).
    ssru: Fused,
    ln_rnn: Norm,
    q: Linear,
    /// `[Wk | Wv]` over the encoder output.
    kv: Fused,
    wo: Linear,
    ln_ctx: Norm,
    ffn: Ffn,
    ln_ffn: Norm,
}

/// A loaded Marian model.
pub struct Marian {
    pub config: Config,
    /// The model.yml text the configuration came from (packs keep it).
    pub yml: String,
    pub format: WeightFormat,
    src_emb: Embedding,
    trg_emb: Embedding,
    emb_scale: f32,
    positions: PositionTable,
    enc: Vec<EncoderLayer>,
    dec: Vec<DecoderLayer>,
    out: OutputLayer,
}

/// Why a model could not be built from its items.
#[derive(Debug, thiserror::Error)]
pub enum BuildError {
    #[error(transparent)]
    Weight(#[from] WeightError),
    #[error("{0}")]
    Other(String),
}

crate::error::fault!(BuildError);

impl BuildError {
    /// A model file that does not build is damaged or unsupported, never the caller's fault.
    pub fn is_usage(&self) -> bool {
        match self {
            BuildError::Weight(e) => e.is_usage(),
            BuildError::Other(_) => false,
        }
    }
}

impl Marian {
    /// Builds the model from a file's items and its parsed model.yml.
    pub fn from_items(config: Config, items: Vec<Item<'_>>) -> Result<Marian, BuildError> {
        let items = Items::new(items);
        let d = config.dim;
        let (src_name, trg_name) = if items.has("Wemb") { ("Wemb", "Wemb") } else { ("encoder_Wemb", "decoder_Wemb") };
        if items.has("decoder_ff_logit_out_W") {
            return Err(BuildError::Other(
                "the output layer has its own matrix (decoder_ff_logit_out_W); reseam supports tied embeddings only"
                    .into(),
            ));
        }
        let src_emb = items.embedding_table(src_name, config.src_vocab, d)?;
        let trg_emb = if src_name == trg_name {
            src_emb.clone()
        } else {
            items.embedding_table(trg_name, config.trg_vocab, d)?
        };
        let int8 = items.any_int8();

        let mut enc = Vec::new();
        for l in 1..=config.enc_depth {
            let p = format!("encoder_l{l}");
            let qkv = Fused::new(vec![
                items.weight(&format!("{p}_self_Wq"), Some(&format!("{p}_self_bq")), d, d)?,
                items.weight(&format!("{p}_self_Wk"), Some(&format!("{p}_self_bk")), d, d)?,
                items.weight(&format!("{p}_self_Wv"), Some(&format!("{p}_self_bv")), d, d)?,
            ]);
            enc.push(EncoderLayer {
                name: p.clone(),
                qkv,
                wo: items.weight(&format!("{p}_self_Wo"), Some(&format!("{p}_self_bo")), d, d)?.into_linear(),
                ln_att: items.norm(&format!("{p}_self_Wo"), d)?,
                ffn: Self::ffn(&items, &format!("{p}_ffn"), d, config.enc_ffn)?,
                ln_ffn: items.norm(&format!("{p}_ffn_ffn"), d)?,
            });
        }
        // The decoder FFN width: browsermt uses transformer-dim-ffn, newer Marian
        // transformer-decoder-dim-ffn when set; the weights say which.
        let dec_ffn = items.get("decoder_l1_ffn_W1").map(|i| i.rows_cols().1).unwrap_or(config.enc_ffn);
        if dec_ffn != config.enc_ffn && dec_ffn != config.dec_ffn {
            return Err(BuildError::Other(format!(
                "decoder_l1_ffn_W1 has {dec_ffn} columns; model.yml says {} (transformer-dim-ffn) or {} (transformer-decoder-dim-ffn)",
                config.enc_ffn, config.dec_ffn
            )));
        }
        let mut dec = Vec::new();
        for l in 1..=config.dec_depth {
            let p = format!("decoder_l{l}");
            let ssru = Fused::new(vec![
                items.weight(&format!("{p}_rnn_W"), None, d, d)?,
                items.weight(&format!("{p}_rnn_Wf"), Some(&format!("{p}_rnn_bf")), d, d)?,
            ]);
            let kv = Fused::new(vec![
                items.weight(&format!("{p}_context_Wk"), Some(&format!("{p}_context_bk")), d, d)?,
                items.weight(&format!("{p}_context_Wv"), Some(&format!("{p}_context_bv")), d, d)?,
            ]);
            dec.push(DecoderLayer {
                name: p.clone(),
                ssru,
                ln_rnn: items.norm(&format!("{p}_rnn_ffn"), d)?,
                q: items.weight(&format!("{p}_context_Wq"), Some(&format!("{p}_context_bq")), d, d)?.into_linear(),
                kv,
                wo: items.weight(&format!("{p}_context_Wo"), Some(&format!("{p}_context_bo")), d, d)?.into_linear(),
                ln_ctx: items.norm(&format!("{p}_context_Wo"), d)?,
                ffn: Self::ffn(&items, &format!("{p}_ffn"), d, dec_ffn)?,
                ln_ffn: items.norm(&format!("{p}_ffn_ffn"), d)?,
            });
        }
        let bias =
            if config.output_bias { Some(items.vector("decoder_ff_logit_out_b", config.trg_vocab)?) } else { None };
        let out = if int8 {
            let act = match items.alpha(trg_name)? {
                Some(a) => crate::marian::layers::linear::ActScale::Fixed(a),
                None => crate::marian::layers::linear::ActScale::Dynamic,
            };
            OutputLayer::int8(&trg_emb.to_f32(), d, act, bias)
        } else {
            OutputLayer::Float { emb: trg_emb.to_f32(), bias }
        };
        let format = if !int8 {
            WeightFormat::Float32
        } else if items.alpha("encoder_l1_self_Wq")?.is_some() {
            WeightFormat::Int8Alphas
        } else {
            WeightFormat::Int8Dynamic
        };
        Ok(Marian {
            emb_scale: (d as f32).sqrt(),
            positions: PositionTable::new(d, 512),
            yml: String::new(),
            config,
            format,
            src_emb,
            trg_emb,
            enc,
            dec,
            out,
        })
    }

    fn ffn(items: &Items, prefix: &str, d: usize, hidden: usize) -> Result<Ffn, WeightError> {
        Ok(Ffn {
            w1: items.weight(&format!("{prefix}_W1"), Some(&format!("{prefix}_b1")), d, hidden)?.into_linear(),
            w2: items.weight(&format!("{prefix}_W2"), Some(&format!("{prefix}_b2")), hidden, d)?.into_linear(),
        })
    }

    pub fn dim(&self) -> usize {
        self.config.dim
    }

    /// Output columns (the target vocabulary).
    pub fn trg_vocab(&self) -> usize {
        self.out.vocab(self.config.dim)
    }

    pub fn output(&self) -> &OutputLayer {
        &self.out
    }

    /// Whether Q/K/V, SSRU and cross-attention K/V run as fused products (they do when their
    /// activation multipliers are equal, as marian-conv writes them).
    pub fn fused_products(&self) -> bool {
        self.enc.iter().all(|l| l.qkv.is_fused()) && self.dec.iter().all(|l| l.ssru.is_fused() && l.kv.is_fused())
    }

    /// Embedding rows scaled by `sqrt(d)`, plus the position signal.
    fn embed(&self, table: &Embedding, id: Option<u32>, pos: usize, out: &mut [f32]) {
        let _t = profile::time(Kind::Embeddings);
        match id {
            Some(id) => table.scaled_row(id as usize, self.emb_scale, out),
            // The decoder's first step has no previous word: a zero vector (scaled zeros).
            None => out.fill(0.0),
        }
        self.positions.add_to(pos, out);
    }
}

/// `out = x·W (+b)` for any layer format.
#[allow(clippy::too_many_arguments)]
fn linear(
    rt: &Runtime,
    s: &mut Int8Scratch,
    l: &Linear,
    x: &[f32],
    rows: usize,
    groups: &[Range<usize>],
    relu: bool,
    out: &mut [f32],
) -> Result<(), ShapeError> {
    let _t = profile::time(Kind::Products);
    match l {
        Linear::Int8(l) => l.forward(&rt.products(), x, rows, groups, relu, out, s),
        Linear::Float(l) => {
            profile::read(Read::Weights, size_of_val(&l.wt[..]));
            l.forward(x, rows, relu, out);
            Ok(())
        }
    }
}

/// Several weights over one input: one product when fused, else one each, interleaved into rows
/// of `[out0 | out1 | ...]`.
#[allow(clippy::too_many_arguments)]
fn fused(
    rt: &Runtime,
    s: &mut Int8Scratch,
    f: &Fused,
    x: &[f32],
    rows: usize,
    groups: &[Range<usize>],
    out: &mut [f32],
    tmp: &mut Vec<f32>,
) -> Result<(), ShapeError> {
    match f {
        Fused::One(l) => linear(rt, s, l, x, rows, groups, false, out),
        Fused::Apart(ls) => {
            let total: usize = ls.iter().map(|l| l.n()).sum();
            let mut col = 0;
            for l in ls {
                let n = l.n();
                let t = grow(tmp, rows * n);
                linear(rt, s, l, x, rows, groups, false, t)?;
                for r in 0..rows {
                    out[r * total + col..r * total + col + n].copy_from_slice(&t[r * n..(r + 1) * n]);
                }
                col += n;
            }
            Ok(())
        }
    }
}

/// The feed-forward block `relu(x·W1 + b1)·W2 + b2`. With int8 weights and fixed multipliers
/// the hidden layer goes straight from the first product to the second's quantized input.
#[allow(clippy::too_many_arguments)]
fn ffn(
    rt: &Runtime,
    ws_int8: &mut Int8Scratch,
    hidden: &mut Vec<u8>,
    wide: &mut Vec<f32>,
    f: &Ffn,
    x: &[f32],
    rows: usize,
    groups: &[Range<usize>],
    out: &mut [f32],
) -> Result<(), ShapeError> {
    if let (Linear::Int8(w1), Linear::Int8(w2)) = (&f.w1, &f.w2)
        && let (Some(_), Some(qa2)) = (w1.act_scale(), w2.act_scale())
    {
        let _t = profile::time(Kind::Products);
        let stride = w2.packed().k_padded();
        let h = grow(hidden, rows * stride);
        w1.forward_requantized(&rt.products(), x, rows, true, qa2, stride, h, ws_int8)?;
        return w2.forward_quantized(&rt.products(), h, rows, out);
    }
    let n = f.w1.n();
    let h = grow(wide, rows * n);
    linear(rt, ws_int8, &f.w1, x, rows, groups, true, h)?;
    linear(rt, ws_int8, &f.w2, h, rows, groups, false, out)
}

/// [`dump`] under the layer's name + `suffix`, formatted only when it is printed (a step
/// allocates nothing otherwise).
fn dump_layer(rt: &Runtime, layer: &str, suffix: &str, op: &str, shape: &[usize], data: &[f32]) {
    if rt.debug {
        debug::dump(&format!("{layer}{suffix}"), op, shape, data);
    }
}

/// Prints a tensor when `RESEAM_MT_DEBUG` is on.
fn dump(rt: &Runtime, message: &str, op: &str, shape: &[usize], data: &[f32]) {
    if rt.debug {
        debug::dump(message, op, shape, data);
    }
}
