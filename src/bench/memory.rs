//! This machine's memory read bandwidth: every core streams its share of a buffer much larger
//! than the caches. Decode speed of a memory-bound model is stated as a fraction of it.
//!
//! Each thread ORs its share together as four quarters read side by side: one core keeps more
//! lines in flight over four streams than over one. On an AMD EPYC (Zen 3) VM, alternating 20
//! times over 1.3 GB on two threads, four streams read 18.0 GB/s where `memchr`'s single stream
//! read 16.2 (two streams 17.8): the single stream understated the machine, and the decode
//! kernels, which stream four column blocks at once, would have looked better than they are.

use std::time::{Duration, Instant};

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

const FILL: u8 = 0x55;
const FILL_WORD: u64 = u64::from_ne_bytes([FILL; 8]);

/// The OR of `bytes`' 64-bit words (its tail of under 256 bytes left out), read as four quarters
/// side by side, a cache line of each in turn.
fn scan(bytes: &[u8]) -> u64 {
    const LINE: usize = 64;
    let quarter = bytes.len() / (4 * LINE) * LINE;
    let q: [&[u8]; 4] = std::array::from_fn(|i| &bytes[i * quarter..(i + 1) * quarter]);
    // One set of accumulators for the four streams: SSE2's 16 registers hold it with room for
    // the loads (one set per stream spilled).
    let mut acc = [0u64; LINE / 8];
    let lines =
        q[0].chunks_exact(LINE).zip(q[1].chunks_exact(LINE)).zip(q[2].chunks_exact(LINE)).zip(q[3].chunks_exact(LINE));
    for (((l0, l1), l2), l3) in lines {
        for line in [l0, l1, l2, l3] {
            for (a, w) in acc.iter_mut().zip(line.chunks_exact(8)) {
                *a |= u64::from_ne_bytes(w.try_into().expect("8 bytes"));
            }
        }
    }
    acc.iter().fold(if quarter == 0 { FILL_WORD } else { 0 }, |x, y| x | y)
}

/// A buffer much larger than the caches, read on all threads of rayon's pool, one pass at a time:
/// `bench llm` takes a pass between its decode runs, so both see the machine in the same moments.
pub struct Meter {
    buf: Vec<u8>,
    threads: usize,
}

impl Meter {
    pub fn new(bytes: usize) -> Meter {
        let threads = rayon::current_num_threads().max(1);
        // Filled, so every page is really there.
        let buf = vec![FILL; bytes.max(threads * 4096)];
        Meter { buf, threads }
    }

    /// Reads the whole buffer once; GB/s.
    pub fn pass(&self) -> f64 {
        self.buf.len() as f64 / self.read(self.buf.len()).as_secs_f64() / 1e9
    }

    /// The time of reading `bytes` (whole passes, then the start of the buffer) on every thread.
    pub fn read(&self, bytes: usize) -> Duration {
        let (passes, rest) = (bytes / self.buf.len(), bytes % self.buf.len());
        let t = Instant::now();
        let mut found: usize = (0..passes).map(|_| self.scan_threads(&self.buf)).sum();
        if rest > 0 {
            found += self.scan_threads(&self.buf[..rest]);
        }
        let took = t.elapsed();
        std::hint::black_box(found);
        took
    }

    fn scan_threads(&self, bytes: &[u8]) -> usize {
        bytes.par_chunks(bytes.len().div_ceil(self.threads)).filter(|c| scan(c) != FILL_WORD).count()
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
    fn the_scan_reads_every_quarter() {
        let mut b = vec![FILL; 4096 + 100];
        assert_eq!(scan(&b), FILL_WORD);
        for at in [0, 1023, 1024, 2047, 3000, 4095] {
            b[at] = 0xFF;
            assert_ne!(scan(&b), FILL_WORD, "byte {at}");
            b[at] = FILL;
        }
    }

    #[test]
    fn a_small_measurement_is_positive_and_consistent() {
        let b = measure(8 << 20, 3);
        assert_eq!(b.passes.len(), 3);
        assert!(b.best >= b.median && b.median > 0.0);
        assert!(b.buffer_bytes >= 8 << 20);
        let m = Meter::new(4 << 20);
        assert!(m.read(9 << 20) > Duration::ZERO && m.pass() > 0.0 && m.read(1 << 20) > Duration::ZERO);
    }
}
