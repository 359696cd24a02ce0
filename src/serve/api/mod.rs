//! The routes: one file per dialect, each turning its request shape into a [`ApiRequest`] for
//! [`Core::translate`] and the result into its response shape.
//!
//! | route | dialect |
//! | --- | --- |
//! | `GET /health`, `/v1/languages`, `POST /v1/translate` (`texts`) | reseam (the seed's API) |
//! | `POST /v1/translate` (`text`) | mozilla/translation-service |
//! | `POST /translate` (`q`), `/detect`, `GET /languages`, `/frontend/settings`, `/spec` | LibreTranslate |
//! | `POST /translate` (`text` + `source_lang`/`target_lang`), `/deeplx` | DeepLX |
//! | `POST /v2/translate`, `GET /v2/languages`, `/v2/usage`, `/v2/glossary-language-pairs`, `/v2/glossaries[/…]`, `/v2/document[/…]` | DeepL v2, as its client libraries use it |
//! | `POST /translate` (`text` + `to`), `/translate/batch` | MTranServer |
//! | `POST /imme` | Immersive Translate's custom API |
//! | `POST /kiss` | Kiss Translator's custom API |
//! | `GET /ready`, `/__heartbeat__`, `/__lbheartbeat__`, `/__version__`, `/metrics`, `/` | operations, the web page |

pub mod deepl;
pub mod deepl_options;
pub mod immersive;
pub mod kiss;
pub mod libretranslate;
pub mod mozilla;
pub mod mtranserver;
pub mod ops;
pub mod reseam;

use serde_json::Value;

use super::core::Core;
use super::error::ApiError;
use super::params::Params;

/// A response body.
#[derive(Debug)]
pub enum Body {
    Json(Value),
    /// A content type and a text (the web page, metrics, Dockerflow's `Ready`).
    Text(&'static str, String),
    Empty,
}

/// What a route answers.
#[derive(Debug)]
pub struct Reply {
    pub status: u16,
    pub body: Body,
    /// Texts and bytes of text translated (for the log line).
    pub texts: usize,
    pub chars: usize,
}

impl Reply {
    pub fn json(v: Value) -> Reply {
        Reply { status: 200, body: Body::Json(v), texts: 0, chars: 0 }
    }

    pub fn counted(mut self, texts: &[String]) -> Reply {
        self.texts = texts.len();
        self.chars = texts.iter().map(String::len).sum();
        self
    }
}

/// How a dialect writes an error.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ErrorStyle {
    /// `{"error": "..."}` (LibreTranslate, reseam, MTranServer).
    Error,
    /// `{"message": "..."}` (DeepL).
    Message,
    /// `{"code": N, "message": "..."}` (DeepLX).
    Code,
    /// No body (mozilla/translation-service answers a bad request with an empty 400).
    Empty,
}

impl ErrorStyle {
    pub fn body(self, e: &ApiError) -> Body {
        match self {
            ErrorStyle::Error => Body::Json(serde_json::json!({ "error": e.message })),
            ErrorStyle::Message => Body::Json(serde_json::json!({ "message": e.message })),
            ErrorStyle::Code => Body::Json(serde_json::json!({ "code": e.status, "message": e.message })),
            ErrorStyle::Empty => Body::Empty,
        }
    }

    /// The status `e` is answered with: DeepL's clients know a full queue as 429 (they retry it
    /// with backoff, then raise their too-many-requests error), which the others get as 503.
    pub fn status(self, e: &ApiError) -> u16 {
        match self {
            ErrorStyle::Message if e.status == 503 && e.retry_after.is_some() => 429,
            _ => e.status,
        }
    }
}

/// Every route the server has.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Route {
    Page,
    Health,
    Ready,
    LbHeartbeat,
    Heartbeat,
    Version,
    Metrics,
    Languages,
    /// `POST /v1/translate`: reseam's (`texts`) or mozilla's (`text`).
    Translate,
    /// `POST /translate`: LibreTranslate's, DeepLX's or MTranServer's, by the body's keys.
    CompatTranslate,
    MtBatch,
    LtLanguages,
    Detect,
    LtSettings,
    LtSpec,
    DeepL,
    DeepLLanguages,
    DeepLUsage,
    DeepLGlossaryPairs,
    /// `GET /v2/glossaries`.
    DeepLGlossaries,
    /// `POST /v2/glossaries`.
    DeepLGlossaryCreate,
    /// `/v2/glossaries/{id}` and `/v2/glossaries/{id}/entries`.
    DeepLGlossary,
    DeepLDocument,
    /// `/v2/document/{id}` and `/v2/document/{id}/result`.
    DeepLDocumentStatus,
    /// Any other path under `/v2/`: DeepL's endpoints this server does not have.
    DeepLOther,
    DeepLX,
    Imme,
    Kiss,
}

/// Why no route answers.
pub enum NoRoute {
    NotFound,
    /// The path exists, with other methods.
    Method(&'static str),
}

impl Route {
    /// The route of `method` on `path`.
    pub fn find(method: &str, path: &str) -> Result<Route, NoRoute> {
        let path = if path.len() > 1 { path.trim_end_matches('/') } else { path };
        let (route, allowed) = match path {
            "/" | "/index.html" => (Route::Page, "GET"),
            "/health" | "/healthz" => (Route::Health, "GET"),
            "/ready" | "/readyz" => (Route::Ready, "GET"),
            "/__lbheartbeat__" => (Route::LbHeartbeat, "GET"),
            "/__heartbeat__" => (Route::Heartbeat, "GET"),
            "/__version__" | "/version" => (Route::Version, "GET"),
            "/metrics" => (Route::Metrics, "GET"),
            "/v1/languages" => (Route::Languages, "GET"),
            "/v1/translate" => (Route::Translate, "POST"),
            "/translate" => (Route::CompatTranslate, "POST"),
            "/translate/batch" => (Route::MtBatch, "POST"),
            "/languages" => (Route::LtLanguages, "GET"),
            "/detect" => (Route::Detect, "POST"),
            "/frontend/settings" => (Route::LtSettings, "GET"),
            "/spec" => (Route::LtSpec, "GET"),
            "/v2/translate" | "/deepl" => (Route::DeepL, "POST"),
            "/v2/languages" => (Route::DeepLLanguages, "GET"),
            "/v2/usage" => (Route::DeepLUsage, "GET, POST"),
            "/v2/glossary-language-pairs" => (Route::DeepLGlossaryPairs, "GET"),
            // v3 holds the multilingual glossaries of deepl-python's DeepLClient.
            "/v2/glossaries" | "/v3/glossaries" if method == "POST" => (Route::DeepLGlossaryCreate, "POST"),
            "/v2/glossaries" | "/v3/glossaries" => (Route::DeepLGlossaries, "GET, POST"),
            p if p.starts_with("/v2/glossaries/") || p.starts_with("/v3/glossaries/") => {
                (Route::DeepLGlossary, "GET, DELETE, PATCH, PUT")
            }
            "/v2/document" => (Route::DeepLDocument, "POST"),
            p if p.starts_with("/v2/document/") => (Route::DeepLDocumentStatus, "GET, POST"),
            p if p.starts_with("/v2/") => (Route::DeepLOther, "GET, POST, PUT, PATCH, DELETE"),
            "/deeplx" => (Route::DeepLX, "POST"),
            "/imme" => (Route::Imme, "POST"),
            "/kiss" => (Route::Kiss, "POST"),
            _ => return Err(NoRoute::NotFound),
        };
        // HEAD is GET without the body; LibreTranslate's languages list is also POSTed by some.
        let ok = allowed.split(", ").any(|m| m == method)
            || (allowed.starts_with("GET") && method == "HEAD")
            || (route == Route::LtLanguages && method == "POST");
        if ok { Ok(route) } else { Err(NoRoute::Method(allowed)) }
    }

    /// The name in logs and metrics.
    pub fn name(self) -> &'static str {
        match self {
            Route::Page => "page",
            Route::Health => "health",
            Route::Ready => "ready",
            Route::LbHeartbeat => "lbheartbeat",
            Route::Heartbeat => "heartbeat",
            Route::Version => "version",
            Route::Metrics => "metrics",
            Route::Languages => "v1_languages",
            Route::Translate => "v1_translate",
            Route::CompatTranslate => "translate",
            Route::MtBatch => "translate_batch",
            Route::LtLanguages => "languages",
            Route::Detect => "detect",
            Route::LtSettings => "frontend_settings",
            Route::LtSpec => "spec",
            Route::DeepL => "v2_translate",
            Route::DeepLLanguages => "v2_languages",
            Route::DeepLUsage => "v2_usage",
            Route::DeepLGlossaryPairs => "v2_glossary_language_pairs",
            Route::DeepLGlossaries => "v2_glossaries",
            Route::DeepLGlossaryCreate => "v2_glossary_create",
            Route::DeepLGlossary => "v2_glossary",
            Route::DeepLDocument => "v2_document",
            Route::DeepLDocumentStatus => "v2_document_status",
            Route::DeepLOther => "v2_other",
            Route::DeepLX => "deeplx",
            Route::Imme => "imme",
            Route::Kiss => "kiss",
        }
    }

    /// Open without the token: probes, the web page (it asks for the token itself),
    /// LibreTranslate's two static descriptions, which clients read to learn whether a key is
    /// needed before they have one, and its language list: LibreTranslate never checks a key
    /// there, so Mastodon sends none (`GET /languages` with no `api_key`) and libretranslatepy
    /// puts its key in a GET body; refusing them would switch Mastodon's translations off.
    pub fn public(self) -> bool {
        matches!(
            self,
            Route::Page
                | Route::Health
                | Route::Ready
                | Route::LbHeartbeat
                | Route::Heartbeat
                | Route::Version
                | Route::LtSettings
                | Route::LtSpec
                | Route::LtLanguages
        )
    }

    /// Whether the request's body is read: not a document upload (multipart, refused unread).
    pub fn reads_body(self) -> bool {
        self != Route::DeepLDocument
    }

    /// Whether the route computes (translation, identification): it then waits for one of
    /// HTTP_THREADS slots and runs off the network threads.
    pub fn computes(self) -> bool {
        matches!(
            self,
            Route::Translate
                | Route::CompatTranslate
                | Route::MtBatch
                | Route::Detect
                | Route::DeepL
                | Route::DeepLX
                | Route::Imme
                | Route::Kiss
        )
    }

    /// The error shape of the route (for a request whose body is `params`, when it was read).
    pub fn style(self, params: Option<&Params>) -> ErrorStyle {
        match self {
            Route::DeepL
            | Route::DeepLLanguages
            | Route::DeepLUsage
            | Route::DeepLGlossaryPairs
            | Route::DeepLGlossaries
            | Route::DeepLGlossaryCreate
            | Route::DeepLGlossary
            | Route::DeepLDocument
            | Route::DeepLDocumentStatus
            | Route::DeepLOther => ErrorStyle::Message,
            Route::DeepLX => ErrorStyle::Code,
            Route::Translate if params.is_some_and(mozilla::is_mozilla) => ErrorStyle::Empty,
            Route::CompatTranslate if params.is_some_and(deepl::is_deeplx) => ErrorStyle::Code,
            _ => ErrorStyle::Error,
        }
    }

    /// The status for a missing or wrong token: LibreTranslate and DeepL answer 403. The
    /// `POST /translate` and `/detect` that LibreTranslate shares with DeepLX and MTranServer
    /// answer their bodies (`text` without `q`) with those servers' 401.
    pub fn auth_status(self, params: Option<&Params>) -> u16 {
        let theirs = params.is_some_and(|p| !p.has("q") && p.has("text"));
        match self {
            Route::CompatTranslate | Route::Detect if theirs => 401,
            Route::CompatTranslate | Route::Detect => 403,
            _ if self.style(None) == ErrorStyle::Message => 403,
            _ => 401,
        }
    }

    /// Answers a request whose body and query are `params`.
    pub fn handle(self, core: &Core, params: &Params) -> Result<Reply, ApiError> {
        match self {
            Route::Page => Ok(ops::page()),
            Route::Health => Ok(reseam::health(core)),
            Route::Ready => Ok(ops::ready(core)),
            Route::LbHeartbeat => Ok(Reply { status: 200, body: Body::Empty, texts: 0, chars: 0 }),
            Route::Heartbeat => Ok(ops::heartbeat(core)),
            Route::Version => Ok(ops::version()),
            Route::Metrics => Ok(ops::metrics(core)),
            Route::Languages => Ok(reseam::languages(core)),
            Route::Translate if mozilla::is_mozilla(params) => mozilla::translate(core, params),
            Route::Translate => reseam::translate(core, params),
            Route::CompatTranslate if params.has("q") => libretranslate::translate(core, params),
            Route::CompatTranslate if deepl::is_deeplx(params) => deepl::deeplx(core, params),
            Route::CompatTranslate if params.has("text") => mtranserver::translate(core, params),
            Route::CompatTranslate => Err(ApiError::missing("q")),
            Route::MtBatch => mtranserver::batch(core, params),
            Route::LtLanguages => Ok(libretranslate::languages(core)),
            Route::Detect if !params.has("q") && params.has("text") => mtranserver::detect(core, params),
            Route::Detect => libretranslate::detect(core, params),
            Route::LtSettings => Ok(libretranslate::settings(core)),
            Route::LtSpec => Ok(libretranslate::spec()),
            Route::DeepL => deepl::translate(core, params),
            Route::DeepLLanguages => deepl::languages(core, params),
            Route::DeepLUsage => Ok(deepl::usage(core)),
            Route::DeepLGlossaryPairs => Ok(deepl::glossary_language_pairs()),
            Route::DeepLGlossaries => Ok(deepl::glossaries()),
            Route::DeepLGlossaryCreate => Err(deepl::glossary_create()),
            Route::DeepLGlossary => Err(deepl::glossary()),
            Route::DeepLDocument => Err(deepl::document()),
            Route::DeepLDocumentStatus => Err(deepl::document_status()),
            Route::DeepLOther => Err(ApiError::new(404, "Not found: this server has no such DeepL endpoint")),
            Route::DeepLX => deepl::deeplx(core, params),
            Route::Imme => immersive::translate(core, params),
            Route::Kiss => kiss::translate(core, params),
        }
    }
}
