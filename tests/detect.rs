//! Language identification: accuracy per language on people's sentences (tests/data/langid,
//! from lingua-rs's held-out test sentences; see its README), time per text, and `reseam detect`.

use std::collections::BTreeMap;
use std::path::Path;
use std::time::Instant;

use reseam::detect::{Detector, FIREFOX_LANGUAGES};

use crate::common::TestDir;

/// (language, text) for every line of tests/data/langid/<language>.txt.
fn labelled() -> Vec<(String, String)> {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/data/langid");
    let mut out = Vec::new();
    let mut files: Vec<_> = std::fs::read_dir(&dir)
        .unwrap_or_else(|e| panic!("missing test data {}: {e}", dir.display()))
        .filter_map(Result::ok)
        .map(|e| e.path())
        .filter(|p| p.extension().is_some_and(|x| x == "txt"))
        .collect();
    files.sort();
    for path in files {
        let language = path.file_stem().unwrap().to_string_lossy().into_owned();
        for line in std::fs::read_to_string(&path).unwrap().lines().filter(|l| !l.trim().is_empty()) {
            out.push((language.clone(), line.to_string()));
        }
    }
    out
}

/// Texts of 20+ characters and how many were right, the same for shorter ones, and what the
/// wrong answers were.
type Row = (usize, usize, usize, usize, BTreeMap<String, usize>);

/// Detects every labelled text among all of Firefox's languages the models know, prints the
/// table, and holds accuracy to the goal: 95% overall on texts of 20+ characters and 88.5% on
/// shorter ones (what lingua's full models gave). Time per text grows with the number of
/// candidates (each candidate's n-grams are looked up): it is printed for all 51 and for six, and
/// held only to a bound that catches a detector rebuilt or models reread per text, since this
/// machine's load varies.
#[test]
fn accuracy_per_language_on_short_texts() {
    let data = labelled();
    let languages: BTreeMap<&str, ()> = data.iter().map(|(l, _)| (l.as_str(), ())).collect();
    assert!(languages.len() >= 20 && data.len() >= 1000, "{} texts in {} languages", data.len(), languages.len());
    let candidates: Vec<&str> = FIREFOX_LANGUAGES.iter().copied().filter(|t| !["kn", "ml"].contains(t)).collect();
    let detector = Detector::new(&candidates).unwrap();
    detector.detect("warm up: the models are read on the first detection");

    let mut table: BTreeMap<&str, Row> = BTreeMap::new();
    let mut times = Vec::with_capacity(data.len());
    for (language, text) in &data {
        let start = Instant::now();
        let found = detector.detect(text);
        times.push(start.elapsed().as_secs_f64());
        let row = table.entry(language).or_default();
        let right = found.language == *language;
        if text.chars().count() >= 20 {
            row.0 += 1;
            row.1 += right as usize;
        } else {
            row.2 += 1;
            row.3 += right as usize;
        }
        if !right {
            *row.4.entry(found.language).or_default() += 1;
        }
    }
    let per_text = times.iter().sum::<f64>() / data.len() as f64;
    times.sort_by(f64::total_cmp);
    let p99 = times[times.len() * 99 / 100];

    let (mut long, mut long_right, mut short, mut short_right) = (0, 0, 0, 0);
    println!("| language | texts ≥ 20 chars | right | texts < 20 chars | right | taken for |");
    println!("| --- | ---: | ---: | ---: | ---: | --- |");
    for (language, (n, r, sn, sr, confusions)) in &table {
        let taken: Vec<String> = confusions.iter().map(|(l, c)| format!("{l} ×{c}")).collect();
        let pct = |r: usize, n: usize| {
            if n == 0 { "–".to_string() } else { format!("{:.0}%", 100.0 * r as f64 / n as f64) }
        };
        println!("| {language} | {n} | {} | {sn} | {} | {} |", pct(*r, *n), pct(*sr, *sn), taken.join(", "));
        (long, long_right, short, short_right) = (long + n, long_right + r, short + sn, short_right + sr);
    }
    let overall = long_right as f64 / long as f64;
    println!(
        "overall: {:.1}% of {long} texts of 20+ characters, {:.1}% of {short} shorter ones; {:.3} ms per text \
         (p99 {:.3} ms)",
        100.0 * overall,
        100.0 * short_right as f64 / short.max(1) as f64,
        per_text * 1e3,
        p99 * 1e3
    );
    assert!(overall >= 0.95, "{:.1}% right on texts of 20+ characters, below the 95% goal", 100.0 * overall);
    let short_overall = short_right as f64 / short as f64;
    assert!(short_overall >= 0.885, "{:.1}% right on shorter texts, below the 88.5% goal", 100.0 * short_overall);
    let six = Detector::new(&["es", "en", "de", "fr", "it", "pt"]).unwrap();
    let texts: Vec<&str> = data
        .iter()
        .filter(|(l, _)| ["es", "en", "de", "fr", "it", "pt"].contains(&l.as_str()))
        .map(|(_, t)| t.as_str())
        .collect();
    six.detect(texts[0]);
    let start = Instant::now();
    for text in &texts {
        six.detect(text);
    }
    let per_text_six = start.elapsed().as_secs_f64() / texts.len() as f64;
    println!("{:.3} ms per text among 6 candidates", per_text_six * 1e3);
    assert!(per_text < 0.05, "{:.3} ms per text: is the detector rebuilt for each text?", per_text * 1e3);
}

#[test]
fn detect_prints_language_tab_confidence_per_line() {
    let t = TestDir::new();
    let mut c = t.cmd();
    c.args(["detect", "--languages", "es,en,de"]);
    let out = t.run(
        c,
        "¿Dónde está la estación?\nWhere is the station?\n\nhttps://x.org/a 😀\nWo ist der Bahnhof?".as_bytes(),
    );
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    let stdout = String::from_utf8(out.stdout).unwrap();
    let rows: Vec<(&str, f64)> = stdout
        .lines()
        .map(|l| {
            let (lang, conf) = l.split_once('\t').expect("language<TAB>confidence");
            (lang, conf.parse().expect("a number"))
        })
        .collect();
    let langs: Vec<&str> = rows.iter().map(|r| r.0).collect();
    assert_eq!(langs, ["es", "en", "und", "und", "de"]);
    assert!(rows.iter().all(|&(l, c)| (l == "und") == (c == 0.0) && (0.0..=1.0).contains(&c)), "{stdout}");

    // -z: a record may hold line breaks.
    let mut c = t.cmd();
    c.args(["detect", "-z", "--languages", "es,en"]);
    let out = t.run(c, "Hola, amigos.\nHasta luego.\0Good morning, friends.\nSee you.\0".as_bytes());
    assert_eq!(String::from_utf8(out.stdout).unwrap().lines().map(|l| &l[..2]).collect::<Vec<_>>(), ["es", "en"]);
}

#[test]
fn detect_names_a_bad_candidate() {
    let t = TestDir::new();
    let mut c = t.cmd();
    c.args(["detect", "--languages", "es,tlh"]);
    let out = t.run(c, b"hola\n");
    assert_eq!(out.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&out.stderr).contains("tlh"), "{}", String::from_utf8_lossy(&out.stderr));
}

/// Without a models folder (none installed), every Firefox language the models know is a candidate.
#[test]
fn detect_defaults_to_firefox_languages_without_models() {
    let t = TestDir::new();
    let mut c = t.cmd();
    c.arg("detect");
    let out = t.run(
        c,
        "Dobro jutro, kako ste danas? Nadam se da je sve u redu.\nДобрий ранок, як справи у вас сьогодні?\n".as_bytes(),
    );
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    let stdout = String::from_utf8(out.stdout).unwrap();
    let langs: Vec<&str> = stdout.lines().map(|l| l.split('\t').next().unwrap()).collect();
    assert!(["hr", "bs", "sr"].contains(&langs[0]), "{stdout}");
    assert_eq!(langs[1], "uk", "{stdout}");
}
