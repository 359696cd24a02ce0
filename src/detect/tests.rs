use super::*;

fn detector(tags: &[&str]) -> Detector {
    Detector::new(tags).unwrap()
}

#[test]
fn nothing_to_identify_is_undetermined_not_an_error() {
    let d = detector(&["es", "en", "de"]);
    for text in
        ["", "   ", "https://example.com/a?b=c", "😀🔥 🇪🇸", "12:30 3.5 1.500 €", "@ana@x.org #UE https://x.org 👍🏽"]
    {
        let found = d.detect(text);
        assert_eq!(found, Detection { language: UNDETERMINED.into(), confidence: 0.0 }, "{text:?}");
        assert!(!found.is_determined());
    }
}

#[test]
fn finds_the_language_among_the_candidates() {
    let d = detector(&["es", "en", "de", "fr"]);
    let cases = [
        ("¿Dónde está la estación de tren más cercana?", "es"),
        ("Where is the nearest train station?", "en"),
        ("Wo ist der nächste Bahnhof?", "de"),
        ("Où est la gare la plus proche ?", "fr"),
        // Links, handles and hashtags do not sway it.
        ("@john_smith mira https://www.example.com/the-best-english-words #TheWeekend", "es"),
    ];
    for (text, want) in cases {
        let found = d.detect(text);
        assert_eq!(found.language, want, "{text:?}");
        assert!(found.confidence > 0.3 && found.confidence <= 1.0, "{text:?}: {found:?}");
    }
}

#[test]
fn chinese_is_told_apart_by_its_script() {
    let d = detector(&["ja", "zh-Hans", "zh-Hant", "en"]);
    assert_eq!(d.detect("我们这个时候还没有来。").language, "zh-Hans");
    assert_eq!(d.detect("我們這個時候還沒有來。").language, "zh-Hant");
    assert_eq!(d.detect("これは日本語の文です。").language, "ja");
    assert_eq!(detector(&["zh-Hant", "en"]).detect("我们这个时候还没有来。").language, "zh-Hant");
}

#[test]
fn one_candidate_is_always_the_answer() {
    let d = detector(&["es"]);
    assert_eq!(d.detect("Hello there").language, "es");
    assert_eq!(d.detect("https://x.org").language, UNDETERMINED);
}

#[test]
fn bad_candidates_are_named() {
    assert!(matches!(Detector::new(&["es", "x y"]), Err(DetectError::NotATag(t)) if t == "x y"));
    assert!(matches!(Detector::new(&["es", "tlh"]), Err(DetectError::Unsupported(t)) if t == "tlh"));
    assert!(matches!(Detector::new::<&str>(&[]), Err(DetectError::Empty)));
    assert_eq!(detector(&["pt-BR", "no", "en"]).candidates(), ["pt-BR", "no", "en"]);
}

#[test]
fn every_firefox_language_but_kannada_and_malayalam_is_known() {
    let unknown: Vec<&str> = FIREFOX_LANGUAGES.iter().copied().filter(|t| language_of(t).is_none()).collect();
    assert_eq!(unknown, ["kn", "ml"]);
}

#[test]
fn pair_folders_are_cut_where_english_is() {
    let split_pair = crate::fetch::tags::pair_name;
    assert_eq!(split_pair("es-en"), Some(("es", "en")));
    assert_eq!(split_pair("zh-Hant-en"), Some(("zh-Hant", "en")));
    assert_eq!(split_pair("en-zh-Hant"), Some(("en", "zh-Hant")));
    assert_eq!(split_pair("en-pt-BR"), Some(("en", "pt-BR")));
    // The registry's rule too: a pair without English of two plain tags.
    assert_eq!(split_pair("es-de"), Some(("es", "de")));
    assert_eq!(split_pair("zh-Hant-de"), None);
    assert_eq!(split_pair("tiny-esen"), None);
    assert_eq!(split_pair("models"), None);
}

#[cfg(unix)]
#[test]
fn installed_languages_come_from_the_models_folder() {
    let fixture = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/tiny-esen");
    assert!(fixture.is_dir(), "missing fixture {}", fixture.display());
    let dir = tempfile::tempdir().unwrap();
    assert!(installed_languages(dir.path()).is_empty());
    std::os::unix::fs::symlink(&fixture, dir.path().join("es-en")).unwrap();
    std::fs::create_dir(dir.path().join("en-de")).unwrap(); // no model inside
    assert_eq!(installed_languages(dir.path()), ["en", "es"]);
    // A model folder given as the models folder.
    assert_eq!(installed_languages(&fixture), ["en", "es"]);
    assert_eq!(Detector::for_models(dir.path()).unwrap().candidates().len(), 2);
}

/// One rule for the languages identification chooses among: `serve` (the registry's languages)
/// and `translate auto` (the folder's) both leave out those it has no models for, instead of one
/// failing and the other not.
#[test]
fn only_known_languages_are_candidates() {
    assert!(knows("es") && knows("zh-Hant") && knows("pt-BR") && knows("no"));
    assert!(!knows("kn") && !knows("") && !knows("es_ES") && !knows("xx"));
    let among = |tags: &[&str]| Detector::among_known(tags).map(|d| d.candidates().join(","));
    assert_eq!(among(&["en", "kn", "es"]).as_deref(), Some("en,es"));
    assert_eq!(among(&["kn"]), None);
}

/// Among all of Firefox's languages the first pass (whatlang) narrows the candidates; the
/// languages it has no profile of must still be found, and close languages told apart.
#[test]
fn the_first_pass_keeps_languages_it_does_not_know() {
    let all: Vec<&str> = FIREFOX_LANGUAGES.iter().copied().filter(|t| language_of(t).is_some()).collect();
    let d = detector(&all);
    assert!(!d.whatlang.is_empty(), "many candidates: the first pass runs");
    let cases = [
        ("Unë jam shumë i lumtur që të shoh sot në shtëpinë tonë të re.", "sq"),
        ("Það er gott veður í dag og við förum niður í bæ.", "is"),
        ("Saya sangat gembira kerana dapat berjumpa dengan kawan-kawan lama semalam.", "ms"),
        ("Der Zug nach Berlin fährt heute leider mit großer Verspätung ab.", "de"),
        ("Сьогодні ми їдемо до бабусі в село.", "uk"),
        ("Сегодня мы едем к бабушке в деревню.", "ru"),
        ("今日はとても良い天気ですね。", "ja"),
    ];
    for (text, want) in cases {
        assert_eq!(d.detect(text).language, want, "{text:?}");
    }
}

#[test]
fn the_compiled_in_models_hold_every_language() {
    assert_eq!(BUILTIN.languages().count_ones() as usize, languages::LANGUAGES.len());
    assert_eq!(languages::LANGUAGES.len(), 51);
}
