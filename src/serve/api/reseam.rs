//! The seed's API: `GET /health`, `GET /v1/languages`, `POST /v1/translate` with `texts`.

use std::sync::atomic::Ordering;

use serde_json::json;

use super::Reply;
use crate::fetch::tags::PIVOT;
use crate::serve::core::{ApiRequest, Core};
use crate::serve::error::ApiError;
use crate::serve::params::Params;

pub fn health(core: &Core) -> Reply {
    let m = &core.metrics;
    let status = if core.draining.load(Ordering::SeqCst) { "draining" } else { "ok" };
    Reply::json(json!({
        "status": status,
        "isa": core.engine.kernels().kernel_for(core.engine.arithmetic()).name(),
        "arithmetic": core.engine.arithmetic().name(),
        "threads": core.engine.threads(),
        "pairs_loaded": core.models().registry.loaded(),
        "counters": {
            "requests": m.requests.load(Ordering::Relaxed),
            "texts": m.texts.load(Ordering::Relaxed),
            "chars": m.chars.load(Ordering::Relaxed),
            "errors": m.errors.load(Ordering::Relaxed),
            "queue": m.queued.load(Ordering::Relaxed),
        },
    }))
}

pub fn languages(core: &Core) -> Reply {
    let pairs: Vec<[String; 2]> = core.models().registry.pairs().into_iter().map(|(a, b)| [a, b]).collect();
    Reply::json(json!({ "pairs": pairs, "pivot": PIVOT }))
}

/// `{"from", "to", "texts": [...]}` → `{"translations": [...]}`; `from` may be `auto`.
pub fn translate(core: &Core, p: &Params) -> Result<Reply, ApiError> {
    let from = p.required("from")?;
    let to = p.required("to")?;
    let (texts, list) = p.texts("texts")?.ok_or_else(|| ApiError::missing("texts"))?;
    if !list && p.is_json() {
        return Err(ApiError::wrong_type("texts", "an array of strings"));
    }
    let html = matches!(p.str("format")?.as_deref(), Some("html"));
    let job = ApiRequest { from: Some(from), to, texts, html, split_sentences: None };
    let out = core.translate(&job)?;
    let mut body = json!({ "translations": out.translations });
    if job.from.as_deref().is_some_and(|f| f.eq_ignore_ascii_case("auto")) {
        body["detected"] = out
            .detected
            .iter()
            .map(|d| d.as_ref().map(|d| json!({ "language": d.language, "confidence": d.confidence })))
            .collect();
    }
    Ok(Reply::json(body).counted(&job.texts))
}
