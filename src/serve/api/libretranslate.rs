//! LibreTranslate 1.9.6's API as its clients use it (Mastodon, Dialect, libretranslatepy,
//! Linguist, SearXNG, Zotero): `POST /translate`, `POST /detect`, `GET /languages`,
//! `GET /frontend/settings`, `GET /spec`; JSON or form bodies; errors as `{"error"}`.

use serde_json::{Value, json};

use super::{Body, Reply};
use crate::detect::Detection;
use crate::serve::core::{ApiRequest, Core};
use crate::serve::error::ApiError;
use crate::serve::lang_codes;
use crate::serve::params::Params;

/// The version `/spec` reports: the LibreTranslate API this server speaks.
const SPEC_VERSION: &str = "1.9.6";

/// LibreTranslate's detection object; with nothing to identify it answers English with
/// confidence 0, which its clients expect.
fn detection(d: &Detection) -> Value {
    if d.is_determined() {
        json!({ "confidence": (d.confidence * 1000.0).round() / 10.0, "language": d.language })
    } else {
        json!({ "confidence": 0.0, "language": "en" })
    }
}

pub fn translate(core: &Core, p: &Params) -> Result<Reply, ApiError> {
    let (mut texts, list) = p.texts("q")?.ok_or_else(|| ApiError::missing("q"))?;
    let source = p.str("source")?.ok_or_else(|| ApiError::missing("source"))?;
    let target = p.str("target")?.ok_or_else(|| ApiError::missing("target"))?;
    if !p.is_json() {
        // As LibreTranslate: a form's line endings are normalised to \n.
        for t in &mut texts {
            *t = t.lines().collect::<Vec<_>>().join("\n");
        }
    }
    let html = match p.str("format")?.as_deref() {
        None | Some("text") => false,
        Some("html") => true,
        Some(other) => return Err(ApiError::bad_request(format!("{other} format is not supported"))),
    };
    let alternatives = match p.str("alternatives")? {
        None => 0,
        Some(a) => {
            a.parse::<u64>().map_err(|_| ApiError::bad_request("Invalid request: alternatives must be a number"))?
        }
    };
    let auto = source.trim().eq_ignore_ascii_case("auto");
    let job = ApiRequest { from: Some(source), to: target, texts, html, split_sentences: None };
    let out = core.translate(&job)?;
    let mut body = if list {
        json!({ "translatedText": out.translations })
    } else {
        json!({ "translatedText": out.translations.first().cloned().unwrap_or_default() })
    };
    if auto {
        let d: Vec<Value> = out.detected.iter().map(|d| d.as_ref().map(detection).unwrap_or(Value::Null)).collect();
        body["detectedLanguage"] = if list { Value::Array(d) } else { d.into_iter().next().unwrap_or(Value::Null) };
    }
    if alternatives > 0 {
        // reseam decodes greedily, as Firefox: there are no alternatives to give.
        body["alternatives"] = if list { json!(vec![Vec::<String>::new(); job.texts.len()]) } else { json!([]) };
    }
    Ok(Reply::json(body).counted(&job.texts))
}

pub fn detect(core: &Core, p: &Params) -> Result<Reply, ApiError> {
    let (texts, _) = p.texts("q")?.ok_or_else(|| ApiError::missing("q"))?;
    core.check_limits(&texts)?;
    let found = core.detect(&[texts.join("\n")], false)?;
    Ok(Reply::json(json!([detection(&found[0])])))
}

pub fn languages(core: &Core) -> Reply {
    let models = core.models();
    let list: Vec<Value> = models
        .languages
        .iter()
        .map(|code| json!({ "code": code, "name": lang_codes::name(code), "targets": models.targets(code) }))
        .collect();
    Reply::json(Value::Array(list))
}

pub fn settings(core: &Core) -> Reply {
    let models = core.models();
    let target = models.languages.iter().find(|l| *l != "en").cloned().unwrap_or_else(|| "en".into());
    Reply::json(json!({
        "charLimit": core.limits.max_chars,
        "frontendTimeout": 500,
        "apiKeys": core.token_required,
        "keyRequired": core.token_required,
        "suggestions": false,
        "filesTranslation": false,
        "supportedFilesFormat": [],
        "language": {
            "source": { "code": "auto", "name": "Auto Detect" },
            "target": { "code": target, "name": lang_codes::name(&target) },
        },
    }))
}

/// A Swagger 2.0 description of the routes above; clients check `info.title`.
pub fn spec() -> Reply {
    let post = |summary: &str| json!({ "post": { "summary": summary, "consumes": ["application/json", "application/x-www-form-urlencoded"], "produces": ["application/json"] } });
    let get = |summary: &str| json!({ "get": { "summary": summary, "produces": ["application/json"] } });
    Reply {
        status: 200,
        body: Body::Json(json!({
            "swagger": "2.0",
            "info": { "title": "LibreTranslate", "version": SPEC_VERSION, "description": "reseam serve: Firefox Translations models" },
            "basePath": "/",
            "paths": {
                "/translate": post("Translate text"),
                "/detect": post("Detect the language of a single text"),
                "/languages": get("Retrieve list of supported languages"),
                "/frontend/settings": get("Retrieve frontend specific settings"),
            },
        })),
        texts: 0,
        chars: 0,
    }
}
