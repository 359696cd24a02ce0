//! `reseam serve`: the HTTP daemon, configured by flags or the environment (the seed's names).

use std::path::PathBuf;
use std::time::Duration;

use reseam::serve::{ServeOptions, log::Level};

use reseam::translate::TranslateOptions;

use super::engine::{BatchArgs, EngineArgs};

/// Serves translation over HTTP: the reseam API, and the LibreTranslate, DeepL, DeepLX,
/// MTranServer, Immersive Translate, Kiss Translator and mozilla/translation-service APIs.
///
/// Every request goes through one engine, so sentences of concurrent requests, of every
/// language pair, share decoder steps. Pairs without a direct model go through English. Request
/// texts are never logged. A web page at / translates from a browser.
///
/// Routes: GET /health, /ready, /metrics, /v1/languages, /languages, /v2/languages,
/// /frontend/settings, /spec, /__heartbeat__, /__lbheartbeat__, /__version__, /; POST
/// /v1/translate, /translate, /translate/batch, /detect, /v2/translate, /deeplx, /imme, /kiss.
///
/// Signals: SIGHUP rescans the models folder (new pairs served, changed models swapped in for
/// new requests, removed pairs gone); SIGTERM and SIGINT stop accepting, finish the requests in
/// flight (at most --drain-seconds) and exit 0. Under systemd (NOTIFY_SOCKET set), READY=1 is
/// sent once the models are loaded, RELOADING=1 and STOPPING=1 as they happen.
#[derive(clap::Args, Debug)]
#[command(after_help = "Examples:\n  \
    reseam fetch es,de && reseam serve --port 8080\n  \
    curl -d '{\"from\":\"es\",\"to\":\"en\",\"texts\":[\"Hola\"]}' localhost:8080/v1/translate\n  \
    TRANSLATE_TOKEN_FILE=/run/secrets/token PRELOAD=1 reseam serve --models /var/lib/reseam/models\n\n\
    Exit codes: 0 after a clean shutdown, 1 on a failure, 2 on a bad setting (a port in use,\n  \
    a token file that cannot be read, no models folder).")]
pub struct Args {
    #[command(flatten)]
    pub engine: EngineArgs,

    /// Address to listen on (`::` for every IPv6 and IPv4 address).
    #[arg(long, env = "HOST", default_value = "0.0.0.0")]
    pub host: String,

    /// Port to listen on (0: any free port, printed on stderr).
    #[arg(long, env = "PORT", default_value_t = 8080)]
    pub port: u16,

    #[command(flatten)]
    pub batch: BatchArgs,

    /// Most texts in one request (413 beyond).
    #[arg(long, env = "MAX_TEXTS", default_value_t = 50)]
    pub max_texts: usize,

    /// Most bytes of text in one request (413 beyond).
    #[arg(long, env = "MAX_CHARS", default_value_t = 20_000)]
    pub max_chars: usize,

    /// Most source pieces (the first model's SentencePiece tokens, about what a request costs to
    /// translate) of one request's texts of one source language; 413 beyond. Bytes undercount
    /// some scripts: 20,000 bytes of Chinese are 6,666 pieces, of English about 5,000. 0: no
    /// limit.
    #[arg(long, env = "MAX_PIECES", value_name = "N", default_value_t = 0)]
    pub max_pieces: usize,

    /// Requests translating at once; more wait in a queue of --max-queue. Requests over a
    /// quarter of MAX_CHARS hold at most three quarters of them, so that light requests are not
    /// kept waiting behind heavy ones (whose sentences then take turns with theirs in the engine).
    #[arg(long, env = "HTTP_THREADS", default_value_t = 64, value_parser = clap::value_parser!(u32).range(1..))]
    pub http_threads: u32,

    /// Requests waiting for one of the HTTP_THREADS slots; beyond, 503 with Retry-After (429 on
    /// DeepL's routes, which DeepL's client libraries retry).
    #[arg(long, env = "MAX_QUEUE", default_value_t = 256)]
    pub max_queue: usize,

    /// Largest request body in bytes; larger ones get 413 before they are read [default:
    /// 8 × MAX_CHARS + 64 KiB, room for JSON escapes].
    #[arg(long, env = "MAX_BODY", value_name = "BYTES")]
    pub max_body: Option<usize>,

    /// Open connections at most. At the cap a new connection is still accepted and the one idle
    /// the longest is closed (after its current reply, if it had served requests); only when
    /// every open connection has a request in progress is the new one closed at once. Counts are
    /// logged once per 10 s.
    #[arg(long, env = "MAX_CONNECTIONS", default_value_t = 1024, value_parser = clap::value_parser!(u32).range(1..))]
    pub max_connections: u32,

    /// A second port that serves only /health, /ready, the heartbeats and /metrics, on
    /// connections of its own: probes and scrapers get through whatever floods --port.
    #[arg(long, env = "ADMIN_PORT", value_name = "PORT")]
    pub admin_port: Option<u16>,

    /// Seconds a connection may stay idle (no request in progress) while three quarters of
    /// MAX_CONNECTIONS are open, instead of READ_TIMEOUT: under a flood idle connections make
    /// room sooner.
    #[arg(long, env = "PRESSURE_IDLE_TIMEOUT", value_name = "SECS", default_value_t = 1,
        value_parser = clap::value_parser!(u64).range(1..))]
    pub pressure_idle_timeout: u64,

    /// Seconds a client has to send a request's headers (after which the connection is closed
    /// without a reply: no request arrived to answer), then its body (after which it gets 408
    /// and the connection is closed); also how long an idle keep-alive connection stays open.
    #[arg(long, env = "READ_TIMEOUT", value_name = "SECS", default_value_t = 10,
        value_parser = clap::value_parser!(u64).range(1..))]
    pub read_timeout: u64,

    /// Seconds to finish requests in flight after SIGTERM before exiting anyway (Kubernetes
    /// kills after 30 by default).
    #[arg(long, env = "DRAIN_SECONDS", value_name = "SECS", default_value_t = 25)]
    pub drain_seconds: u64,

    /// Load and page in every model at startup; /ready answers 200 once done. Without it
    /// models load on first use (and /ready is 200 at once).
    #[arg(long, env = "PRELOAD", value_parser = clap::builder::BoolishValueParser::new())]
    pub preload: bool,

    /// Seconds after which an unused model's pages are given back to the kernel (it pages back
    /// in on its next request), and after which an idle engine frees its working memory
    /// (activations, scores, decoder state); 0 keeps everything resident.
    #[arg(long, env = "IDLE_SECONDS", value_name = "SECS", default_value_t = 300)]
    pub idle_seconds: u64,

    /// Token every request needs (except /health, /ready, the probes, the web page and
    /// LibreTranslate's /languages, /frontend/settings and /spec, which its clients read without a
    /// key), sent
    /// as `Authorization: Bearer`, raw `Authorization`, `DeepL-Auth-Key`, `X-API-Token`,
    /// `api_key` in the body or `token` in the query. Better given by file (--token-file) or
    /// systemd's credential `translate-token` than in the environment.
    #[arg(long, env = "TRANSLATE_TOKEN", hide_env_values = true, value_name = "TOKEN")]
    pub token: Option<String>,

    /// File holding the token (its surrounding whitespace ignored).
    #[arg(long, env = "TRANSLATE_TOKEN_FILE", value_name = "FILE")]
    pub token_file: Option<PathBuf>,

    /// Least severe messages logged: one `info` line per request (route, status, duration,
    /// text and byte counts; never the texts), `debug` for more.
    #[arg(long, env = "LOG_LEVEL", value_enum, default_value_t = Level::Info, ignore_case = true)]
    pub log_level: Level,
}

pub fn run(args: Args) -> anyhow::Result<()> {
    let models = args.engine.models_dir();
    if !models.is_dir() {
        return Err(reseam::error::UsageError(format!(
            "{}: no models folder here; `reseam fetch LANGS` installs models, --models (MODELS_DIR) names another folder",
            models.display()
        ))
        .into());
    }
    let engine = TranslateOptions { models, max_batch: args.batch.max_batch.into(), ..args.engine.options("", "") };
    let opts = ServeOptions {
        engine,
        host: args.host,
        port: args.port,
        max_texts: args.max_texts,
        max_chars: args.max_chars,
        max_pieces: args.max_pieces,
        http_threads: args.http_threads as usize,
        max_queue: args.max_queue,
        max_body: args.max_body.unwrap_or(8 * args.max_chars + 64 * 1024),
        max_connections: args.max_connections as usize,
        pressure_idle_timeout: Duration::from_secs(args.pressure_idle_timeout),
        admin_port: args.admin_port,
        read_timeout: Duration::from_secs(args.read_timeout),
        drain: Duration::from_secs(args.drain_seconds),
        preload: args.preload,
        idle_seconds: args.idle_seconds,
        token: args.token,
        token_file: args.token_file,
        credentials_dir: std::env::var_os("CREDENTIALS_DIRECTORY").map(PathBuf::from),
        log_level: args.log_level,
    };
    reseam::serve::run(&opts, |_| {})?;
    Ok(())
}
