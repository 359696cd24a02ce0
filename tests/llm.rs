//! `reseam speculate` (target only) and `reseam bench` on the tiny LLM fixtures: the real
//! binary against Transformers' goldens, packed int8 weights, prompt files and errors.

use std::path::{Path, PathBuf};
use std::process::{Command, Output};

use serde_json::Value;

use crate::common::{TestDir, fixtures};

fn model(name: &str) -> PathBuf {
    fixtures().join("llm").join(name)
}

fn golden(name: &str) -> Value {
    serde_json::from_slice(&std::fs::read(fixtures().join(format!("llm/goldens/{name}.json"))).unwrap()).unwrap()
}

fn ids(v: &Value) -> Vec<u64> {
    v.as_array().unwrap().iter().map(|x| x.as_u64().unwrap()).collect()
}

fn run(t: &TestDir, args: &[&str]) -> Output {
    let mut c: Command = t.cmd();
    c.args(args);
    t.run(c, b"")
}

/// The stdout of a run that must have succeeded (status and both outputs shown if not).
pub fn ok(out: &Output) -> String {
    assert!(
        out.status.success(),
        "status {:?}\nstdout {}\nstderr {}",
        out.status,
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8_lossy(&out.stdout).into_owned()
}

/// The baseline's per-prompt results without their timings.
fn without_times(report: &Value) -> Value {
    let mut prompts = report["baseline"]["prompts"].clone();
    for p in prompts.as_array_mut().unwrap() {
        let p = p.as_object_mut().unwrap();
        p.retain(|k, _| !k.ends_with("_s"));
    }
    prompts
}

fn speculate(t: &TestDir, model_dir: &Path, prompts: &Path, extra: &[&str]) -> Value {
    let json = t.path().join("out.json");
    let mut args = vec!["speculate", "--target", model_dir.to_str().unwrap(), "--prompts", prompts.to_str().unwrap()];
    args.extend(["--json", json.to_str().unwrap()]);
    args.extend(extra);
    ok(&run(t, &args));
    serde_json::from_slice(&std::fs::read(json).unwrap()).unwrap()
}

#[test]
fn f32_greedy_output_equals_transformers_for_every_model() {
    let t = TestDir::new();
    for name in ["llama3-tiny", "mistral-tiny", "qwen2-tiny"] {
        let g = golden(name);
        let cases: Vec<&Value> = g["prompts"]
            .as_array()
            .unwrap()
            .iter()
            .filter(|p| p["model_input"] == "ids_with_special" && !p["model"].is_null())
            .filter(|p| !p["prompt"].as_str().unwrap().contains('\n'))
            .take(4)
            .collect();
        // JSON Lines with a "prompt" field, one of them as a pl_alpaca "instruction".
        let mut file = String::new();
        for (i, p) in cases.iter().enumerate() {
            let field = if i == 1 { "instruction" } else { "prompt" };
            file.push_str(&serde_json::json!({ field: p["prompt"] }).to_string());
            file.push('\n');
        }
        let prompts = t.path().join(format!("{name}.jsonl"));
        std::fs::write(&prompts, file).unwrap();
        let out =
            speculate(&t, &model(name), &prompts, &["--precision", "f32", "--max-new-tokens", "32", "--ignore-eos"]);
        assert_eq!(out["runs"].as_array().map(Vec::len), Some(0), "no draft, no configurations");
        let results = out["baseline"]["prompts"].as_array().unwrap();
        assert_eq!(results.len(), cases.len());
        for (p, r) in cases.iter().zip(results) {
            let key = p["key"].as_str().unwrap();
            assert_eq!(r["prompt"], p["prompt"], "{name} {key}");
            assert_eq!(ids(&r["prompt_ids"]), ids(&p["ids_with_special"]), "{name} {key}");
            let want = ids(&p["model"]["greedy"]["new_ids"]);
            let margins = p["model"]["greedy"]["top1_top2_margin"].as_array().unwrap();
            let n = margins.iter().position(|m| m.as_f64().unwrap() < 1e-3).unwrap_or(want.len());
            assert_eq!(ids(&r["output_ids"])[..n], want[..n], "{name} {key}");
        }
        assert!(out["target"].as_str().unwrap().ends_with(", f32)"), "{}", out["target"]);
        assert_eq!(out["kernel"], "none");
    }
}

/// Every `*.reseam` file under `dir`, at any depth.
fn packs_under(dir: &std::path::Path) -> Vec<PathBuf> {
    let mut out = Vec::new();
    for e in std::fs::read_dir(dir).unwrap_or_else(|e| panic!("{}: {e}", dir.display())) {
        let p = e.unwrap().path();
        if p.is_dir() {
            out.extend(packs_under(&p));
        } else if p.extension().is_some_and(|x| x == "reseam") {
            out.push(p);
        }
    }
    out
}

#[test]
fn int8_weights_are_packed_once_then_mapped_with_the_same_output() {
    let t = TestDir::new();
    let prompts = t.path().join("p.txt");
    std::fs::write(&prompts, "Zażółć gęślą jaźń\nKraków – miasto\n").unwrap();
    let m = model("mistral-tiny");
    let args = ["--max-new-tokens", "8", "--ignore-eos"];
    let first = speculate(&t, &m, &prompts, &args);
    // The test command points RESEAM_PACK_DIR into the test's folder (never the fixture's).
    let files = packs_under(&t.path().join("packs"));
    assert_eq!(files.len(), 1, "{files:?}");
    assert!(files[0].to_str().unwrap().ends_with(".int8.reseam"));
    let stamp = std::fs::metadata(&files[0]).unwrap().modified().unwrap();
    let second = speculate(&t, &m, &prompts, &args);
    assert_eq!(std::fs::metadata(&files[0]).unwrap().modified().unwrap(), stamp, "the packed file was rewritten");
    let in_memory = speculate(&t, &m, &prompts, &[&args[..], &["--no-pack"]].concat());
    for other in [&second, &in_memory] {
        assert_eq!(without_times(other), without_times(&first));
    }
    // A damaged packed file is rebuilt, not trusted.
    let bytes = std::fs::read(&files[0]).unwrap();
    std::fs::write(&files[0], &bytes[..bytes.len() / 2]).unwrap();
    let third = speculate(&t, &m, &prompts, &args);
    let second_ids = |r: &Value| ids(&r["baseline"]["prompts"][1]["output_ids"]);
    assert_eq!(second_ids(&third), second_ids(&first));
    assert_eq!(std::fs::metadata(&files[0]).unwrap().len() as usize, bytes.len());
    assert_eq!(first["kernel"].as_str().map(|k| !k.is_empty()), Some(true));
}

#[test]
fn chat_wraps_the_prompt_in_the_template_and_text_prints_a_table() {
    let t = TestDir::new();
    let prompts = t.path().join("p.txt");
    std::fs::write(&prompts, "Jaka jest stolica Polski?\n").unwrap();
    let out =
        speculate(&t, &model("qwen2-tiny"), &prompts, &["--chat", "--max-new-tokens", "3", "--precision", "bf16"]);
    let p = ids(&out["baseline"]["prompts"][0]["prompt_ids"]);
    // <|im_start|>system ... <|im_end|>\n<|im_start|>user\n...<|im_end|>\n<|im_start|>assistant\n
    assert_eq!(p[0], 151644);
    assert_eq!(&p[p.len() - 3..], &[151644, 77091, 198]);
    let table = ok(&run(
        &t,
        &[
            "speculate",
            "--target",
            model("llama3-tiny").to_str().unwrap(),
            "--prompts",
            prompts.to_str().unwrap(),
            "--max-new-tokens",
            "2",
        ],
    ));
    assert!(table.contains("decode:") && table.contains("tokens/s") && table.contains("prefill tok/s"), "{table}");
    // The base mistral fixture has a chat_template.jinja; a folder without one is an error.
    let bare = t.path().join("bare");
    std::fs::create_dir(&bare).unwrap();
    for f in ["config.json", "model.safetensors", "tokenizer.json", "tokenizer_config.json"] {
        std::fs::copy(model("llama3-tiny").join(f), bare.join(f)).unwrap();
    }
    let e =
        run(&t, &["speculate", "--target", bare.to_str().unwrap(), "--prompts", prompts.to_str().unwrap(), "--chat"]);
    // Asking for the chat template of a model without one is the caller's mistake.
    assert_eq!(e.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&e.stderr).contains("no chat template"), "{e:?}");
}

#[test]
fn json_to_stdout_and_environment_variables() {
    let t = TestDir::new();
    let prompts = t.path().join("p.txt");
    std::fs::write(&prompts, "a\n").unwrap();
    let mut c = t.cmd();
    c.args(["speculate", "--json", "-"])
        .env("RESEAM_TARGET", model("llama3-tiny"))
        .env("RESEAM_PROMPTS", &prompts)
        .env("RESEAM_MAX_NEW_TOKENS", "2")
        .env("RESEAM_PRECISION", "f32");
    let out = t.run(c, b"");
    let v: Value = serde_json::from_str(&ok(&out)).unwrap();
    assert_eq!(v["baseline"]["prompts"][0]["output_ids"].as_array().unwrap().len(), 2);
    assert!(v["target"].as_str().unwrap().ends_with(", f32)"), "{}", v["target"]);
}

#[test]
fn bad_input_is_a_clear_error() {
    let t = TestDir::new();
    let prompts = t.path().join("p.jsonl");
    std::fs::write(&prompts, "{\"prompt\": \"ok\"}\n{\"text\": \"no field\"}\n").unwrap();
    let m = model("llama3-tiny");
    let m = m.to_str().unwrap();
    let p = prompts.to_str().unwrap();
    let e = run(&t, &["speculate", "--target", m, "--prompts", p]);
    assert_eq!(e.status.code(), Some(2), "a bad prompt file is the caller's to fix");
    assert!(String::from_utf8_lossy(&e.stderr).contains("p.jsonl: line 2"), "{e:?}");
    for (args, code, needle) in [
        (vec!["speculate", "--target", "/nonexistent", "--prompts", p], 2, "config.json"),
        (vec!["speculate", "--target", m, "--prompts", p, "--precision", "int4"], 2, "int4"),
        (vec!["speculate", "--target", m, "--prompts", p, "--max-new-tokens", "0"], 2, "--max-new-tokens"),
        (vec!["speculate", "--target", m, "--prompts", "/nonexistent.txt"], 2, "/nonexistent.txt"),
        (vec!["bench", "llm", "--decode-tokens", "0"], 2, "--decode-tokens"),
        (vec!["bench", "llm", "--shape", "gpt5"], 2, "gpt5"),
    ] {
        let out = run(&t, &args);
        assert_eq!(out.status.code(), Some(code), "{args:?}: {out:?}");
        assert!(String::from_utf8_lossy(&out.stderr).contains(needle), "{args:?}: {out:?}");
    }
    // The cause is printed once, after what failed.
    let out = run(&t, &["speculate", "--target", m, "--prompts", "/nonexistent.txt"]);
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(err.starts_with("reseam: --prompts: cannot read /nonexistent.txt: "), "{err}");
    assert_eq!(err.matches("os error 2").count(), 1, "{err}");
    // A damaged checkpoint names its file.
    let broken = t.path().join("broken");
    std::fs::create_dir(&broken).unwrap();
    for f in std::fs::read_dir(model("qwen2-tiny")).unwrap() {
        let f = f.unwrap().path();
        std::fs::copy(&f, broken.join(f.file_name().unwrap())).unwrap();
    }
    let w = broken.join("model.safetensors");
    let bytes = std::fs::read(&w).unwrap();
    std::fs::write(&w, &bytes[..bytes.len() - 100]).unwrap();
    let ok_prompts = t.path().join("ok.txt");
    std::fs::write(&ok_prompts, "x\n").unwrap();
    let out = run(&t, &["speculate", "--target", broken.to_str().unwrap(), "--prompts", ok_prompts.to_str().unwrap()]);
    assert_eq!(out.status.code(), Some(1), "{out:?}");
    assert!(String::from_utf8_lossy(&out.stderr).contains("model.safetensors"), "{out:?}");
    std::fs::write(broken.join("config.json"), "{\"architectures\": [\"GPT2LMHeadModel\"]}").unwrap();
    let out = run(&t, &["speculate", "--target", broken.to_str().unwrap(), "--prompts", ok_prompts.to_str().unwrap()]);
    assert!(String::from_utf8_lossy(&out.stderr).contains("GPT2LMHeadModel"), "{out:?}");
}

#[test]
fn bench_memory_and_llm_print_their_figures() {
    let t = TestDir::new();
    let mem = ok(&run(&t, &["bench", "memory", "--size-mib", "16"]));
    assert!(mem.contains("GB/s"), "{mem}");
    let out = ok(&run(
        &t,
        &[
            "bench",
            "llm",
            "--shape",
            "test",
            "--prefill-tokens",
            "16",
            "--decode-tokens",
            "2",
            "--gemm-rows",
            "8",
            "--size-mib",
            "16",
            "--gemm-min-time",
            "0.01",
            "--json",
        ],
    ));
    let v: Value = serde_json::from_str(&out).unwrap();
    for k in [
        "decode_tokens_per_second",
        "decode_fraction",
        "prefill_fraction",
        "gemm_gmacs",
        "gemm_burst_gmacs",
        "prefill_fraction_burst",
        "bench_gemm_gmacs_per_thread",
        "prefill_fraction_bench_gemm",
        "memory_sustained",
        "decode_fraction_sustained",
    ] {
        assert!(v[k].as_f64().unwrap() > 0.0, "{k}: {out}");
    }
    assert_eq!(v["shape"], "test");
}
