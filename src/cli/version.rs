//! `reseam --version [--verbose]`.

use std::io::Write;

use reseam_kernels::{Arithmetic, Kernels};

pub fn print(verbose: bool) -> anyhow::Result<()> {
    let mut out = std::io::stdout().lock();
    writeln!(out, "reseam {}", env!("CARGO_PKG_VERSION"))?;
    if verbose {
        let live = reseam_kernels::dispatch::kernels().map_err(|e| anyhow::anyhow!("{e}"))?;
        let available: Vec<&str> = Kernels::available().iter().map(|i| i.name()).collect();
        writeln!(out, "cpu: {}", cpu_name())?;
        writeln!(out, "kernels available: {}", available.join(", "))?;
        writeln!(out, "kernel in use: {}", live.isa())?;
        for arith in [Arithmetic::Saturating, Arithmetic::Exact] {
            let by = if live.serves(arith) { live.isa().name() } else { "reference" };
            writeln!(out, "  {} arithmetic: {by}", arith.name())?;
        }
        writeln!(out, "arithmetic auto (Firefox on this CPU): {}", Kernels::firefox_arithmetic().name())?;
    }
    Ok(())
}

/// The CPU's marketing name, for reports.
pub fn cpu_name() -> String {
    std::fs::read_to_string("/proc/cpuinfo")
        .ok()
        .and_then(|s| {
            s.lines()
                .find(|l| l.starts_with("model name"))
                .and_then(|l| l.split_once(':'))
                .map(|(_, v)| v.trim().to_string())
        })
        .unwrap_or_else(|| std::env::consts::ARCH.to_string())
}
