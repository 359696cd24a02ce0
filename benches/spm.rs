//! SentencePiece encoding of the held-out Spanish sentences with tiny-esen's vocabulary (the
//! Firefox kind: unigram, nmt_nfkc, byte fallback): reseam's Rust encoder, and with
//! `--features cpp-sentencepiece` the C++ library on the same lines, as the `sentencepiece`
//! crate calls it (the encoder as the C++ translators use it; the crate adds its protobuf
//! result, so `cpp_ids` is the library's cost plus that). Throughput in input bytes.
//!
//! `cargo bench --bench spm --features cpp-sentencepiece`

use std::path::Path;

use divan::Bencher;
use divan::counter::BytesCount;
use reseam::vocab::spm::SentencePiece;

fn main() {
    divan::main();
}

fn root() -> &'static Path {
    Path::new(env!("CARGO_MANIFEST_DIR"))
}

fn model() -> Vec<u8> {
    std::fs::read(root().join("tests/fixtures/tiny-esen/vocab.esen.spm")).unwrap()
}

fn lines() -> Vec<String> {
    let text = std::fs::read_to_string(root().join("tests/fixtures/base-enes/refs/heldout.es")).unwrap();
    text.lines().map(str::to_string).collect()
}

fn bytes(lines: &[String]) -> BytesCount {
    BytesCount::new(lines.iter().map(String::len).sum::<usize>())
}

#[divan::bench]
fn rust_ids(bencher: Bencher) {
    let sp = SentencePiece::from_bytes(&model()).unwrap();
    let lines = lines();
    bencher
        .counter(bytes(&lines))
        .bench(|| lines.iter().map(|l| sp.encode_ids(divan::black_box(l)).len()).sum::<usize>());
}

#[divan::bench]
fn rust_pieces_with_spans(bencher: Bencher) {
    let sp = SentencePiece::from_bytes(&model()).unwrap();
    let lines = lines();
    bencher.counter(bytes(&lines)).bench(|| lines.iter().map(|l| sp.encode(divan::black_box(l)).len()).sum::<usize>());
}

#[cfg(feature = "cpp-sentencepiece")]
#[divan::bench]
fn cpp_ids(bencher: Bencher) {
    let sp = sentencepiece::SentencePieceProcessor::from_serialized_proto(&model()).unwrap();
    let lines = lines();
    bencher
        .counter(bytes(&lines))
        .bench(|| lines.iter().map(|l| sp.encode(divan::black_box(l)).unwrap().len()).sum::<usize>());
}
