//! Firefox's larger architectures against Bergamot: base-memory (dim 384, head size 48, four SSRU
//! decoder layers, split vocabularies) on `../shared/fixtures/base-memory-enes`, base (dim 512,
//! head size 64) on `tests/fixtures/base-enes`, and a pivot through two real models.
//!
//! A line may differ from a reference only where the two best candidates are within
//! [`NEAR_TIE`]: there the choice is decided by the order of MKL's float sums in Bergamot's
//! attention, which depends on the CPU the reference was made on. base-memory-enes's own
//! references were made on an AMD CPU, where MKL takes other kernels (reseam equals them on
//! 277/270/285 of 300, exactly as often as Bergamot on an Intel Xeon does); the references these
//! tests hold it to are Bergamot's on an Intel Xeon (`tests/fixtures/base-memory-enes-xeon`).
//!
//! base-memory-enes is not copied into the repository (25 MB): the tests that read it are
//! `#[ignore]`d so that `cargo test` passes in a clone without `../shared`, and `.ci/run` runs them
//! with `--ignored`, where a missing fixture fails the test with its path.

use std::path::{Path, PathBuf};

use reseam::marian::{Model, find};
use reseam_kernels::Arithmetic;

use crate::common::{TestDir, fixtures};
use crate::translate::{Parting, parting};

/// The largest top-2 margin at the first differing step that MKL's summation order explains.
const NEAR_TIE: f32 = 1e-3;

/// The lines a reference may differ on, of 300 (issue 30 asks for at least 291 equal).
const AT_LEAST: usize = 291;

struct Fixture {
    name: &'static str,
    /// The model folder (and the source side of the held-out set in `refs/`).
    dir: PathBuf,
    /// Where the Bergamot references are.
    refs: PathBuf,
    from: &'static str,
    to: &'static str,
}

impl Fixture {
    /// A fixture folder, or a failure naming it.
    fn at(name: &'static str, dir: PathBuf, from: &'static str, to: &'static str) -> Fixture {
        assert!(
            dir.join("README.md").is_file(),
            "fixture {name} is missing: expected it at {} (see issue 30 and .ci/run)",
            dir.display()
        );
        Fixture { name, refs: dir.join("refs"), dir, from, to }
    }

    /// base-memory-enes with the references Bergamot gives on an Intel Xeon.
    fn base_memory() -> Fixture {
        let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("../shared/fixtures/base-memory-enes");
        Fixture {
            refs: fixtures().join("base-memory-enes-xeon/refs"),
            ..Fixture::at("base-memory-enes", dir, "en", "es")
        }
    }

    fn base() -> Fixture {
        Fixture::at("base-enes", fixtures().join("base-enes"), "en", "es")
    }

    /// Lines of a reference file, from the references' folder.
    fn refs(&self, name: &str) -> Vec<String> {
        read_lines(self.name, &self.refs.join(name))
    }

    fn source(&self) -> Vec<String> {
        read_lines(self.name, &self.dir.join("refs").join(format!("heldout.{}", self.from)))
    }
}

fn read_lines(fixture: &str, path: &Path) -> Vec<String> {
    std::fs::read_to_string(path)
        .unwrap_or_else(|e| panic!("fixture {fixture}: reading {}: {e}", path.display()))
        .lines()
        .map(String::from)
        .collect()
}

/// `reseam translate --raw --no-split` on `input` (one sentence per line, as the references
/// were made), with `models` as the models folder.
fn translate(models: &Path, from: &str, to: &str, args: &[&str], input: &[String]) -> Vec<String> {
    let t = TestDir::new();
    let mut c = t.cmd();
    c.arg("translate").arg("--models").arg(models).args(["--offline", "--raw", "--no-split"]).args(args);
    c.args([from, to]);
    let out = t.run(c, (input.join("\n") + "\n").as_bytes());
    assert!(out.status.success(), "reseam failed: {}", String::from_utf8_lossy(&out.stderr));
    let ours: Vec<String> = String::from_utf8(out.stdout).expect("UTF-8 output").lines().map(String::from).collect();
    assert_eq!(ours.len(), input.len(), "one output line per input line");
    ours
}

/// Translates the fixture's 300 held-out lines and asserts that at least [`AT_LEAST`] equal
/// `reference` and that every other one parts from it at a near-tie.
fn agreement(fx: &Fixture, arith: Arithmetic, shortlist: bool) {
    let a = if arith == Arithmetic::Exact { "exact" } else { "saturating" };
    let reference = format!("heldout.bergamot-{a}{}.{}", if shortlist { ".shortlist" } else { "" }, fx.to);
    let src = fx.source();
    let want = fx.refs(&reference);
    let mut args = vec!["--arithmetic", a];
    if shortlist {
        args.push("--shortlist");
    }
    let ours = translate(&fx.dir, fx.from, fx.to, &args, &src);
    let files = find(&fx.dir, fx.from, fx.to, None).expect("fixture model folder");
    let model = Model::load(&files, shortlist).expect("fixture model");
    let mut far = Vec::new();
    let differ: Vec<usize> = (0..src.len()).filter(|&i| ours[i] != want[i]).collect();
    for &i in &differ {
        let why = parting(&model, arith, &src[i], &want[i]);
        eprintln!("{} line {} ({reference}): {why}\n  reseam:   {}\n  bergamot: {}", fx.name, i + 1, ours[i], want[i]);
        if !matches!(why, Parting::At { margin: Some(m), .. } if m.abs() < NEAR_TIE) {
            far.push(format!("line {}: {why}", i + 1));
        }
    }
    let equal = src.len() - differ.len();
    eprintln!("{} {reference}: {equal}/{} lines equal Bergamot", fx.name, src.len());
    assert!(far.is_empty(), "{}: lines that differ from {reference} beyond a near-tie:\n{}", fx.name, far.join("\n"));
    assert!(equal >= AT_LEAST, "{}: only {equal} lines equal {reference}; at least {AT_LEAST} must", fx.name);
}

#[test]
#[ignore = "reads ../shared/fixtures/base-memory-enes (not in the repository); .ci/run runs it"]
fn base_memory_exact_equals_bergamot() {
    agreement(&Fixture::base_memory(), Arithmetic::Exact, false);
}

#[test]
#[ignore = "reads ../shared/fixtures/base-memory-enes (not in the repository); .ci/run runs it"]
fn base_memory_saturating_equals_bergamot() {
    agreement(&Fixture::base_memory(), Arithmetic::Saturating, false);
}

#[test]
#[ignore = "reads ../shared/fixtures/base-memory-enes (not in the repository); .ci/run runs it"]
fn base_memory_exact_with_shortlist_equals_bergamot() {
    agreement(&Fixture::base_memory(), Arithmetic::Exact, true);
}

#[test]
#[ignore = "reads ../shared/fixtures/base-memory-enes (not in the repository); .ci/run runs it"]
fn base_memory_saturating_with_shortlist_equals_bergamot() {
    agreement(&Fixture::base_memory(), Arithmetic::Saturating, true);
}

/// es→en→es through tiny-esen then base-memory-enes (a shared, then a split vocabulary) equals
/// Bergamot run on the two models in turn, its output of the first fed to the second.
fn pivot(arith: &str) {
    let en = Fixture::at("tiny-esen", fixtures().join("tiny-esen"), "es", "en");
    let es = Fixture::base_memory();
    let t = TestDir::new();
    let models = t.path().join("models");
    std::fs::create_dir_all(&models).unwrap();
    for (pair, fx) in [("es-en", &en), ("en-es", &es)] {
        std::os::unix::fs::symlink(&fx.dir, models.join(pair)).expect("linking the model folders");
    }
    let src = en.source();
    let ours = translate(&models, "es", "es", &["--arithmetic", arith], &src);
    let want = es.refs(&format!("heldout.pivot.bergamot-{arith}.es"));
    let differ: Vec<usize> = (0..src.len()).filter(|&i| ours[i] != want[i]).collect();
    for &i in &differ {
        eprintln!("line {}:\n  reseam:   {}\n  bergamot: {}", i + 1, ours[i], want[i]);
    }
    assert!(differ.is_empty(), "{} of {} pivoted lines differ from Bergamot ({arith})", differ.len(), src.len());
}

#[test]
#[ignore = "reads ../shared/fixtures/base-memory-enes (not in the repository); .ci/run runs it"]
fn pivot_through_two_real_models_equals_bergamot_exact() {
    pivot("exact");
}

#[test]
#[ignore = "reads ../shared/fixtures/base-memory-enes (not in the repository); .ci/run runs it"]
fn pivot_through_two_real_models_equals_bergamot_saturating() {
    pivot("saturating");
}

#[test]
fn base_exact_equals_bergamot() {
    agreement(&Fixture::base(), Arithmetic::Exact, false);
}

#[test]
fn base_saturating_equals_bergamot() {
    agreement(&Fixture::base(), Arithmetic::Saturating, false);
}

#[test]
fn base_exact_with_shortlist_equals_bergamot() {
    agreement(&Fixture::base(), Arithmetic::Exact, true);
}

#[test]
fn base_saturating_with_shortlist_equals_bergamot() {
    agreement(&Fixture::base(), Arithmetic::Saturating, true);
}
