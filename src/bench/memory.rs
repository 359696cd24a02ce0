//! This machine's memory read bandwidth: every core streams its share of a buffer much larger
//! than the caches. Decode speed of a memory-bound model is stated as a fraction of it.
//!
//! The scan is `memchr` looking for a byte that is not there: its SIMD loop (built optimized as
//! a dependency, whatever reseam's own opt-level) reads far faster than memory delivers, so the
//! time is the memory's.

use std::time::Instant;

use rayon::prelude::*;
use serde::Serialize;

/// One measurement.
#[derive(Clone, Debug, Serialize)]
pub struct Bandwidth {
    pub buffer_bytes: usize,
    pub threads: usize,
    /// GB/s (1e9 bytes per second) of each pass.
    pub passes: Vec<f64>,
    pub best: f64,
    pub median: f64,
}

/// The largest CPU cache in bytes, from Linux's sysfs (`None` elsewhere).
pub fn largest_cache() -> Option<usize> {
    let mut best = None;
    for i in 0..8 {
        let dir = format!("/sys/devices/system/cpu/cpu0/cache/index{i}/size");
        let Ok(s) = std::fs::read_to_string(dir) else { continue };
        let s = s.trim();
        let (num, mul) = match s.strip_suffix('K') {
            Some(n) => (n, 1 << 10),
            None => match s.strip_suffix('M') {
                Some(n) => (n, 1 << 20),
                None => (s, 1),
            },
        };
        if let Ok(n) = num.parse::<usize>() {
            best = best.max(Some(n * mul));
        }
    }
    best
}

/// Default buffer: 1 GiB, or 8 times the largest cache if that is more.
pub fn default_size() -> usize {
    largest_cache().map_or(1 << 30, |c| (8 * c).max(1 << 30))
}

/// A buffer much larger than the caches, read on all threads of rayon's pool, one pass at a time:
/// `bench llm` takes a pass between its decode runs, so both see the machine in the same moments.
pub struct Meter {
    buf: Vec<u8>,
    chunk: usize,
    threads: usize,
}

impl Meter {
    pub fn new(bytes: usize) -> Meter {
        let threads = rayon::current_num_threads().max(1);
        // Filled (so every page is really there), never containing the byte searched for.
        let buf = vec![0x55u8; bytes.max(threads * 4096)];
        let chunk = buf.len().div_ceil(threads);
        Meter { buf, chunk, threads }
    }

    /// Reads the whole buffer once; GB/s.
    pub fn pass(&self) -> f64 {
        self.sustained(self.buf.len())
    }

    /// Reads at least `bytes` (whole passes, one after another), timed as a whole; GB/s. A
    /// sustained figure, for comparison with work that reads as many bytes for as long.
    pub fn sustained(&self, bytes: usize) -> f64 {
        let passes = bytes.div_ceil(self.buf.len()).max(1);
        let t = Instant::now();
        let found: usize = (0..passes)
            .map(|_| self.buf.par_chunks(self.chunk).filter(|c| memchr::memchr(0xAA, c).is_some()).count())
            .sum();
        let secs = t.elapsed().as_secs_f64();
        std::hint::black_box(found);
        (passes * self.buf.len()) as f64 / secs / 1e9
    }

    /// The passes' figures.
    pub fn report(&self, passes: Vec<f64>) -> Bandwidth {
        let mut sorted = passes.clone();
        sorted.sort_by(f64::total_cmp);
        Bandwidth {
            buffer_bytes: self.buf.len(),
            threads: self.threads,
            best: *sorted.last().unwrap_or(&0.0),
            median: sorted.get(sorted.len() / 2).copied().unwrap_or(0.0),
            passes,
        }
    }
}

/// Reads `bytes` bytes `passes` times on all threads of rayon's pool.
pub fn measure(bytes: usize, passes: usize) -> Bandwidth {
    let meter = Meter::new(bytes);
    let rates = (0..passes.max(1)).map(|_| meter.pass()).collect();
    meter.report(rates)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_small_measurement_is_positive_and_consistent() {
        let b = measure(8 << 20, 3);
        assert_eq!(b.passes.len(), 3);
        assert!(b.best >= b.median && b.median > 0.0);
        assert!(b.buffer_bytes >= 8 << 20);
        let m = Meter::new(4 << 20);
        assert!(m.sustained(9 << 20) > 0.0 && m.pass() > 0.0);
    }
}
