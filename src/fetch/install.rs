//! Downloading, checking and installing the files of a pair.
//!
//! Each attachment goes to `.<name>.<hash>.zst.part` in the pair folder (kept across runs, so an
//! interrupted download resumes with an HTTP range request), is checked against
//! `attachment.size`/`attachment.hash`, decompressed to `.<name>.tmp` and checked against
//! `decompressedSize`/`decompressedHash`. Only when every file of the pair has passed are the
//! temporary files renamed to Firefox's names and the manifest written, so a folder never mixes
//! versions and never holds a partial file under a real name.

use std::fs::{self, File, OpenOptions};
use std::io::{self, BufReader, Read, Write};
use std::path::{Path, PathBuf};

use sha2::{Digest, Sha256};

use super::error::FetchError;
use super::manifest::{Manifest, ManifestFile};
use super::progress::{Reporter, human_bytes};
use super::records::{PairModels, Record};
use super::source::{Failure, Opened, backoff};

const BUF: usize = 256 << 10;
const ZSTD_MAGIC: [u8; 4] = [0x28, 0xb5, 0x2f, 0xfd];

pub struct Ctx<'a> {
    pub src: &'a Opened,
    pub rep: &'a Reporter,
}

/// What happened to one pair.
#[derive(Debug, Clone)]
pub struct Installed {
    pub folder: PathBuf,
    pub downloaded: usize,
    pub kept: usize,
    pub bytes: u64,
}

/// Installs (or updates, or checks) one pair under `models`.
pub fn install_pair(ctx: &Ctx, models: &Path, pair: &PairModels) -> Result<Installed, FetchError> {
    fs::create_dir_all(models).map_err(|e| FetchError::writing(models, "", e))?;
    let folder = models.join(pair.folder_name());
    match fs::create_dir(&folder) {
        Err(e) if e.kind() != io::ErrorKind::AlreadyExists => return Err(FetchError::writing(&folder, "", e)),
        _ => {}
    }
    let _lock = lock(ctx, &folder)?;
    remove_stale_temporaries(&folder, pair);
    let old = Manifest::read(&folder);
    let mut done = Installed { folder: folder.clone(), downloaded: 0, kept: 0, bytes: 0 };

    // Phase 1: every file verified, in place or as a temporary file. On failure the decompressed
    // temporary files go (they are large); verified downloads stay for the next run.
    let mut staged: Vec<(&Record, PathBuf, PathBuf)> = Vec::new();
    if let Err(e) = stage(ctx, &folder, pair, &mut staged, &mut done) {
        for (_, tmp, _) in &staged {
            remove(tmp);
        }
        return Err(e);
    }

    // Phase 2: swap the new files in. The old manifest is marked incomplete first, so a crash in
    // between leaves a folder that `translate --offline` does not trust.
    if !staged.is_empty()
        && let Some(mut m) = old.clone()
    {
        m.complete = false;
        m.write(&folder)?;
    }
    for (rec, tmp, part) in &staged {
        fs::rename(tmp, folder.join(&rec.name)).map_err(|e| FetchError::writing(&folder, &rec.name, e))?;
        let _ = fs::remove_file(part);
    }
    sync_dir(&folder);
    let manifest = Manifest {
        format: 1,
        source_language: pair.source_language.clone(),
        target_language: pair.target_language.clone(),
        architecture: pair.architecture.clone(),
        version: pair.version.clone(),
        source: ctx.src.source().to_string(),
        complete: true,
        files: pair
            .files
            .iter()
            .map(|r| ManifestFile {
                name: r.name.clone(),
                file_type: r.file_type.clone(),
                record_id: r.id.clone(),
                version: r.version.clone(),
                decompressed_size: r.decompressed_size,
                decompressed_hash: r.decompressed_hash.clone(),
                attachment_hash: r.attachment.hash.clone(),
            })
            .collect(),
    };
    if old.as_ref() != Some(&manifest) {
        manifest.write(&folder)?;
    }
    // Files of the previous version that this one does not have (a shared vocab after a switch to
    // split vocabs). Only files the old manifest lists: never anything reseam did not put there.
    for f in old.iter().flat_map(|m| &m.files) {
        if !pair.files.iter().any(|r| r.name == f.name) && super::records::is_plain_file_name(&f.name) {
            let _ = fs::remove_file(folder.join(&f.name));
            ctx.rep.debug(&format!("{}/{}: removed, not part of version {}", pair.folder_name(), f.name, pair.version));
        }
    }
    Ok(done)
}

/// Downloads and checks every file of `pair` that is not installed yet, into temporary files.
fn stage<'p>(
    ctx: &Ctx,
    folder: &Path,
    pair: &'p PairModels,
    staged: &mut Vec<(&'p Record, PathBuf, PathBuf)>,
    done: &mut Installed,
) -> Result<(), FetchError> {
    for rec in &pair.files {
        let shown = format!("{}/{}", pair.folder_name(), rec.name);
        if is_installed(&folder.join(&rec.name), rec)? {
            ctx.rep.line(&format!("{shown}: already installed and verified (version {})", rec.version));
            done.kept += 1;
            continue;
        }
        let part = folder.join(format!(".{}.{}.zst.part", rec.name, &rec.attachment.hash[..12]));
        let tmp = folder.join(format!(".{}.tmp", rec.name));
        download_attachment(ctx, rec, &part, &shown)?;
        decompress_verified(ctx, rec, &part, &tmp)?;
        ctx.rep.line(&format!(
            "{shown}: {} downloaded, {} installed, verified (version {})",
            human_bytes(rec.attachment.size),
            human_bytes(rec.decompressed_size),
            rec.version
        ));
        done.downloaded += 1;
        done.bytes += rec.attachment.size;
        staged.push((rec, tmp, part));
    }
    Ok(())
}

/// The file is in place with the record's size and sha256.
fn is_installed(target: &Path, rec: &Record) -> Result<bool, FetchError> {
    match fs::metadata(target) {
        Ok(m) if m.is_file() && m.len() == rec.decompressed_size => {
            let (_, hash) = hash_file(target)?;
            Ok(hash == rec.decompressed_hash)
        }
        _ => Ok(false),
    }
}

/// Brings `part` to the complete, verified attachment, resuming what is there.
pub fn download_attachment(ctx: &Ctx, rec: &Record, part: &Path, shown: &str) -> Result<(), FetchError> {
    let expected = rec.attachment.size;
    let origin = ctx.src.attachment_origin(&rec.attachment.location);
    let mut may_restart = file_len(part) > 0;
    loop {
        let have = file_len(part);
        if have > expected {
            remove(part);
            continue;
        }
        if have < expected {
            transfer(ctx, rec, part, have, shown, &origin)?;
        }
        let (len, hash) = hash_file(part)?;
        if len == expected && hash == rec.attachment.hash {
            return Ok(());
        }
        remove(part);
        if may_restart {
            // The bytes kept from an earlier run may be what is wrong: one clean try.
            may_restart = false;
            ctx.rep.debug(&format!("{shown}: resumed download did not verify; starting over"));
            continue;
        }
        return Err(if len != expected {
            FetchError::SizeMismatch { file: rec.name.clone(), field: "attachment.size", expected, got: len, origin }
        } else {
            FetchError::HashMismatch {
                file: rec.name.clone(),
                field: "attachment.hash",
                expected: rec.attachment.hash.clone(),
                got: hash,
                origin,
            }
        });
    }
}

/// Appends the rest of the attachment to `part`, retrying with backoff. Attempts that bring new
/// bytes do not count against --retries, so a long download over a flaky link still finishes.
fn transfer(ctx: &Ctx, rec: &Record, part: &Path, mut have: u64, shown: &str, origin: &str) -> Result<(), FetchError> {
    let expected = rec.attachment.size;
    let progress = ctx.rep.file(shown, expected, have);
    let mut best = have;
    let mut failures = 0;
    let mut attempts = 0;
    loop {
        attempts += 1;
        let mut attempt = || -> Result<(), Failure> {
            let body = ctx.src.attachment(&rec.attachment.location, have)?;
            let mut options = OpenOptions::new();
            if body.start == 0 {
                options.write(true).create(true).truncate(true);
                have = 0;
                progress.set(0);
            } else {
                options.append(true);
            }
            let mut file = options.open(part).map_err(|e| Failure::Fatal(FetchError::writing(part, &rec.name, e)))?;
            // One byte more than expected is enough to know the body is too long.
            let mut reader = body.reader.take(expected - have + 1);
            let mut buf = vec![0u8; BUF];
            loop {
                let n = match reader.read(&mut buf) {
                    Ok(0) => break,
                    Ok(n) => n,
                    Err(e) if e.kind() == io::ErrorKind::Interrupted => continue,
                    Err(e) => return Err(Failure::Transient(format!("reading the download failed: {e}"))),
                };
                file.write_all(&buf[..n]).map_err(|e| Failure::Fatal(FetchError::writing(part, &rec.name, e)))?;
                have += n as u64;
                progress.advance(n as u64);
            }
            file.sync_all().map_err(|e| Failure::Fatal(FetchError::writing(part, &rec.name, e)))?;
            if have < expected {
                return Err(Failure::Transient(format!("the download ended after {have} of {expected} bytes")));
            }
            Ok(())
        };
        match attempt() {
            Ok(()) => {
                progress.finish();
                return Ok(());
            }
            Err(Failure::Fatal(e)) => return Err(e),
            Err(Failure::Transient(detail)) => {
                have = file_len(part);
                if have > best && ctx.src.retries() > 0 {
                    best = have;
                    failures = 0;
                } else {
                    failures += 1;
                }
                if failures > ctx.src.retries() {
                    return Err(FetchError::Network { url: origin.to_string(), detail, attempts });
                }
                let wait = backoff(failures.saturating_sub(1));
                ctx.rep.debug(&format!("{shown}: {detail}; retrying from byte {have} in {wait:?}"));
                std::thread::sleep(wait);
            }
        }
    }
}

/// Decompresses `part` into `tmp` and checks decompressedSize/Hash. On failure both are removed.
pub fn decompress_verified(ctx: &Ctx, rec: &Record, part: &Path, tmp: &Path) -> Result<(), FetchError> {
    let result = decompress_into(ctx, rec, part, Some(tmp));
    if result.is_err() {
        remove(tmp);
        remove(part);
    }
    result
}

/// Decompresses `part` (zstd, or a plain file as in the v1 collection) into `out`, or only hashes
/// it when `out` is None, and checks decompressedSize/Hash.
pub fn decompress_into(ctx: &Ctx, rec: &Record, part: &Path, out: Option<&Path>) -> Result<(), FetchError> {
    let origin = ctx.src.attachment_origin(&rec.attachment.location);
    let mut input = BufReader::new(File::open(part).map_err(|e| FetchError::io(part, e))?);
    let mut magic = [0u8; 4];
    let mut head = 0;
    while head < 4 {
        match input.read(&mut magic[head..]) {
            Ok(0) => break,
            Ok(n) => head += n,
            Err(e) => return Err(FetchError::io(part, e)),
        }
    }
    let chained = io::Cursor::new(magic[..head].to_vec()).chain(input);
    let mut reader: Box<dyn Read> = if magic == ZSTD_MAGIC {
        let d = zstd::stream::read::Decoder::new(chained).map_err(|e| FetchError::io(part, e))?;
        Box::new(d)
    } else {
        Box::new(chained)
    };
    let bad = |detail: String| FetchError::Decompress { file: rec.name.clone(), origin: origin.clone(), detail };
    let mut file = match out {
        Some(p) => Some(File::create(p).map_err(|e| FetchError::writing(p, &rec.name, e))?),
        None => None,
    };
    let mut hasher = Sha256::new();
    let mut len = 0u64;
    let mut buf = vec![0u8; BUF];
    // A stream that inflates past the recorded size is wrong already; stop there.
    let limit = rec.decompressed_size + 1;
    while len < limit {
        let want = buf.len().min((limit - len) as usize);
        let n = match reader.read(&mut buf[..want]) {
            Ok(0) => break,
            Ok(n) => n,
            Err(e) if e.kind() == io::ErrorKind::Interrupted => continue,
            Err(e) => return Err(bad(e.to_string())),
        };
        hasher.update(&buf[..n]);
        if let (Some(f), Some(p)) = (file.as_mut(), out) {
            f.write_all(&buf[..n]).map_err(|e| FetchError::writing(p, &rec.name, e))?;
        }
        len += n as u64;
    }
    if let (Some(f), Some(p)) = (file, out) {
        f.sync_all().map_err(|e| FetchError::writing(p, &rec.name, e))?;
    }
    if len != rec.decompressed_size {
        return Err(FetchError::SizeMismatch {
            file: rec.name.clone(),
            field: "decompressedSize",
            expected: rec.decompressed_size,
            got: len,
            origin,
        });
    }
    let hash = hex(&hasher.finalize());
    if hash != rec.decompressed_hash {
        return Err(FetchError::HashMismatch {
            file: rec.name.clone(),
            field: "decompressedHash",
            expected: rec.decompressed_hash.clone(),
            got: hash,
            origin,
        });
    }
    Ok(())
}

/// (length, sha256 hex) of a file.
pub fn hash_file(path: &Path) -> Result<(u64, String), FetchError> {
    let mut f = File::open(path).map_err(|e| FetchError::io(path, e))?;
    let mut hasher = Sha256::new();
    let mut buf = vec![0u8; BUF];
    let mut len = 0u64;
    loop {
        let n = match f.read(&mut buf) {
            Ok(0) => break,
            Ok(n) => n,
            Err(e) if e.kind() == io::ErrorKind::Interrupted => continue,
            Err(e) => return Err(FetchError::io(path, e)),
        };
        hasher.update(&buf[..n]);
        len += n as u64;
    }
    Ok((len, hex(&hasher.finalize())))
}

pub fn hex(bytes: &[u8]) -> String {
    bytes.iter().map(|b| format!("{b:02x}")).collect()
}

fn file_len(p: &Path) -> u64 {
    fs::metadata(p).map(|m| m.len()).unwrap_or(0)
}

fn remove(p: &Path) {
    let _ = fs::remove_file(p);
}

/// Temporary files of earlier runs that no current record will resume. Runs under the folder
/// lock, so no other reseam is writing them.
fn remove_stale_temporaries(folder: &Path, pair: &PairModels) {
    let Ok(entries) = fs::read_dir(folder) else { return };
    for e in entries.filter_map(Result::ok) {
        let name = e.file_name().to_string_lossy().into_owned();
        let resumable = pair.files.iter().any(|r| name == format!(".{}.{}.zst.part", r.name, &r.attachment.hash[..12]));
        if name.starts_with('.') && (name.ends_with(".tmp") || (name.ends_with(".zst.part") && !resumable)) {
            remove(&e.path());
        }
    }
}

/// Holds an exclusive lock on the folder while installing, so two reseam processes (a `serve`
/// and a `translate`, say) do not write the same files.
#[cfg(unix)]
fn lock(ctx: &Ctx, folder: &Path) -> Result<File, FetchError> {
    let f = File::open(folder).map_err(|e| FetchError::io(folder, e))?;
    match f.try_lock() {
        Ok(()) => {}
        Err(fs::TryLockError::WouldBlock) => {
            ctx.rep.line(&format!("waiting for another reseam that is installing into {}", folder.display()));
            f.lock().map_err(|e| FetchError::io(folder, e))?;
        }
        Err(fs::TryLockError::Error(e)) => return Err(FetchError::io(folder, e)),
    }
    Ok(f)
}

#[cfg(not(unix))]
fn lock(_ctx: &Ctx, _folder: &Path) -> Result<(), FetchError> {
    Ok(())
}

/// Makes the renames durable; a failure here only weakens crash safety, so it is ignored.
fn sync_dir(folder: &Path) {
    #[cfg(unix)]
    if let Ok(d) = File::open(folder) {
        let _ = d.sync_all();
    }
    #[cfg(not(unix))]
    let _ = folder;
}
