//! Remote Settings records of `translations-models-v2`, and the choice Firefox makes among them
//! (`TranslationsParent.sys.mjs`: `getMaxSupportedVersionRecords`, `#filterByModelVersion`,
//! `getTranslationModelPayload`).

use std::cmp::Ordering;

use serde_json::Value;

use super::jexl::{self, Env};
use super::tags;
use super::version;

/// Model major versions the current Firefox accepts (`LANGUAGE_MODEL_MAJOR_VERSION_MIN/MAX`, with
/// Bergamot 4 and the v2 collection). 3.x files are zstd-compressed Marian files.
pub const MODEL_MAJOR_MIN: u32 = 3;
pub const MODEL_MAJOR_MAX: u32 = 3;

/// One file of one language pair, as the server describes it.
#[derive(Debug, Clone, PartialEq)]
pub struct Record {
    pub id: String,
    /// The installed file name (`model.esen.intgemm.alphas.bin`), without `.zst`.
    pub name: String,
    pub source_language: String,
    pub target_language: String,
    /// Firefox keys pairs by (source, target, variant); a missing variant is the default model.
    pub variant: Option<String>,
    pub architecture: String,
    pub version: String,
    /// `model`, `lex`, `vocab`, `srcvocab`, `trgvocab` or `qualityModel`.
    pub file_type: String,
    pub filter_expression: String,
    pub decompressed_size: u64,
    /// sha256 (lower-case hex) of the decompressed file.
    pub decompressed_hash: String,
    pub attachment: Attachment,
    /// The record exactly as received, for mirrors.
    pub raw: Value,
}

/// The stored (zstd) file: `attachment.*` of the record.
#[derive(Debug, Clone, PartialEq)]
pub struct Attachment {
    /// sha256 (lower-case hex) of the stored bytes.
    pub hash: String,
    pub size: u64,
    /// Path under the server's attachments base URL (`main/translations-models-v2/<uuid>.zst`).
    pub location: String,
}

/// The parsed records document, plus the records that could not be used and why.
#[derive(Debug, Default)]
pub struct Records {
    pub records: Vec<Record>,
    pub skipped: Vec<String>,
}

/// Parses a records document: `{"data": [...]}` (the records endpoint) or `{"changes": [...]}`
/// (the changeset endpoint). A malformed record is skipped with a reason; a malformed document is
/// an error naming what is wrong.
pub fn parse(bytes: &[u8]) -> Result<Records, String> {
    let doc: Value = serde_json::from_slice(bytes).map_err(|e| format!("not JSON ({e})"))?;
    let list =
        doc.get("data").or_else(|| doc.get("changes")).and_then(Value::as_array).ok_or(
            "no `data` list of records (expected the answer of .../collections/translations-models-v2/records)",
        )?;
    let mut out = Records::default();
    for (i, raw) in list.iter().enumerate() {
        if raw.get("deleted").and_then(Value::as_bool) == Some(true) {
            continue;
        }
        match Record::from_json(raw) {
            Ok(r) => out.records.push(r),
            Err(why) => {
                let id = raw.get("id").and_then(Value::as_str).unwrap_or("?");
                out.skipped.push(format!("record #{i} (id {id}): {why}"));
            }
        }
    }
    Ok(out)
}

impl Record {
    fn from_json(v: &Value) -> Result<Record, String> {
        let text = |key: &str| -> Result<String, String> {
            match v.get(key) {
                Some(Value::String(s)) => Ok(s.clone()),
                Some(_) => Err(format!("field `{key}` is not a string")),
                None => Err(format!("field `{key}` is missing")),
            }
        };
        let att = v.get("attachment").filter(|a| a.is_object()).ok_or("field `attachment` is missing")?;
        let att_text = |key: &str| -> Result<String, String> {
            att.get(key)
                .and_then(Value::as_str)
                .map(str::to_string)
                .ok_or(format!("field `attachment.{key}` is missing"))
        };
        let r = Record {
            id: text("id")?,
            name: text("name")?,
            source_language: text("sourceLanguage")?,
            target_language: text("targetLanguage")?,
            variant: v.get("variant").and_then(Value::as_str).filter(|s| !s.is_empty()).map(str::to_string),
            architecture: v.get("architecture").and_then(Value::as_str).unwrap_or("").to_string(),
            version: text("version")?,
            file_type: text("fileType")?,
            filter_expression: v.get("filter_expression").and_then(Value::as_str).unwrap_or("").to_string(),
            decompressed_size: size(v.get("decompressedSize"), "decompressedSize")?,
            decompressed_hash: sha256_hex(&text("decompressedHash")?, "decompressedHash")?,
            attachment: Attachment {
                hash: sha256_hex(&att_text("hash")?, "attachment.hash")?,
                size: size(att.get("size"), "attachment.size")?,
                location: att_text("location")?,
            },
            raw: v.clone(),
        };
        // These end up in paths on disk: refuse anything that could leave the target folder.
        if !is_plain_file_name(&r.name) {
            return Err(format!("field `name` {:?} is not a plain file name", r.name));
        }
        if !is_safe_location(&r.attachment.location) {
            return Err(format!("field `attachment.location` {:?} is not a relative path", r.attachment.location));
        }
        for (key, tag) in [("sourceLanguage", &r.source_language), ("targetLanguage", &r.target_language)] {
            if !tags::is_valid(tag) {
                return Err(format!("field `{key}` {tag:?} is not a language tag"));
            }
        }
        Ok(r)
    }

    /// The pair key Firefox uses (`nonPivotKey`).
    fn pair_key(&self) -> (String, String, Option<String>) {
        (self.source_language.clone(), self.target_language.clone(), self.variant.clone())
    }
}

/// Sizes are JSON numbers (the schema says `number`, so `23.0` is allowed).
fn size(v: Option<&Value>, key: &str) -> Result<u64, String> {
    let v = v.ok_or(format!("field `{key}` is missing"))?;
    v.as_u64()
        .or_else(|| v.as_f64().filter(|f| f.fract() == 0.0 && *f >= 0.0 && *f < 9.0e15).map(|f| f as u64))
        .ok_or(format!("field `{key}` is not a byte count"))
}

fn sha256_hex(s: &str, key: &str) -> Result<String, String> {
    if s.len() == 64 && s.chars().all(|c| c.is_ascii_hexdigit()) {
        Ok(s.to_ascii_lowercase())
    } else {
        Err(format!("field `{key}` is not a sha256 in hex"))
    }
}

/// A single path component that is not hidden and has no separators.
pub fn is_plain_file_name(name: &str) -> bool {
    !name.is_empty()
        && name.len() <= 200
        && !name.starts_with('.')
        && !name.contains(['/', '\\', ':', '\0'])
        && !name.chars().any(char::is_control)
}

/// A relative path of plain components (`main/translations-models-v2/<uuid>.zst`).
pub fn is_safe_location(loc: &str) -> bool {
    !loc.is_empty()
        && loc.len() <= 500
        && !loc.contains(['\\', '?', '#', ':', '\0'])
        && !loc.chars().any(char::is_control)
        && loc.split('/').all(|c| !c.is_empty() && c != "." && c != "..")
}

/// What decides which records Firefox would use.
#[derive(Debug, Clone)]
pub struct Policy {
    pub env: Env,
    pub min_major: u32,
    pub max_major: u32,
}

impl Default for Policy {
    fn default() -> Policy {
        Policy { env: Env::release(), min_major: MODEL_MAJOR_MIN, max_major: MODEL_MAJOR_MAX }
    }
}

/// The files of one language pair at one version: what goes into `<models>/<from>-<to>/`.
#[derive(Debug, Clone)]
pub struct PairModels {
    pub source_language: String,
    pub target_language: String,
    pub variant: Option<String>,
    pub architecture: String,
    pub version: String,
    /// model, then vocab (or srcvocab and trgvocab), then lex when offered.
    pub files: Vec<Record>,
}

impl PairModels {
    /// The folder name under the models folder.
    pub fn folder_name(&self) -> String {
        format!("{}-{}", self.source_language, self.target_language)
    }

    /// Bytes to download (the stored, compressed size).
    pub fn download_size(&self) -> u64 {
        self.files.iter().map(|f| f.attachment.size).sum()
    }
}

/// The pairs a source offers to this Firefox-like client.
#[derive(Debug, Default)]
pub struct Offer {
    pub pairs: Vec<PairModels>,
    /// Pairs that have records but cannot be used, with the reason (for error messages).
    pub broken: Vec<(String, String, String)>,
}

/// Chooses records as Firefox does. `debug` receives one line per record or pair left out.
pub fn select(records: &[Record], policy: &Policy, debug: &mut dyn FnMut(String)) -> Offer {
    // 1. Remote Settings drops records whose filter expression is false (or cannot be evaluated).
    let visible: Vec<&Record> = records
        .iter()
        .filter(|r| match jexl::matches(&r.filter_expression, &policy.env) {
            Ok(true) => true,
            Ok(false) => {
                debug(format!("{} {} {}: filtered out for channel {}", r.name, r.version, r.id, policy.env.channel));
                false
            }
            Err(why) => {
                debug(format!(
                    "{} {} {}: filter_expression not understood, treated as not matching: {why}",
                    r.name, r.version, r.id
                ));
                false
            }
        })
        .collect();

    // 2. getMaxSupportedVersionRecords: per name + pair + variant, the highest accepted version;
    // on equal versions the first record stays.
    let mut best: Vec<&Record> = Vec::new();
    for r in visible {
        if !version::in_major_range(&r.version, policy.min_major, policy.max_major) {
            debug(format!(
                "{} {} {}: version outside {}.x-{}.x",
                r.name, r.version, r.id, policy.min_major, policy.max_major
            ));
            continue;
        }
        match best.iter_mut().find(|b| b.name == r.name && b.pair_key() == r.pair_key()) {
            Some(b) if version::compare(&b.version, &r.version) == Ordering::Less => *b = r,
            Some(_) => {}
            None => best.push(r),
        }
    }

    // 3. Per pair, keep only files at the model's version (#filterByModelVersion), then check the
    // set is loadable (getTranslationModelPayload).
    let mut keys: Vec<(String, String, Option<String>)> = Vec::new();
    for r in &best {
        if !keys.contains(&r.pair_key()) {
            keys.push(r.pair_key());
        }
    }
    let mut offer = Offer::default();
    for key in keys {
        let group: Vec<&Record> = best.iter().copied().filter(|r| r.pair_key() == key).collect();
        let label = format!("{}-{}{}", key.0, key.1, key.2.as_ref().map(|v| format!(" ({v})")).unwrap_or_default());
        match assemble(&group, debug) {
            Ok(pair) => offer.pairs.push(pair),
            Err(why) => {
                debug(format!("{label}: not usable: {why}"));
                if key.2.is_none() {
                    offer.broken.push((key.0, key.1, why));
                }
            }
        }
    }
    offer
}

fn assemble(group: &[&Record], debug: &mut dyn FnMut(String)) -> Result<PairModels, String> {
    // Firefox takes the first model record's version; with two model file names in one pair that
    // depends on record order, so reseam takes the highest.
    let model_version = group
        .iter()
        .filter(|r| r.file_type == "model")
        .map(|r| r.version.as_str())
        .max_by(|a, b| version::compare(a, b))
        .ok_or("no `model` record")?;
    let mut files: Vec<Record> = Vec::new();
    for r in group {
        if r.version != model_version {
            debug(format!("{} {}: left out, the model is at version {model_version}", r.name, r.version));
        } else if r.file_type == "qualityModel" {
            debug(format!("{} {}: quality-estimation model, not used by reseam", r.name, r.version));
        } else if !matches!(r.file_type.as_str(), "model" | "vocab" | "srcvocab" | "trgvocab" | "lex") {
            debug(format!("{} {}: unknown fileType {:?}, left out", r.name, r.version, r.file_type));
        } else if files.iter().any(|f| f.file_type == r.file_type) {
            return Err(format!("two `{}` files at version {model_version}", r.file_type));
        } else {
            files.push((*r).clone());
        }
    }
    let has = |t: &str| files.iter().any(|f| f.file_type == t);
    if has("vocab") && (has("srcvocab") || has("trgvocab")) {
        return Err(format!("both a shared `vocab` and split vocabs at version {model_version}"));
    }
    let split = has("srcvocab") && has("trgvocab");
    if !has("vocab") && !split {
        return Err(format!("no vocabulary at version {model_version}"));
    }
    let order = |t: &str| ["model", "vocab", "srcvocab", "trgvocab", "lex"].iter().position(|x| *x == t);
    files.sort_by_key(|f| order(&f.file_type));
    let model = &files[0];
    Ok(PairModels {
        source_language: model.source_language.clone(),
        target_language: model.target_language.clone(),
        variant: model.variant.clone(),
        architecture: model.architecture.clone(),
        version: model_version.to_string(),
        files,
    })
}

impl Offer {
    /// The default-variant pair for `from`→`to` (exact tags preferred over matching ones).
    pub fn find(&self, from: &str, to: &str) -> Option<&PairModels> {
        let default = self.pairs.iter().filter(|p| p.variant.is_none());
        let exact = default.clone().find(|p| p.source_language == from && p.target_language == to);
        exact.or_else(|| {
            default
                .clone()
                .find(|p| tags::tags_match(&p.source_language, from) && tags::tags_match(&p.target_language, to))
        })
    }

    /// Whether any pair has this language on either side.
    pub fn offers_language(&self, tag: &str) -> bool {
        self.pairs
            .iter()
            .any(|p| tags::tags_match(&p.source_language, tag) || tags::tags_match(&p.target_language, tag))
    }

    /// Why `from`→`to` is missing, for error messages.
    pub fn why_missing(&self, from: &str, to: &str) -> String {
        self.broken
            .iter()
            .find(|(s, t, _)| tags::tags_match(s, from) && tags::tags_match(t, to))
            .map(|(_, _, why)| format!("its records are not usable: {why}"))
            .unwrap_or_else(|| "the source has no such model".into())
    }

    /// The pairs that serve `from`→`to`: the direct model, or two models through English (as
    /// Firefox's getRecordsForTranslatingToAndFromPair). Err names the first missing direction.
    pub fn route(&self, from: &str, to: &str) -> Result<Vec<&PairModels>, (String, String)> {
        tags::route(from, to, |a, b| self.find(a, b))
    }
}

#[cfg(test)]
mod tests;
