//! Cross-tokenizer speculative decoding (Universal Assisted Generation), greedy and lossless.

pub mod hf;
pub mod model;
pub mod tokenizer;
#[cfg(test)]
mod testutil;
pub mod resync;
pub mod translate;
pub mod clock;
pub mod cost;
pub mod metrics;
