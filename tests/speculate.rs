//! `reseam speculate --draft` through the real binary: the report files (JSON schema, CSV,
//! SVG), the table, settings from the environment, and usage errors.

use std::path::PathBuf;
use std::process::Output;

use serde_json::Value;

use crate::common::{TestDir, fixtures};

fn model(name: &str) -> String {
    fixtures().join("llm").join(name).to_str().unwrap().to_string()
}

fn run(t: &TestDir, args: &[&str], env: &[(&str, &str)]) -> Output {
    let mut c = t.cmd();
    c.args(args);
    for (k, v) in env {
        c.env(k, v);
    }
    t.run(c, b"")
}

fn text(b: &[u8]) -> String {
    String::from_utf8_lossy(b).into_owned()
}

fn prompts(t: &TestDir) -> PathBuf {
    let p = t.path().join("prompts.txt");
    std::fs::write(&p, "Zażółć gęślą jaźń\nfn main() {\n").unwrap();
    p
}

/// A cross-tokenizer run writes the documented JSON, one CSV row per configuration and an SVG
/// plot, prints the table, and its output is the target's own (exact verification).
#[test]
fn reports_follow_the_documented_schema() {
    let t = TestDir::new();
    let p = prompts(&t);
    let (json, csv, svg) = (t.path().join("r.json"), t.path().join("r.csv"), t.path().join("r.svg"));
    let out = run(
        &t,
        &[
            "speculate",
            "--target",
            &model("mistral-tiny"),
            "--draft",
            &model("qwen2-tiny"),
            "--prompts",
            p.to_str().unwrap(),
            "-k",
            "1,3,auto",
            "--strategy",
            "none,context",
            "--max-new-tokens",
            "8",
            "--precision",
            "f32",
            "--json",
            json.to_str().unwrap(),
            "--csv",
            csv.to_str().unwrap(),
        ],
        // Settings come from the environment as well as from flags.
        &[("RESEAM_SPECULATE_VERIFY", "exact"), ("RESEAM_PLOT", svg.to_str().unwrap()), ("RESEAM_NO_PACK", "true")],
    );
    let stdout = text(&out.stdout);
    assert!(out.status.success(), "{}\n{}", stdout, text(&out.stderr));
    let v: Value = serde_json::from_slice(&std::fs::read(&json).unwrap()).unwrap();
    assert_eq!(v["schema"], "reseam-speculate/1");
    assert_eq!(v["settings"]["verify"], "exact");
    assert_eq!(v["settings"]["prompts"], 2);
    assert_eq!(v["settings"]["baseline"], "paired", "the target alone is timed next to each configuration by default");
    assert!(v["warnings"].is_array());
    assert!(v["baseline"]["decode_tokens_per_s"].as_f64().unwrap() > 0.0);
    let runs = v["runs"].as_array().unwrap();
    assert_eq!(runs.len(), 6, "2 strategies x 3 draft lengths");
    for r in runs {
        for key in ["k", "strategy", "acceptance_rate", "tokens_per_pass", "speedup", "c", "predicted_speedup"] {
            assert!(r.get(key).is_some(), "run lacks {key}: {r}");
        }
        assert!(r["speedup"].as_f64().unwrap() > 0.0 && r["tokens_per_pass"].as_f64().unwrap() >= 1.0);
        assert_eq!(r["divergences"].as_array().unwrap().len(), 0);
        // Two prompts: an interval from their paired timings, and the verdict it allows.
        let ci = &r["speedup_ci"];
        let (lo, hi) = (ci["low"].as_f64().unwrap(), ci["high"].as_f64().unwrap());
        assert!(lo <= hi, "{ci}");
        let verdict = if lo > 1.0 {
            "faster"
        } else if hi < 1.0 {
            "slower"
        } else {
            "no_measurable_difference"
        };
        assert_eq!(r["speedup_verdict"], verdict);
        for p in r["prompts"].as_array().unwrap() {
            assert_eq!(p["output_ids"], p["baseline_ids"], "exact verification is lossless");
            assert!(p["text"].is_string() && p["prompt"].is_string());
            assert_eq!(p["output_ids"].as_array().unwrap().len(), 8);
        }
    }
    assert!(runs.iter().any(|r| r["k"] == "auto") && runs.iter().any(|r| r["k"] == 3));
    assert!(runs.iter().any(|r| r["strategy"] == "context"));

    let csv = std::fs::read_to_string(&csv).unwrap();
    let lines: Vec<&str> = csv.lines().collect();
    assert_eq!(lines.len(), 7, "{csv}");
    let header: Vec<&str> = lines[0].split(',').collect();
    for col in [
        "k",
        "strategy",
        "acceptance_rate",
        "speedup",
        "speedup_ci_low",
        "speedup_ci_high",
        "speedup_verdict",
        "c",
        "predicted_speedup",
        "break_even_geometric",
    ] {
        assert!(header.contains(&col), "CSV lacks {col}: {}", lines[0]);
    }
    assert!(lines[1..].iter().all(|l| l.split(',').count() == header.len()));

    let svg = std::fs::read_to_string(&svg).unwrap();
    assert!(svg.starts_with("<svg") && svg.trim_end().ends_with("</svg>"));
    assert!(svg.contains("break-even"), "the break-even line is labelled");

    for head in ["strategy", "accept", "speedup", "95% CI", "vs target", "predicted", "break-even"] {
        assert!(stdout.contains(head), "table lacks {head}:\n{stdout}");
    }
    assert!(stdout.lines().any(|l| l.starts_with("context") && l.split_whitespace().nth(1) == Some("auto")));
    // Nothing else was left in the folder (reports go through a temporary file and a rename).
    let mut names: Vec<String> =
        std::fs::read_dir(t.path()).unwrap().map(|e| e.unwrap().file_name().to_string_lossy().into_owned()).collect();
    names.sort();
    assert_eq!(names, ["prompts.txt", "r.csv", "r.json", "r.svg"]);
}

/// Bad settings are usage errors (exit 2) naming the flag; a report that cannot be written is
/// a failure naming the file.
#[test]
fn bad_settings_name_the_flag() {
    let t = TestDir::new();
    let p = prompts(&t);
    let base = ["speculate", "--target", &model("llama3-tiny"), "--prompts", p.to_str().unwrap()];
    let cases: [(&[&str], &str); 5] = [
        (&["--draft", &model("qwen2-tiny"), "-k", "2,x"], "draft length"),
        (&["--draft", &model("qwen2-tiny"), "-k", "0"], "baseline"),
        (&["--draft", &model("qwen2-tiny"), "--strategy", "fancy"], "none, naive or context"),
        (&["--draft", "/nonexistent/model"], "--draft /nonexistent/model"),
        (&["--csv", "x.csv"], "--draft"),
    ];
    for (extra, needle) in cases {
        let out = run(&t, &[&base[..], extra].concat(), &[]);
        assert_eq!(out.status.code(), Some(2), "{extra:?}: {}", text(&out.stderr));
        assert!(text(&out.stderr).contains(needle), "{extra:?}: {}", text(&out.stderr));
    }
    let bad = t.path().join("missing-dir/r.json");
    let out = run(
        &t,
        &[&base[..], &["--draft", &model("qwen2-tiny"), "--max-new-tokens", "2", "--json", bad.to_str().unwrap()]]
            .concat(),
        &[("RESEAM_NO_PACK", "true")],
    );
    assert_eq!(out.status.code(), Some(1));
    assert!(text(&out.stderr).contains("missing-dir"), "{}", text(&out.stderr));
}
