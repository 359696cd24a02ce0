//! 200 slow clients (headers a byte a second; bodies never finished) hold connections while
//! /health and other clients' translations answer promptly, and are closed after
//! --read-timeout.

use std::io::{ErrorKind, Read, Write};
use std::net::TcpStream;
use std::time::{Duration, Instant};

use serde_json::json;

use super::client::Req;
use super::server::Server;

const READ_TIMEOUT: u64 = 3;
const SLOW: usize = 200;
/// The most a prompt answer may take while the slow clients hold their connections.
const PROMPT: Duration = Duration::from_secs(2);

/// A slow client's connection and what became of it.
struct Slow {
    stream: TcpStream,
    /// The bytes it sends, a byte a tick (headers) or nothing more (a body never finished).
    pending: Vec<u8>,
    /// When the server closed it, and the status it answered before, if any.
    closed: Option<Duration>,
    answer: Vec<u8>,
}

impl Slow {
    /// Reads what the server sent; notes when it closed the connection.
    fn poll(&mut self, since: Instant) {
        if self.closed.is_some() {
            return;
        }
        let mut buf = [0u8; 4096];
        loop {
            match self.stream.read(&mut buf) {
                Ok(0) => {
                    self.closed = Some(since.elapsed());
                    return;
                }
                Ok(n) => self.answer.extend_from_slice(&buf[..n]),
                Err(e) if e.kind() == ErrorKind::WouldBlock => return,
                Err(_) => {
                    self.closed = Some(since.elapsed());
                    return;
                }
            }
        }
    }

    fn tick(&mut self, since: Instant) {
        self.poll(since);
        if self.closed.is_none() && !self.pending.is_empty() {
            let b = self.pending.remove(0);
            if self.stream.write_all(&[b]).is_err() {
                self.closed = Some(since.elapsed());
            }
        }
    }
}

#[test]
fn slow_clients_do_not_hold_the_server_and_are_closed_after_the_read_timeout() {
    let s = Server::esen().args(&["--read-timeout", &READ_TIMEOUT.to_string(), "--http-threads", "4"]).start();
    let want = s.translate("es", "en", &["Ella se negó a hacerlo."]);

    let opened = Instant::now();
    let mut slow: Vec<Slow> = (0..SLOW)
        .map(|i| {
            let stream = TcpStream::connect(s.addr).expect("a slow client's connection");
            stream.set_nodelay(true).unwrap();
            let pending = if i % 2 == 0 {
                // Headers, a byte a second: never done within the read timeout.
                b"POST /v1/translate HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nContent-Length: 60\r\n\r\n".to_vec()
            } else {
                // Headers whole, then a body that never comes whole.
                let mut w = &stream;
                w.write_all(b"POST /v1/translate HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nContent-Length: 1000\r\n\r\n{\"from\":\"es\",").unwrap();
                Vec::new()
            };
            stream.set_nonblocking(true).unwrap();
            Slow { stream, pending, closed: None, answer: Vec::new() }
        })
        .collect();

    // The slow clients tick once a second on a thread of their own while the prompt ones run.
    let driver = std::thread::spawn(move || {
        let deadline = Duration::from_secs(READ_TIMEOUT + 5);
        while opened.elapsed() < deadline && slow.iter().any(|c| c.closed.is_none()) {
            for c in &mut slow {
                c.tick(opened);
            }
            // Poll often, send once a second.
            for _ in 0..10 {
                std::thread::sleep(Duration::from_millis(100));
                for c in &mut slow {
                    c.poll(opened);
                }
            }
        }
        slow
    });

    // While they hold their connections: health and translations from other clients, each
    // prompt.
    let mut worst = Duration::ZERO;
    let mut prompt = 0;
    while opened.elapsed() < Duration::from_secs(READ_TIMEOUT) - Duration::from_millis(800) {
        let t = Instant::now();
        assert_eq!(s.get("/health").status, 200);
        let r = s.post_json("/v1/translate", &json!({"from": "es", "to": "en", "texts": ["Ella se negó a hacerlo."]}));
        assert_eq!(r.expect_json(200)["translations"][0], want[0]);
        let r = s.send(Req::post("/translate").form(&[
            ("q", "Ella se negó a hacerlo."),
            ("source", "es"),
            ("target", "en"),
        ]));
        assert_eq!(r.expect_json(200)["translatedText"], want[0]);
        let took = t.elapsed();
        worst = worst.max(took);
        assert!(took < PROMPT, "health and two translations took {took:?} with {SLOW} slow clients");
        prompt += 1;
    }
    assert!(prompt >= 3, "only {prompt} rounds of prompt requests in the window");

    let slow = driver.join().unwrap();
    let timeout = Duration::from_secs(READ_TIMEOUT);
    let mut closed_at: Vec<Duration> = Vec::new();
    for (i, c) in slow.iter().enumerate() {
        let at =
            c.closed.unwrap_or_else(|| panic!("slow client {i} still open {:?} after it connected", opened.elapsed()));
        // Closed by the read timeout: not before it, and soon after.
        assert!(
            at >= timeout - Duration::from_millis(300),
            "slow client {i} closed after {at:?}, before the read timeout"
        );
        assert!(at <= timeout + Duration::from_millis(2500), "slow client {i} closed only after {at:?}");
        let answer = String::from_utf8_lossy(&c.answer);
        if i % 2 == 1 {
            assert!(answer.starts_with("HTTP/1.1 408 "), "a body never finished is told 408: {answer:?}");
        } else {
            // As --help says: headers never finished get no reply, the connection just closes.
            assert!(answer.is_empty(), "headers never finished are answered {answer:?}");
        }
        closed_at.push(at);
    }
    closed_at.sort();
    eprintln!(
        "{SLOW} slow clients closed between {:?} and {:?}; worst prompt round {worst:?} over {prompt} rounds",
        closed_at[0],
        closed_at[SLOW - 1]
    );
    // And the server is as it was.
    assert_eq!(s.translate("es", "en", &["Ella se negó a hacerlo."]), want);
}
