//! reseam: Firefox Translations models on a from-scratch int8 CPU engine, and cross-tokenizer
//! speculative decoding of LLMs on the same kernels.
//!
//! The translation path, in the order data flows (each a folder):
//! text → `detect` (which language, for `auto`) → `text` (lines, sentences, URLs, mentions) →
//! `vocab` (SentencePiece ids) →
//! `model` (Marian files, the encoder and the SSRU decoder) → `decode` (greedy search over slots)
//! → `vocab` → `text`. `html` wraps `text` for HTML posts: text nodes in, markup kept.
//!
//! The LLM path (`speculate`): `llm` (Llama/Mistral/Qwen2 checkpoints, tokenizers, chat
//! templates, the decoder over a KV cache, greedy decoding).
//!
//! Beside them: `kernels` (the `reseam-kernels` crate: int8 products per instruction set),
//! `pack` (the memory-mapped container for prepared weights), `bench` (GEMM throughput, memory
//! bandwidth).

pub mod bench;
pub mod detect;
pub mod engine;
pub mod fetch;
pub mod html;
pub mod llm;
pub mod marian;
pub mod pack;
pub mod paths;
pub mod profile;
pub mod speculate;
pub mod text;
pub mod translate;
pub mod vocab;
