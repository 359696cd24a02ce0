//! Kiss Translator's custom API: `POST /kiss` `{"from", "to", "text"}` → `{"text", "src"}`, or
//! `{"texts": [...]}` → `{"translations": [{"text", "src"}]}`. `src` is the source language
//! (the one found, when `from` is `auto`).

use serde_json::json;

use super::Reply;
use crate::serve::core::{ApiRequest, Core};
use crate::serve::error::ApiError;
use crate::serve::params::Params;

pub fn translate(core: &Core, p: &Params) -> Result<Reply, ApiError> {
    let (texts, list) = match p.texts("texts")? {
        Some((t, _)) => (t, true),
        None => (vec![p.required("text")?], false),
    };
    let from = p.str("from")?;
    let job = ApiRequest { from: from.clone(), to: p.required("to")?, texts, html: false, split_sentences: None };
    let out = core.translate(&job)?;
    let src = |i: usize| -> String { out.sources[i].clone().or_else(|| from.clone()).unwrap_or_else(|| "auto".into()) };
    let body = if list {
        let items: Vec<_> =
            out.translations.iter().enumerate().map(|(i, t)| json!({ "text": t, "src": src(i) })).collect();
        json!({ "translations": items })
    } else {
        json!({ "text": out.translations.first().cloned().unwrap_or_default(), "src": src(0) })
    };
    Ok(Reply::json(body).counted(&job.texts))
}
