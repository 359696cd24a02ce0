//! Decoder-only LLMs (Llama, Mistral, Qwen2) from Hugging Face checkpoint folders, on the same
//! int8 kernels as translation, equal to Transformers in f32.
//!
//! The path, in the order data flows:
//! text → [`chat`] (the checkpoint's chat template) → [`tokenizer`] (ids) → [`Model`]
//! ([`checkpoint`] weights, one config file per architecture: [`llama`], [`mistral`],
//! [`qwen2`], read into [`config`]'s shape; the shared decoder in [`decoder`] over [`layers`] and
//! [`linear`], with a
//! [`KvCache`] per sequence) → logits → [`pick`] and [`generate`] (greedy) → [`tokenizer`] → text.
//!
//! [`Llm`] bundles what a checkpoint folder holds: the model, its tokenizer, its chat template
//! and its stop tokens.

pub mod cache;
pub mod chat;
pub mod checkpoint;
pub mod config;
pub mod decoder;
pub mod gemm;
pub mod generate;
pub mod layers;
pub mod linear;
pub mod llama;
pub mod mistral;
pub mod model;
pub mod pick;
pub mod prompts;
pub mod qwen2;
pub mod seeded;
pub mod synthetic;
pub mod tokenizer;

#[cfg(test)]
mod tests;

use std::path::{Path, PathBuf};

pub use cache::KvCache;
pub use chat::{ChatTemplate, Message};
pub use config::{ArchitectureSpec, CommonConfig, DecoderSpec, RopeScaling, RopeSpec};
pub use decoder::{LogitRows, Logits};
pub use linear::Precision;
pub use model::{Architecture, LoadOptions, Model, PackStatus};
pub use pick::argmax;
pub use tokenizer::{SpecialTokens, Tokenizer};

/// What can go wrong with a checkpoint, a prompt or a forward pass.
#[derive(Debug, thiserror::Error)]
pub enum Error {
    #[error("cannot read {path}")]
    Io { path: PathBuf, source: std::io::Error },
    #[error("{path}")]
    Json { path: PathBuf, source: serde_json::Error },
    #[error("{path}: field {field}: {msg}")]
    Field { path: PathBuf, field: String, msg: String },
    #[error(
        "{path}: architecture {found:?} is not supported (reseam runs LlamaForCausalLM, MistralForCausalLM and Qwen2ForCausalLM)"
    )]
    Architecture { path: PathBuf, found: String },
    #[error("{dir}: no weights (expected model.safetensors, or model.safetensors.index.json with its shards)")]
    NoWeights { dir: PathBuf },
    #[error("{path}: not a readable safetensors file: {msg}")]
    Safetensors { path: PathBuf, msg: String },
    #[error("{dir}: the checkpoint has no tensor {name} (is config.json from another model?)")]
    MissingTensor { dir: PathBuf, name: String },
    #[error("{path}: tensor {name} has shape {got:?}, config.json implies {want:?}")]
    TensorShape { path: PathBuf, name: String, got: Vec<usize>, want: Vec<usize> },
    #[error("{path}: tokenizer: {msg}")]
    Tokenizer { path: PathBuf, msg: String },
    #[error("{path}: chat template: {msg}")]
    ChatTemplate { path: PathBuf, msg: String },
    #[error("token id {id} is outside the model's {vocab} embedding rows")]
    TokenId { id: u32, vocab: usize },
    #[error("sequence of {len} positions is longer than the model's max_position_embeddings ({max})")]
    Position { len: usize, max: usize },
    #[error("this KV cache was made by another model (use Model::new_cache of the model you call)")]
    Cache,
    #[error(transparent)]
    Kernels(#[from] reseam_kernels::dispatch::IsaError),
    #[error("packed weights")]
    Pack(#[from] crate::pack::Error),
    #[error("internal error: a product's shapes did not fit; please report this")]
    Shape(#[from] reseam_kernels::ShapeError),
    #[error("{0}")]
    EmptyInput(&'static str),
    #[error("generated model: {0}")]
    Synthetic(String),
    #[error("{path}: line {line}: {msg}")]
    Prompts { path: PathBuf, line: usize, msg: String },
    #[error(
        "{dir}: has no chat template (looked for chat_template.jinja and chat_template in tokenizer_config.json); run without --chat"
    )]
    NoChatTemplate { dir: PathBuf },
}

crate::error::fault!(Error);

impl Error {
    /// The caller's fault (see [`crate::error`]): a prompt, a token id or a flag that does not fit,
    /// an unsupported architecture, a file that is not there; not a damaged checkpoint.
    pub fn is_usage(&self) -> bool {
        match self {
            Error::Io { source, .. } => crate::paths::unreadable_by_name(source),
            Error::Kernels(e) => e.is_usage(),
            Error::Architecture { .. }
            | Error::TokenId { .. }
            | Error::Position { .. }
            | Error::EmptyInput(_)
            | Error::Prompts { .. }
            | Error::NoChatTemplate { .. } => true,
            Error::Json { .. }
            | Error::Field { .. }
            | Error::NoWeights { .. }
            | Error::Safetensors { .. }
            | Error::MissingTensor { .. }
            | Error::TensorShape { .. }
            | Error::Tokenizer { .. }
            | Error::ChatTemplate { .. }
            | Error::Cache
            | Error::Pack(_)
            | Error::Shape(_)
            | Error::Synthetic(_) => false,
        }
    }
}

pub type Result<T> = std::result::Result<T, Error>;

/// A checkpoint folder, loaded: model, tokenizer, chat template, stop tokens.
pub struct Llm {
    pub dir: PathBuf,
    pub model: Model,
    pub tokenizer: Tokenizer,
    pub chat: Option<ChatTemplate>,
    /// Ids that end a generation: `generation_config.json`'s `eos_token_id` (one or a list),
    /// else `config.json`'s, else the tokenizer's EOS.
    pub eos: Vec<u32>,
}

impl std::fmt::Debug for Llm {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Llm").field("dir", &self.dir).field("model", &self.model).finish()
    }
}

fn ids_of(v: Option<&serde_json::Value>) -> Option<Vec<u32>> {
    match v? {
        serde_json::Value::Number(n) => n.as_u64().map(|n| vec![n as u32]),
        serde_json::Value::Array(a) => Some(a.iter().filter_map(|x| x.as_u64().map(|n| n as u32)).collect()),
        _ => None,
    }
}

fn read_json(path: &Path) -> Result<Option<serde_json::Value>> {
    match std::fs::read(path) {
        Ok(b) => Ok(Some(serde_json::from_slice(&b).map_err(|e| Error::Json { path: path.to_path_buf(), source: e })?)),
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(None),
        Err(source) => Err(Error::Io { path: path.to_path_buf(), source }),
    }
}

impl Llm {
    /// Loads everything in a checkpoint folder.
    pub fn open(dir: &Path, opts: &LoadOptions) -> Result<Llm> {
        Self::open_with_progress(dir, opts, &|_, _| {})
    }

    /// [`Llm::open`], reporting progress while int8 weights are packed.
    pub fn open_with_progress(dir: &Path, opts: &LoadOptions, progress: &(dyn Fn(usize, usize) + Sync)) -> Result<Llm> {
        let tokenizer = Tokenizer::from_dir(dir)?;
        let chat =
            ChatTemplate::from_dir(dir, &tokenizer::read_tokenizer_config(dir)?, &tokenizer.special_tokens().texts)?;
        let eos = Self::stop_ids(dir, &tokenizer)?;
        let model = Model::load_with_progress(dir, opts, progress)?;
        Ok(Llm { dir: dir.to_path_buf(), model, tokenizer, chat, eos })
    }

    fn stop_ids(dir: &Path, tokenizer: &Tokenizer) -> Result<Vec<u32>> {
        let gen_cfg = read_json(&dir.join("generation_config.json"))?;
        let cfg = read_json(&dir.join("config.json"))?;
        let ids = ids_of(gen_cfg.as_ref().and_then(|g| g.get("eos_token_id")))
            .or_else(|| ids_of(cfg.as_ref().and_then(|c| c.get("eos_token_id"))))
            .or_else(|| tokenizer.special_tokens().eos.map(|e| vec![e]))
            .unwrap_or_default();
        Ok(ids)
    }

    /// The ids a prompt runs as: the text encoded as `tokenizer(text)` does (BOS where the
    /// tokenizer adds one), or with `chat`, the text as the user turn of the chat template with
    /// the assistant prompt opened, encoded without adding special tokens (the template holds
    /// them), as `apply_chat_template(tokenize=True)` does.
    pub fn prompt_ids(&self, text: &str, chat: bool) -> Result<Vec<u32>> {
        if !chat {
            return self.tokenizer.encode(text, true);
        }
        let t = self.chat.as_ref().ok_or_else(|| Error::NoChatTemplate { dir: self.dir.clone() })?;
        let rendered = t.render(&[Message::new("user", text)], true, ())?;
        self.tokenizer.encode(&rendered, false)
    }
}
