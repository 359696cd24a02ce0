//! The experiment on the tiny fixture checkpoints: lossless for every ordered pair, strategy and
//! draft length; near-identity acceptance when the draft is the target; garbage drafts change
//! nothing but speed.

use std::path::{Path, PathBuf};
use std::sync::OnceLock;

use super::*;
use crate::llm::{Model, Precision, Tokenizer, generate};
use crate::speculate::energy::Unavailable;
use crate::speculate::report::Run;

const MODELS: [&str; 3] = ["llama3-tiny", "mistral-tiny", "qwen2-tiny"];
/// The fixtures' README: float32 engines agree to about 1e-4 in logits; greedy steps with a
/// top-2 margin below 1e-3 may flip between implementations (and between M=1 and M=k+1 passes).
const TOLERANCE: f32 = 1e-3;
const KS: [usize; 4] = [1, 2, 4, 6];
/// Enough for a k=6 round after the first token; the grid is 6 pairs x 12 configurations x
/// every golden prompt, twice, so every token counts.
const MAX_NEW: usize = 8;

fn dir(model: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/llm").join(model)
}

/// The three fixture models in int8 (the engine's default, and twice as fast as f32 on their
/// large vocabularies), loaded once per test process.
fn llm(model: &str) -> &'static Llm {
    static ALL: OnceLock<Vec<Llm>> = OnceLock::new();
    let all = ALL.get_or_init(|| {
        let opts = LoadOptions { precision: Precision::Int8, pack_dir: None, no_pack: true };
        MODELS.iter().map(|m| Llm::open(&dir(m), &opts).expect("fixture checkpoint loads")).collect()
    });
    &all[MODELS.iter().position(|m| *m == model).expect("a fixture name")]
}

/// Target, draft, prompts, the target's plain greedy outputs, the report.
type PairRun = (&'static str, &'static str, Vec<(usize, String)>, Vec<Vec<u32>>, Report);

/// Every ordered (target, draft) pair of two different fixtures (a model drafting for itself is
/// the next test), run on as many threads as there are cores: the tiny models' passes are too
/// small to use more than one core each.
fn every_pair(s: &Settings) -> Vec<PairRun> {
    use rayon::prelude::*;
    // Load before the pool runs: a pool thread waiting for the load would starve the load's own
    // parallel work.
    for m in MODELS {
        llm(m);
    }
    let pairs: Vec<(&str, &str)> =
        MODELS.iter().flat_map(|&t| MODELS.iter().filter(move |&&d| d != t).map(move |&d| (t, d))).collect();
    pairs
        .into_par_iter()
        .map(|(t, d)| {
            let prompts = golden_prompts(t);
            let plain = plain_greedy(llm(t), &prompts);
            let r = experiment(llm(t), llm(d), &prompts, s);
            (t, d, prompts, plain, r)
        })
        .collect()
}

/// Every golden prompt that gives the target at least one token (qwen has no BOS, so its
/// empty prompt gives none), as (line, text).
fn golden_prompts(target: &str) -> Vec<(usize, String)> {
    let g: serde_json::Value =
        serde_json::from_slice(&std::fs::read(dir("goldens").join(format!("{target}.json"))).unwrap()).unwrap();
    let all: Vec<(usize, String)> = g["prompts"]
        .as_array()
        .unwrap()
        .iter()
        .enumerate()
        .map(|(i, p)| (i + 1, p["prompt"].as_str().unwrap().to_string()))
        .collect();
    let n = all.len();
    let kept: Vec<_> = all.into_iter().filter(|(_, t)| !llm(target).prompt_ids(t, false).unwrap().is_empty()).collect();
    assert!(n >= 20 && kept.len() + usize::from(target == "qwen2-tiny") == n, "{target}: {} of {n}", kept.len());
    kept
}

fn settings(strategies: &[Strategy], ks: &[usize], verify: Verify) -> Settings {
    Settings {
        ks: ks.iter().map(|&k| KSetting::Fixed(k)).collect(),
        strategies: strategies.to_vec(),
        verify,
        max_new_tokens: MAX_NEW,
        divergence_tolerance: TOLERANCE,
        ..Settings::default()
    }
}

fn experiment(target: &Llm, draft: &Llm, prompts: &[(usize, String)], s: &Settings) -> Report {
    run_models(target, Some(draft), prompts, Path::new("goldens"), s, &mut Unavailable("test".into()), &mut |_| {})
        .expect("experiment runs")
}

/// The target's plain greedy output by the engine's own decoder (not speculate's baseline).
fn plain_greedy(target: &Llm, prompts: &[(usize, String)]) -> Vec<Vec<u32>> {
    prompts
        .iter()
        .map(|(_, t)| {
            let ids = target.prompt_ids(t, false).unwrap();
            generate::greedy(&target.model, &mut target.model.new_cache(), &ids, MAX_NEW, &target.eos)
                .unwrap()
                .output_ids
        })
        .collect()
}

fn label(t: &str, d: &str, run: &Run) -> String {
    format!("target {t}, draft {d}, {} k={} {}", run.strategy, run.k, run.verify.name())
}

/// Exact verification feeds the target one position at a time, as plain decoding does, so the
/// output must equal the target's own greedy output bit for bit on every golden prompt, for
/// every ordered pair of fixture models, every strategy and k in {1, 2, 4, 6}. (The same
/// holds for a model drafting for itself, below.)
#[test]
fn exact_verification_equals_plain_greedy_for_every_pair_strategy_and_k() {
    let s = settings(&Strategy::ALL, &KS, Verify::Exact);
    let mut accepted = 0;
    for (t, d, prompts, plain, r) in every_pair(&s) {
        assert_eq!(r.runs.len(), 12);
        for run in &r.runs {
            for (i, p) in run.prompts.iter().enumerate() {
                assert_eq!(p.baseline_ids, plain[i], "baseline of prompt {i}: {}", label(t, d, run));
                assert_eq!(p.output_ids, plain[i], "prompt {} {:?}: {}", i, p.prompt, label(t, d, run));
            }
            assert!(run.divergences.is_empty(), "{}", label(t, d, run));
            assert_eq!(run.identical_prompts, prompts.len());
            accepted += run.accepted;
        }
    }
    eprintln!("exact verification: {accepted} candidates accepted over the grid");
}

/// Batched verification computes k+1 rows in one pass; it may flip a near-tie. Every prompt is
/// then either identical or its first divergence is reported with the baseline's margin there,
/// which must be below the fixtures' tolerance.
#[test]
fn batched_verification_is_identical_or_diverges_only_at_near_ties() {
    let s = settings(&Strategy::ALL, &KS, Verify::Batched);
    let (mut runs, mut diverged) = (0, 0);
    for (t, d, prompts, plain, r) in every_pair(&s) {
        for run in &r.runs {
            runs += 1;
            assert_eq!(run.identical_prompts + run.divergences.len(), prompts.len(), "{}", label(t, d, run));
            for (i, p) in run.prompts.iter().enumerate() {
                assert_eq!(p.baseline_ids, plain[i]);
                let Some(div) = run.divergences.iter().find(|x| x.prompt == i) else {
                    assert_eq!(p.output_ids, plain[i], "prompt {i} unreported divergence: {}", label(t, d, run));
                    continue;
                };
                diverged += 1;
                assert_eq!(p.output_ids[..div.position], plain[i][..div.position]);
                assert_ne!(p.output_ids[div.position], plain[i][div.position]);
                assert!(
                    div.within_tolerance && div.margin <= TOLERANCE,
                    "prompt {i} diverged at token {} with margin {}: {}",
                    div.position,
                    div.margin,
                    label(t, d, run)
                );
            }
        }
    }
    eprintln!("batched verification: {diverged} near-tie divergences over {runs} configurations");
}

/// The draft is the target. Through ids (`none`) every candidate is accepted. Through text
/// (`naive`, `context`) the candidates are the canonical encoding of the drafted text, and these
/// random-weight models often emit non-canonical segmentations (`"a" "b"` where the tokenizer
/// would write `"ab"`), which no re-encoding can reproduce: acceptance there is high but below
/// the 95% reached on canonical text (the layer-1 test `same_tokenizer_through_text_keeps_
/// acceptance_high` shows that with models that write canonical text, on the same tokenizers).
/// Naive translation of SentencePiece pieces marks every fragment as a word start, so it only
/// works where a draft token starts a word.
#[test]
fn draft_equal_to_target_accepts_nearly_everything() {
    use rayon::prelude::*;
    for m in MODELS {
        llm(m); // loaded before the pool runs (see every_pair)
    }
    let reports: Vec<_> = MODELS
        .par_iter()
        .map(|&m| {
            let prompts = golden_prompts(m);
            let plain = plain_greedy(llm(m), &prompts);
            let exact = experiment(llm(m), llm(m), &prompts, &settings(&Strategy::ALL, &KS, Verify::Exact));
            let batched = experiment(llm(m), llm(m), &prompts, &settings(&Strategy::ALL, &[2, 6], Verify::Batched));
            (m, prompts, plain, exact, batched)
        })
        .collect();
    for (m, prompts, plain, exact, batched) in reports {
        assert_eq!(exact.same_vocabulary, Some(true));
        for run in exact.runs.iter().chain(&batched.runs) {
            for (i, p) in run.prompts.iter().enumerate() {
                assert_eq!(p.output_ids, plain[i], "{m} {} {}", run.label(), run.verify.name());
            }
            let a = run.acceptance_rate.expect("candidates were proposed");
            eprintln!("{m} {} {}: acceptance {a:.3}", run.label(), run.verify.name());
            let floor = match (run.strategy, m) {
                (Strategy::None, _) => 0.95,
                (Strategy::Naive, "mistral-tiny") => 0.2,
                _ => 0.7,
            };
            assert!(a >= floor, "{m} {} k={}: acceptance {a:.3}", run.strategy, run.k);
            assert_eq!(run.identical_prompts, prompts.len(), "{m} {}", run.label());
        }
    }
}

/// A random-weight draft with the target's tokenizer proposes garbage: almost nothing is
/// accepted, and the output is still the target's.
#[test]
fn garbage_draft_changes_nothing_but_speed() {
    for m in ["mistral-tiny", "qwen2-tiny"] {
        let target = llm(m);
        let spec = target.model.spec().clone();
        let garbage = Llm {
            dir: PathBuf::from("<random>"),
            model: Model::synthetic(&spec, Precision::F32, 4242).unwrap(),
            tokenizer: Tokenizer::from_dir(&dir(m)).unwrap(),
            chat: None,
            eos: target.eos.clone(),
        };
        let prompts = golden_prompts(m);
        let r = experiment(target, &garbage, &prompts, &settings(&Strategy::ALL, &[2, 6], Verify::Exact));
        for run in &r.runs {
            assert_eq!(run.identical_prompts, prompts.len(), "{m} {}", run.label());
            assert!(run.proposed > 0);
            let a = run.acceptance_rate.unwrap();
            eprintln!(
                "{m} garbage draft {}: acceptance {a:.3}, {} prompts identical",
                run.label(),
                run.identical_prompts
            );
            assert!(a < 0.2, "{m} {}: a random draft should be rejected, acceptance {a:.3}", run.label());
        }
    }
}

#[test]
fn bad_settings_and_empty_prompts_are_named_errors() {
    let q = llm("qwen2-tiny");
    let run = |prompts: &[(usize, String)], s: &Settings| {
        run_models(
            q,
            Some(llm("llama3-tiny")),
            prompts,
            Path::new("p.txt"),
            s,
            &mut Unavailable("t".into()),
            &mut |_| {},
        )
    };
    let e = run(&[(3, String::new())], &settings(&[Strategy::Context], &[2], Verify::Batched)).unwrap_err();
    assert!(e.to_string().contains("p.txt: line 3"), "{e}");
    let e = run(&[(1, "a".into())], &settings(&[Strategy::Context], &[0], Verify::Batched)).unwrap_err();
    assert!(e.to_string().contains("-k 0"), "{e}");
    let e = run(&[(1, "a".into())], &settings(&[], &[2], Verify::Batched)).unwrap_err();
    assert!(e.to_string().contains("--strategy"), "{e}");
}
