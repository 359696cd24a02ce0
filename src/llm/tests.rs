//! The engine against Transformers' goldens (tests/fixtures/llm/goldens): logits, argmax at
//! every prompt position and greedy continuations in f32; the int8 error; batch invariance of
//! the (k+1)-token verification forward.

use std::path::{Path, PathBuf};
use std::sync::OnceLock;

use serde_json::Value;

use super::*;

const MODELS: [&str; 3] = ["llama3-tiny", "mistral-tiny", "qwen2-tiny"];
/// The README's logit tolerance for a float32 engine (10x the float64-vs-float32 noise).
const LOGIT_TOL: f32 = 1e-3;
/// Greedy steps are compared up to the first whose golden top-2 margin is below this.
const MARGIN_RULE: f64 = 1e-3;

fn fixtures() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/llm")
}

fn golden(model: &str) -> &'static Value {
    static G: OnceLock<Vec<Value>> = OnceLock::new();
    let all = G.get_or_init(|| {
        MODELS
            .iter()
            .map(|m| {
                serde_json::from_slice(&std::fs::read(fixtures().join(format!("goldens/{m}.json"))).unwrap()).unwrap()
            })
            .collect()
    });
    &all[MODELS.iter().position(|m| *m == model).unwrap()]
}

fn ids(v: &Value) -> Vec<u32> {
    v.as_array().unwrap().iter().map(|x| x.as_u64().unwrap() as u32).collect()
}

fn floats(v: &Value) -> Vec<f64> {
    v.as_array().unwrap().iter().map(|x| x.as_f64().unwrap()).collect()
}

fn load(model: &str, precision: Precision) -> Model {
    let opts = LoadOptions { precision, pack_dir: None, no_pack: true };
    Model::load(&fixtures().join(model), &opts).unwrap()
}

/// Prompts that have model outputs, with the ids the model ran on.
fn cases(model: &str) -> Vec<(&'static str, Vec<u32>, &'static Value)> {
    golden(model)["prompts"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|p| !p["model"].is_null())
        .map(|p| (p["key"].as_str().unwrap(), ids(&p[p["model_input"].as_str().unwrap()]), &p["model"]))
        .collect()
}

fn logsumexp(row: &[f32]) -> f64 {
    let m = row.iter().fold(f32::NEG_INFINITY, |a, &b| a.max(b)) as f64;
    m + row.iter().map(|&x| (x as f64 - m).exp()).sum::<f64>().ln()
}

#[test]
fn f32_logits_and_argmax_at_every_position_match_transformers() {
    for model in MODELS {
        let m = load(model, Precision::F32);
        for (key, input, out) in cases(model) {
            let mut cache = m.new_cache();
            let logits = m.forward(&mut cache, &input, LogitRows::All).unwrap();
            assert_eq!(logits.argmaxes(), ids(&out["argmax_per_position"]), "{model} {key}: argmax per position");
            let last = logits.row(input.len() - 1);
            let l = &out["last_logits"];
            for (i, want) in ids(&l["fixed_indices"]).into_iter().zip(floats(&l["fixed_values"])) {
                let got = last[i as usize];
                assert!((got as f64 - want).abs() <= LOGIT_TOL as f64, "{model} {key}: logit {i} = {got}, want {want}");
            }
            for (i, want) in ids(&l["top_ids"]).into_iter().zip(floats(&l["top_values"])) {
                assert!((last[i as usize] as f64 - want).abs() <= LOGIT_TOL as f64, "{model} {key}: top logit {i}");
            }
            let mut sorted = last.to_vec();
            sorted.sort_by(|a, b| b.total_cmp(a));
            for (got, want) in sorted.iter().zip(floats(&l["top_values"])) {
                assert!((*got as f64 - want).abs() <= LOGIT_TOL as f64, "{model} {key}: top values");
            }
            let lse = l["logsumexp"].as_f64().unwrap();
            assert!((logsumexp(last) - lse).abs() <= LOGIT_TOL as f64, "{model} {key}: logsumexp");
        }
    }
}

#[test]
fn f32_greedy_continuations_match_transformers_up_to_the_first_near_tie() {
    for model in MODELS {
        let m = load(model, Precision::F32);
        let mut compared = 0;
        for (key, input, out) in cases(model) {
            let want = ids(&out["greedy"]["new_ids"]);
            let margins = floats(&out["greedy"]["top1_top2_margin"]);
            let mut cache = m.new_cache();
            let got = generate::greedy(&m, &mut cache, &input, want.len(), &[]).unwrap().output_ids;
            // Step i is decided by the margin at step i; a near-tie may flip, and all after it.
            let n = margins.iter().position(|&mg| mg < MARGIN_RULE).unwrap_or(want.len());
            assert_eq!(got[..n], want[..n], "{model} {key}: greedy ids (compared {n} steps)");
            compared += n;
        }
        assert!(compared > 500, "{model}: only {compared} greedy steps compared");
    }
}

#[test]
fn bf16_precision_is_exact_for_a_bf16_checkpoint_and_close_otherwise() {
    // llama3-tiny is stored in bfloat16: bf16 weights widen exactly, so results equal f32.
    for (model, exact) in [("llama3-tiny", true), ("qwen2-tiny", false)] {
        let (f, b) = (load(model, Precision::F32), load(model, Precision::Bf16));
        let (_, input, _) = cases(model).into_iter().next().unwrap();
        let (mut cf, mut cb) = (f.new_cache(), b.new_cache());
        let lf = f.forward(&mut cf, &input, LogitRows::All).unwrap();
        let lb = b.forward(&mut cb, &input, LogitRows::All).unwrap();
        if exact {
            assert_eq!(lf, lb, "{model}");
        } else {
            let err = lf.data.iter().zip(&lb.data).fold(0f32, |m, (a, b)| m.max((a - b).abs()));
            // The README's bfloat16 column bounds whole-model bf16 compute; weights alone move less.
            assert!(err < 6.0, "{model}: {err}");
        }
    }
}

/// Agreement of int8 argmaxes with the goldens over every prompt position, and the largest
/// difference of last-position logits from the golden values given.
fn int8_report(model: &str) -> (usize, usize, f64) {
    let m = load(model, Precision::Int8);
    let (mut agree, mut total, mut max_err) = (0, 0, 0f64);
    for (_, input, out) in cases(model) {
        let mut cache = m.new_cache();
        let logits = m.forward(&mut cache, &input, LogitRows::All).unwrap();
        let want = ids(&out["argmax_per_position"]);
        agree += logits.argmaxes().iter().zip(&want).filter(|(a, b)| a == b).count();
        total += want.len();
        let last = logits.row(input.len() - 1);
        let l = &out["last_logits"];
        for key in ["fixed", "top"] {
            let (ix, vals) = if key == "fixed" { ("fixed_indices", "fixed_values") } else { ("top_ids", "top_values") };
            for (i, v) in ids(&l[ix]).into_iter().zip(floats(&l[vals])) {
                max_err = max_err.max((last[i as usize] as f64 - v).abs());
            }
        }
    }
    (agree, total, max_err)
}

#[test]
fn int8_agreement_and_logit_error_per_model() {
    for model in MODELS {
        let (agree, total, err) = int8_report(model);
        let max_logit = golden(model)["bf16_summary"]["max_abs_logit"].as_f64().unwrap();
        eprintln!(
            "int8 {model}: argmax agreement {agree}/{total} ({:.1}%), max |logit error| at the last position {err:.3} (logits up to {max_logit})",
            100.0 * agree as f64 / total as f64
        );
        // Regression bounds, not a target: per-row int8 weights with per-token int8 activations
        // measured 84-91% agreement and last-position errors of 0.9-3.3 on these random models
        // with large gains (Transformers' own bfloat16 compute: 94-95%, errors ~1.5). A broken
        // quantization path lands far below.
        assert!(agree as f64 >= 0.8 * total as f64, "{model}: {agree}/{total}");
        assert!(err < 5.0, "{model}: {err}");
    }
}

#[test]
fn verification_forward_equals_single_token_forwards_bit_for_bit() {
    for precision in [Precision::F32, Precision::Int8] {
        for model in MODELS {
            let m = load(model, precision);
            for (key, input, out) in cases(model).into_iter().take(6) {
                let seq: Vec<u32> = input.iter().copied().chain(ids(&out["greedy"]["new_ids"])).collect();
                for k in [1usize, 2, 4, 6] {
                    let split = input.len();
                    let mut base = m.new_cache();
                    m.forward(&mut base, &seq[..split], LogitRows::None).unwrap();
                    let mut batched = base.clone();
                    let lb = m.forward(&mut batched, &seq[split..split + k + 1], LogitRows::All).unwrap();
                    let mut single = base.clone();
                    for (i, &t) in seq[split..split + k + 1].iter().enumerate() {
                        let ls = m.forward(&mut single, &[t], LogitRows::Last).unwrap();
                        assert_eq!(ls.row(0), lb.row(i), "{precision} {model} {key}: k={k} row {i}");
                    }
                    // Trimming back and feeding again gives the same again.
                    batched.truncate(split + 1);
                    let again = m.forward(&mut batched, &seq[split + 1..split + k + 1], LogitRows::All).unwrap();
                    for i in 0..k {
                        assert_eq!(again.row(i), lb.row(i + 1), "{precision} {model} {key}: after trim, row {i}");
                    }
                }
            }
        }
    }
}

#[test]
fn a_narrowed_output_layer_computes_its_rows_bit_for_bit() {
    let packs = tempfile::tempdir().unwrap();
    let packed = LoadOptions { precision: Precision::Int8, pack_dir: Some(packs.path().to_path_buf()), no_pack: false };
    for model in MODELS {
        for (how, opts) in [
            ("f32", LoadOptions { precision: Precision::F32, pack_dir: None, no_pack: true }),
            ("bf16", LoadOptions { precision: Precision::Bf16, pack_dir: None, no_pack: true }),
            ("int8", LoadOptions { precision: Precision::Int8, pack_dir: None, no_pack: true }),
            ("int8 packed", packed.clone()),
        ] {
            let mut m = Model::load(&fixtures().join(model), &opts).unwrap();
            let (_, input, _) = cases(model).swap_remove(0);
            let full = m.forward(&mut m.new_cache(), &input, LogitRows::All).unwrap();
            let vocab = m.vocab_size() as u32;
            // Unordered, with the last id and one past a 16-column block boundary.
            let keep = vec![vocab - 1, 5, 17, 1000, 16, 0, vocab / 2];
            m.narrow_outputs(Some(keep.clone())).unwrap();
            let narrow = m.forward(&mut m.new_cache(), &input, LogitRows::All).unwrap();
            assert_eq!(narrow.vocab, keep.len());
            assert_eq!(narrow.rows(), full.rows());
            for r in 0..full.rows() {
                for (i, &id) in keep.iter().enumerate() {
                    assert_eq!(m.output_id(i as u32), id);
                    assert_eq!(
                        narrow.row(r)[i].to_bits(),
                        full.row(r)[id as usize].to_bits(),
                        "{model} {how} row {r} id {id}"
                    );
                }
            }
            assert!(
                m.weight_bytes_per_token()
                    < Model::load(&fixtures().join(model), &opts).unwrap().weight_bytes_per_token()
            );
            assert!(matches!(m.narrow_outputs(Some(vec![vocab])), Err(Error::TokenId { .. })));
            assert!(matches!(m.narrow_outputs(Some(Vec::new())), Err(Error::EmptyInput(_))));
            m.narrow_outputs(None).unwrap();
            assert_eq!(
                m.forward(&mut m.new_cache(), &input, LogitRows::All).unwrap(),
                full,
                "{model} {how}: whole again"
            );
        }
    }
}

#[test]
fn forward_refuses_bad_ids_other_caches_and_overlong_sequences() {
    let m = load("qwen2-tiny", Precision::F32);
    let mut c = m.new_cache();
    assert!(matches!(m.forward(&mut c, &[151936], LogitRows::Last), Err(Error::TokenId { .. })));
    assert!(c.is_empty());
    let other = load("qwen2-tiny", Precision::F32);
    let mut oc = other.new_cache();
    assert!(matches!(m.forward(&mut oc, &[1], LogitRows::Last), Err(Error::Cache)));
    let too_long = vec![1u32; m.spec().max_positions + 1];
    assert!(matches!(m.forward(&mut c, &too_long, LogitRows::None), Err(Error::Position { .. })));
    assert_eq!(m.forward(&mut c, &[], LogitRows::All).unwrap().rows(), 0);
}

#[test]
fn llm_bundle_renders_and_encodes_chat_prompts_and_reads_stop_ids() {
    let dir = fixtures().join("llama3-tiny");
    let opts = LoadOptions { precision: Precision::F32, pack_dir: None, no_pack: true };
    let llm = Llm::open(&dir, &opts).unwrap();
    assert_eq!(llm.eos, vec![128001, 128008, 128009]);
    let ids = llm.prompt_ids("Cześć", true).unwrap();
    assert_eq!(ids[0], 128000);
    assert_eq!(&ids[ids.len() - 4..], &[128006, 78191, 128007, 271]);
    assert_eq!(llm.prompt_ids("Cześć", false).unwrap(), llm.tokenizer.encode("Cześć", true).unwrap());
    let q = Llm::open(&fixtures().join("qwen2-tiny"), &opts).unwrap();
    assert_eq!(q.eos, vec![151645, 151643]);
}

#[test]
fn a_long_prefill_equals_feeding_token_by_token_bit_for_bit() {
    // Long enough for several groups of query rows in attention and the per-row steps on
    // every thread.
    let m = load("mistral-tiny", Precision::F32);
    let (_, input, out) = cases("mistral-tiny").into_iter().max_by_key(|c| c.1.len()).unwrap();
    let seq: Vec<u32> = input.iter().copied().chain(ids(&out["greedy"]["new_ids"])).collect();
    assert!(seq.len() >= 40, "{}", seq.len());
    let mut whole = m.new_cache();
    let all = m.forward(&mut whole, &seq, LogitRows::All).unwrap();
    let mut steps = m.new_cache();
    for (i, &t) in seq.iter().enumerate() {
        let one = m.forward(&mut steps, &[t], LogitRows::Last).unwrap();
        assert_eq!(one.row(0), all.row(i), "position {i}");
    }
}

#[test]
fn forwards_of_other_models_and_lengths_in_between_change_nothing() {
    // Every forward reuses the process's working memory: what an earlier, longer forward of
    // another model left there must never show through.
    let (a, b) = (load("mistral-tiny", Precision::Int8), load("qwen2-tiny", Precision::Int8));
    let (_, prompt, _) = cases("qwen2-tiny").into_iter().next().unwrap();
    let mut cb = b.new_cache();
    let alone = b.forward(&mut cb, &prompt, LogitRows::All).unwrap();
    let long: Vec<u32> = (0..3 * prompt.len() + 40).map(|i| (i * 37 % 1000) as u32 + 5).collect();
    a.forward(&mut a.new_cache(), &long, LogitRows::All).unwrap();
    cb.clear();
    let again = b.forward(&mut cb, &prompt, LogitRows::All).unwrap();
    for i in 0..prompt.len() {
        assert_eq!(again.row(i), alone.row(i), "position {i}");
    }
}
