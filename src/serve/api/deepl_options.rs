//! The request fields of DeepL's `POST /v2/translate` beyond the texts and languages, as the
//! official client libraries send them (deepl-python: JSON with booleans and lists; deepl-node:
//! a form with `1`/`0` and comma-joined tags). Each is honoured, or refused with DeepL's 400 and
//! its wording ("Value for 'x' not supported."), never dropped in a way that changes what the
//! translation says. Unknown fields are ignored, as DeepL ignores them.
//!
//! | field | here |
//! | --- | --- |
//! | `tag_handling` | `html` as `format: html`; `xml` refused |
//! | `tag_handling_version` | `v1`, `v2`: one HTML algorithm, either is taken |
//! | `split_sentences` | `1` and `nonewlines`: split into sentences; `0`: each line one sentence. Line breaks are always kept, so `nonewlines` differs from DeepL only for a sentence broken over lines |
//! | `preserve_formatting` | either: reseam never corrects punctuation or case |
//! | `formality` | `default`, `prefer_less`, `prefer_more` (the model's own register); `less`, `more` refused: no model here has formality |
//! | `model_type` | `latency_optimized`, `prefer_quality_optimized` → `model_type_used: latency_optimized`; `quality_optimized` refused: one model per pair |
//! | `ignore_tags`, `splitting_tags`, `non_splitting_tags` | taken when the HTML translation already treats each tag so ([`crate::html::tag_role`]), refused otherwise |
//! | `outline_detection` | either: it only concerns `xml` |
//! | `show_billed_characters` | `billed_characters` in each translation |
//! | `context` | taken and not used: DeepL's hint never changes which text is translated |
//! | `glossary_id`, `glossary_ids` | this server has no glossaries: the id is not found |
//! | `style_id`, `translation_memory_id`, `translation_memory_threshold`, `custom_instructions` | refused: nothing here to honour them |

use crate::html::{TagRole, tag_role};
use crate::serve::error::ApiError;
use crate::serve::params::Params;

/// What the options ask of the translation and of the answer.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Options {
    pub html: bool,
    pub split_sentences: Option<bool>,
    pub show_billed_characters: bool,
    /// `model_type_used` of every translation, when `model_type` was sent.
    pub model_type_used: Option<&'static str>,
}

fn not_supported(key: &str) -> ApiError {
    ApiError::bad_request(format!("Value for '{key}' not supported."))
}

fn not_supported_because(key: &str, why: &str) -> ApiError {
    ApiError::bad_request(format!("Value for '{key}' not supported: {why}"))
}

/// A boolean as DeepL takes it: `1`/`0` (forms), `true`/`false` (JSON, or forms).
fn flag(p: &Params, key: &str) -> Result<Option<bool>, ApiError> {
    match p.str(key)?.map(|v| v.trim().to_ascii_lowercase()).as_deref() {
        None => Ok(None),
        Some("1" | "true") => Ok(Some(true)),
        Some("0" | "false") => Ok(Some(false)),
        Some(_) => Err(not_supported(key)),
    }
}

/// Whether `id` has the shape of DeepL's glossary ids (a UUID).
fn is_uuid(id: &str) -> bool {
    let parts: Vec<&str> = id.split('-').collect();
    parts.len() == 5
        && parts.iter().zip([8, 4, 4, 4, 12]).all(|(p, n)| p.len() == n && p.bytes().all(|b| b.is_ascii_hexdigit()))
}

/// The tags of `key` that the HTML translation does not already treat as `key` asks.
fn tags(p: &Params, key: &str, ok: fn(TagRole) -> bool, what: &str) -> Result<(), ApiError> {
    for tag in p.list(key)?.unwrap_or_default() {
        if !ok(tag_role(&tag)) {
            let shown: String = tag.chars().filter(|c| !c.is_control()).take(40).collect();
            return Err(not_supported_because(key, &format!("<{shown}> {what}")));
        }
    }
    Ok(())
}

impl Options {
    /// Reads the options of a request to translate into `target` (`source` given or not).
    pub fn read(p: &Params, target: &str, source_given: bool) -> Result<Options, ApiError> {
        let html = match p.str("tag_handling")?.as_deref().map(str::trim) {
            None | Some("") => false,
            Some(v) if v.eq_ignore_ascii_case("html") => true,
            Some(v) if v.eq_ignore_ascii_case("xml") => {
                return Err(not_supported_because("tag_handling", "xml (this server handles html only)"));
            }
            Some(_) => return Err(not_supported("tag_handling")),
        };
        if let Some(v) = p.str("tag_handling_version")?
            && !matches!(v.trim(), "v1" | "v2")
        {
            return Err(not_supported("tag_handling_version"));
        }
        let split_sentences = match p.str("split_sentences")?.as_deref().map(str::trim) {
            None => None,
            Some("1" | "nonewlines") => Some(true),
            Some("0") => Some(false),
            Some(_) => return Err(not_supported("split_sentences")),
        };
        flag(p, "preserve_formatting")?;
        flag(p, "outline_detection")?;
        let show_billed_characters = flag(p, "show_billed_characters")?.unwrap_or(false);
        match p.str("formality")?.map(|v| v.trim().to_ascii_lowercase()).as_deref() {
            None | Some("default" | "prefer_less" | "prefer_more") => {}
            Some("less" | "more") => {
                let shown: String = target.chars().filter(|c| !c.is_control()).take(35).collect();
                return Err(ApiError::bad_request(format!(
                    "Target language '{}' doesn't support formality.",
                    shown.to_ascii_uppercase()
                )));
            }
            Some(_) => return Err(not_supported("formality")),
        }
        let model_type_used = match p.str("model_type")?.as_deref().map(str::trim) {
            None => None,
            Some("latency_optimized" | "prefer_quality_optimized") => Some("latency_optimized"),
            Some("quality_optimized") => {
                return Err(not_supported_because(
                    "model_type",
                    "quality_optimized (this server has one model per language pair: latency_optimized)",
                ));
            }
            Some(_) => return Err(not_supported("model_type")),
        };
        tags(
            p,
            "ignore_tags",
            |r| r == TagRole::Untranslated,
            "would be translated here; only code, pre, kbd, samp, var, script, style, textarea, template, \
             math, svg and translate=\"no\" content are kept as they are",
        )?;
        tags(p, "splitting_tags", |r| r != TagRole::Inline, "is inline here: it does not end a sentence")?;
        tags(p, "non_splitting_tags", |r| r == TagRole::Inline, "ends a sentence here")?;
        let mut glossaries: Vec<String> = p.list("glossary_ids")?.unwrap_or_default();
        if let Some(id) = p.str("glossary_id")?.filter(|s| !s.trim().is_empty()) {
            glossaries.insert(0, id);
        }
        if let Some(id) = glossaries.first() {
            if glossaries.iter().any(|g| !is_uuid(g.trim())) {
                return Err(not_supported(if p.has("glossary_ids") { "glossary_ids" } else { "glossary_id" }));
            }
            if !source_given {
                return Err(ApiError::bad_request(
                    "Use of a glossary requires the source_lang parameter to be specified",
                ));
            }
            return Err(ApiError::bad_request(format!(
                "Glossary not found: {} (this server has no glossaries)",
                id.trim()
            )));
        }
        for (key, what) in [
            ("style_id", "this server has no style rules"),
            ("translation_memory_id", "this server has no translation memories"),
            ("translation_memory_threshold", "this server has no translation memories"),
            ("custom_instructions", "this server's models take no instructions"),
        ] {
            if p.has(key) {
                return Err(not_supported_because(key, what));
            }
        }
        Ok(Options { html, split_sentences, show_billed_characters, model_type_used })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::serve::params::Kind;

    fn json(body: serde_json::Value) -> Result<Options, ApiError> {
        let p = Params::parse(Kind::Json, body.to_string().as_bytes(), "").unwrap();
        Options::read(&p, "en-us", p.has("source_lang"))
    }

    fn form(body: &str) -> Result<Options, ApiError> {
        let p = Params::parse(Kind::Form, body.as_bytes(), "").unwrap();
        Options::read(&p, "EN-US", p.has("source_lang"))
    }

    fn refused(r: Result<Options, ApiError>) -> String {
        let e = r.expect_err("refused");
        assert_eq!(e.status, 400, "{e:?}");
        e.message
    }

    #[test]
    fn what_deepl_python_sends() {
        // translate_text's JSON: booleans, lists of tags, show_billed_characters always.
        let o = json(serde_json::json!({
            "text": ["Hola"], "target_lang": "EN-US", "show_billed_characters": true,
            "preserve_formatting": true, "outline_detection": false, "split_sentences": "nonewlines",
            "tag_handling": "html", "tag_handling_version": "v2", "ignore_tags": ["code", "pre"],
            "splitting_tags": ["p", "br"], "non_splitting_tags": ["b", "span"], "formality": "prefer_more",
            "model_type": "prefer_quality_optimized", "context": "Un saludo."
        }))
        .unwrap();
        assert_eq!(
            o,
            Options {
                html: true,
                split_sentences: Some(true),
                show_billed_characters: true,
                model_type_used: Some("latency_optimized")
            }
        );
        assert_eq!(json(serde_json::json!({})).unwrap(), Options::default());
    }

    #[test]
    fn what_deepl_node_sends() {
        // translateText's form: 1/0, tags comma-joined.
        let o = form(
            "show_billed_characters=1&split_sentences=0&preserve_formatting=0&tag_handling=html\
             &ignore_tags=code,kbd&non_splitting_tags=em,i&formality=default&model_type=latency_optimized",
        )
        .unwrap();
        assert_eq!(
            o,
            Options {
                html: true,
                split_sentences: Some(false),
                show_billed_characters: true,
                model_type_used: Some("latency_optimized")
            }
        );
    }

    #[test]
    fn what_cannot_be_honoured_is_refused_in_deepls_words() {
        assert_eq!(refused(form("formality=more")), "Target language 'EN-US' doesn't support formality.");
        assert_eq!(refused(form("formality=LESS")), "Target language 'EN-US' doesn't support formality.");
        assert_eq!(refused(form("formality=casual")), "Value for 'formality' not supported.");
        assert!(refused(form("model_type=quality_optimized")).contains("one model per language pair"));
        assert_eq!(refused(form("model_type=fast")), "Value for 'model_type' not supported.");
        assert!(refused(form("tag_handling=xml")).contains("html only"));
        assert_eq!(refused(form("tag_handling=yaml")), "Value for 'tag_handling' not supported.");
        assert_eq!(refused(form("tag_handling_version=v3")), "Value for 'tag_handling_version' not supported.");
        assert_eq!(refused(form("split_sentences=2")), "Value for 'split_sentences' not supported.");
        assert_eq!(refused(form("show_billed_characters=yes")), "Value for 'show_billed_characters' not supported.");
        assert!(refused(form("ignore_tags=x")).starts_with("Value for 'ignore_tags' not supported: <x>"));
        assert!(refused(form("splitting_tags=b")).contains("<b> is inline"));
        assert!(refused(form("non_splitting_tags=p")).contains("<p> ends a sentence"));
        assert!(refused(json(serde_json::json!({"ignore_tags": [1]}))).contains("ignore_tags[0]"));
        for key in ["style_id", "translation_memory_id", "translation_memory_threshold", "custom_instructions"] {
            assert!(refused(form(&format!("{key}=x"))).starts_with(&format!("Value for '{key}' not supported: ")));
        }
    }

    #[test]
    fn glossaries_are_never_found() {
        let id = "0a6c701e-303a-41ba-a167-857c5b720a4c";
        assert_eq!(refused(form("glossary_id=abc&source_lang=ES")), "Value for 'glossary_id' not supported.");
        assert!(refused(form(&format!("glossary_id={id}"))).contains("requires the source_lang"));
        let m = refused(form(&format!("glossary_id={id}&source_lang=ES")));
        assert!(m.starts_with("Glossary not found") && m.contains(id), "{m}");
        let m = refused(json(serde_json::json!({"glossary_ids": [id], "source_lang": "ES"})));
        assert!(m.starts_with("Glossary not found"), "{m}");
        assert_eq!(
            refused(json(serde_json::json!({"glossary_ids": ["x"], "source_lang": "ES"}))),
            "Value for 'glossary_ids' not supported."
        );
        // An empty id is no glossary.
        assert_eq!(form("glossary_id=").unwrap(), Options::default());
        assert!(
            is_uuid(id)
                && !is_uuid("0a6c701e-303a-41ba-a167-857c5b720a4")
                && !is_uuid("g a6c701e-303a-41ba-a167-857c5b720a4c")
        );
    }
}
