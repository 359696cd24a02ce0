//! Whose fault a failure is: the one place the command line's exit code 2 and a server's 4xx
//! come from.
//!
//! Every error type of the crate (and of the kernels) has `is_usage()`: whether that error, by
//! itself, is the caller's to fix — a bad flag or setting, input (prompts, text) that cannot be
//! read or parsed, a model, language pair or chat template that is not there. Damaged model
//! files, I/O failures while writing, the network and internal errors are not. A variant that
//! only wraps a cause answers `false` and lets the cause speak (a `transparent` variant asks its
//! inner error, which is not a link of the chain of its own). [`is_usage`] walks an error's
//! chain and asks every error it knows.

use std::error::Error;

use crate::{bench, detect, engine, fetch, html, llm, marian, pack, speculate, text, translate, vocab};

/// A mistake in how reseam was called that the library's own errors do not cover (flags that
/// only the command line has, such as `--csv` without `--draft`).
#[derive(Debug, thiserror::Error)]
#[error("{0}")]
pub struct UsageError(pub String);

impl UsageError {
    pub fn is_usage(&self) -> bool {
        true
    }
}

/// Asks `e` for every error type listed, boxed or not; `None`: not one of ours.
macro_rules! ask {
    ($e:expr, $($t:ty),+ $(,)?) => {{
        let e = $e;
        $(
            if let Some(x) = e.downcast_ref::<$t>() {
                return Some(x.is_usage());
            }
            if let Some(x) = e.downcast_ref::<Box<$t>>() {
                return Some(x.is_usage());
            }
        )+
        None
    }};
}

/// What one link of a chain says about itself, if it is an error type of this crate.
pub fn usage_of(e: &(dyn Error + 'static)) -> Option<bool> {
    ask!(
        e,
        UsageError,
        bench::gemm::Error,
        bench::translate::Error,
        bench::models::Error,
        bench::serve::Error,
        detect::DetectError,
        html::HtmlError<translate::TranslateError>,
        translate::records::RecordError,
        translate::records::StreamError,
        engine::EngineError,
        engine::registry::RegistryError,
        fetch::FetchError,
        llm::Error,
        marian::ModelError,
        marian::binary::FormatError,
        marian::config::ConfigError,
        marian::yml::YmlError,
        marian::transformer::BuildError,
        marian::transformer::WeightError,
        marian::search::DecodeError,
        pack::Error,
        speculate::SpeculateError,
        speculate::experiment::Error,
        speculate::report::ReportError,
        text::Error,
        translate::TranslateError,
        vocab::VocabError,
        reseam_kernels::ShapeError,
        reseam_kernels::dispatch::IsaError,
    )
}

/// Whether any link of `e`'s chain is the caller's fault (exit code 2, HTTP 4xx).
pub fn is_usage(e: &(dyn Error + 'static)) -> bool {
    let mut link = Some(e);
    while let Some(e) = link {
        if usage_of(e) == Some(true) {
            return true;
        }
        link = e.source();
    }
    false
}

#[cfg(test)]
mod tests;
