//! MTranServer's native API (which LinguaSpark copies): `POST /translate` `{"from", "to",
//! "text", "html"?}` → `{"result"}`, `POST /translate/batch` `{"texts"}` → `{"results"}`,
//! `POST /detect` `{"text"}` → `{"language", "confidence"}`.

use serde_json::json;

use super::Reply;
use super::mozilla::html;
use crate::serve::core::{ApiRequest, Core};
use crate::serve::error::ApiError;
use crate::serve::params::Params;

pub fn translate(core: &Core, p: &Params) -> Result<Reply, ApiError> {
    super::mozilla::translate(core, p)
}

pub fn batch(core: &Core, p: &Params) -> Result<Reply, ApiError> {
    let (texts, list) = p.texts("texts")?.ok_or_else(|| ApiError::missing("texts"))?;
    // `{"texts": "x"}` is a client's mistake (MTranServer's batch takes an array), not a batch
    // of one; a form's one `texts` field is a list of one.
    if p.is_json() && !list {
        return Err(ApiError::wrong_type("texts", "an array of strings"));
    }
    let job = ApiRequest { from: p.str("from")?, to: p.required("to")?, texts, html: html(p)?, split_sentences: None };
    let out = core.translate(&job)?;
    Ok(Reply::json(json!({ "results": out.translations })).counted(&job.texts))
}

pub fn detect(core: &Core, p: &Params) -> Result<Reply, ApiError> {
    let text = p.required("text")?;
    core.check_limits(std::slice::from_ref(&text))?;
    let d = core.detect(std::slice::from_ref(&text), false)?.remove(0);
    Ok(Reply::json(json!({ "language": d.language, "confidence": d.confidence })))
}
