//! Clocks for benchmarks: how many cycles a piece of work took.
//!
//! On x86-64 cycles are TSC cycles: the time-stamp counter's rate, calibrated against the
//! monotonic clock. It ticks at a fixed rate (the CPU's base frequency), not at the core's
//! current clock, so with turbo a core does more work per TSC cycle than per core cycle.
//! Elsewhere there is no such counter readable from user space, and the core clock is estimated
//! by timing a chain of dependent additions (one cycle each).

use std::time::{Duration, Instant};

/// A clock rate and where it came from.
#[derive(Clone, Copy, Debug)]
pub struct CycleRate {
    pub hz: f64,
    /// `"tsc"` or `"dependent-add estimate"`.
    pub source: &'static str,
}

/// The clock to count cycles with (takes about 0.1 s the first time).
pub fn cycles_clock() -> CycleRate {
    static CLOCK: std::sync::OnceLock<CycleRate> = std::sync::OnceLock::new();
    *CLOCK.get_or_init(|| {
        #[cfg(target_arch = "x86_64")]
        {
            CycleRate { hz: tsc_hz(), source: "tsc" }
        }
        #[cfg(not(target_arch = "x86_64"))]
        {
            CycleRate { hz: core_hz_estimate(), source: "dependent-add estimate" }
        }
    })
}

#[cfg(target_arch = "x86_64")]
fn tsc_hz() -> f64 {
    use std::arch::x86_64::_rdtsc;
    // SAFETY: RDTSC is part of every x86-64 CPU.
    let (t0, c0) = (Instant::now(), unsafe { _rdtsc() });
    while t0.elapsed() < Duration::from_millis(100) {
        std::hint::spin_loop();
    }
    // SAFETY: as above.
    let c1 = unsafe { _rdtsc() };
    (c1 - c0) as f64 / t0.elapsed().as_secs_f64()
}

/// The core clock while busy, from the best of several timed chains of dependent adds.
pub fn core_hz_estimate() -> f64 {
    const ADDS: u64 = 50_000_000;
    let mut best = f64::MAX;
    for _ in 0..3 {
        let t = Instant::now();
        std::hint::black_box(add_chain(std::hint::black_box(ADDS)));
        best = best.min(t.elapsed().as_secs_f64());
    }
    ADDS as f64 / best
}

/// `n` additions, each waiting for the one before.
fn add_chain(n: u64) -> u64 {
    #[allow(unused_mut)]
    let mut x = 0u64;
    #[cfg(target_arch = "x86_64")]
    // SAFETY: registers only. x86 cores can fuse or eliminate `add reg, imm` chains, so the
    // chain multiplies (3 cycles of latency) and is counted as 3 per step.
    unsafe {
        std::arch::asm!(
            "mov {x}, 1",
            "2:",
            "imul {x}, {x}",
            "dec {n}",
            "jnz 2b",
            x = out(reg) x, n = inout(reg) n.div_ceil(3).max(1) => _,
            options(nostack, nomem),
        );
    }
    #[cfg(target_arch = "aarch64")]
    // SAFETY: registers only.
    unsafe {
        std::arch::asm!(
            "mov {x}, #0",
            "2:",
            "add {x}, {x}, #1", "add {x}, {x}, #1", "add {x}, {x}, #1", "add {x}, {x}, #1",
            "subs {n}, {n}, #4",
            "b.hi 2b",
            x = out(reg) x, n = inout(reg) n.max(4) => _,
            options(nostack, nomem),
        );
    }
    #[cfg(not(any(target_arch = "x86_64", target_arch = "aarch64")))]
    for i in 0..n {
        x = std::hint::black_box(x + i);
    }
    x
}

/// Runs in one timed measurement, each `min / RUNS` long.
const RUNS: u32 = 24;

/// Repetitions of `f` that make one run last about `per_run`, and the best time per
/// repetition seen while finding out.
fn calibrate(per_run: Duration, f: &mut impl FnMut(u64)) -> (u64, f64) {
    let mut reps = 1u64;
    let mut best = f64::MAX;
    loop {
        let t = Instant::now();
        f(reps);
        let dt = t.elapsed();
        best = best.min(dt.as_secs_f64() / reps as f64);
        if dt >= per_run || reps >= 1 << 40 {
            return (reps, best);
        }
        reps = (reps * 2).max((reps as f64 * per_run.as_secs_f64() / dt.as_secs_f64().max(1e-9) * 0.8) as u64);
    }
}

/// [`RUNS`], or fewer (at least 3) when single runs are so long that they would take more
/// than twice `min`: a product of several seconds need not be timed 24 times.
fn runs(min: Duration, run_secs: f64) -> u32 {
    ((2.0 * min.as_secs_f64() / run_secs.max(1e-9)) as u32).clamp(3, RUNS)
}

fn per_run(min: Duration) -> Duration {
    (min / RUNS).max(Duration::from_micros(200))
}

/// The best time per repetition of `f(reps)`, from many short runs that together take about
/// `min`. Short runs and the best of them, because on a shared machine a run is slowed by
/// whatever else holds the core, and the least disturbed run is the closest to what the code
/// costs.
pub fn time_per_rep(min: Duration, mut f: impl FnMut(u64)) -> Duration {
    let (reps, mut best) = calibrate(per_run(min), &mut f);
    for _ in 0..runs(min, best * reps as f64) {
        let t = Instant::now();
        f(reps);
        best = best.min(t.elapsed().as_secs_f64() / reps as f64);
    }
    Duration::from_secs_f64(best)
}

/// [`time_per_rep`] of two pieces of work in alternation (about `min` each), so that both
/// best times come from the same stretch of time: a ratio of the two is then fair even while
/// other programs come and go.
pub fn time_pair(min: Duration, mut a: impl FnMut(u64), mut b: impl FnMut(u64)) -> (Duration, Duration) {
    let (reps_a, mut best_a) = calibrate(per_run(min), &mut a);
    let (reps_b, mut best_b) = calibrate(per_run(min), &mut b);
    for _ in 0..runs(min, best_a * reps_a as f64 + best_b * reps_b as f64) {
        let t = Instant::now();
        a(reps_a);
        best_a = best_a.min(t.elapsed().as_secs_f64() / reps_a as f64);
        let t = Instant::now();
        b(reps_b);
        best_b = best_b.min(t.elapsed().as_secs_f64() / reps_b as f64);
    }
    (Duration::from_secs_f64(best_a), Duration::from_secs_f64(best_b))
}
