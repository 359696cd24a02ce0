//! One value of every variant of every error type: each prints its cause once in the `{:#}`
//! chain the command line prints, is known to [`usage_of`], and says whose fault it is.

use std::io;
use std::path::PathBuf;

use super::*;
use crate::{bench, detect, engine, fetch, html, llm, marian, pack, serve, speculate, text, translate, vocab};
use reseam_kernels::dispatch::IsaError;
use reseam_kernels::{Isa, ShapeError};

type Case = (anyhow::Error, bool);

fn io_err(what: &str) -> io::Error {
    io::Error::other(format!("disk said {what}"))
}

fn not_found() -> io::Error {
    io::Error::new(io::ErrorKind::NotFound, "no entry here")
}

fn p(s: &str) -> PathBuf {
    PathBuf::from(format!("/x/{s}"))
}

fn json_err() -> serde_json::Error {
    serde_json::from_str::<u32>("{oops").unwrap_err()
}

fn shape() -> ShapeError {
    ShapeError::Stride { stride: 3, k_padded: 64 }
}

fn isa() -> IsaError {
    IsaError::Unsupported(Isa::Neon, "not an aarch64 build".into())
}

fn case(e: impl Into<anyhow::Error>, usage: bool) -> Case {
    (e.into(), usage)
}

fn kernels() -> Vec<Case> {
    vec![
        case(IsaError::Unknown("sse9".into()), false),
        case(isa(), false),
        case(ShapeError::Activations { rows: 1, stride: 2, len: 3, need: 4 }, false),
        case(ShapeError::Output { rows: 1, stride: 2, len: 3, need: 4 }, false),
        case(ShapeError::Vector { what: "bias", len: 3, need: 4 }, false),
        case(shape(), false),
        case(ShapeError::Region { rows: 0..2, cols: 0..8, m: 1, n: 4, block: 16 }, false),
    ]
}

fn llm() -> Vec<Case> {
    use llm::Error::*;
    vec![
        case(Io { path: p("config.json"), source: io_err("EIO") }, false),
        case(Io { path: p("config.json"), source: not_found() }, true),
        case(Json { path: p("config.json"), source: json_err() }, false),
        case(Field { path: p("config.json"), field: "rope_theta".into(), msg: "must be positive".into() }, false),
        case(Architecture { path: p("config.json"), found: "GPT2LMHeadModel".into() }, true),
        case(NoWeights { dir: p("m") }, false),
        case(Safetensors { path: p("model.safetensors"), msg: "header too short".into() }, false),
        case(MissingTensor { dir: p("m"), name: "lm_head.weight".into() }, false),
        case(TensorShape { path: p("model.safetensors"), name: "w".into(), got: vec![1], want: vec![2] }, false),
        case(Tokenizer { path: p("tokenizer.json"), msg: "no model".into() }, false),
        case(ChatTemplate { path: p("tokenizer_config.json"), msg: "syntax error".into() }, false),
        case(TokenId { id: 9, vocab: 8 }, true),
        case(Position { len: 9, max: 8 }, true),
        case(Cache, false),
        case(Kernels(isa()), false),
        case(Pack(pack::Error::Io { path: p("w.reseam"), source: io_err("ENOSPC") }), false),
        case(Shape(shape()), false),
        case(EmptyInput("greedy decoding needs at least one prompt token"), true),
        case(Synthetic("embedding of 0×0".into()), false),
        case(Prompts { path: p("p.jsonl"), line: 2, msg: "no prompt field".into() }, true),
        case(NoChatTemplate { dir: p("m") }, true),
    ]
}

fn speculate() -> Vec<Case> {
    use speculate::experiment::Error as X;
    let llm_err = || Box::new(llm::Error::Cache);
    vec![
        case(speculate::SpeculateError::Model { which: "target", source: llm_err() }, false),
        // The chain goes on through the boxed model error: a prompt too long is the caller's.
        case(
            speculate::SpeculateError::Model {
                which: "target",
                source: Box::new(llm::Error::Position { len: 9, max: 8 }),
            },
            true,
        ),
        case(speculate::SpeculateError::Translate { direction: "draft→target", source: "bad bytes".into() }, false),
        case(speculate::SpeculateError::EmptyPrompt { index: 1, which: "target" }, true),
        case(speculate::SpeculateError::Options("-k: give a length".into()), true),
        case(X::Target { dir: p("t"), source: llm_err() }, false),
        case(
            X::Draft {
                dir: p("d"),
                source: Box::new(llm::Error::Io { path: p("d/config.json"), source: not_found() }),
            },
            true,
        ),
        case(X::Prompts(Box::new(llm::Error::Io { path: p("p.txt"), source: not_found() })), true),
        case(X::NoPrompts { path: p("p.txt") }, true),
        case(X::EmptyPrompt { path: p("p.txt"), line: 3 }, true),
        case(X::Settings("-k: give at least one draft length".into()), true),
        case(X::Run(speculate::SpeculateError::EmptyPrompt { index: 2, which: "draft" }), true),
        case(speculate::report::ReportError::Write { path: p("r.json"), source: io_err("EROFS") }, false),
    ]
}

fn marian_and_translate() -> Vec<Case> {
    use marian::ModelError as M;
    use translate::TranslateError as T;
    let vocab_read = || vocab::VocabError::Read { path: p("vocab.spm"), source: io_err("EIO") };
    vec![
        case(M::NotFound { from: "es".into(), to: "en".into(), dir: p("models") }, true),
        case(M::WrongPair { dir: p("m"), found: "de→en".into(), from: "es".into(), to: "en".into() }, true),
        case(M::Ambiguous { dir: p("m"), names: "a.bin, b.bin".into() }, true),
        case(M::NoSuchModelFile(p("m.bin")), true),
        case(M::NoVocab { dir: p("m") }, false),
        case(M::BothVocabs { dir: p("m") }, false),
        case(M::NoShortlist { dir: p("m") }, true),
        case(M::Read { path: p("m.bin"), source: io_err("EIO") }, false),
        case(M::Invalid { path: p("m.bin"), message: "truncated".into() }, false),
        case(M::Mismatch { path: p("lex.bin"), message: "ids past the vocabulary".into() }, false),
        case(M::Vocab(vocab_read()), false),
        case(marian::binary::FormatError("truncated header".into()), false),
        case(marian::config::ConfigError { key: "dim-emb".into(), message: "not a number".into() }, false),
        case(marian::yml::YmlError { line: 3, message: "tab in indentation".into() }, false),
        case(marian::transformer::BuildError::Weight(marian::transformer::WeightError::Missing("Wemb".into())), false),
        case(marian::transformer::BuildError::Other("untied output layer".into()), false),
        case(marian::transformer::WeightError::Shape { name: "W".into(), expected: vec![2], found: vec![3] }, false),
        case(marian::transformer::WeightError::Bad { name: "W".into(), message: "NaN".into() }, false),
        case(marian::search::DecodeError::Shape(shape()), false),
        case(marian::search::DecodeError::NoShortlist, true),
        case(vocab_read(), false),
        case(vocab::VocabError::Read { path: p("vocab.spm"), source: not_found() }, true),
        case(vocab::VocabError::Parse { path: p("vocab.spm"), reason: "bad protobuf".into() }, false),
        case(vocab::VocabError::Unusable { path: p("vocab.spm"), reason: "no unk".into() }, false),
        case(vocab::VocabError::Codec { what: "encode", reason: "internal".into() }, false),
        case(text::Error::Translator { segments: 2, source: "the engine broke".into() }, false),
        case(text::Error::TranslationCount { expected: 2, got: 1 }, false),
        case(text::Error::NoTokenBudget, false),
        case(text::Error::Language { which: "FROM", tag: "e s".into() }, true),
        case(T::Model(M::NoSuchModelFile(p("m.bin"))), true),
        case(T::Decode(marian::search::DecodeError::NoShortlist), true),
        case(T::Engine(engine::EngineError::Stopped), false),
        case(engine::EngineError::Kernels(isa()), false),
        case(engine::EngineError::Threads(io_err("EAGAIN")), false),
        case(engine::EngineError::Decode(marian::search::DecodeError::NoShortlist), true),
        case(engine::EngineError::Vocab(vocab_read()), false),
        case(engine::EngineError::Internal("a chunk came back twice".into()), false),
        case(engine::EngineError::Stopped, false),
        case(T::Vocab(vocab_read()), false),
        case(T::Kernels(isa()), false),
        case(T::Fetch(fetch::FetchError::Langs("give FROM-TO".into())), true),
        case(T::Text(text::Error::NoTokenBudget), false),
        case(T::Offline { from: "es".into(), to: "en".into(), dir: p("models") }, true),
        case(
            T::Download {
                from: "es".into(),
                to: "en".into(),
                dir: p("models"),
                source: Box::new(fetch::FetchError::Network {
                    url: "https://x".into(),
                    detail: "reset".into(),
                    attempts: 3,
                }),
            },
            false,
        ),
        case(
            T::Download {
                from: "xx".into(),
                to: "en".into(),
                dir: p("models"),
                source: Box::new(fetch::FetchError::NotOffered {
                    from: "xx".into(),
                    to: "en".into(),
                    origin: "Remote Settings".into(),
                    why: "no record".into(),
                }),
            },
            true,
        ),
        case(T::InvalidUtf8 { line: 2 }, true),
        case(T::Input(io_err("EIO on stdin")), false),
        case(T::Output(io_err("EPIPE-ish")), false),
    ]
}

fn fetch_bench_pack() -> Vec<Case> {
    use fetch::FetchError as F;
    let s = || String::from("es");
    vec![
        case(F::Langs("give FROM-TO".into()), true),
        case(F::NotOffered { from: s(), to: "en".into(), origin: "o".into(), why: "no record".into() }, true),
        case(F::BadDocument { what: "records", location: "https://x".into(), detail: "not JSON".into() }, false),
        case(F::Network { url: "https://x".into(), detail: "reset".into(), attempts: 3 }, false),
        case(F::Http { url: "https://x".into(), status: 503, hint: "" }, false),
        case(F::SizeMismatch { file: "m.bin".into(), field: "size", expected: 2, got: 1, origin: "o".into() }, false),
        case(
            F::HashMismatch {
                file: "m.bin".into(),
                field: "hash",
                expected: "aa".into(),
                got: "bb".into(),
                origin: "o".into(),
            },
            false,
        ),
        case(F::Decompress { file: "m.bin".into(), origin: "o".into(), detail: "bad frame".into() }, false),
        case(F::NotWritable { path: p("models"), source: io_err("EACCES") }, false),
        case(F::NoSpace { path: p("models"), file: "m.bin".into(), source: io_err("ENOSPC") }, false),
        case(F::Io { path: p("models"), source: io_err("EIO") }, false),
        case(F::NotInstalled { from: s(), to: "en".into(), models: p("models"), hint: "es-en".into() }, true),
        case(bench::gemm::Error::Isa(isa()), false),
        case(bench::gemm::Error::NoRows, true),
        case(bench::gemm::Error::NoShape(vec!["ffn9".into()]), true),
        case(bench::translate::Error::Read { path: p("corpus.tsv"), source: io_err("EIO") }, false),
        case(bench::translate::Error::Read { path: p("corpus.tsv"), source: not_found() }, true),
        case(bench::translate::Error::Line { path: p("corpus.tsv"), line: 3 }, true),
        case(bench::translate::Error::Empty { path: p("corpus.tsv") }, true),
        case(
            bench::translate::Error::Direction {
                from: "es".into(),
                to: "en".into(),
                source: Box::new(translate::TranslateError::Offline {
                    from: "es".into(),
                    to: "en".into(),
                    dir: p("m"),
                }),
            },
            true,
        ),
        case(
            bench::translate::Error::Direction {
                from: "es".into(),
                to: "en".into(),
                source: Box::new(translate::TranslateError::Output(io_err("EPIPE-ish"))),
            },
            false,
        ),
        case(bench::translate::Error::Translate(translate::TranslateError::InvalidUtf8 { line: 1 }), true),
        case(bench::models::Error::NoModels { dir: p("models") }, true),
        case(bench::models::Error::TooMany { count: 99, max: 80 }, true),
        case(bench::models::Error::Write { path: p("es-en/vocab.esen.spm"), source: io_err("ENOSPC") }, false),
        case(bench::models::Error::Read { path: p("es-en/model.reseam"), source: io_err("EIO") }, false),
        case(bench::models::Error::Read { path: p("es-en/model.reseam"), source: not_found() }, true),
        case(bench::models::Error::Pack { dir: p("es-en"), why: "no place could take it".into() }, false),
        case(
            bench::models::Error::Translate {
                pair: "es-en".into(),
                source: Box::new(translate::TranslateError::Output(io_err("EPIPE-ish"))),
            },
            false,
        ),
        case(bench::models::Error::Vocab(vocab::VocabError::Parse { path: p("v.spm"), reason: "cut".into() }), false),
        case(
            bench::models::Error::Registry(engine::registry::RegistryError::Folder {
                dir: p("models"),
                source: not_found(),
            }),
            true,
        ),
        case(pack::Error::Io { path: p("w.reseam"), source: io_err("ENOSPC") }, false),
        case(pack::Error::Format { path: p("w.reseam"), why: "bad magic".into() }, false),
        case(pack::Error::Missing { path: p("w.reseam"), name: "w".into() }, false),
        case(pack::Error::Mismatch { path: p("w.reseam"), name: "w".into(), got: "1".into(), want: "2".into() }, false),
        case(UsageError("--csv needs --draft".into()), true),
    ]
}

fn posts() -> Vec<Case> {
    use std::sync::Arc;
    use translate::TranslateError;
    use translate::records::{RecordError, StreamError};
    let no_model = || TranslateError::Offline { from: "de".into(), to: "en".into(), dir: p("models") };
    vec![
        case(detect::DetectError::NotATag("e$".into()), true),
        case(detect::DetectError::Unsupported("kn".into()), true),
        case(detect::DetectError::Empty, true),
        case(html::HtmlError::<TranslateError>::Parse("bad".into()), true),
        case(html::HtmlError::Translate(TranslateError::Output(io_err("EPIPE"))), false),
        case(html::HtmlError::<TranslateError>::Count { expected: 2, got: 1 }, false),
        case(
            RecordError::Detected {
                language: "de".into(),
                confidence: 0.9,
                to: "en".into(),
                source: Arc::new(no_model()),
            },
            true,
        ),
        case(RecordError::NoDetector, true),
        case(RecordError::Translate(Arc::new(no_model())), true),
        case(RecordError::Translate(Arc::new(TranslateError::Output(io_err("EPIPE")))), false),
        case(StreamError::Record { record: 3, source: RecordError::NoDetector }, true),
        case(StreamError::InvalidUtf8 { record: 2 }, true),
        case(StreamError::Input(io_err("EIO")), false),
        case(StreamError::Output(io_err("EPIPE")), false),
    ]
}

fn serve() -> Vec<Case> {
    use engine::registry::RegistryError;
    let no_route =
        || RegistryError::NoRoute { from: "de".into(), to: "en".into(), dir: p("models"), installed: "es-en".into() };
    vec![
        case(RegistryError::Folder { dir: p("models"), source: not_found() }, true),
        case(RegistryError::Folder { dir: p("models"), source: io_err("EIO") }, false),
        case(no_route(), true),
        case(
            RegistryError::Model(marian::ModelError::NotFound { from: "de".into(), to: "en".into(), dir: p("m") }),
            true,
        ),
        case(bench::serve::Error::Unreachable { url: "http://127.0.0.1:9".into(), detail: "refused".into() }, true),
        case(bench::serve::Error::Zero, true),
    ]
}

fn server() -> Vec<Case> {
    use engine::registry::RegistryError;
    use serve::ServeError as S;
    use serve::auth::TokenError;
    let folder = |source| RegistryError::Folder { dir: p("models"), source };
    vec![
        case(S::Bind { addr: "0.0.0.0:80".into(), source: io_err("EADDRINUSE") }, true),
        case(S::Runtime(io_err("EMFILE")), false),
        case(S::Token(TokenError::Empty(p("token"))), true),
        case(S::Token(TokenError::Read { path: p("token"), source: not_found() }), true),
        case(S::Engine(engine::EngineError::Stopped), false),
        case(S::Registry(folder(not_found())), true),
        case(S::Registry(folder(io_err("EIO"))), false),
        // Preloading wraps the registry's error: the chain goes on to whose fault that is.
        case(S::Preload(folder(io_err("EIO"))), false),
        case(S::Preload(folder(not_found())), true),
    ]
}

fn all() -> Vec<Case> {
    [kernels(), llm(), speculate(), marian_and_translate(), fetch_bench_pack(), posts(), serve(), server()]
        .into_iter()
        .flatten()
        .collect()
}

#[test]
fn every_cause_is_printed_once() {
    for (e, _) in all() {
        let full = format!("{e:#}");
        for link in e.chain().skip(1) {
            let cause = link.to_string();
            assert!(!cause.is_empty(), "{full}");
            assert_eq!(full.matches(&cause).count(), 1, "the cause {cause:?} is printed twice in {full:?}");
        }
    }
}

#[test]
fn every_error_is_known_and_says_whose_fault_it_is() {
    for (e, usage) in all() {
        assert!(usage_of(e.as_ref()).is_some(), "usage_of does not know {e:#} ({e:?})");
        assert_eq!(is_usage(e.as_ref()), usage, "{e:#}");
    }
}

#[test]
fn a_context_line_does_not_hide_the_cause() {
    let e = anyhow::Error::from(llm::Error::Prompts { path: p("p.jsonl"), line: 2, msg: "x".into() })
        .context("running the experiment");
    assert!(is_usage(e.as_ref()));
    let e = anyhow::Error::from(io_err("EIO")).context("writing the results");
    assert!(!is_usage(e.as_ref()));
}

/// Every type with an `is_usage` of its own, in the crate and the kernels, is registered with
/// `fault!` in the file that defines it (a generic one: wherever it is instantiated); an
/// unregistered one would silently count as a failure.
#[test]
fn every_type_that_says_whose_fault_it_is_is_registered() {
    fn files(dir: &std::path::Path, out: &mut Vec<PathBuf>) {
        for e in std::fs::read_dir(dir).unwrap() {
            let p = e.unwrap().path();
            if p.is_dir() {
                files(&p, out);
            } else if p.extension().is_some_and(|x| x == "rs") {
                out.push(p);
            }
        }
    }
    fn words(s: &str) -> impl Iterator<Item = &str> {
        s.split(|c: char| !(c.is_alphanumeric() || c == '_')).filter(|w| !w.is_empty())
    }
    let root = std::path::Path::new(env!("CARGO_MANIFEST_DIR"));
    let mut all = Vec::new();
    files(&root.join("src"), &mut all);
    files(&root.join("kernels/src"), &mut all);
    // (type, generic, file) of every is_usage; the words of every fault!(...) by file.
    let (mut defined, mut registered) = (Vec::new(), Vec::new());
    for f in &all {
        let text = std::fs::read_to_string(f).unwrap();
        let lines: Vec<&str> = text.lines().collect();
        for (i, l) in lines.iter().enumerate() {
            if l.trim_start().starts_with("pub fn is_usage(&self) -> bool") {
                let header = lines[..i].iter().rev().find(|h| h.starts_with("impl")).unwrap();
                // `impl<E: Error + 'static> HtmlError<E> {` → HtmlError
                let name = header.trim_end_matches(" {").rsplit(' ').next().unwrap();
                defined.push((name.split('<').next().unwrap().to_string(), header.starts_with("impl<"), f.clone()));
            }
            let l = l.trim_start();
            if let Some(args) = l.strip_prefix("fault!(").or_else(|| l.strip_prefix("crate::error::fault!(")) {
                registered.extend(words(args).map(|w| (w.to_string(), f.clone())));
            }
        }
    }
    assert!(defined.len() >= 30, "the definitions were not read: {defined:?}");
    // The kernels' types are registered by this crate's error module.
    let here = root.join("src/error.rs");
    for (name, generic, file) in &defined {
        let found = registered.iter().any(|(w, f)| {
            w == name && (*generic || f == file || (file.starts_with(root.join("kernels")) && *f == here))
        });
        assert!(found, "{name} ({}) has is_usage but is not registered with fault! beside it", file.display());
    }
    assert!(inventory::iter::<Classifier>.into_iter().count() >= defined.len());
}
