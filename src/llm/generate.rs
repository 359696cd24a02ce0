//! Greedy decoding of one model over a [`KvCache`] that may already hold a prefix of the prompt:
//! the engine's own loop, which its tests hold to Transformers' goldens. `reseam speculate`
//! measures its baseline with speculate's own `rounds::greedy` (the same first-maximum rule,
//! with timing and the runner-up logits), and the experiment's tests hold the two equal.

use std::time::{Duration, Instant};

use super::decoder::LogitRows;
use super::{Error, KvCache, Model, Result};

/// One greedy generation, with its timing.
#[derive(Clone, Debug, PartialEq)]
pub struct Generation {
    pub output_ids: Vec<u32>,
    /// Feeding the prompt and choosing the first new token.
    pub prefill: Duration,
    /// Every later token: one single-token forward each.
    pub decode: Duration,
}

impl Generation {
    /// Tokens made by single-token forwards (all but the first).
    pub fn decode_steps(&self) -> usize {
        self.output_ids.len().saturating_sub(1)
    }
}

/// Greedy decoding: feeds `prompt` (the cache must be empty or hold a prefix of it), then
/// appends the argmax until `max_new` tokens or a `stop` id (which is kept in the output).
/// The last new token is not fed, so afterwards the cache holds `prompt + output[..len-1]`.
pub fn greedy(model: &Model, cache: &mut KvCache, prompt: &[u32], max_new: usize, stop: &[u32]) -> Result<Generation> {
    let start = Instant::now();
    let mut out = Vec::with_capacity(max_new);
    if max_new == 0 {
        return Ok(Generation { output_ids: out, prefill: Duration::ZERO, decode: Duration::ZERO });
    }
    let fed = cache.len().min(prompt.len());
    cache.truncate(fed);
    let rest = if fed == prompt.len() && fed > 0 {
        // Everything is cached: feed the last prompt token again to get its logits.
        cache.truncate(fed - 1);
        &prompt[fed - 1..]
    } else {
        &prompt[fed..]
    };
    if rest.is_empty() {
        return Err(Error::EmptyInput("greedy decoding needs at least one prompt token"));
    }
    let logits = model.forward(cache, rest, LogitRows::Last)?;
    let mut next = logits.argmax(0);
    out.push(next);
    let prefill = start.elapsed();
    let t1 = Instant::now();
    while out.len() < max_new && !stop.contains(&next) {
        let logits = model.forward(cache, &[next], LogitRows::Last)?;
        next = logits.argmax(0);
        out.push(next);
    }
    Ok(Generation { output_ids: out, prefill, decode: t1.elapsed() })
}
