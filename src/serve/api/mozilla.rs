//! mozilla/translation-service (and MTranServer's single call): `POST /v1/translate`
//! `{"from", "to", "text"}` → `{"result"}`. Told apart from the seed's call by `text` (a
//! string) instead of `texts`.

use serde_json::json;

use super::Reply;
use crate::serve::core::{ApiRequest, Core};
use crate::serve::error::ApiError;
use crate::serve::params::Params;

pub fn is_mozilla(p: &Params) -> bool {
    p.has("text") && !p.has("texts")
}

pub fn translate(core: &Core, p: &Params) -> Result<Reply, ApiError> {
    let text = p.string("text")?.ok_or_else(|| ApiError::missing("text"))?;
    let job = ApiRequest {
        from: p.str("from")?,
        to: p.required("to")?,
        texts: vec![text],
        html: html(p)?,
        split_sentences: None,
    };
    let out = core.translate(&job)?;
    let result = out.translations.into_iter().next().unwrap_or_default();
    Ok(Reply::json(json!({ "result": result })).counted(&job.texts))
}

/// MTranServer's `"html": true`.
pub fn html(p: &Params) -> Result<bool, ApiError> {
    Ok(matches!(p.str("html")?.as_deref(), Some("true" | "1")))
}
