//! `--csv OUT`: one row per configuration, scalar columns only (empty cell: no value).

use std::path::Path;

use super::{Report, ReportError, Run, write_atomic};

const COLUMNS: &[&str] = &[
    "k",
    "strategy",
    "verify",
    "acceptance_rate",
    "acceptance_rate_draft",
    "draft_accuracy",
    "alpha_hat",
    "tokens_per_pass",
    "candidates_per_draft_token",
    "mean_k",
    "rounds",
    "drafted",
    "proposed",
    "accepted",
    "generated_tokens",
    "decode_tokens_per_s",
    "baseline_tokens_per_s",
    "speedup",
    "c",
    "predicted_speedup",
    "predicted_speedup_measured_costs",
    "round_cost_ratio",
    "break_even_geometric",
    "break_even_linear",
    "draft_s",
    "translate_s",
    "resync_s",
    "verify_s",
    "other_s",
    "decode_s",
    "energy_j_per_token",
    "identical_prompts",
    "divergences",
    "speedup_ci_low",
    "speedup_ci_high",
    "speedup_verdict",
    "drafting_rounds",
    "target_alone_expected_speedup",
    "target_alone_overhead_share",
    "target_alone_drifted",
];

fn opt(x: Option<f64>) -> String {
    x.map_or(String::new(), |v| format!("{v}"))
}

fn row(r: &Run) -> Vec<String> {
    vec![
        r.k.to_string(),
        r.strategy.to_string(),
        r.verify.name().to_string(),
        opt(r.acceptance_rate),
        opt(r.acceptance_rate_draft),
        opt(r.draft_accuracy),
        opt(r.alpha_hat),
        opt(r.tokens_per_pass),
        opt(r.candidates_per_draft_token),
        opt(r.mean_k),
        r.rounds.to_string(),
        r.drafted.to_string(),
        r.proposed.to_string(),
        r.accepted.to_string(),
        r.generated_tokens.to_string(),
        opt(r.decode_tokens_per_s),
        opt(r.baseline_tokens_per_s),
        opt(r.speedup),
        opt(r.c),
        opt(r.predicted_speedup),
        opt(r.predicted_speedup_measured_costs),
        opt(r.round_cost_ratio),
        opt(r.break_even_acceptance.geometric),
        opt(r.break_even_acceptance.linear),
        r.time.draft_s.to_string(),
        r.time.translate_s.to_string(),
        r.time.resync_s.to_string(),
        r.time.verify_s.to_string(),
        r.time.other_s.to_string(),
        r.time.decode_s.to_string(),
        opt(r.energy_j_per_token),
        r.identical_prompts.to_string(),
        r.divergences.len().to_string(),
        opt(r.speedup_ci.map(|c| c.low)),
        opt(r.speedup_ci.map(|c| c.high)),
        r.speedup_verdict.map_or(String::new(), |v| v.name().replace(' ', "_")),
        r.drafting_rounds.to_string(),
        opt(r.target_alone.map(|g| g.expected_speedup)),
        opt(r.target_alone.map(|g| g.overhead_share)),
        r.target_alone.map_or(String::new(), |g| g.drifted.to_string()),
    ]
}

pub fn to_string(r: &Report) -> String {
    let mut s = COLUMNS.join(",");
    s.push('\n');
    for run in &r.runs {
        // No field holds a comma, quote or newline (numbers, fixed words), so no quoting.
        s.push_str(&row(run).join(","));
        s.push('\n');
    }
    s
}

pub fn write(r: &Report, path: &Path) -> Result<(), ReportError> {
    write_atomic(path, to_string(r).as_bytes())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::speculate::report::sample::sample;

    #[test]
    fn one_row_per_run_with_every_column() {
        let r = sample();
        let text = to_string(r);
        let lines: Vec<&str> = text.lines().collect();
        assert_eq!(lines.len(), r.runs.len() + 1);
        for l in &lines {
            assert_eq!(l.split(',').count(), COLUMNS.len(), "{l}");
        }
        assert!(lines[1].starts_with(&format!("{},{},", r.runs[0].k, r.runs[0].strategy)));
    }
}
