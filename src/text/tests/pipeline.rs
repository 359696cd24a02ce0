//! The pipeline on hand-picked posts, with the stand-in translator showing where segments were cut.

use crate::text::{Error, Options, Pipeline, SegmentTranslator, StandIn, StandInMode};

fn run(options: &Options, mode: StandInMode, max_tokens: usize, post: &str) -> String {
    let pipeline = Pipeline::new(options).unwrap();
    let mut translator = StandIn::new(mode).with_max_tokens(max_tokens);
    pipeline.translate_post(post, &mut translator).unwrap()
}

fn bracket(post: &str) -> String {
    run(&Options::new("es", "en"), StandInMode::Bracket, 64, post)
}

#[test]
fn cuts_posts_where_a_reader_would() {
    let cases = [
        (
            "@_x_ Voy a permanecer de pie, aunque soy alto. #UE #Presupuesto2026",
            "@_x_ ⟦Voy a permanecer de pie, aunque soy alto.⟧ #UE #Presupuesto2026",
        ),
        (
            "RT @usuario_123: Como saben, esto.\t#PolíticaAgraria\r\n",
            "RT @usuario_123: ⟦Como saben, esto.⟧\t#PolíticaAgraria\r\n",
        ),
        (
            "🎉 Intervengo hoy. (@Parlamento_UE)\n— vía https://www.example.net/ver?v=dQw4w9WgXcQ&t=42s ",
            "🎉 ⟦Intervengo hoy.⟧ (@Parlamento_UE)\n⟦— vía⟧ https://www.example.net/ver?v=dQw4w9WgXcQ&t=42s ",
        ),
        ("(see https://x.org/a_(b)), and https://x.org/a.", "(⟦see⟧ https://x.org/a_(b)), ⟦and⟧ https://x.org/a."),
        ("  Hola.   Adiós 👋🏽  \r\n\r\n", "  ⟦Hola.⟧   ⟦Adiós⟧ 👋🏽  \r\n\r\n"),
        ("Escribe a ana@example.es o a @ana.", "⟦Escribe a⟧ ana@example.es ⟦o a⟧ @ana."),
        ("El #Brexit y @ana: ¿qué opináis?", "⟦El #Brexit y @ana: ¿qué opináis?⟧"),
        (
            "1.500 € a las 18:30 del 29/11/2026 (+34 600 000 000)",
            "⟦1.500 € a las 18:30 del 29/11/2026 (+34 600 000 000)⟧",
        ),
        ("Fin. (+34 600 000 000)", "⟦Fin.⟧ (+34 600 000 000)"),
        ("¿Viste https://x.org/a? ¡Increíble!", "⟦¿Viste⟧ https://x.org/a? ⟦¡Increíble!⟧"),
        ("(Véase el anexo.) «Fin». (Mira https://x.org)", "⟦(Véase el anexo.)⟧ ⟦«Fin».⟧ (⟦Mira⟧ https://x.org)"),
        ("👩\u{200d}💻", "👩\u{200d}💻"),
        ("", ""),
        ("\n\n", "\n\n"),
    ];
    for (post, want) in cases {
        assert_eq!(bracket(post), want, "{post:?}");
    }
}

#[test]
fn restores_mentions_only_when_counts_agree_and_never_loses_hashtags() {
    let es = Options::new("es", "en");
    let post = "Hablé con @ana_1 y @Bob_2 ayer.";
    assert_eq!(run(&es, StandInMode::RenameMentions, 64, post), post);
    assert_eq!(run(&es, StandInMode::AsciiUpper, 64, post), "HABLé CON @ana_1 Y @Bob_2 AYER.");
    assert_eq!(run(&es, StandInMode::DropMentions, 64, post), "Hablé con  y  ayer.");
    let post = "El #Brexit es un desastre.";
    assert_eq!(run(&es, StandInMode::RenameHashtags, 64, post), post);
    assert_eq!(run(&es, StandInMode::DropHashtags, 64, post), "El  es un desastre. #Brexit");
}

#[test]
fn a_sloppy_translator_cannot_add_lines_or_spacing() {
    let es = Options::new("es", "en");
    let post = "  Uno dos.  Tres\tcuatro.\r\nCinco ";
    assert_eq!(run(&es, StandInMode::Messy, 64, post), post);
}

#[test]
fn cuts_long_sentences_and_joins_them_back() {
    let es = Options::new("es", "en");
    let post = "Uno dos tres, cuatro cinco seis siete ocho nueve.";
    let out = run(&es, StandInMode::Bracket, 5, post);
    assert_eq!(out, "⟦Uno dos tres,⟧ ⟦cuatro cinco seis siete ocho⟧ ⟦nueve.⟧");
    assert_eq!(run(&es, StandInMode::Identity, 1, post), post);
}

#[test]
fn scripts_without_spaces_get_one_between_pieces_into_spaced_languages() {
    let zh_en = Options::new("zh", "en");
    assert_eq!(run(&zh_en, StandInMode::Bracket, 64, "中文。“你好。”他说。"), "⟦中文。⟧ ⟦“你好。”⟧ ⟦他说。⟧");
    let zh_ja = Options::new("zh", "ja");
    assert_eq!(run(&zh_ja, StandInMode::Bracket, 64, "中文。“你好。”他说。"), "⟦中文。⟧⟦“你好。”⟧⟦他说。⟧");
}

#[test]
fn cleans_soft_hyphens_like_firefox() {
    let es = Options::new("es", "en");
    assert_eq!(run(&es, StandInMode::Bracket, 64, "in\u{AD}for\u{AD}ma\u{AD}ción útil"), "⟦información útil⟧");
}

#[test]
fn raw_mode_sends_everything_but_keeps_lines_and_spacing() {
    let raw = Options { raw: true, ..Options::new("es", "en") };
    let post = " @ana mira https://x.org/a 😀 #UE. ¿Vale?\r\n\t(+34 600)\n";
    assert_eq!(run(&raw, StandInMode::AsciiUpper, 64, post), post.to_ascii_uppercase());
    assert_eq!(
        run(&raw, StandInMode::Bracket, 64, post),
        " ⟦@ana mira https://x.org/a 😀 #UE.⟧ ⟦¿Vale?⟧\r\n\t⟦(+34 600)⟧\n"
    );
    let whole = Options { split_sentences: false, ..raw };
    assert_eq!(run(&whole, StandInMode::Bracket, 64, "Uno. Dos."), "⟦Uno. Dos.⟧");
}

#[test]
fn one_batch_for_all_posts_and_none_when_nothing_to_translate() {
    let pipeline = Pipeline::new(&Options::new("es", "en")).unwrap();
    let mut t = StandIn::identity();
    let posts = ["Uno. Dos.", "", "Tres https://x.org cuatro"];
    assert_eq!(pipeline.translate_posts(&posts, &mut t).unwrap(), posts);
    assert_eq!(t.batches, [["Uno.", "Dos.", "Tres", "cuatro"]]);
    let mut t = StandIn::identity();
    let posts = ["", "😀", "https://x.org", "@a #b", "  \n ", "(+34) 12:30"];
    assert_eq!(pipeline.translate_posts(&posts, &mut t).unwrap(), posts);
    assert!(t.batches.is_empty());
}

#[test]
fn plans_for_callers_that_schedule_translation_themselves() {
    let pipeline = Pipeline::new(&Options::new("es", "en")).unwrap();
    let t = StandIn::identity();
    let plan = pipeline.plan(&["Hola @ana. Adiós https://x.org"], &t).unwrap();
    assert_eq!(plan.segments(), ["Hola", "Adiós"]);
    let out = plan.finish(vec!["Hello".into(), "Bye".into()]).unwrap();
    assert_eq!(out, ["Hello @ana. Bye https://x.org"]);
}

#[test]
fn aligned_posts_point_at_post_bytes() {
    use crate::text::{Aligned, AlignedPiece};
    let pipeline = Pipeline::new(&Options::new("es", "en")).unwrap();
    let post = "Hola @ana. Adiós https://x.org";
    let plan = pipeline.plan(&[post], &StandIn::identity()).unwrap();
    let piece =
        |t: std::ops::Range<usize>, s: std::ops::Range<usize>| AlignedPiece { target: t, source: s, score: 0.5 };
    let out = plan
        .finish_aligned(vec![
            Aligned { text: "Hello".into(), pieces: vec![piece(0..5, 0..4)] },
            // Spacing the pipeline trims off shifts the pieces with it.
            Aligned { text: " Bye".into(), pieces: vec![piece(0..4, 0..6)] },
        ])
        .unwrap();
    assert_eq!(out[0].text, "Hello @ana. Bye https://x.org");
    let adios = post.find("Adiós").unwrap();
    let got: Vec<(&str, &str)> =
        out[0].pieces.iter().map(|p| (&out[0].text[p.target.clone()], &post[p.source.clone()])).collect();
    assert_eq!(
        got,
        [("Hello", "Hola"), (" @ana. ", " @ana. "), ("Bye", "Adiós"), (" https://x.org", " https://x.org")]
    );
    assert_eq!(out[0].pieces[2].source, adios..adios + "Adiós".len());
    // Without the translator's alignment, a translation is aligned with its segment as a whole.
    let plan = pipeline.plan(&[post], &StandIn::identity()).unwrap();
    let out = plan.finish(vec!["Hello".into(), "Bye".into()]).unwrap();
    assert_eq!(out, ["Hello @ana. Bye https://x.org"]);
}

#[test]
fn reports_translator_failures_and_bad_options() {
    let pipeline = Pipeline::new(&Options::new("es", "en")).unwrap();
    let err = pipeline.translate_post("Hola.", &mut StandIn::new(StandInMode::Fail)).unwrap_err();
    assert!(matches!(err, Error::Translator { segments: 1, .. }), "{err}");
    assert_eq!(std::error::Error::source(&err).unwrap().to_string(), "the stand-in translator fails on purpose");
    let err = pipeline.translate_post("Hola. Adiós.", &mut StandIn::new(StandInMode::TooFew)).unwrap_err();
    assert!(matches!(err, Error::TranslationCount { expected: 2, got: 1 }), "{err}");
    let err = pipeline.translate_post("Hola.", &mut StandIn::identity().with_max_tokens(0)).unwrap_err();
    assert!(matches!(err, Error::NoTokenBudget), "{err}");
    let err = Pipeline::new(&Options::new("es", "english!")).unwrap_err();
    assert!(err.to_string().contains("target language \"english!\""), "{err}");
    // The trait works through `&mut` too, as `translate_posts` callers may hold one.
    let mut t = StandIn::identity();
    let mut by_ref: &mut StandIn = &mut t;
    assert_eq!(by_ref.max_tokens(), 64);
    assert_eq!(pipeline.translate_post("Hola.", &mut by_ref).unwrap(), "Hola.");
}
