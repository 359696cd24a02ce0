//! `reseam bench-gemm`: JSON lines with the promised fields, the kernel per arithmetic in
//! `--help`, clear refusals.

use crate::common::TestDir;

fn bench(t: &TestDir, args: &[&str]) -> std::process::Output {
    let mut c = t.cmd();
    c.arg("bench-gemm").args(args);
    t.run(c, b"")
}

#[test]
fn json_lines_carry_shape_kernel_and_peak() {
    let t = TestDir::new();
    let out =
        bench(&t, &["--json", "--m", "1,3", "--dims", "256", "--shape", "attn-out,ffn-up", "--min-time", "0.002"]);
    assert!(out.status.success(), "{out:?}");
    let text = String::from_utf8(out.stdout).unwrap();
    let rows: Vec<serde_json::Value> =
        text.lines().map(|l| serde_json::from_str(l).expect("a JSON object per line")).collect();
    // Two arithmetics × two shapes × two row counts.
    assert_eq!(rows.len(), 8, "{text}");
    for r in &rows {
        for field in [
            "isa",
            "kernel",
            "arithmetic",
            "m",
            "n",
            "k",
            "gmacs",
            "macs_per_cycle",
            "peak_macs_per_cycle",
            "peak_fraction",
        ] {
            assert!(r.get(field).is_some(), "{field} missing in {r}");
        }
        assert_eq!(r["k"], 256);
        assert!(r["n"] == 256 || r["n"] == 1536, "{r}");
        assert!(r["macs_per_cycle"].as_f64().unwrap() > 0.0, "{r}");
        // Every fast kernel has a measured peak; only the reference has none.
        if r["kernel"] != "reference" {
            assert!(r["peak_fraction"].as_f64().unwrap() > 0.0, "{r}");
        }
    }
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(stderr.contains("cycles: "), "{stderr}");
}

#[test]
fn llm_shapes_replace_the_translation_widths() {
    let t = TestDir::new();
    let out = bench(&t, &["--json", "--llm", "test", "--arithmetic", "exact", "--m", "2", "--min-time", "0.002"]);
    assert!(out.status.success(), "{out:?}");
    let text = String::from_utf8(out.stdout).unwrap();
    let rows: Vec<serde_json::Value> = text.lines().map(|l| serde_json::from_str(l).unwrap()).collect();
    let got: Vec<(String, u64, u64)> = rows
        .iter()
        .map(|r| (r["shape"].as_str().unwrap().to_string(), r["k"].as_u64().unwrap(), r["n"].as_u64().unwrap()))
        .collect();
    // The test shape: hidden 256, 4 query heads and 2 KV heads of 64, intermediate 768.
    let want = [("llm-qkv", 256, 512), ("llm-o", 256, 256), ("llm-gate-up", 256, 1536), ("llm-down", 768, 256)];
    assert_eq!(got, want.map(|(s, k, n)| (s.to_string(), k, n)), "{text}");
    // `bench llm --shape` names a model through RESEAM_BENCH_SHAPE; bench-gemm's product
    // filter has its own variable, so one exported for the other breaks neither.
    let mut c = t.cmd();
    c.env("RESEAM_BENCH_SHAPE", "llama-3.2-1b").env("RESEAM_BENCH_GEMM_SHAPE", "llm-o");
    c.args(["bench-gemm", "--json", "--llm", "test", "--arithmetic", "exact", "--m", "1", "--min-time", "0.002"]);
    let out = t.run(c, b"");
    assert!(out.status.success(), "{out:?}");
    let text = String::from_utf8(out.stdout).unwrap();
    assert!(text.lines().count() == 1 && text.contains("\"llm-o\""), "{text}");
    let bad = bench(&t, &["--llm", "gpt-5", "--min-time", "0.002"]);
    assert!(!bad.status.success());
    assert!(String::from_utf8_lossy(&bad.stderr).contains("llama-3.2-1b"), "{bad:?}");
}

#[test]
fn forced_reference_is_measured_without_a_peak() {
    let t = TestDir::new();
    let out = bench(
        &t,
        &[
            "--isa",
            "reference",
            "--arithmetic",
            "saturating",
            "--m",
            "1",
            "--dims",
            "256",
            "--shape",
            "attn-out",
            "--min-time",
            "0.002",
        ],
    );
    assert!(out.status.success(), "{out:?}");
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(text.contains("reference, saturating arithmetic: reference kernel (no product instruction"), "{text}");
    assert!(text.lines().any(|l| l.starts_with("reference ") && l.contains("attn-out/256")), "{text}");
}

#[test]
fn help_says_which_kernel_serves_which_arithmetic() {
    let t = TestDir::new();
    let out = bench(&t, &["--help"]);
    assert!(out.status.success(), "{out:?}");
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(text.contains("exact arithmetic: ") && text.contains("saturating arithmetic: "), "{text}");
}

#[test]
fn an_isa_the_cpu_lacks_is_refused() {
    let t = TestDir::new();
    let other = if cfg!(target_arch = "aarch64") { "avx2" } else { "neon" };
    let out = bench(&t, &["--isa", other, "--m", "1"]);
    assert_eq!(out.status.code(), Some(1), "{out:?}");
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(err.contains(&format!("cannot use the {other} kernels")), "{err}");

    let out = bench(&t, &["--isa", "sse9"]);
    assert_eq!(out.status.code(), Some(2), "{out:?}");
    let out = bench(&t, &["--m", "0"]);
    assert_eq!(out.status.code(), Some(2), "{out:?}");
}
