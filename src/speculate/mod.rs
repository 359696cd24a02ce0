//! Cross-tokenizer speculative decoding (Universal Assisted Generation), greedy and lossless.

pub mod hf;
pub mod model;
pub mod tokenizer;
