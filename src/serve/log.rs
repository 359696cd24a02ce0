//! The server's log: one line per event on stderr, `LEVEL message`, at or above LOG_LEVEL.
//! Under systemd or Kubernetes the journal or the container runtime adds the time. The texts
//! of requests are never passed here, at any level.

use std::io::Write;
use std::sync::atomic::{AtomicU8, Ordering};

#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, clap::ValueEnum)]
pub enum Level {
    Error = 0,
    Warn = 1,
    Info = 2,
    Debug = 3,
}

static LEVEL: AtomicU8 = AtomicU8::new(Level::Info as u8);

pub fn set_level(level: Level) {
    LEVEL.store(level as u8, Ordering::Relaxed);
}

pub fn enabled(level: Level) -> bool {
    level as u8 <= LEVEL.load(Ordering::Relaxed)
}

fn write(level: &str, message: &str) {
    // One write per line, so that lines of concurrent requests do not interleave.
    let line = format!("{level} {message}\n");
    let _ = std::io::stderr().lock().write_all(line.as_bytes());
}

pub fn error(message: &str) {
    if enabled(Level::Error) {
        write("error", message);
    }
}

pub fn warn(message: &str) {
    if enabled(Level::Warn) {
        write("warn", message);
    }
}

pub fn info(message: &str) {
    if enabled(Level::Info) {
        write("info", message);
    }
}

pub fn debug(message: &str) {
    if enabled(Level::Debug) {
        write("debug", message);
    }
}

/// The registry's notes (packs written, stale temporary packs removed, a pack changed on disk)
/// in this log's format.
pub fn note(level: crate::engine::registry::Note, message: &str) {
    use crate::engine::registry::Note;
    match level {
        Note::Info => info(message),
        Note::Warn => warn(message),
        Note::Error => error(message),
    }
}
