//! TRANSLATE_TOKEN: where clients put it, and where the server reads it from.
//!
//! Clients put the token in six places (../shared/docs/serve-api.md §0.2): `Authorization:
//! Bearer T`, a raw `Authorization: T` (Zotero), `Authorization: DeepL-Auth-Key T`, `api_key` in
//! the body (LibreTranslate clients), `?token=` or `?api_token=` (Immersive Translate's URL), and
//! `X-API-Token` (MTranServer). Every one is accepted. Without a configured token, none is
//! looked at: Kiss Translator sends `Authorization: Bearer ` even with no key set.

use std::path::{Path, PathBuf};

use super::params::Params;

/// The token the operator configured, from the first of: TRANSLATE_TOKEN, the file
/// TRANSLATE_TOKEN_FILE names, systemd's credential `$CREDENTIALS_DIRECTORY/translate-token`.
pub fn configured(
    token: Option<&str>,
    file: Option<&Path>,
    credentials_dir: Option<&Path>,
) -> Result<Option<String>, TokenError> {
    if let Some(t) = token.map(str::trim).filter(|t| !t.is_empty()) {
        return Ok(Some(t.to_string()));
    }
    let read = |p: PathBuf| -> Result<Option<String>, TokenError> {
        let text = std::fs::read_to_string(&p).map_err(|source| TokenError::Read { path: p.clone(), source })?;
        let t = text.trim();
        if t.is_empty() { Err(TokenError::Empty(p)) } else { Ok(Some(t.to_string())) }
    };
    if let Some(f) = file {
        return read(f.to_path_buf());
    }
    if let Some(dir) = credentials_dir {
        let p = dir.join("translate-token");
        if p.exists() {
            return read(p);
        }
    }
    Ok(None)
}

#[derive(Debug, thiserror::Error)]
pub enum TokenError {
    #[error("reading the token from {path}")]
    Read { path: PathBuf, source: std::io::Error },
    #[error("{0}: the token file is empty")]
    Empty(PathBuf),
}

crate::error::fault!(TokenError);

impl TokenError {
    pub fn is_usage(&self) -> bool {
        true
    }
}

/// What a request offered as its token.
#[derive(Default, Debug)]
pub struct Offered<'a> {
    pub authorization: Option<&'a str>,
    pub x_api_token: Option<&'a str>,
}

/// Every token the request carries, in any of the accepted places.
fn candidates<'a>(offered: &'a Offered<'a>, params: Option<&'a Params>) -> Vec<String> {
    let mut out = Vec::new();
    if let Some(a) = offered.authorization {
        let a = a.trim();
        let lower = a.to_ascii_lowercase();
        let schemes = ["bearer", "deepl-auth-key", "token"];
        let stripped = if schemes.contains(&lower.as_str()) {
            // A scheme with no credential after it (Kiss Translator without a key).
            ""
        } else {
            schemes
                .iter()
                .find(|p| lower.starts_with(*p) && lower[p.len()..].starts_with(' '))
                .map(|p| a[p.len()..].trim())
                .unwrap_or(a)
        };
        out.push(stripped.to_string());
    }
    if let Some(x) = offered.x_api_token {
        out.push(x.trim().to_string());
    }
    if let Some(p) = params {
        for key in ["api_key", "token", "api_token", "auth_key"] {
            if let Ok(Some(v)) = p.str(key) {
                out.push(v);
            }
        }
    }
    out
}

/// Whether the request carries `token` anywhere; `Some(false)` when it carries something else,
/// `None` when it carries nothing (clients and errors tell those apart).
pub fn check(token: &str, offered: &Offered, params: Option<&Params>) -> Option<bool> {
    let c = candidates(offered, params);
    if c.iter().all(String::is_empty) {
        return None;
    }
    // Every candidate is compared, so the time taken does not say which one matched.
    Some(c.iter().fold(false, |ok, t| equal(t.as_bytes(), token.as_bytes()) | ok))
}

/// Equality in time independent of where two equal-length values differ.
fn equal(a: &[u8], b: &[u8]) -> bool {
    if a.len() != b.len() {
        return false;
    }
    let diff = a.iter().zip(b).fold(0u8, |d, (x, y)| d | (x ^ y));
    std::hint::black_box(diff) == 0
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::serve::params::Kind;

    #[test]
    fn every_form_clients_send() {
        let t = "s3cret";
        let header = |a: &'static str| Offered { authorization: Some(a), x_api_token: None };
        assert_eq!(check(t, &header("Bearer s3cret"), None), Some(true));
        assert_eq!(check(t, &header("bearer s3cret"), None), Some(true));
        assert_eq!(check(t, &header("s3cret"), None), Some(true));
        assert_eq!(check(t, &header("DeepL-Auth-Key s3cret"), None), Some(true));
        assert_eq!(check(t, &header("Bearer wrong"), None), Some(false));
        assert_eq!(check(t, &Offered { authorization: None, x_api_token: Some("s3cret") }, None), Some(true));
        let body = Params::parse(Kind::Json, br#"{"api_key":"s3cret"}"#, "").unwrap();
        assert_eq!(check(t, &Offered::default(), Some(&body)), Some(true));
        let query = Params::query("token=s3cret");
        assert_eq!(check(t, &Offered::default(), Some(&query)), Some(true));
        let query = Params::query("api_token=s3cre");
        assert_eq!(check(t, &Offered::default(), Some(&query)), Some(false));
        assert_eq!(check(t, &Offered::default(), None), None);
        // Kiss Translator's empty Bearer is no token.
        assert_eq!(check(t, &header("Bearer "), None), None);
    }

    #[test]
    fn token_sources_in_order() {
        let dir = tempfile::tempdir().unwrap();
        let f = dir.path().join("tok");
        std::fs::write(&f, "from-file\n").unwrap();
        std::fs::write(dir.path().join("translate-token"), "from-credential\n").unwrap();
        assert_eq!(configured(Some("env"), Some(&f), Some(dir.path())).unwrap().as_deref(), Some("env"));
        assert_eq!(configured(None, Some(&f), Some(dir.path())).unwrap().as_deref(), Some("from-file"));
        assert_eq!(configured(Some(" "), None, Some(dir.path())).unwrap().as_deref(), Some("from-credential"));
        assert_eq!(configured(None, None, None).unwrap(), None);
        let e = configured(None, Some(&dir.path().join("missing")), None).unwrap_err();
        assert!(format!("{e}").contains("missing"));
        std::fs::write(&f, "  \n").unwrap();
        assert!(configured(None, Some(&f), None).is_err());
    }
}
