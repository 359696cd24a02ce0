//! The Llama-family decoder stack shared by the three architectures: weights by their Hugging
//! Face names, built in any precision from any weight source (checkpoint, packed file, random),
//! and the forward pass over a batch of new positions of one sequence.

use std::sync::{Arc, Mutex, MutexGuard, TryLockError};

use rayon::prelude::*;

use super::cache::KvCache;
use super::checkpoint::{DType, SharedBytes, to_f32};
use super::config::DecoderSpec;
use super::layers;
use super::linear::{Int8Matrix, Linear, Precision, QuantizedRows};
use super::{Error, Result};
use crate::pack::{self, PackFile};

/// Fills row `j` of a matrix.
pub type RowFn<'a> = Box<dyn Fn(usize, &mut [f32]) + Sync + 'a>;

/// Where weights come from.
pub trait Source: Sync {
    /// A `rows × cols` matrix by rows.
    fn rows(&self, name: &str, rows: usize, cols: usize) -> Result<RowFn<'_>>;
    /// A vector (norm weight, bias).
    fn vector(&self, name: &str, len: usize) -> Result<Vec<f32>>;
    /// The token embedding table.
    fn embedding(&self, name: &str, rows: usize, cols: usize) -> Result<Embedding>;
}

/// Token embeddings, looked up one row per token.
pub enum Embedding {
    /// Rows in a file's bytes (the checkpoint's map), converted when looked up.
    Stored { owner: SharedBytes, start: usize, dtype: DType, rows: usize, cols: usize },
    /// Rows made from a seed when looked up (generated benchmark models).
    Random { seed: u64, std: f32, rows: usize, cols: usize },
}

impl Embedding {
    pub fn rows(&self) -> usize {
        match self {
            Embedding::Stored { rows, .. } | Embedding::Random { rows, .. } => *rows,
        }
    }

    pub fn lookup(&self, id: usize, out: &mut [f32]) {
        match self {
            Embedding::Stored { owner, start, dtype, cols, .. } => {
                let s = dtype.size() * cols;
                let bytes = &(**owner).as_ref()[start + id * s..start + (id + 1) * s];
                to_f32(bytes, *dtype, out);
            }
            Embedding::Random { seed, std, .. } => super::seeded::fill_row(*seed, *std, id, out),
        }
    }
}

/// One product of the stack: its name in packed files and the checkpoint tensors whose rows it
/// stacks (fused projections are their parts' rows one after the other).
struct LinearDef {
    name: String,
    k: usize,
    parts: Vec<(String, usize)>,
    bias: Option<Vec<(String, usize)>>,
}

impl LinearDef {
    fn n(&self) -> usize {
        self.parts.iter().map(|p| p.1).sum()
    }
}

fn linear_defs(s: &DecoderSpec) -> Vec<LinearDef> {
    let (h, qd, kvd, inter) = (s.hidden, s.q_dim(), s.kv_dim(), s.intermediate);
    let mut defs = Vec::new();
    for l in 0..s.layers {
        let p = format!("model.layers.{l}");
        let w = |m: &str| format!("{p}.{m}.weight");
        let b = |m: &str| format!("{p}.{m}.bias");
        defs.push(LinearDef {
            name: format!("layers.{l}.qkv"),
            k: h,
            parts: vec![(w("self_attn.q_proj"), qd), (w("self_attn.k_proj"), kvd), (w("self_attn.v_proj"), kvd)],
            bias: s
                .qkv_bias
                .then(|| vec![(b("self_attn.q_proj"), qd), (b("self_attn.k_proj"), kvd), (b("self_attn.v_proj"), kvd)]),
        });
        defs.push(LinearDef {
            name: format!("layers.{l}.o"),
            k: qd,
            parts: vec![(w("self_attn.o_proj"), h)],
            bias: s.o_bias.then(|| vec![(b("self_attn.o_proj"), h)]),
        });
        defs.push(LinearDef {
            name: format!("layers.{l}.gate_up"),
            k: h,
            parts: vec![(w("mlp.gate_proj"), inter), (w("mlp.up_proj"), inter)],
            bias: s.mlp_bias.then(|| vec![(b("mlp.gate_proj"), inter), (b("mlp.up_proj"), inter)]),
        });
        defs.push(LinearDef {
            name: format!("layers.{l}.down"),
            k: inter,
            parts: vec![(w("mlp.down_proj"), h)],
            bias: s.mlp_bias.then(|| vec![(b("mlp.down_proj"), h)]),
        });
    }
    let head = if s.tied_embeddings { EMBED } else { "lm_head.weight" };
    defs.push(LinearDef { name: "lm_head".into(), k: h, parts: vec![(head.into(), s.vocab)], bias: None });
    defs
}

const EMBED: &str = "model.embed_tokens.weight";

/// The rows of a fused product: row `j` of the stacked parts.
fn stacked_rows<'a>(src: &'a dyn Source, def: &LinearDef) -> Result<RowFn<'a>> {
    let mut parts = Vec::new();
    let mut start = 0;
    for (name, n) in &def.parts {
        parts.push((start, *n, src.rows(name, *n, def.k)?));
        start += n;
    }
    Ok(Box::new(move |j, out| {
        // The parts cover 0..n without gaps, so one always matches.
        if let Some((s, _, f)) = parts.iter().find(|(s, n, _)| j >= *s && j < s + n) {
            f(j - s, out)
        }
    }))
}

fn stacked_bias(src: &dyn Source, def: &LinearDef) -> Result<Option<Vec<f32>>> {
    let Some(parts) = &def.bias else { return Ok(None) };
    let mut b = Vec::with_capacity(def.n());
    for (name, n) in parts {
        b.extend(src.vector(name, *n)?);
    }
    Ok(Some(b))
}

/// Quantizes every product and streams it into a packed file (one matrix in memory at a time).
pub fn write_pack(
    src: &dyn Source,
    spec: &DecoderSpec,
    w: &mut pack::Writer,
    progress: &(dyn Fn(usize, usize) + Sync),
) -> Result<()> {
    let defs = linear_defs(spec);
    for (i, def) in defs.iter().enumerate() {
        progress(i, defs.len());
        let rows = stacked_rows(src, def)?;
        let m = Int8Matrix::quantize(def.k, def.n(), &rows);
        m.write(w, &def.name)?;
    }
    progress(defs.len(), defs.len());
    Ok(())
}

struct Layer {
    input_norm: Vec<f32>,
    qkv: Linear,
    o: Linear,
    post_norm: Vec<f32>,
    gate_up: Linear,
    down: Linear,
}

/// Which rows of logits a forward returns.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum LogitRows {
    /// None (feeding a prompt or re-synchronising a draft).
    None,
    /// The last new position only (plain decoding).
    Last,
    /// Every new position (verification of k drafts, teacher forcing).
    All,
}

/// Logits of some positions, row-major `rows × vocab`.
#[derive(Clone, Debug, PartialEq)]
pub struct Logits {
    pub vocab: usize,
    pub data: Vec<f32>,
}

impl Logits {
    pub fn new(vocab: usize, data: Vec<f32>) -> Logits {
        debug_assert!(
            vocab > 0 && data.len().is_multiple_of(vocab),
            "logits length must be a multiple of the row width"
        );
        Logits { vocab, data }
    }

    pub fn rows(&self) -> usize {
        self.data.len() / self.vocab.max(1)
    }

    pub fn row(&self, i: usize) -> &[f32] {
        &self.data[i * self.vocab..(i + 1) * self.vocab]
    }

    pub fn last(&self) -> &[f32] {
        self.row(self.rows() - 1)
    }

    /// The greedy choice: the first index of the largest value (as `torch.argmax`).
    pub fn argmax(&self, i: usize) -> u32 {
        super::pick::argmax(self.row(i)).0
    }

    /// Every row's greedy choice.
    pub fn argmaxes(&self) -> Vec<u32> {
        (0..self.rows()).map(|i| self.argmax(i)).collect()
    }
}

/// The weights of an LLM's decoder-only transformer, in one precision (the translation models'
/// decoder is the SSRU one of `marian::transformer`).
pub struct Decoder {
    pub spec: DecoderSpec,
    inv_freq: Vec<f32>,
    embed: Embedding,
    layers: Vec<Layer>,
    norm: Vec<f32>,
    lm_head: Linear,
    /// The output layer restricted to some vocabulary ids (a speculative draft's frequent
    /// tokens), with those ids: logits then have one column per kept id.
    narrowed: Option<(Linear, Vec<u32>)>,
}

impl Decoder {
    /// Builds the stack: products from `pack` if given (int8, memory-mapped), else made from the
    /// source in `precision`.
    pub fn load(
        src: &dyn Source,
        spec: &DecoderSpec,
        precision: Precision,
        pack: Option<&PackFile>,
    ) -> Result<Decoder> {
        let (h, qd, kvd, inter) = (spec.hidden, spec.q_dim(), spec.kv_dim(), spec.intermediate);
        let mut linears = Vec::new();
        for def in linear_defs(spec) {
            let bias = stacked_bias(src, &def)?;
            let lin = match pack {
                Some(f) => Linear::from_int8(Int8Matrix::read(f, &def.name, def.k, def.n())?, bias),
                None => Linear::build(def.k, def.n(), precision, bias, &stacked_rows(src, &def)?),
            };
            linears.push(lin);
        }
        let lm_head = linears.pop().expect("linear_defs ends with lm_head");
        let mut it = linears.into_iter();
        let mut layers = Vec::with_capacity(spec.layers);
        for l in 0..spec.layers {
            let p = format!("model.layers.{l}");
            let (qkv, o, gate_up, down) = (it.next(), it.next(), it.next(), it.next());
            let (Some(qkv), Some(o), Some(gate_up), Some(down)) = (qkv, o, gate_up, down) else {
                unreachable!("linear_defs has four products per layer")
            };
            debug_assert_eq!((qkv.n(), o.k(), gate_up.n(), down.k()), (qd + 2 * kvd, qd, 2 * inter, inter));
            layers.push(Layer {
                input_norm: src.vector(&format!("{p}.input_layernorm.weight"), h)?,
                post_norm: src.vector(&format!("{p}.post_attention_layernorm.weight"), h)?,
                qkv,
                o,
                gate_up,
                down,
            });
        }
        Ok(Decoder {
            spec: spec.clone(),
            inv_freq: spec.rope.inv_freq(spec.head_dim),
            embed: src.embedding(EMBED, spec.vocab, h)?,
            layers,
            norm: src.vector("model.norm.weight", h)?,
            lm_head,
            narrowed: None,
        })
    }

    /// Computes logits only for `ids` from now on (all rows again for `None`). The caller checks
    /// that every id is below the vocabulary.
    pub fn narrow_outputs(&mut self, ids: Option<Vec<u32>>) {
        self.narrowed = ids.map(|ids| (self.lm_head.select_outputs(&ids), ids));
    }

    /// The output layer a forward runs, and the vocabulary ids of its columns (`None`: all).
    fn head(&self) -> (&Linear, Option<&[u32]>) {
        match &self.narrowed {
            Some((l, ids)) => (l, Some(ids)),
            None => (&self.lm_head, None),
        }
    }

    /// The vocabulary id of logits column `index`.
    pub fn output_id(&self, index: u32) -> u32 {
        self.head().1.map_or(index, |ids| ids[index as usize])
    }

    /// Bytes of weights one forward reads (products, norms, one embedding row).
    pub fn weight_bytes(&self) -> usize {
        let per_layer: usize = self
            .layers
            .iter()
            .map(|l| {
                l.qkv.weight_bytes()
                    + l.o.weight_bytes()
                    + l.gate_up.weight_bytes()
                    + l.down.weight_bytes()
                    + 8 * self.spec.hidden
            })
            .sum();
        per_layer + self.head().0.weight_bytes() + 4 * self.spec.hidden
    }

    /// Every layer's products in the order a forward runs them (q|k|v, o, gate|up, down).
    pub(crate) fn layer_products(&self) -> impl Iterator<Item = &Linear> {
        self.layers.iter().flat_map(|l| [&l.qkv, &l.o, &l.gate_up, &l.down])
    }

    /// Runs `tokens` at positions `cache.len()..` and appends them to the cache.
    pub fn forward(&self, cache: &mut KvCache, tokens: &[u32], keep: LogitRows) -> Result<Logits> {
        let s = &self.spec;
        let past = cache.len;
        if cache.layers.len() != s.layers || cache.kv_heads != s.kv_heads || cache.head_dim != s.head_dim {
            return Err(Error::Cache);
        }
        if let Some(&bad) = tokens.iter().find(|&&t| t as usize >= self.embed.rows()) {
            return Err(Error::TokenId { id: bad, vocab: self.embed.rows() });
        }
        if past + tokens.len() > s.max_positions {
            return Err(Error::Position { len: past + tokens.len(), max: s.max_positions });
        }
        // `len` moves only on success: a failed product may leave layers written past it,
        // which is harmless, as those positions count as empty until written again.
        // The forward runs on one of rayon's workers, which then takes its share of every
        // product's tasks and waits for the others by spinning, not a sleeping caller woken
        // after each product (65 per token at Llama-3.2-1B's shape). Decode as a share of the
        // read bandwidth taken in turns with it, AMD EPYC VM, five runs of each alternating:
        // 94.2% → 97.3% on average.
        let logits = rayon::scope(|_| self.run(cache, tokens, keep))?;
        cache.len = past + tokens.len();
        Ok(logits)
    }

    fn run(&self, cache: &mut KvCache, tokens: &[u32], keep: LogitRows) -> Result<Logits> {
        let s = &self.spec;
        let (t, hd) = (tokens.len(), s.hidden);
        let (qd, kvd, inter) = (s.q_dim(), s.kv_dim(), s.intermediate);
        let past = cache.len;
        if t == 0 {
            return Ok(Logits { vocab: s.vocab, data: Vec::new() });
        }
        // Every buffer is written in full before it is read, so stale numbers of an earlier
        // forward never show through.
        let mut memory = WorkingMemory::lock();
        let Work { h, qkv, q, k, v, attn, o, gu, quantized, floats } = memory.get();
        let h = sized(h, t * hd);
        for (row, &id) in h.chunks_exact_mut(hd).zip(tokens) {
            self.embed.lookup(id as usize, row);
        }
        let kern = reseam_kernels::dispatch::kernels()?;
        let (cos, sin) = layers::rope_tables(&self.inv_freq, past..past + t);
        cache.reserve(t);
        let qkv = sized(qkv, t * (qd + 2 * kvd));
        let (q, k, v) = (sized(q, t * qd), sized(k, t * kvd), sized(v, t * kvd));
        let (attn, o, gu) = (sized(attn, t * qd), sized(o, t * hd), sized(gu, t * 2 * inter));
        let half = s.head_dim / 2;
        for (l, w) in self.layers.iter().enumerate() {
            // Norms and SwiGLU are made row by row as their products quantize them.
            let norm = |r: usize, row: &mut [f32]| {
                layers::rms_norm_row(&h[r * hd..(r + 1) * hd], &w.input_norm, s.rms_norm_eps, row)
            };
            w.qkv.forward_rows(t, &norm, qkv, quantized, floats)?;
            // Split each row's q | k | v and rotate q and k while the row is in L1.
            let split = |(r, (((row, q), k), v)): (usize, QkvRow)| {
                q.copy_from_slice(&row[..qd]);
                k.copy_from_slice(&row[qd..qd + kvd]);
                v.copy_from_slice(&row[qd + kvd..]);
                let (c, sn) = (&cos[r * half..(r + 1) * half], &sin[r * half..(r + 1) * half]);
                layers::rope_row(q, s.head_dim, c, sn);
                layers::rope_row(k, s.head_dim, c, sn);
            };
            if qkv.len() >= layers::PARALLEL_ELEMENTS {
                qkv.par_chunks_exact(qd + 2 * kvd)
                    .zip(q.par_chunks_exact_mut(qd))
                    .zip(k.par_chunks_exact_mut(kvd))
                    .zip(v.par_chunks_exact_mut(kvd))
                    .enumerate()
                    .for_each(split);
            } else {
                qkv.chunks_exact(qd + 2 * kvd)
                    .zip(q.chunks_exact_mut(qd))
                    .zip(k.chunks_exact_mut(kvd))
                    .zip(v.chunks_exact_mut(kvd))
                    .enumerate()
                    .for_each(split);
            }
            cache.append(l, past, k, v);
            let kv = layers::KvView { kt: &cache.layers[l].kt, v: &cache.layers[l].v, cap: cache.cap };
            layers::attention(kern, q, &kv, past, s.heads, s.kv_heads, s.head_dim, s.sliding_window, attn);
            w.o.forward_with(attn, t, o, quantized)?;
            layers::add_residual(h, o);
            let norm = |r: usize, row: &mut [f32]| {
                layers::rms_norm_row(&h[r * hd..(r + 1) * hd], &w.post_norm, s.rms_norm_eps, row)
            };
            w.gate_up.forward_rows(t, &norm, gu, quantized, floats)?;
            let swiglu = |r: usize, row: &mut [f32]| {
                let (g, u) = gu[r * 2 * inter..(r + 1) * 2 * inter].split_at(inter);
                kern.silu_mul(g, u, row);
            };
            w.down.forward_rows(t, &swiglu, o, quantized, floats)?;
            layers::add_residual(h, o);
        }
        let (head, _) = self.head();
        let width = head.n();
        let first = match keep {
            LogitRows::None => return Ok(Logits { vocab: width, data: Vec::new() }),
            LogitRows::Last => t - 1,
            LogitRows::All => 0,
        };
        let rows = t - first;
        let mut xn = vec![0f32; rows * hd];
        layers::rms_norm(&h[first * hd..], &self.norm, s.rms_norm_eps, &mut xn);
        let mut data = vec![0f32; rows * width];
        head.forward(&xn, rows, &mut data)?;
        Ok(Logits { vocab: width, data })
    }
}

/// The activations of a forward: allocated by the first forward that needs them, reused by
/// every later one (of any model), so a prefill does not fault in tens of megabytes of fresh
/// pages each time.
pub(crate) struct Work {
    h: Vec<f32>,
    qkv: Vec<f32>,
    q: Vec<f32>,
    k: Vec<f32>,
    v: Vec<f32>,
    attn: Vec<f32>,
    o: Vec<f32>,
    gu: Vec<f32>,
    quantized: QuantizedRows,
    /// The inputs of float products (f32, bf16 layers).
    floats: Vec<f32>,
}

/// The process's working memory, or a private one while another forward holds it (forwards
/// on several threads stay correct, only the second one allocates).
static WORKING_MEMORY: Mutex<Work> = Mutex::new(Work::new());

impl Work {
    /// No memory until a forward sizes the buffers.
    const fn new() -> Work {
        Work {
            h: Vec::new(),
            qkv: Vec::new(),
            q: Vec::new(),
            k: Vec::new(),
            v: Vec::new(),
            attn: Vec::new(),
            o: Vec::new(),
            gu: Vec::new(),
            quantized: QuantizedRows::new(),
            floats: Vec::new(),
        }
    }
}

enum WorkingMemory {
    Shared(MutexGuard<'static, Work>),
    Private(Box<Work>),
}

impl WorkingMemory {
    fn lock() -> WorkingMemory {
        match WORKING_MEMORY.try_lock() {
            Ok(g) => WorkingMemory::Shared(g),
            // A panic in another forward leaves buffers that are overwritten before use anyway.
            Err(TryLockError::Poisoned(p)) => WorkingMemory::Shared(p.into_inner()),
            Err(TryLockError::WouldBlock) => WorkingMemory::Private(Box::new(Work::new())),
        }
    }

    fn get(&mut self) -> &mut Work {
        match self {
            WorkingMemory::Shared(g) => g,
            WorkingMemory::Private(w) => w,
        }
    }
}

/// The first `n` elements of `v`, grown if needed (contents unspecified).
fn sized(v: &mut Vec<f32>, n: usize) -> &mut [f32] {
    if v.len() < n {
        v.resize(n, 0.0);
    }
    &mut v[..n]
}

/// One token's fused q|k|v projection and where its three parts go.
type QkvRow<'a> = (((&'a [f32], &'a mut [f32]), &'a mut [f32]), &'a mut [f32]);

/// A checkpoint as a weight source.
impl Source for super::checkpoint::Checkpoint {
    fn rows(&self, name: &str, rows: usize, cols: usize) -> Result<RowFn<'_>> {
        let t = self.tensor(name, &[rows, cols])?;
        Ok(Box::new(move |j, out| t.row_f32(j, out)))
    }

    fn vector(&self, name: &str, len: usize) -> Result<Vec<f32>> {
        Ok(self.tensor(name, &[len])?.to_f32())
    }

    fn embedding(&self, name: &str, rows: usize, cols: usize) -> Result<Embedding> {
        let t = self.tensor(name, &[rows, cols])?;
        let dtype = t.dtype;
        let (owner, start, _) = self.shared(name).expect("tensor() found it");
        Ok(Embedding::Stored { owner: Arc::clone(&owner), start, dtype, rows, cols })
    }
}
