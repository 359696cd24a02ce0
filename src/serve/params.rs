//! A request's fields, whether they came as a JSON object, a form (`a=1&a=2`, DeepL's repeated
//! `text`) or the query string, read the same way by every dialect.

use serde_json::{Map, Value};

use super::error::ApiError;

/// The fields of one request.
#[derive(Clone, Debug, Default)]
pub struct Params {
    json: Option<Map<String, Value>>,
    /// Form fields, then query fields (LibreTranslate reads both, form first).
    pairs: Vec<(String, String)>,
}

/// How the body was written.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Kind {
    Json,
    Form,
    Empty,
}

/// The body's kind from its `Content-Type` and its first byte. A JSON body sent with a form
/// type is read as JSON: `curl -d '{...}'` sends that (the seed's own example does).
pub fn kind(content_type: Option<&str>, body: &[u8]) -> Result<Kind, ApiError> {
    let ct = content_type.unwrap_or("").split(';').next().unwrap_or("").trim().to_ascii_lowercase();
    let first = body.iter().find(|b| !b.is_ascii_whitespace()).copied();
    if first.is_none() {
        return Ok(Kind::Empty);
    }
    let json_like = matches!(first, Some(b'{') | Some(b'['));
    match ct.as_str() {
        "application/json" => Ok(Kind::Json),
        _ if ct.ends_with("+json") => Ok(Kind::Json),
        "" | "application/x-www-form-urlencoded" | "text/plain" if json_like => Ok(Kind::Json),
        "" | "application/x-www-form-urlencoded" => Ok(Kind::Form),
        other => Err(ApiError::new(
            415,
            format!(
                "Content-Type {other} is not supported; send application/json or application/x-www-form-urlencoded"
            ),
        )),
    }
}

impl Params {
    /// Parses `body` as `kind` says, with the query string after it.
    pub fn parse(kind: Kind, body: &[u8], query: &str) -> Result<Params, ApiError> {
        let mut p = Params::default();
        match kind {
            Kind::Json => {
                let v: Value = serde_json::from_slice(body)
                    .map_err(|e| ApiError::bad_request(format!("Invalid JSON format: {e}")))?;
                match v {
                    Value::Object(m) => p.json = Some(m),
                    _ => return Err(ApiError::bad_request("Invalid JSON format: the body must be a JSON object")),
                }
            }
            Kind::Form => {
                let text = std::str::from_utf8(body)
                    .map_err(|_| ApiError::bad_request("Invalid request: the form body is not valid UTF-8"))?;
                p.pairs.extend(form_urlencoded::parse(text.as_bytes()).map(|(k, v)| (k.into_owned(), v.into_owned())));
            }
            Kind::Empty => {}
        }
        p.pairs.extend(query_pairs(query));
        Ok(p)
    }

    /// The query string alone (GET routes).
    pub fn query(query: &str) -> Params {
        Params { json: None, pairs: query_pairs(query).collect() }
    }

    pub fn is_json(&self) -> bool {
        self.json.is_some()
    }

    /// Whether `key` is present (with any value).
    pub fn has(&self, key: &str) -> bool {
        self.json.as_ref().is_some_and(|m| m.get(key).is_some_and(|v| !v.is_null()))
            || self.pairs.iter().any(|(k, _)| k == key)
    }

    /// A string field; a JSON value of another type is an error naming the field. Numbers and
    /// booleans are read as their text, as form bodies would carry them.
    pub fn str(&self, key: &str) -> Result<Option<String>, ApiError> {
        if let Some(m) = &self.json
            && let Some(v) = m.get(key)
        {
            return match v {
                Value::Null => Ok(None),
                Value::String(s) => Ok(Some(s.clone())),
                Value::Bool(b) => Ok(Some(b.to_string())),
                Value::Number(n) => Ok(Some(n.to_string())),
                _ => Err(ApiError::wrong_type(key, "a string")),
            };
        }
        Ok(self.pairs.iter().find(|(k, _)| k == key).map(|(_, v)| v.clone()))
    }

    /// A string field that must be a string in JSON (`{"text": 5}` is refused, not read as "5"):
    /// for the texts to translate, where a number is a client's mistake.
    pub fn string(&self, key: &str) -> Result<Option<String>, ApiError> {
        match self.json.as_ref().and_then(|m| m.get(key)) {
            Some(Value::Number(_) | Value::Bool(_)) => Err(ApiError::wrong_type(key, "a string")),
            _ => self.str(key),
        }
    }

    /// A list of names: a JSON array of strings or one string, or one or repeated form fields;
    /// each item may itself be comma-separated (DeepL's `ignore_tags=a,b`). Blank items dropped.
    pub fn list(&self, key: &str) -> Result<Option<Vec<String>>, ApiError> {
        let raw: Vec<String> = match self.json.as_ref().and_then(|m| m.get(key)) {
            Some(Value::Null) => return Ok(None),
            Some(Value::Array(items)) => {
                let mut out = Vec::with_capacity(items.len());
                for (i, item) in items.iter().enumerate() {
                    match item {
                        Value::String(s) => out.push(s.clone()),
                        _ => return Err(ApiError::wrong_type(&format!("{key}[{i}]"), "a string")),
                    }
                }
                out
            }
            Some(Value::String(s)) => vec![s.clone()],
            Some(_) => return Err(ApiError::wrong_type(key, "a string or an array of strings")),
            None => {
                let values: Vec<String> = self.pairs.iter().filter(|(k, _)| k == key).map(|(_, v)| v.clone()).collect();
                if values.is_empty() {
                    return Ok(None);
                }
                values
            }
        };
        Ok(Some(
            raw.iter().flat_map(|s| s.split(',')).map(str::trim).filter(|s| !s.is_empty()).map(String::from).collect(),
        ))
    }

    /// A required string field.
    pub fn required(&self, key: &str) -> Result<String, ApiError> {
        self.str(key)?.ok_or_else(|| ApiError::missing(key))
    }

    /// Texts: a string or an array of strings in JSON, one or repeated fields in a form. The
    /// flag says whether the client sent a list (so it wants a list back).
    pub fn texts(&self, key: &str) -> Result<Option<(Vec<String>, bool)>, ApiError> {
        if let Some(m) = &self.json
            && let Some(v) = m.get(key)
        {
            return match v {
                Value::Null => Ok(None),
                Value::String(s) => Ok(Some((vec![s.clone()], false))),
                Value::Array(items) => {
                    let mut out = Vec::with_capacity(items.len());
                    for (i, item) in items.iter().enumerate() {
                        match item {
                            Value::String(s) => out.push(s.clone()),
                            _ => return Err(ApiError::wrong_type(&format!("{key}[{i}]"), "a string")),
                        }
                    }
                    Ok(Some((out, true)))
                }
                _ => Err(ApiError::wrong_type(key, "a string or an array of strings")),
            };
        }
        let values: Vec<String> = self.pairs.iter().filter(|(k, _)| k == key).map(|(_, v)| v.clone()).collect();
        let list = values.len() > 1;
        Ok((!values.is_empty()).then_some((values, list)))
    }
}

fn query_pairs(query: &str) -> impl Iterator<Item = (String, String)> + '_ {
    form_urlencoded::parse(query.as_bytes()).map(|(k, v)| (k.into_owned(), v.into_owned()))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn json_and_form_read_alike() {
        let j = Params::parse(Kind::Json, br#"{"q":["a","b"],"source":"es","n":3}"#, "").unwrap();
        assert_eq!(j.texts("q").unwrap(), Some((vec!["a".into(), "b".into()], true)));
        assert_eq!(j.str("source").unwrap().as_deref(), Some("es"));
        assert_eq!(j.str("n").unwrap().as_deref(), Some("3"));
        let f = Params::parse(Kind::Form, b"text=a&text=b%20c&target_lang=EN", "token=t").unwrap();
        assert_eq!(f.texts("text").unwrap(), Some((vec!["a".into(), "b c".into()], true)));
        assert_eq!(f.str("token").unwrap().as_deref(), Some("t"));
        let one = Params::parse(Kind::Form, b"q=Hola", "").unwrap();
        assert_eq!(one.texts("q").unwrap(), Some((vec!["Hola".into()], false)));
    }

    #[test]
    fn wrong_types_are_named() {
        let j = Params::parse(Kind::Json, br#"{"q":[1],"source":{"a":1},"texts":7}"#, "").unwrap();
        assert!(j.texts("q").unwrap_err().message.contains("q[0]"));
        assert!(j.str("source").unwrap_err().message.contains("source"));
        assert!(j.texts("texts").unwrap_err().message.contains("texts"));
        assert_eq!(j.required("target").unwrap_err().message, "Invalid request: missing target parameter");
    }

    #[test]
    fn strict_strings_and_lists() {
        let j =
            Params::parse(Kind::Json, br#"{"text":5,"ok":"a","t":["a,b"," c",""],"u":"x, y","bad":[1]}"#, "").unwrap();
        assert!(j.string("text").unwrap_err().message.contains("text must be a string"));
        assert_eq!(j.string("ok").unwrap().as_deref(), Some("a"));
        assert_eq!(j.string("none").unwrap(), None);
        assert_eq!(j.list("t").unwrap(), Some(vec!["a".into(), "b".into(), "c".into()]));
        assert_eq!(j.list("u").unwrap(), Some(vec!["x".into(), "y".into()]));
        assert!(j.list("bad").unwrap_err().message.contains("bad[0]"));
        assert_eq!(j.list("none").unwrap(), None);
        let f = Params::parse(Kind::Form, b"tags=a,b&tags=c&text=5", "").unwrap();
        assert_eq!(f.list("tags").unwrap(), Some(vec!["a".into(), "b".into(), "c".into()]));
        assert_eq!(f.string("text").unwrap().as_deref(), Some("5"), "a form carries text only");
    }

    #[test]
    fn bodies_that_are_not_objects() {
        for body in [&b"[1,2]"[..], b"{\"q\":", b"nul", b"{\"a\":1e999999}", b"\xff\xfe"] {
            let k = kind(Some("application/json"), body).unwrap();
            assert_eq!(Params::parse(k, body, "").unwrap_err().status, 400, "{body:?}");
        }
        let deep = "[".repeat(10_000);
        assert_eq!(Params::parse(Kind::Json, deep.as_bytes(), "").unwrap_err().status, 400);
        assert_eq!(kind(Some("text/xml"), b"<a/>").unwrap_err().status, 415);
        assert_eq!(kind(Some("application/x-www-form-urlencoded"), br#"{"a":1}"#).unwrap(), Kind::Json);
        assert_eq!(kind(None, b"").unwrap(), Kind::Empty);
        assert_eq!(Params::parse(Kind::Form, b"q=\xff", "").unwrap_err().status, 400);
    }
}
