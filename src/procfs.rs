//! This process as Linux reports it in `/proc/self`: its memory, read by the benchmarks
//! (`bench translate`, `bench models`) and the server's `/metrics`.

/// The process's memory, from `/proc/self` (zeros where it cannot be read).
#[derive(Clone, Copy, Debug, Default)]
pub struct Memory {
    pub rss_mb: f64,
    pub peak_rss_mb: f64,
    /// File-backed resident memory (mapped weights).
    pub mapped_mb: f64,
    /// Heap and other anonymous memory.
    pub anon_mb: f64,
}

impl Memory {
    pub fn read() -> Memory {
        let kb = |text: &str, key: &str| {
            text.lines()
                .find(|l| l.starts_with(key))
                .and_then(|l| l.split_whitespace().nth(1))
                .and_then(|v| v.parse::<f64>().ok())
                .unwrap_or(0.0)
        };
        let status = std::fs::read_to_string("/proc/self/status").unwrap_or_default();
        let rollup = std::fs::read_to_string("/proc/self/smaps_rollup").unwrap_or_default();
        let rss = kb(&rollup, "Rss:");
        let anon = kb(&rollup, "Anonymous:");
        Memory {
            rss_mb: rss / 1024.0,
            peak_rss_mb: kb(&status, "VmHWM:") / 1024.0,
            mapped_mb: (rss - anon).max(0.0) / 1024.0,
            anon_mb: anon / 1024.0,
        }
    }
}
