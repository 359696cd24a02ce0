//! Open connections, and a cap on them that protects the server rather than whoever floods it.
//!
//! A server that closes every new connection once MAX_CONNECTIONS are open is locked by anyone
//! who opens that many and sends nothing: /health, /ready and translations all fail while the
//! idle connections wait for their timeout, and a client that reopens each one as it closes
//! keeps them failing. So at the cap a new connection is accepted and the connection idle the
//! longest is closed in its place (one that has served requests closes once its current request
//! is answered: hyper's graceful close); only when every open connection has a request in
//! progress is the new one refused. Under pressure (three quarters of the cap open) idle
//! connections are also closed after `--pressed-idle-seconds` instead of READ_TIMEOUT. The
//! lines that say so are counted and written at most once per [`REPORT_EVERY`].

use std::collections::HashMap;
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
    /// Milliseconds since the server started, when the connection was opened or its last request
    /// ended.
    last: AtomicU64,
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
        self.last.store(conns.now_ms(), Ordering::SeqCst);
        self.busy.fetch_sub(1, Ordering::SeqCst);
    }

    /// Whether the connection may be dropped at once (closed before any request came), rather
    /// than closed gracefully.
    pub fn dropped(&self) -> bool {
        self.busy.load(Ordering::SeqCst) < 0
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

/// The open connections.
pub struct Conns {
    max: usize,
    pressed_idle: Duration,
    started: Instant,
    open: Mutex<HashMap<u64, Arc<Conn>>>,
    next: AtomicU64,
    counts: Mutex<Counts>,
}

impl Conns {
    pub fn new(max: usize, pressed_idle: Duration) -> Conns {
        Conns {
            max: max.max(1),
            pressed_idle,
            started: Instant::now(),
            open: Mutex::new(HashMap::new()),
            next: AtomicU64::new(0),
            counts: Mutex::new(Counts::default()),
        }
    }

    fn now_ms(&self) -> u64 {
        self.started.elapsed().as_millis() as u64
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, HashMap<u64, Arc<Conn>>> {
        self.open.lock().unwrap_or_else(|p| p.into_inner())
    }

    pub fn len(&self) -> usize {
        self.lock().len()
    }

    pub fn is_empty(&self) -> bool {
        self.lock().is_empty()
    }

    /// A new connection: admitted (closing the connection idle the longest when at the cap), or
    /// None when every open connection has a request in progress.
    pub fn admit(&self) -> Option<Arc<Conn>> {
        let mut open = self.lock();
        if open.len() >= self.max {
            let victim = open
                .values()
                .filter(|c| c.busy.load(Ordering::SeqCst) == 0)
                .min_by_key(|c| c.last.load(Ordering::SeqCst))
                .cloned();
            match victim {
                Some(v) if v.close_if_idle() => {
                    // Counted out at once: its task may take a moment to end.
                    open.remove(&v.id);
                    drop(open);
                    self.count(|c| c.evicted += 1);
                    open = self.lock();
                }
                _ => {
                    drop(open);
                    self.count(|c| c.refused += 1);
                    return None;
                }
            }
        }
        let id = self.next.fetch_add(1, Ordering::Relaxed);
        let conn = Arc::new(Conn {
            id,
            busy: AtomicIsize::new(0),
            served: AtomicUsize::new(0),
            last: AtomicU64::new(self.now_ms()),
            close: Notify::new(),
        });
        open.insert(id, conn.clone());
        Some(conn)
    }

    /// The connection's task ended.
    pub fn remove(&self, conn: &Conn) {
        self.lock().remove(&conn.id);
    }

    /// Accepting failed (out of file descriptors, usually).
    pub fn accept_failed(&self) {
        self.count(|c| c.failed_accepts += 1);
    }

    /// Closes connections idle for `--pressed-idle-seconds` while three quarters of the cap are
    /// open, and writes the counts due; call it a few times a second.
    pub fn sweep(&self) {
        let mut evicted = 0;
        {
            let mut open = self.lock();
            if open.len() * 4 >= self.max * 3 {
                let before = self.now_ms().saturating_sub(self.pressed_idle.as_millis() as u64);
                let idle: Vec<u64> = open
                    .values()
                    .filter(|c| c.last.load(Ordering::SeqCst) <= before && c.close_if_idle())
                    .map(|c| c.id)
                    .collect();
                evicted = idle.len();
                for id in idle {
                    open.remove(&id);
                }
            }
        }
        self.count(|c| c.evicted += evicted);
    }

    /// Every connection closes once its current request, if any, is answered (hyper's graceful
    /// close: a request whose head is arriving is still read and answered).
    pub fn close_all(&self) {
        for c in self.lock().values() {
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
                 {} new ones refused with every open one busy, {} accepts failed (out of file descriptors?)",
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

    #[test]
    fn at_the_cap_the_longest_idle_goes_and_busy_ones_stay() {
        let conns = Conns::new(2, Duration::from_secs(1));
        let a = conns.admit().unwrap();
        std::thread::sleep(Duration::from_millis(5));
        let b = conns.admit().unwrap();
        // `a` is idle the longest: it makes room, and cannot start a request any more.
        let c = conns.admit().unwrap();
        assert!(a.dropped() && !a.begin());
        assert_eq!(conns.len(), 2);
        // Both open ones busy: a new one is refused.
        assert!(b.begin() && c.begin());
        assert!(conns.admit().is_none());
        // One answered (and so used): it closes gracefully, not dropped.
        b.served.fetch_add(1, Ordering::SeqCst);
        b.end(&conns);
        let d = conns.admit().unwrap();
        assert!(!b.dropped());
        assert_eq!(conns.len(), 2);
        conns.remove(&c);
        conns.remove(&d);
        assert!(conns.is_empty());
    }

    #[test]
    fn under_pressure_idle_connections_close_after_the_shorter_time() {
        let conns = Conns::new(4, Duration::from_millis(20));
        let open: Vec<_> = (0..3).map(|_| conns.admit().unwrap()).collect();
        assert!(open[0].begin());
        std::thread::sleep(Duration::from_millis(30));
        conns.sweep();
        assert_eq!(conns.len(), 1, "the two idle ones closed, the busy one stays");
        assert!(!open[0].dropped() && open[1].dropped() && open[2].dropped());
        // Below three quarters of the cap, nothing is closed early.
        let more = conns.admit().unwrap();
        std::thread::sleep(Duration::from_millis(30));
        conns.sweep();
        assert!(!more.dropped());
    }
}
