//! TRANSLATE_TOKEN from the environment, a file or systemd's credential; every form clients
//! send it in; 401, or 403 where LibreTranslate and DeepL use it; the public routes open.

use serde_json::json;

use super::client::Req;
use super::server::Server;
use crate::common::TestDir;

const TOKEN: &str = "s3cret-Tok_en.42";

fn translate_body() -> serde_json::Value {
    json!({"from": "es", "to": "en", "texts": ["Hola"]})
}

#[test]
fn every_token_form_and_the_public_routes() {
    let s = Server::esen().env("TRANSLATE_TOKEN", TOKEN).start();
    assert!(s.log().contains("token required"), "the start line says a token is needed:\n{}", s.log());
    let want = {
        let r = s.send(
            Req::post("/v1/translate").header("Authorization", &format!("Bearer {TOKEN}")).json(&translate_body()),
        );
        r.expect_json(200)["translations"][0].as_str().unwrap().to_string()
    };
    let ok = |r: super::client::Resp, what: &str| {
        assert_eq!(r.status, 200, "{what}: {}", r.text());
    };

    // The seed's route: Bearer (any case), a raw Authorization value, X-API-Token, the query.
    for (name, value) in [
        ("Authorization", format!("Bearer {TOKEN}")),
        ("Authorization", format!("bearer {TOKEN}")),
        ("Authorization", TOKEN.to_string()),
        ("Authorization", format!("DeepL-Auth-Key {TOKEN}")),
        ("X-API-Token", TOKEN.to_string()),
    ] {
        let r = s.send(Req::post("/v1/translate").header(name, &value).json(&translate_body()));
        assert_eq!(r.expect_json(200)["translations"][0], want, "{name}: {value}");
    }
    ok(s.send(Req::post(&format!("/v1/translate?token={TOKEN}")).json(&translate_body())), "?token=");
    ok(
        s.send(
            Req::post(&format!("/translate/batch?api_token={TOKEN}"))
                .json(&json!({"from": "es", "to": "en", "texts": ["Hola"]})),
        ),
        "?api_token=",
    );
    // Immersive Translate's URL token.
    ok(
        s.send(
            Req::post(&format!("/imme?token={TOKEN}"))
                .json(&json!({"source_lang": "es", "target_lang": "en", "text_list": ["Hola"]})),
        ),
        "/imme?token=",
    );
    // MTranServer: X-API-Token, or Zotero's raw Authorization.
    ok(
        s.send(
            Req::post("/translate")
                .header("X-API-Token", TOKEN)
                .json(&json!({"from": "es", "to": "en", "text": "Hola"})),
        ),
        "X-API-Token",
    );
    ok(
        s.send(
            Req::post("/translate")
                .header("Authorization", TOKEN)
                .json(&json!({"from": "es", "to": "en", "text": "Hola"})),
        ),
        "raw",
    );
    // LibreTranslate: api_key in a JSON body and in a form body.
    let r = s.post_json("/translate", &json!({"q": "Hola", "source": "es", "target": "en", "api_key": TOKEN}));
    assert_eq!(r.expect_json(200), json!({"translatedText": want}));
    let r =
        s.send(Req::post("/translate").form(&[("q", "Hola"), ("source", "es"), ("target", "en"), ("api_key", TOKEN)]));
    assert_eq!(r.expect_json(200), json!({"translatedText": want}));
    ok(s.send(Req::post("/detect").form(&[("q", "Hola, ¿qué tal?"), ("api_key", TOKEN)])), "/detect api_key");
    ok(s.send(Req::get(&format!("/languages?api_key={TOKEN}"))), "/languages?api_key=");
    // DeepL: DeepL-Auth-Key.
    let r = s.send(
        Req::post("/v2/translate")
            .header("Authorization", &format!("DeepL-Auth-Key {TOKEN}"))
            .form(&[("text", "Hola"), ("target_lang", "EN")]),
    );
    assert_eq!(r.expect_json(200)["translations"][0]["text"], want);
    ok(s.send(Req::get("/v2/languages").header("Authorization", &format!("DeepL-Auth-Key {TOKEN}"))), "/v2/languages");
    // Kiss and DeepLX: Bearer.
    ok(
        s.send(
            Req::post("/kiss")
                .header("Authorization", &format!("Bearer {TOKEN}"))
                .json(&json!({"text": "Hola", "from": "es", "to": "en"})),
        ),
        "kiss",
    );
    ok(
        s.send(
            Req::post("/deeplx")
                .header("Authorization", &format!("Bearer {TOKEN}"))
                .json(&json!({"text": "Hola", "source_lang": "ES", "target_lang": "EN"})),
        ),
        "deeplx",
    );
    ok(s.send(Req::get("/metrics").header("Authorization", &format!("Bearer {TOKEN}"))), "/metrics");
    ok(s.send(Req::get("/v1/languages").header("X-API-Token", TOKEN)), "/v1/languages");
    // One right token among others is enough.
    ok(
        s.send(
            Req::post(&format!("/v1/translate?token={TOKEN}"))
                .header("Authorization", "Bearer ")
                .json(&translate_body()),
        ),
        "empty Bearer + query",
    );

    // Missing or wrong: 401 on the seed's and most routes, with WWW-Authenticate.
    for (headers, query, wrong) in [
        (vec![], "", false),
        (vec![("Authorization", "Bearer ")], "", false),
        (vec![("Authorization", "Bearer")], "", false),
        (vec![("Authorization", "Bearer nope")], "", true),
        (vec![("Authorization", &format!("Bearer {TOKEN}x") as &str)], "", true),
        (vec![("Authorization", &TOKEN[..TOKEN.len() - 1])], "", true),
        (vec![("X-API-Token", "nope")], "", true),
        (vec![], "?token=nope", true),
        (vec![], &format!("?api_token={}", TOKEN.to_uppercase()) as &str, true),
    ] {
        let mut req = Req::post(&format!("/v1/translate{query}")).json(&translate_body());
        for (k, v) in &headers {
            req = req.header(k, v);
        }
        let r = s.send(req);
        let e = r.expect_error(401);
        assert_eq!(r.header("www-authenticate"), Some("Bearer realm=\"reseam\""));
        let want = if wrong {
            "Unauthorized: the token is wrong"
        } else {
            "Unauthorized: this server needs a token (Authorization: Bearer <token>)"
        };
        assert_eq!(e, want, "{headers:?} {query}");
    }
    for path in ["/v1/languages", "/metrics"] {
        s.get(path).expect_error(401);
    }
    for (path, body) in [
        ("/translate/batch", json!({"from": "es", "to": "en", "texts": ["Hola"]})),
        ("/imme", json!({"source_lang": "es", "target_lang": "en", "text_list": ["Hola"]})),
        ("/kiss", json!({"text": "Hola", "from": "es", "to": "en"})),
        ("/translate", json!({"from": "es", "to": "en", "text": "Hola"})),
    ] {
        s.post_json(path, &body).expect_error(401);
        s.send(Req::post(path).header("Authorization", "Bearer nope").json(&body)).expect_error(401);
    }
    // DeepLX: 401 in its shape, on its own route and on the /translate it shares with
    // LibreTranslate; MTranServer's /detect body, 401 too.
    for path in ["/deeplx", "/translate"] {
        let v = s.post_json(path, &json!({"text": "Hola", "source_lang": "ES", "target_lang": "EN"})).expect_json(401);
        assert_eq!(v["code"], 401, "{path}: {v}");
        assert!(v["message"].as_str().unwrap().starts_with("Unauthorized"), "{path}: {v}");
    }
    s.post_json("/detect", &json!({"text": "Hola"})).expect_error(401);
    // LibreTranslate: 403 and its wording (Dialect looks for "Invalid API key").
    let e = s.post_json("/translate", &json!({"q": "Hola", "source": "es", "target": "en"})).expect_error(403);
    assert_eq!(e, "Please contact the server operator to get an API key");
    let e = s
        .post_json("/translate", &json!({"q": "Hola", "source": "es", "target": "en", "api_key": "nope"}))
        .expect_error(403);
    assert_eq!(e, "Invalid API key");
    let e = s
        .send(Req::post("/translate").form(&[("q", "Hola"), ("source", "es"), ("target", "en"), ("api_key", "nope")]))
        .expect_error(403);
    assert_eq!(e, "Invalid API key");
    assert_eq!(
        s.send(Req::post("/detect").form(&[("q", "Hola")])).expect_error(403),
        "Please contact the server operator to get an API key"
    );
    // LibreTranslate's language list is open, as LibreTranslate serves it: Mastodon asks for it
    // without a key.
    let v = s.get("/languages").expect_json(200);
    assert!(v.as_array().is_some_and(|l| !l.is_empty()), "{v}");
    // DeepL: 403, {"message"}.
    for auth in [None, Some("DeepL-Auth-Key nope"), Some("DeepL-Auth-Key ")] {
        let mut req = Req::post("/v2/translate").form(&[("text", "Hola"), ("target_lang", "EN")]);
        if let Some(a) = auth {
            req = req.header("Authorization", a);
        }
        let v = s.send(req).expect_json(403);
        assert!(v["message"].is_string(), "{auth:?}: {v}");
    }
    s.get("/v2/languages").expect_json(403);
    // The token is checked before the body's fields: a bad body without the token is still 401.
    s.send(Req::post("/v1/translate").header("Content-Type", "application/json").body("{")).expect_error(401);

    // Public: probes, the version, the page, LibreTranslate's static descriptions.
    for path in
        ["/health", "/ready", "/__heartbeat__", "/__lbheartbeat__", "/__version__", "/", "/spec", "/frontend/settings"]
    {
        let r = s.get(path);
        assert_eq!(r.status, 200, "{path} without a token: {}", r.text());
    }
    let v = s.get("/frontend/settings").expect_json(200);
    assert_eq!((v["apiKeys"].clone(), v["keyRequired"].clone()), (json!(true), json!(true)), "{v}");
}

#[test]
fn token_from_a_file_and_from_systemd_credentials() {
    // TRANSLATE_TOKEN_FILE: the file's content, surrounding whitespace ignored.
    let dir = TestDir::new();
    let file = dir.path().join("token");
    std::fs::write(&file, "  from-the-file\n").unwrap();
    let s = Server::esen().env("TRANSLATE_TOKEN_FILE", file.to_str().unwrap()).start_in(dir);
    s.post_json("/v1/translate", &translate_body()).expect_error(401);
    let r = s.send(Req::post("/v1/translate").header("Authorization", "Bearer from-the-file").json(&translate_body()));
    assert_eq!(r.status, 200, "{}", r.text());
    let r =
        s.send(Req::post("/v1/translate").header("Authorization", "Bearer   from-the-file  ").json(&translate_body()));
    assert_eq!(r.status, 200, "spaces around the token are not part of it: {}", r.text());
    drop(s);

    // $CREDENTIALS_DIRECTORY/translate-token (systemd's LoadCredential=).
    let dir = TestDir::new();
    let creds = dir.path().join("creds");
    std::fs::create_dir(&creds).unwrap();
    std::fs::write(creds.join("translate-token"), "from-systemd\n").unwrap();
    let s = Server::esen().env("CREDENTIALS_DIRECTORY", creds.to_str().unwrap()).start_in(dir);
    s.post_json("/v1/translate", &translate_body()).expect_error(401);
    let r = s.send(Req::post("/v1/translate").header("X-API-Token", "from-systemd").json(&translate_body()));
    assert_eq!(r.status, 200, "{}", r.text());
    drop(s);

    // The environment's token comes first; the credential folder without the file is no token.
    let dir = TestDir::new();
    let creds = dir.path().join("creds");
    std::fs::create_dir(&creds).unwrap();
    std::fs::write(creds.join("translate-token"), "from-systemd\n").unwrap();
    let s = Server::esen()
        .env("CREDENTIALS_DIRECTORY", creds.to_str().unwrap())
        .env("TRANSLATE_TOKEN", "from-env")
        .start_in(dir);
    s.send(Req::post("/v1/translate").header("X-API-Token", "from-systemd").json(&translate_body())).expect_error(401);
    let r = s.send(Req::post("/v1/translate").header("X-API-Token", "from-env").json(&translate_body()));
    assert_eq!(r.status, 200, "{}", r.text());
    drop(s);

    // A token file that cannot be read, or is empty: the server does not start (exit 2, named).
    let t = TestDir::new();
    let models = t.path().join("models");
    super::server::install(&models, "es-en", "tiny-esen");
    let empty = t.path().join("empty");
    std::fs::write(&empty, "\n").unwrap();
    for (file, named) in [(t.path().join("missing"), "missing"), (empty, "empty")] {
        let mut c = t.cmd();
        c.args(["serve", "--host", "127.0.0.1", "--port", "0", "--models"]).arg(&models).arg("--token-file").arg(&file);
        c.env_remove("TRANSLATE_TOKEN");
        let out = t.run(c, b"");
        let err = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(2), "{err}");
        assert!(err.contains(named) && err.contains(file.to_str().unwrap()), "{err}");
    }
}
