use super::*;
use crate::speculate::clock::{VirtualClock, WallClock};
use crate::speculate::energy::Unavailable;
use crate::speculate::mock::{Charged, HashModel};
use crate::speculate::spread::Verdict;
use crate::speculate::testutil::tok;

fn options(ks: &[usize], verify: Verify, max_new: usize) -> RunOptions {
    RunOptions {
        ks: ks.iter().map(|&k| KSetting::Fixed(k)).collect(),
        strategies: vec![Strategy::None],
        decode: DecodeOptions { max_new_tokens: max_new, stop: vec![] },
        verify,
        prefix: 5,
        lookbehind: 8,
        k_max_auto: 8,
        divergence_tolerance: 1e-3,
        baseline: BaselineTiming::Once,
        order: RunOrder::Interleaved,
        target_label: "t".into(),
        kernel_label: "none".into(),
        clock_label: "virtual".into(),
    }
}

fn prompts(n: usize) -> Vec<Prompt> {
    (0..n)
        .map(|i| Prompt { text: format!("p{i}"), target_ids: vec![1, 7 + i as u32], draft_ids: vec![1, 7 + i as u32] })
        .collect()
}

/// Batched verification flips near-ties (the mock's multi-position passes nudge the runner-up
/// by 1e-5); every divergence is reported with its margin, which is below the tolerance. Exact
/// verification never diverges.
#[test]
fn batched_divergences_are_reported_with_their_margins() {
    let t = tok("mistral-tiny");
    let mut m = HashModel::new(3000, 9);
    m.near_tie_every = 4;
    m.batch_noise = 1e-5;
    let pair = Pair { target: t, draft: t, target_eos: vec![], draft_eos: vec![], target_rows: 3000, identical: true };
    let clock = WallClock::new();
    let r = run(
        &m,
        pair.target,
        Some(Draft { model: &m, pair: &pair, label: "d".into() }),
        &prompts(6),
        &options(&[4], Verify::Batched, 40),
        &clock,
        &mut Unavailable("test".into()),
        &mut |_| {},
    )
    .unwrap();
    let run = &r.runs[0];
    assert!(!run.divergences.is_empty(), "the near-ties must flip somewhere");
    assert_eq!(run.identical_prompts + run.divergences.len(), 6);
    for d in &run.divergences {
        assert!(d.margin < 2e-6 && d.within_tolerance, "{d:?}");
        assert_ne!(d.baseline.id, d.speculative.id);
        assert_eq!(
            (d.baseline.id, d.speculative.id),
            (d.speculative.runner_up, d.baseline.runner_up),
            "the two paths swapped the top two"
        );
    }
    let exact = run_exact(&m, &pair);
    assert_eq!(exact.runs[0].identical_prompts, 6);
    assert!(exact.runs[0].divergences.is_empty());
}

fn run_exact(m: &HashModel, pair: &Pair<crate::llm::Tokenizer, crate::llm::Tokenizer>) -> Report {
    let clock = WallClock::new();
    run(
        m,
        pair.target,
        Some(Draft { model: m, pair, label: "d".into() }),
        &prompts(6),
        &options(&[4], Verify::Exact, 40),
        &clock,
        &mut Unavailable("test".into()),
        &mut |_| {},
    )
    .unwrap()
}

/// With known pass costs (virtual clock), measured speedup matches Leviathan's prediction from
/// the measured acceptance and c, for a perfect draft (α = 1) and a useless one (α ≈ 0).
#[test]
fn measured_speedup_matches_the_cost_model() {
    let t = tok("mistral-tiny");
    let pair = Pair { target: t, draft: t, target_eos: vec![], draft_eos: vec![], target_rows: 2000, identical: true };
    for (seed, name) in [(3u64, "perfect"), (4, "useless")] {
        let clock = VirtualClock::new();
        let target = Charged::new(HashModel::new(2000, 3), clock.clone(), 0.010, 0.0);
        let draft = Charged::new(HashModel::new(2000, seed), clock.clone(), 0.001, 0.0);
        let r = run(
            &target,
            pair.target,
            Some(Draft { model: &draft, pair: &pair, label: "d".into() }),
            &prompts(4),
            &options(&[1, 2, 4, 6], Verify::Batched, 64),
            &clock,
            &mut Unavailable("n/a".into()),
            &mut |_| {},
        )
        .unwrap();
        assert!((r.baseline.target_pass_s.unwrap() - 0.010).abs() < 1e-12);
        for run in &r.runs {
            let (s, p) = (run.speedup.unwrap(), run.predicted_speedup.unwrap());
            assert!((run.c.unwrap() - 0.1).abs() < 1e-9);
            assert!((s / p - 1.0).abs() < 0.03, "{name} {}: measured {s:.3} predicted {p:.3}", run.label());
            let pc = run.predicted_speedup_measured_costs.unwrap();
            assert!((s / pc - 1.0).abs() < 0.03, "{name} {}: measured {s:.3} from costs {pc:.3}", run.label());
            assert_eq!(run.identical_prompts, 4);
            let be = run.break_even_acceptance.geometric.unwrap();
            assert!(be > 0.0 && be < 1.0, "{be}");
        }
        let a = r.runs[0].acceptance_rate.unwrap();
        assert!(if name == "perfect" { a == 1.0 } else { a < 0.01 }, "{name}: {a}");
    }
}

/// `--baseline paired` keeps a drift in machine speed out of the speedups: when the machine
/// halves its speed after the baseline, the speedups against the one baseline halve, while the
/// paired ones equal those of a machine that was slow all along.
#[test]
fn a_paired_baseline_keeps_drift_out_of_the_speedups() {
    let t = tok("mistral-tiny");
    let pair = Pair { target: t, draft: t, target_eos: vec![], draft_eos: vec![], target_rows: 2000, identical: true };
    let speedups = |switch: f64, baseline: BaselineTiming| {
        let clock = VirtualClock::new();
        let target =
            Charged { slower_from: switch, ..Charged::new(HashModel::new(2000, 3), clock.clone(), 0.010, 0.0) };
        let draft = Charged::new(HashModel::new(2000, 4), clock.clone(), 0.001, 0.0);
        let mut seen = Vec::new();
        let mut baseline_end = None;
        let r = run(
            &target,
            pair.target,
            Some(Draft { model: &draft, pair: &pair, label: "d".into() }),
            &prompts(4),
            &RunOptions { baseline, ..options(&[1, 2], Verify::Batched, 64) },
            &clock,
            &mut Unavailable("n/a".into()),
            &mut |p| {
                seen.push((p.done, p.total));
                if p.stage != "warm-up" && p.stage != "baseline" && baseline_end.is_none() {
                    baseline_end = Some(clock.now());
                }
            },
        )
        .unwrap();
        let paired = baseline == BaselineTiming::Paired;
        assert_eq!(seen.last(), Some(&(4 * (1 + 2 * (1 + paired as usize)), 4 * (1 + 2 * (1 + paired as usize)))));
        assert_eq!(r.settings.baseline, baseline);
        (r.runs.iter().map(|x| x.speedup.unwrap()).collect::<Vec<_>>(), baseline_end.unwrap())
    };
    // The baseline (4 prompts, 64 passes each, 10 ms a pass) takes 2.56 s after the warm-up.
    let (slow_all_along, _) = speedups(0.0, BaselineTiming::Once);
    let (_, end) = speedups(f64::INFINITY, BaselineTiming::Once);
    let (drift_once, _) = speedups(end + 0.005, BaselineTiming::Once);
    let (drift_paired, _) = speedups(end + 0.005, BaselineTiming::Paired);
    for ((s, once), paired) in slow_all_along.iter().zip(&drift_once).zip(&drift_paired) {
        // Not exactly half: the draft's passes did not slow down.
        assert!((0.45..0.6).contains(&(once / s)), "once: {once} against {s}");
        assert!((paired / s - 1.0).abs() < 1e-9, "paired: {paired} against {s}");
    }
}

/// `--order interleaved` spreads a slow stretch over every configuration: two configurations
/// that make identical rounds (one vocabulary: `none` and `naive` take the same ids) come out
/// equal when the machine halves its speed halfway through, while grouped, the one that ran
/// second takes all of the slowdown.
#[test]
fn interleaving_spreads_a_slow_stretch_over_every_configuration() {
    let t = tok("mistral-tiny");
    let pair = Pair { target: t, draft: t, target_eos: vec![], draft_eos: vec![], target_rows: 2000, identical: true };
    let speedups = |switch: f64, order: RunOrder| {
        let clock = VirtualClock::new();
        let target =
            Charged { slower_from: switch, ..Charged::new(HashModel::new(2000, 3), clock.clone(), 0.010, 0.0) };
        let draft = Charged::new(HashModel::new(2000, 3), clock.clone(), 0.001, 0.0);
        let mut baseline_end = None;
        let r = run(
            &target,
            pair.target,
            Some(Draft { model: &draft, pair: &pair, label: "d".into() }),
            &prompts(4),
            &RunOptions {
                strategies: vec![Strategy::None, Strategy::Naive],
                order,
                ..options(&[1], Verify::Batched, 64)
            },
            &clock,
            &mut Unavailable("n/a".into()),
            &mut |p| {
                if p.stage != "warm-up" && p.stage != "baseline" && baseline_end.is_none() {
                    baseline_end = Some(clock.now());
                }
            },
        )
        .unwrap();
        assert_eq!(r.settings.order, order);
        (r.runs.iter().map(|x| x.speedup.unwrap()).collect::<Vec<_>>(), baseline_end.unwrap(), clock.now())
    };
    // The slowdown starts halfway through the configurations (after the warm-up and the
    // baseline), a little early so that no pass straddles it.
    let (steady, start, end) = speedups(f64::INFINITY, RunOrder::Grouped);
    assert!(steady[0] > 1.0 && (steady[0] - steady[1]).abs() < 1e-9, "{steady:?}");
    let half = start + (end - start) / 2.0 - 0.005;
    let (grouped, ..) = speedups(half, RunOrder::Grouped);
    let (interleaved, ..) = speedups(half, RunOrder::Interleaved);
    assert!(grouped[1] / grouped[0] < 0.7, "grouped: {grouped:?}");
    assert!((interleaved[1] / interleaved[0] - 1.0).abs() < 1e-9, "interleaved: {interleaved:?}");
}

#[test]
fn an_empty_prompt_is_a_clear_error() {
    let t = tok("qwen2-tiny");
    let m = HashModel::new(100, 1);
    let pair = Pair { target: t, draft: t, target_eos: vec![], draft_eos: vec![], target_rows: 100, identical: true };
    let mut p = prompts(2);
    p[1].target_ids.clear();
    let e = run(
        &m,
        pair.target,
        Some(Draft { model: &m, pair: &pair, label: "d".into() }),
        &p,
        &options(&[2], Verify::Batched, 4),
        &WallClock::new(),
        &mut Unavailable("x".into()),
        &mut |_| {},
    )
    .unwrap_err();
    assert!(e.to_string().contains("prompt 2 has no tokens"), "{e}");
}

#[test]
fn progress_counts_every_prompt_of_every_stage() {
    let t = tok("mistral-tiny");
    let m = HashModel::new(100, 1);
    let pair = Pair { target: t, draft: t, target_eos: vec![], draft_eos: vec![], target_rows: 100, identical: true };
    let mut seen = Vec::new();
    run(
        &m,
        pair.target,
        Some(Draft { model: &m, pair: &pair, label: "d".into() }),
        &prompts(3),
        &options(&[1, 2], Verify::Batched, 4),
        &WallClock::new(),
        &mut Unavailable("x".into()),
        &mut |p| seen.push((p.stage.clone(), p.done, p.total)),
    )
    .unwrap();
    assert_eq!(seen.first(), Some(&("warm-up".to_string(), 0, 9)), "the warm-up comes first, and is not a prompt run");
    assert_eq!(seen.get(1), Some(&("baseline".to_string(), 0, 9)));
    assert_eq!(seen.last(), Some(&("done".to_string(), 9, 9)));
    assert!(seen.iter().any(|s| s.0 == "none k=2"));
}

#[test]
fn the_sample_report_shows_what_the_strategies_do() {
    let r = crate::speculate::report::sample::sample();
    let get = |s: Strategy, k: KSetting| r.runs.iter().find(|x| x.strategy == s && x.k == k).unwrap();
    let (ctx, naive, none) = (
        get(Strategy::Context, KSetting::Fixed(2)),
        get(Strategy::Naive, KSetting::Fixed(2)),
        get(Strategy::None, KSetting::Fixed(2)),
    );
    assert!(
        ctx.acceptance_rate > naive.acceptance_rate && naive.acceptance_rate > none.acceptance_rate,
        "{:?} {:?} {:?}",
        ctx.acceptance_rate,
        naive.acceptance_rate,
        none.acceptance_rate
    );
    assert!(r.runs.iter().all(|x| x.identical_prompts == x.prompts.len()), "lossless");
    assert!(r.baseline.energy_j_per_token.is_some());
    eprintln!("{}", crate::speculate::report::table::to_string(r));
}

/// Without a draft the report is the baseline alone, the same baseline a run with a draft has.
#[test]
fn without_a_draft_the_report_is_the_baseline_alone() {
    let t = tok("mistral-tiny");
    let m = HashModel::new(100, 1);
    let pair = Pair { target: t, draft: t, target_eos: vec![], draft_eos: vec![], target_rows: 100, identical: true };
    let go = |draft: Option<Draft<'_, HashModel, _, _>>| {
        let mut seen = Vec::new();
        let r = run(
            &m,
            t,
            draft,
            &prompts(3),
            &options(&[1, 2], Verify::Batched, 6),
            &VirtualClock::new(),
            &mut Unavailable("x".into()),
            &mut |p| seen.push(p.total),
        )
        .unwrap();
        (r, seen)
    };
    let (alone, seen) = go(None);
    let (with, _) = go(Some(Draft { model: &m, pair: &pair, label: "d".into() }));
    assert!(alone.runs.is_empty() && alone.draft.is_none() && alone.same_vocabulary.is_none());
    assert_eq!(seen.last(), Some(&3), "three prompts, one stage");
    assert_eq!(with.runs.len(), 2);
    let ids = |r: &Report| r.baseline.prompts.iter().map(|p| p.output_ids.clone()).collect::<Vec<_>>();
    assert_eq!(ids(&alone), ids(&with));
    assert_eq!(ids(&alone), with.runs[0].prompts.iter().map(|p| p.baseline_ids.clone()).collect::<Vec<_>>());
    for p in &alone.baseline.prompts {
        assert_eq!(p.output_ids.len(), 6);
        assert_eq!(p.prompt_ids.len(), 2);
    }
    assert_eq!(alone.baseline.prompt_tokens, 6);
    let json = crate::speculate::report::json::to_string(&alone);
    let v: serde_json::Value = serde_json::from_str(&json).unwrap();
    assert!(v["draft"].is_null() && v["runs"].as_array().unwrap().is_empty());
    for key in ["prompt", "prompt_ids", "output_ids", "text", "prefill_s", "decode_tokens_per_s"] {
        assert!(v["baseline"]["prompts"][0].get(key).is_some(), "{key}: {json}");
    }
    assert!(crate::speculate::report::table::to_string(&alone).contains("decode tok/s"));
}

/// Issue #50: a target whose first passes run cold (twice as slow, as a process paging in its
/// weights) and later ones warm. A configuration that never drafts (`-k auto` with a draft as
/// dear as the target and never right) does the target alone's work: by default (paired
/// baselines after a warm-up) its speedup is 1.0x within its interval, and the guard finds it in
/// line with the target alone plus its overhead; with `--baseline once` the cold baseline credits
/// it with speed it did not earn, and the guard warns.
#[test]
fn a_cold_start_gives_no_speed_to_a_configuration_that_never_drafts() {
    let t = tok("mistral-tiny");
    let pair = Pair { target: t, draft: t, target_eos: vec![], draft_eos: vec![], target_rows: 2000, identical: true };
    let report = |baseline: BaselineTiming| {
        let clock = VirtualClock::new();
        // The warm-up takes 2 x 64 target passes, the baseline 8 x 64: cold for the warm-up and
        // half of the baseline, warm for every configuration. A pass costs 2^-7 s, so that
        // virtual times add up exactly and two prompts decoded alike time alike.
        let pass = 1.0 / 128.0;
        let target = Charged { cold_passes: 370, ..Charged::new(HashModel::new(2000, 3), clock.clone(), pass, 0.0) };
        let draft = Charged::new(HashModel::new(2000, 4), clock.clone(), pass, 0.0);
        let r = run(
            &target,
            pair.target,
            Some(Draft { model: &draft, pair: &pair, label: "d".into() }),
            &prompts(8),
            &RunOptions { ks: vec![KSetting::Auto], baseline, ..options(&[], Verify::Batched, 64) },
            &clock,
            &mut Unavailable("n/a".into()),
            &mut |_| {},
        )
        .unwrap();
        assert!(target.log.borrow().len() > 370 + 8 * 64, "the configurations ran warm");
        r
    };
    let default = report(crate::speculate::experiment::Settings::default().baseline);
    let once = report(BaselineTiming::Once);
    for r in [&default, &once] {
        let run = &r.runs[0];
        assert_eq!(run.accepted, 0);
        let g = run.target_alone.expect("it drafted almost nothing, so it is set against the target alone");
        assert!(g.drafting_rounds > 0 && g.drafting_rounds * 20 <= g.rounds, "{g:?}");
        assert!(g.expected_speedup < 1.0 && g.expected_speedup > 0.95, "{g:?}");
    }
    let (run, ci) = (&default.runs[0], default.runs[0].speedup_ci.unwrap());
    let s = run.speedup.unwrap();
    assert!(ci.contains(1.0) && ci.contains(s) && (0.95..=1.0).contains(&s), "default: {s} {ci:?}");
    assert_eq!(run.speedup_verdict, Some(Verdict::NoMeasurableDifference));
    assert!(!run.target_alone.unwrap().drifted && default.warnings.is_empty(), "{:?}", default.warnings);

    let (run, ci) = (&once.runs[0], once.runs[0].speedup_ci.unwrap());
    let s = run.speedup.unwrap();
    assert!(s > 1.2 && ci.low > 1.0, "once: {s} {ci:?}");
    assert_eq!(run.speedup_verdict, Some(Verdict::Faster));
    assert!(run.target_alone.unwrap().drifted);
    assert_eq!(once.warnings.len(), 1);
    assert!(
        once.warnings[0].contains("auto") && once.warnings[0].contains("--baseline paired"),
        "{}",
        once.warnings[0]
    );
    let table = crate::speculate::report::table::to_string(&once);
    assert!(table.contains("WARNING: none k=auto"), "{table}");
    eprintln!("{}\n{table}", crate::speculate::report::table::to_string(&default));
}
