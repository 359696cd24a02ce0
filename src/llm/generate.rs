//! Greedy decoding of one model (the baseline speculative decoding is measured against), and
//! the target-only run of `reseam speculate`.

use std::path::PathBuf;
use std::time::{Duration, Instant};

use serde::Serialize;

use super::decoder::LogitRows;
use super::{Error, KvCache, Llm, LoadOptions, Model, Precision, Result, prompts};

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

/// Settings of a target-only run.
#[derive(Clone, Debug)]
pub struct BaselineOptions {
    pub target: PathBuf,
    pub prompts: PathBuf,
    pub max_new_tokens: usize,
    pub load: LoadOptions,
    pub chat: bool,
    /// Keep generating through end-of-sequence tokens (for comparisons with fixed lengths).
    pub ignore_eos: bool,
}

/// One prompt's result (the JSON schema: `prompt`, `prompt_ids`, `output_ids`, `text`).
#[derive(Clone, Debug, Serialize)]
pub struct PromptResult {
    pub prompt: String,
    pub prompt_ids: Vec<u32>,
    pub output_ids: Vec<u32>,
    /// The new tokens decoded, special tokens skipped.
    pub text: String,
    pub prefill_seconds: f64,
    pub decode_seconds: f64,
    pub decode_tokens_per_second: f64,
}

/// A whole run.
#[derive(Clone, Debug, Serialize)]
pub struct BaselineReport {
    pub target: String,
    pub architecture: String,
    pub precision: Precision,
    /// The int8 kernel that ran (`reference`, `avx512vnni`, ...), or `none` in f32/bf16.
    pub kernel: String,
    pub max_new_tokens: usize,
    pub prompts: Vec<PromptResult>,
    pub prompt_tokens: usize,
    pub new_tokens: usize,
    pub prefill_tokens_per_second: f64,
    /// Single-token forwards per second over all prompts.
    pub decode_tokens_per_second: f64,
}

fn rate(n: usize, d: Duration) -> f64 {
    if d.is_zero() { 0.0 } else { n as f64 / d.as_secs_f64() }
}

/// Loads the target and decodes every prompt greedily. `progress(event)` is told what happens.
pub fn run_baseline(opts: &BaselineOptions, progress: &(dyn Fn(Progress) + Sync)) -> Result<BaselineReport> {
    let prompts = prompts::read(&opts.prompts)?;
    let llm =
        Llm::open_with_progress(&opts.target, &opts.load, &|done, total| progress(Progress::Packing { done, total }))?;
    let kernel = match opts.load.precision {
        Precision::Int8 => {
            reseam_kernels::dispatch::kernels().map_err(|e| Error::Kernels(e.to_string()))?.isa().name().to_string()
        }
        _ => "none".into(),
    };
    let stop: Vec<u32> = if opts.ignore_eos { Vec::new() } else { llm.eos.clone() };
    let mut results = Vec::with_capacity(prompts.len());
    let (mut prefill, mut decode, mut steps, mut prompt_tokens, mut new_tokens) =
        (Duration::ZERO, Duration::ZERO, 0, 0, 0);
    // One sequence at a time: its cache is emptied for the next prompt, keeping its memory.
    let mut cache = llm.model.new_cache();
    for (i, p) in prompts.iter().enumerate() {
        progress(Progress::Prompt { index: i, total: prompts.len() });
        let ids = llm.prompt_ids(&p.text, opts.chat)?;
        if ids.is_empty() {
            return Err(Error::Prompts {
                path: opts.prompts.clone(),
                line: p.line,
                msg: "the prompt encodes to no tokens (this tokenizer adds no BOS); give it some text".into(),
            });
        }
        cache.clear();
        let g = greedy(&llm.model, &mut cache, &ids, opts.max_new_tokens, &stop).map_err(|e| match e {
            Error::Position { .. } => Error::Prompts { path: opts.prompts.clone(), line: p.line, msg: e.to_string() },
            e => e,
        })?;
        prefill += g.prefill;
        decode += g.decode;
        steps += g.decode_steps();
        prompt_tokens += ids.len();
        new_tokens += g.output_ids.len();
        results.push(PromptResult {
            prompt: p.text.clone(),
            text: llm.tokenizer.decode(&g.output_ids, true)?,
            prompt_ids: ids,
            prefill_seconds: g.prefill.as_secs_f64(),
            decode_seconds: g.decode.as_secs_f64(),
            decode_tokens_per_second: rate(g.decode_steps(), g.decode),
            output_ids: g.output_ids,
        });
    }
    progress(Progress::Prompt { index: prompts.len(), total: prompts.len() });
    Ok(BaselineReport {
        target: opts.target.display().to_string(),
        architecture: llm.model.architecture().name().into(),
        precision: opts.load.precision,
        kernel,
        max_new_tokens: opts.max_new_tokens,
        prompts: results,
        prompt_tokens,
        new_tokens,
        prefill_tokens_per_second: rate(prompt_tokens, prefill),
        decode_tokens_per_second: rate(steps, decode),
    })
}

/// What a run is doing, for progress bars and log lines.
#[derive(Clone, Copy, Debug)]
pub enum Progress {
    /// Quantizing and packing int8 weights (first run of a checkpoint).
    Packing { done: usize, total: usize },
    /// Starting prompt `index` of `total` (`index == total`: finished).
    Prompt { index: usize, total: usize },
}
