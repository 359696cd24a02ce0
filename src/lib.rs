//! reseam: Firefox Translations models on a from-scratch int8 CPU engine, and cross-tokenizer
//! speculative decoding of LLMs on the same kernels.
//!
//! The translation path, in the order data flows (each a folder):
//! text → `detect` (which language, for `auto`) → `text` (lines, sentences, URLs, mentions) →
//! `vocab` (SentencePiece ids) →
//! `marian` (the translation model: Mozilla's files, then `marian::transformer`'s encoder and
//! SSRU decoder over `marian::layers`, then `marian::search`, greedy search over slots) →
//! `vocab` → `text`. `html` wraps `text` for HTML posts: text nodes in, markup kept. `engine`
//! schedules the sentences of every caller and model onto the compute threads, one
//! `marian::search` step over every live slot at a time; `translate` runs the path on lines
//! through it; `fetch` downloads and installs the models it reads.
//!
//! Beside it: `pack` (the memory-mapped container for prepared weights); `llm`
//! (Llama/Mistral/Qwen2 checkpoints, tokenizers, chat templates, the decoder over a KV cache);
//! `speculate` (cross-tokenizer speculative decoding of two `llm` models, and the experiment);
//! `bench` (GEMM, memory bandwidth, LLM decode/prefill, the speculative cost model, translation
//! throughput and latency); and the `reseam-kernels` crate (int8 products and float pieces per
//! instruction set). `error` says whose fault an error is; `paths` holds the default folders;
//! `procfs` reads this process's memory; `profile` times kinds of operations (`RESEAM_MT_PROFILE=1`).

pub mod bench;
pub mod detect;
pub mod engine;
pub mod error;
pub mod fetch;
pub mod html;
pub mod llm;
pub mod marian;
pub mod pack;
pub mod paths;
pub mod procfs;
pub mod profile;
pub mod serve;
pub mod speculate;
pub mod text;
pub mod translate;
pub mod vocab;
