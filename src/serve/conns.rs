//! Open connections, and a cap on them that protects the server rather than whoever floods it.
//!
//! A server that closes every new connection once MAX_CONNECTIONS are open is locked by anyone
//! who opens that many and sends nothing: /health, /ready and translations all fail while the
//! idle connections wait for their timeout, and a client that reopens each one as it closes
//! keeps them failing. So at the cap a new connection is accepted and an open one is closed in
//! its place, chosen so that a client that talks is never the one to go before its request:
//! 1. first the connection idle the longest among those that may go: idle after answering
//!    (closed once its reply is written: hyper's graceful close), or open for the grace time
//!    (PRESSURE_IDLE_TIMEOUT) without a request in progress;
//! 2. else the oldest one that has not started a request and whose request had not arrived when
//!    it was accepted (a flood's connections reopened at once are all such, and go in turn);
//! 3. else (every open one is busy, or has talked and is within its grace time) the new one is
//!    refused.
//!
//! A connection whose request was there when it was accepted (the usual client: it writes right
//! after connecting, and the accept comes later) is never closed before that request is read.
//! Before that rule a flood made each new connection last only as long as the server took to
//! accept another MAX_CONNECTIONS (50 ms at 20,000 connections/s), and a probe whose request was
//! not read in that time went unanswered now and then. The choice is kept in accept and idle
//! order, so it costs about the same whatever the cap. Under pressure (three quarters of the cap
//! open) idle connections are also closed after PRESSURE_IDLE_TIMEOUT instead of READ_TIMEOUT.
//! The lines that say so are counted and written at most once per [`REPORT_EVERY`].

use std::collections::{HashMap, VecDeque};
use std::sync::atomic::{AtomicIsize, AtomicU64, AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use tokio::sync::Notify;

use super::log;

/// At most one line per this interval about connections closed or refused at the cap.
pub const REPORT_EVERY: Duration = Duration::from_secs(10);

/// One open connection, as the cap sees it.
pub struct Conn {
    id: u64,
    /// Requests in progress; -1 once the connection is closed before its first request (so that
    /// none starts on it).
    busy: AtomicIsize,
    /// Requests answered.
    pub served: AtomicUsize,
    /// Milliseconds since the server started, when the connection was opened.
    opened: u64,
    /// Milliseconds since the server started, when the connection was opened or its last request
    /// ended.
    last: AtomicU64,
    /// Bytes of its first request had arrived when it was accepted.
    heard: bool,
    /// Told when the connection is to close.
    pub close: Notify,
}

impl Conn {
    /// A request starts on this connection; false if it is being closed.
    pub fn begin(&self) -> bool {
        self.busy.fetch_update(Ordering::SeqCst, Ordering::SeqCst, |b| (b >= 0).then_some(b + 1)).is_ok()
    }

    /// The request that [`Conn::begin`] started is answered.
    pub fn end(&self, conns: &Conns) {
        let mut open = conns.lock();
        let now = conns.now_ms();
        self.last.store(now, Ordering::SeqCst);
        self.busy.fetch_sub(1, Ordering::SeqCst);
        if open.map.contains_key(&self.id) {
            open.idle.push_back((self.id, now));
        }
    }

    /// Whether the connection may be dropped at once (closed before any request came), rather
    /// than closed gracefully.
    pub fn dropped(&self) -> bool {
        self.busy.load(Ordering::SeqCst) < 0
    }

    /// Not started on a request yet (nor closed).
    fn fresh(&self) -> bool {
        self.busy.load(Ordering::SeqCst) == 0 && self.served.load(Ordering::SeqCst) == 0
    }

    /// Closes the connection if it has no request in progress; false if it has one.
    fn close_if_idle(&self) -> bool {
        if self.busy.load(Ordering::SeqCst) != 0 {
            return false;
        }
        // Never used: nothing is buffered to write, so it can go at once; a used one closes
        // through hyper, which writes what it holds first.
        if self.served.load(Ordering::SeqCst) == 0
            && self.busy.compare_exchange(0, -1, Ordering::SeqCst, Ordering::SeqCst).is_err()
        {
            return false;
        }
        self.close.notify_one();
        true
    }
}

/// Counts of events reported at most once per [`REPORT_EVERY`].
#[derive(Default)]
struct Counts {
    evicted: usize,
    refused: usize,
    failed_accepts: usize,
    last_report: Option<Instant>,
}

/// The open connections, and the orders a victim is chosen in (entries of connections closed or
/// changed since are skipped as they come up).
#[derive(Default)]
struct Open {
    map: HashMap<u64, Arc<Conn>>,
    /// In the order they were opened.
    fresh: VecDeque<u64>,
    /// Connections that answered a request, in the order they became idle, with that time.
    idle: VecDeque<(u64, u64)>,
}

impl Open {
    fn fresh_one(&self, id: u64) -> Option<&Arc<Conn>> {
        self.map.get(&id).filter(|c| c.fresh())
    }

    fn idle_one(&self, (id, since): (u64, u64)) -> Option<&Arc<Conn>> {
        self.map.get(&id).filter(|c| {
            c.busy.load(Ordering::SeqCst) == 0
                && c.served.load(Ordering::SeqCst) > 0
                && c.last.load(Ordering::SeqCst) == since
        })
    }

    /// The connection to close for a new one (see the module's rules), if any.
    fn victim(&mut self, now: u64, grace: u64) -> Option<Arc<Conn>> {
        while let Some(&id) = self.fresh.front() {
            if self.fresh_one(id).is_some() {
                break;
            }
            self.fresh.pop_front();
        }
        while let Some(&e) = self.idle.front() {
            if self.idle_one(e).is_some() {
                break;
            }
            self.idle.pop_front();
        }
        let idle = self.idle.front().map(|&(id, since)| (since, id));
        let aged = self.fresh.front().and_then(|&id| {
            let opened = self.map[&id].opened;
            (opened + grace <= now).then_some((opened, id))
        });
        if let Some((_, id)) = idle.into_iter().chain(aged).min() {
            return self.map.get(&id).cloned();
        }
        self.fresh.iter().filter_map(|&id| self.fresh_one(id)).find(|c| !c.heard).cloned()
    }

    /// Drops the entries of closed connections once they are many.
    fn compact(&mut self, max: usize) {
        if self.fresh.len() > 4 * max + 64 {
            let map = &self.map;
            self.fresh.retain(|id| map.get(id).is_some_and(|c| c.fresh()));
        }
        if self.idle.len() > 4 * max + 64 {
            let idle = std::mem::take(&mut self.idle);
            self.idle = idle.into_iter().filter(|&e| self.idle_one(e).is_some()).collect();
        }
    }
}

/// The open connections.
pub struct Conns {
    max: usize,
    /// How long a new connection has to start its first request before it may be closed for
    /// another, and how long connections may stay idle under pressure.
    grace: Duration,
    started: Instant,
    open: Mutex<Open>,
    next: AtomicU64,
    counts: Mutex<Counts>,
}

impl Conns {
    pub fn new(max: usize, grace: Duration) -> Conns {
        Conns {
            max: max.max(1),
            grace,
            started: Instant::now(),
            open: Mutex::new(Open::default()),
            next: AtomicU64::new(0),
            counts: Mutex::new(Counts::default()),
        }
    }

    fn now_ms(&self) -> u64 {
        self.started.elapsed().as_millis() as u64
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, Open> {
        self.open.lock().unwrap_or_else(|p| p.into_inner())
    }

    pub fn len(&self) -> usize {
        self.lock().map.len()
    }

    pub fn is_empty(&self) -> bool {
        self.lock().map.is_empty()
    }

    /// A new connection (`heard`: bytes of its request had arrived when it was accepted):
    /// admitted, closing another when at the cap (see the module's rules), or None when none
    /// may be closed for it.
    pub fn admit(&self, heard: bool) -> Option<Arc<Conn>> {
        let mut open = self.lock();
        let now = self.now_ms();
        let mut evicted = 0;
        while open.map.len() >= self.max {
            match open.victim(now, self.grace.as_millis() as u64) {
                Some(v) => {
                    // Counted out at once: its task may take a moment to end. One that has
                    // just started a request stays, and the next in line is tried.
                    if v.close_if_idle() {
                        open.map.remove(&v.id);
                        evicted += 1;
                    }
                }
                None => {
                    drop(open);
                    self.count(|c| {
                        c.evicted += evicted;
                        c.refused += 1;
                    });
                    return None;
                }
            }
        }
        let id = self.next.fetch_add(1, Ordering::Relaxed);
        let conn = Arc::new(Conn {
            id,
            busy: AtomicIsize::new(0),
            served: AtomicUsize::new(0),
            opened: now,
            last: AtomicU64::new(now),
            heard,
            close: Notify::new(),
        });
        open.map.insert(id, conn.clone());
        open.fresh.push_back(id);
        open.compact(self.max);
        drop(open);
        if evicted > 0 {
            self.count(|c| c.evicted += evicted);
        }
        Some(conn)
    }

    /// The connection's task ended.
    pub fn remove(&self, conn: &Conn) {
        self.lock().map.remove(&conn.id);
    }

    /// Accepting failed (out of file descriptors, usually).
    pub fn accept_failed(&self) {
        self.count(|c| c.failed_accepts += 1);
    }

    /// Closes connections idle for PRESSURE_IDLE_TIMEOUT while three quarters of the cap are
    /// open, and writes the counts due; call it a few times a second.
    pub fn sweep(&self) {
        let mut evicted = 0;
        {
            let mut open = self.lock();
            if open.map.len() * 4 >= self.max * 3 {
                let before = self.now_ms().saturating_sub(self.grace.as_millis() as u64);
                let idle: Vec<u64> = open
                    .map
                    .values()
                    .filter(|c| c.last.load(Ordering::SeqCst) <= before && c.close_if_idle())
                    .map(|c| c.id)
                    .collect();
                evicted = idle.len();
                for id in idle {
                    open.map.remove(&id);
                }
            }
        }
        self.count(|c| c.evicted += evicted);
    }

    /// Every connection closes once its current request, if any, is answered (hyper's graceful
    /// close: a request whose head is arriving is still read and answered).
    pub fn close_all(&self) {
        for c in self.lock().map.values() {
            c.close.notify_one();
        }
    }

    fn count(&self, add: impl FnOnce(&mut Counts)) {
        let mut c = self.counts.lock().unwrap_or_else(|p| p.into_inner());
        add(&mut c);
        let due = c.last_report.is_none_or(|t| t.elapsed() >= REPORT_EVERY);
        if !due || c.evicted + c.refused + c.failed_accepts == 0 {
            return;
        }
        let since = match c.last_report {
            Some(t) => format!("in the last {} s", t.elapsed().as_secs()),
            None => "since the start".to_string(),
        };
        if c.refused > 0 || c.failed_accepts > 0 {
            log::warn(&format!(
                "at the {} connection cap (MAX_CONNECTIONS) {since}: {} idle connections closed for new ones, \
                 {} new ones refused with every open one busy or just opened with its request, {} accepts failed (out of file descriptors?)",
                self.max, c.evicted, c.refused, c.failed_accepts
            ));
        } else {
            log::info(&format!(
                "at the {} connection cap (MAX_CONNECTIONS) {since}: {} idle connections closed for new ones",
                self.max, c.evicted
            ));
        }
        *c = Counts { last_report: Some(Instant::now()), ..Counts::default() };
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const GRACE: Duration = Duration::from_millis(200);

    /// `c` answers one request.
    fn answer(c: &Conn, conns: &Conns) {
        assert!(c.begin());
        c.served.fetch_add(1, Ordering::SeqCst);
        c.end(conns);
    }

    #[test]
    fn at_the_cap_an_idle_connection_goes_first_and_one_that_talked_never_before_its_request() {
        let conns = Conns::new(3, GRACE);
        let talked = conns.admit(true).unwrap();
        let silent = conns.admit(false).unwrap();
        let used = conns.admit(false).unwrap();
        answer(&used, &conns);
        // Idle after answering: it goes first (gracefully, not dropped), though the newest.
        let d = conns.admit(false).unwrap();
        assert!(!used.dropped() && !conns.lock().map.contains_key(&used.id));
        assert_eq!(conns.len(), 3);
        // Then the oldest that has not talked, though within its grace time; then the next.
        let e = conns.admit(false).unwrap();
        assert!(silent.dropped() && !silent.begin());
        let f = conns.admit(false).unwrap();
        assert!(d.dropped() && !e.dropped());
        let g = conns.admit(true).unwrap();
        assert!(e.dropped() && !f.dropped());
        assert!(!talked.dropped(), "a connection whose request had come stays until it is read");
        // Every open one busy or just talked: a new one is refused, whether it talked or not.
        assert!(f.begin());
        assert!(conns.admit(true).is_none());
        assert!(conns.admit(false).is_none());
        assert!(!talked.dropped() && !g.dropped());
        assert_eq!(conns.len(), 3);
    }

    #[test]
    fn one_that_talked_may_go_once_its_grace_time_is_over() {
        let conns = Conns::new(2, GRACE);
        let a = conns.admit(true).unwrap();
        let b = conns.admit(true).unwrap();
        assert!(conns.admit(false).is_none(), "both talked and are within their grace time");
        std::thread::sleep(GRACE + Duration::from_millis(20));
        // Open for the grace time with no request started (a slow head): the oldest goes.
        assert!(conns.admit(false).is_some());
        assert!(a.dropped() && !b.dropped());
    }

    #[test]
    fn the_longest_idle_goes_whether_idle_after_answering_or_aged() {
        let conns = Conns::new(2, GRACE);
        let aged = conns.admit(true).unwrap();
        let used = conns.admit(true).unwrap();
        std::thread::sleep(GRACE + Duration::from_millis(20));
        answer(&used, &conns);
        // `aged` was opened before `used` became idle: it goes first.
        conns.admit(false).unwrap();
        assert!(aged.dropped());
        assert!(!used.dropped() && used.busy.load(Ordering::SeqCst) == 0);
        // Then `used`, which answered and is idle (closed gracefully, so not "dropped").
        conns.admit(false).unwrap();
        assert!(!used.dropped());
        assert_eq!(conns.len(), 2);
        assert!(!conns.lock().map.contains_key(&used.id));
    }

    #[test]
    fn a_flood_of_silent_connections_goes_in_turn_and_keeps_no_entries() {
        let conns = Conns::new(8, GRACE);
        let mut open: VecDeque<Arc<Conn>> = (0..8).map(|_| conns.admit(false).unwrap()).collect();
        for _ in 0..1000 {
            let c = conns.admit(false).unwrap();
            let oldest = open.pop_front().unwrap();
            assert!(oldest.dropped(), "the oldest silent one went");
            conns.remove(&oldest);
            open.push_back(c);
        }
        let o = conns.lock();
        assert!(o.fresh.len() <= 4 * 8 + 64 && o.map.len() == 8);
    }

    #[test]
    fn under_pressure_idle_connections_close_after_the_shorter_time() {
        let conns = Conns::new(4, Duration::from_millis(20));
        let open: Vec<_> = (0..3).map(|_| conns.admit(false).unwrap()).collect();
        assert!(open[0].begin());
        std::thread::sleep(Duration::from_millis(30));
        conns.sweep();
        assert_eq!(conns.len(), 1, "the two idle ones closed, the busy one stays");
        assert!(!open[0].dropped() && open[1].dropped() && open[2].dropped());
        // Below three quarters of the cap, nothing is closed early.
        let more = conns.admit(false).unwrap();
        std::thread::sleep(Duration::from_millis(30));
        conns.sweep();
        assert!(!more.dropped());
    }
}
