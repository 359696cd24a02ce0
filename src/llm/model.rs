//! The public model: a checkpoint folder (or a generated shape) loaded in one precision, with
//! int8 weights packed once into a `.reseam` file and memory-mapped on later runs.

use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU64, Ordering};

use super::cache::KvCache;
use super::checkpoint::Checkpoint;
use super::config::DecoderSpec;
use super::decoder::{self, Decoder, LogitRows, Logits};
use super::linear::{Precision, QUANTIZATION};
use super::{Error, Result, llama, mistral, qwen2, synthetic};
use crate::pack::cache::{self, Origin, WriteError};

/// The architectures reseam runs.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Architecture {
    Llama,
    Mistral,
    Qwen2,
}

impl Architecture {
    /// The Transformers class name (`architectures` in `config.json`).
    pub fn name(self) -> &'static str {
        match self {
            Architecture::Llama => "LlamaForCausalLM",
            Architecture::Mistral => "MistralForCausalLM",
            Architecture::Qwen2 => "Qwen2ForCausalLM",
        }
    }

    fn from_config(v: &serde_json::Value, path: &Path) -> Result<Architecture> {
        let class = v.get("architectures").and_then(|a| a.get(0)).and_then(|a| a.as_str());
        let model_type = v.get("model_type").and_then(|a| a.as_str());
        match (class, model_type) {
            (Some("LlamaForCausalLM"), _) | (None, Some("llama")) => Ok(Architecture::Llama),
            (Some("MistralForCausalLM"), _) | (None, Some("mistral")) => Ok(Architecture::Mistral),
            (Some("Qwen2ForCausalLM"), _) | (None, Some("qwen2")) => Ok(Architecture::Qwen2),
            _ => Err(Error::Architecture {
                path: path.to_path_buf(),
                found: class.or(model_type).unwrap_or("nothing").to_string(),
            }),
        }
    }
}

/// How to load a model.
#[derive(Clone, Debug)]
pub struct LoadOptions {
    pub precision: Precision,
    /// Where packed int8 weights go; `None`: next to the checkpoint when its folder is writable,
    /// else `<user cache>/reseam/packed` (see [`crate::pack::cache`]).
    pub pack_dir: Option<PathBuf>,
    /// Quantize in memory on every load; never read or write a packed file.
    pub no_pack: bool,
}

impl Default for LoadOptions {
    fn default() -> Self {
        LoadOptions { precision: Precision::Int8, pack_dir: None, no_pack: false }
    }
}

/// What happened with the packed weights of an int8 load.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum PackStatus {
    /// Not int8, or `no_pack`.
    NotUsed,
    /// An up-to-date packed file was memory-mapped.
    Loaded(PathBuf),
    /// The weights were quantized, written to `path`, and mapped from it; `why` the old pack
    /// (if any) could not be used.
    Written { path: PathBuf, why: String },
    /// The weights were quantized in memory because the file could not be used; the reason.
    InMemory(String),
}

static NEXT_ID: AtomicU64 = AtomicU64::new(1);

/// A loaded LLM checkpoint (not a translation model: that is `marian::Model`). Immutable and
/// shared: every sequence keeps its own [`KvCache`].
pub struct Model {
    arch: Architecture,
    precision: Precision,
    decoder: Decoder,
    id: u64,
    pack: PackStatus,
}

impl std::fmt::Debug for Model {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Model").field("arch", &self.arch).field("precision", &self.precision).finish()
    }
}

/// Reads `config.json` into the architecture and the decoder's shape.
pub fn read_config(dir: &Path) -> Result<(Architecture, DecoderSpec, Vec<u8>)> {
    let path = dir.join("config.json");
    let bytes = std::fs::read(&path).map_err(|source| Error::Io { path: path.clone(), source })?;
    let v: serde_json::Value =
        serde_json::from_slice(&bytes).map_err(|e| Error::Json { path: path.clone(), source: e })?;
    let arch = Architecture::from_config(&v, &path)?;
    let field_err = |e: serde_json::Error| Error::Json { path: path.clone(), source: e };
    let spec = match arch {
        Architecture::Llama => serde_json::from_value::<llama::Config>(v).map_err(field_err)?.spec(&path)?,
        Architecture::Mistral => serde_json::from_value::<mistral::Config>(v).map_err(field_err)?.spec(&path)?,
        Architecture::Qwen2 => serde_json::from_value::<qwen2::Config>(v).map_err(field_err)?.spec(&path)?,
    };
    Ok((arch, spec, bytes))
}

const PACK_KIND: &str = "reseam-llm";
const PACK_NAME: &str = "model.int8.reseam";

impl Model {
    /// Loads a checkpoint folder.
    pub fn load(dir: &Path, opts: &LoadOptions) -> Result<Model> {
        Self::load_with_progress(dir, opts, &|_, _| {})
    }

    /// [`Model::load`], calling `progress(done, total)` while int8 weights are being packed.
    pub fn load_with_progress(
        dir: &Path,
        opts: &LoadOptions,
        progress: &(dyn Fn(usize, usize) + Sync),
    ) -> Result<Model> {
        let (arch, spec, config) = read_config(dir)?;
        let ckpt = Checkpoint::open(dir)?;
        let (decoder, pack) = if opts.precision == Precision::Int8 && !opts.no_pack {
            Self::load_packed(&ckpt, &spec, &config, opts, progress)?
        } else {
            (Decoder::load(&ckpt, &spec, opts.precision, None)?, PackStatus::NotUsed)
        };
        Ok(Model { arch, precision: opts.precision, decoder, id: NEXT_ID.fetch_add(1, Ordering::Relaxed), pack })
    }

    fn load_packed(
        ckpt: &Checkpoint,
        spec: &DecoderSpec,
        config: &[u8],
        opts: &LoadOptions,
        progress: &(dyn Fn(usize, usize) + Sync),
    ) -> Result<(Decoder, PackStatus)> {
        let places = cache::places(ckpt.dir(), PACK_NAME, opts.pack_dir.as_deref());
        let files: Vec<PathBuf> = ckpt.stamps().iter().map(|s| ckpt.dir().join(&s.name)).collect();
        let found = cache::find(&places, PACK_KIND, QUANTIZATION, config, &files);
        let why = match found {
            Ok((f, _)) => match Decoder::load(ckpt, spec, Precision::Int8, Some(&f)) {
                Ok(d) => return Ok((d, PackStatus::Loaded(f.path().to_path_buf()))),
                Err(e) => vec![(f.path().to_path_buf(), cache::Why::Damaged(e.to_string()))],
            },
            Err(why) => why,
        };
        let reason = cache::rebuild_reason(&why);
        let written = cache::write::<Error>(
            &places,
            |w| {
                let origin = Origin::of(PACK_KIND, QUANTIZATION, config, &files, None)?;
                decoder::write_pack(ckpt, spec, w, progress)?;
                Ok(serde_json::json!({ "origin": origin.to_json(), "quantization": QUANTIZATION }))
            },
            PACK_KIND,
        );
        match written {
            Ok(path) => {
                let f = crate::pack::PackFile::open(&path)?;
                let d = Decoder::load(ckpt, spec, Precision::Int8, Some(&f))?;
                Ok((d, PackStatus::Written { path, why: reason.1.to_string() }))
            }
            // Missing tensors and bad shapes are the checkpoint's fault: report them.
            Err(WriteError::Build(e @ (Error::MissingTensor { .. } | Error::TensorShape { .. }))) => Err(e),
            Err(WriteError::Build(e)) => {
                // The reason with its causes, as the command line prints errors.
                let why = format!("{:#}", anyhow::Error::from(e));
                Ok((Decoder::load(ckpt, spec, Precision::Int8, None)?, PackStatus::InMemory(why)))
            }
            Err(WriteError::Nowhere(v)) => {
                let why = v.iter().map(|(p, e)| format!("{}: {e}", p.display())).collect::<Vec<_>>().join("; ");
                Ok((Decoder::load(ckpt, spec, Precision::Int8, None)?, PackStatus::InMemory(why)))
            }
        }
    }

    /// A random-weight model of the given shape (benchmarks, cost-model experiments).
    pub fn synthetic(spec: &DecoderSpec, precision: Precision, seed: u64) -> Result<Model> {
        spec.validate(Path::new("<generated model>"))?;
        let decoder = Decoder::load(&synthetic::RandomSource { seed }, spec, precision, None)?;
        Ok(Model {
            arch: Architecture::Llama,
            precision,
            decoder,
            id: NEXT_ID.fetch_add(1, Ordering::Relaxed),
            pack: PackStatus::NotUsed,
        })
    }

    /// A fresh, empty KV cache for one sequence.
    pub fn new_cache(&self) -> KvCache {
        KvCache::new(self.id, self.decoder.spec.layers, self.decoder.spec.kv_heads, self.decoder.spec.head_dim)
    }

    /// Runs `tokens` at positions `cache.len()..cache.len()+tokens.len()`, appends them to the
    /// cache, and returns the logits `keep` asks for. Prefill, one-token decoding and
    /// (k+1)-token verification are the same call; each row's result does not depend on how
    /// many rows the call has. On error the cache is unchanged.
    pub fn forward(&self, cache: &mut KvCache, tokens: &[u32], keep: LogitRows) -> Result<Logits> {
        if cache.model_id != self.id {
            return Err(Error::Cache);
        }
        self.decoder.forward(cache, tokens, keep)
    }

    /// Every layer's products in the order a forward runs them.
    pub(crate) fn layer_products(&self) -> impl Iterator<Item = &super::linear::Linear> {
        self.decoder.layer_products()
    }

    pub fn spec(&self) -> &DecoderSpec {
        &self.decoder.spec
    }
    pub fn architecture(&self) -> Architecture {
        self.arch
    }
    pub fn precision(&self) -> Precision {
        self.precision
    }
    /// Rows of the output layer (argmax runs over all of them unless narrowed).
    pub fn vocab_size(&self) -> usize {
        self.decoder.spec.vocab
    }

    /// Computes logits only for the vocabulary ids `ids` from now on, in that order (`None`: all
    /// again): FR-Spec's frequency-ranked draft head, whose kept rows are computed bit for bit as
    /// in the whole layer at a fraction of its cost. The logits of [`Model::forward`] then have
    /// one column per kept id; [`Model::output_id`] names them.
    pub fn narrow_outputs(&mut self, ids: Option<Vec<u32>>) -> Result<()> {
        if let Some(ids) = &ids {
            if ids.is_empty() {
                return Err(Error::EmptyInput("the output layer needs at least one id"));
            }
            if let Some(&id) = ids.iter().find(|&&id| id as usize >= self.vocab_size()) {
                return Err(Error::TokenId { id, vocab: self.vocab_size() });
            }
        }
        self.decoder.narrow_outputs(ids);
        Ok(())
    }

    /// The vocabulary id of logits column `index` (the identity unless narrowed).
    pub fn output_id(&self, index: u32) -> u32 {
        self.decoder.output_id(index)
    }

    /// Bytes of weights one forward pass reads: the floor of decode time at a given bandwidth.
    pub fn weight_bytes_per_token(&self) -> usize {
        self.decoder.weight_bytes()
    }
    pub fn pack_status(&self) -> &PackStatus {
        &self.pack
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn copy_fixture(name: &str, to: &Path) {
        let from = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/llm").join(name);
        for f in std::fs::read_dir(from).unwrap() {
            let f = f.unwrap().path();
            std::fs::copy(&f, to.join(f.file_name().unwrap())).unwrap();
        }
    }

    #[test]
    fn config_and_weight_mismatches_name_the_file_and_field() {
        let dir = tempfile::tempdir().unwrap();
        copy_fixture("qwen2-tiny", dir.path());
        let cfg_path = dir.path().join("config.json");
        let cfg: serde_json::Value = serde_json::from_slice(&std::fs::read(&cfg_path).unwrap()).unwrap();
        let opts = LoadOptions { precision: Precision::F32, pack_dir: None, no_pack: true };

        let mut bad = cfg.clone();
        bad.as_object_mut().unwrap().remove("hidden_size");
        std::fs::write(&cfg_path, bad.to_string()).unwrap();
        // The JSON error is the cause, the next link of the chain.
        let e = format!("{:#}", anyhow::Error::from(Model::load(dir.path(), &opts).unwrap_err()));
        assert!(e.contains("config.json") && e.contains("hidden_size"), "{e}");

        let mut bad = cfg.clone();
        bad["intermediate_size"] = 90.into();
        std::fs::write(&cfg_path, bad.to_string()).unwrap();
        let e = Model::load(dir.path(), &opts).unwrap_err().to_string();
        assert!(e.contains("model.safetensors") && e.contains("mlp.gate_proj"), "{e}");

        let mut bad = cfg.clone();
        bad["num_key_value_heads"] = 3.into();
        std::fs::write(&cfg_path, bad.to_string()).unwrap();
        let e = Model::load(dir.path(), &opts).unwrap_err().to_string();
        assert!(e.contains("num_key_value_heads"), "{e}");

        std::fs::write(&cfg_path, b"{\"architectures\": [\"Qwen2ForCausalLM\"], ").unwrap();
        let e = Model::load(dir.path(), &opts).unwrap_err().to_string();
        assert!(e.contains("config.json"), "{e}");
    }

    #[test]
    fn int8_pack_is_written_then_reused_and_rebuilt_when_the_weights_change() {
        let dir = tempfile::tempdir().unwrap();
        let packs = tempfile::tempdir().unwrap();
        copy_fixture("llama3-tiny", dir.path());
        let opts =
            LoadOptions { precision: Precision::Int8, pack_dir: Some(packs.path().to_path_buf()), no_pack: false };
        let first = Model::load(dir.path(), &opts).unwrap();
        let PackStatus::Written { path, .. } = first.pack_status().clone() else { panic!("{:?}", first.pack_status()) };
        let second = Model::load(dir.path(), &opts).unwrap();
        assert_eq!(second.pack_status(), &PackStatus::Loaded(path.clone()));
        let (mut a, mut b) = (first.new_cache(), second.new_cache());
        let ids = [128000, 57, 61019, 48492];
        assert_eq!(
            first.forward(&mut a, &ids, LogitRows::All).unwrap(),
            second.forward(&mut b, &ids, LogitRows::All).unwrap()
        );
        // A new modification time alone: the file is hashed again, its bytes are the same.
        let w = dir.path().join("model.safetensors");
        let f = std::fs::File::options().write(true).open(&w).unwrap();
        f.set_modified(std::time::SystemTime::now() + std::time::Duration::from_secs(5)).unwrap();
        drop(f);
        let third = Model::load(dir.path(), &opts).unwrap();
        assert_eq!(third.pack_status(), &PackStatus::Loaded(path.clone()));
        // Changed weights: a new pack replaces the old one under the same name, saying why.
        let mut bytes = std::fs::read(&w).unwrap();
        *bytes.last_mut().unwrap() ^= 1;
        std::fs::write(&w, &bytes).unwrap();
        let fourth = Model::load(dir.path(), &opts).unwrap();
        assert!(
            matches!(fourth.pack_status(), PackStatus::Written { path: p, why } if *p == path && why.contains("model.safetensors changed")),
            "{:?}",
            fourth.pack_status()
        );
        let names: Vec<_> =
            std::fs::read_dir(path.parent().unwrap()).unwrap().map(|e| e.unwrap().file_name()).collect();
        assert_eq!(names.len(), 1, "one pack per checkpoint: {names:?}");
        // An unwritable pack folder falls back to memory, with the reason.
        let blocked = packs.path().join("file");
        std::fs::write(&blocked, b"x").unwrap();
        let o = LoadOptions { pack_dir: Some(blocked.join("sub")), ..opts };
        let m = Model::load(dir.path(), &o).unwrap();
        assert!(matches!(m.pack_status(), PackStatus::InMemory(_)), "{:?}", m.pack_status());
    }
}
