//! `reseam serve`: the HTTP daemon. Every request of every dialect becomes one call of
//! [`core::Core::translate`], whose sentences share decoder steps with every other request's on
//! the one engine ([`crate::engine`]), over the models of one registry
//! ([`crate::engine::registry`]: mapped packs, idle models' pages given back).
//!
//! Request flow: connection ([`http`]: limits, timeouts, token, CORS, log line) → route and
//! dialect ([`api`]: the body's shape to a [`core::ApiRequest`]) → [`core::Core`] (limits, languages
//! normalised) → [`crate::translate::Service`] (`auto` identified, grouped by pair, posts or HTML
//! through the social-post pipeline), the same door `reseam translate` uses → the engine.
//!
//! Lifecycle: the port opens first (so `/health` answers at once); PRELOAD maps and pages in
//! every model, then `/ready` turns 200 and systemd hears `READY=1`. SIGHUP reloads the models
//! folder; SIGTERM or SIGINT stops accepting, finishes what is in flight (at most DRAIN_SECONDS)
//! and exits 0.

pub mod api;
pub mod auth;
pub mod conns;
pub mod core;
pub mod error;
pub mod http;
pub mod lang_codes;
pub mod log;
pub mod metrics;
pub mod params;

use std::net::SocketAddr;
use std::path::PathBuf;
use std::sync::Arc;
use std::sync::atomic::Ordering;
use std::time::Duration;

use hyper::server::conn::http1;
use hyper::service::service_fn;
use hyper_util::rt::{TokioIo, TokioTimer};
use tokio::net::TcpListener;
use tokio::signal::unix::{SignalKind, signal};

use crate::engine::registry::{RegistryError, RegistryOptions};
use crate::engine::{Engine, EngineError, EngineOptions};
use crate::translate::TranslateOptions;

use self::conns::Conns;
use self::core::{Core, Limits};
use self::http::{HttpOptions, Shared};

/// Every setting of the server (the seed's table, and the limits it leaves implicit).
#[derive(Clone, Debug)]
pub struct ServeOptions {
    /// The models folder and the engine's settings (threads, pinning, arithmetic, MKL's orders,
    /// MAX_BATCH, shortlist, packs), as every command that runs the engine takes them.
    pub engine: TranslateOptions,
    pub host: String,
    pub port: u16,
    pub max_texts: usize,
    pub max_chars: usize,
    /// Most source pieces of one request's texts of one source language (0: no limit).
    pub max_pieces: usize,
    pub http_threads: usize,
    pub max_queue: usize,
    pub max_body: usize,
    pub max_connections: usize,
    /// A second port serving only /health, /ready, the heartbeats and /metrics, with connections
    /// of its own: answerable whatever floods the main port.
    pub admin_port: Option<u16>,
    /// How long a connection may stay idle while three quarters of MAX_CONNECTIONS are open.
    pub pressure_idle_timeout: Duration,
    pub read_timeout: Duration,
    pub drain: Duration,
    pub preload: bool,
    pub idle_seconds: u64,
    /// The token itself (TRANSLATE_TOKEN), a file holding it, systemd's credentials folder.
    pub token: Option<String>,
    pub token_file: Option<PathBuf>,
    pub credentials_dir: Option<PathBuf>,
    pub log_level: log::Level,
}

#[derive(Debug, thiserror::Error)]
pub enum ServeError {
    #[error("cannot listen on {addr}")]
    Bind { addr: String, source: std::io::Error },
    #[error("starting the server's runtime")]
    Runtime(#[source] std::io::Error),
    #[error(transparent)]
    Token(#[from] auth::TokenError),
    #[error(transparent)]
    Engine(#[from] EngineError),
    #[error(transparent)]
    Registry(#[from] RegistryError),
    #[error("preloading the models failed")]
    Preload(#[source] RegistryError),
}

crate::error::fault!(ServeError);

impl ServeError {
    pub fn is_usage(&self) -> bool {
        match self {
            // A port in use or a host that is not an address is the operator's to fix.
            ServeError::Bind { .. } => true,
            ServeError::Runtime(_) | ServeError::Preload(_) => false,
            ServeError::Token(e) => e.is_usage(),
            ServeError::Engine(e) => e.is_usage(),
            ServeError::Registry(e) => e.is_usage(),
        }
    }
}

/// Runs the server until SIGTERM or SIGINT. `on_listening` is told the address once the port is
/// open (the port chosen when `port` is 0).
pub fn run(opts: &ServeOptions, on_listening: impl FnOnce(SocketAddr) + Send) -> Result<(), ServeError> {
    log::set_level(opts.log_level);
    let token = auth::configured(opts.token.as_deref(), opts.token_file.as_deref(), opts.credentials_dir.as_deref())?;
    let base = &opts.engine;
    let max_batch = base.max_batch.max(1);
    let engine = Arc::new(Engine::new(&EngineOptions {
        debug: false,
        release_after: (opts.idle_seconds > 0).then(|| Duration::from_secs(opts.idle_seconds)),
        // An eighth of the batch stays for light requests: many clients share this engine.
        light_places: if max_batch < 2 { 0 } else { (max_batch / 8).max(1) },
        notes: log::note,
        max_pieces: (opts.max_pieces > 0).then_some(opts.max_pieces),
        ..base.engine_options()
    })?);
    let registry = RegistryOptions {
        load: base.load_options(),
        idle_seconds: opts.idle_seconds,
        preload: opts.preload,
        notes: log::note,
    };
    let limits = Limits { max_texts: opts.max_texts, max_chars: opts.max_chars };
    let core = Arc::new(Core::new(base.models.clone(), registry, engine, base.clone(), limits, token.is_some())?);
    let http = HttpOptions {
        http_threads: opts.http_threads.max(1),
        max_queue: opts.max_queue,
        max_body: opts.max_body,
        read_timeout: opts.read_timeout,
        max_connections: opts.max_connections.max(1),
        keep_alive_requests: KEEP_ALIVE_REQUESTS,
        admin: false,
        token,
    };
    let runtime = tokio::runtime::Builder::new_multi_thread()
        // The network needs little: parsing and writing; translation runs on blocking threads.
        .worker_threads(2)
        .max_blocking_threads(opts.http_threads.max(1) + 8)
        .thread_name("reseam-http")
        .enable_all()
        .build()
        .map_err(ServeError::Runtime)?;
    let served = runtime.block_on(serve(core, http, opts, on_listening));
    // Dropping the runtime would wait for its blocking threads, so a translation still running
    // after DRAIN_SECONDS would hold the exit past that bound; it is abandoned instead.
    runtime.shutdown_background();
    served
}

/// Requests on one connection before it is closed (clients reconnect), so that no client holds
/// a connection for ever.
const KEEP_ALIVE_REQUESTS: usize = 10_000;

/// Largest request head (request line and headers) read: a larger one gets 431.
const MAX_HEAD_BYTES: usize = 64 * 1024;

async fn serve(
    core: Arc<Core>,
    http: HttpOptions,
    opts: &ServeOptions,
    on_listening: impl FnOnce(SocketAddr),
) -> Result<(), ServeError> {
    let addr_of = |port: u16| {
        if opts.host.contains(':') && !opts.host.starts_with('[') {
            format!("[{}]:{port}", opts.host)
        } else {
            format!("{}:{port}", opts.host)
        }
    };
    let addr_text = addr_of(opts.port);
    let listener = listen(&addr_text).await.map_err(|source| ServeError::Bind { addr: addr_text.clone(), source })?;
    let addr = listener.local_addr().map_err(|source| ServeError::Bind { addr: addr_text.clone(), source })?;
    let admin = match opts.admin_port {
        Some(port) => {
            let text = addr_of(port);
            let l = listen(&text).await.map_err(|source| ServeError::Bind { addr: text.clone(), source })?;
            let a = l.local_addr().map_err(|source| ServeError::Bind { addr: text.clone(), source })?;
            log::info(&format!("admin port on http://{a}/ (/health, /ready, /metrics)"));
            Some(l)
        }
        None => None,
    };
    let models = core.models();
    log::info(&format!(
        "listening on http://{addr}/ ({} pairs under {}, {} compute threads, kernels {}, {} arithmetic{})",
        models.registry.pairs().len(),
        core.dir.display(),
        core.engine.threads(),
        core.engine.kernels().kernel_for(core.engine.arithmetic()).name(),
        core.engine.arithmetic().name(),
        if http.token.is_some() { ", token required" } else { "" },
    ));
    drop(models);
    on_listening(addr);

    let mut term = signal(SignalKind::terminate()).map_err(ServeError::Runtime)?;
    let mut interrupt = signal(SignalKind::interrupt()).map_err(ServeError::Runtime)?;
    let mut hangup = signal(SignalKind::hangup()).map_err(ServeError::Runtime)?;

    let (preloaded_tx, mut preloaded) = tokio::sync::mpsc::channel::<Result<(), RegistryError>>(1);
    {
        let core = core.clone();
        tokio::task::spawn_blocking(move || {
            let r = core.preload();
            let _ = preloaded_tx.blocking_send(r);
        });
    }

    let shared = Arc::new(Shared::new(core.clone(), http.clone()));
    let conns = Arc::new(Conns::new(http.max_connections, opts.pressure_idle_timeout));
    let admin_conns = Arc::new(Conns::new(ADMIN_CONNECTIONS, opts.pressure_idle_timeout));
    if let Some(listener) = admin {
        let shared = Arc::new(Shared::new(core.clone(), HttpOptions { admin: true, ..http.clone() }));
        let listener = listener.into_std().map_err(ServeError::Runtime)?;
        admin_thread(listener, shared, admin_conns.clone()).map_err(ServeError::Runtime)?;
    }
    let sweeper = {
        let conns = conns.clone();
        tokio::spawn(async move {
            let mut tick = tokio::time::interval(Duration::from_millis(250));
            loop {
                tick.tick().await;
                conns.sweep();
            }
        })
    };
    let why = loop {
        tokio::select! {
            accepted = listener.accept() => match accepted {
                Ok((stream, _)) => {
                    // At the cap another makes room (see conns); None when none may (counted,
                    // reported once per interval).
                    let Some(conn) = conns.admit(talked(&stream)) else {
                        drop(stream);
                        continue;
                    };
                    let _ = stream.set_nodelay(true);
                    tokio::spawn(connection(shared.clone(), conns.clone(), conn, stream));
                }
                Err(_) => {
                    // Out of file descriptors, usually: wait for connections to close.
                    conns.accept_failed();
                    tokio::time::sleep(Duration::from_millis(50)).await;
                }
            },
            Some(done) = preloaded.recv() => match done {
                Ok(()) => {
                    log::info(&format!("ready: {} models loaded", core.models().registry.loaded()));
                    let _ = sd_notify::notify(&[sd_notify::NotifyState::Ready]);
                }
                Err(e) => return Err(ServeError::Preload(e)),
            },
            _ = hangup.recv() => {
                let _ = sd_notify::notify(&[sd_notify::NotifyState::Reloading]);
                let core = core.clone();
                tokio::task::spawn_blocking(move || {
                    match core.reload() {
                        Ok(n) => log::info(&format!("reloaded the models folder: {n} pairs")),
                        Err(e) => log::error(&format!("reloading the models folder failed, keeping the old models: {e}")),
                    }
                    let _ = sd_notify::notify(&[sd_notify::NotifyState::Ready]);
                });
            }
            _ = term.recv() => break "SIGTERM",
            _ = interrupt.recv() => break "SIGINT",
        }
    };
    core.draining.store(true, Ordering::SeqCst);
    let _ = sd_notify::notify(&[sd_notify::NotifyState::Stopping]);
    drop(listener);
    admin_conns.close_all();
    log::info(&format!(
        "{why}: no new connections; finishing {} requests in flight (at most {} s)",
        core.metrics.in_flight.load(Ordering::SeqCst),
        opts.drain.as_secs()
    ));
    conns.close_all();
    let closed = async {
        while !conns.is_empty() {
            tokio::time::sleep(Duration::from_millis(20)).await;
        }
    };
    if tokio::time::timeout(opts.drain, closed).await.is_err() {
        log::warn("connections still open after the drain time: closing them");
    }
    sweeper.abort();
    log::info("stopped");
    Ok(())
}

/// Open connections of the admin port: probes and a scraper need few.
const ADMIN_CONNECTIONS: usize = 64;

/// Serves the admin port on a thread and runtime of its own: a flood of the main port keeps
/// the main runtime's two workers busy accepting and closing, and the admin port's connections
/// then wait their turn with the flood's (admin-port /health p99 125 ms on a shared runtime).
/// The thread ends with the process.
fn admin_thread(listener: std::net::TcpListener, shared: Arc<Shared>, conns: Arc<Conns>) -> std::io::Result<()> {
    let rt = tokio::runtime::Builder::new_current_thread().enable_all().build()?;
    std::thread::Builder::new().name("reseam-admin".into()).spawn(move || {
        rt.block_on(async move {
            let Ok(listener) = TcpListener::from_std(listener) else { return };
            loop {
                let Ok((stream, _)) = listener.accept().await else {
                    tokio::time::sleep(Duration::from_millis(50)).await;
                    continue;
                };
                if let Some(conn) = conns.admit(talked(&stream)) {
                    let _ = stream.set_nodelay(true);
                    tokio::spawn(connection(shared.clone(), conns.clone(), conn, stream));
                }
            }
        })
    })?;
    Ok(())
}

/// Whether bytes of a request have arrived on a connection just accepted (a peek, which does
/// not wait: the socket does not block). Such a connection is not closed for another before its
/// request is read.
fn talked(stream: &tokio::net::TcpStream) -> bool {
    let mut byte = [std::mem::MaybeUninit::<u8>::uninit(); 1];
    socket2::SockRef::from(stream).peek(&mut byte).is_ok_and(|n| n > 0)
}

/// Connections the kernel holds for us to accept: tokio's default of 1,024 is less than a
/// flood that reopens every connection the cap closes, and a full queue drops new connections'
/// first packets, which then retry after a second or more (/health seen to take 2.2 s).
const BACKLOG: u32 = 4096;

/// The listening socket of `addr` (the first address it resolves to that binds).
async fn listen(addr: &str) -> std::io::Result<TcpListener> {
    let mut last = std::io::Error::new(std::io::ErrorKind::InvalidInput, "no address");
    for a in tokio::net::lookup_host(addr).await? {
        let socket = if a.is_ipv4() { tokio::net::TcpSocket::new_v4()? } else { tokio::net::TcpSocket::new_v6()? };
        socket.set_reuseaddr(true)?;
        match socket.bind(a).and_then(|()| socket.listen(BACKLOG)) {
            Ok(l) => return Ok(l),
            Err(e) => last = e,
        }
    }
    Err(last)
}

/// Serves one connection until it ends, or until the cap closes it: at once when it never
/// carried a request, else once the request in progress is answered.
async fn connection(shared: Arc<Shared>, conns: Arc<Conns>, conn: Arc<conns::Conn>, stream: tokio::net::TcpStream) {
    let read_timeout = shared.opts.read_timeout;
    let service = {
        let conn = conn.clone();
        let conns = conns.clone();
        service_fn(move |req| http::handle(shared.clone(), conns.clone(), conn.clone(), req))
    };
    let served = http1::Builder::new()
        .timer(TokioTimer::new())
        .header_read_timeout(read_timeout)
        .max_buf_size(MAX_HEAD_BYTES)
        // The buffer's size alone caps only heads that arrive in pieces: one that arrives whole
        // in a read is parsed whatever its size.
        .max_header_size(MAX_HEAD_BYTES)
        .keep_alive(true)
        .serve_connection(TokioIo::new(stream), service);
    let mut served = std::pin::pin!(served);
    tokio::select! {
        _ = served.as_mut() => {}
        _ = conn.close.notified() => {
            if !conn.dropped() {
                served.as_mut().graceful_shutdown();
                let _ = served.await;
            }
        }
    }
    conns.remove(&conn);
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn whose_fault_each_error_is() {
        let io = || std::io::Error::other("x");
        assert!(ServeError::Bind { addr: "0.0.0.0:80".into(), source: io() }.is_usage());
        assert!(!ServeError::Runtime(io()).is_usage());
        assert!(ServeError::Token(auth::TokenError::Empty("t".into())).is_usage());
        assert!(auth::TokenError::Read { path: "t".into(), source: io() }.is_usage());
        assert!(!ServeError::Engine(EngineError::Stopped).is_usage());
        let folder = || RegistryError::Folder { dir: "m".into(), source: io() };
        assert!(!ServeError::Preload(folder()).is_usage());
        assert!(!ServeError::Registry(folder()).is_usage());
    }
}
