//! Benchmarks, one file each: `gemm` (int8 products against the CPU's peak, `bench-gemm`),
//! `memory` (read bandwidth), `llm` (LLM decode and prefill against those two), `speculate`
//! (the speculative-decoding cost model at a real shape), `translate` (the translation
//! service: posts/s and latency of the shared engine under concurrent clients), `serve` (a running
//! server over HTTP, as its clients load it), `models` (every model of a folder through the
//! registry: load time, memory in use and idle, waking an idle model). The command line's side is
//! `cli/bench/`, one file per mode. `benches/` holds cargo's divan benches of the int8 products
//! and of SentencePiece encoding.

pub mod gemm;
pub mod llm;
pub mod memory;
pub mod models;
pub mod serve;
pub mod speculate;
pub mod translate;
