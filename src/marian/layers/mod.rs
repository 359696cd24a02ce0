//! The Marian transformer's building blocks, shared by its encoder, decoder and output layer
//! ([`super::transformer`]): linear layers in either weight format, layer norm, attention,
//! softmax, position signals, and `RESEAM_MT_DEBUG`'s tensor dumps ([`debug`]). Each computes in
//! the order of operations of Marian's CPU code, because that order is what makes outputs equal.
//! The LLM path ([`crate::llm`]) has layers of its own over the same kernels, in Transformers'
//! order. This module never imports `transformer` or `search`.

pub mod attention;
pub mod debug;
pub mod linear;
pub mod norm;
pub mod position;
pub mod softmax;
