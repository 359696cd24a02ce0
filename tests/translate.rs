//! `reseam translate`: the real binary against the references of real engines, and its behaviour
//! as a shell filter.

use std::process::Output;

use reseam::marian::Model;
use reseam::marian::search::choose;
use reseam::marian::transformer::{Runtime, StepInput, Workspace};
use reseam_kernels::Arithmetic;

use crate::common::{TestDir, profile_number};
use crate::engine::{esen, files, kernels, lines};

fn translate(t: &TestDir, args: &[&str], stdin: &[u8]) -> Output {
    let mut c = t.cmd();
    c.arg("translate").arg("--models").arg(esen()).args(args).args(["es", "en"]);
    t.run(c, stdin)
}

fn stdout_lines(out: &Output) -> Vec<String> {
    assert!(out.status.success(), "reseam failed: {}", String::from_utf8_lossy(&out.stderr));
    String::from_utf8(out.stdout.clone()).expect("UTF-8 output").lines().map(String::from).collect()
}

/// Translates the 300 held-out lines and returns (our lines, the lines that differ from
/// `reference`). The references were made one line per sentence (Bergamot's `ssplit-mode:
/// sentence`, Marian's one sentence per line), without special handling of links or mentions,
/// so the comparison runs with `--raw --no-split`.
fn heldout(args: &[&str], reference: &str) -> (Vec<String>, Vec<usize>) {
    let t = TestDir::new();
    let input = std::fs::read(esen().join("refs/heldout.es")).unwrap();
    let mut args = args.to_vec();
    args.extend(["--raw", "--no-split"]);
    let ours = stdout_lines(&translate(&t, &args, &input));
    let want = lines(reference);
    assert_eq!(ours.len(), 300, "one output line per input line");
    let differ: Vec<usize> = (0..300).filter(|&i| ours[i] != want[i]).collect();
    (ours, differ)
}

#[test]
fn float_greedy_equals_marian_on_every_line() {
    let (ours, differ) = heldout(&["--model", "model.esen.float32.bin"], "heldout.marian-float32.en");
    let want = lines("heldout.marian-float32.en");
    for &i in &differ {
        eprintln!("line {}:\n  reseam: {}\n  marian: {}", i + 1, ours[i], want[i]);
    }
    assert!(differ.is_empty(), "{} of 300 lines differ from Marian's float32 output", differ.len());
}

#[test]
fn float_greedy_with_shortlist_equals_marian_on_every_line() {
    let (ours, differ) =
        heldout(&["--model", "model.esen.float32.bin", "--shortlist"], "heldout.marian-float32.shortlist.en");
    let want = lines("heldout.marian-float32.shortlist.en");
    for &i in &differ {
        eprintln!("line {}:\n  reseam: {}\n  marian: {}", i + 1, ours[i], want[i]);
    }
    assert!(differ.is_empty(), "{} of 300 lines differ from Marian's float32 shortlist output", differ.len());
}

/// Where a line leaves a reference: the first step at which our greedy choice leaves the
/// reference text, our piece, the candidate that would continue the reference, and the
/// difference of their scores (path score + log-probability, as the search compares them).
pub enum Parting {
    Same,
    /// Both stop at the length limit with the reference's text.
    SameAtLimit,
    At {
        step: usize,
        ours: String,
        theirs: Option<String>,
        margin: Option<f32>,
        log_probs: (f32, f32),
    },
    /// We stop at the length limit where the reference goes on.
    Limit(usize),
}

impl std::fmt::Display for Parting {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Parting::Same => write!(f, "the same output"),
            Parting::SameAtLimit => write!(f, "the same output (both stop at the length limit)"),
            Parting::At { step, ours, theirs: Some(theirs), margin: Some(m), log_probs: (a, b) } => write!(
                f,
                "step {step}: reseam {ours} vs reference {theirs}, margin {m:.3e} (log-prob {a:.6} vs {b:.6})"
            ),
            Parting::At { step, ours, .. } => {
                write!(f, "step {step}: reseam {ours}; no candidate continues the reference")
            }
            Parting::Limit(limit) => {
                write!(f, "reseam stops at the length limit ({limit} tokens) where the reference goes on")
            }
        }
    }
}

/// [`Parting`] of `reference` from our translation of `src_text`, with the model's shortlist
/// (the sentence's own candidates) when it was loaded with one.
pub fn parting(model: &Model, arith: Arithmetic, src_text: &str, reference: &str) -> Parting {
    let rt = Runtime::new(kernels(), arith, false);
    let mut ws = Workspace::default();
    let mut src = model.src_vocab.encode(src_text).unwrap();
    src.push(0);
    let m = &model.marian;
    let short = model
        .shortlist
        .as_ref()
        .map(|sl| m.output().shortlisted(sl.candidates(&src, model.shared_vocab, m.trg_vocab())));
    let ids: Option<Vec<u32>> = short.as_ref().map(|s| s.ids.clone());
    let enc = m.encode(&rt, &mut ws, &[&src]).unwrap().pop().unwrap();
    let mut state = m.start(enc);
    let width = ids.as_ref().map_or(m.trg_vocab(), |v| v.len());
    let id = |j: usize| ids.as_ref().map_or(j as u32, |v| v[j]);
    let (unk, limit) = (model.trg_vocab.unk(), reseam::marian::search::length_limit(src.len(), 2.0));
    let mut logits = vec![0f32; width];
    let mut out: Vec<u32> = Vec::new();
    let mut path = 0f32;
    let text = |ids: &[u32]| model.trg_vocab.decode(ids).unwrap();
    // A byte piece of a character not yet complete decodes to U+FFFD: compare what is complete.
    let prefix = |ids: &[u32]| reference.starts_with(text(ids).trim_end_matches('\u{FFFD}'));
    for step in 0..limit {
        m.step(&rt, &mut ws, &mut [(&mut state, StepInput { prev: out.last().copied(), pos: out.len() })]).unwrap();
        m.logits(&rt, &mut ws, 1, &|_| short.as_ref(), &mut logits, width).unwrap();
        let (best, score) = choose(rt.kernels, &logits, path, ids.as_deref(), unk);
        let mut row = logits.clone();
        reseam::marian::layers::softmax::log_softmax(&mut row);
        let best_id = id(best);
        let mut with_best = out.clone();
        with_best.push(best_id);
        let continues = |ids: &[u32]| best_id == 0 && text(ids) == reference || prefix(ids);
        if best_id != 0 && !continues(&with_best) || (best_id == 0 && text(&out) != reference) {
            // The reference's token: the best-scoring candidate that keeps the reference text.
            let mut alt: Option<(usize, f32)> = None;
            for (j, &lp) in row.iter().enumerate() {
                if id(j) == unk || j == best {
                    continue;
                }
                let mut next = out.clone();
                next.push(id(j));
                let ok = if id(j) == 0 { text(&out) == reference } else { prefix(&next) };
                if ok && alt.is_none_or(|(_, s)| path + lp > s) {
                    alt = Some((j, path + lp));
                }
            }
            let piece = |j: usize| if id(j) == 0 { "</s>".to_string() } else { format!("{:?}", text(&[id(j)])) };
            return Parting::At {
                step,
                ours: piece(best),
                theirs: alt.map(|(j, _)| piece(j)),
                margin: alt.map(|(_, s)| score - s),
                log_probs: (row[best], alt.map_or(f32::NAN, |(j, _)| row[j])),
            };
        }
        path = score;
        if best_id == 0 {
            return Parting::Same;
        }
        out.push(best_id);
    }
    if text(&out) == reference {
        return Parting::SameAtLimit;
    }
    Parting::Limit(limit)
}

/// [`parting`] as the agreement tests print it.
pub fn explain(model: &Model, arith: Arithmetic, src_text: &str, reference: &str) -> String {
    parting(model, arith, src_text, reference).to_string()
}

fn int8_agreement(arith: &str, reference: &str, at_least: usize) {
    let (ours, differ) = heldout(&["--arithmetic", arith], reference);
    let want = lines(reference);
    let src = lines("heldout.es");
    let model = Model::load(&files("model.esen.intgemm.alphas.bin", false), false).unwrap();
    let a = if arith == "exact" { Arithmetic::Exact } else { Arithmetic::Saturating };
    for &i in &differ {
        eprintln!(
            "line {} ({arith}): {}\n  reseam:   {}\n  bergamot: {}",
            i + 1,
            explain(&model, a, &src[i], &want[i]),
            ours[i],
            want[i]
        );
    }
    let equal = 300 - differ.len();
    eprintln!("int8 {arith}: {equal}/300 lines equal Bergamot");
    assert!(equal >= at_least, "only {equal} of 300 lines equal Bergamot ({arith}); at least {at_least} must");
}

#[test]
fn int8_saturating_equals_bergamot() {
    // The issue asks for 297; reseam reaches all 300 and must not slip back silently.
    int8_agreement("saturating", "heldout.bergamot-saturating.en", 300);
}

#[test]
fn int8_exact_equals_bergamot() {
    int8_agreement("exact", "heldout.bergamot-exact.en", 300);
}

#[test]
fn lines_spacing_and_empty_lines_are_kept() {
    let t = TestDir::new();
    let out = translate(&t, &["--arithmetic", "exact"], b"\n  Hola.\t\n\nBuenos d\xc3\xadas.");
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    let text = String::from_utf8(out.stdout).unwrap();
    let lines: Vec<&str> = text.split('\n').collect();
    assert_eq!(lines.len(), 4, "{text:?}");
    assert_eq!(lines[0], "");
    assert!(lines[1].starts_with("  ") && lines[1].ends_with('\t') && lines[1].trim().len() > 1, "{text:?}");
    assert_eq!(lines[2], "");
    assert!(!lines[3].is_empty(), "the last line has no newline and gets none: {text:?}");
}

#[test]
fn invalid_utf8_names_the_line() {
    let t = TestDir::new();
    let out = translate(&t, &[], b"Hola.\nadi\xffos\n");
    assert_eq!(out.status.code(), Some(2), "input that is not UTF-8 is the caller's to fix");
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(err.contains("line 2") && err.contains("UTF-8"), "{err}");
}

#[test]
fn missing_or_broken_model_names_the_path() {
    let t = TestDir::new();
    let mut c = t.cmd();
    c.args(["translate", "--offline", "--models"]).arg(t.path().join("nowhere")).args(["es", "en"]);
    let out = t.run(c, b"Hola\n");
    assert_eq!(out.status.code(), Some(2), "a model that is not there is the caller's to fetch");
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(err.contains("nowhere") && err.contains("es→en") && err.contains("reseam fetch es-en"), "{err}");

    // A model folder whose model file is cut short.
    let dir = t.path().join("models").join("es-en");
    std::fs::create_dir_all(&dir).unwrap();
    let model = std::fs::read(esen().join("model.esen.intgemm.alphas.bin")).unwrap();
    std::fs::write(dir.join("model.esen.intgemm.alphas.bin"), &model[..model.len() / 2]).unwrap();
    std::fs::copy(esen().join("vocab.esen.spm"), dir.join("vocab.esen.spm")).unwrap();
    let mut c = t.cmd();
    c.args(["translate", "es", "en"]).env("MODELS_DIR", t.path().join("models"));
    let out = t.run(c, b"Hola\n");
    assert_eq!(out.status.code(), Some(1), "a damaged model is a failure, not the caller's mistake");
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(err.contains("model.esen.intgemm.alphas.bin") && err.contains("truncated"), "{err}");

    // --shortlist without a shortlist file.
    let mut c = t.cmd();
    c.args(["translate", "--shortlist", "es", "en"]).env("MODELS_DIR", t.path().join("models"));
    std::fs::write(dir.join("model.esen.intgemm.alphas.bin"), &model).unwrap();
    let out = t.run(c, b"Hola\n");
    assert_eq!(out.status.code(), Some(2), "--shortlist for a model without one is a usage error");
    assert!(String::from_utf8_lossy(&out.stderr).contains("lex."), "{out:?}");
}

#[test]
fn usage_errors_exit_2_and_help_explains_the_arithmetic() {
    let t = TestDir::new();
    let out = translate(&t, &["--arithmetic", "fast"], b"");
    assert_eq!(out.status.code(), Some(2));
    let mut c = t.cmd();
    c.args(["translate", "--help"]);
    let out = t.run(c, b"");
    let help = String::from_utf8_lossy(&out.stdout);
    for word in ["--arithmetic", "saturating", "exact", "RESEAM_MT_ARITHMETIC", "MODELS_DIR", "--shortlist"] {
        assert!(help.contains(word), "help lacks {word}: {help}");
    }
    let mut c = t.cmd();
    c.arg("--help");
    let out = t.run(c, b"");
    assert!(String::from_utf8_lossy(&out.stdout).contains("translate"));
}

#[test]
fn debug_prints_marian_style_layers_to_stderr() {
    let t = TestDir::new();
    let mut c = t.cmd();
    c.args(["translate", "--model", "model.esen.float32.bin", "--models"]).arg(esen()).args(["es", "en"]);
    c.env("RESEAM_MT_DEBUG", "1");
    let out = t.run(c, b"Hola.\n");
    assert!(out.status.success());
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(err.contains("Debug: encoder_l1_self op=layer_normalization"), "{}", &err[..err.len().min(500)]);
    assert!(err.contains("Debug: decoder_ff_logit_out op=affine") && err.contains("l2-norm:"));
    assert_eq!(String::from_utf8_lossy(&out.stdout).lines().count(), 1);
}

#[test]
fn a_closed_output_pipe_is_not_an_error() {
    use std::io::{Read, Write};
    use std::process::Stdio;
    let t = TestDir::new();
    let mut c = t.cmd();
    c.args(["translate", "--model", "model.esen.float32.bin", "--models"]).arg(esen()).args(["es", "en"]);
    c.stdin(Stdio::piped()).stdout(Stdio::piped()).stderr(Stdio::piped());
    let mut child = c.spawn().unwrap();
    // The reader goes away before anything is written, as `reseam translate ... | head -0` would.
    drop(child.stdout.take());
    let mut stdin = child.stdin.take().unwrap();
    let _ = stdin.write_all(b"Hola.\nAdios.\n");
    drop(stdin);
    let status = child.wait().unwrap();
    let mut err = String::new();
    child.stderr.take().unwrap().read_to_string(&mut err).unwrap();
    assert!(status.success(), "{status:?}: {err}");
    assert!(err.is_empty(), "{err}");
}

/// The diagnosis the agreement tests print for a differing line finds the step where two engines
/// part: the int8 model against Marian's float output on line 4 ("We are not a long-term..." vs
/// "We are not a very little time.").
#[test]
fn explain_finds_where_two_outputs_part() {
    let model = Model::load(&files("model.esen.intgemm.alphas.bin", false), false).unwrap();
    let src = lines("heldout.es");
    let float = lines("heldout.marian-float32.en");
    let why = explain(&model, Arithmetic::Saturating, &src[3], &float[3]);
    assert!(why.starts_with("step 4: reseam \"long\" vs reference \"very\", margin 2.4"), "{why}");
    let same = explain(&model, Arithmetic::Saturating, &src[3], "We are not a long-term-term times.");
    assert_eq!(same, "the same output");
}

/// On two compute threads, with more sentences than the batches hold, the scheduler's rounds run
/// several decoder steps each (`RESEAM_MT_PROFILE`'s model steps over its rounds; rounds of one
/// step give two, one a part), and every line still equals Bergamot's.
#[test]
fn rounds_of_many_steps_keep_every_line() {
    let t = TestDir::new();
    let input = std::fs::read(esen().join("refs/heldout.es")).unwrap();
    let mut c = t.cmd();
    c.arg("translate")
        .arg("--models")
        .arg(esen())
        .args(["--arithmetic", "saturating", "--threads", "2", "--batch", "8", "--raw", "--no-split", "es", "en"])
        .env("RESEAM_MT_PROFILE", "1");
    let out = t.run(c, &input);
    let ours = stdout_lines(&out);
    assert_eq!(ours, lines("heldout.bergamot-saturating.en"));
    let stderr = String::from_utf8_lossy(&out.stderr);
    let steps = profile_number(&stderr, " rows in ", ' ');
    let rounds = profile_number(&stderr, "rounds on two threads or more:", '\n');
    assert!(rounds > 0 && steps >= 4 * rounds, "{steps} model steps in {rounds} rounds: {stderr}");
}
