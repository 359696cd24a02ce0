//! `reseam bench speculate`: does the cost model hold at a realistic shape?
//!
//! A random-weight target at a real shape (Llama-3.2-1B by default) is generated in memory and
//! decoded with two drafts of the same vocabulary: the target itself (every candidate accepted,
//! c ≈ 1) and a generated model about 1/ratio of its size (candidates essentially never
//! accepted, small c). For each draft length the measured speedup over the target alone is set
//! against Leviathan's prediction E(α̂, k)/(k·c + 1) from the acceptance and c measured in the
//! same run, and against the prediction from the measured round costs. Nothing is downloaded
//! or written: the models and prompts are random.

use serde::Serialize;

use crate::llm::DecoderSpec;
use crate::llm::{Model, Precision, synthetic};
use crate::speculate::clock::WallClock;
use crate::speculate::energy::Unavailable;
use crate::speculate::experiment::Error;
use crate::speculate::mock::mix;
use crate::speculate::report::{KSetting, Report};
use crate::speculate::rounds::{BaselineTiming, DecodeOptions, RunOrder, Verify};
use crate::speculate::run::{Draft, Prompt, RunOptions, run as run_experiment};
use crate::speculate::strategy::{Pair, Strategy};
use crate::speculate::tokens::{TextTokenizer, Token, TokenizerError};

/// What to measure.
#[derive(Clone, Debug)]
pub struct Options {
    pub shape_name: String,
    pub shape: DecoderSpec,
    /// The small draft is `synthetic::shrunk(shape, ratio)`.
    pub ratio: usize,
    pub ks: Vec<usize>,
    pub prompts: usize,
    pub prompt_tokens: usize,
    pub max_new_tokens: usize,
    pub precision: Precision,
    pub seed: u64,
    /// Largest relative gap between measured and predicted speedup that counts as agreement.
    pub tolerance: f64,
}

/// One draft at one k.
#[derive(Clone, Debug, Serialize)]
pub struct Row {
    pub draft: String,
    pub k: usize,
    pub acceptance_rate: Option<f64>,
    pub alpha_hat: Option<f64>,
    pub c: Option<f64>,
    pub tokens_per_pass: Option<f64>,
    pub measured_speedup: Option<f64>,
    /// E(α̂, k)/(k·c + 1).
    pub predicted_speedup: Option<f64>,
    /// |measured / predicted − 1|.
    pub relative_gap: Option<f64>,
    pub within_tolerance: bool,
    /// The same gain over the measured round costs (verification at k+1 rows included).
    pub predicted_speedup_measured_costs: Option<f64>,
}

/// What was measured.
#[derive(Clone, Debug, Serialize)]
pub struct BenchReport {
    pub shape: String,
    pub target_parameters: usize,
    pub draft_parameters: usize,
    pub precision: Precision,
    pub threads: usize,
    pub optimized_build: bool,
    pub tolerance: f64,
    pub baseline_tokens_per_s: Vec<Option<f64>>,
    pub rows: Vec<Row>,
    /// The full reports, one per draft.
    pub reports: Vec<Report>,
}

/// A vocabulary of `len` ids that all mean the same in target and draft. The models share one
/// vocabulary and the `none` strategy passes ids unchanged, so no text is ever made: every id
/// is (empty) text.
struct SharedIds(usize);

impl TextTokenizer for SharedIds {
    fn encode(&self, _: &str, _: bool) -> Result<Vec<u32>, TokenizerError> {
        Ok(Vec::new())
    }
    fn decode(&self, _: &[u32]) -> Result<String, TokenizerError> {
        Ok(String::new())
    }
    fn token(&self, id: u32) -> Token<'_> {
        if (id as usize) < self.0 { Token::Text(b"") } else { Token::Unknown }
    }
    fn special_id(&self, _: &str) -> Option<u32> {
        None
    }
    fn len(&self) -> usize {
        self.0
    }
}

fn parameters(s: &DecoderSpec) -> usize {
    let layer = s.hidden * (s.q_dim() + 2 * s.kv_dim()) + s.q_dim() * s.hidden + 3 * s.hidden * s.intermediate;
    s.layers * layer + s.vocab * s.hidden * if s.tied_embeddings { 1 } else { 2 }
}

/// Runs the benchmark; `log` hears what is being done.
pub fn run(opts: &Options, log: &dyn Fn(&str)) -> Result<BenchReport, Error> {
    if opts.ks.is_empty() || opts.ks.contains(&0) || opts.prompts == 0 || opts.prompt_tokens == 0 {
        return Err(Error::Settings("-k (each >= 1), --prompts and --prompt-tokens must be given and positive".into()));
    }
    if opts.max_new_tokens < 2 {
        return Err(Error::Settings(
            "--max-new-tokens must be at least 2 (the first token comes from the prompt)".into(),
        ));
    }
    let generate = |spec: &DecoderSpec, seed: u64| {
        Model::synthetic(spec, opts.precision, seed)
            .map_err(|source| Error::Target { dir: "<generated>".into(), source: Box::new(source) })
    };
    let small_spec = synthetic::shrunk(&opts.shape, opts.ratio);
    log(&format!(
        "generating the target: random {} in {} ({:.3} B parameters)",
        opts.shape_name,
        opts.precision.name(),
        parameters(&opts.shape) as f64 / 1e9
    ));
    let target = generate(&opts.shape, opts.seed)?;
    log(&format!(
        "generating the small draft: 1/{} of the layers' size ({:.3} B parameters with the embedding)",
        opts.ratio,
        parameters(&small_spec) as f64 / 1e9
    ));
    let small = generate(&small_spec, opts.seed.wrapping_add(1))?;

    let vocab = opts.shape.vocab;
    let ids = SharedIds(vocab);
    let pair = Pair::new(&ids, &ids, Vec::new(), Vec::new(), vocab);
    let prompts: Vec<Prompt> = (0..opts.prompts)
        .map(|p| {
            let t: Vec<u32> =
                (0..opts.prompt_tokens).map(|i| (synthetic_id(opts.seed, p, i) % vocab as u64) as u32).collect();
            Prompt { text: format!("random prompt {}", p + 1), target_ids: t.clone(), draft_ids: t }
        })
        .collect();
    let kernel = match opts.precision {
        Precision::Int8 => reseam_kernels::dispatch::kernels()
            .map_err(|e| Error::Target { dir: "<generated>".into(), source: Box::new(e.into()) })?
            .isa()
            .name()
            .to_string(),
        _ => "none".into(),
    };
    let run_opts = RunOptions {
        ks: opts.ks.iter().map(|&k| KSetting::Fixed(k)).collect(),
        strategies: vec![Strategy::None],
        decode: DecodeOptions { max_new_tokens: opts.max_new_tokens, stop: Vec::new() },
        verify: Verify::Batched,
        prefix: 5,
        lookbehind: 8,
        k_max_auto: 8,
        divergence_tolerance: 1e-3,
        baseline: BaselineTiming::Paired,
        order: RunOrder::Interleaved,
        target_label: format!("random {} ({})", opts.shape_name, opts.precision.name()),
        kernel_label: kernel,
        clock_label: "wall".into(),
    };
    let clock = WallClock::new();
    let mut reports = Vec::new();
    let small_label = format!("random shrunk 1/{} ({})", opts.ratio, opts.precision.name());
    for (label, draft) in [("the target itself".to_string(), &target), (small_label, &small)] {
        log(&format!("decoding with draft {label}: the target alone, then k = {:?}", opts.ks));
        let mut last = String::new();
        let r = run_experiment(
            &target,
            &ids,
            Some(Draft { model: draft, pair: &pair, label }),
            &prompts,
            &run_opts,
            &clock,
            &mut Unavailable("not measured by the benchmark".into()),
            &mut |p| {
                if p.stage != last {
                    log(&format!("  {}", p.stage));
                    last = p.stage.clone();
                }
            },
        )?;
        reports.push(r);
    }
    let rows = reports
        .iter()
        .flat_map(|r| {
            r.runs.iter().map(|run| {
                let gap = match (run.speedup, run.predicted_speedup) {
                    (Some(m), Some(p)) if p > 0.0 => Some((m / p - 1.0).abs()),
                    _ => None,
                };
                Row {
                    draft: r.draft.clone().unwrap_or_default(),
                    k: match run.k {
                        KSetting::Fixed(k) => k,
                        KSetting::Auto => 0,
                    },
                    acceptance_rate: run.acceptance_rate,
                    alpha_hat: run.alpha_hat,
                    c: run.c,
                    tokens_per_pass: run.tokens_per_pass,
                    measured_speedup: run.speedup,
                    predicted_speedup: run.predicted_speedup,
                    relative_gap: gap,
                    within_tolerance: gap.is_some_and(|g| g <= opts.tolerance),
                    predicted_speedup_measured_costs: run.predicted_speedup_measured_costs,
                }
            })
        })
        .collect();
    Ok(BenchReport {
        shape: opts.shape_name.clone(),
        target_parameters: parameters(&opts.shape),
        draft_parameters: parameters(&small_spec),
        precision: opts.precision,
        threads: rayon::current_num_threads(),
        optimized_build: !cfg!(debug_assertions),
        tolerance: opts.tolerance,
        baseline_tokens_per_s: reports.iter().map(|r| r.baseline.decode_tokens_per_s).collect(),
        rows,
        reports,
    })
}

/// A reproducible pseudo-random token id.
fn synthetic_id(seed: u64, prompt: usize, i: usize) -> u64 {
    mix(seed ^ mix(((prompt as u64) << 32) | i as u64))
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A tiny shape end to end: every row is filled and the target-as-draft accepts all.
    #[test]
    fn a_small_run_fills_every_row() {
        let opts = Options {
            shape_name: "test".into(),
            shape: DecoderSpec { layers: 2, vocab: 512, ..synthetic::test_shape() },
            ratio: 10,
            ks: vec![1, 3],
            prompts: 1,
            prompt_tokens: 4,
            max_new_tokens: 12,
            precision: Precision::Int8,
            seed: 3,
            tolerance: 0.15,
        };
        let r = run(&opts, &|_| {}).unwrap();
        assert_eq!(r.rows.len(), 4);
        for row in &r.rows {
            assert!(row.measured_speedup.is_some() && row.predicted_speedup.is_some() && row.c.is_some(), "{row:?}");
        }
        assert_eq!(r.rows[0].acceptance_rate, Some(1.0), "the target as its own draft");
        assert_eq!(r.reports[0].runs[0].identical_prompts, 1);
        assert!(run(&Options { ks: vec![0], ..opts }, &|_| {}).is_err());
    }
}
