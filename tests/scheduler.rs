//! The shared engine under load: output never depends on what else is in flight, and a short
//! request does not wait for a long one.

use std::sync::Arc;
use std::time::{Duration, Instant};

use reseam::engine::{Engine, EngineOptions};
use reseam::marian::Model;
use reseam::marian::search::SearchOptions;
use reseam::translate::{ArithmeticChoice, TranslateOptions, Translator};
use reseam_kernels::Arithmetic;

use crate::engine::{esen, files, lines};

fn model(shortlist: bool) -> Arc<Model> {
    Arc::new(Model::load(&files("model.esen.intgemm.alphas.bin", shortlist), shortlist).expect("fixture model"))
}

fn posts() -> Vec<String> {
    std::fs::read_to_string(esen().join("refs/social.es.jsonl"))
        .expect("refs/social.es.jsonl")
        .lines()
        .map(|l| {
            serde_json::from_str::<serde_json::Value>(l).expect("JSON line")["text"].as_str().expect("text").into()
        })
        .collect()
}

/// Each sentence alone on an idle engine, then all of them at once from four clients while six
/// more clients keep sending other texts to the same model and to five copies of it (models of
/// their own to the scheduler: six models with work on two compute threads take turns, four at
/// a time, so some wait theirs): the same output, bit for bit.
#[test]
fn output_never_depends_on_load() {
    let sentences = lines("heldout.es");
    let noise: Vec<String> = lines("heldout.en").into_iter().rev().collect();
    for arith in [Arithmetic::Exact, Arithmetic::Saturating] {
        for shortlist in [false, true] {
            let opts = SearchOptions { shortlist, ..Default::default() };
            let a = model(shortlist);
            let copies: Vec<_> = (0..5).map(|_| model(shortlist)).collect();
            let engine = Engine::new(&EngineOptions { threads: 2, arithmetic: arith, ..Default::default() }).unwrap();
            let alone: Vec<String> = sentences
                .iter()
                .map(|s| engine.translate(std::slice::from_ref(&a), vec![s.clone()], &opts).unwrap().remove(0))
                .collect();
            let busy = std::sync::atomic::AtomicBool::new(true);
            let loaded: Vec<String> = std::thread::scope(|s| {
                for m in std::iter::once(&a).chain(&copies) {
                    let (engine, noise, busy, opts) = (&engine, &noise, &busy, &opts);
                    s.spawn(move || {
                        for chunk in noise.chunks(7).cycle() {
                            if !busy.load(std::sync::atomic::Ordering::Relaxed) {
                                break;
                            }
                            engine.translate(std::slice::from_ref(m), chunk.to_vec(), opts).unwrap();
                        }
                    });
                }
                let clients: Vec<_> = sentences
                    .chunks(sentences.len().div_ceil(4))
                    .map(|part| {
                        let (engine, a, opts) = (&engine, &a, &opts);
                        s.spawn(move || {
                            part.chunks(5)
                                .flat_map(|c| engine.translate(std::slice::from_ref(a), c.to_vec(), opts).unwrap())
                                .collect::<Vec<_>>()
                        })
                    })
                    .collect();
                let out = clients.into_iter().flat_map(|c| c.join().unwrap()).collect();
                busy.store(false, std::sync::atomic::Ordering::Relaxed);
                out
            });
            for (i, (x, y)) in alone.iter().zip(&loaded).enumerate() {
                assert_eq!(x, y, "line {} ({arith:?}, shortlist {shortlist}): alone vs under load", i + 1);
            }
            assert_eq!(alone.len(), loaded.len());
        }
    }
}

/// The fixture's social posts through the text pipeline: one at a time, and all at once from
/// several threads sharing one translator (so their sentences share decoder steps).
#[test]
fn posts_translate_the_same_alone_and_together() {
    let posts = posts();
    for arith in [ArithmeticChoice::Exact, ArithmeticChoice::Saturating] {
        for shortlist in [false, true] {
            let mut opts = TranslateOptions::new(esen(), "es", "en");
            opts.model_file = Some("model.esen.intgemm.alphas.bin".into());
            opts.arithmetic = arith;
            opts.shortlist = shortlist;
            opts.threads = 2;
            let t = Translator::load(&opts).unwrap();
            let alone: Vec<String> =
                posts.iter().map(|p| t.translate_posts(&[p.as_str()]).unwrap().remove(0)).collect();
            let together: Vec<String> = std::thread::scope(|s| {
                let handles: Vec<_> = posts
                    .chunks(25)
                    .map(|c| {
                        let t = t.clone();
                        s.spawn(move || t.translate_posts(&c.iter().map(String::as_str).collect::<Vec<_>>()).unwrap())
                    })
                    .collect();
                handles.into_iter().flat_map(|h| h.join().unwrap()).collect()
            });
            assert_eq!(alone.len(), 200, "the fixture has 200 posts");
            for (i, (x, y)) in alone.iter().zip(&together).enumerate() {
                assert_eq!(x, y, "post {i} ({arith:?}, shortlist {shortlist})");
            }
        }
    }
}

/// A one-sentence request sent while a long request is being decoded joins the running steps
/// and comes back long before the long one.
#[test]
fn a_short_request_does_not_wait_for_a_long_one() {
    let m = model(false);
    let engine = Engine::new(&EngineOptions { threads: 2, max_batch: 16, ..Default::default() }).unwrap();
    let long: Vec<String> = lines("heldout.es").into_iter().cycle().take(600).collect();
    let opts = SearchOptions::default();
    let big = engine.submit(std::slice::from_ref(&m), long, &opts);
    std::thread::sleep(Duration::from_millis(200));
    let t0 = Instant::now();
    let small = engine.translate(std::slice::from_ref(&m), vec!["Hola a todos.".into()], &opts).unwrap();
    let small_time = t0.elapsed();
    assert!(!small[0].is_empty());
    assert!(big.try_wait().is_none(), "the long request finished before the short one ({small_time:?})");
    let big = big.wait().unwrap();
    let big_time = t0.elapsed();
    assert_eq!(big.len(), 600);
    assert!(small_time * 4 < big_time, "short {small_time:?}, long {big_time:?}");
}

/// On a server (places kept for light requests), with more models busy than compute threads so
/// that they take turns, a one-sentence request to another model is not held for the long
/// requests' turns (up to 64 steps of 32 rows each): it waits at most for the turn in progress,
/// which ends after 10 ms there, then goes first. Each is sent after more than a second without
/// light requests, when heavy rows step in full. One compute thread, since with two a server
/// encodes heavy requests beside the rounds, a model at a time, and three rarely have work at
/// once. Measured on the 2-vCPU Zen 4 (median of three): 23 ms; 26 ms before models took turns;
/// 62 ms with turns not cut short.
#[test]
#[ignore = "timed against the idle engine: .ci/run runs it alone, after the suite (cargo test --test integration -- --ignored --test-threads=1 serve::flood serve::fair scheduler::a_short_request_does_not_wait_for_the_turns_of_long_ones)"]
fn a_short_request_does_not_wait_for_the_turns_of_long_ones() {
    let models: Vec<Arc<Model>> = (0..4).map(|_| model(false)).collect();
    let engine =
        Engine::new(&EngineOptions { threads: 1, max_batch: 32, light_places: 4, ..Default::default() }).unwrap();
    let opts = SearchOptions::default();
    let short = || {
        let t0 = Instant::now();
        let out = engine.translate(std::slice::from_ref(&models[3]), vec!["Hola a todos.".into()], &opts).unwrap();
        assert!(!out[0].is_empty());
        t0.elapsed()
    };
    let idle = (0..5).map(|_| short()).min().unwrap();
    let long: Vec<String> = lines("heldout.es").into_iter().cycle().take(3000).collect();
    let big: Vec<_> = models[..3].iter().map(|m| engine.submit(std::slice::from_ref(m), long.clone(), &opts)).collect();
    let mut loaded = Vec::new();
    for _ in 0..5 {
        std::thread::sleep(Duration::from_millis(1200));
        loaded.push(short());
    }
    loaded.sort();
    assert!(big.iter().all(|b| b.try_wait().is_none()), "a long request finished before the short ones ({loaded:?})");
    // Ten times its idle latency, and three of the turn's 10 ms limits.
    let bound = idle * 10 + Duration::from_millis(30);
    assert!(loaded[2] <= bound, "short beside three models' long requests {loaded:?}, idle {idle:?}");
    for b in big {
        assert_eq!(b.wait().unwrap().len(), 3000);
    }
}
