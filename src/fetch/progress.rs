//! Telling the user what happens: a progress bar per file on a terminal, a plain line per file
//! otherwise, debug lines with --verbose. Everything goes to stderr.

use std::io::IsTerminal;
use std::time::Duration;

use indicatif::{ProgressBar, ProgressDrawTarget, ProgressStyle};

/// How progress is shown.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ProgressMode {
    /// Bars when stderr is a terminal, lines otherwise.
    Auto,
    Bars,
    Lines,
    Quiet,
}

pub struct Reporter {
    bars: bool,
    lines: bool,
    verbose: bool,
}

impl Reporter {
    pub fn new(mode: ProgressMode, verbose: bool) -> Reporter {
        let bars = match mode {
            ProgressMode::Auto => std::io::stderr().is_terminal(),
            ProgressMode::Bars => true,
            ProgressMode::Lines | ProgressMode::Quiet => false,
        };
        Reporter { bars, lines: mode != ProgressMode::Quiet, verbose }
    }

    /// A line about one file or step.
    pub fn line(&self, msg: &str) {
        if self.lines {
            eprintln!("reseam: {msg}");
        }
    }

    /// Detail for --verbose (why records were left out, retries).
    pub fn debug(&self, msg: &str) {
        if self.verbose {
            eprintln!("reseam: debug: {msg}");
        }
    }

    /// Starts showing one file's transfer of `total` bytes, `done` of them already on disk.
    pub fn file(&self, label: &str, total: u64, done: u64) -> FileProgress {
        if !self.bars {
            return FileProgress { bar: None };
        }
        let bar = ProgressBar::with_draw_target(Some(total), ProgressDrawTarget::stderr());
        // The template is a constant that parses; fall back to the default style if it did not.
        let style = ProgressStyle::with_template(
            "{prefix} [{bar:30.cyan/blue}] {decimal_bytes}/{decimal_total_bytes} {decimal_bytes_per_sec} {eta}",
        )
        .map(|s| s.progress_chars("=> "))
        .unwrap_or_else(|_| ProgressStyle::default_bar());
        bar.set_style(style);
        bar.set_prefix(label.to_string());
        bar.set_position(done);
        bar.enable_steady_tick(Duration::from_millis(200));
        FileProgress { bar: Some(bar) }
    }
}

pub struct FileProgress {
    bar: Option<ProgressBar>,
}

impl FileProgress {
    pub fn advance(&self, n: u64) {
        if let Some(b) = &self.bar {
            b.inc(n);
        }
    }

    /// The transfer restarted from byte `pos`.
    pub fn set(&self, pos: u64) {
        if let Some(b) = &self.bar {
            b.set_position(pos);
        }
    }

    pub fn finish(mut self) {
        if let Some(b) = self.bar.take() {
            b.finish_and_clear();
        }
    }
}

impl Drop for FileProgress {
    fn drop(&mut self) {
        if let Some(b) = &self.bar {
            b.finish_and_clear();
        }
    }
}

/// Bytes for people: `17.1 MB`.
pub fn human_bytes(n: u64) -> String {
    const UNITS: [&str; 5] = ["B", "kB", "MB", "GB", "TB"];
    let mut v = n as f64;
    let mut unit = 0;
    while v >= 1000.0 && unit < UNITS.len() - 1 {
        v /= 1000.0;
        unit += 1;
    }
    if unit == 0 { format!("{n} B") } else { format!("{v:.1} {}", UNITS[unit]) }
}

#[cfg(test)]
mod tests {
    #[test]
    fn human_bytes() {
        assert_eq!(super::human_bytes(999), "999 B");
        assert_eq!(super::human_bytes(17_140_000), "17.1 MB");
        assert_eq!(super::human_bytes(1_500), "1.5 kB");
    }
}
