//! `--html` on the fixture model: inline markup placed on the translated words by the decoder's
//! alignment, text without inline markup exactly as plain text, the alignment itself.

use reseam::translate::{ArithmeticChoice, TranslateOptions, Translator};

use crate::common::TestDir;
use crate::engine::{esen, lines};

/// The fixture copied to a temporary folder (translating a model folder may write its pack
/// beside it), loaded with exact arithmetic.
fn translator(t: &TestDir) -> Translator {
    let dir = t.path().join("tiny-esen");
    std::fs::create_dir_all(&dir).unwrap();
    for f in ["model.esen.intgemm.alphas.bin", "vocab.esen.spm", "lex.50.50.esen.s2t.bin"] {
        std::fs::copy(esen().join(f), dir.join(f)).unwrap();
    }
    let mut opts = TranslateOptions::new(&dir, "es", "en");
    opts.arithmetic = ArithmeticChoice::Exact;
    opts.threads = 2;
    Translator::load(&opts).unwrap()
}

fn html(tr: &Translator, input: &str) -> String {
    reseam::html::translate(input, |p| tr.translate_posts_aligned(p)).unwrap()
}

/// The document without its text.
fn markup(html: &str) -> String {
    let mut out = String::new();
    let mut in_tag = false;
    for c in html.chars() {
        match c {
            '<' => in_tag = true,
            '>' => {
                in_tag = false;
                out.push(c);
            }
            _ => {}
        }
        if in_tag {
            out.push(c);
        }
    }
    out
}

/// Asking for the alignment changes no output, and every piece is aligned with bytes of its
/// own sentence.
#[test]
fn alignment_changes_no_translation() {
    let t = TestDir::new();
    let tr = translator(&t);
    let src = lines("heldout.es");
    let src: Vec<&str> = src.iter().map(String::as_str).take(60).collect();
    let plain = tr.translate_sentences(&src).unwrap();
    let aligned = tr.translate_sentences_aligned(&src).unwrap();
    assert_eq!(aligned.iter().map(|a| a.text.as_str()).collect::<Vec<_>>(), plain);
    for (a, s) in aligned.iter().zip(&src) {
        assert!(!a.pieces.is_empty() || a.text.is_empty(), "{s:?}: no alignment");
        let mut end = 0;
        for p in &a.pieces {
            assert!(p.target.start >= end && p.target.end <= a.text.len(), "{s:?}: {p:?}");
            assert!(p.source.end <= s.len() && s.is_char_boundary(p.source.start), "{s:?}: {p:?}");
            assert!((0.0..=1.0).contains(&p.score), "{s:?}: {p:?}");
            end = p.target.end;
        }
    }
}

/// Text in blocks without inline markup equals the plain translation of the text; a sentence
/// with inline markup is translated whole (as its text without tags) and every tag comes back
/// once, in order, around words of the translation.
#[test]
fn inline_markup_lands_on_the_translated_words() {
    let t = TestDir::new();
    let tr = translator(&t);
    let texts = ["Hola mundo.", "Ella se negó a hacerlo.", "Espero que esto pueda entrar en vigor en julio de 2010."];
    let plain = tr.translate_posts(&texts).unwrap();
    for (text, want) in texts.iter().zip(&plain) {
        assert_eq!(html(&tr, &format!("<p>{text}</p>")), format!("<p>{want}</p>"));
    }
    let cases = [
        ("<p>Hola <b>mundo</b>.</p>", "Hola mundo."),
        ("<p>Ella <em>se negó</em> a hacerlo.</p>", "Ella se negó a hacerlo."),
        (
            "<p>Espero que <a href=\"/v\">esto</a> pueda entrar en <i>vigor</i> en <b>julio</b> de 2010.</p>",
            "Espero que esto pueda entrar en vigor en julio de 2010.",
        ),
    ];
    for (input, text) in cases {
        let out = html(&tr, input);
        assert_eq!(markup(&out), markup(input), "{out}");
        let words = |s: &str| s.split_whitespace().map(str::to_string).collect::<Vec<_>>();
        let text_of = |h: &str| {
            let mut o = String::new();
            let mut tag = false;
            for c in h.chars() {
                if c == '<' {
                    tag = true;
                } else if c == '>' {
                    tag = false;
                } else if !tag {
                    o.push(c);
                }
            }
            o
        };
        let want = tr.translate_posts(&[text]).unwrap().remove(0);
        assert_eq!(words(&text_of(&out)), words(&want), "{out}");
        eprintln!("{input}\n  -> {out}");
    }
    // The bold goes on "world" (or whatever the model makes of "mundo"), not on the period.
    let out = html(&tr, "<p>Hola <b>mundo</b>.</p>");
    let inner = &out[out.find("<b>").unwrap() + 3..out.find("</b>").unwrap()];
    assert!(!inner.is_empty() && !inner.contains('.'), "{out}");
}

/// `reseam translate --html`: a record with inline markup through the binary.
#[test]
fn the_cli_places_inline_markup() {
    let t = TestDir::new();
    let tr = translator(&t);
    let want = html(&tr, "<p>Hola <b>mundo</b>. <br>Ella <i>se negó</i>.</p>");
    let mut c = t.cmd();
    c.args(["translate", "--offline", "--arithmetic", "exact", "--threads", "2", "--models"])
        .arg(t.path().join("tiny-esen"))
        .args(["--html", "es", "en"]);
    let out = t.run(c, "<p>Hola <b>mundo</b>. <br>Ella <i>se negó</i>.</p>\n".as_bytes());
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    assert_eq!(String::from_utf8(out.stdout).unwrap(), format!("{want}\n"));
}
