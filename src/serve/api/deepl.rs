//! DeepL's API v2 (`POST /v2/translate`, `GET /v2/languages`; form or JSON, `text` repeated or an
//! array, errors as `{"message"}`) and DeepLX's free route (`POST /translate` or `/deeplx` with
//! one `text` and `source_lang`/`target_lang`, errors as `{"code", "message"}`). Language codes
//! are DeepL's, upper case (`EN-US`, `ZH-HANS`); a missing `source_lang` is identified.

use serde_json::{Value, json};

use super::Reply;
use crate::serve::core::{Core, Job};
use crate::serve::error::ApiError;
use crate::serve::lang;
use crate::serve::params::Params;

/// A DeepLX body: one `text` with DeepL's language fields, no LibreTranslate `q`.
pub fn is_deeplx(p: &Params) -> bool {
    !p.has("q") && p.has("text") && (p.has("target_lang") || p.has("source_lang"))
}

fn tag_html(p: &Params) -> Result<bool, ApiError> {
    match p.str("tag_handling")?.as_deref() {
        None | Some("") => Ok(false),
        Some("html") => Ok(true),
        Some(other) => {
            Err(ApiError::bad_request(format!("Value for 'tag_handling' not supported: {other} (only html is)")))
        }
    }
}

pub fn translate(core: &Core, p: &Params) -> Result<Reply, ApiError> {
    let (texts, _) = p.texts("text")?.ok_or_else(|| ApiError::bad_request("Parameter 'text' not specified."))?;
    let to = p.str("target_lang")?.ok_or_else(|| ApiError::bad_request("Parameter 'target_lang' not specified."))?;
    let from = p.str("source_lang")?.filter(|s| !s.trim().is_empty());
    let job = Job { from: from.clone(), to, texts, html: tag_html(p)? };
    let out = core.translate(&job)?;
    let items: Vec<Value> = out
        .translations
        .iter()
        .zip(&out.sources)
        .map(|(t, s)| {
            let detected = s.clone().or_else(|| from.clone()).unwrap_or_default().to_ascii_uppercase();
            json!({ "detected_source_language": detected, "text": t })
        })
        .collect();
    Ok(Reply::json(json!({ "translations": items })).counted(&job.texts))
}

pub fn languages(core: &Core, p: &Params) -> Result<Reply, ApiError> {
    let models = core.models();
    let target = match p.str("type")?.as_deref() {
        None | Some("source") => false,
        Some("target") => true,
        Some(other) => return Err(ApiError::bad_request(format!("Value for 'type' not supported: {other}"))),
    };
    let list: Vec<Value> = models
        .languages
        .iter()
        .filter(|l| {
            if target {
                models.languages.iter().any(|s| models.targets(s).contains(l))
            } else {
                !models.targets(l).is_empty()
            }
        })
        .map(|l| json!({ "language": l.to_ascii_uppercase(), "name": lang::name(l), "supports_formality": false }))
        .collect();
    Ok(Reply::json(Value::Array(list)))
}

pub fn deeplx(core: &Core, p: &Params) -> Result<Reply, ApiError> {
    let text = p.required("text")?;
    let to = p.required("target_lang")?;
    let from = p.str("source_lang")?.filter(|s| !s.trim().is_empty() && !s.eq_ignore_ascii_case("auto"));
    let job = Job { from: from.clone(), to: to.clone(), texts: vec![text], html: tag_html(p)? };
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
