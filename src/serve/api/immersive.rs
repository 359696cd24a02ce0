//! Immersive Translate's custom API: `POST /imme` `{"source_lang", "target_lang",
//! "text_list"}` → `{"translations": [{"detected_source_lang", "text"}]}`. Its rich-text mode
//! wraps words in placeholder tags (`<b0>…</b0>`); a paragraph holding a closing tag is read
//! as HTML so that they come back as they went.

use serde_json::json;

use super::Reply;
use crate::serve::core::{ApiRequest, Core};
use crate::serve::error::ApiError;
use crate::serve::params::Params;

pub fn translate(core: &Core, p: &Params) -> Result<Reply, ApiError> {
    let (texts, _) = p.texts("text_list")?.ok_or_else(|| ApiError::missing("text_list"))?;
    let from = p.str("source_lang")?;
    let to = p.required("target_lang")?;
    core.check_limits(&texts)?;
    let (tagged, plain): (Vec<usize>, Vec<usize>) = (0..texts.len()).partition(|&i| texts[i].contains("</"));
    let mut translations = vec![String::new(); texts.len()];
    let mut detected = vec![from.clone().unwrap_or_else(|| "auto".into()); texts.len()];
    for (members, html) in [(plain, false), (tagged, true)] {
        if members.is_empty() {
            continue;
        }
        let job = ApiRequest {
            from: from.clone(),
            to: to.clone(),
            texts: members.iter().map(|&i| texts[i].clone()).collect(),
            html,
            split_sentences: None,
        };
        let out = core.translate(&job)?;
        for (k, &i) in members.iter().enumerate() {
            translations[i] = out.translations[k].clone();
            if let Some(s) = &out.sources[k] {
                detected[i] = s.clone();
            }
        }
    }
    let items: Vec<_> =
        translations.iter().zip(&detected).map(|(t, d)| json!({ "detected_source_lang": d, "text": t })).collect();
    Ok(Reply::json(json!({ "translations": items })).counted(&texts))
}
