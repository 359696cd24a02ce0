//! reseam's weight container (`*.reseam`): weights prepared once (quantized, packed in the
//! kernels' layout) and memory-mapped on every later run, shared by all threads and processes.
//!
//! ```text
//! offset 0   prefix, 64 bytes:
//!              magic "RESEAMPK" | version u32 LE | 0u32 | table offset u64 LE | table length u64 LE
//!              | 32 zero bytes
//! offset 64  blobs, each starting at a multiple of 64 (the kernels' and the caches' alignment;
//!            mmap puts the file start on a page, so the alignment holds in memory too)
//! table      UTF-8 JSON: {"kind", "meta", "tensors": [{"name", "dtype", "shape", "offset", "len", "crc32"}]}
//! ```
//!
//! The table goes last so that blobs stream to disk as they are made (a 1B-parameter model
//! never has to be held twice); the prefix is filled in when the table is written. A file is
//! written to a temporary name in its folder and renamed into place, so a reader never sees half
//! a file. All numbers are little-endian. `meta` is free-form JSON owned by the producer (which
//! checkpoint, how it was quantized) and is how a reader decides whether the file is current.
//!
//! Every blob carries its CRC-32, checked when the file is opened: a flipped bit anywhere in the
//! weights is found before they are used, not as a wrong translation. Where packs go, what they
//! were made from and when they are rebuilt is [`cache`]'s business.

pub mod cache;
mod mapped;

use std::collections::HashMap;
use std::io::{BufWriter, Seek, SeekFrom, Write};
use std::path::{Path, PathBuf};
use std::sync::Arc;

use serde::{Deserialize, Serialize};

use self::mapped::Mapping;

/// The first bytes of every packed file.
pub const MAGIC: [u8; 8] = *b"RESEAMPK";
/// Bumped when the container (not its contents) changes incompatibly.
pub const VERSION: u32 = 2;
/// Blob alignment in the file.
pub const ALIGN: u64 = 64;
const PREFIX_LEN: u64 = 64;
/// The reason [`PackFile::open`] gives for a file that does not start with [`MAGIC`].
pub const NOT_A_PACK: &str = "it does not start with the reseam pack magic bytes";
/// A table larger than this is not something reseam wrote.
const MAX_TABLE: u64 = 256 << 20;

#[derive(Debug, thiserror::Error)]
pub enum Error {
    #[error("{path}")]
    Io { path: PathBuf, source: std::io::Error },
    #[error("{path}: not a reseam packed file ({why}); delete it and run again to rebuild it")]
    Format { path: PathBuf, why: String },
    #[error(
        "{path}: packed by another reseam (container version {found}, this one reads {VERSION}); run again to rebuild it"
    )]
    Version { path: PathBuf, found: u32 },
    #[error("{path}: no tensor {name:?} in the packed file; delete it and run again to rebuild it")]
    Missing { path: PathBuf, name: String },
    #[error("{path}: tensor {name:?} is {got}, expected {want}; delete the file and run again to rebuild it")]
    Mismatch { path: PathBuf, name: String, got: String, want: String },
    /// A source file is not what `reseam fetch` verified and recorded.
    #[error("{path}: {why}")]
    Source { path: PathBuf, why: String },
}

crate::error::fault!(Error);

impl Error {
    /// Packed files are reseam's own cache, so their failures are never the caller's fault.
    pub fn is_usage(&self) -> bool {
        false
    }
}

type Result<T> = std::result::Result<T, Error>;

/// How a blob's bytes are to be read.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Dtype {
    /// A `reseam_kernels::PackedB`, shape `[k, n]`.
    PackedI8,
    F32,
    I32,
    U8,
}

impl Dtype {
    fn elem_size(self) -> usize {
        match self {
            Dtype::PackedI8 | Dtype::U8 => 1,
            Dtype::F32 | Dtype::I32 => 4,
        }
    }

    /// Bytes a tensor of this type and shape takes.
    pub fn byte_len(self, shape: &[usize]) -> Option<usize> {
        match self {
            Dtype::PackedI8 => match shape {
                [k, n] => Some(reseam_kernels::pack::packed_len(*k, *n)),
                _ => None,
            },
            _ => shape.iter().try_fold(self.elem_size(), |acc, &d| acc.checked_mul(d)),
        }
    }
}

/// One row of the table.
#[derive(Clone, Debug, Serialize, Deserialize)]
pub struct Entry {
    pub name: String,
    pub dtype: Dtype,
    pub shape: Vec<usize>,
    pub offset: u64,
    pub len: u64,
    /// CRC-32 (IEEE) of the blob's bytes.
    pub crc32: u32,
}

#[derive(Serialize, Deserialize)]
struct Table {
    kind: String,
    meta: serde_json::Value,
    tensors: Vec<Entry>,
}

fn io(path: &Path) -> impl FnOnce(std::io::Error) -> Error + '_ {
    move |source| Error::Io { path: path.to_path_buf(), source }
}

/// Streams blobs into a temporary file beside `path`; [`Writer::finish`] renames it into place.
pub struct Writer {
    path: PathBuf,
    file: BufWriter<tempfile::NamedTempFile>,
    pos: u64,
    entries: Vec<Entry>,
}

impl Writer {
    /// Starts a file that will appear at `path` (its folder is created if needed).
    pub fn create(path: &Path) -> Result<Writer> {
        let dir = path.parent().filter(|d| !d.as_os_str().is_empty()).unwrap_or(Path::new("."));
        std::fs::create_dir_all(dir).map_err(io(dir))?;
        let tmp = tempfile::Builder::new().prefix(".reseam-pack-").suffix(".tmp").tempfile_in(dir).map_err(io(dir))?;
        let mut file = BufWriter::with_capacity(1 << 20, tmp);
        file.write_all(&[0u8; PREFIX_LEN as usize]).map_err(io(path))?;
        Ok(Writer { path: path.to_path_buf(), file, pos: PREFIX_LEN, entries: Vec::new() })
    }

    fn pad_to_align(&mut self) -> Result<()> {
        let pad = (ALIGN - self.pos % ALIGN) % ALIGN;
        self.file.write_all(&[0u8; ALIGN as usize][..pad as usize]).map_err(io(&self.path))?;
        self.pos += pad;
        Ok(())
    }

    /// Adds a blob. `bytes` must be exactly the length the dtype and shape call for.
    pub fn add(&mut self, name: &str, dtype: Dtype, shape: &[usize], bytes: &[u8]) -> Result<()> {
        self.add_parts(name, dtype, shape, &[bytes])
    }

    /// Adds a blob given as consecutive parts (a packed matrix kept as column blocks).
    pub fn add_parts(&mut self, name: &str, dtype: Dtype, shape: &[usize], parts: &[&[u8]]) -> Result<()> {
        let len: usize = parts.iter().map(|p| p.len()).sum();
        let want = dtype.byte_len(shape);
        if want != Some(len) {
            return Err(Error::Mismatch {
                path: self.path.clone(),
                name: name.into(),
                got: format!("{len} bytes"),
                want: format!("{want:?} bytes for {dtype:?} {shape:?}"),
            });
        }
        if self.entries.iter().any(|e| e.name == name) {
            return Err(Error::Mismatch {
                path: self.path.clone(),
                name: name.into(),
                got: "a second tensor of this name".into(),
                want: "unique names".into(),
            });
        }
        self.pad_to_align()?;
        let mut crc = crc32fast::Hasher::new();
        for p in parts {
            crc.update(p);
            self.file.write_all(p).map_err(io(&self.path))?;
        }
        let crc32 = crc.finalize();
        self.entries.push(Entry {
            name: name.into(),
            dtype,
            shape: shape.to_vec(),
            offset: self.pos,
            len: len as u64,
            crc32,
        });
        self.pos += len as u64;
        Ok(())
    }

    pub fn add_f32(&mut self, name: &str, shape: &[usize], values: &[f32]) -> Result<()> {
        let bytes: Vec<u8> = values.iter().flat_map(|v| v.to_le_bytes()).collect();
        self.add(name, Dtype::F32, shape, &bytes)
    }

    pub fn add_i32(&mut self, name: &str, shape: &[usize], values: &[i32]) -> Result<()> {
        let bytes: Vec<u8> = values.iter().flat_map(|v| v.to_le_bytes()).collect();
        self.add(name, Dtype::I32, shape, &bytes)
    }

    /// Writes the table and the prefix, flushes to disk and renames the file into place.
    pub fn finish(mut self, kind: &str, meta: serde_json::Value) -> Result<PathBuf> {
        let table = Table { kind: kind.into(), meta, tensors: std::mem::take(&mut self.entries) };
        // serde_json cannot fail on these types (string keys, finite numbers are not required).
        let json =
            serde_json::to_vec(&table).map_err(|e| Error::Format { path: self.path.clone(), why: e.to_string() })?;
        self.pad_to_align()?;
        let table_offset = self.pos;
        self.file.write_all(&json).map_err(io(&self.path))?;
        let mut prefix = [0u8; PREFIX_LEN as usize];
        prefix[..8].copy_from_slice(&MAGIC);
        prefix[8..12].copy_from_slice(&VERSION.to_le_bytes());
        prefix[16..24].copy_from_slice(&table_offset.to_le_bytes());
        prefix[24..32].copy_from_slice(&(json.len() as u64).to_le_bytes());
        let path = self.path.clone();
        let mut tmp = self.file.into_inner().map_err(|e| Error::Io { path: path.clone(), source: e.into_error() })?;
        tmp.seek(SeekFrom::Start(0)).map_err(io(&path))?;
        tmp.write_all(&prefix).map_err(io(&path))?;
        // Readable by every user: a pack in a shared model folder serves them all.
        use std::os::unix::fs::PermissionsExt;
        tmp.as_file().set_permissions(std::fs::Permissions::from_mode(0o644)).map_err(io(&path))?;
        tmp.as_file().sync_all().map_err(io(&path))?;
        tmp.persist(&path).map_err(|e| Error::Io { path: path.clone(), source: e.error })?;
        Ok(path)
    }
}

/// A packed file, memory-mapped. Cloning shares the map.
#[derive(Clone)]
pub struct PackFile {
    path: PathBuf,
    map: Arc<Mapping>,
    kind: String,
    meta: serde_json::Value,
    index: HashMap<String, Entry>,
}

impl std::fmt::Debug for PackFile {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("PackFile").field("path", &self.path).field("tensors", &self.index.len()).finish()
    }
}

/// The map as the kernels' shared-storage owner.
struct MapOwner(Arc<Mapping>);

impl AsRef<[u8]> for MapOwner {
    fn as_ref(&self) -> &[u8] {
        self.0.bytes()
    }
}

impl PackFile {
    /// Opens and checks a packed file: prefix, table, and every blob inside the file and aligned.
    pub fn open(path: &Path) -> Result<PackFile> {
        let map = Mapping::open(path).map_err(io(path))?;
        let f = Self::from_map(path, Arc::new(map))?;
        f.verify()?;
        Ok(f)
    }

    /// Checks every blob against its CRC-32 (in parallel: this reads the whole file).
    fn verify(&self) -> Result<()> {
        use rayon::prelude::*;
        let entries: Vec<&Entry> = self.index.values().collect();
        let bad = entries.par_iter().find_any(|e| {
            let bytes = &self.map.bytes()[e.offset as usize..(e.offset + e.len) as usize];
            crc32fast::hash(bytes) != e.crc32
        });
        match bad {
            Some(e) => Err(Error::Format {
                path: self.path.clone(),
                why: format!("tensor {:?} fails its checksum (the file is damaged)", e.name),
            }),
            None => Ok(()),
        }
    }

    /// Hands the file's resident pages back to the kernel (`MADV_DONTNEED`): the next read of
    /// any blob pages it in again from the page cache (or the disk). For idle models.
    pub fn release_pages(&self) -> std::io::Result<()> {
        // SAFETY: the map is a read-only shared mapping of a file. MADV_DONTNEED on it drops
        // this process's page-table entries only; a later access faults the same file bytes
        // back in, so every slice borrowed from the map keeps its contents.
        unsafe { self.map.map().unchecked_advise(memmap2::UncheckedAdvice::DontNeed) }
    }

    /// Why the file on disk is no longer what is mapped (see [`mapped`]), or None.
    pub fn changed(&self) -> Option<String> {
        self.map.changed()
    }

    /// Reads one byte of every page, so that the whole file is resident (preloading).
    pub fn touch(&self) -> u8 {
        self.map.bytes().iter().step_by(4096).fold(0u8, |a, &b| a ^ b)
    }

    /// Bytes of the file.
    pub fn len(&self) -> usize {
        self.map.bytes().len()
    }

    pub fn is_empty(&self) -> bool {
        self.map.bytes().is_empty()
    }

    /// A tensor's bytes as a shareable slice of the map (no copy).
    pub fn shared_bytes(&self, name: &str, dtype: Dtype, shape: &[usize]) -> Result<Bytes> {
        let e = self.entry(name, dtype, shape)?;
        Ok(Bytes { owner: self.shared_map(), start: e.offset as usize, len: e.len as usize })
    }

    fn from_map(path: &Path, mapping: Arc<Mapping>) -> Result<PackFile> {
        let bad = |why: String| Error::Format { path: path.to_path_buf(), why };
        let map = mapping.bytes();
        let len = map.len() as u64;
        if map.len() < 8 || map[..8] != MAGIC {
            return Err(bad(NOT_A_PACK.into()));
        }
        if len < PREFIX_LEN {
            return Err(bad(format!("{len} bytes, shorter than the 64-byte prefix (truncated?)")));
        }
        let u64_at = |at: usize| u64::from_le_bytes(map[at..at + 8].try_into().expect("8 bytes"));
        let version = u32::from_le_bytes(map[8..12].try_into().expect("4 bytes"));
        if version != VERSION {
            return Err(Error::Version { path: path.to_path_buf(), found: version });
        }
        let (table_offset, table_len) = (u64_at(16), u64_at(24));
        if table_len > MAX_TABLE || table_offset < PREFIX_LEN || table_offset.checked_add(table_len) != Some(len) {
            return Err(bad(format!(
                "table at {table_offset} of {table_len} bytes does not end the {len}-byte file (truncated?)"
            )));
        }
        let table: Table =
            serde_json::from_slice(&map[table_offset as usize..]).map_err(|e| bad(format!("unreadable table: {e}")))?;
        let mut index = HashMap::new();
        for e in table.tensors {
            let want = e.dtype.byte_len(&e.shape).map(|l| l as u64);
            let end = e.offset.checked_add(e.len);
            if want != Some(e.len)
                || e.offset % ALIGN != 0
                || e.offset < PREFIX_LEN
                || end.is_none_or(|end| end > table_offset)
            {
                return Err(bad(format!("tensor {:?} has an impossible place or size", e.name)));
            }
            if index.insert(e.name.clone(), e).is_some() {
                return Err(bad("a tensor name appears twice".into()));
            }
        }
        Ok(PackFile { path: path.to_path_buf(), map: mapping, kind: table.kind, meta: table.meta, index })
    }

    pub fn path(&self) -> &Path {
        &self.path
    }
    /// What kind of model the producer said this is.
    pub fn kind(&self) -> &str {
        &self.kind
    }
    /// The producer's own description (source identity, quantization).
    pub fn meta(&self) -> &serde_json::Value {
        &self.meta
    }
    pub fn entries(&self) -> impl Iterator<Item = &Entry> {
        self.index.values()
    }

    fn entry(&self, name: &str, dtype: Dtype, shape: &[usize]) -> Result<&Entry> {
        let e = self.index.get(name).ok_or_else(|| Error::Missing { path: self.path.clone(), name: name.into() })?;
        if e.dtype != dtype || e.shape != shape {
            return Err(Error::Mismatch {
                path: self.path.clone(),
                name: name.into(),
                got: format!("{:?} {:?}", e.dtype, e.shape),
                want: format!("{dtype:?} {shape:?}"),
            });
        }
        Ok(e)
    }

    /// The raw bytes of a tensor that must have this type and shape.
    pub fn bytes(&self, name: &str, dtype: Dtype, shape: &[usize]) -> Result<&[u8]> {
        let e = self.entry(name, dtype, shape)?;
        Ok(&self.map.bytes()[e.offset as usize..(e.offset + e.len) as usize])
    }

    pub fn f32s(&self, name: &str, shape: &[usize]) -> Result<Vec<f32>> {
        let b = self.bytes(name, Dtype::F32, shape)?;
        Ok(b.chunks_exact(4).map(|c| f32::from_le_bytes(c.try_into().expect("4 bytes"))).collect())
    }

    pub fn i32s(&self, name: &str, shape: &[usize]) -> Result<Vec<i32>> {
        let b = self.bytes(name, Dtype::I32, shape)?;
        Ok(b.chunks_exact(4).map(|c| i32::from_le_bytes(c.try_into().expect("4 bytes"))).collect())
    }

    /// A `k × n` packed matrix, borrowed from the map (no copy), with its column sums.
    pub fn packed(&self, name: &str, k: usize, n: usize, col_sums: Vec<i32>) -> Result<reseam_kernels::PackedB> {
        let e = self.entry(name, Dtype::PackedI8, &[k, n])?;
        let owner: Arc<dyn AsRef<[u8]> + Send + Sync> = Arc::new(MapOwner(self.map.clone()));
        reseam_kernels::PackedB::from_shared(owner, e.offset as usize, k, n, col_sums)
            .map_err(|why| Error::Format { path: self.path.clone(), why })
    }

    /// The whole map, for callers that slice packed matrices themselves (e.g. by column block).
    pub fn shared_map(&self) -> Arc<dyn AsRef<[u8]> + Send + Sync> {
        Arc::new(MapOwner(self.map.clone()))
    }

    /// Where a tensor starts in [`PackFile::shared_map`].
    pub fn offset(&self, name: &str, dtype: Dtype, shape: &[usize]) -> Result<usize> {
        Ok(self.entry(name, dtype, shape)?.offset as usize)
    }
}

/// Bytes owned in memory or borrowed from a map, shareable between threads.
#[derive(Clone)]
pub struct Bytes {
    owner: Arc<dyn AsRef<[u8]> + Send + Sync>,
    start: usize,
    len: usize,
}

impl Bytes {
    pub fn from_vec(v: Vec<u8>) -> Bytes {
        let len = v.len();
        Bytes { owner: Arc::new(v), start: 0, len }
    }
}

impl std::ops::Deref for Bytes {
    type Target = [u8];
    fn deref(&self) -> &[u8] {
        &(*self.owner).as_ref()[self.start..self.start + self.len]
    }
}

/// `f32` values owned in memory or read in place from a pack's map (a mapped array costs
/// resident memory only for the pages a forward pass touches, and only while in use).
#[derive(Clone)]
pub enum F32s {
    Owned(Vec<f32>),
    /// Little-endian floats, checked at construction to be 4-byte aligned and whole.
    Mapped(Bytes),
}

impl F32s {
    /// A tensor of `n` floats borrowed from `f`'s map.
    pub fn mapped(f: &PackFile, name: &str, n: usize) -> Result<F32s> {
        let b = f.shared_bytes(name, Dtype::F32, &[n])?;
        if cfg!(target_endian = "big") || <[f32] as zerocopy::FromBytes>::ref_from_bytes(&b).is_err() {
            // Blobs start at multiples of 64 in a page-aligned map, so only a big-endian CPU
            // gets here: read the values instead.
            return Ok(F32s::Owned(f.f32s(name, &[n])?));
        }
        Ok(F32s::Mapped(b))
    }
}

impl std::ops::Deref for F32s {
    type Target = [f32];
    fn deref(&self) -> &[f32] {
        match self {
            F32s::Owned(v) => v,
            // Checked in `mapped`: the bytes never change or move.
            F32s::Mapped(b) => <[f32] as zerocopy::FromBytes>::ref_from_bytes(b).unwrap_or_default(),
        }
    }
}

impl From<Vec<f32>> for F32s {
    fn from(v: Vec<f32>) -> F32s {
        F32s::Owned(v)
    }
}

impl std::fmt::Debug for F32s {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let how = if matches!(self, F32s::Mapped(_)) { "mapped" } else { "owned" };
        write!(f, "F32s({} values, {how})", self.len())
    }
}

impl std::fmt::Debug for Bytes {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "Bytes({} bytes)", self.len)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use reseam_kernels::PackedB;

    fn sample(dir: &Path) -> (PathBuf, PackedB) {
        let path = dir.join("m.reseam");
        let (k, n) = (70, 33);
        let bt: Vec<i8> = (0..k * n).map(|i| ((i * 31) % 255) as i32 as i8).collect();
        let p = PackedB::from_transposed(&bt, k, n);
        let mut w = Writer::create(&path).unwrap();
        w.add_f32("norm", &[3], &[1.0, -2.5, 3.25]).unwrap();
        w.add("w", Dtype::PackedI8, &[k, n], p.as_bytes()).unwrap();
        w.add_i32("w.col_sums", &[n], p.col_sums()).unwrap();
        w.finish("test", serde_json::json!({"source": "unit"})).unwrap();
        (path, p)
    }

    #[test]
    fn round_trip_keeps_bytes_alignment_and_meta() {
        let dir = tempfile::tempdir().unwrap();
        let (path, p) = sample(dir.path());
        let f = PackFile::open(&path).unwrap();
        assert_eq!(f.kind(), "test");
        assert_eq!(f.meta()["source"], "unit");
        assert_eq!(f.f32s("norm", &[3]).unwrap(), vec![1.0, -2.5, 3.25]);
        let mapped = F32s::mapped(&f, "norm", 3).unwrap();
        assert!(matches!(mapped, F32s::Mapped(_)), "read in place: {mapped:?}");
        assert_eq!(&mapped[..], &[1.0, -2.5, 3.25]);
        assert!(matches!(F32s::mapped(&f, "norm", 4), Err(Error::Mismatch { .. })));
        let sums = f.i32s("w.col_sums", &[33]).unwrap();
        let q = f.packed("w", 70, 33, sums).unwrap();
        assert_eq!(q.as_bytes(), p.as_bytes());
        assert_eq!(q.col_sums(), p.col_sums());
        assert!(f.entries().all(|e| e.offset % ALIGN == 0));
        assert!(matches!(f.packed("w", 70, 34, vec![0; 34]), Err(Error::Mismatch { .. })));
        assert!(matches!(f.f32s("nope", &[1]), Err(Error::Missing { .. })));
        // No temporary file is left behind.
        let names: Vec<_> = std::fs::read_dir(dir.path()).unwrap().map(|e| e.unwrap().file_name()).collect();
        assert_eq!(names, vec![std::ffi::OsString::from("m.reseam")]);
    }

    #[test]
    fn a_flipped_bit_in_any_blob_fails_the_checksum() {
        let dir = tempfile::tempdir().unwrap();
        let (path, _) = sample(dir.path());
        let full = std::fs::read(&path).unwrap();
        let f = PackFile::open(&path).unwrap();
        let blobs: Vec<Entry> = f.entries().cloned().collect();
        drop(f);
        let cut = dir.path().join("flip.reseam");
        for e in blobs {
            for at in [e.offset, e.offset + e.len / 2, e.offset + e.len - 1] {
                let mut bytes = full.clone();
                bytes[at as usize] ^= 0x04;
                std::fs::write(&cut, &bytes).unwrap();
                let err = PackFile::open(&cut).unwrap_err().to_string();
                assert!(err.contains("checksum") && err.contains(&e.name), "{}@{at}: {err}", e.name);
            }
        }
    }

    #[test]
    fn wrong_length_blob_is_refused() {
        let dir = tempfile::tempdir().unwrap();
        let mut w = Writer::create(&dir.path().join("x.reseam")).unwrap();
        assert!(w.add("a", Dtype::F32, &[2], &[0u8; 7]).is_err());
    }

    #[test]
    fn truncated_and_random_files_are_errors_not_panics() {
        let dir = tempfile::tempdir().unwrap();
        let (path, _) = sample(dir.path());
        let full = std::fs::read(&path).unwrap();
        let cut = dir.path().join("cut.reseam");
        for len in [0, 7, 63, 64, 100, full.len() / 2, full.len() - 1] {
            std::fs::write(&cut, &full[..len]).unwrap();
            assert!(matches!(PackFile::open(&cut), Err(Error::Format { .. })), "length {len}");
        }
        let mut seed = 0x9e3779b97f4a7c15u64;
        for round in 0..200 {
            let mut bytes = full.clone();
            for _ in 0..1 + round % 8 {
                seed = seed.wrapping_mul(6364136223846793005).wrapping_add(1442695040888963407);
                let at = (seed >> 33) as usize % bytes.len();
                bytes[at] ^= (seed >> 8) as u8 | 1;
            }
            std::fs::write(&cut, &bytes).unwrap();
            // Any outcome but a panic is fine for the table; flipped blob bytes fail the checksum.
            if let Ok(f) = PackFile::open(&cut) {
                let _ = f.f32s("norm", &[3]);
                let _ = f.i32s("w.col_sums", &[33]).and_then(|s| f.packed("w", 70, 33, s));
            }
        }
        let mut noise = vec![0u8; 4096];
        noise[..8].copy_from_slice(&MAGIC);
        noise[8] = 1;
        std::fs::write(&cut, &noise).unwrap();
        assert!(PackFile::open(&cut).is_err());
    }
}
