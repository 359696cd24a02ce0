//! `reseam bench memory`: this machine's memory read bandwidth.

use std::io::Write;

use reseam::bench::memory as membw;

use super::{Common, size};

#[derive(clap::Args, Debug)]
#[command(after_help = "Examples:\n  \
    reseam bench memory\n  \
    reseam bench memory --size-mib 4096 --json")]
pub struct Args {
    #[command(flatten)]
    pub common: Common,
}

pub fn run(a: Args, out: &mut dyn Write) -> anyhow::Result<()> {
    let common = a.common;
    let b = membw::measure(size(&common)?, 5);
    if common.json {
        writeln!(out, "{}", serde_json::to_string_pretty(&b)?)?;
    } else {
        writeln!(
            out,
            "memory read: {:.1} GB/s best, {:.1} GB/s median of {} passes over {} MiB, {} threads",
            b.best,
            b.median,
            b.passes.len(),
            b.buffer_bytes >> 20,
            b.threads
        )?;
    }
    Ok(())
}
