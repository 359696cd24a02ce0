//! DeepL's API v2 as its official client libraries (deepl-python, deepl-node) call and parse it,
//! and DeepLX's free route.
//!
//! DeepL: `POST /v2/translate` (form or JSON, `text` repeated or an array; the options in
//! [`super::deepl_options`]) → `{"translations": [{"detected_source_language", "text",
//! "billed_characters"?, "model_type_used"?}]}`; `GET /v2/languages?type=source|target` (the
//! type also in a GET's form body, where deepl-python puts it); `GET /v2/usage`;
//! `GET /v2/glossary-language-pairs` and `GET /v2/glossaries` (none); a glossary or a document
//! answered as DeepL answers one it does not have. Errors are `{"message"}` with DeepL's status
//! codes, which the libraries map to their exceptions: 400 bad request, 403 bad key, 404 not
//! found, 429 (with `Retry-After`) when the queue is full; never 456 (no quota here).
//!
//! DeepLX: `POST /translate` or `/deeplx` with one `text` and `source_lang`/`target_lang`, errors
//! as `{"code", "message"}`. Language codes are DeepL's, upper case (`EN-US`, `ZH-HANS`); a
//! missing `source_lang` is identified.

use std::sync::atomic::Ordering;

use serde_json::{Value, json};

use super::Reply;
use super::deepl_options::Options;
use crate::serve::core::{ApiRequest, Core};
use crate::serve::error::ApiError;
use crate::serve::lang_codes;
use crate::serve::params::Params;

/// What `/v2/usage` reports as the limit: DeepL's own figure for a plan without one (its Pro
/// accounts without cost control report 10^12). `null` would be read by deepl-node as a limit of
/// 0, already reached (`count >= null`).
pub const NO_LIMIT: u64 = 1_000_000_000_000;

/// A DeepLX body: one `text` with DeepL's language fields, no LibreTranslate `q`.
pub fn is_deeplx(p: &Params) -> bool {
    !p.has("q") && p.has("text") && (p.has("target_lang") || p.has("source_lang"))
}

/// The characters DeepL bills for a text: Unicode code points.
fn billed(text: &str) -> u64 {
    text.chars().count() as u64
}

pub fn translate(core: &Core, p: &Params) -> Result<Reply, ApiError> {
    let to = p.str("target_lang")?.ok_or_else(|| ApiError::bad_request("Parameter 'target_lang' not specified."))?;
    let from = p.str("source_lang")?.filter(|s| !s.trim().is_empty());
    let (texts, _) = p.texts("text")?.ok_or_else(|| ApiError::bad_request("Parameter 'text' not specified."))?;
    let opts = Options::read(p, &to, from.is_some())?;
    let job = ApiRequest { from: from.clone(), to, texts, html: opts.html, split_sentences: opts.split_sentences };
    let out = core.translate(&job)?;
    let mut total = 0;
    let items: Vec<Value> = out
        .translations
        .iter()
        .zip(&out.sources)
        .zip(&job.texts)
        .map(|((t, s), source)| {
            let detected = s.clone().or_else(|| from.clone()).unwrap_or_default().to_ascii_uppercase();
            let mut item = json!({ "detected_source_language": detected, "text": t });
            total += billed(source);
            if opts.show_billed_characters {
                item["billed_characters"] = json!(billed(source));
            }
            if let Some(m) = opts.model_type_used {
                item["model_type_used"] = json!(m);
            }
            item
        })
        .collect();
    core.metrics.billed_characters.fetch_add(total, Ordering::Relaxed);
    Ok(Reply::json(json!({ "translations": items })).counted(&job.texts))
}

/// DeepL's name and code of a target: English and Portuguese only by variety (the libraries
/// refuse a bare `EN` or `PT` target), which all reach the one installed model.
fn target_codes(l: &str) -> Vec<(String, String)> {
    match l {
        "en" => vec![("EN-GB".into(), "English (British)".into()), ("EN-US".into(), "English (American)".into())],
        "pt" => {
            vec![("PT-BR".into(), "Portuguese (Brazilian)".into()), ("PT-PT".into(), "Portuguese (European)".into())]
        }
        _ => vec![(l.to_ascii_uppercase(), lang_codes::name(l).to_string())],
    }
}

pub fn languages(core: &Core, p: &Params) -> Result<Reply, ApiError> {
    let models = core.models();
    let target = match p.str("type")?.as_deref() {
        None | Some("source") => false,
        Some("target") => true,
        Some(_) => {
            return Err(ApiError::bad_request("Parameter 'type' is invalid. 'source' and 'target' are valid values."));
        }
    };
    let mut list: Vec<Value> = Vec::new();
    for l in &models.languages {
        if target {
            if !models.languages.iter().any(|s| models.targets(s).contains(l)) {
                continue;
            }
            // No model here has a formality setting.
            for (code, name) in target_codes(l) {
                list.push(json!({ "language": code, "name": name, "supports_formality": false }));
            }
        } else if !models.targets(l).is_empty() {
            list.push(json!({ "language": l.to_ascii_uppercase(), "name": lang_codes::name(l) }));
        }
    }
    Ok(Reply::json(Value::Array(list)))
}

/// `GET /v2/usage`: the characters billed by `/v2/translate` since the server started, and no
/// limit.
pub fn usage(core: &Core) -> Reply {
    let count = core.metrics.billed_characters.load(Ordering::Relaxed);
    Reply::json(json!({ "character_count": count, "character_limit": NO_LIMIT }))
}

pub fn glossary_language_pairs() -> Reply {
    Reply::json(json!({ "supported_languages": [] }))
}

/// `GET /v2/glossaries`: none.
pub fn glossaries() -> Reply {
    Reply::json(json!({ "glossaries": [] }))
}

/// `POST /v2/glossaries`: refused.
pub fn glossary_create() -> ApiError {
    ApiError::bad_request("Glossaries are not supported by this server; translate without glossary_id")
}

/// `/v2/glossaries/{id}` and its entries: there is none.
pub fn glossary() -> ApiError {
    ApiError::new(404, "Glossary not found")
}

/// `POST /v2/document`: refused before its upload is read.
pub fn document() -> ApiError {
    ApiError::bad_request(
        "Document translation is not supported by this server; send the document's text to /v2/translate \
         (tag_handling=html for HTML)",
    )
}

/// `/v2/document/{id}` and its result: there is none.
pub fn document_status() -> ApiError {
    ApiError::new(404, "Document not found")
}

pub fn deeplx(core: &Core, p: &Params) -> Result<Reply, ApiError> {
    let text = p.required("text")?;
    let to = p.required("target_lang")?;
    let from = p.str("source_lang")?.filter(|s| !s.trim().is_empty() && !s.eq_ignore_ascii_case("auto"));
    let html = match p.str("tag_handling")?.as_deref() {
        None | Some("") => false,
        Some("html") => true,
        Some(other) => {
            return Err(ApiError::bad_request(format!(
                "Value for 'tag_handling' not supported: {other} (only html is)"
            )));
        }
    };
    let job = ApiRequest { from: from.clone(), to: to.clone(), texts: vec![text], html, split_sentences: None };
    let out = core.translate(&job)?;
    let source = out.sources[0].clone().or(from).unwrap_or_default().to_ascii_uppercase();
    Ok(Reply::json(json!({
        "code": 200,
        "id": std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH).map(|d| d.as_micros() as u64).unwrap_or(0),
        "data": out.translations[0],
        "alternatives": [],
        "source_lang": source,
        "target_lang": to.to_ascii_uppercase(),
        "method": "Free",
    }))
    .counted(&job.texts))
}
