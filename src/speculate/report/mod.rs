//! What a `speculate` run reports, and the four ways of writing it (one file per format).
//! The JSON form is the stable schema documented in docs/speculate-json.md.

pub mod csv;
pub mod json;
pub mod svg;
pub mod table;

use std::collections::BTreeMap;
use std::fmt;

use serde::{Serialize, Serializer};

use super::lm::Top2;
use super::metrics::TimeSplit;
use super::rounds::{BaselineTiming, RunOrder, Verify};
use super::segmentation::Segmentation;
use super::spread::{Interval, TargetAlone, Verdict};
use super::strategy::Strategy;

/// Schema name and version written into every JSON report.
pub const SCHEMA: &str = "reseam-speculate/1";

/// A draft length setting: fixed, or chosen every round.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum KSetting {
    Fixed(usize),
    Auto,
}

impl fmt::Display for KSetting {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            KSetting::Fixed(k) => write!(f, "{k}"),
            KSetting::Auto => f.write_str("auto"),
        }
    }
}

impl Serialize for KSetting {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        match self {
            KSetting::Fixed(k) => s.serialize_u64(*k as u64),
            KSetting::Auto => s.serialize_str("auto"),
        }
    }
}

/// The whole report. A run without a draft has only the baseline: `draft` and
/// `same_vocabulary` are `None` and `runs` is empty.
#[derive(Clone, Debug, Serialize)]
pub struct Report {
    pub schema: &'static str,
    pub target: String,
    pub draft: Option<String>,
    /// Draft and target vocabularies are identical (ids cross unchanged).
    pub same_vocabulary: Option<bool>,
    /// The int8 kernel that ran (`reference`, `avx512vnni`, ...), or `none` when no int8 product
    /// ran (f32 or bf16 weights, mock models).
    pub kernel: String,
    pub settings: Settings,
    /// "wall", or "virtual" for mock runs with made-up pass costs.
    pub clock: String,
    /// What the energy figures measure, or "n/a (<reason>)".
    pub energy_source: String,
    pub baseline: Baseline,
    /// With a draft: how both tokenizers cut the prompts and the target's outputs.
    pub segmentation: Option<Segmentation>,
    pub runs: Vec<Run>,
    /// Configurations that drafted (almost) nothing yet whose speedup differs from the target
    /// alone plus their overhead by more than their interval: the machine's speed moved.
    pub warnings: Vec<String>,
}

#[derive(Clone, Debug, Serialize)]
pub struct Settings {
    pub max_new_tokens: usize,
    pub verify: Verify,
    pub prefix: usize,
    pub lookbehind: usize,
    /// When the target alone was timed for the speedups.
    pub baseline: BaselineTiming,
    /// Whether each prompt went through every configuration in turn (interleaved) or each
    /// configuration through every prompt (grouped).
    pub order: RunOrder,
    pub stop_ids: Vec<u32>,
    pub prompts: usize,
    /// Largest logit margin a batched-verification divergence may have to count as a near-tie.
    pub divergence_tolerance: f32,
    /// The draft's output layer cut to a corpus's frequent ids (--draft-vocab-corpus).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub draft_vocab: Option<DraftVocabUsed>,
}

/// What --draft-vocab-corpus did: the draft computed logits for `ids` of its `rows` output rows.
#[derive(Clone, Debug, Serialize)]
pub struct DraftVocabUsed {
    pub corpus: String,
    /// --draft-vocab (0: every id in the corpus).
    pub size: usize,
    pub ids: usize,
    pub rows: usize,
}

/// The target alone.
#[derive(Clone, Debug, Serialize)]
pub struct Baseline {
    pub prompt_tokens: u64,
    pub generated_tokens: u64,
    /// Prompt tokens over `prefill_s`.
    pub prefill_tokens_per_s: Option<f64>,
    /// Tokens after the first (which the prompt pass yields), over `decode_s`.
    pub decode_tokens_per_s: Option<f64>,
    pub decode_s: f64,
    pub prefill_s: f64,
    /// Mean time of one single-position target pass.
    pub target_pass_s: Option<f64>,
    pub energy_j_per_token: Option<f64>,
    pub prompts: Vec<BaselinePrompt>,
}

/// One prompt decoded by the target alone.
#[derive(Clone, Debug, Serialize)]
pub struct BaselinePrompt {
    pub prompt: String,
    /// What the target was fed (with its BOS, or the chat template's rendering).
    pub prompt_ids: Vec<u32>,
    pub output_ids: Vec<u32>,
    /// `output_ids` decoded, special tokens skipped.
    pub text: String,
    pub prefill_s: f64,
    pub decode_s: f64,
    pub decode_tokens_per_s: Option<f64>,
}

/// One configuration (draft length × strategy) over all prompts.
#[derive(Clone, Debug, Serialize)]
pub struct Run {
    pub k: KSetting,
    pub strategy: Strategy,
    pub verify: Verify,
    /// Σ accepted / Σ proposed candidates, in target tokens.
    pub acceptance_rate: Option<f64>,
    /// Σ draft tokens whose text accepted candidates carry / Σ draft tokens.
    pub acceptance_rate_draft: Option<f64>,
    /// Σ draft tokens whose text was committed at their place (by accepted candidates or the
    /// target's own token) / Σ draft tokens: how often the draft was right.
    pub draft_accuracy: Option<f64>,
    /// A / (A + R): per-token acceptance of the i.i.d. model, used for predictions.
    pub alpha_hat: Option<f64>,
    /// Committed tokens per target verification pass.
    pub tokens_per_pass: Option<f64>,
    /// Target candidates per draft token.
    pub candidates_per_draft_token: Option<f64>,
    pub mean_k: Option<f64>,
    pub rounds: u64,
    /// Rounds in which the draft ran.
    pub drafting_rounds: u64,
    pub drafted: u64,
    pub drafted_accepted: u64,
    pub drafted_committed: u64,
    pub proposed: u64,
    pub accepted: u64,
    pub empty_rounds: u64,
    pub resync_fed: u64,
    pub m_histogram: Vec<u64>,
    pub k_histogram: Vec<u64>,
    pub generated_tokens: u64,
    pub decode_tokens_per_s: Option<f64>,
    /// The target alone's decode tokens/s this run is compared with: the baseline's, or with
    /// `--baseline paired` its own timing of the target alone.
    pub baseline_tokens_per_s: Option<f64>,
    /// Decode tokens/s over `baseline_tokens_per_s`.
    pub speedup: Option<f64>,
    /// 95% bootstrap interval of the speedup over the prompts' paired timings (None below two
    /// prompts).
    pub speedup_ci: Option<Interval>,
    /// Faster, slower, or no measurable difference (the interval contains 1).
    pub speedup_verdict: Option<Verdict>,
    /// Set when the configuration drafted in at most 5% of its rounds: the speedup the target
    /// alone plus its measured overhead gives, and whether the measured one strays from it.
    pub target_alone: Option<TargetAlone>,
    pub time: Time,
    /// Mean draft pass time / mean single-position target pass time.
    pub c: Option<f64>,
    pub draft_pass_s: Option<f64>,
    /// Mean verification pass time by positions verified.
    pub verify_pass_s: BTreeMap<usize, f64>,
    /// Mean round time / target pass time.
    pub round_cost_ratio: Option<f64>,
    /// Leviathan's model from alpha_hat and c: E(α̂, k_t) / (k_d·c + 1).
    pub predicted_speedup: Option<f64>,
    /// The same gain over the measured round costs (draft passes, each round's verification at
    /// its own size, translation, re-sync, bookkeeping), against the target alone's measured time
    /// per token.
    pub predicted_speedup_measured_costs: Option<f64>,
    pub break_even_acceptance: BreakEven,
    pub energy_j_per_token: Option<f64>,
    pub identical_prompts: usize,
    pub divergences: Vec<Divergence>,
    pub prompts: Vec<PromptResult>,
}

/// Where the time of decoding went (seconds, all prompts).
#[derive(Clone, Copy, Debug, Serialize)]
pub struct Time {
    pub draft_s: f64,
    pub translate_s: f64,
    pub resync_s: f64,
    pub verify_s: f64,
    pub other_s: f64,
    pub decode_s: f64,
    pub prefill_s: f64,
}

impl From<&TimeSplit> for Time {
    fn from(t: &TimeSplit) -> Time {
        Time {
            draft_s: t.draft_s,
            translate_s: t.translate_s,
            resync_s: t.resync_s,
            verify_s: t.verify_s,
            other_s: t.other_s(),
            decode_s: t.decode_s,
            prefill_s: t.prefill_s,
        }
    }
}

/// Acceptance at which the measured round cost breaks even; None: not reachable (> 100%).
#[derive(Clone, Copy, Debug, Serialize)]
pub struct BreakEven {
    pub geometric: Option<f64>,
    pub linear: Option<f64>,
}

/// The first place where a prompt's output left the baseline's.
#[derive(Clone, Debug, Serialize)]
pub struct Divergence {
    pub prompt: usize,
    /// Index into the generated ids.
    pub position: usize,
    pub baseline: Top2,
    pub speculative: Top2,
    /// The baseline's top-1 minus top-2 logit there.
    pub margin: f32,
    pub within_tolerance: bool,
}

#[derive(Clone, Debug, Serialize)]
pub struct PromptResult {
    pub prompt: String,
    pub baseline_ids: Vec<u32>,
    pub output_ids: Vec<u32>,
    pub text: String,
    pub identical: bool,
    /// This prompt's decode tokens/s over the target alone's on it (the pairs the interval
    /// draws from).
    pub speedup: Option<f64>,
}

impl Run {
    /// Label used in tables and plots: "context k=2".
    pub fn label(&self) -> String {
        format!("{} k={}", self.strategy, self.k)
    }
}

/// Fixed-width percentage or "-".
pub(crate) fn pct(x: Option<f64>) -> String {
    x.map_or("-".into(), |v| format!("{:.1}%", 100.0 * v))
}

/// Fixed-precision number or "-".
pub(crate) fn num(x: Option<f64>, digits: usize) -> String {
    x.map_or("-".into(), |v| format!("{v:.digits$}"))
}

/// Why a report could not be written.
#[derive(Debug, thiserror::Error)]
pub enum ReportError {
    #[error("cannot write {path}: check that its folder exists and is writable")]
    Write {
        path: std::path::PathBuf,
        #[source]
        source: std::io::Error,
    },
}

crate::error::fault!(ReportError);

impl ReportError {
    /// A report that cannot be written is a failure, even when the folder is the caller's.
    pub fn is_usage(&self) -> bool {
        false
    }
}

/// Writes `bytes` to `path` through a temporary file in the same folder and a rename, so a
/// reader never sees half a report and a failure leaves no partial file behind.
pub fn write_atomic(path: &std::path::Path, bytes: &[u8]) -> Result<(), ReportError> {
    use std::io::Write;
    let err = |source| ReportError::Write { path: path.to_path_buf(), source };
    let dir = match path.parent() {
        Some(d) if !d.as_os_str().is_empty() => d,
        _ => std::path::Path::new("."),
    };
    let mut tmp = tempfile::NamedTempFile::new_in(dir).map_err(err)?;
    // A temporary file is private (0600); a report gets the permissions of the file it replaces,
    // or those of an ordinary new file.
    #[cfg(unix)]
    {
        use std::os::unix::fs::PermissionsExt;
        let perms =
            std::fs::metadata(path).map(|m| m.permissions()).unwrap_or_else(|_| PermissionsExt::from_mode(0o644));
        tmp.as_file().set_permissions(perms).map_err(err)?;
    }
    tmp.write_all(bytes).map_err(err)?;
    tmp.as_file().sync_all().map_err(err)?;
    tmp.persist(path).map_err(|e| err(e.error))?;
    Ok(())
}

#[cfg(test)]
pub(crate) mod sample;
