//! Integration tests: each module runs the real `reseam` binary.

mod cli;
mod common;
mod fetch;
