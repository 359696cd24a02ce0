//! Helpers shared by the integration tests: a temp dir with XDG variables pointing into it and
//! a command running the built binary.

#![allow(dead_code)]

use std::path::{Path, PathBuf};
use std::process::{Command, Output, Stdio};

use reseam::marian::layers::attention::Mkl;

/// The repository's own test fixtures (copied from the fixture sets; see tests/fixtures/README.md).
///
/// Also makes MKL's Intel orders this test process's, as [`TestDir::cmd`] makes them the
/// processes it starts: the references were made on Intel Xeons, and a test that compares the
/// library with the command line must not compare Zen orders (this process's own on an AMD CPU)
/// with Intel ones at a near-tie. A test of the AMD references forces Zen on its thread.
pub fn fixtures() -> PathBuf {
    static INTEL: std::sync::Once = std::sync::Once::new();
    INTEL.call_once(|| Mkl::set_process(Mkl::Intel));
    Path::new(env!("CARGO_MANIFEST_DIR")).join("tests").join("fixtures")
}

/// A fresh directory per test, and the environment a user would have.
pub struct TestDir {
    pub dir: tempfile::TempDir,
}

impl TestDir {
    pub fn new() -> TestDir {
        TestDir { dir: tempfile::tempdir().expect("temp dir") }
    }

    pub fn path(&self) -> &Path {
        self.dir.path()
    }

    /// `reseam` with XDG dirs inside the test dir and no inherited reseam settings.
    pub fn cmd(&self) -> Command {
        let mut c = Command::new(env!("CARGO_BIN_EXE_reseam"));
        for (k, _) in std::env::vars() {
            if k.starts_with("RESEAM_") && k != "RESEAM_MT_ISA" && k != "RESEAM_MT_ARITHMETIC" || k == "MODELS_DIR" {
                c.env_remove(k);
            }
        }
        c.env("XDG_DATA_HOME", self.path().join("data"))
            .env("XDG_CACHE_HOME", self.path().join("cache"))
            .env("XDG_CONFIG_HOME", self.path().join("config"))
            // Packs of the repository's fixtures go here, not next to them.
            .env("RESEAM_PACK_DIR", self.path().join("packs"))
            // The repository's Bergamot references were made on Intel Xeons: MKL's Intel orders,
            // whatever CPU runs the tests (a test of the AMD references sets zen).
            .env("RESEAM_MT_MKL", "intel")
            .current_dir(self.path());
        c
    }

    /// Runs with `stdin` as input and returns the output.
    pub fn run(&self, mut cmd: Command, stdin: &[u8]) -> Output {
        use std::io::Write;
        cmd.stdin(Stdio::piped()).stdout(Stdio::piped()).stderr(Stdio::piped());
        let mut child = cmd.spawn().expect("spawn reseam");
        let mut input = child.stdin.take().expect("stdin");
        let data = stdin.to_vec();
        let writer = std::thread::spawn(move || {
            let _ = input.write_all(&data);
        });
        let out = child.wait_with_output().expect("wait reseam");
        writer.join().expect("stdin writer");
        out
    }
}

/// The number in a `RESEAM_MT_PROFILE` report (`report`, the command's stderr) right after the
/// first `label` and up to `end`; panics with the report when there is none.
pub fn profile_number(report: &str, label: &str, end: char) -> u64 {
    report
        .split(label)
        .nth(1)
        .and_then(|t| t.split(end).next())
        .and_then(|n| n.trim().parse().ok())
        .unwrap_or_else(|| panic!("no number after '{label}' in the profile: {report}"))
}
