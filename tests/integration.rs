//! Integration tests: each module runs the real `reseam` binary.

mod bench_gemm;
mod cli;
mod common;
mod fetch;
