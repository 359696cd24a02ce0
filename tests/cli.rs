//! The command line itself: help, version, exit codes, packaging output.

use crate::common::TestDir;

#[test]
fn help_lists_subcommands_and_exits_zero() {
    let t = TestDir::new();
    let out = t.run(
        {
            let mut c = t.cmd();
            c.arg("--help");
            c
        },
        b"",
    );
    assert!(out.status.success(), "{out:?}");
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(text.contains("Usage: reseam"), "{text}");
    assert!(!text.contains("generate"), "hidden packaging command must not be listed: {text}");
}

#[test]
fn unknown_flag_is_a_usage_error() {
    let t = TestDir::new();
    let out = t.run(
        {
            let mut c = t.cmd();
            c.arg("--no-such-flag");
            c
        },
        b"",
    );
    assert_eq!(out.status.code(), Some(2), "{out:?}");
}

#[test]
fn version_verbose_names_the_kernel() {
    let t = TestDir::new();
    let out = t.run(
        {
            let mut c = t.cmd();
            c.args(["--version", "--verbose"]);
            c
        },
        b"",
    );
    assert!(out.status.success(), "{out:?}");
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(text.starts_with("reseam "), "{text}");
    assert!(text.contains("kernel in use: "), "{text}");
}

#[test]
fn reseam_verbose_takes_the_usual_forms_of_true_and_false() {
    let t = TestDir::new();
    for (value, verbose) in [("1", true), ("yes", true), ("true", true), ("on", true), ("0", false), ("false", false)] {
        let out = t.run(
            {
                let mut c = t.cmd();
                c.arg("--version").env("RESEAM_VERBOSE", value);
                c
            },
            b"",
        );
        assert!(out.status.success(), "RESEAM_VERBOSE={value}: {out:?}");
        let text = String::from_utf8_lossy(&out.stdout);
        assert_eq!(text.contains("kernel in use: "), verbose, "RESEAM_VERBOSE={value}: {text}");
    }
}

#[test]
fn forcing_an_unknown_isa_fails_clearly() {
    let t = TestDir::new();
    let out = t.run(
        {
            let mut c = t.cmd();
            c.args(["--version", "--verbose"]).env("RESEAM_MT_ISA", "sse9");
            c
        },
        b"",
    );
    assert_eq!(out.status.code(), Some(1), "{out:?}");
    assert!(String::from_utf8_lossy(&out.stderr).contains("RESEAM_MT_ISA"), "{out:?}");
}

#[test]
fn generated_man_pages_and_completions_are_written() {
    let t = TestDir::new();
    for what in ["man", "completions"] {
        let out = t.run(
            {
                let mut c = t.cmd();
                c.args(["generate", what, "out"]);
                c
            },
            b"",
        );
        assert!(out.status.success(), "{out:?}");
    }
    assert!(t.path().join("out/reseam.1").exists());
    assert!(t.path().join("out/reseam.bash").exists());
}

#[test]
fn forcing_an_isa_names_it_or_refuses_it_clearly() {
    let t = TestDir::new();
    let run = |isa: &str| {
        let mut c = t.cmd();
        c.args(["--version", "--verbose"]).env("RESEAM_MT_ISA", isa);
        t.run(c, b"")
    };
    let out = run("reference");
    assert!(out.status.success(), "{out:?}");
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(text.contains("kernel in use: reference (forced by RESEAM_MT_ISA)"), "{text}");

    let lacking = if cfg!(target_arch = "aarch64") { "avx2" } else { "neon" };
    let out = run(lacking);
    assert_eq!(out.status.code(), Some(1), "{out:?}");
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(err.contains(&format!("cannot use the {lacking} kernels")) && err.contains("unset RESEAM_MT_ISA"), "{err}");
}

/// A usage error raised deep in the library (the model loader, under the registry and the
/// translator) exits 2 whatever wraps it; a failure's cause chain is printed whole, on one line.
#[test]
fn whose_fault_is_decided_where_the_error_arises_and_causes_are_kept() {
    let t = TestDir::new();
    let mut c = t.cmd();
    let models = crate::common::fixtures().join("tiny-esen");
    c.args(["translate", "--offline", "--model", "no-such-model.bin", "--models"]).arg(&models).args(["es", "en"]);
    let out = t.run(c, b"Hola\n");
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(2), "a model file that is not there is the caller's to fix: {err}");
    assert!(err.contains("no-such-model.bin"), "{err}");

    // serve on a port another socket holds: its own error, then the system's reason after it.
    let held = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let port = held.local_addr().unwrap().port().to_string();
    let mut c = t.cmd();
    c.args(["serve", "--host", "127.0.0.1", "--port", &port, "--models"]).arg(t.path());
    let out = t.run(c, b"");
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(2), "a port in use is the operator's to fix: {err}");
    let line = err.lines().find(|l| l.starts_with("reseam: ")).unwrap_or_else(|| panic!("no error line: {err}"));
    assert!(line.contains(&format!("cannot listen on 127.0.0.1:{port}: ")), "{err}");
    assert!(line.to_lowercase().contains("in use"), "the cause is not on the line: {err}");
}
