//! The table printed on stdout, with the definitions a reader needs under it.

use super::{Report, num, pct};
use crate::speculate::rounds::BaselineTiming;
use crate::speculate::spread::{Interval, Verdict};

fn time_split(r: &super::Run) -> String {
    let t = &r.time;
    if t.decode_s <= 0.0 {
        return "-".into();
    }
    let p = |x: f64| format!("{:.0}", 100.0 * x / t.decode_s);
    format!("{}/{}/{}/{}/{}", p(t.draft_s), p(t.translate_s), p(t.resync_s), p(t.verify_s), p(t.other_s))
}

fn times(x: Option<f64>) -> String {
    x.map_or("-".into(), |v| format!("{v:.2}x"))
}

fn interval(x: Option<Interval>) -> String {
    x.map_or("-".into(), |ci| format!("{:.2}-{:.2}", ci.low, ci.high))
}

fn verdict(x: Option<Verdict>) -> String {
    x.map_or("-".into(), |v| match v {
        Verdict::NoMeasurableDifference => "no difference".into(),
        v => v.name().into(),
    })
}

fn break_even(x: Option<f64>) -> String {
    x.map_or(">100%".into(), |v| format!("{:.0}%", 100.0 * v))
}

pub fn to_string(r: &Report) -> String {
    let Some(draft) = &r.draft else {
        return target_alone(r);
    };
    let mut out = String::new();
    let b = &r.baseline;
    out.push_str(&format!(
        "target {}  draft {}{}\nverify {}, {} prompts, up to {} new tokens, clock {}\n",
        r.target,
        draft,
        if r.same_vocabulary == Some(true) {
            " (same vocabulary: every strategy takes the draft ids as they are)"
        } else {
            ""
        },
        r.settings.verify.name(),
        r.settings.prompts,
        r.settings.max_new_tokens,
        r.clock,
    ));
    if let Some(v) = &r.settings.draft_vocab {
        out.push_str(&format!(
            "draft output layer: {} of {} rows ({} in {}, and end-of-sequence ids)\n",
            v.ids,
            v.rows,
            if v.size == 0 { "every id that occurs".to_string() } else { format!("the {} most frequent", v.size) },
            v.corpus,
        ));
    }
    out.push_str(&format!(
        "baseline (target alone): {} tok/s decode, target pass {} ms, energy {}\n{}\n\n",
        num(b.decode_tokens_per_s, 1),
        num(b.target_pass_s.map(|s| s * 1e3), 2),
        b.energy_j_per_token.map_or(r.energy_source.clone(), |j| format!("{j:.3} J/token ({})", r.energy_source)),
        match r.settings.baseline {
            BaselineTiming::Paired => {
                // The spread of the paired timings shows how far the machine's speed moved.
                let tps: Vec<f64> = r.runs.iter().filter_map(|x| x.baseline_tokens_per_s).collect();
                let range = if tps.is_empty() {
                    String::new()
                } else {
                    let lo = tps.iter().copied().fold(f64::INFINITY, f64::min);
                    let hi = tps.iter().copied().fold(0.0, f64::max);
                    format!(": {lo:.1}-{hi:.1} tok/s")
                };
                format!(
                    "speedups against the target alone timed right before each configuration's run of each prompt (--baseline paired{range})"
                )
            }
            BaselineTiming::Once => "speedups against the target alone timed once, before all configurations (--baseline once: a machine whose speed moves moves them)".to_string(),
        },
    ));
    let header = [
        "strategy",
        "k",
        "accept",
        "accept/draft",
        "draft right",
        "tok/pass",
        "tok/s",
        "speedup",
        "95% CI",
        "vs target",
        "predicted",
        "pred(costs)",
        "c",
        "break-even geo/lin",
        "draft/transl/resync/verify/other %",
        "J/tok",
        "identical",
    ];
    let mut rows: Vec<Vec<String>> = vec![header.iter().map(|s| s.to_string()).collect()];
    for run in &r.runs {
        rows.push(vec![
            run.strategy.to_string(),
            run.k.to_string(),
            pct(run.acceptance_rate),
            pct(run.acceptance_rate_draft),
            pct(run.draft_accuracy),
            num(run.tokens_per_pass, 2),
            num(run.decode_tokens_per_s, 1),
            times(run.speedup),
            interval(run.speedup_ci),
            verdict(run.speedup_verdict),
            times(run.predicted_speedup),
            times(run.predicted_speedup_measured_costs),
            num(run.c, 3),
            if run.round_cost_ratio.is_some() {
                format!(
                    "{} / {}",
                    break_even(run.break_even_acceptance.geometric),
                    break_even(run.break_even_acceptance.linear)
                )
            } else {
                "-".into()
            },
            time_split(run),
            num(run.energy_j_per_token, 3),
            format!("{}/{}", run.identical_prompts, run.prompts.len()),
        ]);
    }
    let widths: Vec<usize> =
        (0..header.len()).map(|c| rows.iter().map(|r| r[c].chars().count()).max().unwrap_or(0)).collect();
    for row in &rows {
        let cells: Vec<String> = row
            .iter()
            .zip(&widths)
            .enumerate()
            .map(|(i, (cell, w))| if i < 2 { format!("{cell:<w$}") } else { format!("{cell:>w$}") })
            .collect();
        out.push_str(cells.join("  ").trim_end());
        out.push('\n');
    }
    out.push_str(
        "\naccept = Σ accepted / Σ proposed candidates, in target tokens; accept/draft = draft tokens carried by accepted\n\
         candidates / draft tokens; draft right = draft tokens whose text was committed at their place (also by the\n\
         target's own token) / draft tokens; tok/pass = committed tokens per target verification pass.\n\
         predicted = E(α̂,k)/(k·c+1) (Leviathan), α̂ = accepted/(accepted+rejecting rounds), c = draft pass/target pass;\n\
         pred(costs) = the same gain over the measured round cost; break-even = acceptance at which the measured\n\
         round cost pays off (geometric / linear gain model; >100%: no acceptance can).\n\
         95% CI = bootstrap over the prompts' paired timings; vs target: faster or slower when the whole interval is\n\
         above or below 1, else no difference (no measurable difference from the target alone).\n\
         Paper (Bielik-11B, M2 Pro): break-even ~40% at k=2 and >100% at k=6: reported, not reproduced (no round cost\n\
         linear in k that breaks even at 40% for k=2 exceeds 100% at k=6; see docs/speculate-json.md).\n",
    );
    for run in &r.runs {
        if let Some(g) = &run.target_alone {
            out.push_str(&format!(
                "{}: drafted in {} of {} rounds, the target alone's work plus {:.1}% overhead: {:.2}x expected, {} measured{}\n",
                run.label(),
                g.drafting_rounds,
                g.rounds,
                100.0 * g.overhead_share,
                g.expected_speedup,
                times(run.speedup),
                if g.drifted { " (outside its interval: see the warning)" } else { "" },
            ));
        }
    }
    for w in &r.warnings {
        out.push_str(&format!("WARNING: {w}\n"));
    }
    for run in &r.runs {
        for d in &run.divergences {
            out.push_str(&format!(
                "{}: prompt {} left the baseline at token {}: baseline {} ({:.6}) over {} ({:.6}), speculative {} ({:.6}) over {} ({:.6}); margin {:.2e}{}\n",
                run.label(),
                d.prompt + 1,
                d.position,
                d.baseline.id,
                d.baseline.logit,
                d.baseline.runner_up,
                d.baseline.runner_up_logit,
                d.speculative.id,
                d.speculative.logit,
                d.speculative.runner_up,
                d.speculative.runner_up_logit,
                d.margin,
                if d.within_tolerance { " (near-tie: numerics of the batched pass)" } else { " (ABOVE TOLERANCE: not a near-tie)" },
            ));
        }
    }
    out
}

/// A run without a draft: the baseline per prompt, with prefill and decode speeds.
fn target_alone(r: &Report) -> String {
    let b = &r.baseline;
    let mut out = format!(
        "target {} (int8 kernel: {})\n{} prompts, up to {} new tokens, clock {}\n",
        r.target, r.kernel, r.settings.prompts, r.settings.max_new_tokens, r.clock
    );
    out.push_str(&format!(
        "{:>6}  {:>13}  {:>10}  {:>13}  {:>12}  text\n",
        "prompt", "prompt tokens", "new tokens", "prefill tok/s", "decode tok/s"
    ));
    for (i, p) in b.prompts.iter().enumerate() {
        let prefill = (p.prefill_s > 0.0).then(|| p.prompt_ids.len() as f64 / p.prefill_s);
        let text: String = p.text.chars().take(40).map(|c| if c.is_control() { ' ' } else { c }).collect();
        out.push_str(&format!(
            "{:>6}  {:>13}  {:>10}  {:>13}  {:>12}  {text}\n",
            i + 1,
            p.prompt_ids.len(),
            p.output_ids.len(),
            num(prefill, 1),
            num(p.decode_tokens_per_s, 1)
        ));
    }
    out.push_str(&format!(
        "{:>6}  {:>13}  {:>10}  {:>13}  {:>12}\n",
        "all",
        b.prompt_tokens,
        b.generated_tokens,
        num(b.prefill_tokens_per_s, 1),
        num(b.decode_tokens_per_s, 1)
    ));
    out.push_str(&format!(
        "decode: {} tokens/s (tokens after the first over decoding time), energy {}\n",
        num(b.decode_tokens_per_s, 2),
        b.energy_j_per_token.map_or(r.energy_source.clone(), |j| format!("{j:.3} J/token ({})", r.energy_source)),
    ));
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::speculate::report::sample::sample;

    #[test]
    fn table_lists_every_run_and_states_the_definitions() {
        let r = sample();
        let t = to_string(r);
        for run in &r.runs {
            assert!(
                t.lines()
                    .any(|l| l.starts_with(run.strategy.name())
                        && l.split_whitespace().nth(1) == Some(&run.k.to_string())),
                "{t}"
            );
        }
        assert!(t.contains("reported, not reproduced"));
        assert!(t.contains("Σ accepted / Σ proposed"));
        assert!(t.contains("baseline (target alone)"));
        assert!(t.contains("95% CI") && t.contains("no measurable difference from the target alone"));
        for run in &r.runs {
            let ci = run.speedup_ci.unwrap();
            assert!(t.contains(&format!("{:.2}-{:.2}", ci.low, ci.high)), "{t}");
        }
    }
}
