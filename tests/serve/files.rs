//! Files changed under a running server: a pack truncated or rewritten in place is noticed
//! before it is read, named in one log line, and the model loaded again (the process stays up);
//! one truncated during a request ends the process with a line naming it instead of silently;
//! temporary packs a killed packer left are removed at start.

use std::os::unix::process::ExitStatusExt;
use std::time::{Duration, SystemTime};

use serde_json::json;

use super::client::Req;
use super::memory::pack_of;
use super::server::Server;
use crate::common::TestDir;

const TEXT: &str = "Ella se negó a hacerlo.";

/// Lines of the log that say the pack changed.
fn changed_lines(log: &str) -> Vec<&str> {
    log.lines().filter(|l| l.contains("the pack") && l.contains("while mapped")).collect()
}

#[test]
fn a_pack_truncated_or_rewritten_in_place_is_dropped_and_loaded_again() {
    let s = Server::esen().start();
    let want = s.translate("es", "en", &[TEXT]);
    let pack = pack_of(&s).expect("the pack");
    let bytes = std::fs::read(&pack).unwrap();

    // Truncated, then rewritten with the same bytes, in place (the same inode, as `cat > f`).
    let f = std::fs::OpenOptions::new().write(true).open(&pack).unwrap();
    f.set_len(0).unwrap();
    drop(f);
    std::thread::sleep(Duration::from_millis(20));
    std::fs::write(&pack, &bytes).unwrap();
    assert_eq!(s.translate("es", "en", &[TEXT]), want, "served after the reload");
    let log = s.log();
    let lines = changed_lines(&log);
    assert_eq!(lines.len(), 1, "one line:\n{log}");
    assert!(lines[0].starts_with("error ") && lines[0].contains(&pack.display().to_string()), "{}", lines[0]);
    assert_eq!(s.translate("es", "en", &[TEXT]), want);
    assert_eq!(changed_lines(&s.log()).len(), 1, "said once");

    // Truncated and left so: noticed, and the pack rebuilt.
    let f = std::fs::OpenOptions::new().write(true).open(&pack).unwrap();
    f.set_len(4096).unwrap();
    drop(f);
    assert_eq!(s.translate("es", "en", &[TEXT]), want, "served after the rebuild");
    let log = s.log();
    assert_eq!(changed_lines(&log).len(), 2, "{log}");
    assert!(log.contains("now 4096 bytes"), "{log}");
    assert!(log.lines().any(|l| l.starts_with("info ") && l.contains("damaged")), "rebuilt:\n{log}");
    assert_eq!(std::fs::read(&pack).unwrap().len(), bytes.len(), "the pack rebuilt whole");
    assert_eq!(Req::get("/health").send(s.addr).status, 200);
}

#[test]
fn a_pack_truncated_during_a_request_ends_the_process_with_a_line_naming_it() {
    let mut s = Server::esen().start();
    s.translate("es", "en", &[TEXT]);
    let pack = pack_of(&s).expect("the pack");
    // A request that computes for seconds; the pack is cut under it.
    let heavy = "中".repeat(6000);
    let addr = s.addr;
    let client = std::thread::spawn(move || {
        let mut c = super::client::Conn::open(addr);
        let r = Req::post("/v1/translate").json(&json!({"from": "es", "to": "en", "texts": [heavy]}));
        c.write(&r.bytes(false));
        c.read_response(false)
    });
    std::thread::sleep(Duration::from_millis(500));
    let f = std::fs::OpenOptions::new().write(true).open(&pack).unwrap();
    f.set_len(4096).unwrap();
    drop(f);
    let (status, log) = s.wait_exit(Duration::from_secs(60));
    assert!(client.join().unwrap().is_err(), "no answer from a process that died");
    // Killed by the signal itself, not exited, and not by a SIGSEGV in the handler (its frame
    // outgrew the alternate signal stack on a CPU with AMX).
    assert_eq!(status.signal(), Some(7), "killed by SIGBUS: {status:?}\n{log}");
    let line = log.lines().find(|l| l.contains("SIGBUS")).unwrap_or_else(|| panic!("no line:\n{log}"));
    assert!(line.starts_with("error ") && line.contains(&pack.display().to_string()), "{line}");
}

#[test]
fn temporary_packs_a_killed_packer_left_are_removed_at_start() {
    let dir = TestDir::new();
    let folder = dir.path().join("models/es-en");
    std::fs::create_dir_all(&folder).unwrap();
    let stale = folder.join(".reseam-pack-AbC123.tmp");
    let fresh = folder.join(".reseam-pack-XyZ789.tmp");
    for p in [&stale, &fresh] {
        std::fs::write(p, b"RESEAMPK half a pack").unwrap();
    }
    let hour_ago = SystemTime::now() - Duration::from_secs(3600);
    std::fs::File::options().write(true).open(&stale).unwrap().set_modified(hour_ago).unwrap();
    let s = Server::esen().start_in(dir);
    assert!(!stale.exists(), "a temporary pack untouched for an hour is removed");
    assert!(fresh.exists(), "one written a moment ago may be another packer's at work");
    let log = s.log();
    let line = log.lines().find(|l| l.contains("removed a temporary pack")).unwrap_or_else(|| panic!("{log}"));
    assert!(line.starts_with("info ") && line.contains(".reseam-pack-AbC123.tmp"), "{line}");
}
