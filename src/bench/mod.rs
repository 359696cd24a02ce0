//! Benchmarks behind `bench-gemm` and `bench memory|llm`.

pub mod gemm;
pub mod memory;
