//! Firefox's larger architectures against Bergamot: base-memory (dim 384, head size 48, four SSRU
//! decoder layers, split vocabularies) on `../shared/fixtures/base-memory-enes`, base (dim 512,
//! head size 64) on `tests/fixtures/base-enes`, and a pivot through two real models.
//!
//! With MKL's Zen orders (`RESEAM_MT_MKL=zen`) reseam equals base-memory-enes's own references
//! (made on an AMD EPYC Zen 4) on every line, and tiny-esen's and base-enes's references made
//! under the Zen shim (`tests/fixtures/zen-refs`); with the Intel orders, the Xeon references.
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

use reseam::marian::layers::attention::Mkl;
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
    /// The MKL orders of the CPU the references were made on.
    mkl: Mkl,
}

impl Fixture {
    /// A fixture folder, or a failure naming it.
    fn at(name: &'static str, dir: PathBuf, from: &'static str, to: &'static str) -> Fixture {
        assert!(
            dir.join("README.md").is_file(),
            "fixture {name} is missing: expected it at {} (see issue 30 and .ci/run)",
            dir.display()
        );
        Fixture { name, refs: dir.join("refs"), dir, from, to, mkl: Mkl::Intel }
    }

    /// base-memory-enes with the references Bergamot gives on an Intel Xeon.
    fn base_memory() -> Fixture {
        let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("../shared/fixtures/base-memory-enes");
        Fixture {
            refs: fixtures().join("base-memory-enes-xeon/refs"),
            ..Fixture::at("base-memory-enes", dir, "en", "es")
        }
    }

    /// base-memory-enes with its own references, made on an AMD EPYC Zen 4.
    fn base_memory_amd() -> Fixture {
        let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("../shared/fixtures/base-memory-enes");
        Fixture { mkl: Mkl::Zen, ..Fixture::at("base-memory-enes", dir, "en", "es") }
    }

    fn base() -> Fixture {
        Fixture::at("base-enes", fixtures().join("base-enes"), "en", "es")
    }

    fn tiny() -> Fixture {
        Fixture::at("tiny-esen", fixtures().join("tiny-esen"), "es", "en")
    }

    /// A fixture with Bergamot's references made on this Xeon with MKL told it runs on a Zen CPU
    /// (`tests/fixtures/zen-refs`, named `<fixture>.heldout.bergamot-*`).
    fn zen(fx: Fixture) -> Fixture {
        Fixture { mkl: Mkl::Zen, refs: fixtures().join("zen-refs"), ..fx }
    }

    /// Lines of a reference file, from the references' folder.
    fn refs(&self, name: &str) -> Vec<String> {
        let file = if self.refs.ends_with("zen-refs") { format!("{}.{name}", self.name) } else { name.to_string() };
        read_lines(self.name, &self.refs.join(file))
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
    if let Some(mkl) = args.iter().position(|a| *a == "--mkl").and_then(|i| args.get(i + 1)) {
        c.env("RESEAM_MT_MKL", mkl);
    }
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
    let mut args = vec!["--arithmetic", a, "--mkl", fx.mkl.name()];
    if shortlist {
        args.push("--shortlist");
    }
    let ours = translate(&fx.dir, fx.from, fx.to, &args, &src);
    let files = find(&fx.dir, fx.from, fx.to, None).expect("fixture model folder");
    let model = Model::load(&files, shortlist).expect("fixture model");
    let mut far = Vec::new();
    let differ: Vec<usize> = (0..src.len()).filter(|&i| ours[i] != want[i]).collect();
    for &i in &differ {
        let why = fx.mkl.forced(|| parting(&model, arith, &src[i], &want[i]));
        eprintln!("{} line {} ({reference}): {why}\n  reseam:   {}\n  bergamot: {}", fx.name, i + 1, ours[i], want[i]);
        if !matches!(why, Parting::At { margin: Some(m), .. } if m.abs() < NEAR_TIE) {
            far.push(format!("line {}: {why}", i + 1));
        }
    }
    let equal = src.len() - differ.len();
    eprintln!("{} {reference} ({:?} orders): {equal}/{} lines equal Bergamot", fx.name, fx.mkl, src.len());
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

/// The AMD references themselves: with MKL's Zen orders reseam equals them on every line.
fn all_equal(fx: &Fixture, arith: Arithmetic, shortlist: bool) {
    let a = if arith == Arithmetic::Exact { "exact" } else { "saturating" };
    let reference = format!("heldout.bergamot-{a}{}.{}", if shortlist { ".shortlist" } else { "" }, fx.to);
    let (src, want) = (fx.source(), fx.refs(&reference));
    let mut args = vec!["--arithmetic", a, "--mkl", fx.mkl.name()];
    if shortlist {
        args.push("--shortlist");
    }
    let ours = translate(&fx.dir, fx.from, fx.to, &args, &src);
    let differ: Vec<usize> = (0..src.len()).filter(|&i| ours[i] != want[i]).collect();
    for &i in &differ {
        eprintln!("{} line {} ({reference}):\n  reseam:   {}\n  bergamot: {}", fx.name, i + 1, ours[i], want[i]);
    }
    eprintln!(
        "{} {reference} ({:?} orders): {}/{} lines equal Bergamot",
        fx.name,
        fx.mkl,
        src.len() - differ.len(),
        src.len()
    );
    assert!(
        differ.is_empty(),
        "{}: {} of {} lines differ from {reference} ({:?} orders)",
        fx.name,
        differ.len(),
        src.len(),
        fx.mkl
    );
}

#[test]
#[ignore = "reads ../shared/fixtures/base-memory-enes (not in the repository); .ci/run runs it"]
fn base_memory_zen_orders_equal_the_amd_references_exact() {
    all_equal(&Fixture::base_memory_amd(), Arithmetic::Exact, false);
}

#[test]
#[ignore = "reads ../shared/fixtures/base-memory-enes (not in the repository); .ci/run runs it"]
fn base_memory_zen_orders_equal_the_amd_references_saturating() {
    all_equal(&Fixture::base_memory_amd(), Arithmetic::Saturating, false);
}

#[test]
#[ignore = "reads ../shared/fixtures/base-memory-enes (not in the repository); .ci/run runs it"]
fn base_memory_zen_orders_equal_the_amd_references_exact_with_shortlist() {
    all_equal(&Fixture::base_memory_amd(), Arithmetic::Exact, true);
}

#[test]
fn tiny_zen_orders_equal_bergamot_under_the_zen_shim() {
    let fx = Fixture::zen(Fixture::tiny());
    all_equal(&fx, Arithmetic::Exact, false);
    all_equal(&fx, Arithmetic::Saturating, false);
    all_equal(&fx, Arithmetic::Exact, true);
}

#[test]
fn base_zen_orders_equal_bergamot_under_the_zen_shim() {
    let fx = Fixture::zen(Fixture::base());
    all_equal(&fx, Arithmetic::Exact, false);
    all_equal(&fx, Arithmetic::Saturating, false);
    all_equal(&fx, Arithmetic::Exact, true);
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
