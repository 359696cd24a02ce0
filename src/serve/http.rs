//! The HTTP side: connections, limits, timeouts, the token, CORS, one log line per request.
//!
//! Reading a request costs a network task, not a thread, so slow or stalled clients hold only
//! their own connection (until READ_TIMEOUT); a request that computes waits for one of
//! HTTP_THREADS slots only once its body is read whole, and computes on a blocking thread while
//! the network threads go on answering `/health` and everyone else.

use std::convert::Infallible;
use std::sync::Arc;
use std::sync::atomic::Ordering;
use std::time::{Duration, Instant};

use http_body_util::{BodyExt, Full, LengthLimitError, Limited};
use hyper::body::{Bytes, Incoming};
use hyper::header::{self, HeaderValue};
use hyper::{Method, Request, Response, StatusCode};
use tokio::sync::{OwnedSemaphorePermit, Semaphore};

use super::api::{Body, NoRoute, Reply, Route};
use super::auth::{self, Offered};
use super::conns::{Conn, Conns};
use super::core::Core;
use super::error::ApiError;
use super::log;
use super::params::{self, Params};

/// Limits of the HTTP layer.
#[derive(Clone, Debug)]
pub struct HttpOptions {
    /// Requests computing at once (the seed's HTTP_THREADS).
    pub http_threads: usize,
    /// Requests waiting for a compute slot before new ones get 503.
    pub max_queue: usize,
    /// Largest request body read; a larger one is refused with 413 before it is read.
    pub max_body: usize,
    /// Time allowed for a request's headers, and then for its body.
    pub read_timeout: Duration,
    /// Open connections; more are closed as they come.
    pub max_connections: usize,
    /// Requests on one keep-alive connection before the server closes it.
    pub keep_alive_requests: usize,
    /// The operations listener (`--admin-port`): only the probes and /metrics, no token.
    pub admin: bool,
    pub token: Option<String>,
}

/// What every connection shares.
pub struct Shared {
    pub core: Arc<Core>,
    pub opts: HttpOptions,
    slots: Arc<Semaphore>,
    /// Of the slots, those heavy requests may hold ([`heavy_slots`]).
    heavy: Arc<Semaphore>,
}

impl Shared {
    pub fn new(core: Arc<Core>, opts: HttpOptions) -> Shared {
        let slots = Arc::new(Semaphore::new(opts.http_threads.max(1)));
        let heavy = Arc::new(Semaphore::new(heavy_slots(opts.http_threads.max(1))));
        Shared { core, opts, slots, heavy }
    }
}

pub type HttpResponse = Response<Full<Bytes>>;

/// The service of one connection: counts its requests, closes it after `keep_alive_requests`.
pub async fn handle(
    shared: Arc<Shared>,
    conns: Arc<Conns>,
    conn: Arc<Conn>,
    req: Request<Incoming>,
) -> Result<HttpResponse, Infallible> {
    if !conn.begin() {
        // The cap closed this connection as a request arrived: the reply goes nowhere.
        let mut r = Response::new(Full::new(Bytes::new()));
        *r.status_mut() = StatusCode::SERVICE_UNAVAILABLE;
        r.headers_mut().insert(header::CONNECTION, HeaderValue::from_static("close"));
        return Ok(r);
    }
    let started = Instant::now();
    let method = req.method().clone();
    let path = req.uri().path().to_string();
    let (route, mut resp, texts, chars) = answer(&shared, req).await;
    let h = resp.headers_mut();
    for (k, v) in CORS {
        h.insert(*k, HeaderValue::from_static(v));
    }
    if conn.served.fetch_add(1, Ordering::SeqCst) + 1 >= shared.opts.keep_alive_requests {
        h.insert(header::CONNECTION, HeaderValue::from_static("close"));
    }
    conn.end(&conns);
    let status = resp.status().as_u16();
    let took = started.elapsed();
    shared.core.metrics.request(route, status, took);
    // The path only: the query may hold a token, and the body the texts.
    log::info(&format!(
        "{method} {} {status} {:.1}ms route={route} texts={texts} chars={chars}",
        printable(&path),
        took.as_secs_f64() * 1e3
    ));
    Ok(resp)
}

/// LibreTranslate's CORS headers, on every response, so that browser clients can call us.
const CORS: &[(&str, &str)] = &[
    ("access-control-allow-origin", "*"),
    ("access-control-allow-headers", "Authorization, Content-Type, X-API-Token"),
    ("access-control-expose-headers", "Authorization"),
    ("access-control-allow-methods", "GET, POST"),
    ("access-control-allow-credentials", "true"),
    ("access-control-max-age", "1728000"),
];

/// A path as it may appear in a log line: control characters escaped, at most 200 bytes.
fn printable(path: &str) -> String {
    let mut s: String = path.chars().flat_map(char::escape_default).take(200).collect();
    if s.len() < path.len() && path.len() > 200 {
        s.push('…');
    }
    s
}

async fn answer(shared: &Shared, req: Request<Incoming>) -> (&'static str, HttpResponse, usize, usize) {
    let method = req.method().clone();
    if method == Method::OPTIONS {
        let mut r = Response::new(Full::new(Bytes::new()));
        *r.status_mut() = StatusCode::NO_CONTENT;
        return ("preflight", r, 0, 0);
    }
    let route = match Route::find(method.as_str(), req.uri().path()) {
        Ok(r) if shared.opts.admin && !on_admin_port(r) => {
            let e = ApiError::new(404, "Not Found: the admin port serves only the probes and /metrics");
            return ("unknown", error_response(super::api::ErrorStyle::Error, &e), 0, 0);
        }
        Ok(r) => r,
        Err(NoRoute::NotFound) => {
            let e = ApiError::new(
                404,
                format!("Not Found: no route {}; see GET /spec or the README", printable(req.uri().path())),
            );
            return ("unknown", error_response(super::api::ErrorStyle::Error, &e), 0, 0);
        }
        Err(NoRoute::Method(allowed)) => {
            let e = ApiError::new(405, format!("Method Not Allowed: {} takes {allowed}", printable(req.uri().path())));
            let mut r = error_response(super::api::ErrorStyle::Error, &e);
            r.headers_mut().insert(header::ALLOW, HeaderValue::from_static(allowed));
            return ("unknown", r, 0, 0);
        }
    };
    match respond(shared, route, req).await {
        // A HEAD reply keeps GET's body: hyper sends its Content-Length and leaves the body out.
        Ok(reply) => {
            let (texts, chars) = (reply.texts, reply.chars);
            (route.name(), reply_response(reply), texts, chars)
        }
        Err((e, style)) => {
            let mut r = error_response(style, &e);
            if e.status == 408 || e.status == 413 {
                // The rest of the body was not read: the connection cannot carry another request.
                r.headers_mut().insert(header::CONNECTION, HeaderValue::from_static("close"));
            }
            (route.name(), r, 0, 0)
        }
    }
}

type Failed = (ApiError, super::api::ErrorStyle);

/// The routes of the admin port: the probes and /metrics.
fn on_admin_port(route: Route) -> bool {
    matches!(
        route,
        Route::Health | Route::Ready | Route::LbHeartbeat | Route::Heartbeat | Route::Version | Route::Metrics
    )
}

async fn respond(shared: &Shared, route: Route, req: Request<Incoming>) -> Result<Reply, Failed> {
    let plain = route.style(None);
    let query = req.uri().query().unwrap_or("").to_string();
    let header = |name: header::HeaderName| req.headers().get(name).and_then(|v| v.to_str().ok()).map(str::to_string);
    let authorization = header(header::AUTHORIZATION);
    let x_api_token = req.headers().get("x-api-token").and_then(|v| v.to_str().ok()).map(str::to_string);
    let content_type = header(header::CONTENT_TYPE);
    // A GET's form body is read too: deepl-python sends `/v2/languages`' `type=target` there.
    let mut size = query.len();
    let parsed: Result<Params, ApiError> = if req.method() != Method::HEAD && route.reads_body() {
        match read_body(&shared.opts, req).await {
            Ok(bytes) => {
                size += bytes.len();
                params::kind(content_type.as_deref(), &bytes).and_then(|k| Params::parse(k, &bytes, &query))
            }
            // Size and time limits come before the token: nothing more is read either way.
            Err(e) => return Err((e, plain)),
        }
    } else {
        Ok(Params::query(&query))
    };
    if let Some(token) = &shared.opts.token
        && !route.public()
    {
        let offered = Offered { authorization: authorization.as_deref(), x_api_token: x_api_token.as_deref() };
        let style = route.style(parsed.as_ref().ok());
        let status = route.auth_status(parsed.as_ref().ok());
        match auth::check(token, &offered, parsed.as_ref().ok()) {
            Some(true) => {}
            found => {
                let message = match (status, found) {
                    // LibreTranslate's wording, which its clients look for.
                    (403, Some(_)) => "Invalid API key".to_string(),
                    (403, None) => "Please contact the server operator to get an API key".to_string(),
                    (_, Some(_)) => "Unauthorized: the token is wrong".to_string(),
                    (_, None) => "Unauthorized: this server needs a token (Authorization: Bearer <token>)".to_string(),
                };
                return Err((ApiError::new(status, message), style));
            }
        }
    }
    let params = parsed.map_err(|e| (e, plain))?;
    let style = route.style(Some(&params));
    if !route.computes() {
        return route.handle(&shared.core, &params).map_err(|e| (e, style));
    }
    // A heavy request takes one of the heavy slots first, so that a quarter of the compute
    // slots stay for light ones: 64 requests of MAX_CHARS each would otherwise hold every slot
    // for minutes while a one-sentence request waited in the queue for one of them to end.
    let heavy = if size > shared.core.limits.max_chars / HEAVY_FRACTION {
        Some(slot(shared, &shared.heavy).await.map_err(|e| (e, style))?)
    } else {
        None
    };
    let permit = slot(shared, &shared.slots).await.map_err(|e| (e, style))?;
    let core = shared.core.clone();
    core.metrics.in_flight.fetch_add(1, Ordering::SeqCst);
    let result = tokio::task::spawn_blocking(move || {
        let r = route.handle(&core, &params);
        core.metrics.in_flight.fetch_sub(1, Ordering::SeqCst);
        drop(permit);
        drop(heavy);
        r
    })
    .await;
    match result {
        Ok(r) => r.map_err(|e| (e, style)),
        Err(e) => {
            log::error(&format!("a request handler failed: {e}"));
            shared.core.metrics.in_flight.fetch_sub(1, Ordering::SeqCst);
            Err((ApiError::new(500, "Internal server error; the server's log says more"), style))
        }
    }
}

/// A request whose body and query together are over MAX_CHARS / this many bytes is heavy.
const HEAVY_FRACTION: usize = 4;

/// Compute slots heavy requests may hold at once: three quarters of HTTP_THREADS (all when
/// there are fewer than 2).
pub fn heavy_slots(http_threads: usize) -> usize {
    (http_threads - http_threads / 4).max(1)
}

/// One of `slots`, waiting in the queue (of MAX_QUEUE, 503 beyond) if none is free.
async fn slot(shared: &Shared, slots: &Arc<Semaphore>) -> Result<OwnedSemaphorePermit, ApiError> {
    if let Ok(p) = slots.clone().try_acquire_owned() {
        return Ok(p);
    }
    let metrics = &shared.core.metrics;
    if metrics.queued.fetch_add(1, Ordering::SeqCst) >= shared.opts.max_queue {
        metrics.queued.fetch_sub(1, Ordering::SeqCst);
        return Err(ApiError::busy(1));
    }
    let p = slots.clone().acquire_owned().await;
    metrics.queued.fetch_sub(1, Ordering::SeqCst);
    p.map_err(|_| ApiError::new(503, "the server is shutting down"))
}

/// The whole body, within the size and time limits: a declared length over the limit is refused
/// before a byte of the body is read.
async fn read_body(opts: &HttpOptions, req: Request<Incoming>) -> Result<Bytes, ApiError> {
    let too_large =
        || ApiError::too_large(format!("Payload Too Large: the request body is over {} bytes", opts.max_body));
    if let Some(len) = req.headers().get(header::CONTENT_LENGTH).and_then(|v| v.to_str().ok())
        && len.trim().parse::<u64>().is_ok_and(|n| n > opts.max_body as u64)
    {
        return Err(too_large());
    }
    let body = Limited::new(req.into_body(), opts.max_body);
    match tokio::time::timeout(opts.read_timeout, body.collect()).await {
        Err(_) => Err(ApiError::new(
            408,
            format!("Request Timeout: the body did not arrive within {} s", opts.read_timeout.as_secs()),
        )),
        Ok(Err(e)) if e.downcast_ref::<LengthLimitError>().is_some() => Err(too_large()),
        Ok(Err(e)) => Err(ApiError::bad_request(format!("reading the request body: {e}"))),
        Ok(Ok(c)) => Ok(c.to_bytes()),
    }
}

fn with_body(status: u16, body: Body) -> HttpResponse {
    let (ct, bytes): (Option<&str>, Vec<u8>) = match body {
        // Serialising a Value cannot fail.
        Body::Json(v) => (Some("application/json; charset=utf-8"), serde_json::to_vec(&v).unwrap_or_default()),
        Body::Text(ct, s) => (Some(ct), s.into_bytes()),
        Body::Empty => (None, Vec::new()),
    };
    let mut r = Response::new(Full::new(Bytes::from(bytes)));
    *r.status_mut() = StatusCode::from_u16(status).unwrap_or(StatusCode::INTERNAL_SERVER_ERROR);
    if let Some(ct) = ct {
        r.headers_mut().insert(header::CONTENT_TYPE, HeaderValue::from_static(ct));
    }
    r
}

fn reply_response(reply: Reply) -> HttpResponse {
    with_body(reply.status, reply.body)
}

fn error_response(style: super::api::ErrorStyle, e: &ApiError) -> HttpResponse {
    let mut r = with_body(style.status(e), style.body(e));
    if style == super::api::ErrorStyle::Empty {
        // mozilla's dialect answers with no body; the reason goes in a header instead.
        let ascii: String = e.message.chars().map(|c| if c.is_ascii_graphic() || c == ' ' { c } else { '?' }).collect();
        if let Ok(v) = HeaderValue::from_str(&ascii) {
            r.headers_mut().insert("x-reseam-error", v);
        }
    }
    if let Some(s) = e.retry_after {
        r.headers_mut().insert(header::RETRY_AFTER, HeaderValue::from(s));
    }
    if e.status == 401 {
        r.headers_mut().insert(header::WWW_AUTHENTICATE, HeaderValue::from_static("Bearer realm=\"reseam\""));
    }
    r
}
