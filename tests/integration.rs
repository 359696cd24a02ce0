//! Integration tests: each module runs the real `reseam` binary.

/// Firefox's base-memory and base architectures against Bergamot, and a pivot through both.
mod architectures;
mod bench_gemm;
mod cli;
mod common;
/// The engine through the library: Marian's scores, batch invariance, broken files.
mod engine;
mod fetch;
/// `reseam speculate` (target only) and `reseam bench` on the tiny LLM fixtures.
mod llm;
/// The shared engine under load: batch invariance across clients and models, no waiting.
mod scheduler;
/// The fixture's social posts through `reseam translate`, line by line.
mod social;
/// `reseam speculate --draft`: report files, table, environment, usage errors.
mod speculate;
/// `reseam translate` against Marian and Bergamot references, and as a shell filter.
mod translate;
