//! Random-weight translation models in Mozilla's int8 layout at Firefox's real architectures, so
//! that loading, packing and memory can be measured at real sizes without downloading models.
//!
//! A model is the three files of a Firefox model folder: `model.<pair>.intgemm.alphas.bin`
//! (every tensor of `../shared/docs/marian-models.md` §3.9 under its Marian name: intgemm8
//! matrices, transposed except `Wemb`, each followed by its quantization multiplier; float32
//! biases, layer norms and `*_QuantMultA` activation multipliers, equal within each fused group
//! as marian-conv writes them; `Wemb_QuantMultA` as intgemm8 [1,1]; the model.yml last),
//! `vocab.<pair>.spm` (32,000 pieces, see [`crate::vocab::synthetic`]) and
//! `lex.50.50.<pair>.s2t.bin`. The weights are uniform int8 with multipliers that keep every
//! layer's values at the scale of a trained model's (unit-variance activations, logits of a
//! few units), so the arithmetic runs in its normal range. The same seed gives the same bytes.

use std::borrow::Cow;

use super::binary::{self, Item, ItemType};
use super::shortlist;
use crate::vocab::VocabError;
use crate::vocab::synthetic as vocab;

/// One of Firefox's student architectures (mozilla/translations
/// `pipeline/train/configs/model/student.*.yml`); every one has 6 encoder layers and 8 heads.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Arch {
    pub name: &'static str,
    pub dim: usize,
    pub dec_depth: usize,
    pub ffn: usize,
}

pub const ARCHS: [Arch; 3] = [
    Arch { name: "tiny", dim: 256, dec_depth: 2, ffn: 1536 },
    Arch { name: "base-memory", dim: 384, dec_depth: 4, ffn: 1536 },
    Arch { name: "base", dim: 512, dec_depth: 2, ffn: 2048 },
];

/// The architectures' names, in [`ARCHS`]' order.
pub const NAMES: [&str; 3] = ["tiny", "base-memory", "base"];

/// Firefox's vocabulary size for most pairs (one shared vocabulary).
pub const VOCAB: usize = 32_000;
const ENC_DEPTH: usize = 6;
const HEADS: usize = 8;

pub fn arch(name: &str) -> Option<Arch> {
    ARCHS.iter().copied().find(|a| a.name == name)
}

/// SplitMix64: small, fast, and the same numbers on every machine.
pub struct Rng(u64);

impl Rng {
    pub fn new(seed: u64) -> Rng {
        Rng(seed)
    }

    pub fn next_u64(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9e37_79b9_7f4a_7c15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
        z ^ (z >> 31)
    }

    /// Uniform in [-1, 1).
    pub fn unit(&mut self) -> f32 {
        (self.next_u64() >> 40) as f32 / (1u64 << 23) as f32 - 1.0
    }

    /// Uniform in `0..n`.
    pub fn below(&mut self, n: usize) -> usize {
        (((self.next_u64() >> 32) * n as u64) >> 32) as usize
    }
}

/// A seed for one file of one model, so that models and files differ but never by chance.
fn seed_of(seed: u64, pair: &str, file: &str) -> u64 {
    let mut h = seed ^ 0xcbf2_9ce4_8422_2325;
    for b in pair.bytes().chain([0]).chain(file.bytes()) {
        h = (h ^ u64::from(b)).wrapping_mul(0x100_0000_01b3);
    }
    h
}

/// The standard deviation of uniform int8 values in [-127, 127].
const INT8_STD: f32 = 73.6;

struct Builder {
    rng: Rng,
    items: Vec<Item<'static>>,
}

impl Builder {
    fn f32s(&mut self, name: String, shape: Vec<usize>, values: &[f32]) {
        let data = values.iter().flat_map(|v| v.to_le_bytes()).collect();
        self.items.push(Item { name, ty: ItemType::Float32, shape, data: Cow::Owned(data) });
    }

    /// `n` values `center ± spread`, shape `[1, n]`.
    fn vector(&mut self, name: String, n: usize, center: f32, spread: f32) {
        let v: Vec<f32> = (0..n).map(|_| center + spread * self.rng.unit()).collect();
        self.f32s(name, vec![1, n], &v);
    }

    /// An intgemm8 matrix `[k, n]` of uniform int8 values whose float values (int8 / q) have
    /// the standard deviation 1/sqrt(k): unit-variance inputs give unit-variance outputs.
    fn int8(&mut self, name: String, k: usize, n: usize) {
        let mut data = Vec::with_capacity(k * n + 4);
        while data.len() < k * n {
            let r = self.rng.next_u64().to_le_bytes();
            let take = (k * n - data.len()).min(8);
            data.extend(r[..take].iter().map(|&x| (((u32::from(x) * 255) >> 8) as i32 - 127) as i8 as u8));
        }
        let q = INT8_STD * (k as f32).sqrt();
        data.extend_from_slice(&q.to_le_bytes());
        self.items.push(Item { name, ty: ItemType::Intgemm8, shape: vec![k, n], data: Cow::Owned(data) });
    }

    /// An activation multiplier as the quantizer writes it: 127 over the activations' range
    /// (here 3.5 to 4.5 units).
    fn alpha(&mut self) -> f32 {
        127.0 / (4.0 + 0.5 * self.rng.unit())
    }

    /// Weight `w` `[k, n]` with bias `b` (unless `None`) and activation multiplier `alpha`.
    fn linear(&mut self, w: &str, b: Option<&str>, k: usize, n: usize, alpha: f32) {
        self.int8(w.to_string(), k, n);
        self.f32s(format!("{w}_QuantMultA"), vec![1, 1], &[alpha]);
        if let Some(b) = b {
            self.vector(b.to_string(), n, 0.0, 0.05);
        }
    }

    fn norm(&mut self, prefix: &str, d: usize) {
        self.vector(format!("{prefix}_ln_scale"), d, 1.0, 0.1);
        self.vector(format!("{prefix}_ln_bias"), d, 0.0, 0.05);
    }

    fn ffn(&mut self, p: &str, d: usize, ffn: usize) {
        let (a1, a2) = (self.alpha(), self.alpha());
        self.linear(&format!("{p}_ffn_W1"), Some(&format!("{p}_ffn_b1")), d, ffn, a1);
        self.linear(&format!("{p}_ffn_W2"), Some(&format!("{p}_ffn_b2")), ffn, d, a2);
        self.norm(&format!("{p}_ffn_ffn"), d);
    }
}

/// The model.yml of `arch`, with the options Marian writes for Firefox's students.
fn yml(arch: &Arch, vocab: usize) -> String {
    format!(
        "bert-train-type-embeddings: true\nbert-type-vocab-size: 2\ndec-cell: ssru\ndec-cell-base-depth: 2\n\
         dec-cell-high-depth: 1\ndec-depth: {dec}\ndim-emb: {dim}\ndim-rnn: 1024\ndim-vocabs:\n  - {vocab}\n  - {vocab}\n\
         enc-cell: gru\nenc-cell-depth: 1\nenc-depth: {ENC_DEPTH}\nenc-type: bidirectional\n\
         layer-normalization: false\noutput-omit-bias: false\nright-left: false\nskip: false\n\
         tied-embeddings: false\ntied-embeddings-all: true\ntied-embeddings-src: false\n\
         transformer-aan-activation: swish\ntransformer-aan-depth: 2\ntransformer-aan-nogate: false\n\
         transformer-decoder-autoreg: rnn\ntransformer-decoder-dim-ffn: 0\ntransformer-decoder-ffn-depth: 0\n\
         transformer-dim-aan: 2048\ntransformer-dim-ffn: {ffn}\ntransformer-disable-position-embeddings: false\n\
         transformer-ffn-activation: relu\ntransformer-ffn-depth: 2\ntransformer-heads: {HEADS}\n\
         transformer-no-projection: false\ntransformer-pool: false\ntransformer-postprocess: dan\n\
         transformer-postprocess-emb: d\ntransformer-postprocess-top: \"\"\ntransformer-preprocess: \"\"\n\
         transformer-train-position-embeddings: false\ntype: transformer\nversion: reseam synthetic {name}\n",
        dec = arch.dec_depth,
        dim = arch.dim,
        ffn = arch.ffn,
        name = arch.name,
    )
}

/// The bytes of a random `model.*.intgemm.alphas.bin` of `arch` with a `vocab`-piece shared
/// vocabulary.
pub fn model_file(arch: &Arch, vocab: usize, seed: u64) -> Vec<u8> {
    let d = arch.dim;
    let mut b = Builder { rng: Rng::new(seed), items: Vec::new() };
    // Embedding rows of standard deviation 1/sqrt(d): the encoder scales them by sqrt(d).
    b.int8("Wemb".into(), vocab, d);
    let out_alpha = b.alpha();
    let q = 127.0 / out_alpha;
    let mut data = vec![127u8];
    data.extend_from_slice(&q.to_le_bytes());
    b.items.push(Item { name: "Wemb_QuantMultA".into(), ty: ItemType::Intgemm8, shape: vec![1, 1], data: data.into() });
    // Marian's value of Wemb_QuantMultA once dequantized (int8 127 · 1/q).
    b.f32s("none_QuantMultA".into(), vec![1, 1], &[127.0 * (1.0 / q)]);
    b.vector("decoder_ff_logit_out_b".into(), vocab, 0.0, 0.5);
    for l in 1..=ENC_DEPTH {
        let p = format!("encoder_l{l}_self");
        let (qkv, wo) = (b.alpha(), b.alpha());
        for w in ["q", "k", "v"] {
            b.linear(&format!("{p}_W{w}"), Some(&format!("{p}_b{w}")), d, d, qkv);
        }
        b.linear(&format!("{p}_Wo"), Some(&format!("{p}_bo")), d, d, wo);
        b.norm(&format!("{p}_Wo"), d);
        b.ffn(&format!("encoder_l{l}"), d, arch.ffn);
    }
    for l in 1..=arch.dec_depth {
        let p = format!("decoder_l{l}");
        let ssru = b.alpha();
        b.linear(&format!("{p}_rnn_W"), None, d, d, ssru);
        b.linear(&format!("{p}_rnn_Wf"), Some(&format!("{p}_rnn_bf")), d, d, ssru);
        b.norm(&format!("{p}_rnn_ffn"), d);
        let c = format!("{p}_context");
        let (q, kv, wo) = (b.alpha(), b.alpha(), b.alpha());
        b.linear(&format!("{c}_Wq"), Some(&format!("{c}_bq")), d, d, q);
        b.linear(&format!("{c}_Wk"), Some(&format!("{c}_bk")), d, d, kv);
        b.linear(&format!("{c}_Wv"), Some(&format!("{c}_bv")), d, d, kv);
        b.linear(&format!("{c}_Wo"), Some(&format!("{c}_bo")), d, d, wo);
        b.norm(&format!("{c}_Wo"), d);
        b.ffn(&p, d, arch.ffn);
    }
    // marian-conv writes its items sorted by name, the model.yml last.
    let mut items = b.items;
    items.sort_by(|x, y| x.name.cmp(&y.name));
    let mut text = yml(arch, vocab).into_bytes();
    text.push(0);
    items.push(Item {
        name: "special:model.yml".into(),
        ty: ItemType::Int8,
        shape: vec![text.len()],
        data: text.into(),
    });
    binary::write(&items)
}

/// A random `lex.50.50.*.s2t.bin`: 0 to 50 target ids per source piece.
pub fn shortlist_file(vocab: usize, seed: u64) -> Vec<u8> {
    let mut rng = Rng::new(seed);
    let lists: Vec<Vec<u32>> = (0..vocab)
        .map(|_| {
            let mut l: Vec<u32> = (0..rng.below(51)).map(|_| rng.below(vocab) as u32).collect();
            l.sort_unstable();
            l.dedup();
            l
        })
        .collect();
    shortlist::write(50, 50, &lists)
}

/// A random `vocab.*.spm` of `vocab` pieces: the fixture's pieces, then made-up words.
pub fn vocab_file(vocab: usize, seed: u64) -> Result<Vec<u8>, VocabError> {
    let mut rng = Rng::new(seed);
    vocab::extend(vocab::BASE, vocab, || {
        let mut s = String::new();
        if rng.below(5) != 0 {
            s.push('▁');
        }
        for _ in 0..2 + rng.below(8) {
            s.push((b'a' + rng.below(26) as u8) as char);
        }
        s
    })
}

/// The files of a random `from`→`to` model of `arch`: (file name, bytes), in the names
/// Firefox's model folders use.
pub fn files(from: &str, to: &str, arch: &Arch, seed: u64) -> Result<Vec<(String, Vec<u8>)>, VocabError> {
    let pair = format!("{from}{to}");
    Ok(vec![
        (format!("model.{pair}.intgemm.alphas.bin"), model_file(arch, VOCAB, seed_of(seed, &pair, "model"))),
        (format!("vocab.{pair}.spm"), vocab_file(VOCAB, seed_of(seed, &pair, "vocab"))?),
        (format!("lex.50.50.{pair}.s2t.bin"), shortlist_file(VOCAB, seed_of(seed, &pair, "lex"))),
    ])
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_architecture_builds_with_its_shapes_and_multipliers() {
        for a in ARCHS {
            // A small vocabulary keeps the test quick; the layers are the real size.
            let bytes = model_file(&a, 512, 7);
            assert_eq!(bytes, model_file(&a, 512, 7), "{}: the same seed gives the same file", a.name);
            let m = crate::marian::marian_from_bytes(&bytes, std::path::Path::new("m.bin")).unwrap();
            assert_eq!((m.config.dim, m.config.dec_depth, m.config.enc_ffn), (a.dim, a.dec_depth, a.ffn), "{}", a.name);
            assert_eq!((m.config.enc_depth, m.config.heads, m.config.src_vocab), (6, 8, 512));
            assert_eq!(m.format, crate::marian::transformer::WeightFormat::Int8Alphas);
            assert!(m.fused_products(), "{}: equal multipliers in each fused group", a.name);
        }
        let tiny = model_file(&ARCHS[0], VOCAB, 1).len() as f64 / 1e6;
        // Firefox's tiny files are 17.14 MB (marian-models.md §1.2).
        assert!((16.5..17.8).contains(&tiny), "tiny is {tiny} MB");
    }

    #[test]
    fn the_shortlist_reads_back() {
        let b = shortlist_file(300, 3);
        let sl = shortlist::Shortlist::parse(&b, 300, 300).unwrap();
        assert_eq!((sl.first_num(), sl.best_num()), (50, 50));
    }

    #[test]
    fn numbers_are_uniform_and_fixed() {
        let mut r = Rng::new(5);
        let v: Vec<f32> = (0..10_000).map(|_| r.unit()).collect();
        assert!(v.iter().all(|x| (-1.0..1.0).contains(x)));
        let mean = v.iter().sum::<f32>() / v.len() as f32;
        assert!(mean.abs() < 0.03, "{mean}");
        assert!((0..1000).all(|_| r.below(7) < 7));
        assert_eq!(Rng::new(5).next_u64(), Rng::new(5).next_u64());
        assert_ne!(seed_of(1, "esen", "model"), seed_of(1, "enes", "model"));
    }
}
