//! The trained checkpoints of tests/fixtures/llm-trained: the real binary reproduces their
//! Transformers goldens, and speculation with every draft gives the target's own greedy output.

use std::path::PathBuf;
use std::process::{Command, Output};

use serde_json::Value;

use crate::common::{TestDir, fixtures};

/// Every checkpoint of the family (the target first).
const MODELS: [&str; 5] = ["target-mistral", "draft-mistral", "draft-qwen2", "draft-llama3", "draft-apt4like"];

fn dir() -> PathBuf {
    fixtures().join("llm-trained")
}

fn ids(v: &Value) -> Vec<u64> {
    v.as_array().unwrap().iter().map(|x| x.as_u64().unwrap()).collect()
}

fn run(t: &TestDir, args: &[&str]) -> Output {
    let mut c: Command = t.cmd();
    c.args(args);
    let out = t.run(c, b"");
    crate::llm::ok(&out);
    out
}

fn report(t: &TestDir, args: &[&str]) -> Value {
    let json = t.path().join("out.json");
    let pack = t.path().join("packs");
    let mut all = args.to_vec();
    all.extend(["--json", json.to_str().unwrap(), "--pack-dir", pack.to_str().unwrap()]);
    run(t, &all);
    serde_json::from_slice(&std::fs::read(json).unwrap()).unwrap()
}

#[test]
fn f32_greedy_output_equals_transformers_for_every_trained_model() {
    let t = TestDir::new();
    let mut compared = 0;
    for name in MODELS {
        let g: Value =
            serde_json::from_slice(&std::fs::read(dir().join(format!("goldens/{name}.json"))).unwrap()).unwrap();
        let cases = g["prompts"].as_array().unwrap();
        let mut file = String::new();
        for p in cases {
            file.push_str(&serde_json::json!({ "prompt": p["prompt"] }).to_string());
            file.push('\n');
        }
        let prompts = t.path().join(format!("{name}.jsonl"));
        std::fs::write(&prompts, file).unwrap();
        let model = dir().join(name);
        let out = report(
            &t,
            &[
                "speculate",
                "--target",
                model.to_str().unwrap(),
                "--prompts",
                prompts.to_str().unwrap(),
                "--precision",
                "f32",
                "--max-new-tokens",
                "32",
                "--ignore-eos",
            ],
        );
        let results = out["baseline"]["prompts"].as_array().unwrap();
        assert_eq!(results.len(), cases.len(), "{name}");
        for (p, r) in cases.iter().zip(results) {
            let key = p["key"].as_str().unwrap();
            assert_eq!(ids(&r["prompt_ids"]), ids(&p["ids_with_special"]), "{name} {key}");
            let want = ids(&p["model"]["greedy"]["new_ids"]);
            let margins = p["model"]["greedy"]["top1_top2_margin"].as_array().unwrap();
            // Up to the first near-tie: another summation order may flip it, and all after it.
            let n = margins.iter().position(|m| m.as_f64().unwrap() < 1e-3).unwrap_or(want.len());
            assert_eq!(ids(&r["output_ids"])[..n], want[..n], "{name} {key}");
            compared += n;
        }
    }
    // 60 prompts x 32 steps; one target prompt meets a near-tie at step 2.
    assert!(compared >= 1800, "{compared} greedy steps compared");
}

#[test]
fn every_draft_and_strategy_gives_the_target_output_under_exact_verification() {
    let t = TestDir::new();
    let prompts = dir().join("prompts/instructions.jsonl");
    let target = dir().join("target-mistral");
    for draft in MODELS {
        let d = dir().join(draft);
        let out = report(
            &t,
            &[
                "speculate",
                "--target",
                target.to_str().unwrap(),
                "--draft",
                d.to_str().unwrap(),
                "--prompts",
                prompts.to_str().unwrap(),
                "-k",
                "2,auto",
                "--strategy",
                "none,naive,context",
                "--verify",
                "exact",
                "--max-new-tokens",
                "24",
                "--ignore-eos",
            ],
        );
        let n = out["baseline"]["prompts"].as_array().unwrap().len();
        for r in out["runs"].as_array().unwrap() {
            assert_eq!(r["identical_prompts"].as_u64(), Some(n as u64), "{draft} {} k={}", r["strategy"], r["k"]);
        }
        // The trained drafts agree with the target: context translation finds accepted tokens.
        let context = out["runs"].as_array().unwrap().iter().find(|r| r["strategy"] == "context").unwrap();
        assert!(context["acceptance_rate"].as_f64().unwrap() > 0.1, "{draft}: {}", context["acceptance_rate"]);
    }
}

#[test]
fn a_draft_narrowed_to_a_corpus_keeps_the_target_output_and_nearly_all_its_acceptance() {
    let t = TestDir::new();
    let prompts = dir().join("prompts/instructions.jsonl");
    let corpus = dir().join("corpus/pud-pl-en.tsv");
    let (target, draft) = (dir().join("target-mistral"), dir().join("draft-qwen2"));
    let base = [
        "speculate",
        "--target",
        target.to_str().unwrap(),
        "--draft",
        draft.to_str().unwrap(),
        "--prompts",
        prompts.to_str().unwrap(),
        "-k",
        "2",
        "--verify",
        "exact",
        "--max-new-tokens",
        "24",
        "--ignore-eos",
    ];
    let whole = report(&t, &base);
    let mut args = base.to_vec();
    args.extend(["--draft-vocab-corpus", corpus.to_str().unwrap()]);
    let narrow = report(&t, &args);
    let v = &narrow["settings"]["draft_vocab"];
    assert_eq!(v["rows"], 151936);
    let kept = v["ids"].as_u64().unwrap();
    assert!((1000..20_000).contains(&kept), "{kept} ids kept");
    assert!(whole["settings"].get("draft_vocab").is_none());
    let n = narrow["baseline"]["prompts"].as_array().unwrap().len() as u64;
    let (w, r) = (&whole["runs"][0], &narrow["runs"][0]);
    assert_eq!(r["identical_prompts"].as_u64(), Some(n));
    let (aw, an) = (w["acceptance_rate"].as_f64().unwrap(), r["acceptance_rate"].as_f64().unwrap());
    // The draft was trained on this text: the ids it would propose are the corpus's.
    assert!(an > 0.1 && an >= 0.9 * aw, "acceptance {an} narrowed against {aw} whole");
    // At most 5,000 of them: fewer ids, less acceptance, still the target's output.
    args.extend(["--draft-vocab", "5000"]);
    let top = report(&t, &args);
    assert_eq!(top["settings"]["draft_vocab"]["ids"].as_u64().unwrap(), 5000 + 1, "5,000 and <|endoftext|>");
    assert_eq!(top["runs"][0]["identical_prompts"].as_u64(), Some(n));
}

#[test]
fn a_draft_vocabulary_corpus_that_cannot_be_used_is_a_named_error() {
    let t = TestDir::new();
    let prompts = dir().join("prompts/questions.txt");
    let (target, draft) = (dir().join("target-mistral"), dir().join("draft-qwen2"));
    let bad = t.path().join("bad.txt");
    std::fs::write(&bad, b"dobry tekst\nz\xff\xfe\n").unwrap();
    let empty = t.path().join("empty.txt");
    std::fs::write(&empty, b"\n  \n").unwrap();
    let missing = t.path().join("missing.txt");
    let cases: [(&[&str], String); 4] = [
        (
            &["--draft", draft.to_str().unwrap(), "--draft-vocab-corpus", bad.to_str().unwrap()],
            format!("{}: line 2: not UTF-8", bad.display()),
        ),
        (
            &["--draft", draft.to_str().unwrap(), "--draft-vocab-corpus", empty.to_str().unwrap()],
            "no text in it".into(),
        ),
        (
            &["--draft", draft.to_str().unwrap(), "--draft-vocab-corpus", missing.to_str().unwrap()],
            format!("{}: cannot read it", missing.display()),
        ),
        (&["--draft-vocab-corpus", empty.to_str().unwrap()], "give --draft DIR".into()),
    ];
    for (extra, want) in cases {
        let mut c: Command = t.cmd();
        c.args(["speculate", "--target", target.to_str().unwrap(), "--prompts", prompts.to_str().unwrap()]);
        c.args(["--max-new-tokens", "2", "--pack-dir", t.path().join("packs").to_str().unwrap()]);
        c.args(extra);
        let out = t.run(c, b"");
        let err = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(2), "{extra:?}: {err}");
        assert!(err.contains(&want), "{extra:?}: {err}");
    }
}
