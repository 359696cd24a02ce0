use super::*;
use crate::llm::Tokenizer as HfTokenizer;
use crate::speculate::auto_k::AutoK;
use crate::speculate::clock::{VirtualClock, WallClock};
use crate::speculate::energy::Unavailable;
use crate::speculate::mock::{Charged, HashModel, OracleModel};
use crate::speculate::testutil::{MODELS, tok};

const PROMPTS: [&str; 2] = ["Zażółć gęślą jaźń.", "fn main() {\n"];

fn rows(model: &str) -> usize {
    if model == "qwen2-tiny" { 151_936 } else { tok(model).len() }
}

fn eos(model: &str) -> Vec<u32> {
    match model {
        "llama3-tiny" => vec![128001, 128008, 128009],
        "mistral-tiny" => vec![2],
        _ => vec![151645, 151643],
    }
}

fn pair<'a>(t: &'a str, d: &'a str) -> Pair<'a, HfTokenizer, HfTokenizer> {
    Pair::new(tok(t), tok(d), eos(t), eos(d), rows(t))
}

fn spec_opts(strategy: Strategy, verify: Verify, max_new: usize) -> SpecOptions {
    SpecOptions {
        decode: DecodeOptions { max_new_tokens: max_new, stop: vec![] },
        verify,
        strategy,
        prefix: 5,
        lookbehind: 8,
    }
}

/// Every ordered pair of fixture tokenizers, every strategy, k in {1,2,4,6}, both verification
/// modes: a chaotic target (any id can win, specials and half characters included) and a
/// draft that knows nothing give exactly the target's greedy output.
#[test]
fn output_equals_the_target_alone_for_every_pair_strategy_and_k() {
    let clock = WallClock::new();
    for t in MODELS {
        let target = HashModel::new(rows(t), 11);
        for d in MODELS {
            let draft = HashModel::new(rows(d), 23);
            let p = pair(t, d);
            for prompt in PROMPTS {
                let pt = tok(t).encode(prompt, true).unwrap();
                let pd = tok(d).encode(prompt, true).unwrap();
                let base = greedy(
                    &target,
                    &pt,
                    &DecodeOptions { max_new_tokens: 12, stop: vec![] },
                    &clock,
                    &mut Unavailable(String::new()),
                )
                .unwrap();
                assert_eq!(base.ids.len(), 12);
                for s in Strategy::ALL {
                    for k in [1, 2, 4, 6] {
                        for v in [Verify::Exact, Verify::Batched] {
                            let o = speculative(
                                &target,
                                &draft,
                                &p,
                                &pt,
                                &pd,
                                &spec_opts(s, v, 12),
                                &mut DraftLength::Fixed(k),
                                &clock,
                                &mut Unavailable(String::new()),
                            )
                            .unwrap();
                            assert_eq!(o.ids, base.ids, "{t}<-{d} {s} k={k} {v:?} {prompt:?}");
                            assert_eq!(o.top2, base.top2);
                            assert_eq!(o.counters.committed as usize + 1, o.ids.len());
                        }
                    }
                }
            }
        }
    }
}

/// A draft equal to the target, ids passed as they are: every candidate is accepted.
#[test]
fn draft_equal_to_target_accepts_everything() {
    let clock = WallClock::new();
    for t in MODELS {
        let m = HashModel::new(rows(t), 5);
        let p = pair(t, t);
        let pt = tok(t).encode(PROMPTS[0], true).unwrap();
        for k in [1, 2, 4, 6] {
            let o = speculative(
                &m,
                &m,
                &p,
                &pt,
                &pt,
                &spec_opts(Strategy::None, Verify::Batched, 30),
                &mut DraftLength::Fixed(k),
                &clock,
                &mut Unavailable(String::new()),
            )
            .unwrap();
            assert_eq!(o.counters.acceptance(), Some(1.0), "{t} k={k}");
            assert_eq!(o.counters.acceptance_draft(), Some(1.0), "{t} k={k}");
            // Each round commits k+1 tokens, except the last one, capped by the budget.
            assert_eq!(o.counters.rounds as usize, (29 + k) / (k + 1), "{t} k={k}");
        }
    }
}

/// Same tokenizer through the text paths, with models that continue natural text canonically
/// (as trained models do): the translation is near the identity.
#[test]
fn same_tokenizer_through_text_keeps_acceptance_high() {
    let clock = WallClock::new();
    let text = "Rzeczpospolita Polska jest państwem w Europie Środkowej, położonym nad Morzem Bałtyckim. Stolicą i największym miastem jest Warszawa.";
    for t in MODELS {
        let tk = tok(t);
        let oracle = OracleModel::new(tk, rows(t), &[text], eos(t)[0]).unwrap();
        let prompt = &text[..24];
        let pt = tk.encode(prompt, true).unwrap();
        for s in [Strategy::Naive, Strategy::Context] {
            for k in [1, 2, 4, 6] {
                let mut p = pair(t, t);
                p.identical = false; // force the text path in both directions
                let o = speculative(
                    &oracle,
                    &oracle,
                    &p,
                    &pt,
                    &pt,
                    &spec_opts(s, Verify::Batched, 40),
                    &mut DraftLength::Fixed(k),
                    &clock,
                    &mut Unavailable(String::new()),
                )
                .unwrap();
                let base = greedy(
                    &oracle,
                    &pt,
                    &DecodeOptions { max_new_tokens: 40, stop: vec![] },
                    &clock,
                    &mut Unavailable(String::new()),
                )
                .unwrap();
                assert_eq!(o.ids, base.ids);
                let a = o.counters.acceptance().unwrap();
                let floor = if s == Strategy::Naive && t == "mistral-tiny" { 0.0 } else { 0.95 };
                assert!(a >= floor, "{t} {s} k={k}: acceptance {a:.3}");
                eprintln!("{t} {s} k={k}: acceptance {a:.3} draft-units {:.3}", o.counters.acceptance_draft().unwrap());
            }
        }
    }
}

/// Across tokenizers the context strategy is what makes a good draft useful.
#[test]
fn context_translation_beats_naive_and_none_across_tokenizers() {
    let clock = WallClock::new();
    let text = "Rzeczpospolita Polska jest państwem w Europie Środkowej, położonym nad Morzem Bałtyckim. Stolicą i największym miastem jest Warszawa, a językiem urzędowym polski.";
    let prompt = &text[..24];
    for t in MODELS {
        let target = OracleModel::new(tok(t), rows(t), &[text], eos(t)[0]).unwrap();
        for d in MODELS {
            if d == t {
                continue;
            }
            let draft = OracleModel::new(tok(d), rows(d), &[text], eos(d)[0]).unwrap();
            let p = pair(t, d);
            let pt = tok(t).encode(prompt, true).unwrap();
            let pd = tok(d).encode(prompt, true).unwrap();
            let mut acc = Vec::new();
            for s in Strategy::ALL {
                let o = speculative(
                    &target,
                    &draft,
                    &p,
                    &pt,
                    &pd,
                    &spec_opts(s, Verify::Exact, 40),
                    &mut DraftLength::Fixed(4),
                    &clock,
                    &mut Unavailable(String::new()),
                )
                .unwrap();
                acc.push(o.counters.acceptance().unwrap_or(0.0));
            }
            eprintln!("{t}<-{d}: none {:.3} naive {:.3} context {:.3}", acc[0], acc[1], acc[2]);
            assert!(acc[2] >= 0.8, "{t}<-{d}: context {:.3}", acc[2]);
            assert!(acc[2] >= acc[1] && acc[2] > acc[0], "{t}<-{d}: {acc:?}");
        }
    }
}

#[test]
fn stops_at_eos_like_the_baseline_and_respects_the_budget() {
    let clock = WallClock::new();
    let t = "qwen2-tiny";
    let tk = tok(t);
    let text = "Ala ma kota.";
    let target = OracleModel::new(tk, rows(t), &[text], 151645).unwrap();
    let p = pair(t, t);
    let pt = tk.encode("Ala", true).unwrap();
    let stop = DecodeOptions { max_new_tokens: 50, stop: vec![151645] };
    let base = greedy(&target, &pt, &stop, &clock, &mut Unavailable(String::new())).unwrap();
    assert_eq!(base.ids.last(), Some(&151645));
    for k in [1, 3, 6] {
        let mut o = spec_opts(Strategy::Context, Verify::Batched, 50);
        o.decode = stop.clone();
        let s = speculative(
            &target,
            &target,
            &p,
            &pt,
            &pt,
            &o,
            &mut DraftLength::Fixed(k),
            &clock,
            &mut Unavailable(String::new()),
        )
        .unwrap();
        assert_eq!(s.ids, base.ids, "k={k}");
    }
    for max_new in [0, 1, 2, 5] {
        let base = greedy(
            &target,
            &pt,
            &DecodeOptions { max_new_tokens: max_new, stop: vec![] },
            &clock,
            &mut Unavailable(String::new()),
        )
        .unwrap();
        let s = speculative(
            &target,
            &target,
            &p,
            &pt,
            &pt,
            &spec_opts(Strategy::None, Verify::Batched, max_new),
            &mut DraftLength::Fixed(6),
            &clock,
            &mut Unavailable(String::new()),
        )
        .unwrap();
        assert_eq!(s.ids, base.ids, "max_new={max_new}");
        assert_eq!(s.ids.len(), max_new);
    }
}

#[test]
fn one_token_prompts_and_empty_draft_prompts_work() {
    let clock = WallClock::new();
    let target = HashModel::new(rows("mistral-tiny"), 3);
    let draft = HashModel::new(rows("qwen2-tiny"), 4);
    let p = pair("mistral-tiny", "qwen2-tiny");
    let base = greedy(
        &target,
        &[1],
        &DecodeOptions { max_new_tokens: 10, stop: vec![] },
        &clock,
        &mut Unavailable(String::new()),
    )
    .unwrap();
    for pd in [vec![], vec![9707]] {
        let o = speculative(
            &target,
            &draft,
            &p,
            &[1],
            &pd,
            &spec_opts(Strategy::Context, Verify::Exact, 10),
            &mut DraftLength::Fixed(3),
            &clock,
            &mut Unavailable(String::new()),
        )
        .unwrap();
        assert_eq!(o.ids, base.ids);
    }
}

#[test]
fn target_cache_is_trimmed_to_the_committed_length() {
    // Charged logs every pass: after the run, re-feeding the output one by one must give the
    // baseline's rows, which only holds if every trim was exact (checked through the ids).
    let clock = VirtualClock::new();
    let target = Charged::new(HashModel::new(1000, 77), clock.clone(), 0.01, 0.0);
    let draft = Charged::new(HashModel::new(1000, 78), clock.clone(), 0.001, 0.0);
    let t = tok("mistral-tiny");
    let p = Pair { target: t, draft: t, target_eos: vec![], draft_eos: vec![], target_rows: 1000, identical: true };
    let base = greedy(
        &target,
        &[1, 5],
        &DecodeOptions { max_new_tokens: 40, stop: vec![] },
        &clock,
        &mut Unavailable(String::new()),
    )
    .unwrap();
    let o = speculative(
        &target,
        &draft,
        &p,
        &[1, 5],
        &[1, 5],
        &spec_opts(Strategy::None, Verify::Batched, 40),
        &mut DraftLength::Fixed(4),
        &clock,
        &mut Unavailable(String::new()),
    )
    .unwrap();
    assert_eq!(o.ids, base.ids);
    // Every verification pass fed k+1 = 5 positions (the last rounds fewer: budget).
    let log = target.log.borrow();
    assert!(log.iter().filter(|&&n| n == 5).count() >= 5, "{log:?}");
}

#[test]
fn auto_k_is_lossless_and_backs_off_from_a_useless_draft() {
    let clock = VirtualClock::new();
    let target = Charged::new(HashModel::new(2000, 1), clock.clone(), 0.010, 0.0005);
    let draft = Charged::new(HashModel::new(2000, 2), clock.clone(), 0.004, 0.0);
    let t = tok("mistral-tiny");
    let p = Pair { target: t, draft: t, target_eos: vec![], draft_eos: vec![], target_rows: 2000, identical: true };
    let base = greedy(
        &target,
        &[1, 5],
        &DecodeOptions { max_new_tokens: 120, stop: vec![] },
        &clock,
        &mut Unavailable(String::new()),
    )
    .unwrap();
    let mut auto = AutoK::new(8, 0.010);
    let o = speculative(
        &target,
        &draft,
        &p,
        &[1, 5],
        &[1, 5],
        &spec_opts(Strategy::None, Verify::Batched, 120),
        &mut DraftLength::Auto(&mut auto),
        &clock,
        &mut Unavailable(String::new()),
    )
    .unwrap();
    assert_eq!(o.ids, base.ids);
    let k0 = o.counters.k_histogram.first().copied().unwrap_or(0);
    assert!(k0 as f64 > 0.7 * o.counters.rounds as f64, "mostly no drafting: {:?}", o.counters.k_histogram);

    // A perfect, cheap draft: auto drafts long.
    let mut auto = AutoK::new(8, 0.010);
    let cheap = Charged::new(HashModel::new(2000, 1), clock.clone(), 0.001, 0.0);
    let o = speculative(
        &target,
        &cheap,
        &p,
        &[1, 5],
        &[1, 5],
        &spec_opts(Strategy::None, Verify::Batched, 120),
        &mut DraftLength::Auto(&mut auto),
        &clock,
        &mut Unavailable(String::new()),
    )
    .unwrap();
    assert_eq!(o.ids, base.ids);
    assert!(o.counters.mean_k().unwrap() > 5.0, "{:?}", o.counters.k_histogram);
}
