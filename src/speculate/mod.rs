//! Cross-tokenizer speculative decoding (Universal Assisted Generation), greedy and lossless.
//!
//! The path of one round, in the order data flows (each a file):
//! [`rounds`] drives it: the draft proposes k tokens (a [`lm::LanguageModel`]), [`strategy`]
//! turns them into target candidates (none / naive / context, over the [`tokens::TextTokenizer`]
//! of each side), the target verifies them in one pass and commits the longest agreeing run plus
//! its own next token, and [`resync`] brings the draft's context in line with what was committed.
//! [`run`] repeats that over prompts and configurations against the target alone, [`auto_k`]
//! choosing k each round for `-k auto`; [`metrics`], [`cost`], [`energy`] and [`clock`] measure,
//! [`spread`] says how sure each speedup is (its bootstrap interval over prompts, and the guard for
//! configurations that hardly drafted), [`segmentation`] how differently the two tokenizers cut
//! the same text; [`report`] writes the table, JSON, CSV and SVG; [`draft_vocab`] picks the ids a
//! draft's cut output layer keeps. [`mock`] has models for tests. `adapt` makes the engine's
//! checkpoints ([`crate::llm`]) a [`lm::LanguageModel`] and a [`tokens::TextTokenizer`];
//! [`experiment`] runs the experiment on checkpoint folders.

mod adapt;
pub mod auto_k;
pub mod clock;
pub mod cost;
pub mod draft_vocab;
pub mod energy;
pub mod experiment;
pub mod lm;
pub mod metrics;
pub mod mock;
pub mod report;
pub mod resync;
pub mod rounds;
pub mod run;
pub mod segmentation;
pub mod spread;
pub mod strategy;
#[cfg(test)]
mod testutil;
pub mod tokens;

pub use lm::{ForwardError, LanguageModel, Logits, Top2};
pub use rounds::{BaselineTiming, DecodeOptions, RunOrder, Verify};
pub use strategy::{Pair, Strategy};
pub use tokens::{TextTokenizer, Token, TokenizerError};

use std::error::Error;

/// Why a speculative decoding run failed.
#[derive(Debug, thiserror::Error)]
pub enum SpeculateError {
    #[error("the {which} model failed")]
    Model {
        which: &'static str,
        #[source]
        source: ForwardError,
    },
    #[error("translating {direction} failed")]
    Translate {
        direction: &'static str,
        #[source]
        source: TokenizerError,
    },
    #[error(
        "prompt {index} has no tokens for the {which} model (an empty prompt with a tokenizer that adds no BOS): remove it from the prompts file"
    )]
    EmptyPrompt { index: usize, which: &'static str },
    #[error("{0}")]
    Options(String),
}

crate::error::fault!(SpeculateError);

impl SpeculateError {
    /// An empty prompt or bad options are the caller's fault (see [`crate::error`]); a model's or
    /// tokenizer's failure is the next link of the chain.
    pub fn is_usage(&self) -> bool {
        match self {
            SpeculateError::EmptyPrompt { .. } | SpeculateError::Options(_) => true,
            SpeculateError::Model { .. } | SpeculateError::Translate { .. } => false,
        }
    }
}

impl SpeculateError {
    pub(crate) fn model(which: &'static str) -> impl FnOnce(ForwardError) -> SpeculateError {
        move |source| SpeculateError::Model { which, source }
    }

    pub(crate) fn translate(direction: &'static str) -> impl FnOnce(Box<dyn Error + Send + Sync>) -> SpeculateError {
        move |source| SpeculateError::Translate { direction, source }
    }
}
