//! Whole posts through `reseam translate`: `--jsonl` and `-z` records (line breaks and all),
//! and `auto`, which identifies each post's language first.

use std::path::PathBuf;
use std::process::Output;

use reseam::translate::{ArithmeticChoice, TranslateOptions, Translator};

use crate::common::{TestDir, profile_number};
use crate::engine::esen;

/// The fixture's posts that hold line breaks.
fn posts_with_breaks() -> Vec<String> {
    let text = std::fs::read_to_string(esen().join("refs/social.es.jsonl")).unwrap();
    let posts: Vec<String> = text
        .lines()
        .map(|l| serde_json::from_str::<serde_json::Value>(l).unwrap()["text"].as_str().unwrap().to_string())
        .filter(|p| p.contains('\n'))
        .take(40)
        .collect();
    assert!(posts.len() >= 10, "the fixture has only {} posts with line breaks", posts.len());
    posts
}

fn library(posts: &[String]) -> Vec<String> {
    let mut opts = TranslateOptions::new(esen(), "es", "en");
    opts.arithmetic = ArithmeticChoice::Exact;
    let refs: Vec<&str> = posts.iter().map(String::as_str).collect();
    Translator::load(&opts).unwrap().translate_posts(&refs).unwrap()
}

fn translate(t: &TestDir, models: &std::path::Path, args: &[&str], stdin: &[u8]) -> Output {
    let mut c = t.cmd();
    c.args(["translate", "--offline", "--arithmetic", "exact", "--models"]).arg(models).args(args);
    t.run(c, stdin)
}

fn ok(out: &Output) -> String {
    assert!(out.status.success(), "reseam failed: {}", String::from_utf8_lossy(&out.stderr));
    String::from_utf8(out.stdout.clone()).expect("UTF-8 output")
}

#[test]
fn a_post_with_line_breaks_is_one_record_through_jsonl_and_null_data() {
    let posts = posts_with_breaks();
    let want = library(&posts);
    let t = TestDir::new();

    let jsonl: String = posts
        .iter()
        .enumerate()
        .map(|(i, p)| format!("{}\n", serde_json::json!({ "id": i, "text": p, "extra": {"kept": true} })))
        .collect();
    let out = ok(&translate(&t, &esen(), &["--jsonl", "es", "en"], jsonl.as_bytes()));
    let records: Vec<serde_json::Value> = out.lines().map(|l| serde_json::from_str(l).expect("JSON output")).collect();
    assert_eq!(records.len(), posts.len());
    for (i, r) in records.iter().enumerate() {
        assert_eq!(r["id"], i, "ids in order");
        assert_eq!(r["text"], posts[i].as_str());
        assert_eq!(r["extra"]["kept"], true);
        assert_eq!(r["translation"], want[i].as_str(), "record {i}");
    }

    let nul: Vec<u8> = posts.iter().flat_map(|p| p.bytes().chain([0])).collect();
    let out = ok(&translate(&t, &esen(), &["-z", "es", "en"], &nul));
    let got: Vec<&str> = out.strip_suffix('\0').expect("NUL-terminated").split('\0').collect();
    assert_eq!(got, want);
}

#[test]
fn a_bad_jsonl_record_gets_an_error_and_the_run_goes_on() {
    let t = TestDir::new();
    let input = "{\"text\": \"Hola.\"}\nnot json\n{\"id\": 2}\n\n{\"text\": \"Adiós.\", \"to\": \"de\"}\n{\"text\": \"Buenos días.\"}\n";
    let out = ok(&translate(&t, &esen(), &["--jsonl", "es", "en"], input.as_bytes()));
    let lines: Vec<&str> = out.lines().collect();
    assert_eq!(lines.len(), 6, "{out}");
    let json = |i: usize| serde_json::from_str::<serde_json::Value>(lines[i]).unwrap();
    assert!(json(0)["translation"].is_string());
    assert_eq!(json(1)["input"], "not json");
    assert!(json(1)["error"].as_str().unwrap().contains("not a JSON object"));
    assert_eq!(json(2)["error"], "no `text` field");
    assert_eq!(lines[3], "");
    let no_model = json(4)["error"].as_str().unwrap().to_string();
    assert!(no_model.contains("es→de"), "{no_model}");
    assert!(json(5)["translation"].is_string());
}

/// A models folder holding the fixture as `es-en`, as `reseam fetch es-en` would leave it.
fn models_with_es_en(t: &TestDir) -> PathBuf {
    let models = t.path().join("models");
    std::fs::create_dir_all(&models).unwrap();
    std::os::unix::fs::symlink(esen(), models.join("es-en")).unwrap();
    models
}

#[test]
fn auto_identifies_each_line_among_the_installed_languages() {
    let t = TestDir::new();
    let models = models_with_es_en(&t);
    let spanish = "¿Dónde está la estación de tren más cercana?";
    let english = "Where is the nearest train station, please?";
    let nothing = "https://example.com/a 😀 12:30";
    let input = format!("{spanish}\n{english}\n{nothing}\n\n");
    let out = ok(&translate(&t, &models, &["auto", "en"], input.as_bytes()));
    let want = library(&[spanish.to_string()]);
    assert_eq!(out, format!("{}\n{english}\n{nothing}\n\n", want[0]));

    // The same through JSON Lines, with what was detected.
    let input = format!("{}\n{}\n", serde_json::json!({ "text": spanish }), serde_json::json!({ "text": nothing }));
    let out = ok(&translate(&t, &models, &["--jsonl", "auto", "en"], input.as_bytes()));
    let r: Vec<serde_json::Value> = out.lines().map(|l| serde_json::from_str(l).unwrap()).collect();
    assert_eq!(r[0]["translation"], want[0].as_str());
    assert_eq!(r[0]["detected"]["language"], "es");
    assert!(r[0]["detected"]["confidence"].as_f64().unwrap() > 0.5);
    assert_eq!(r[1]["translation"], nothing);
    assert_eq!(r[1]["detected"]["language"], "und");
}

#[test]
fn auto_names_a_detected_language_without_a_model() {
    let t = TestDir::new();
    let models = models_with_es_en(&t);
    let input = "Hola, ¿qué tal?\nGuten Morgen, wie geht es Ihnen heute?\n";
    let out = translate(&t, &models, &["--languages", "es,en,de", "auto", "en"], input.as_bytes());
    // A language without a model is the caller's to fix (exit 2), as an unknown pair is.
    assert_eq!(out.status.code(), Some(2));
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(stderr.contains("input record 2") && stderr.contains("`de`") && stderr.contains("de→en"), "{stderr}");

    let jsonl = "{\"text\": \"Guten Morgen, wie geht es Ihnen heute?\"}\n{\"text\": \"Hola.\"}\n";
    let out = ok(&translate(&t, &models, &["--languages", "es,en,de", "--jsonl", "auto", "en"], jsonl.as_bytes()));
    let r: Vec<serde_json::Value> = out.lines().map(|l| serde_json::from_str(l).unwrap()).collect();
    assert!(r[0]["error"].as_str().unwrap().contains("`de`"), "{out}");
    assert!(r[1]["translation"].is_string());
}

/// Text inside tags translates exactly as the same text without them, when no inline tag cuts
/// a sentence; markup, links, mentions and hashtags come back byte for byte.
#[test]
fn html_text_translates_as_plain_text_and_markup_is_kept() {
    let text = std::fs::read_to_string(esen().join("refs/social.es.jsonl")).unwrap();
    let posts: Vec<String> = text
        .lines()
        .map(|l| serde_json::from_str::<serde_json::Value>(l).unwrap()["text"].as_str().unwrap().to_string())
        .filter(|p| !p.contains(['\n', '\r', '<', '>', '&']))
        .take(20)
        .collect();
    let want = library(&posts);
    let input: String = posts.iter().map(|p| format!("<p class=\"x\">{p}</p><p><br></p>\n")).collect();
    let t = TestDir::new();
    let out = ok(&translate(&t, &esen(), &["--html", "es", "en"], input.as_bytes()));
    let expected: String = want
        .iter()
        .map(|w| {
            format!(
                "<p class=\"x\">{}</p><p><br></p>\n",
                w.replace('&', "&amp;").replace('<', "&lt;").replace('>', "&gt;")
            )
        })
        .collect();
    assert_eq!(out, expected);

    let mastodon = r#"<p><span class="h-card" translate="no"><a href="https://x.social/@ana" class="u-url mention">@<span>ana</span></a></span> mira <a href="https://example.com/a?b=1&amp;c=2" rel="nofollow noopener" target="_blank"><span class="invisible">https://</span><span class="">example.com/a?b=1&amp;c=2</span></a> <a href="https://x.social/tags/UE" class="mention hashtag" rel="tag">#<span>UE</span></a></p><pre>no traducir</pre>"#;
    let out = ok(&translate(&t, &esen(), &["--html", "es", "en"], format!("{mastodon}\n").as_bytes()));
    for kept in [
        r#"<p><span class="h-card" translate="no"><a href="https://x.social/@ana" class="u-url mention">@<span>ana</span></a></span> "#,
        r#"<a href="https://example.com/a?b=1&amp;c=2" rel="nofollow noopener" target="_blank"><span class="invisible">https://</span><span class="">example.com/a?b=1&amp;c=2</span></a> <a href="https://x.social/tags/UE" class="mention hashtag" rel="tag">#<span>UE</span></a></p><pre>no traducir</pre>"#,
    ] {
        assert!(out.contains(kept), "{kept:?} not kept in {out:?}");
    }
    assert!(!out.contains(" mira "), "the text was not translated: {out}");
}

/// A models folder with es-en and, made of the same fixture files under other names, fr-en and
/// de-en: three pairs whose posts `auto` must tell apart.
fn models_with_three_pairs(t: &TestDir) -> PathBuf {
    let models = models_with_es_en(t);
    for pair in ["fr-en", "de-en"] {
        let dir = models.join(pair);
        std::fs::create_dir_all(&dir).unwrap();
        let code = pair.replace('-', "");
        for (file, named) in [
            ("model.esen.intgemm.alphas.bin", format!("model.{code}.intgemm.alphas.bin")),
            ("vocab.esen.spm", format!("vocab.{code}.spm")),
            ("lex.50.50.esen.s2t.bin", format!("lex.50.50.{code}.s2t.bin")),
        ] {
            std::os::unix::fs::symlink(esen().join(file), dir.join(named)).unwrap();
        }
    }
    models
}

/// `translate auto en` over posts in three languages starts one engine (the profile's count),
/// and each post comes out as translating its language's posts alone does.
#[test]
fn auto_over_several_languages_runs_one_engine_and_equals_each_language_alone() {
    let t = TestDir::new();
    let models = models_with_three_pairs(&t);
    let packs = t.path().join("packs");
    let posts: [(&str, &str); 9] = [
        ("es", "¿Dónde está la estación de tren más cercana, por favor?"),
        ("fr", "Bonjour à tous, nous allons au marché demain matin avec les enfants."),
        ("de", "Wir haben heute Abend keine Zeit, weil wir mit den Kindern ins Kino gehen."),
        ("es", "Mañana vamos a la playa con mis amigos y mi familia."),
        ("en", "Where is the nearest train station, please?"),
        ("de", "Das Wetter ist heute sehr schön, deshalb gehen wir im Park spazieren."),
        ("fr", "Je ne sais pas pourquoi il est parti si tôt hier soir sans rien dire."),
        ("es", "El gobierno anunció nuevas medidas para proteger el medio ambiente."),
        ("fr", "La bibliothèque de notre quartier est fermée pendant les vacances d'été."),
    ];
    let run = |from: &str, lines: &[&str]| {
        let mut c = t.cmd();
        c.args(["translate", "--offline", "--arithmetic", "exact", "--threads", "2", "--pack-dir"])
            .arg(&packs)
            .arg("--models")
            .arg(&models)
            .args([from, "en"])
            .env("RESEAM_MT_PROFILE", "1");
        let out = t.run(c, lines.iter().map(|l| format!("{l}\n")).collect::<String>().as_bytes());
        let stderr = String::from_utf8_lossy(&out.stderr).into_owned();
        (ok(&out), stderr)
    };
    let all: Vec<&str> = posts.iter().map(|(_, p)| *p).collect();
    let (out, stderr) = run("auto", &all);
    assert!(stderr.contains("engines started: 1, compute threads: 2"), "{stderr}");
    // The bytes the decoder read: a model step's weights, counted for its rows.
    let rows = profile_number(&stderr, " a row (", ' ');
    assert!(rows >= posts.len() as u64, "{stderr}");
    let got: Vec<&str> = out.lines().collect();
    assert_eq!(got.len(), posts.len(), "{out}");
    for lang in ["es", "fr", "de"] {
        let mine: Vec<usize> = (0..posts.len()).filter(|&i| posts[i].0 == lang).collect();
        let alone: Vec<&str> = mine.iter().map(|&i| posts[i].1).collect();
        let (want, stderr) = run(lang, &alone);
        assert!(stderr.contains("engines started: 1,"), "{stderr}");
        let want: Vec<&str> = want.lines().collect();
        for (k, &i) in mine.iter().enumerate() {
            assert_eq!(got[i], want[k], "post {i} ({lang})");
            assert_ne!(got[i], posts[i].1, "post {i} ({lang}) was translated");
        }
    }
    assert_eq!(got[4], posts[4].1, "English stays as it is");
}
