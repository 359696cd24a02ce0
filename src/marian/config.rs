//! The architecture, read from `special:model.yml`: every size comes from here (and is checked
//! against the weights), and options reseam does not implement are refused by name.

use std::collections::BTreeMap;

use super::yml::Value;

/// A model.yml option that is missing, malformed or names something reseam does not implement.
#[derive(Debug, thiserror::Error, PartialEq, Eq)]
#[error("model.yml option `{key}`: {message}")]
pub struct ConfigError {
    pub key: String,
    pub message: String,
}

crate::error::fault!(ConfigError);

impl ConfigError {
    /// A damaged or unsupported model.yml, never the caller's fault.
    pub fn is_usage(&self) -> bool {
        false
    }
}

/// The Marian transformer variant Firefox ships: post-norm encoder, SSRU decoder.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Config {
    pub dim: usize,
    pub heads: usize,
    pub enc_depth: usize,
    pub dec_depth: usize,
    pub enc_ffn: usize,
    /// Decoder FFN width from the yml (0 = same as the encoder's); the weights decide in the end.
    pub dec_ffn: usize,
    pub src_vocab: usize,
    pub trg_vocab: usize,
    /// One matrix for source embedding, target embedding and output (`Wemb`).
    pub tied_all: bool,
    pub output_bias: bool,
}

struct Reader<'a>(&'a BTreeMap<String, Value>);

impl Reader<'_> {
    fn fail<T>(&self, key: &str, message: impl Into<String>) -> Result<T, ConfigError> {
        Err(ConfigError { key: key.into(), message: message.into() })
    }

    fn scalar(&self, key: &str) -> Result<Option<&str>, ConfigError> {
        match self.0.get(key) {
            None => Ok(None),
            Some(Value::Scalar(s)) => Ok(Some(s.as_str())),
            Some(Value::List(l)) if l.is_empty() => Ok(Some("")),
            Some(_) => self.fail(key, "expected a single value"),
        }
    }

    fn required(&self, key: &str) -> Result<&str, ConfigError> {
        match self.scalar(key)? {
            Some(s) => Ok(s),
            None => self.fail(key, "missing; is this a Marian transformer model?"),
        }
    }

    fn usize(&self, key: &str, default: Option<usize>) -> Result<usize, ConfigError> {
        match (self.scalar(key)?, default) {
            (Some(s), _) => {
                s.trim().parse().or_else(|_| self.fail(key, format!("{s:?} is not a non-negative integer")))
            }
            (None, Some(d)) => Ok(d),
            (None, None) => self.required(key).map(|_| 0),
        }
    }

    fn bool(&self, key: &str, default: bool) -> Result<bool, ConfigError> {
        match self.scalar(key)? {
            None => Ok(default),
            Some("true" | "True" | "1") => Ok(true),
            Some("false" | "False" | "0") => Ok(false),
            Some(s) => self.fail(key, format!("{s:?} is not true or false")),
        }
    }

    /// A string option that must have one of the supported values. Missing means `default`.
    fn expect(&self, key: &str, default: &str, supported: &[&str]) -> Result<(), ConfigError> {
        let v = self.scalar(key)?.unwrap_or(default);
        if supported.contains(&v) {
            Ok(())
        } else {
            self.fail(
                key,
                format!("{v:?} is not supported (reseam runs {:?}, the Firefox Translations layout)", supported),
            )
        }
    }
}

impl Config {
    pub fn from_yml(map: &BTreeMap<String, Value>) -> Result<Config, ConfigError> {
        let r = Reader(map);
        r.expect("type", "", &["transformer"])?;
        r.expect("transformer-decoder-autoreg", "self-attention", &["rnn"])?;
        r.expect("dec-cell", "gru", &["ssru"])?;
        r.expect("transformer-ffn-activation", "swish", &["relu"])?;
        r.expect("transformer-postprocess", "dan", &["dan"])?;
        r.expect("transformer-preprocess", "", &[""])?;
        r.expect("transformer-postprocess-emb", "d", &["d", ""])?;
        r.expect("transformer-postprocess-top", "", &[""])?;
        for (key, must) in [
            ("transformer-train-position-embeddings", false),
            ("transformer-disable-position-embeddings", false),
            ("transformer-no-projection", false),
            ("layer-normalization", false),
            ("transformer-alibi-shift", false),
            ("transformer-pool", false),
            ("right-left", false),
        ] {
            if r.bool(key, must)? != must {
                return r.fail(key, format!("{} is not supported", !must));
            }
        }
        let ffn_depth = r.usize("transformer-ffn-depth", Some(2))?;
        if ffn_depth != 2 {
            return r.fail("transformer-ffn-depth", format!("{ffn_depth} (only 2, as in every Firefox model)"));
        }
        let dec_ffn_depth = r.usize("transformer-decoder-ffn-depth", Some(0))?;
        if dec_ffn_depth != 0 && dec_ffn_depth != 2 {
            return r.fail("transformer-decoder-ffn-depth", format!("{dec_ffn_depth} (only 2)"));
        }
        let vocabs = match map.get("dim-vocabs") {
            Some(Value::List(l)) if l.len() == 2 => {
                let p = |s: &String| s.trim().parse::<usize>().ok().filter(|&v| v > 1);
                match (p(&l[0]), p(&l[1])) {
                    (Some(a), Some(b)) => (a, b),
                    _ => return r.fail("dim-vocabs", format!("{l:?} are not vocabulary sizes")),
                }
            }
            _ => return r.fail("dim-vocabs", "expected a list of two sizes (source, target)"),
        };
        let dim = r.usize("dim-emb", None)?;
        let heads = r.usize("transformer-heads", Some(8))?;
        if dim == 0 || heads == 0 || dim % heads != 0 {
            return r.fail("dim-emb", format!("{dim} does not split into {heads} heads"));
        }
        // Every Firefox model has a multiple of 8; the SIMD order of operations reseam reproduces
        // (sigmoid, layer norm) is only defined for that.
        if dim % 8 != 0 {
            return r.fail("dim-emb", format!("{dim} is not a multiple of 8"));
        }
        let enc_depth = r.usize("enc-depth", None)?;
        let dec_depth = r.usize("dec-depth", None)?;
        if enc_depth == 0 || dec_depth == 0 || enc_depth > 64 || dec_depth > 64 {
            return r.fail("enc-depth", format!("depths {enc_depth}/{dec_depth} are not plausible"));
        }
        let enc_ffn = r.usize("transformer-dim-ffn", None)?;
        if enc_ffn == 0 {
            return r.fail("transformer-dim-ffn", "0");
        }
        let tied_all = r.bool("tied-embeddings-all", false)?;
        Ok(Config {
            dim,
            heads,
            enc_depth,
            dec_depth,
            enc_ffn,
            dec_ffn: r.usize("transformer-decoder-dim-ffn", Some(0))?,
            src_vocab: vocabs.0,
            trg_vocab: vocabs.1,
            tied_all,
            output_bias: !r.bool("output-omit-bias", false)?,
        })
    }

    pub fn head_dim(&self) -> usize {
        self.dim / self.heads
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::marian::yml;

    const TINY: &str = "type: transformer\ndim-emb: 256\nenc-depth: 6\ndec-depth: 2\ndim-vocabs:\n  - 8000\n  - 8000\n\
        transformer-heads: 8\ntransformer-dim-ffn: 1536\ntransformer-ffn-depth: 2\ntransformer-ffn-activation: relu\n\
        transformer-decoder-autoreg: rnn\ndec-cell: ssru\ntransformer-postprocess: dan\ntransformer-preprocess: \"\"\n\
        transformer-postprocess-emb: d\ntransformer-postprocess-top: \"\"\ntied-embeddings-all: true\n\
        some-future-option: 42\n";

    #[test]
    fn tiny_student() {
        let c = Config::from_yml(&yml::parse(TINY).unwrap()).unwrap();
        assert_eq!((c.dim, c.heads, c.enc_depth, c.dec_depth, c.enc_ffn), (256, 8, 6, 2, 1536));
        assert_eq!((c.src_vocab, c.trg_vocab, c.tied_all, c.output_bias), (8000, 8000, true, true));
        assert_eq!(c.head_dim(), 32);
    }

    #[test]
    fn unsupported_options_are_named() {
        let e = Config::from_yml(&yml::parse(&TINY.replace("dec-cell: ssru", "dec-cell: gru")).unwrap()).unwrap_err();
        assert_eq!(e.key, "dec-cell");
        let e = Config::from_yml(&yml::parse(&TINY.replace("dim-emb: 256", "dim-emb: 250")).unwrap()).unwrap_err();
        assert_eq!(e.key, "dim-emb");
        let e = Config::from_yml(&yml::parse(&TINY.replace("  - 8000\n  - 8000\n", "")).unwrap()).unwrap_err();
        assert_eq!(e.key, "dim-vocabs");
        let e = Config::from_yml(&yml::parse("dim-emb: 256\n").unwrap()).unwrap_err();
        assert_eq!(e.key, "type");
    }
}
