//! A Hugging Face checkpoint folder's weights: `model.safetensors`, or shards listed by
//! `model.safetensors.index.json`, memory-mapped; tensors read as f32, bf16 or f16.

use std::collections::HashMap;
use std::fs::File;
use std::path::{Path, PathBuf};
use std::sync::Arc;

use half::{bf16, f16};
use memmap2::Mmap;

use super::{Error, Result};

/// Element types reseam reads from checkpoints.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum DType {
    F32,
    BF16,
    F16,
}

impl DType {
    pub fn size(self) -> usize {
        match self {
            DType::F32 => 4,
            DType::BF16 | DType::F16 => 2,
        }
    }

    pub fn name(self) -> &'static str {
        match self {
            DType::F32 => "float32",
            DType::BF16 => "bfloat16",
            DType::F16 => "float16",
        }
    }
}

/// Converts little-endian elements of `dtype` to f32 (exact for all three types).
pub fn to_f32(bytes: &[u8], dtype: DType, out: &mut [f32]) {
    match dtype {
        DType::F32 => {
            for (o, c) in out.iter_mut().zip(bytes.chunks_exact(4)) {
                *o = f32::from_le_bytes([c[0], c[1], c[2], c[3]]);
            }
        }
        DType::BF16 => {
            for (o, c) in out.iter_mut().zip(bytes.chunks_exact(2)) {
                *o = bf16::from_bits(u16::from_le_bytes([c[0], c[1]])).to_f32();
            }
        }
        DType::F16 => {
            for (o, c) in out.iter_mut().zip(bytes.chunks_exact(2)) {
                *o = f16::from_bits(u16::from_le_bytes([c[0], c[1]])).to_f32();
            }
        }
    }
}

/// Bytes shared with whoever needs them beyond the checkpoint's lifetime (the embedding table
/// reads rows straight from the map).
pub type SharedBytes = Arc<dyn AsRef<[u8]> + Send + Sync>;

struct MapOwner(Arc<Mmap>);

impl AsRef<[u8]> for MapOwner {
    fn as_ref(&self) -> &[u8] {
        &self.0[..]
    }
}

/// What identifies a weight file's contents cheaply (for the packed-weights cache).
#[derive(Clone, Debug, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub struct FileStamp {
    pub name: String,
    pub size: u64,
    pub modified_ns: i128,
}

struct WeightFile {
    path: PathBuf,
    map: Arc<Mmap>,
    stamp: FileStamp,
}

/// Where one tensor is.
#[derive(Clone, Debug)]
struct Entry {
    file: usize,
    dtype: DType,
    shape: Vec<usize>,
    start: usize,
    end: usize,
}

/// A tensor's bytes in the map.
#[derive(Clone, Copy, Debug)]
pub struct TensorRef<'a> {
    pub name: &'a str,
    pub dtype: DType,
    pub shape: &'a [usize],
    pub bytes: &'a [u8],
    pub path: &'a Path,
}

impl TensorRef<'_> {
    pub fn numel(&self) -> usize {
        self.shape.iter().product()
    }

    /// The whole tensor in f32.
    pub fn to_f32(&self) -> Vec<f32> {
        let mut out = vec![0f32; self.numel()];
        to_f32(self.bytes, self.dtype, &mut out);
        out
    }

    /// Row `i` of a 2-D tensor in f32.
    pub fn row_f32(&self, i: usize, out: &mut [f32]) {
        let cols = self.shape[1];
        let s = self.dtype.size();
        to_f32(&self.bytes[i * cols * s..(i + 1) * cols * s], self.dtype, out);
    }
}

/// The weights of a checkpoint folder.
pub struct Checkpoint {
    dir: PathBuf,
    files: Vec<WeightFile>,
    tensors: HashMap<String, Entry>,
}

impl std::fmt::Debug for Checkpoint {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Checkpoint").field("dir", &self.dir).field("tensors", &self.tensors.len()).finish()
    }
}

fn io_err(path: &Path) -> impl FnOnce(std::io::Error) -> Error + '_ {
    move |source| Error::Io { path: path.to_path_buf(), source }
}

impl Checkpoint {
    /// Maps the folder's safetensors files: the shards named by `model.safetensors.index.json`
    /// if it exists, else `model.safetensors`.
    pub fn open(dir: &Path) -> Result<Checkpoint> {
        let index = dir.join("model.safetensors.index.json");
        let single = dir.join("model.safetensors");
        let names: Vec<String> = if index.is_file() {
            let text = std::fs::read_to_string(&index).map_err(io_err(&index))?;
            let v: serde_json::Value =
                serde_json::from_str(&text).map_err(|e| Error::Json { path: index.clone(), source: e })?;
            let map = v.get("weight_map").and_then(|m| m.as_object()).ok_or_else(|| Error::Field {
                path: index.clone(),
                field: "weight_map".into(),
                msg: "missing or not an object".into(),
            })?;
            let mut names: Vec<String> = Vec::new();
            for (tensor, file) in map {
                let file = file.as_str().ok_or_else(|| Error::Field {
                    path: index.clone(),
                    field: format!("weight_map.{tensor}"),
                    msg: "not a file name".into(),
                })?;
                // Shard names come from a downloaded file: never let them leave the folder.
                if file.contains(['/', '\\']) || file == ".." {
                    return Err(Error::Field {
                        path: index.clone(),
                        field: format!("weight_map.{tensor}"),
                        msg: format!("{file:?} is not a file in the checkpoint folder"),
                    });
                }
                if !names.iter().any(|n| n == file) {
                    names.push(file.to_string());
                }
            }
            names.sort();
            names
        } else if single.is_file() {
            vec!["model.safetensors".into()]
        } else {
            return Err(Error::NoWeights { dir: dir.to_path_buf() });
        };

        let mut files = Vec::new();
        let mut tensors = HashMap::new();
        for name in names {
            let path = dir.join(&name);
            let file = File::open(&path).map_err(io_err(&path))?;
            let meta = file.metadata().map_err(io_err(&path))?;
            let modified_ns = meta
                .modified()
                .ok()
                .and_then(|t| t.duration_since(std::time::UNIX_EPOCH).ok())
                .map_or(0, |d| d.as_nanos() as i128);
            // SAFETY: read-only map of a model file. Hugging Face tools replace files by
            // writing new ones; if another program truncates the file while reseam runs,
            // reads may fault, as with any memory-mapped model (the same contract as
            // safetensors' own mmap loaders).
            let map = unsafe { Mmap::map(&file) }.map_err(io_err(&path))?;
            let (n, metadata) = safetensors::SafeTensors::read_metadata(&map[..])
                .map_err(|e| Error::Safetensors { path: path.clone(), msg: e.to_string() })?;
            let data_start = 8 + n;
            for (tname, info) in metadata.tensors() {
                let dtype = match info.dtype {
                    safetensors::Dtype::F32 => DType::F32,
                    safetensors::Dtype::BF16 => DType::BF16,
                    safetensors::Dtype::F16 => DType::F16,
                    other => {
                        return Err(Error::Safetensors {
                            path: path.clone(),
                            msg: format!("tensor {tname} has dtype {other:?}; reseam reads F32, BF16 and F16"),
                        });
                    }
                };
                let (a, b) = info.data_offsets;
                tensors.insert(
                    tname,
                    Entry {
                        file: files.len(),
                        dtype,
                        shape: info.shape.clone(),
                        start: data_start + a,
                        end: data_start + b,
                    },
                );
            }
            files.push(WeightFile {
                path,
                map: Arc::new(map),
                stamp: FileStamp { name, size: meta.len(), modified_ns },
            });
        }
        Ok(Checkpoint { dir: dir.to_path_buf(), files, tensors })
    }

    pub fn dir(&self) -> &Path {
        &self.dir
    }

    /// Size and modification time of every weight file, in file-name order.
    pub fn stamps(&self) -> Vec<FileStamp> {
        self.files.iter().map(|f| f.stamp.clone()).collect()
    }

    pub fn contains(&self, name: &str) -> bool {
        self.tensors.contains_key(name)
    }

    pub fn names(&self) -> impl Iterator<Item = &str> {
        self.tensors.keys().map(|s| s.as_str())
    }

    /// A tensor that must exist with exactly this shape.
    pub fn tensor(&self, name: &str, shape: &[usize]) -> Result<TensorRef<'_>> {
        let (key, e) = self
            .tensors
            .get_key_value(name)
            .ok_or_else(|| Error::MissingTensor { dir: self.dir.clone(), name: name.into() })?;
        let file = &self.files[e.file];
        if e.shape != shape {
            return Err(Error::TensorShape {
                path: file.path.clone(),
                name: name.into(),
                got: e.shape.clone(),
                want: shape.to_vec(),
            });
        }
        Ok(TensorRef { name: key, dtype: e.dtype, shape: &e.shape, bytes: &file.map[e.start..e.end], path: &file.path })
    }

    /// The bytes of a tensor as a shareable owner plus the range inside it (no copy).
    pub fn shared(&self, name: &str) -> Option<(SharedBytes, usize, usize)> {
        let e = self.tensors.get(name)?;
        Some((Arc::new(MapOwner(self.files[e.file].map.clone())), e.start, e.end))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn conversions_are_exact() {
        let mut out = [0f32; 2];
        to_f32(&[0x80, 0x3f, 0x00, 0xc0], DType::BF16, &mut out);
        assert_eq!(out, [1.0, -2.0]);
        to_f32(&[0x00, 0x3c, 0x00, 0x38], DType::F16, &mut out);
        assert_eq!(out, [1.0, 0.5]);
        to_f32(&1.25f32.to_le_bytes(), DType::F32, &mut out[..1]);
        assert_eq!(out[0], 1.25);
    }

    #[test]
    fn sharded_checkpoint_is_read_through_its_index() {
        let dir = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/llm/mistral-tiny");
        let c = Checkpoint::open(&dir).unwrap();
        assert_eq!(c.stamps().len(), 2);
        let t = c.tensor("lm_head.weight", &[32000, 64]).unwrap();
        assert_eq!(t.dtype, DType::F32);
        assert!(matches!(c.tensor("lm_head.weight", &[64, 32000]), Err(Error::TensorShape { .. })));
        assert!(matches!(c.tensor("nope", &[1]), Err(Error::MissingTensor { .. })));
    }

    #[test]
    fn broken_files_are_named_errors() {
        let dir = tempfile::tempdir().unwrap();
        assert!(matches!(Checkpoint::open(dir.path()), Err(Error::NoWeights { .. })));
        let src =
            std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/llm/qwen2-tiny/model.safetensors");
        let full = std::fs::read(src).unwrap();
        for len in [0, 5, 8, 100, full.len() / 2, full.len() - 1] {
            std::fs::write(dir.path().join("model.safetensors"), &full[..len]).unwrap();
            let e = Checkpoint::open(dir.path()).unwrap_err();
            assert!(e.to_string().contains("model.safetensors"), "{e}");
        }
        std::fs::write(dir.path().join("model.safetensors.index.json"), r#"{"weight_map": {"a": "../x"}}"#).unwrap();
        assert!(matches!(Checkpoint::open(dir.path()), Err(Error::Field { .. })));
    }
}
