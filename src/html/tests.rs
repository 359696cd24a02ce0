use lol_html::{DocumentContentHandlers, RewriteStrSettings, rewrite_str};
use proptest::prelude::*;

use super::*;
use crate::text::AlignedPiece;

/// The words of `text` with their bytes, as a model's pieces: runs of letters, each other
/// character on its own, whitespace left out.
fn spans(text: &str) -> Vec<std::ops::Range<usize>> {
    let mut out: Vec<std::ops::Range<usize>> = Vec::new();
    let mut word = false;
    for (i, c) in text.char_indices() {
        if c.is_whitespace() {
            word = false;
        } else if c.is_alphanumeric() && word {
            if let Some(last) = out.last_mut() {
                last.end = i + c.len_utf8();
            }
        } else {
            out.push(i..i + c.len_utf8());
            word = c.is_alphanumeric();
        }
    }
    out
}

/// A stand-in posts translator: upper-cases ASCII letters, each word aligned with itself, so
/// what was translated shows and the markup should come back where it was.
fn shout_aligned(post: &str) -> Aligned {
    let pieces = spans(post).into_iter().map(|r| AlignedPiece { target: r.clone(), source: r, score: 1.0 }).collect();
    Aligned { text: post.to_ascii_uppercase(), pieces }
}

fn shout(posts: &[&str]) -> Result<Vec<Aligned>, std::io::Error> {
    Ok(posts.iter().map(|p| shout_aligned(p)).collect())
}

/// A stand-in that reverses the order of the words (upper-cased), each aligned with its source
/// word: markup must follow the words.
fn reverse(posts: &[&str]) -> Result<Vec<Aligned>, std::io::Error> {
    Ok(posts
        .iter()
        .map(|p| {
            let mut text = String::new();
            let mut pieces = Vec::new();
            let words: Vec<(usize, &str)> =
                p.split_whitespace().map(|w| (w.as_ptr() as usize - p.as_ptr() as usize, w)).collect();
            for (start, word) in words.into_iter().rev() {
                if !text.is_empty() {
                    text.push(' ');
                }
                let at = text.len();
                text.push_str(&word.to_ascii_uppercase());
                for r in spans(word) {
                    let (target, source) = (at + r.start..at + r.end, start + r.start..start + r.end);
                    pieces.push(AlignedPiece { target, source, score: 1.0 });
                }
            }
            Aligned { text, pieces }
        })
        .collect())
}

fn html(input: &str) -> String {
    translate(input, shout).unwrap()
}

/// The document without its text: every tag, attribute, comment and doctype byte, in order.
fn markup(html: &str) -> String {
    rewrite_str(
        html,
        RewriteStrSettings::new().append_document_content_handler(DocumentContentHandlers::default().text(
            |t: &mut lol_html::html_content::TextChunk| {
                t.remove();
                Ok(())
            },
        )),
    )
    .unwrap()
}

/// The document's text only, in order.
fn text_only(html: &str) -> String {
    let mut out = String::new();
    rewrite_str(
        html,
        RewriteStrSettings::new().append_document_content_handler(DocumentContentHandlers::default().text(
            |t: &mut lol_html::html_content::TextChunk| {
                out.push_str(t.as_str());
                Ok(())
            },
        )),
    )
    .unwrap();
    out
}

#[test]
fn mastodon_shaped_posts() {
    let cases: &[(&str, &str)] = &[
        ("<p>Hola mundo</p>", "<p>HOLA MUNDO</p>"),
        ("<p>Uno.</p><p>Dos.<br>Tres.<br/>Cuatro</p>", "<p>UNO.</p><p>DOS.<br>TRES.<br/>CUATRO</p>"),
        (
            r#"<p>Mira <a href="https://example.com/a?b=1&amp;c=2" rel="nofollow noopener" target="_blank"><span class="invisible">https://</span><span class="">example.com/a?b=1&amp;c=2</span><span class="invisible"></span></a> ya</p>"#,
            r#"<p>MIRA <a href="https://example.com/a?b=1&amp;c=2" rel="nofollow noopener" target="_blank"><span class="invisible">https://</span><span class="">example.com/a?b=1&amp;c=2</span><span class="invisible"></span></a> YA</p>"#,
        ),
        (
            r#"<p><span class="h-card" translate="no"><a href="https://x.social/@ana" class="u-url mention">@<span>ana</span></a></span> gracias</p>"#,
            r#"<p><span class="h-card" translate="no"><a href="https://x.social/@ana" class="u-url mention">@<span>ana</span></a></span> GRACIAS</p>"#,
        ),
        (
            r#"<p>Viva <a href="https://x.social/tags/Espa%C3%B1a" class="mention hashtag" rel="tag">#<span>España</span></a> 🇪🇸</p>"#,
            r#"<p>VIVA <a href="https://x.social/tags/Espa%C3%B1a" class="mention hashtag" rel="tag">#<span>España</span></a> 🇪🇸</p>"#,
        ),
        (
            "<p>Tom &amp; Jerry &lt;3 caf&eacute;&nbsp;ok &#x1F600;</p>",
            "<p>TOM &amp; JERRY &lt;3 CAF&eacute;&nbsp;OK &#x1F600;</p>",
        ),
        ("<p>Un <b>gran <i>día</i></b> hoy</p>", "<p>UN <b>GRAN <i>DíA</i></b> HOY</p>"),
        ("<p>Ver <a href=\"/x\">el informe</a></p>", "<p>VER <a href=\"/x\">EL INFORME</a></p>"),
        (
            "<p translate=\"no\">Nombre</p><p class=\"notranslate\">x</p><p>sí</p>",
            "<p translate=\"no\">Nombre</p><p class=\"notranslate\">x</p><p>Sí</p>",
        ),
        (
            "<pre>a b</pre><code>let x</code><script>var a = 1;</script><style>p{}</style>",
            "<pre>a b</pre><code>let x</code><script>var a = 1;</script><style>p{}</style>",
        ),
        ("<!-- nota --><p>hola<!-- y --> adiós</p>", "<!-- nota --><p>HOLA<!-- y --> ADIóS</p>"),
        (
            "<p>Un <strong>gran</strong> <em>día</em>, <a href=\"/x\">¿no?</a></p>",
            "<p>UN <strong>GRAN</strong> <em>DíA</em>, <a href=\"/x\">¿NO?</a></p>",
        ),
        ("<p>Foto: <img src=\"a.png\" alt=\"x\"> hoy</p>", "<p>FOTO: <img src=\"a.png\" alt=\"x\"> HOY</p>"),
        ("<P CLASS=x>mal <b>cerrado</p> fin", "<P CLASS=x>MAL <b>CERRADO</p> FIN"),
        ("<p>sin cerrar <i>nada", "<p>SIN CERRAR <i>NADA"),
        ("<p>uno <b>dos <i>tres</b> cuatro</i></p>", "<p>UNO <b>DOS <i>TRES</b> CUATRO</i></p>"),
        ("<p>uno </i> dos <b>tres</b></p>", "<p>UNO </i> DOS <b>TRES</b></p>"),
        ("<p>a <b>b <p>c</b> d</p>", "<p>A <b>B <p>C</b> D</p>"),
        ("texto suelto & <", "TEXTO SUELTO &amp; &lt;"),
        ("<p>  </p><p>123 😀</p>", "<p>  </p><p>123 😀</p>"),
        ("", ""),
    ];
    for (input, want) in cases {
        let got = html(input);
        assert_eq!(&got, want, "{input:?}");
        assert_eq!(markup(&got), markup(input), "{input:?}");
    }
}

#[test]
fn the_text_for_identification_leaves_out_what_is_not_translated() {
    let input = r#"<p>Hola <a href="https://x.org">https://x.org</a> amigos</p><code>fn main</code>"#;
    assert_eq!(text_content(input), "Hola   amigos");
}

#[test]
fn translator_errors_and_broken_contracts_are_reported() {
    let failing = |_: &[&str]| -> Result<Vec<Aligned>, std::io::Error> { Err(std::io::Error::other("boom")) };
    assert!(matches!(translate("<p>hola</p>", failing), Err(HtmlError::Translate(_))));
    let short = |_: &[&str]| -> Result<Vec<Aligned>, std::io::Error> { Ok(vec![]) };
    assert!(matches!(translate("<p>hola</p>", short), Err(HtmlError::Count { expected: 1, got: 0 })));
    // No text: the translator is not called.
    let never = |_: &[&str]| -> Result<Vec<Aligned>, std::io::Error> { panic!("called") };
    assert_eq!(translate("<p> </p><br>", never).unwrap(), "<p> </p><br>");
}

fn element() -> impl Strategy<Value = (&'static str, &'static str)> {
    prop::sample::select(vec![
        ("<p>", "</p>"),
        ("<div class=\"a b\">", "</div>"),
        ("<b>", "</b>"),
        ("<em data-x='1 &amp; 2'>", "</em>"),
        ("<span class=\"h-card\">", "</span>"),
        ("<a href=\"https://x.org/?a=1&amp;b\">", "</a>"),
        ("<code>", "</code>"),
        ("<li>", "</li>"),
        ("<span translate=\"no\">", "</span>"),
        ("<script>", "</script>"),
    ])
}

fn fragment() -> impl Strategy<Value = String> {
    let leaf = prop_oneof![
        "[a-zA-Záñ ]{0,12}",
        Just("&amp;".to_string()),
        Just("&nbsp;".to_string()),
        Just("<br>".to_string()),
        Just("<img src=x alt=\"y\">".to_string()),
        Just("<!-- c -->".to_string()),
        Just("https://x.org/a".to_string()),
        Just("@ana".to_string()),
        Just("😀".to_string()),
    ];
    leaf.prop_recursive(4, 32, 4, |inner| {
        (element(), prop::collection::vec(inner, 0..4)).prop_map(|((open, close), children)| {
            // Raw text elements hold only text.
            let body: String = if open == "<script>" { "var a = 1;".into() } else { children.concat() };
            format!("{open}{body}{close}")
        })
    })
}

#[test]
fn inline_markup_follows_the_aligned_words() {
    let cases: &[(&str, &str)] = &[
        // The words move; the tags go with them.
        ("<p>uno <b>dos</b> tres</p>", "<p>TRES <b>DOS</b> UNO</p>"),
        ("<p><b>uno</b> dos tres.</p>", "<p>TRES. DOS <b>UNO</b></p>"),
        (
            "<p>uno <a href=\"/d\" title=\"t\">dos tres</a> cuatro</p>",
            "<p>CUATRO <a href=\"/d\" title=\"t\">TRES DOS</a> UNO</p>",
        ),
        // Nested: the inner element inside the outer one's words.
        ("<p>uno <b>dos <i>tres</i></b></p>", "<p><b><i>TRES</i> DOS</b> UNO</p>"),
        // Two siblings the model swapped: the tag sequence stays the source's, so the second
        // one, whose word is now before the first's, is left empty after it.
        ("<p><b>uno</b> dos <i>tres</i></p>", "<p>TRES DOS <b>UNO</b><i></i></p>"),
        // Points (void elements, comments) go before the first word aligned after them.
        ("<p>uno <img src=x> dos<!--c--> tres</p>", "<p>TRES DOS UNO<img src=x><!--c--></p>"),
        ("<p><img src=x>uno dos</p>", "<p>DOS <img src=x>UNO</p>"),
        // An element with no words left goes where its place in the source is.
        ("<p>uno <b></b>dos</p>", "<p>DOS UNO<b></b></p>"),
        // Block elements end the sentence, inline ones do not.
        (
            "<div>uno dos<br>tres <span class=\"x\">cuatro</span></div>",
            "<div>DOS UNO<br><span class=\"x\">CUATRO</span> TRES</div>",
        ),
    ];
    for (input, want) in cases {
        let got = translate(input, reverse).unwrap();
        assert_eq!(&got, want, "{input:?}");
        assert_eq!(markup(&got), markup(input), "{input:?}");
    }
}

#[test]
fn a_sentence_cut_by_inline_tags_is_translated_whole() {
    let mut seen = Vec::new();
    let out = translate("<p>Hola <b>mundo</b> <i>feliz</i>.</p><p>Otra</p>", |p: &[&str]| {
        seen.extend(p.iter().map(|s| s.to_string()));
        shout(p)
    })
    .unwrap();
    assert_eq!(seen, ["Hola mundo feliz.", "Otra"]);
    assert_eq!(out, "<p>HOLA <b>MUNDO</b> <i>FELIZ</i>.</p><p>OTRA</p>");
}

#[test]
fn words_take_one_source_and_keep_their_pieces_together() {
    // "▁mun" "do" "." pieces: "do" continues the word, "." does not.
    let text = "Hola mundo.";
    let piece =
        |t: std::ops::Range<usize>, s: std::ops::Range<usize>, score| AlignedPiece { target: t, source: s, score };
    let nodes = vec![Node::Element { start: 0..0, end: 0..0, src: 5..10, children: Vec::new() }];
    let pieces = [piece(0..4, 0..4, 0.9), piece(4..8, 5..8, 0.4), piece(8..10, 0..4, 0.3), piece(10..11, 10..11, 0.8)];
    let (words, tail) = place::words(text, &pieces, &nodes);
    let got: Vec<(&str, &str, Option<std::ops::Range<usize>>)> =
        words.iter().map(|w| (&text[w.ws.clone()], &text[w.body.clone()], w.src.clone())).collect();
    // "do" has less weight, and its source has fewer elements: the word keeps "mun"'s source.
    assert_eq!(got, [("", "Hola", Some(0..4)), (" ", "mundo", Some(5..8)), ("", ".", Some(10..11))]);
    assert!(tail.is_empty());
    // Pieces cut inside a character, overlapping or out of order lose no byte.
    let odd = [piece(8..11, 10..11, 0.8), piece(6..11, 5..8, 0.4), piece(0..3, 0..4, 0.9), piece(20..30, 0..1, 1.0)];
    let text = "Hola señor.";
    let (words, tail) = place::words(text, &odd, &nodes);
    let back: String =
        words.iter().map(|w| format!("{}{}", &text[w.ws.clone()], &text[w.body.clone()])).collect::<String>()
            + &text[tail];
    assert_eq!(back, text);
    // With more weight on "do" the word takes its source.
    let pieces = [piece(0..4, 0..4, 0.9), piece(4..8, 5..8, 0.4), piece(8..10, 0..4, 0.5)];
    let (words, _) = place::words("Hola mundo.", &pieces, &nodes);
    assert_eq!(words[1].src, Some(0..4));
}

#[test]
fn a_translator_without_alignment_leaves_inline_markup_at_the_edges() {
    // No pieces: the translation has no word aligned with anything, so elements stay empty at
    // the end, and nothing is lost or repeated.
    let bare = |p: &[&str]| -> Result<Vec<Aligned>, std::io::Error> {
        Ok(p.iter().map(|s| Aligned { text: s.to_uppercase(), pieces: Vec::new() }).collect())
    };
    let got = translate("<p>uno <b>dos</b></p>", bare).unwrap();
    assert_eq!(got, "<p>UNO DOS<b></b></p>");
}

fn inline_element() -> impl Strategy<Value = (&'static str, &'static str)> {
    prop::sample::select(vec![
        ("<b>", "</b>"),
        ("<em data-x='1 &amp; 2'>", "</em>"),
        ("<u>", "</u>"),
        ("<span class=\"c\">", "</span>"),
        ("<i>", "</i>"),
    ])
}

/// Paragraphs of words and inline elements, nested, with points between.
fn sentence() -> impl Strategy<Value = String> {
    let leaf = prop_oneof![
        4 => "[a-zñ]{1,6}( [a-zñ]{1,6}){0,2}[.,]?".prop_map(|w| format!(" {w} ")),
        1 => Just("<img src=x>".to_string()),
        1 => Just("<!-- c -->".to_string()),
        1 => Just("&amp;".to_string()),
        1 => Just("<b></b>".to_string()),
    ];
    leaf.prop_recursive(4, 24, 4, |inner| {
        (inline_element(), prop::collection::vec(inner, 1..4))
            .prop_map(|((open, close), children)| format!("{open}{}{close}", children.concat()))
    })
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(256))]

    /// Whatever the markup, the output parses to the same markup, byte for byte, and only the
    /// text is the translator's.
    #[test]
    fn markup_survives_byte_for_byte(parts in prop::collection::vec(fragment(), 1..4)) {
        let input = parts.concat();
        let out = html(&input);
        prop_assert_eq!(markup(&out), markup(&input));
        prop_assert_eq!(text_only(&out).to_lowercase(), text_only(&input).to_lowercase());
        let reversed = translate(&input, reverse).unwrap();
        prop_assert_eq!(markup(&reversed), markup(&input));
    }

    /// Inline markup inside sentences, the words reordered: every tag once, in order, nested
    /// as before, and every word inside the elements it was in when the order allows (with the
    /// words kept in place, always).
    #[test]
    fn inline_markup_is_placed_once_and_nested(parts in prop::collection::vec(sentence(), 1..4)) {
        let input = format!("<p>{}</p>", parts.concat());
        let kept = translate(&input, shout).unwrap();
        prop_assert_eq!(markup(&kept), markup(&input));
        prop_assert_eq!(text_only(&kept).to_lowercase(), text_only(&input).to_lowercase());
        let reversed = translate(&input, reverse).unwrap();
        prop_assert_eq!(markup(&reversed), markup(&input));
        // The same words, in reverse.
        let words = |h: &str| text_only(h).split_whitespace().map(str::to_lowercase).collect::<Vec<_>>();
        let mut want = words(&input);
        want.reverse();
        prop_assert_eq!(words(&reversed), want);
    }

    /// Any alignment at all (ranges anywhere, inside characters, overlapping, out of order):
    /// no panic, every tag once and in order, every byte of the translation once and in order.
    #[test]
    fn any_alignment_keeps_markup_and_text(
        parts in prop::collection::vec(sentence(), 1..3),
        raw in prop::collection::vec((0usize..80, 0usize..12, 0usize..80, 0usize..12, 0f32..1.0), 0..24),
    ) {
        let input = format!("<p>{}</p>", parts.concat());
        let out = translate(&input, |posts: &[&str]| {
            Ok::<_, std::io::Error>(posts.iter().map(|p| {
                let pieces = raw.iter().map(|&(t, tl, s, sl, score)| AlignedPiece {
                    target: t..t + tl,
                    source: s..s + sl,
                    score,
                }).collect();
                Aligned { text: format!("{} ñé", p.to_ascii_uppercase()), pieces }
            }).collect())
        }).unwrap();
        prop_assert_eq!(markup(&out), markup(&input));
        let want: String = text_only(&input).to_lowercase();
        let got = text_only(&out).to_lowercase();
        prop_assert_eq!(got.trim_end_matches(" ñé"), want.as_str());
    }
}
