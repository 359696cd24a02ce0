//! The experiment: the target alone on every prompt (the baseline), then, given a draft, every
//! configuration (strategy × draft length) on the same prompts, measured and compared. Without
//! a draft the report is the baseline alone: one greedy loop and one report shape either way.

use super::SpeculateError;
use super::auto_k::AutoK;
use super::clock::Clock;
use super::cost::{CostInputs, break_even_geometric, break_even_linear, expected_tokens};
use super::energy::EnergyMeter;
use super::lm::LanguageModel;
use super::metrics::{Counters, PassTimes, TimeSplit};
use super::report::{
    Baseline, BaselinePrompt, BreakEven, Divergence, KSetting, PromptResult, Report, Run, SCHEMA, Settings, Time,
};
use super::rounds::{
    BaselineTiming, DecodeOptions, DraftLength, Output, RunOrder, SpecOptions, Verify, greedy, speculative,
};
use super::segmentation::{self, Segmentation};
use super::spread::{PairedPrompt, Verdict, speedup_interval, target_alone};
use super::strategy::{Pair, Strategy};
use super::tokens::TextTokenizer;

/// One prompt, already rendered and encoded for both models.
#[derive(Clone, Debug)]
pub struct Prompt {
    pub text: String,
    pub target_ids: Vec<u32>,
    pub draft_ids: Vec<u32>,
}

impl Prompt {
    /// A plain-text prompt: each tokenizer encodes it with its own special tokens (BOS).
    pub fn plain<TT: TextTokenizer + ?Sized, DT: TextTokenizer + ?Sized>(
        text: &str,
        pair: &Pair<TT, DT>,
    ) -> Result<Prompt, SpeculateError> {
        let target_ids = pair.target.encode(text, true).map_err(SpeculateError::translate("prompt→target"))?;
        let draft_ids = if pair.identical {
            target_ids.clone()
        } else {
            pair.draft.encode(text, true).map_err(SpeculateError::translate("prompt→draft"))?
        };
        Ok(Prompt { text: text.to_string(), target_ids, draft_ids })
    }
}

/// Settings of an experiment.
#[derive(Clone, Debug)]
pub struct RunOptions {
    pub ks: Vec<KSetting>,
    pub strategies: Vec<Strategy>,
    pub decode: DecodeOptions,
    pub verify: Verify,
    pub prefix: usize,
    pub lookbehind: usize,
    /// Longest draft `-k auto` may choose.
    pub k_max_auto: usize,
    /// Largest baseline logit margin at which a batched-verification divergence counts as a
    /// near-tie (numerics) rather than a bug.
    pub divergence_tolerance: f32,
    /// When the target alone is timed for the speedups.
    pub baseline: BaselineTiming,
    /// Whether each prompt goes through every configuration in turn, or each configuration
    /// through every prompt.
    pub order: RunOrder,
    pub target_label: String,
    /// The int8 kernel that ran, or `none`.
    pub kernel_label: String,
    pub clock_label: String,
}

impl RunOptions {
    /// How a speculative run of one strategy works under these settings.
    fn spec(&self, strategy: Strategy) -> SpecOptions {
        SpecOptions {
            decode: self.decode.clone(),
            verify: self.verify,
            strategy,
            prefix: self.prefix,
            lookbehind: self.lookbehind,
        }
    }
}

/// The draft side of an experiment: its model, the two tokenizers, and its report label.
pub struct Draft<'a, D: ?Sized, TT: ?Sized, DT: ?Sized> {
    pub model: &'a D,
    /// `pair.target` must be the target's tokenizer.
    pub pair: &'a Pair<'a, TT, DT>,
    pub label: String,
}

/// Where the experiment is, for progress bars and log lines.
#[derive(Clone, Debug)]
pub struct Progress {
    /// "baseline" or a configuration label ("context k=2").
    pub stage: String,
    /// Prompts done over all stages, and their total.
    pub done: usize,
    pub total: usize,
}

struct Summed {
    outputs: Vec<Output>,
    counters: Counters,
    times: TimeSplit,
    passes: PassTimes,
    energy: Option<f64>,
}

fn sum(outputs: Vec<Output>) -> Summed {
    let mut s = Summed {
        outputs: Vec::new(),
        counters: Counters::default(),
        times: TimeSplit::default(),
        passes: PassTimes::default(),
        energy: Some(0.0),
    };
    for o in &outputs {
        s.counters.merge(&o.counters);
        s.times.merge(&o.times);
        s.passes.merge(&o.passes);
        s.energy = match (s.energy, o.energy_j) {
            (Some(a), Some(b)) => Some(a + b),
            _ => None,
        };
    }
    s.outputs = outputs;
    s
}

fn generated(outs: &[Output]) -> (u64, u64) {
    let all: u64 = outs.iter().map(|o| o.ids.len() as u64).sum();
    // The first token of each prompt comes from the prompt pass, outside decoding time.
    let decode: u64 = outs.iter().map(|o| o.ids.len().saturating_sub(1) as u64).sum();
    (all, decode)
}

fn per_s(tokens: u64, s: f64) -> Option<f64> {
    (s > 0.0 && tokens > 0).then(|| tokens as f64 / s)
}

/// Runs the baseline, then with a draft every configuration, over `prompts` (whose `draft_ids`
/// are unused without a draft). `tokenizer` is the target's: it decodes the outputs.
#[allow(clippy::too_many_arguments)]
pub fn run<T, D, TT, DT>(
    target: &T,
    tokenizer: &TT,
    draft: Option<Draft<'_, D, TT, DT>>,
    prompts: &[Prompt],
    opts: &RunOptions,
    clock: &dyn Clock,
    energy: &mut dyn EnergyMeter,
    progress: &mut dyn FnMut(&Progress),
) -> Result<Report, SpeculateError>
where
    T: LanguageModel + ?Sized,
    D: LanguageModel + ?Sized,
    TT: TextTokenizer + ?Sized,
    DT: TextTokenizer + ?Sized,
{
    for (i, p) in prompts.iter().enumerate() {
        if p.target_ids.is_empty() {
            return Err(SpeculateError::EmptyPrompt { index: i + 1, which: "target" });
        }
    }
    // Tokenizers build their id → bytes tables on first use (0.16 s for Qwen2.5's 151,936 ids
    // on a Zen 1): build them before any timing, or the first configuration that translates pays
    // for it (it put `none` with `-k auto` at 0.91-0.94x when it came first). `tokenizer` is
    // also the pair's target side.
    tokenizer.token(0);
    if let Some(d) = &draft {
        d.pair.draft.token(0);
    }
    let mut configs = Vec::new();
    if draft.is_some() {
        for &s in &opts.strategies {
            for &k in &opts.ks {
                configs.push((k, s));
            }
        }
    }
    let paired = opts.baseline == BaselineTiming::Paired;
    let total = prompts.len() * (1 + configs.len() * (1 + paired as usize));
    let mut done = 0;
    warm_up(target, draft.as_ref(), prompts, configs.first().map(|c| c.1), opts, clock, energy, progress, total)?;

    let mut base_out = Vec::with_capacity(prompts.len());
    for p in prompts {
        progress(&Progress { stage: "baseline".into(), done, total });
        base_out.push(greedy(target, &p.target_ids, &opts.decode, clock, energy)?);
        done += 1;
    }
    let base = sum(base_out);
    let (base_all, base_decode) = generated(&base.outputs);
    let target_pass = base.passes.target_single.mean();
    let base_tps = per_s(base_decode, base.times.decode_s);
    let prompt_tokens: u64 = prompts.iter().map(|p| p.target_ids.len() as u64).sum();
    let baseline = Baseline {
        prompt_tokens,
        generated_tokens: base_all,
        prefill_tokens_per_s: per_s(prompt_tokens, base.times.prefill_s),
        decode_tokens_per_s: base_tps,
        decode_s: base.times.decode_s,
        prefill_s: base.times.prefill_s,
        target_pass_s: target_pass,
        energy_j_per_token: base.energy.and_then(|e| (base_decode > 0).then(|| e / base_decode as f64)),
        prompts: prompts
            .iter()
            .zip(&base.outputs)
            .map(|(p, o)| BaselinePrompt {
                prompt: p.text.clone(),
                prompt_ids: p.target_ids.clone(),
                output_ids: o.ids.clone(),
                text: decode_text(tokenizer, &o.ids),
                prefill_s: o.times.prefill_s,
                decode_s: o.times.decode_s,
                decode_tokens_per_s: per_s(o.ids.len().saturating_sub(1) as u64, o.times.decode_s),
            })
            .collect(),
    };

    let Some(draft) = draft else {
        progress(&Progress { stage: "done".into(), done, total });
        return Ok(report(opts, None, None, energy, baseline, None, Vec::new(), prompts.len()));
    };
    let pair = draft.pair;
    let texts: Vec<&str> = baseline.prompts.iter().flat_map(|p| [p.prompt.as_str(), p.text.as_str()]).collect();
    let segmentation = Some(segmentation::measure(pair.target, pair.draft, &texts));
    // One chooser per configuration for all its prompts: pass costs and acceptance carry over
    // (acceptance decays by round anyway), so short prompts do not each pay for measuring.
    let mut autos: Vec<AutoK> =
        configs.iter().map(|_| AutoK::new(opts.k_max_auto, target_pass.unwrap_or(0.0))).collect();
    let mut outs: Vec<Vec<Output>> = configs.iter().map(|_| Vec::with_capacity(prompts.len())).collect();
    let mut again: Vec<Vec<Output>> = configs.iter().map(|_| Vec::new()).collect();
    let steps: Vec<(usize, usize)> = match opts.order {
        RunOrder::Interleaved => (0..prompts.len()).flat_map(|p| (0..configs.len()).map(move |c| (c, p))).collect(),
        RunOrder::Grouped => (0..configs.len()).flat_map(|c| (0..prompts.len()).map(move |p| (c, p))).collect(),
    };
    for (c, i) in steps {
        let (k, strategy) = configs[c];
        let p = &prompts[i];
        let label = format!("{strategy} k={k}");
        if paired {
            progress(&Progress { stage: format!("{label}: baseline"), done, total });
            again[c].push(greedy(target, &p.target_ids, &opts.decode, clock, energy)?);
            done += 1;
        }
        progress(&Progress { stage: label, done, total });
        let sopts = opts.spec(strategy);
        let mut policy = match k {
            KSetting::Fixed(k) => DraftLength::Fixed(k),
            KSetting::Auto => DraftLength::Auto(&mut autos[c]),
        };
        outs[c].push(speculative(
            target,
            draft.model,
            pair,
            &p.target_ids,
            &p.draft_ids,
            &sopts,
            &mut policy,
            clock,
            energy,
        )?);
        done += 1;
    }
    let mut runs = Vec::with_capacity(configs.len());
    for ((&(k, strategy), outs), again) in configs.iter().zip(outs).zip(again) {
        let s = sum(outs);
        let run = if paired {
            let b = sum(again);
            let tps = per_s(generated(&b.outputs).1, b.times.decode_s);
            summarise(k, strategy, opts, pair, prompts, &base, &s, &b.outputs, b.passes.target_single.mean(), tps)
        } else {
            summarise(k, strategy, opts, pair, prompts, &base, &s, &base.outputs, target_pass, base_tps)
        };
        runs.push(run);
    }
    progress(&Progress { stage: "done".into(), done, total });
    let mut r =
        report(opts, Some(draft.label), Some(pair.identical), energy, baseline, segmentation, runs, prompts.len());
    r.warnings = drift_warnings(&r.runs, opts.baseline);
    Ok(r)
}

/// Runs the target alone, and with a draft the first strategy at k = 2, on the first prompt,
/// untimed, before anything is timed. The first passes of a process run cold: the packed
/// weights are paged in from their file, the caches and the allocator's pools are empty, the
/// cores may still be raising their clock. On a 2-vCPU AMX Xeon the target alone timed first
/// decoded at 2,482 tokens/s and the same work minutes later at 2,991-3,055 (issue #50).
#[allow(clippy::too_many_arguments)]
fn warm_up<T, D, TT, DT>(
    target: &T,
    draft: Option<&Draft<'_, D, TT, DT>>,
    prompts: &[Prompt],
    strategy: Option<Strategy>,
    opts: &RunOptions,
    clock: &dyn Clock,
    energy: &mut dyn EnergyMeter,
    progress: &mut dyn FnMut(&Progress),
    total: usize,
) -> Result<(), SpeculateError>
where
    T: LanguageModel + ?Sized,
    D: LanguageModel + ?Sized,
    TT: TextTokenizer + ?Sized,
    DT: TextTokenizer + ?Sized,
{
    let Some(p) = prompts.first() else { return Ok(()) };
    progress(&Progress { stage: "warm-up".into(), done: 0, total });
    greedy(target, &p.target_ids, &opts.decode, clock, energy)?;
    if let (Some(d), Some(strategy)) = (draft, strategy) {
        let sopts = opts.spec(strategy);
        // The draft's passes, translation, re-sync and the target's verification passes of
        // several positions (other kernels than the single-position ones).
        speculative(
            target,
            d.model,
            d.pair,
            &p.target_ids,
            &p.draft_ids,
            &sopts,
            &mut DraftLength::Fixed(2),
            clock,
            energy,
        )?;
    }
    Ok(())
}

/// One warning per configuration that drafted (almost) nothing and yet strays from the target
/// alone plus its overhead by more than its interval.
fn drift_warnings(runs: &[Run], baseline: BaselineTiming) -> Vec<String> {
    let hint = match baseline {
        BaselineTiming::Once => {
            " (the target alone was timed once, before every configuration: the default --baseline paired times it next to each)"
        }
        BaselineTiming::Paired => "",
    };
    runs.iter()
        .filter_map(|run| {
            let g = run.target_alone.filter(|g| g.drifted)?;
            let ci = run.speedup_ci?;
            Some(format!(
                "{} drafted in {} of {} rounds, so it did the target alone's work plus {:.1}% overhead ({:.2}x), \
                 yet measured {:.2}x [{:.2}, {:.2}]: the machine's speed moved between it and its baseline{hint}",
                run.label(),
                g.drafting_rounds,
                g.rounds,
                100.0 * g.overhead_share,
                g.expected_speedup,
                run.speedup.unwrap_or(f64::NAN),
                ci.low,
                ci.high,
            ))
        })
        .collect()
}

#[allow(clippy::too_many_arguments)]
fn report(
    opts: &RunOptions,
    draft: Option<String>,
    same_vocabulary: Option<bool>,
    energy: &dyn EnergyMeter,
    baseline: Baseline,
    segmentation: Option<Segmentation>,
    runs: Vec<Run>,
    prompts: usize,
) -> Report {
    Report {
        schema: SCHEMA,
        target: opts.target_label.clone(),
        draft,
        same_vocabulary,
        kernel: opts.kernel_label.clone(),
        settings: Settings {
            max_new_tokens: opts.decode.max_new_tokens,
            verify: opts.verify,
            prefix: opts.prefix,
            lookbehind: opts.lookbehind,
            baseline: opts.baseline,
            order: opts.order,
            stop_ids: opts.decode.stop.clone(),
            prompts,
            divergence_tolerance: opts.divergence_tolerance,
            draft_vocab: None,
        },
        clock: opts.clock_label.clone(),
        energy_source: energy.source(),
        baseline,
        segmentation,
        runs,
        warnings: Vec::new(),
    }
}

/// The text of `ids` (special tokens skipped); a report keeps the ids even if decoding fails.
fn decode_text<TT: TextTokenizer + ?Sized>(tokenizer: &TT, ids: &[u32]) -> String {
    tokenizer.decode(ids).unwrap_or_else(|e| format!("<decode failed: {e}>"))
}

#[allow(clippy::too_many_arguments)]
fn summarise<TT: TextTokenizer + ?Sized, DT: TextTokenizer + ?Sized>(
    k: KSetting,
    strategy: Strategy,
    opts: &RunOptions,
    pair: &Pair<TT, DT>,
    prompts: &[Prompt],
    base: &Summed,
    s: &Summed,
    timed_base: &[Output],
    target_pass: Option<f64>,
    base_tps: Option<f64>,
) -> Run {
    let c = &s.counters;
    let (all, decode) = generated(&s.outputs);
    let tps = per_s(decode, s.times.decode_s);
    // Every draft pass counts (the first of a round also ingests re-synchronised tokens): the
    // cost model charges k draft passes per round.
    let mut all_draft = s.passes.draft_single;
    all_draft.merge(&s.passes.draft_multi);
    let draft_pass = all_draft.mean();
    let cost_ratio = match (target_pass, draft_pass) {
        (Some(t), Some(d)) if t > 0.0 => Some(d / t),
        _ => None,
    };
    let rounds = c.rounds.max(1) as f64;
    let (k_d, k_t) = (c.drafted as f64 / rounds, c.proposed as f64 / rounds);
    let round_ratio = target_pass.filter(|&t| t > 0.0 && c.rounds > 0).map(|t| s.times.decode_s / rounds / t);
    // Gain in target candidates, cost in draft passes (the same numbers when ids cross 1:1).
    let predicted = match (c.alpha_hat(), cost_ratio) {
        (Some(a), Some(cr)) => Some(expected_tokens(a, k_t) / (k_d * cr + 1.0)),
        _ => None,
    };
    let measured_costs = match (c.alpha_hat(), target_pass, draft_pass, base_tps) {
        (Some(a), Some(t), Some(d), Some(b)) if b > 0.0 => {
            let overhead = (s.times.translate_s + s.times.resync_s + s.times.other_s()) / rounds;
            CostInputs { target_pass: t, draft_pass: d, verify: &s.passes.verify, overhead }
                .predicted_speedup_of_rounds(a, k_d, k_t, c.rounds, 1.0 / b)
        }
        _ => None,
    };
    let pairs: Vec<PairedPrompt> = s
        .outputs
        .iter()
        .zip(timed_base)
        .map(|(o, b)| PairedPrompt {
            tokens: o.ids.len().saturating_sub(1) as u64,
            seconds: o.times.decode_s,
            base_tokens: b.ids.len().saturating_sub(1) as u64,
            base_seconds: b.times.decode_s,
        })
        .collect();
    let ci = speedup_interval(&pairs);
    let guard =
        target_alone(c.drafting_rounds, c.rounds, decode, s.times.decode_s, s.times.verify_s, base_tps, ci.as_ref());
    let mut divergences = Vec::new();
    let mut results = Vec::with_capacity(prompts.len());
    let mut identical = 0;
    for (i, (p, (o, b))) in prompts.iter().zip(s.outputs.iter().zip(&base.outputs)).enumerate() {
        let same = o.ids == b.ids;
        identical += same as usize;
        if let Some(pos) = o.ids.iter().zip(&b.ids).position(|(x, y)| x != y) {
            let margin = b.top2[pos].margin();
            divergences.push(Divergence {
                prompt: i,
                position: pos,
                baseline: b.top2[pos],
                speculative: o.top2[pos],
                margin,
                within_tolerance: margin <= opts.divergence_tolerance,
            });
        }
        results.push(PromptResult {
            prompt: p.text.clone(),
            baseline_ids: b.ids.clone(),
            output_ids: o.ids.clone(),
            text: decode_text(pair.target, &o.ids),
            identical: same,
            speedup: pairs[i].speedup(),
        });
    }
    Run {
        k,
        strategy,
        verify: opts.verify,
        acceptance_rate: c.acceptance(),
        acceptance_rate_draft: c.acceptance_draft(),
        draft_accuracy: c.draft_accuracy(),
        alpha_hat: c.alpha_hat(),
        tokens_per_pass: c.tokens_per_pass(),
        candidates_per_draft_token: c.candidates_per_draft_token(),
        mean_k: c.mean_k(),
        rounds: c.rounds,
        drafting_rounds: c.drafting_rounds,
        drafted: c.drafted,
        drafted_accepted: c.drafted_accepted,
        drafted_committed: c.drafted_committed,
        proposed: c.proposed,
        accepted: c.accepted,
        empty_rounds: c.empty_rounds,
        resync_fed: c.resync_fed,
        m_histogram: c.m_histogram.clone(),
        k_histogram: c.k_histogram.clone(),
        generated_tokens: all,
        decode_tokens_per_s: tps,
        baseline_tokens_per_s: base_tps,
        speedup: match (tps, base_tps) {
            (Some(a), Some(b)) if b > 0.0 => Some(a / b),
            _ => None,
        },
        speedup_ci: ci,
        speedup_verdict: ci.as_ref().map(Verdict::of),
        target_alone: guard,
        time: Time::from(&s.times),
        c: cost_ratio,
        draft_pass_s: draft_pass,
        verify_pass_s: s.passes.verify.iter().filter_map(|(m, a)| Some((*m, a.mean()?))).collect(),
        round_cost_ratio: round_ratio,
        predicted_speedup: predicted,
        predicted_speedup_measured_costs: measured_costs,
        break_even_acceptance: BreakEven {
            geometric: round_ratio.and_then(|r| break_even_geometric(r, k_t)),
            linear: round_ratio.and_then(|r| break_even_linear(r, k_t)),
        },
        energy_j_per_token: s.energy.and_then(|e| (decode > 0).then(|| e / decode as f64)),
        identical_prompts: identical,
        divergences,
        prompts: results,
    }
}

#[cfg(test)]
mod tests;
