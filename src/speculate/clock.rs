//! Time as the measurements see it: the wall clock, or a virtual clock that only moves when a
//! mock model says a pass took so long (deterministic reports in tests).

use std::cell::Cell;
use std::rc::Rc;
use std::time::Instant;

pub trait Clock {
    /// Seconds since an arbitrary start.
    fn now(&self) -> f64;
}

/// The monotonic wall clock.
pub struct WallClock(Instant);

impl WallClock {
    pub fn new() -> WallClock {
        WallClock(Instant::now())
    }
}

impl Default for WallClock {
    fn default() -> Self {
        WallClock::new()
    }
}

impl Clock for WallClock {
    fn now(&self) -> f64 {
        self.0.elapsed().as_secs_f64()
    }
}

/// A clock advanced by hand; clones share one time.
#[derive(Clone, Default)]
pub struct VirtualClock(Rc<Cell<f64>>);

impl VirtualClock {
    pub fn new() -> VirtualClock {
        VirtualClock::default()
    }

    pub fn advance(&self, seconds: f64) {
        self.0.set(self.0.get() + seconds);
    }
}

impl Clock for VirtualClock {
    fn now(&self) -> f64 {
        self.0.get()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn virtual_clock_moves_only_when_advanced_and_clones_share_it() {
        let c = VirtualClock::new();
        let d = c.clone();
        assert_eq!(c.now(), 0.0);
        d.advance(0.25);
        assert_eq!(c.now(), 0.25);
    }

    #[test]
    fn wall_clock_does_not_go_back() {
        let c = WallClock::new();
        let a = c.now();
        assert!(c.now() >= a);
    }
}
