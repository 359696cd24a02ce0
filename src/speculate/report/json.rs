//! `--json OUT`: the whole report in the stable schema of docs/speculate-json.md.

use std::path::Path;

use super::{Report, ReportError, write_atomic};

pub fn to_string(r: &Report) -> String {
    // Serialising plain data with string keys cannot fail.
    let mut s = serde_json::to_string_pretty(r).unwrap_or_else(|e| format!("{{\"error\": \"{e}\"}}"));
    s.push('\n');
    s
}

pub fn write(r: &Report, path: &Path) -> Result<(), ReportError> {
    write_atomic(path, to_string(r).as_bytes())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::speculate::report::sample::sample;

    #[test]
    fn json_has_the_documented_fields() {
        let v: serde_json::Value = serde_json::from_str(&to_string(sample())).unwrap();
        assert_eq!(v["schema"], "reseam-speculate/1");
        let runs = v["runs"].as_array().unwrap();
        assert!(!runs.is_empty());
        for r in runs {
            for key in [
                "k",
                "strategy",
                "acceptance_rate",
                "tokens_per_pass",
                "speedup",
                "speedup_ci",
                "speedup_verdict",
                "target_alone",
                "drafting_rounds",
                "c",
                "predicted_speedup",
                "prompts",
            ] {
                assert!(r.get(key).is_some(), "run lacks {key}: {r}");
            }
            for p in r["prompts"].as_array().unwrap() {
                for key in ["prompt", "baseline_ids", "output_ids", "text", "speedup"] {
                    assert!(p.get(key).is_some(), "prompt lacks {key}");
                }
            }
        }
        assert!(runs.iter().all(|r| r["speedup_ci"]["low"].as_f64() <= r["speedup_ci"]["high"].as_f64()));
        assert!(v["warnings"].is_array());
        assert!(runs.iter().any(|r| r["k"] == "auto"));
        assert!(runs.iter().any(|r| r["k"] == 2));
    }

    #[test]
    fn writing_is_atomic_and_names_the_file_on_failure() {
        let d = tempfile::tempdir().unwrap();
        let p = d.path().join("r.json");
        write(sample(), &p).unwrap();
        assert!(std::fs::read_to_string(&p).unwrap().contains("\"runs\""));
        #[cfg(unix)]
        {
            use std::os::unix::fs::PermissionsExt;
            let mode = std::fs::metadata(&p).unwrap().permissions().mode() & 0o777;
            assert_eq!(mode, 0o644, "a report is readable like any new file, not private like a temporary one");
        }
        let bad = d.path().join("missing-dir").join("r.json");
        let e = write(sample(), &bad).unwrap_err().to_string();
        assert!(e.contains("missing-dir"), "{e}");
        assert_eq!(std::fs::read_dir(d.path()).unwrap().count(), 1, "no temporary file left behind");
    }
}
