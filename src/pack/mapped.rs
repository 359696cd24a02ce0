//! A pack's mapping and what guards it against the file changing under it.
//!
//! reseam never changes a pack in place (a new one is renamed over the old name, which leaves a
//! mapped inode intact), but another program can: a pack truncated while mapped makes the next
//! read of a page past the new end fault with SIGBUS, and one rewritten in place changes the
//! weights under a running model. Two guards:
//! - the file stays open, and [`Mapping::changed`] compares its size and modification time
//!   (`fstat` of the open file, so the mapped inode, whatever its name now points to) with what
//!   was mapped; the registry asks before handing out a model, so a changed pack is dropped and
//!   the model loaded again instead of read;
//! - a read that faults anyway (the file changed during a round) reaches a SIGBUS handler that
//!   writes one line naming the mapped file at the faulting address before the process dies
//!   with the signal, instead of dying with no word.

use std::fs::File;
use std::path::{Path, PathBuf};
use std::sync::Mutex;
use std::time::SystemTime;

use memmap2::Mmap;

/// A read-only map of a pack, with the open file it maps.
pub(super) struct Mapping {
    map: Mmap,
    file: File,
    path: PathBuf,
    modified: Option<SystemTime>,
}

impl Mapping {
    pub fn open(path: &Path) -> std::io::Result<Mapping> {
        let file = File::open(path)?;
        let modified = file.metadata()?.modified().ok();
        // SAFETY: the map is read-only. reseam replaces packed files only by renaming a new file
        // over the old name, which leaves this mapping's inode intact; another program changing
        // the file in place is caught before use by `changed`, and a fault during use by the
        // SIGBUS handler below, which names the file before the process ends.
        let map = unsafe { Mmap::map(&file) }?;
        guard::register(map.as_ptr() as usize, map.len(), path);
        Ok(Mapping { map, file, path: path.to_path_buf(), modified })
    }

    pub fn bytes(&self) -> &[u8] {
        &self.map
    }

    pub fn map(&self) -> &Mmap {
        &self.map
    }

    /// Why the mapped file is not what was mapped any more (truncated, grown, rewritten in
    /// place), or None.
    pub fn changed(&self) -> Option<String> {
        let meta = match self.file.metadata() {
            Ok(m) => m,
            Err(e) => return Some(format!("{}: the mapped pack cannot be checked: {e}", self.path.display())),
        };
        if meta.len() != self.map.len() as u64 {
            return Some(format!(
                "{}: the pack changed on disk while mapped (now {} bytes, {} when mapped: truncated or rewritten in place)",
                self.path.display(),
                meta.len(),
                self.map.len()
            ));
        }
        if meta.modified().ok() != self.modified {
            return Some(format!("{}: the pack was rewritten in place while mapped", self.path.display()));
        }
        None
    }
}

impl Drop for Mapping {
    fn drop(&mut self) {
        guard::unregister(self.map.as_ptr() as usize);
    }
}

/// The mapped packs by address, for the SIGBUS handler.
struct Region {
    start: usize,
    len: usize,
    path: Vec<u8>,
}

static REGIONS: Mutex<Vec<Region>> = Mutex::new(Vec::new());

#[cfg(target_os = "linux")]
mod guard {
    use std::os::unix::ffi::OsStrExt;
    use std::path::Path;
    use std::sync::{Once, OnceLock};

    use super::{REGIONS, Region};

    static INSTALL: Once = Once::new();
    /// The handler that was there before (Rust's own, for stack overflows), called for faults
    /// outside every pack.
    static PREVIOUS: OnceLock<libc::sigaction> = OnceLock::new();

    pub fn register(start: usize, len: usize, path: &Path) {
        INSTALL.call_once(install);
        let path = path.as_os_str().as_bytes().to_vec();
        REGIONS.lock().unwrap_or_else(|p| p.into_inner()).push(Region { start, len, path });
    }

    pub fn unregister(start: usize) {
        REGIONS.lock().unwrap_or_else(|p| p.into_inner()).retain(|r| r.start != start);
    }

    fn install() {
        // SAFETY: a zeroed sigaction is a valid value of the plain C struct; the handler only
        // makes async-signal-safe calls (write, sigaction) and a non-blocking try_lock.
        unsafe {
            let mut action: libc::sigaction = std::mem::zeroed();
            action.sa_sigaction = on_sigbus as *const () as usize;
            // Not SA_ONSTACK: Rust's alternate signal stacks are sized at AT_MINSIGSTKSZ, which
            // the signal frame alone fills on a CPU with AMX (its tile state is 8 KiB of it),
            // so the handler's own calls ran past it into the guard page and the process died
            // of SIGSEGV after the line. A fault in a mapped pack is not a stack overflow: the
            // thread's own stack has room.
            action.sa_flags = libc::SA_SIGINFO;
            libc::sigemptyset(&mut action.sa_mask);
            let mut previous: libc::sigaction = std::mem::zeroed();
            if libc::sigaction(libc::SIGBUS, &action, &mut previous) == 0 {
                let _ = PREVIOUS.set(previous);
            }
        }
    }

    fn write_all(bytes: &[u8]) {
        // SAFETY: write(2) on stderr with a valid buffer; async-signal-safe.
        unsafe {
            libc::write(2, bytes.as_ptr().cast(), bytes.len());
        }
    }

    extern "C" fn on_sigbus(_signal: libc::c_int, info: *mut libc::siginfo_t, _context: *mut libc::c_void) {
        // SAFETY: the kernel passes a valid siginfo with SA_SIGINFO.
        let addr = unsafe { (*info).si_addr() } as usize;
        // The faulting thread may hold the lock (it never does while reading a map): then the
        // line cannot name the file, but it is still written.
        let named = match REGIONS.try_lock() {
            Ok(regions) => match regions.iter().find(|r| addr >= r.start && addr - r.start < r.len) {
                Some(r) => {
                    write_all(b"error ");
                    write_all(&r.path);
                    write_all(
                        b": the mapped pack was truncated or changed on disk while in use (SIGBUS); the process stops. \
                          Packs are replaced by renaming a new file over the old one, never written in place\n",
                    );
                    true
                }
                None => false,
            },
            Err(_) => {
                write_all(
                    b"error SIGBUS: a mapped file was truncated or changed on disk while in use; the process stops\n",
                );
                true
            }
        };
        // SAFETY: sigaction, signal and raise are async-signal-safe; returning re-runs the
        // faulting read under the restored handler, or delivers the raised SIGBUS first.
        unsafe {
            match PREVIOUS.get() {
                Some(previous) if !named => {
                    libc::sigaction(libc::SIGBUS, previous, std::ptr::null_mut());
                }
                _ => {
                    // Ended by the signal itself (status 135, a core dump where enabled): raised
                    // now, it is delivered as the handler returns.
                    libc::signal(libc::SIGBUS, libc::SIG_DFL);
                    libc::raise(libc::SIGBUS);
                }
            }
        }
    }
}

#[cfg(not(target_os = "linux"))]
mod guard {
    pub fn register(_start: usize, _len: usize, _path: &std::path::Path) {}
    pub fn unregister(_start: usize) {}
}
