//! Integration tests: each module runs the real `reseam` binary.

/// Firefox's base-memory and base architectures against Bergamot, and a pivot through both.
mod architectures;
mod bench_gemm;
/// Synthetic models at Firefox's sizes, and `reseam bench models` on them.
mod bench_models;
mod cli;
mod common;
/// Language identification: accuracy per language, time per text, `reseam detect`.
mod detect;
/// The engine through the library: Marian's scores, batch invariance, broken files.
mod engine;
mod fetch;
/// `--html` on the fixture model: inline markup on the translated words by the decoder's alignment.
mod html;
/// The crate's layout: no import cycle between the top-level modules of src/.
mod layout;
/// `reseam speculate` (target only) and `reseam bench` on the tiny LLM fixtures.
mod llm;
/// The checkpoints trained on Polish text (tests/fixtures/llm-trained): goldens and exact speculation.
mod llm_trained;
/// `reseam pack` and packs under `translate`: bad packs, races, read-only folders, shared pages.
mod pack;
/// What packagers ship: the bash completion, the container's entrypoint and Dockerfile, the systemd unit.
mod packaging;
/// Whole posts as `--jsonl` and `-z` records, and `translate auto`.
mod posts;
/// The shared engine under load: batch invariance across clients and models, no waiting.
mod scheduler;
/// `reseam serve` on a loopback port: every route, status, limit and token form; logs, malformed
/// and slow clients, signals.
mod serve;
/// `reseam serve` under 64 concurrent clients: 10,000 requests, each equal to `translate`.
mod serve_load;
/// The fixture's social posts through `reseam translate`, line by line.
mod social;
/// `reseam speculate --draft`: report files, table, environment, usage errors.
mod speculate;
/// `reseam translate` against Marian and Bergamot references, and as a shell filter.
mod translate;
