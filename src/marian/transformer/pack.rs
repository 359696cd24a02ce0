//! A Marian model as a pack: every array the forward pass reads, in the form it reads it.
//! Products are written as they run (fused Q/K/V and SSRU matrices already side by side), so
//! loading a pack borrows them from the map and only recomputes per-column multipliers.

use serde_json::{Value, json};

use super::{DecoderLayer, EncoderLayer, Ffn, Fused, Marian, Norm, OutputLayer, WeightFormat, weights::Embedding};
use crate::marian::config::Config;
use crate::marian::layers::linear::{ActScale, Int8Linear, Linear};
use crate::marian::layers::position::PositionTable;
use crate::pack::{self, Dtype, F32s, PackFile, Writer};

fn not_int8(what: &str) -> pack::Error {
    pack::Error::Format { path: "<model>".into(), why: format!("{what} is not int8; only int8 models are packed") }
}

fn write_linear(w: &mut Writer, name: &str, l: &Linear) -> Result<Value, pack::Error> {
    match l {
        Linear::Int8(l) => l.write_pack(w, name),
        Linear::Float(_) => Err(not_int8(name)),
    }
}

fn write_fused(w: &mut Writer, name: &str, f: &Fused) -> Result<Value, pack::Error> {
    match f {
        Fused::One(l) => Ok(json!({ "one": write_linear(w, name, l)? })),
        Fused::Apart(ls) => {
            let parts = ls.iter().enumerate().map(|(i, l)| write_linear(w, &format!("{name}.{i}"), l));
            Ok(json!({ "apart": parts.collect::<Result<Vec<_>, _>>()? }))
        }
    }
}

fn write_norm(w: &mut Writer, name: &str, n: &Norm) -> Result<(), pack::Error> {
    w.add_f32(&format!("{name}.gamma"), &[n.gamma.len()], &n.gamma)?;
    w.add_f32(&format!("{name}.beta"), &[n.beta.len()], &n.beta)
}

fn read_linear(f: &PackFile, name: &str, desc: &Value) -> Result<Linear, pack::Error> {
    Ok(Linear::Int8(Int8Linear::read_pack(f, name, desc)?))
}

fn read_fused(f: &PackFile, name: &str, desc: &Value) -> Result<Fused, pack::Error> {
    if let Some(one) = desc.get("one") {
        return Ok(Fused::One(read_linear(f, name, one)?));
    }
    let apart = desc.get("apart").and_then(|a| a.as_array()).ok_or_else(|| bad(f, &format!("{name}: no products")))?;
    let ls = apart.iter().enumerate().map(|(i, d)| read_linear(f, &format!("{name}.{i}"), d));
    Ok(Fused::Apart(ls.collect::<Result<_, _>>()?))
}

fn read_norm(f: &PackFile, name: &str, d: usize) -> Result<Norm, pack::Error> {
    Ok(Norm { gamma: f.f32s(&format!("{name}.gamma"), &[d])?, beta: f.f32s(&format!("{name}.beta"), &[d])? })
}

fn bad(f: &PackFile, why: &str) -> pack::Error {
    pack::Error::Format { path: f.path().to_path_buf(), why: why.into() }
}

fn act_json(a: ActScale) -> Value {
    match a {
        ActScale::Fixed(q) => json!(q.to_bits()),
        ActScale::Dynamic => Value::Null,
    }
}

fn write_embedding(w: &mut Writer, name: &str, e: &Embedding, rows: usize) -> Result<Value, pack::Error> {
    match e {
        Embedding::Int8 { rows: bytes, recip, cols } => {
            w.add(name, Dtype::U8, &[rows, *cols], bytes)?;
            Ok(json!({ "recip": recip.to_bits(), "cols": cols }))
        }
        Embedding::F32(_) => Err(not_int8(name)),
    }
}

fn read_embedding(f: &PackFile, name: &str, rows: usize, d: usize, desc: &Value) -> Result<Embedding, pack::Error> {
    let recip = desc["recip"].as_u64().ok_or_else(|| bad(f, &format!("{name}: no multiplier")))? as u32;
    Ok(Embedding::Int8 { rows: f.shared_bytes(name, Dtype::U8, &[rows, d])?, recip: f32::from_bits(recip), cols: d })
}

impl Marian {
    /// Writes the model's arrays into `w`; returns the description [`Marian::read_pack`] needs.
    pub fn write_pack(&self, w: &mut Writer) -> Result<Value, pack::Error> {
        let c = &self.config;
        let src = write_embedding(w, "src_emb", &self.src_emb, c.src_vocab)?;
        let shared_emb = matches!((&self.src_emb, &self.trg_emb), (Embedding::Int8 { rows: a, .. }, Embedding::Int8 { rows: b, .. }) if std::ptr::eq(a.as_ptr(), b.as_ptr()));
        let trg = if shared_emb { Value::Null } else { write_embedding(w, "trg_emb", &self.trg_emb, c.trg_vocab)? };
        let mut enc = Vec::new();
        for (i, l) in self.enc.iter().enumerate() {
            let p = format!("enc{i}");
            write_norm(w, &format!("{p}.ln_att"), &l.ln_att)?;
            write_norm(w, &format!("{p}.ln_ffn"), &l.ln_ffn)?;
            enc.push(json!({
                "name": l.name,
                "qkv": write_fused(w, &format!("{p}.qkv"), &l.qkv)?,
                "wo": write_linear(w, &format!("{p}.wo"), &l.wo)?,
                "w1": write_linear(w, &format!("{p}.w1"), &l.ffn.w1)?,
                "w2": write_linear(w, &format!("{p}.w2"), &l.ffn.w2)?,
            }));
        }
        let mut dec = Vec::new();
        for (i, l) in self.dec.iter().enumerate() {
            let p = format!("dec{i}");
            for (n, norm) in [("ln_rnn", &l.ln_rnn), ("ln_ctx", &l.ln_ctx), ("ln_ffn", &l.ln_ffn)] {
                write_norm(w, &format!("{p}.{n}"), norm)?;
            }
            dec.push(json!({
                "name": l.name,
                "ssru": write_fused(w, &format!("{p}.ssru"), &l.ssru)?,
                "q": write_linear(w, &format!("{p}.q"), &l.q)?,
                "kv": write_fused(w, &format!("{p}.kv"), &l.kv)?,
                "wo": write_linear(w, &format!("{p}.wo"), &l.wo)?,
                "w1": write_linear(w, &format!("{p}.w1"), &l.ffn.w1)?,
                "w2": write_linear(w, &format!("{p}.w2"), &l.ffn.w2)?,
            }));
        }
        let out = match &self.out {
            OutputLayer::Int8 { b, qb, act, bias, bprep } => {
                w.add("out.b", Dtype::PackedI8, &[b.k(), b.n()], b.as_bytes())?;
                w.add_i32("out.col_sums", &[b.n()], b.col_sums())?;
                if let Some(bias) = bias {
                    w.add_f32("out.bias", &[bias.len()], bias)?;
                }
                // Vocabulary-sized: mapped rather than prepared into the heap at every load.
                if !bprep.is_empty() {
                    w.add_f32("out.bprep", &[bprep.len()], bprep)?;
                }
                json!({
                    "k": b.k(), "n": b.n(), "qb": qb.to_bits(), "act": act_json(*act), "bias": bias.is_some(),
                    "bprep": !bprep.is_empty(),
                })
            }
            OutputLayer::Float { .. } => return Err(not_int8("the output layer")),
        };
        let format = match self.format {
            WeightFormat::Int8Alphas => "int8-alphas",
            WeightFormat::Int8Dynamic => "int8-dynamic",
            WeightFormat::Float32 => return Err(not_int8("the model")),
        };
        Ok(json!({ "format": format, "src_emb": src, "trg_emb": trg, "enc": enc, "dec": dec, "out": out }))
    }

    /// The model [`Marian::write_pack`] wrote, its large arrays borrowed from `f`'s map.
    pub fn read_pack(config: Config, yml: &str, f: &PackFile, desc: &Value) -> Result<Marian, pack::Error> {
        let d = config.dim;
        let src_emb = read_embedding(f, "src_emb", config.src_vocab, d, &desc["src_emb"])?;
        let trg_emb = match &desc["trg_emb"] {
            Value::Null => src_emb.clone(),
            t => read_embedding(f, "trg_emb", config.trg_vocab, d, t)?,
        };
        let list = |key: &str| desc[key].as_array().cloned().ok_or_else(|| bad(f, &format!("no {key} layers")));
        let (enc_d, dec_d) = (list("enc")?, list("dec")?);
        if enc_d.len() != config.enc_depth || dec_d.len() != config.dec_depth {
            return Err(bad(f, "layer counts differ from the model's configuration"));
        }
        let name = |v: &Value| v["name"].as_str().unwrap_or_default().to_string();
        let mut enc = Vec::new();
        for (i, l) in enc_d.iter().enumerate() {
            let p = format!("enc{i}");
            enc.push(EncoderLayer {
                name: name(l),
                qkv: read_fused(f, &format!("{p}.qkv"), &l["qkv"])?,
                wo: read_linear(f, &format!("{p}.wo"), &l["wo"])?,
                ln_att: read_norm(f, &format!("{p}.ln_att"), d)?,
                ffn: Ffn {
                    w1: read_linear(f, &format!("{p}.w1"), &l["w1"])?,
                    w2: read_linear(f, &format!("{p}.w2"), &l["w2"])?,
                },
                ln_ffn: read_norm(f, &format!("{p}.ln_ffn"), d)?,
            });
        }
        let mut dec = Vec::new();
        for (i, l) in dec_d.iter().enumerate() {
            let p = format!("dec{i}");
            dec.push(DecoderLayer {
                name: name(l),
                ssru: read_fused(f, &format!("{p}.ssru"), &l["ssru"])?,
                ln_rnn: read_norm(f, &format!("{p}.ln_rnn"), d)?,
                q: read_linear(f, &format!("{p}.q"), &l["q"])?,
                kv: read_fused(f, &format!("{p}.kv"), &l["kv"])?,
                wo: read_linear(f, &format!("{p}.wo"), &l["wo"])?,
                ln_ctx: read_norm(f, &format!("{p}.ln_ctx"), d)?,
                ffn: Ffn {
                    w1: read_linear(f, &format!("{p}.w1"), &l["w1"])?,
                    w2: read_linear(f, &format!("{p}.w2"), &l["w2"])?,
                },
                ln_ffn: read_norm(f, &format!("{p}.ln_ffn"), d)?,
            });
        }
        let o = &desc["out"];
        let num = |v: &Value, what: &str| v.as_u64().ok_or_else(|| bad(f, &format!("output layer: no {what}")));
        let (k, n) = (num(&o["k"], "k")? as usize, num(&o["n"], "n")? as usize);
        let b = f.packed("out.b", k, n, f.i32s("out.col_sums", &[n])?)?;
        let qb = f32::from_bits(num(&o["qb"], "qb")? as u32);
        let act = match &o["act"] {
            Value::Null => ActScale::Dynamic,
            v => ActScale::Fixed(f32::from_bits(num(v, "act")? as u32)),
        };
        let mapped = |key: &str, name: &str| -> Result<Option<F32s>, pack::Error> {
            if o[key].as_bool() == Some(true) { Ok(Some(F32s::mapped(f, name, n)?)) } else { Ok(None) }
        };
        let out = OutputLayer::from_parts(b, qb, act, mapped("bias", "out.bias")?, mapped("bprep", "out.bprep")?);
        let format = match desc["format"].as_str() {
            Some("int8-alphas") => WeightFormat::Int8Alphas,
            Some("int8-dynamic") => WeightFormat::Int8Dynamic,
            other => return Err(bad(f, &format!("unknown weight format {other:?}"))),
        };
        Ok(Marian {
            emb_scale: (d as f32).sqrt(),
            positions: PositionTable::new(d, 512),
            yml: yml.to_string(),
            config,
            format,
            src_emb,
            trg_emb,
            enc,
            dec,
            out,
        })
    }
}
