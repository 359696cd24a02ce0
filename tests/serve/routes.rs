//! Every route of src/serve/api/mod.rs's table, with the shapes its clients read; every
//! translation equal to `reseam translate`'s for the same text.

use serde_json::{Value, json};

use super::client::Req;
use super::server::{Server, cli_translate};
use super::{post_lines, strs};

/// Plain texts used across dialects: a post with a mention, a link and a hashtag, a sentence.
const POST: &str = "Hola mundo, ¿cómo estás? @ana_1 https://example.com/a?b=1 #UE";
const SENTENCE: &str = "Espero que esto pueda entrar en vigor en julio de 2010.";
const HTML: &str = r#"<p class="x">Ella se negó a <b>hacerlo</b>. <a href="https://example.com/">Véase</a></p>"#;

/// The server with es→en and en→es, and `reseam translate`'s output for POST, SENTENCE (plain)
/// and HTML (`--html`).
struct Fixture {
    server: Server,
    post: String,
    sentence: String,
    html: String,
}

fn fixture() -> Fixture {
    let server = Server::esen().pair("en-es", "base-enes").start();
    let plain = cli_translate(&server.dir, &server.models, "es", "en", &[], &[POST, SENTENCE]);
    let html = cli_translate(&server.dir, &server.models, "es", "en", &["--html"], &[HTML]);
    Fixture { post: plain[0].clone(), sentence: plain[1].clone(), html: html[0].clone(), server }
}

fn keys(v: &Value) -> Vec<String> {
    let mut k: Vec<String> = v.as_object().unwrap_or_else(|| panic!("not an object: {v}")).keys().cloned().collect();
    k.sort();
    k
}

#[test]
fn seed_api_health_languages_translate_equal_the_command_line() {
    let s = Server::esen().pair("en-es", "base-enes").start();

    let h = s.get("/health").expect_json(200);
    assert_eq!(keys(&h), ["arithmetic", "counters", "isa", "pairs_loaded", "status", "threads"], "{h}");
    assert_eq!(h["status"], "ok");
    assert!(h["isa"].as_str().is_some_and(|s| !s.is_empty()), "{h}");
    assert!(["exact", "saturating"].contains(&h["arithmetic"].as_str().unwrap()), "{h}");
    assert_eq!(h["threads"], 1, "--threads 1: {h}");
    assert!(h["pairs_loaded"].is_u64(), "{h}");
    assert_eq!(keys(&h["counters"]), ["chars", "errors", "queue", "requests", "texts"], "{h}");
    for k in ["chars", "errors", "queue", "requests", "texts"] {
        assert!(h["counters"][k].is_u64(), "counters.{k}: {h}");
    }

    let l = s.get("/v1/languages").expect_json(200);
    assert_eq!(keys(&l), ["pairs", "pivot"]);
    assert_eq!(l["pivot"], "en");
    let mut pairs: Vec<(String, String)> = serde_json::from_value(l["pairs"].clone()).unwrap();
    pairs.sort();
    assert_eq!(pairs, [("en".into(), "es".into()), ("es".into(), "en".into())], "{l}");

    // Forty lines of social posts, in one request, equal the command line's line for line.
    let lines = post_lines(40);
    let want = cli_translate(&s.dir, &s.models, "es", "en", &[], &strs(&lines));
    let got = s.translate("es", "en", &strs(&lines));
    for (i, (g, w)) in got.iter().zip(&want).enumerate() {
        assert_eq!(g, w, "line {i}: {:?}", lines[i]);
        // The social-post pipeline's promises: links, mentions, hashtags, emoji and spacing kept.
        let v = reseam::text::check::violations(&lines[i], g, false);
        assert!(v.is_empty(), "line {i} {:?} → {g:?}: {v:?}", lines[i]);
    }
    // Whole posts with line breaks: each comes back with its breaks, equal to its lines
    // translated one by one.
    let text = std::fs::read_to_string(crate::engine::esen().join("refs/social.es.jsonl")).unwrap();
    let posts: Vec<String> = text
        .lines()
        .map(|l| serde_json::from_str::<Value>(l).unwrap()["text"].as_str().unwrap().to_string())
        .filter(|p| p.contains('\n') && !p.contains('\r'))
        .take(10)
        .collect();
    assert_eq!(posts.len(), 10, "the fixture has posts with line breaks");
    let post_lines: Vec<&str> = posts.iter().flat_map(|p| p.split('\n')).collect();
    let mut by_line = cli_translate(&s.dir, &s.models, "es", "en", &[], &post_lines).into_iter();
    let want_posts: Vec<String> = posts
        .iter()
        .map(|p| (0..p.split('\n').count()).map(|_| by_line.next().unwrap()).collect::<Vec<_>>().join("\n"))
        .collect();
    assert_eq!(s.translate("es", "en", &strs(&posts)), want_posts);

    // The other direction too (the base-enes fixture's output is degenerate; it is the same one).
    let en = ["I hope this can enter into force in July.", "She refused to do it. @bob"];
    assert_eq!(s.translate("en", "es", &en), cli_translate(&s.dir, &s.models, "en", "es", &[], &en));

    // Order kept: the same texts reversed come back reversed.
    let mut rev = lines[..10].to_vec();
    rev.reverse();
    let mut want_rev = want[..10].to_vec();
    want_rev.reverse();
    assert_eq!(s.translate("es", "en", &strs(&rev)), want_rev);

    // Counters: texts and bytes of the request, and the requests themselves.
    let before = s.get("/health").json()["counters"].clone();
    let texts = [POST, "", "Ella se negó a hacerlo."];
    let out = s.translate("es", "en", &texts);
    assert_eq!(out[1], "", "an empty text stays empty");
    let after = s.get("/health").json()["counters"].clone();
    let delta = |k: &str| after[k].as_u64().unwrap() - before[k].as_u64().unwrap();
    assert_eq!(delta("texts"), 3, "{before} → {after}");
    assert_eq!(delta("chars"), texts.iter().map(|t| t.len() as u64).sum::<u64>(), "{before} → {after}");
    assert!(delta("requests") >= 2, "{before} → {after}");
    assert_eq!(after["queue"], 0);

    // Same language on both sides: the texts as they were.
    assert_eq!(s.translate("es", "es", &[POST]), [POST]);
    // `texts` may be empty.
    assert_eq!(
        s.post_json("/v1/translate", &json!({"from": "es", "to": "en", "texts": []})).expect_json(200),
        json!({"translations": []})
    );
}

#[test]
fn language_codes_as_clients_send_them() {
    let s = Server::esen().start();
    let want = s.translate("es", "en", &[SENTENCE]);
    for (from, to) in
        [("ES", "EN"), ("es-ES", "en-US"), ("es_ES", "EN-US"), ("Es", "en-GB"), (" es ", "EN-gb"), ("es-419", "en")]
    {
        assert_eq!(s.translate(from, to, &[SENTENCE]), want, "{from} → {to}");
    }
    // A code of a language no installed model has, as each client writes it: 400 naming it.
    for (from, to, named) in [
        ("zh-CN", "en", "zh-CN"),
        ("es", "zh-CN", "zh-CN"),
        ("es", "ZH-HANS", "ZH-HANS"),
        ("pt-BR", "en", "pt-BR"),
        ("es", "de", "de"),
        ("xx", "en", "xx"),
        ("e$", "en", "e$"),
        ("", "en", "(empty)"),
    ] {
        let r = s.post_json("/v1/translate", &json!({"from": from, "to": to, "texts": ["Hola"]}));
        let e = r.expect_error(400);
        assert!(e.contains(&format!("{named} is not supported")), "{from} → {to}: {e}");
        assert!(e.contains("es") && e.contains("en"), "the message lists the installed languages: {e}");
    }
    // Each dialect's own way of naming languages goes through the same normalisation.
    let r =
        s.send(Req::post("/v2/translate").form(&[("text", SENTENCE), ("target_lang", "EN-US"), ("source_lang", "ES")]));
    assert_eq!(r.expect_json(200)["translations"][0]["text"], want[0]);
    let r = s.post_json("/kiss", &json!({"text": SENTENCE, "from": "es-ES", "to": "en-US"}));
    assert_eq!(r.expect_json(200)["text"], want[0]);
    let r = s.post_json("/translate", &json!({"q": SENTENCE, "source": "es", "target": "zz"}));
    assert!(r.expect_error(400).contains("zz is not supported"));
}

#[test]
fn libretranslate_json_form_html_auto_languages_detect_settings_spec() {
    let f = fixture();
    let s = &f.server;

    // JSON, q a string: translatedText a string, nothing else.
    let v = s.post_json("/translate", &json!({"q": POST, "source": "es", "target": "en"})).expect_json(200);
    assert_eq!(v, json!({"translatedText": f.post}));
    // q an array (Mastodon): an array, in order.
    let v = s
        .post_json("/translate", &json!({"q": [SENTENCE, POST], "source": "es", "target": "en", "format": "text"}))
        .expect_json(200);
    assert_eq!(v, json!({"translatedText": [f.sentence, f.post]}));
    // Form-encoded (libretranslatepy, Linguist): a string.
    let r = s.send(Req::post("/translate").form(&[("q", POST), ("source", "es"), ("target", "en")]));
    assert_eq!(r.expect_json(200), json!({"translatedText": f.post}));
    // Form line endings normalised to \n, as LibreTranslate does.
    let r = s.send(Req::post("/translate").form(&[("q", "Hola.\r\nAdiós."), ("source", "es"), ("target", "en")]));
    let crlf = r.expect_json(200)["translatedText"].as_str().unwrap().to_string();
    let lf = s.post_json("/translate", &json!({"q": "Hola.\nAdiós.", "source": "es", "target": "en"})).json();
    assert_eq!(crlf, lf["translatedText"].as_str().unwrap());
    // A JSON body sent as a form (curl -d): read as JSON.
    let r = s.send(
        Req::post("/translate")
            .header("Content-Type", "application/x-www-form-urlencoded")
            .body(serde_json::to_vec(&json!({"q": POST, "source": "es", "target": "en"})).unwrap()),
    );
    assert_eq!(r.expect_json(200), json!({"translatedText": f.post}));

    // format html: markup kept, as `reseam translate --html`.
    let v = s
        .post_json("/translate", &json!({"q": HTML, "source": "es", "target": "en", "format": "html"}))
        .expect_json(200);
    assert_eq!(v, json!({"translatedText": f.html}));
    assert!(
        f.html.starts_with(r#"<p class="x">"#)
            && f.html.contains("<b>")
            && f.html.contains(r#"href="https://example.com/""#),
        "{}",
        f.html
    );
    let v = s
        .post_json("/translate", &json!({"q": [HTML], "source": "es", "target": "en", "format": "html"}))
        .expect_json(200);
    assert_eq!(v, json!({"translatedText": [f.html]}));
    let e = s
        .post_json("/translate", &json!({"q": "Hola", "source": "es", "target": "en", "format": "xml"}))
        .expect_error(400);
    assert_eq!(e, "xml format is not supported");

    // source auto: detectedLanguage, an object for a string, an array for an array.
    let v = s.post_json("/translate", &json!({"q": SENTENCE, "source": "auto", "target": "en"})).expect_json(200);
    assert_eq!(keys(&v), ["detectedLanguage", "translatedText"], "{v}");
    assert_eq!(v["translatedText"], f.sentence);
    assert_eq!(v["detectedLanguage"]["language"], "es", "{v}");
    let c = v["detectedLanguage"]["confidence"].as_f64().unwrap();
    assert!(c > 0.0 && c <= 100.0, "confidence on LibreTranslate's 0..100 scale: {v}");
    let v = s
        .post_json("/translate", &json!({"q": [SENTENCE, HTML], "source": "auto", "target": "en", "format": "html"}))
        .expect_json(200);
    let html_of_sentence = cli_translate(&s.dir, &s.models, "es", "en", &["--html"], &[SENTENCE]);
    assert_eq!(v["translatedText"], json!([html_of_sentence[0], f.html]));
    let d = v["detectedLanguage"].as_array().unwrap_or_else(|| panic!("{v}"));
    assert_eq!(d.len(), 2);
    assert!(d.iter().all(|d| d["language"] == "es"), "{v}");
    // alternatives asked for: an empty list (greedy decoding has none), never an error.
    let v = s
        .post_json("/translate", &json!({"q": "Hola", "source": "es", "target": "en", "alternatives": 3}))
        .expect_json(200);
    assert_eq!(v["alternatives"], json!([]), "{v}");

    // Errors in LibreTranslate's wording.
    assert_eq!(
        s.post_json("/translate", &json!({"source": "es", "target": "en"})).expect_error(400),
        "Invalid request: missing q parameter"
    );
    assert_eq!(
        s.post_json("/translate", &json!({"q": "Hola", "target": "en"})).expect_error(400),
        "Invalid request: missing source parameter"
    );
    assert_eq!(
        s.post_json("/translate", &json!({"q": "Hola", "source": "es"})).expect_error(400),
        "Invalid request: missing target parameter"
    );

    // /languages: code, name, targets (direct pairs here).
    let v = s.get("/languages").expect_json(200);
    assert_eq!(
        v,
        json!([{"code": "en", "name": "English", "targets": ["es"]}, {"code": "es", "name": "Spanish", "targets": ["en"]}])
    );
    // Some clients POST it.
    assert_eq!(s.send(Req::post("/languages").body("")).expect_json(200), v);

    // /detect, JSON and form (Dialect posts a form).
    for r in [s.post_json("/detect", &json!({"q": SENTENCE})), s.send(Req::post("/detect").form(&[("q", SENTENCE)]))] {
        let v = r.expect_json(200);
        let list = v.as_array().unwrap_or_else(|| panic!("a list: {v}"));
        assert_eq!(list.len(), 1, "{v}");
        assert_eq!(keys(&list[0]), ["confidence", "language"]);
        assert_eq!(list[0]["language"], "es");
        assert!(list[0]["confidence"].as_f64().unwrap() > 0.0);
    }
    assert_eq!(s.post_json("/detect", &json!({})).expect_error(400), "Invalid request: missing q parameter");

    // /frontend/settings (static, no key needed here) and /spec (Dialect checks info.title).
    let v = s.get("/frontend/settings").expect_json(200);
    for k in [
        "charLimit",
        "frontendTimeout",
        "apiKeys",
        "keyRequired",
        "suggestions",
        "filesTranslation",
        "supportedFilesFormat",
        "language",
    ] {
        assert!(v.get(k).is_some(), "{k} in {v}");
    }
    assert_eq!(v["apiKeys"], false);
    assert_eq!(v["keyRequired"], false);
    assert_eq!(v["suggestions"], false);
    assert_eq!(v["charLimit"], 20_000, "MAX_CHARS' default: {v}");
    assert_eq!(v["language"]["source"], json!({"code": "auto", "name": "Auto Detect"}));
    assert_eq!(v["language"]["target"], json!({"code": "es", "name": "Spanish"}));
    let v = s.get("/spec").expect_json(200);
    assert_eq!(v["info"]["title"], "LibreTranslate", "{v}");
    assert_eq!(v["swagger"], "2.0");
    assert!(v["paths"]["/translate"]["post"].is_object(), "{v}");

    // LibreTranslate's CORS headers on every response, and a preflight.
    for r in [s.get("/languages"), s.post_json("/translate", &json!({})), s.get("/nowhere")] {
        assert_eq!(r.header("access-control-allow-origin"), Some("*"), "{:?}", r.headers);
        assert!(r.header("access-control-allow-headers").unwrap_or("").contains("Authorization"));
        assert_eq!(r.header("access-control-allow-methods"), Some("GET, POST"));
    }
    let r = s.send(
        Req::new("OPTIONS", "/translate")
            .header("Origin", "https://app.example")
            .header("Access-Control-Request-Method", "POST"),
    );
    assert_eq!(r.status, 204);
    assert_eq!(r.header("access-control-allow-origin"), Some("*"));
    assert_eq!(r.header("access-control-max-age"), Some("1728000"));
}

#[test]
fn deepl_v2_form_json_languages_and_deeplx() {
    let f = fixture();
    let s = &f.server;

    // DeepL v2, form with `text` repeated: one translation per text, in order.
    let r = s.send(Req::post("/v2/translate").form(&[
        ("text", SENTENCE),
        ("text", POST),
        ("target_lang", "EN-US"),
        ("source_lang", "ES"),
    ]));
    assert_eq!(
        r.expect_json(200),
        json!({"translations": [
            {"detected_source_language": "ES", "text": f.sentence},
            {"detected_source_language": "ES", "text": f.post},
        ]})
    );
    // JSON array, no source_lang: identified.
    let v = s.post_json("/v2/translate", &json!({"text": [POST, SENTENCE], "target_lang": "EN"})).expect_json(200);
    assert_eq!(
        v,
        json!({"translations": [
            {"detected_source_language": "ES", "text": f.post},
            {"detected_source_language": "ES", "text": f.sentence},
        ]})
    );
    // One text in a form; MTranServer's /deepl alias; tag_handling html.
    let r = s.send(Req::post("/deepl").form(&[("text", SENTENCE), ("target_lang", "EN")]));
    assert_eq!(r.expect_json(200)["translations"], json!([{"detected_source_language": "ES", "text": f.sentence}]));
    let v = s
        .post_json(
            "/v2/translate",
            &json!({"text": [HTML], "target_lang": "EN", "source_lang": "ES", "tag_handling": "html"}),
        )
        .expect_json(200);
    assert_eq!(v["translations"][0]["text"], f.html);
    // DeepL's errors: {"message"}.
    let v = s.post_json("/v2/translate", &json!({"text": ["Hola"]})).expect_json(400);
    assert_eq!(v, json!({"message": "Parameter 'target_lang' not specified."}));
    let v = s.post_json("/v2/translate", &json!({"target_lang": "EN"})).expect_json(400);
    assert_eq!(v, json!({"message": "Parameter 'text' not specified."}));
    let v = s
        .post_json("/v2/translate", &json!({"text": ["Hola"], "target_lang": "EN", "tag_handling": "yaml"}))
        .expect_json(400);
    assert!(v["message"].as_str().unwrap().contains("tag_handling"), "{v}");
    let v = s.post_json("/v2/translate", &json!({"text": ["Hola"], "target_lang": "DE"})).expect_json(400);
    assert!(v["message"].as_str().unwrap().contains("DE is not supported"), "{v}");

    // /v2/languages: source (default) and target lists, DeepL's upper-case codes; targets with
    // supports_formality, English by variety (the client libraries refuse a bare EN target).
    let sources = json!([{"language": "EN", "name": "English"}, {"language": "ES", "name": "Spanish"}]);
    let targets = json!([
        {"language": "EN-GB", "name": "English (British)", "supports_formality": false},
        {"language": "EN-US", "name": "English (American)", "supports_formality": false},
        {"language": "ES", "name": "Spanish", "supports_formality": false},
    ]);
    assert_eq!(s.get("/v2/languages").expect_json(200), sources);
    assert_eq!(s.get("/v2/languages?type=source").expect_json(200), sources);
    assert_eq!(s.get("/v2/languages?type=target").expect_json(200), targets);
    // deepl-python sends the type as a form body of its GET.
    let r = s.send(Req::get("/v2/languages").form(&[("type", "target")]));
    assert_eq!(r.expect_json(200), targets);
    let v = s.get("/v2/languages?type=other").expect_json(400);
    assert!(v["message"].as_str().unwrap().contains("type"), "{v}");

    // DeepLX's free route, on /translate (told apart from LibreTranslate by `text`) and /deeplx.
    for path in ["/translate", "/deeplx"] {
        let v = s.post_json(path, &json!({"text": POST, "source_lang": "ES", "target_lang": "EN"})).expect_json(200);
        assert_eq!(
            keys(&v),
            ["alternatives", "code", "data", "id", "method", "source_lang", "target_lang"],
            "{path}: {v}"
        );
        assert_eq!(v["code"], 200);
        assert_eq!(v["data"], f.post);
        assert_eq!(v["alternatives"], json!([]));
        assert_eq!(v["source_lang"], "ES");
        assert_eq!(v["target_lang"], "EN");
        assert_eq!(v["method"], "Free");
        assert!(v["id"].is_u64(), "{v}");
    }
    // source_lang auto, and Kiss's DeepLX upper-case target.
    let v = s
        .post_json("/deeplx", &json!({"text": SENTENCE, "source_lang": "auto", "target_lang": "EN-US"}))
        .expect_json(200);
    assert_eq!((v["data"].as_str().unwrap(), v["source_lang"].as_str().unwrap()), (f.sentence.as_str(), "ES"), "{v}");
    // DeepLX's errors: {"code", "message"}.
    let v = s.post_json("/deeplx", &json!({"text": "Hola", "source_lang": "ES", "target_lang": "ZZ"})).expect_json(400);
    assert_eq!(keys(&v), ["code", "message"]);
    assert_eq!(v["code"], 400);
    assert!(v["message"].as_str().unwrap().contains("ZZ is not supported"), "{v}");
    let v =
        s.post_json("/translate", &json!({"text": "Hola", "source_lang": "ES", "target_lang": "ZZ"})).expect_json(400);
    assert_eq!(v["code"], 400, "DeepLX on /translate answers in its own shape: {v}");
}

#[test]
fn mtranserver_mozilla_immersive_kiss() {
    let f = fixture();
    let s = &f.server;

    // MTranServer: /translate with text + from/to, /translate/batch, /detect with text.
    let v = s.post_json("/translate", &json!({"from": "es", "to": "en", "text": POST})).expect_json(200);
    assert_eq!(v, json!({"result": f.post}));
    let v = s.post_json("/translate", &json!({"from": "es", "to": "en", "text": HTML, "html": true})).expect_json(200);
    assert_eq!(v, json!({"result": f.html}));
    let v =
        s.post_json("/translate/batch", &json!({"from": "es", "to": "en", "texts": [SENTENCE, POST]})).expect_json(200);
    assert_eq!(v, json!({"results": [f.sentence, f.post]}));
    assert_eq!(
        s.post_json("/translate/batch", &json!({"from": "es", "to": "en"})).expect_error(400),
        "Invalid request: missing texts parameter"
    );
    let v = s.post_json("/detect", &json!({"text": SENTENCE})).expect_json(200);
    assert_eq!(keys(&v), ["confidence", "language"]);
    assert_eq!(v["language"], "es");

    // mozilla/translation-service: /v1/translate with `text` → {"result"}; a bad request is an
    // empty 400.
    let v = s.post_json("/v1/translate", &json!({"from": "es", "to": "en", "text": POST})).expect_json(200);
    assert_eq!(v, json!({"result": f.post}));
    for bad in [
        json!({"from": "es", "to": "zz", "text": "Hola"}),
        json!({"from": "es", "text": "Hola"}),
        json!({"from": "es", "to": "en", "text": ["Hola"]}),
    ] {
        let r = s.post_json("/v1/translate", &bad);
        assert_eq!(r.status, 400, "{bad}: {}", r.text());
        assert!(r.body.is_empty(), "mozilla's 400 has no body: {bad}: {:?}", r.text());
        assert_eq!(r.header("content-length"), Some("0"));
    }

    // Immersive Translate: text_list, source auto; placeholder tags come back.
    let tagged = "<b0>Ella</b0> se negó a hacerlo.";
    let want_tagged = cli_translate(&s.dir, &s.models, "es", "en", &["--html"], &[tagged]);
    assert!(want_tagged[0].contains("<b0>") && want_tagged[0].contains("</b0>"), "{want_tagged:?}");
    let v = s
        .post_json("/imme", &json!({"source_lang": "auto", "target_lang": "en", "text_list": [SENTENCE, tagged, POST]}))
        .expect_json(200);
    assert_eq!(
        v,
        json!({"translations": [
            {"detected_source_lang": "es", "text": f.sentence},
            {"detected_source_lang": "es", "text": want_tagged[0]},
            {"detected_source_lang": "es", "text": f.post},
        ]})
    );
    let v = s
        .post_json("/imme?token=ignored", &json!({"source_lang": "es", "target_lang": "en-US", "text_list": [""]}))
        .expect_json(200);
    assert_eq!(v, json!({"translations": [{"detected_source_lang": "es", "text": ""}]}));
    assert_eq!(
        s.post_json("/imme", &json!({"target_lang": "en"})).expect_error(400),
        "Invalid request: missing text_list parameter"
    );

    // Kiss Translator: text → {text, src}; texts → {translations: [{text, src}]}.
    let v = s.post_json("/kiss", &json!({"text": POST, "from": "es", "to": "en"})).expect_json(200);
    assert_eq!(v, json!({"text": f.post, "src": "es"}));
    let v = s.post_json("/kiss", &json!({"texts": [SENTENCE, POST], "from": "auto", "to": "en"})).expect_json(200);
    assert_eq!(v, json!({"translations": [{"text": f.sentence, "src": "es"}, {"text": f.post, "src": "es"}]}));
    assert_eq!(
        s.post_json("/kiss", &json!({"from": "es", "to": "en"})).expect_error(400),
        "Invalid request: missing text parameter"
    );

    // Kiss sends `Authorization: Bearer ` with no key set: ignored when no token is configured,
    // as is any other Authorization value.
    for a in ["Bearer ", "Bearer something", "DeepL-Auth-Key x:fx", "raw"] {
        let r = s.send(
            Req::post("/kiss").header("Authorization", a).json(&json!({"text": SENTENCE, "from": "es", "to": "en"})),
        );
        assert_eq!(r.expect_json(200)["text"], f.sentence, "Authorization: {a:?}");
    }
    let r = s.send(Req::get("/v1/languages").header("Authorization", "Bearer "));
    assert_eq!(r.status, 200);
}

#[test]
fn operations_probes_version_metrics_and_the_page() {
    let s = Server::esen().start();
    s.translate("es", "en", &[SENTENCE, POST]);
    assert_eq!(s.post_json("/v1/translate", &json!({"from": "es", "to": "zz", "texts": ["x"]})).status, 400);

    assert_eq!(s.get("/ready").expect_json(200), json!({"status": "ready"}));
    assert_eq!(s.get("/readyz").expect_json(200), json!({"status": "ready"}));
    let r = s.get("/__heartbeat__");
    assert_eq!((r.status, r.text().as_str()), (200, "Ready"));
    assert!(r.header("content-type").unwrap().starts_with("text/plain"));
    let r = s.get("/__lbheartbeat__");
    assert_eq!(r.status, 200);
    assert!(r.body.is_empty(), "{:?}", r.text());
    let v = s.get("/__version__").expect_json(200);
    assert_eq!(keys(&v), ["build", "commit", "source", "version"], "Dockerflow's fields: {v}");
    assert_eq!(v["version"], env!("CARGO_PKG_VERSION"));
    assert_eq!(s.get("/version").expect_json(200), v);

    // HEAD: the headers of GET, no body.
    let r = s.send(Req::new("HEAD", "/health"));
    assert_eq!(r.status, 200);
    assert!(r.header("content-type").unwrap().starts_with("application/json"), "{:?}", r.headers);
    assert!(r.body.is_empty());
    let get = s.get("/languages");
    let r = s.send(Req::new("HEAD", "/languages"));
    assert_eq!(r.header("content-length"), Some(get.body.len().to_string().as_str()), "{:?}", r.headers);

    // The web page: one HTML file, no external assets, calling /v1/translate.
    let r = s.get("/");
    assert_eq!(r.status, 200);
    assert!(r.header("content-type").unwrap().starts_with("text/html"), "{:?}", r.headers);
    let page = r.text();
    assert!(page.to_ascii_lowercase().starts_with("<!doctype html>"), "{}", &page[..100.min(page.len())]);
    assert!(page.contains("/v1/translate") && page.contains("/v1/languages"), "the page calls the API");
    for external in ["src=\"http", "href=\"http", "src=\"//", "href=\"//", "@import"] {
        assert!(!page.contains(external), "the page loads an external asset ({external})");
    }
    assert_eq!(s.get("/index.html").text(), page);

    // /metrics: the Prometheus text format, with the families the issue names.
    let health_calls = 4;
    for _ in 0..health_calls {
        assert_eq!(s.get("/health").status, 200);
    }
    // And the HEAD above.
    let health_calls = health_calls + 1;
    let r = s.get("/metrics");
    assert_eq!(r.status, 200);
    assert!(r.header("content-type").unwrap().starts_with("text/plain; version=0.0.4"), "{:?}", r.headers);
    let text = r.text();
    assert!(text.ends_with('\n'), "the last line ends in \\n");
    for family in [
        ("reseam_http_requests_total", "counter"),
        ("reseam_http_request_duration_seconds", "histogram"),
        ("reseam_translate_texts_total", "counter"),
        ("reseam_translate_chars_total", "counter"),
        ("reseam_translate_duration_seconds", "histogram"),
        ("reseam_queue_depth", "gauge"),
        ("reseam_inflight_requests", "gauge"),
        ("reseam_models_loaded", "gauge"),
        ("reseam_resident_memory_bytes", "gauge"),
        ("reseam_mapped_memory_bytes", "gauge"),
        ("reseam_build_info", "gauge"),
    ] {
        assert_eq!(text.matches(&format!("# TYPE {} {}\n", family.0, family.1)).count(), 1, "{family:?}:\n{text}");
        assert_eq!(text.matches(&format!("# HELP {} ", family.0)).count(), 1, "{family:?}");
    }
    let sample = |line_start: &str| -> f64 {
        text.lines()
            .find(|l| l.starts_with(line_start))
            .and_then(|l| l.rsplit(' ').next())
            .and_then(|v| v.parse().ok())
            .unwrap_or_else(|| panic!("no sample {line_start}:\n{text}"))
    };
    assert_eq!(sample("reseam_http_requests_total{route=\"health\",code=\"200\"} "), health_calls as f64);
    assert_eq!(sample("reseam_http_requests_total{route=\"v1_translate\",code=\"200\"} "), 1.0);
    assert_eq!(sample("reseam_http_requests_total{route=\"v1_translate\",code=\"400\"} "), 1.0);
    assert_eq!(sample("reseam_translate_texts_total{src=\"es\",tgt=\"en\"} "), 2.0);
    assert_eq!(sample("reseam_translate_chars_total{src=\"es\",tgt=\"en\"} "), (SENTENCE.len() + POST.len()) as f64);
    assert_eq!(
        sample("reseam_http_request_duration_seconds_bucket{route=\"v1_translate\",le=\"+Inf\"} "),
        sample("reseam_http_request_duration_seconds_count{route=\"v1_translate\"} ")
    );
    assert_eq!(sample("reseam_http_request_duration_seconds_count{route=\"v1_translate\"} "), 2.0);
    assert_eq!(sample("reseam_translate_duration_seconds_count{src=\"es\",tgt=\"en\"} "), 1.0);
    assert_eq!(sample("reseam_inflight_requests "), 0.0);
    assert_eq!(sample("reseam_queue_depth "), 0.0);
    assert_eq!(sample("reseam_models_loaded "), 1.0);
    assert!(sample("reseam_resident_memory_bytes ") > 1e6);
    assert!(text.contains(&format!("reseam_build_info{{version=\"{}\",", env!("CARGO_PKG_VERSION"))), "{text}");
    // Cumulative buckets, in increasing order.
    let buckets: Vec<f64> = text
        .lines()
        .filter(|l| l.starts_with("reseam_http_request_duration_seconds_bucket{route=\"v1_translate\""))
        .map(|l| l.rsplit(' ').next().unwrap().parse().unwrap())
        .collect();
    assert!(buckets.len() > 3 && buckets.windows(2).all(|w| w[0] <= w[1]), "{buckets:?}");
}

#[test]
fn pivot_through_english() {
    // ca→en is the fixture's es→en model under another name; en→es the base-enes fixture.
    let s = Server::builder().pair("ca-en", "tiny-esen").pair("en-es", "base-enes").start();
    let texts = [SENTENCE, POST];
    let want = cli_translate(&s.dir, &s.models, "ca", "es", &[], &texts);
    assert_eq!(s.translate("ca", "es", &texts), want);
    // One sentence alone: its second stage is then the engine's only work.
    assert_eq!(cli_translate(&s.dir, &s.models, "ca", "es", &[], &[SENTENCE]), want[..1]);
    assert_eq!(s.translate("ca", "es", &[SENTENCE]), want[..1]);
    let v = s.post_json("/translate", &json!({"q": SENTENCE, "source": "ca", "target": "es"})).expect_json(200);
    assert_eq!(v["translatedText"], want[0]);
    let v = s.post_json("/translate", &json!({"q": [SENTENCE], "source": "ca", "target": "es"})).expect_json(200);
    assert_eq!(v["translatedText"], json!([want[0]]));
    // LibreTranslate's targets count the pivot; the seed's list names only the installed pairs.
    let v = s.get("/languages").expect_json(200);
    let ca = v.as_array().unwrap().iter().find(|l| l["code"] == "ca").unwrap_or_else(|| panic!("{v}"));
    assert_eq!(ca["targets"], json!(["en", "es"]), "{v}");
    let l = s.get("/v1/languages").expect_json(200);
    let mut pairs: Vec<(String, String)> = serde_json::from_value(l["pairs"].clone()).unwrap();
    pairs.sort();
    assert_eq!(pairs, [("ca".into(), "en".into()), ("en".into(), "es".into())]);
    // No way from es to ca: 400 naming both.
    let e = s.post_json("/v1/translate", &json!({"from": "es", "to": "ca", "texts": ["Hola"]})).expect_error(400);
    assert!(e.contains("(ca) is not available as a target language from") && e.contains("(es)"), "{e}");
}

#[test]
fn settings_from_the_environment_and_preload() {
    // Without PRELOAD, models load on first use.
    let s = Server::esen().start();
    assert_eq!(s.get("/health").json()["pairs_loaded"], 0);
    s.translate("es", "en", &[SENTENCE]);
    assert_eq!(s.get("/health").json()["pairs_loaded"], 1);
    drop(s);

    // The seed's settings as environment variables.
    let s = Server::esen()
        .env("PRELOAD", "1")
        .env("MAX_TEXTS", "2")
        .env("MAX_CHARS", "300")
        .env("MAX_BATCH", "8")
        .env("HTTP_THREADS", "2")
        .env("IDLE_SECONDS", "0")
        .env("THREADS", "2")
        // (the address is read from an info line, so not above info)
        .env("LOG_LEVEL", "INFO")
        .start();
    assert_eq!(s.get("/health").json()["threads"], 2);
    // /ready was 200 only once the model was loaded.
    assert_eq!(s.get("/health").json()["pairs_loaded"], 1, "{}", s.log());
    s.wait_log("info ready: 1 models loaded");
    assert_eq!(s.metric("reseam_models_loaded"), 1.0);
    let e =
        s.post_json("/v1/translate", &json!({"from": "es", "to": "en", "texts": ["a", "b", "c"]})).expect_error(413);
    assert!(e.contains("exceeds text limit (2)"), "{e}");
    let e =
        s.post_json("/v1/translate", &json!({"from": "es", "to": "en", "texts": ["a".repeat(301)]})).expect_error(413);
    assert!(e.contains("exceeds character limit (300)"), "{e}");
    assert_eq!(s.get("/frontend/settings").json()["charLimit"], 300);
    assert_eq!(s.translate("es", "en", &[SENTENCE, POST]).len(), 2);
}
