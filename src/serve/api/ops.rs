//! Operations: readiness, Dockerflow's probes, the version, Prometheus metrics, the web page.

use serde_json::json;

use super::{Body, Reply};
use crate::serve::core::Core;
use crate::serve::metrics::Gauges;

/// The web page: one file, no external assets.
const PAGE: &str = include_str!("../page.html");

pub fn page() -> Reply {
    Reply { status: 200, body: Body::Text("text/html; charset=utf-8", PAGE.to_string()), texts: 0, chars: 0 }
}

/// 200 once the preloaded models are in memory, 503 before and while draining.
pub fn ready(core: &Core) -> Reply {
    let (status, state) = if core.draining.load(std::sync::atomic::Ordering::SeqCst) {
        (503, "draining")
    } else if core.ready() {
        (200, "ready")
    } else {
        (503, "loading")
    };
    Reply { status, body: Body::Json(json!({ "status": state })), texts: 0, chars: 0 }
}

/// Dockerflow's `/__heartbeat__`: as `/ready`, in its plain text.
pub fn heartbeat(core: &Core) -> Reply {
    let status = if core.ready() { 200 } else { 503 };
    Reply {
        status,
        body: Body::Text("text/plain; charset=utf-8", if status == 200 { "Ready" } else { "Not ready" }.into()),
        texts: 0,
        chars: 0,
    }
}

/// Dockerflow's `/__version__`.
pub fn version() -> Reply {
    Reply::json(json!({
        "source": env!("CARGO_PKG_REPOSITORY"),
        "version": env!("CARGO_PKG_VERSION"),
        "commit": option_env!("RESEAM_GIT_COMMIT").unwrap_or(""),
        "build": "",
    }))
}

pub fn metrics(core: &Core) -> Reply {
    let memory = crate::procfs::Memory::read();
    let models = core.models();
    let gauges = Gauges {
        models_loaded: models.registry.loaded(),
        pairs_installed: models.registry.pairs().len(),
        rss_bytes: memory.rss_mb * 1024.0 * 1024.0,
        mapped_bytes: memory.mapped_mb * 1024.0 * 1024.0,
        isa: core.engine.kernels().kernel_for(core.engine.arithmetic()).name().to_string(),
        threads: core.engine.threads(),
    };
    Reply {
        status: 200,
        body: Body::Text("text/plain; version=0.0.4; charset=utf-8", core.metrics.render(&gauges)),
        texts: 0,
        chars: 0,
    }
}
