//! `reseam health`: asks a running `reseam serve` whether it is up (or ready), for container
//! health checks in images that carry no HTTP client of their own.

use std::time::Duration;

use anyhow::bail;

/// Asks a running `reseam serve` on this machine whether it serves (GET /health) or is ready
/// for traffic (GET /ready, --ready): exit 0 on 200, 1 otherwise, with the reason on stderr.
///
/// It reads the same HOST and PORT as `serve`, so a container's HEALTHCHECK needs no settings
/// of its own; a wildcard HOST (0.0.0.0, ::) is reached on the loopback address.
#[derive(clap::Args, Debug)]
#[command(after_help = "Examples:\n  \
    reseam health                       is the server on $PORT up?\n  \
    reseam health --ready               has it loaded its models (PRELOAD=1), and is it not draining?\n  \
    reseam health --url http://10.0.0.5:8080/health\n\n\
    Exit codes: 0 when the server answered 200, 1 when it answered otherwise or could not be\n  \
    reached, 2 on a bad flag.")]
pub struct Args {
    /// Ask /ready instead of /health: 503 until the models are loaded and while draining.
    #[arg(long)]
    ready: bool,

    /// The server's address, as `serve` reads it.
    #[arg(long, env = "HOST", default_value = "0.0.0.0")]
    host: String,

    /// The server's port, as `serve` reads it.
    #[arg(long, env = "PORT", default_value_t = 8080)]
    port: u16,

    /// Ask this URL instead of one made from HOST, PORT and --ready.
    #[arg(long, value_name = "URL", conflicts_with_all = ["ready"])]
    url: Option<String>,

    /// Seconds to wait for the answer.
    #[arg(long, value_name = "SECS", default_value_t = 5, value_parser = clap::value_parser!(u64).range(1..))]
    timeout: u64,
}

pub fn run(args: Args) -> anyhow::Result<()> {
    let url = match args.url {
        Some(u) => u,
        None => {
            let host = match args.host.trim_matches(['[', ']']) {
                "" | "0.0.0.0" => "127.0.0.1".to_string(),
                "::" => "[::1]".to_string(),
                h if h.contains(':') => format!("[{h}]"),
                h => h.to_string(),
            };
            format!("http://{host}:{}/{}", args.port, if args.ready { "ready" } else { "health" })
        }
    };
    let timeout = Duration::from_secs(args.timeout);
    let agent: ureq::Agent = ureq::Agent::config_builder()
        .http_status_as_error(false)
        // A proxy from the environment must not stand between a probe and its own server.
        .proxy(None)
        .timeout_global(Some(timeout))
        .build()
        .into();
    let status = match agent.get(&url).call() {
        Ok(r) => r.status(),
        Err(e) => bail!("{url}: {e}"),
    };
    if status != 200 {
        bail!("{url}: {status}");
    }
    Ok(())
}
