//! DeepL's API v2 as its official client libraries call it (issue 51): the bodies deepl-python
//! (JSON) and deepl-node (form) send, the fields they read (`billed_characters`,
//! `model_type_used`), `/v2/usage`, the glossary and document routes answered as DeepL answers
//! for what does not exist, and what cannot be honoured refused in DeepL's shape. tests/clients/run
//! drives the libraries themselves. Also the two lenient inputs of issue 49.

use serde_json::{Value, json};

use super::client::Req;
use super::server::{Server, cli_translate};

const TOKEN: &str = "deepl-key-51";
/// Two sentences, non-ASCII (billed characters are code points, not bytes).
const TEXT: &str = "¿Conocen la película? Ella se negó a hacerlo.";
const SENTENCE: &str = "Espero que esto pueda entrar en vigor en julio de 2010.";

fn auth(r: Req) -> Req {
    r.header("Authorization", &format!("DeepL-Auth-Key {TOKEN}"))
}

fn usage(s: &Server) -> Value {
    s.send(auth(Req::get("/v2/usage"))).expect_json(200)
}

#[test]
fn what_the_client_libraries_send_and_read() {
    let s = Server::esen().env("TRANSLATE_TOKEN", TOKEN).start();
    let want = cli_translate(&s.dir, &s.models, "es", "en", &[], &[TEXT, SENTENCE]);
    let unsplit = cli_translate(&s.dir, &s.models, "es", "en", &["--no-split"], &[TEXT]);
    assert_eq!(usage(&s), json!({"character_count": 0, "character_limit": 1_000_000_000_000u64}));

    // deepl-python: JSON, show_billed_characters and the options as booleans and lists.
    let body = json!({
        "text": [TEXT, SENTENCE], "target_lang": "EN-US", "show_billed_characters": true,
        "preserve_formatting": true, "split_sentences": "1", "formality": "prefer_more",
        "model_type": "prefer_quality_optimized", "context": "Una conversación.",
        "ignore_tags": ["code"], "non_splitting_tags": ["b"], "splitting_tags": ["p"], "outline_detection": false,
    });
    let v = s.send(auth(Req::post("/v2/translate")).json(&body)).expect_json(200);
    let billed = [TEXT.chars().count(), SENTENCE.chars().count()];
    assert_ne!(billed[0], TEXT.len(), "the text has non-ASCII letters");
    assert_eq!(
        v,
        json!({"translations": [
            {"detected_source_language": "ES", "text": want[0], "billed_characters": billed[0], "model_type_used": "latency_optimized"},
            {"detected_source_language": "ES", "text": want[1], "billed_characters": billed[1], "model_type_used": "latency_optimized"},
        ]})
    );
    // deepl-node: a form, 1/0 flags, comma-joined tags; split_sentences=0 is each line one sentence.
    let r = s.send(auth(Req::post("/v2/translate")).form(&[
        ("target_lang", "en-US"),
        ("source_lang", "es"),
        ("show_billed_characters", "1"),
        ("text", TEXT),
        ("split_sentences", "0"),
        ("ignore_tags", "code,pre"),
    ]));
    assert_eq!(
        r.expect_json(200),
        json!({"translations": [{"detected_source_language": "ES", "text": unsplit[0], "billed_characters": billed[0]}]})
    );
    // Without show_billed_characters or model_type, neither field; usage counts every request.
    let v = s.send(auth(Req::post("/v2/translate")).form(&[("target_lang", "EN-GB"), ("text", SENTENCE)]));
    assert_eq!(v.expect_json(200), json!({"translations": [{"detected_source_language": "ES", "text": want[1]}]}));
    let total = (billed[0] + billed[1]) + billed[0] + billed[1];
    assert_eq!(usage(&s)["character_count"], total);
    let r = s.send(auth(Req::post("/v2/usage")));
    assert_eq!(r.expect_json(200)["character_count"], total, "deepl-mock and DeepL answer POST too");

    // What cannot be honoured: DeepL's 400 and wording, which the libraries raise as their
    // DeepLException / DeepLError with the message.
    for (fields, message) in [
        (vec![("formality", "more")], "Target language 'EN-US' doesn't support formality."),
        (vec![("formality", "sometimes")], "Value for 'formality' not supported."),
        (vec![("tag_handling", "xml")], "Value for 'tag_handling' not supported: xml (this server handles html only)"),
        (vec![("glossary_id", "not-a-uuid"), ("source_lang", "ES")], "Value for 'glossary_id' not supported."),
        (
            vec![("glossary_id", "0a6c701e-303a-41ba-a167-857c5b720a4c"), ("source_lang", "ES")],
            "Glossary not found: 0a6c701e-303a-41ba-a167-857c5b720a4c (this server has no glossaries)",
        ),
    ] {
        let mut all = vec![("text", "Hola"), ("target_lang", "EN-US")];
        all.extend(fields.iter().copied());
        let v = s.send(auth(Req::post("/v2/translate")).form(&all)).expect_json(400);
        assert_eq!(v, json!({"message": message}), "{fields:?}");
    }
    for (key, value) in [
        ("model_type", json!("quality_optimized")),
        ("ignore_tags", json!(["x"])),
        ("splitting_tags", json!(["em"])),
        ("custom_instructions", json!(["Be brief."])),
        ("style_id", json!("s1")),
    ] {
        let mut body = json!({"text": ["Hola"], "target_lang": "EN-US"});
        body[key] = value;
        let v = s.send(auth(Req::post("/v2/translate")).json(&body)).expect_json(400);
        assert!(v["message"].as_str().unwrap().starts_with(&format!("Value for '{key}' not supported")), "{v}");
    }
    assert_eq!(usage(&s)["character_count"], total, "refused requests bill nothing");
}

#[test]
fn glossaries_documents_auth_and_what_a_bad_key_gets() {
    let s = Server::esen().env("TRANSLATE_TOKEN", TOKEN).start();
    assert_eq!(
        s.send(auth(Req::get("/v2/glossary-language-pairs"))).expect_json(200),
        json!({"supported_languages": []})
    );
    assert_eq!(s.send(auth(Req::get("/v2/glossaries"))).expect_json(200), json!({"glossaries": []}));
    // A glossary by id, its entries, deleting it: 404, the libraries' GlossaryNotFound.
    for (method, path) in [
        ("GET", "/v2/glossaries/0a6c701e-303a-41ba-a167-857c5b720a4c"),
        ("GET", "/v2/glossaries/0a6c701e-303a-41ba-a167-857c5b720a4c/entries"),
        ("DELETE", "/v2/glossaries/0a6c701e-303a-41ba-a167-857c5b720a4c"),
    ] {
        let v = s.send(auth(Req::new(method, path))).expect_json(404);
        assert_eq!(v, json!({"message": "Glossary not found"}), "{method} {path}");
    }
    let r = s.send(auth(Req::post("/v2/glossaries")).form(&[("name", "g"), ("entries", "a\tb")]));
    assert!(r.expect_json(400)["message"].as_str().unwrap().starts_with("Glossaries are not supported"));
    // A document upload (multipart, as the libraries send it) is refused without reading it.
    let r =
        s.send(auth(Req::post("/v2/document")).header("Content-Type", "multipart/form-data; boundary=xyz").body(
            "--xyz\r\nContent-Disposition: form-data; name=\"file\"; filename=\"a.txt\"\r\n\r\nHola\r\n--xyz--\r\n",
        ));
    assert!(r.expect_json(400)["message"].as_str().unwrap().starts_with("Document translation is not supported"));
    let r = s.send(auth(Req::post("/v2/document/ABC/result")).form(&[("document_key", "K")]));
    assert_eq!(r.expect_json(404), json!({"message": "Document not found"}));
    assert_eq!(s.send(auth(Req::new("PUT", "/v2/usage"))).status, 405);
    // deepl-python's multilingual glossaries (v3): none, and none found.
    assert_eq!(s.send(auth(Req::get("/v3/glossaries"))).expect_json(200), json!({"glossaries": []}));
    let v = s.send(auth(Req::get("/v3/glossaries/0a6c701e-303a-41ba-a167-857c5b720a4c"))).expect_json(404);
    assert_eq!(v, json!({"message": "Glossary not found"}));
    // DeepL's other endpoints (Write, style rules...): 404 in its shape, after the key.
    for path in ["/v2/write/rephrase", "/v2/nothing"] {
        let v = s.send(auth(Req::post(path)).form(&[("text", "Hola")])).expect_json(404);
        assert!(v["message"].as_str().unwrap().starts_with("Not found"), "{path}: {v}");
        assert_eq!(s.send(Req::post(path)).status, 403, "{path} without the key");
    }

    // Without the key, or a wrong one: 403 (the libraries' AuthorizationException) in DeepL's
    // shape, on every DeepL route.
    for path in ["/v2/usage", "/v2/languages", "/v2/glossary-language-pairs", "/v2/glossaries", "/v2/glossaries/x"] {
        for key in [None, Some("DeepL-Auth-Key wrong")] {
            let mut req = Req::get(path);
            if let Some(k) = key {
                req = req.header("Authorization", k);
            }
            let v = s.send(req).expect_json(403);
            assert!(v["message"].is_string(), "{path} {key:?}: {v}");
        }
    }
    let r =
        s.send(Req::post("/v2/document").header("Content-Type", "multipart/form-data; boundary=xyz").body("--xyz--"));
    assert!(r.expect_json(403)["message"].is_string());
}

#[test]
fn issue_49_lenient_inputs_are_refused() {
    let s = Server::esen().start();
    // mozilla/translation-service: `text` must be a string. Its dialect answers an empty 400;
    // the reason is in a header.
    for bad in [json!({"from": "es", "to": "en", "text": 5}), json!({"from": "es", "to": "en", "text": true})] {
        let r = s.post_json("/v1/translate", &bad);
        assert_eq!(r.status, 400, "{bad}: {}", r.text());
        assert!(r.body.is_empty(), "{bad}");
        assert_eq!(r.header("x-reseam-error"), Some("Invalid request: text must be a string"), "{bad}");
    }
    // MTranServer's batch: `texts` must be an array.
    for bad in [json!("Hola"), json!(5)] {
        let body = json!({"from": "es", "to": "en", "texts": bad});
        let e = s.post_json("/translate/batch", &body).expect_error(400);
        assert!(e.contains("texts must be"), "{body}: {e}");
    }
    // The right shapes still work.
    let v = s.post_json("/translate/batch", &json!({"from": "es", "to": "en", "texts": ["Hola"]})).expect_json(200);
    assert_eq!(v["results"].as_array().map(Vec::len), Some(1));
    assert_eq!(s.post_json("/v1/translate", &json!({"from": "es", "to": "en", "text": "Hola"})).status, 200);
}
