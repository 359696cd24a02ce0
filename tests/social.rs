//! The fixture's 200 social posts through `reseam translate`, each post's lines fed as lines:
//! links, line breaks, spacing, emoji and hashtags survive, and the output is exactly what the
//! library call `serve` makes on whole posts.

use reseam::text::check;
use reseam::translate::{TranslateOptions, Translator};

use crate::common::TestDir;
use crate::engine::esen;

fn posts() -> Vec<String> {
    let text = std::fs::read_to_string(esen().join("refs/social.es.jsonl")).unwrap();
    text.lines()
        .map(|l| serde_json::from_str::<serde_json::Value>(l).unwrap()["text"].as_str().unwrap().to_string())
        .collect()
}

#[test]
fn posts_fed_as_lines_keep_their_shape_and_equal_whole_posts() {
    let posts = posts();
    assert_eq!(posts.len(), 200);
    // Every post's lines, one after the other: a `\r` before a `\n` stays in the line, as a shell
    // user's CRLF file would give it.
    let input: String = posts.iter().map(|p| format!("{p}\n")).collect();
    let t = TestDir::new();
    let mut c = t.cmd();
    c.args(["translate", "--arithmetic", "exact", "--models"]).arg(esen()).args(["es", "en"]);
    let out = t.run(c, input.as_bytes());
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    let stdout = String::from_utf8(out.stdout).expect("UTF-8 output");
    assert_eq!(stdout.matches('\n').count(), input.matches('\n').count(), "one output line per input line");

    let mut opts = TranslateOptions::new(esen(), "es", "en");
    opts.arithmetic = reseam::translate::ArithmeticChoice::Exact;
    let engine = Translator::load(&opts).unwrap();
    let refs: Vec<&str> = posts.iter().map(String::as_str).collect();
    let whole = engine.translate_posts(&refs).unwrap();

    // Cut the output back into posts by counting each post's line breaks.
    let mut rest = stdout.as_str();
    for (n, (post, want)) in posts.iter().zip(&whole).enumerate() {
        let breaks = post.matches('\n').count() + 1;
        let mut end = 0;
        for _ in 0..breaks {
            end += rest[end..].find('\n').expect("enough lines") + 1;
        }
        let got = &rest[..end - 1];
        rest = &rest[end..];
        let v = check::violations(post, got, false);
        assert!(v.is_empty(), "post {n} {post:?} → {got:?}: {v:?}");
        assert_eq!(got, want, "post {n}: line by line through the binary differs from the whole post");
    }
}
