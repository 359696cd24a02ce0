//! What a request gets back when it fails: a status and a message, written in each dialect's
//! error shape by the route that failed.

use crate::engine::EngineError;
use crate::translate::TranslateError;

/// A failed request.
#[derive(Clone, Debug, PartialEq)]
pub struct ApiError {
    pub status: u16,
    pub message: String,
    /// Seconds for `Retry-After` (a full queue).
    pub retry_after: Option<u64>,
}

impl ApiError {
    pub fn new(status: u16, message: impl Into<String>) -> ApiError {
        ApiError { status, message: message.into(), retry_after: None }
    }

    pub fn bad_request(message: impl Into<String>) -> ApiError {
        ApiError::new(400, message)
    }

    pub fn too_large(message: impl Into<String>) -> ApiError {
        ApiError::new(413, message)
    }

    /// LibreTranslate's wording for a missing field ("Invalid request: missing q parameter").
    pub fn missing(field: &str) -> ApiError {
        ApiError::bad_request(format!("Invalid request: missing {field} parameter"))
    }

    pub fn wrong_type(field: &str, want: &str) -> ApiError {
        ApiError::bad_request(format!("Invalid request: {field} must be {want}"))
    }

    pub fn no_detection() -> ApiError {
        ApiError::bad_request(
            "source language auto needs language identification, and none of the installed models' \
             languages can be identified; give the source language",
        )
    }

    pub fn busy(retry_after: u64) -> ApiError {
        ApiError {
            status: 503,
            message: "the server is busy: too many requests are waiting; retry later".into(),
            retry_after: Some(retry_after),
        }
    }

    /// A failure of the server itself: logged in full (never with the request's texts), told to
    /// the client in general terms.
    pub fn internal(e: &(dyn std::error::Error + 'static)) -> ApiError {
        crate::serve::log::error(&format!("internal error: {}", chain(e)));
        ApiError::new(500, "Internal server error; the server's log says more")
    }

    /// A translation error: the client's fault (400) when the error says so
    /// ([`crate::error::is_usage`]), else a 500.
    pub fn from_error(e: &(dyn std::error::Error + 'static)) -> ApiError {
        // Over MAX_PIECES is a request too large, as over MAX_CHARS, and says so alone.
        let mut cur = Some(e);
        while let Some(c) = cur {
            if let Some(over) = over_budget(c) {
                return ApiError::too_large(format!("{over} (MAX_PIECES)"));
            }
            cur = c.source();
        }
        if crate::error::is_usage(e) { ApiError::bad_request(chain(e)) } else { ApiError::internal(e) }
    }
}

/// The engine's refusal of a request over MAX_PIECES, if `e` is one (a translator's error wraps
/// the engine's transparently, so it is asked for too).
fn over_budget<'e>(e: &'e (dyn std::error::Error + 'static)) -> Option<&'e EngineError> {
    let engine = match (e.downcast_ref::<EngineError>(), e.downcast_ref::<TranslateError>()) {
        (Some(x), _) | (None, Some(TranslateError::Engine(x))) => x,
        _ => return None,
    };
    matches!(engine, EngineError::OverBudget { .. }).then_some(engine)
}

/// `e: cause: cause`, as the command line prints errors.
fn chain(e: &(dyn std::error::Error + 'static)) -> String {
    let mut s = e.to_string();
    let mut cur = e.source();
    while let Some(c) = cur {
        let m = c.to_string();
        if !s.contains(&m) {
            s.push_str(": ");
            s.push_str(&m);
        }
        cur = c.source();
    }
    s
}
