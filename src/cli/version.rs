//! `reseam --version [--verbose]`.

use std::io::Write;

use reseam_kernels::Kernels;

pub fn print(verbose: bool) -> anyhow::Result<()> {
    let mut out = std::io::stdout().lock();
    writeln!(out, "reseam {}", env!("CARGO_PKG_VERSION"))?;
    if verbose {
        let live = reseam_kernels::dispatch::kernels()?;
        writeln!(out, "cpu: {} ({})", cpu_name(), std::env::consts::ARCH)?;
        let mut available = Vec::new();
        let mut unusable = Vec::new();
        for (isa, usable) in Kernels::availability() {
            match usable {
                Ok(()) => available.push(isa.name().to_string()),
                Err(why) => unusable.push(format!("{isa} ({why})")),
            }
        }
        writeln!(out, "kernels available: {}", available.join(", "))?;
        if !unusable.is_empty() {
            writeln!(out, "kernels not usable here: {}", unusable.join("; "))?;
        }
        let forced = std::env::var("RESEAM_MT_ISA").ok().filter(|v| !v.trim().is_empty());
        let why = if forced.is_some() { "forced by RESEAM_MT_ISA" } else { "best for this CPU" };
        writeln!(out, "kernel in use: {} ({why})", live.name())?;
        for line in live.describe().lines() {
            writeln!(out, "  {line}")?;
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
