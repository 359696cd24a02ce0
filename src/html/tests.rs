use proptest::prelude::*;

use super::*;

/// A stand-in posts translator: upper-cases ASCII letters, so what was translated shows.
fn shout(posts: &[&str]) -> Result<Vec<String>, std::io::Error> {
    Ok(posts.iter().map(|p| p.to_ascii_uppercase()).collect())
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
        ("<P CLASS=x>mal <b>cerrado</p> fin", "<P CLASS=x>MAL <b>CERRADO</p> FIN"),
        ("<p>sin cerrar <i>nada", "<p>SIN CERRAR <i>NADA"),
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
    let failing = |_: &[&str]| -> Result<Vec<String>, std::io::Error> { Err(std::io::Error::other("boom")) };
    assert!(matches!(translate("<p>hola</p>", failing), Err(HtmlError::Translate(_))));
    let short = |_: &[&str]| -> Result<Vec<String>, std::io::Error> { Ok(vec![]) };
    assert!(matches!(translate("<p>hola</p>", short), Err(HtmlError::Count { expected: 1, got: 0 })));
    // No text: the translator is not called.
    let never = |_: &[&str]| -> Result<Vec<String>, std::io::Error> { panic!("called") };
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

proptest! {
    #![proptest_config(ProptestConfig::with_cases(256))]

    /// Whatever the markup, the output parses to the same markup, byte for byte, and only the
    /// text is the translator's.
    #[test]
    fn markup_survives_byte_for_byte(parts in prop::collection::vec(fragment(), 1..4)) {
        let input = parts.concat();
        let out = html(&input);
        prop_assert_eq!(markup(&out), markup(&input));
        prop_assert_eq!(out.to_lowercase(), input.to_lowercase());
        // The identity translator gives the document back as it was.
        let same = translate(&input, |p: &[&str]| Ok::<_, std::io::Error>(p.iter().map(|s| s.to_string()).collect())).unwrap();
        prop_assert_eq!(same, input);
    }
}
