//! How a compute thread waits within a round: taking the product halves the others push, and,
//! when another part's step stalls, stepping its own sentences again.

use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};

use super::part::Part;

/// Runs the halves of products a latency-mode step (on thread `stepping`) splits off, until
/// `done`. On the stepping thread itself (which picks this up when it waits for a half that
/// another thread took) there is nothing to wait for: spinning there would wait for itself.
/// Only while no batch is encoded beside the rounds: the pool's other jobs are its halves.
pub(super) fn help(done: &AtomicBool, stepping: Option<usize>) {
    if rayon::current_thread_index() == stepping {
        return;
    }
    take_jobs_until(|| done.load(Ordering::Acquire), false);
}

/// Runs the pool's pending jobs (the halves other threads' products push) until `done`, spinning
/// between them, and returns the time spent in them when `timed` (`RESEAM_MT_PROFILE`: work,
/// not a round's end).
fn take_jobs_until(done: impl Fn() -> bool, timed: bool) -> std::time::Duration {
    let mut took = std::time::Duration::ZERO;
    while !done() {
        let t = timed.then(std::time::Instant::now);
        match rayon::yield_now() {
            Some(rayon::Yield::Executed) => took += t.map_or(std::time::Duration::ZERO, |t| t.elapsed()),
            _ => std::hint::spin_loop(),
        }
    }
    took
}

/// How long a part done with its step of a round waits for another's before it steps its own
/// sentences again (see [`stalled`]): far above a round's usual end (0.1–0.3 ms a round on the
/// tiny model), well below a time slice that another process takes of a shared core (4 ms).
const STALLED: std::time::Duration = std::time::Duration::from_millis(2);

/// Waits for the round's other parts to end their step, taking their product halves meanwhile
/// (see [`take_jobs_until`]); but when one has not ended it after [`STALLED`], and `extra`,
/// runs `step` on `p` (another step over its sentences) and waits again, until `step` says it has
/// no more rows. Returns the time spent in others' halves and in `step`s when `timed`.
///
/// It waits for `left` (parts whose step is not done), never for parts still on extra steps: a
/// part not yet taken by another thread may run nested in this wait (`yield_now`), and a nested
/// wait for the part it interrupted would never end. A part's extra steps after the others'
/// end are helped only by the threads rayon lends while joining.
///
/// A core shared with another process gives its compute thread a few milliseconds at a time, and
/// every round waited for that thread: two threads, one of their cores shared with a busy loop,
/// translated slower than one thread alone (tiny, 3,000 lines, on a 2-vCPU Zen 3: 14.6 and 15.9 s
/// against 11.5 s, the round's end 41–44% of the threads' time; with this, 10.4–10.9 s).
/// Sentences are independent of their batch, so stepping some of them more often changes no
/// output.
pub(super) fn stalled(
    p: &mut Part,
    left: &AtomicUsize,
    mut extra: bool,
    timed: bool,
    mut step: impl FnMut(&mut Part) -> bool,
) -> std::time::Duration {
    let mut took = std::time::Duration::ZERO;
    let mut since = std::time::Instant::now();
    loop {
        took += take_jobs_until(|| left.load(Ordering::Acquire) == 0 || (extra && since.elapsed() >= STALLED), timed);
        if left.load(Ordering::Acquire) == 0 {
            return took;
        }
        let t = std::time::Instant::now();
        extra = step(p);
        if timed {
            took += t.elapsed();
        }
        since = std::time::Instant::now();
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::time::{Duration, Instant};

    /// Another part that ends its step after `after`, on its own thread.
    fn other_ends_after(left: &AtomicUsize, after: Duration) -> impl FnOnce() + Send + '_ {
        move || {
            std::thread::sleep(after);
            left.fetch_sub(1, Ordering::AcqRel);
        }
    }

    #[test]
    fn a_part_steps_again_only_while_another_is_stalled() {
        // Stalled for 100 ms (far beyond STALLED, so that even a loaded machine sees the stall):
        // this part steps again every STALLED, and stops waiting once the other ends.
        let left = AtomicUsize::new(1);
        let mut part = Part::default();
        let mut steps = 0u32;
        let t = Instant::now();
        std::thread::scope(|s| {
            s.spawn(other_ends_after(&left, Duration::from_millis(100)));
            stalled(&mut part, &left, true, false, |_| {
                steps += 1;
                true
            });
        });
        let waited = t.elapsed();
        assert!(waited >= Duration::from_millis(100), "returned before the other part ended: {waited:?}");
        assert!(steps >= 1 && steps <= (waited.as_micros() / STALLED.as_micros()) as u32 + 1, "{steps} in {waited:?}");

        // Not allowed, or with nothing left to step after the first: it only waits.
        for (extra, more) in [(false, true), (true, false)] {
            let left = AtomicUsize::new(1);
            let mut steps = 0;
            std::thread::scope(|s| {
                s.spawn(other_ends_after(&left, Duration::from_millis(100)));
                stalled(&mut part, &left, extra, false, |_| {
                    steps += 1;
                    more
                });
            });
            assert_eq!(steps, usize::from(extra), "extra {extra}, more rows {more}");
        }

        // The other part has ended: nothing to wait for, nothing stepped.
        let left = AtomicUsize::new(0);
        assert_eq!(stalled(&mut part, &left, true, true, |_| panic!("stepped after the round")), Duration::ZERO);
    }
}
