//! Benchmarks behind the `bench-*` subcommands.

pub mod gemm;
