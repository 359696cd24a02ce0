//! Marian's binary model container (`model.*.bin`), read from bytes.
//!
//! Layout (little-endian; marian-dev `common/binary.cpp`): `u64 version = 1`, `u64 n`, `n` headers
//! of four `u64` (name length with its NUL, type code, shape length, data length), the names, the
//! shapes (`i32` each), `u64 pad` and `pad` bytes, then the data blocks back to back. Every count is
//! checked against the bytes that are really there before anything is sliced, so a truncated or
//! corrupted file is an error, never a panic or a huge allocation.

use std::borrow::Cow;

/// Type codes (marian-dev `common/types.h`: type class + element size).
pub const TYPE_INT8: u64 = 0x0101;
pub const TYPE_FLOAT32: u64 = 0x0404;
/// browsermt's `intgemm8`: int8 weights (transposed unless the name contains `Wemb`) followed by
/// their float32 quantization multiplier.
pub const TYPE_INTGEMM8: u64 = 0x4101;

/// What a reader found wrong. The caller adds the file name.
#[derive(Debug, thiserror::Error, PartialEq, Eq)]
#[error("{0}")]
pub struct FormatError(pub String);

crate::error::fault!(FormatError);

impl FormatError {
    /// A damaged model file, never the caller's fault.
    pub fn is_usage(&self) -> bool {
        false
    }
}

fn err<T>(msg: impl Into<String>) -> Result<T, FormatError> {
    Err(FormatError(msg.into()))
}

/// The element types reseam understands.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ItemType {
    Float32,
    Int8,
    Intgemm8,
}

impl ItemType {
    pub fn from_code(code: u64) -> Option<ItemType> {
        match code {
            TYPE_FLOAT32 => Some(ItemType::Float32),
            TYPE_INT8 => Some(ItemType::Int8),
            TYPE_INTGEMM8 => Some(ItemType::Intgemm8),
            _ => None,
        }
    }

    pub fn code(self) -> u64 {
        match self {
            ItemType::Float32 => TYPE_FLOAT32,
            ItemType::Int8 => TYPE_INT8,
            ItemType::Intgemm8 => TYPE_INTGEMM8,
        }
    }

    /// Bytes the data of `elements` values needs (intgemm8 carries its float multiplier).
    pub fn bytes_for(self, elements: usize) -> Option<usize> {
        match self {
            ItemType::Float32 => elements.checked_mul(4),
            ItemType::Int8 => Some(elements),
            ItemType::Intgemm8 => elements.checked_add(4),
        }
    }
}

/// One named tensor of a model file. `data` holds at least the bytes its type and shape need.
#[derive(Clone, Debug)]
pub struct Item<'a> {
    pub name: String,
    pub ty: ItemType,
    pub shape: Vec<usize>,
    pub data: Cow<'a, [u8]>,
}

impl Item<'_> {
    pub fn elements(&self) -> usize {
        self.shape.iter().product()
    }

    /// `[rows, cols]` of a matrix: the last dimension and the product of the others.
    pub fn rows_cols(&self) -> (usize, usize) {
        let cols = self.shape.last().copied().unwrap_or(1);
        let rows = self.elements().checked_div(cols).unwrap_or(0);
        (rows, cols)
    }

    /// The values of a float32 item.
    pub fn f32s(&self) -> Result<Vec<f32>, FormatError> {
        if self.ty != ItemType::Float32 {
            return err(format!("item {} is {:?}, expected float32", self.name, self.ty));
        }
        Ok(self.data[..self.elements() * 4]
            .chunks_exact(4)
            .map(|c| f32::from_le_bytes([c[0], c[1], c[2], c[3]]))
            .collect())
    }

    /// The int8 values and the multiplier of an intgemm8 item.
    pub fn intgemm8(&self) -> Result<(&[u8], f32), FormatError> {
        if self.ty != ItemType::Intgemm8 {
            return err(format!("item {} is {:?}, expected intgemm8", self.name, self.ty));
        }
        let n = self.elements();
        let q = &self.data[n..n + 4];
        Ok((&self.data[..n], f32::from_le_bytes([q[0], q[1], q[2], q[3]])))
    }
}

/// A little-endian cursor that fails instead of reading past the end.
struct Cursor<'a> {
    bytes: &'a [u8],
    pos: usize,
}

impl<'a> Cursor<'a> {
    fn take(&mut self, n: usize, what: &str) -> Result<&'a [u8], FormatError> {
        let end = self.pos.checked_add(n).filter(|&e| e <= self.bytes.len());
        match end {
            Some(end) => {
                let s = &self.bytes[self.pos..end];
                self.pos = end;
                Ok(s)
            }
            None => err(format!(
                "truncated: {what} needs {n} bytes at offset {}, the file has {}",
                self.pos,
                self.bytes.len()
            )),
        }
    }

    fn u64(&mut self, what: &str) -> Result<u64, FormatError> {
        let b = self.take(8, what)?;
        Ok(u64::from_le_bytes(b.try_into().map_err(|_| FormatError(format!("{what}: short read")))?))
    }
}

/// Reads every item of a Marian `.bin` file.
pub fn parse(bytes: &[u8]) -> Result<Vec<Item<'_>>, FormatError> {
    let mut c = Cursor { bytes, pos: 0 };
    let version = c.u64("the version")?;
    if version != 1 {
        return err(format!("binary format version {version}, only version 1 exists (is this a Marian .bin model?)"));
    }
    let n = c.u64("the item count")?;
    // Each item needs at least a 32-byte header: a count beyond that is corruption, not a reason
    // to allocate.
    if n == 0 || n > (bytes.len() as u64) / 32 {
        return err(format!(
            "item count {n} does not fit a file of {} bytes (truncated, or not a Marian model)",
            bytes.len()
        ));
    }
    let n = n as usize;
    let mut headers = Vec::with_capacity(n);
    for i in 0..n {
        let name_len = c.u64("an item header")?;
        let ty = c.u64("an item header")?;
        let shape_len = c.u64("an item header")?;
        let data_len = c.u64("an item header")?;
        if name_len == 0 || name_len > 4096 {
            return err(format!("item {i}: name length {name_len} is not plausible"));
        }
        if shape_len > 8 {
            return err(format!("item {i}: {shape_len} dimensions"));
        }
        headers.push((name_len as usize, ty, shape_len as usize, data_len));
    }
    let mut names = Vec::with_capacity(n);
    for (i, h) in headers.iter().enumerate() {
        let raw = c.take(h.0, "an item name")?;
        let (last, body) = raw.split_last().ok_or_else(|| FormatError(format!("item {i}: empty name")))?;
        if *last != 0 || body.contains(&0) {
            return err(format!("item {i}: name is not NUL-terminated"));
        }
        let name = std::str::from_utf8(body).map_err(|_| FormatError(format!("item {i}: name is not UTF-8")))?;
        names.push(name.to_string());
    }
    let mut shapes = Vec::with_capacity(n);
    for (i, h) in headers.iter().enumerate() {
        let mut shape = Vec::with_capacity(h.2);
        for _ in 0..h.2 {
            let b = c.take(4, "a shape")?;
            let d = i32::from_le_bytes([b[0], b[1], b[2], b[3]]);
            if d < 0 {
                return err(format!("item {}: negative dimension {d}", names[i]));
            }
            shape.push(d as usize);
        }
        shapes.push(shape);
    }
    let pad = c.u64("the padding length")?;
    if pad > 4096 {
        return err(format!("padding of {pad} bytes before the data is not plausible"));
    }
    c.take(pad as usize, "the padding")?;

    let mut items = Vec::with_capacity(n);
    for (i, ((name, shape), h)) in names.into_iter().zip(shapes).zip(&headers).enumerate() {
        let data_len = usize::try_from(h.3).map_err(|_| FormatError(format!("item {name}: data length {}", h.3)))?;
        let data = c.take(data_len, &format!("the data of item {name}"))?;
        let ty = ItemType::from_code(h.1)
            .ok_or_else(|| FormatError(format!("item {name} has type code {:#x}, which reseam cannot read", h.1)))?;
        let elements = shape
            .iter()
            .try_fold(1usize, |a, &d| a.checked_mul(d))
            .ok_or_else(|| FormatError(format!("item {name}: shape {shape:?} overflows")))?;
        let need = ty.bytes_for(elements).ok_or_else(|| FormatError(format!("item {name}: size overflows")))?;
        if data.len() < need {
            return err(format!(
                "item {i} ({name}): shape {shape:?} of {ty:?} needs {need} bytes, the file gives it {}",
                data.len()
            ));
        }
        items.push(Item { name, ty, shape, data: Cow::Borrowed(data) });
    }
    Ok(items)
}

/// Writes items in Marian's layout (used to build test models and, later, converted files).
/// Data blocks are padded to multiples of 256 bytes as Marian's writer does.
pub fn write(items: &[Item]) -> Vec<u8> {
    let block = |len: usize| len.div_ceil(256) * 256;
    let mut out = Vec::new();
    out.extend_from_slice(&1u64.to_le_bytes());
    out.extend_from_slice(&(items.len() as u64).to_le_bytes());
    for it in items {
        let data_len = if it.ty == ItemType::Int8 { it.data.len() } else { block(it.data.len()) };
        for v in [it.name.len() as u64 + 1, it.ty.code(), it.shape.len() as u64, data_len as u64] {
            out.extend_from_slice(&v.to_le_bytes());
        }
    }
    for it in items {
        out.extend_from_slice(it.name.as_bytes());
        out.push(0);
    }
    for it in items {
        for &d in &it.shape {
            out.extend_from_slice(&(d as i32).to_le_bytes());
        }
    }
    // marian-dev: next = (floor((pos+8)/256)+1)*256, pad = next - pos - 8.
    let pos = out.len();
    let next = ((pos + 8) / 256 + 1) * 256;
    let pad = next - pos - 8;
    out.extend_from_slice(&(pad as u64).to_le_bytes());
    out.resize(out.len() + pad, 0);
    for it in items {
        out.extend_from_slice(&it.data);
        if it.ty != ItemType::Int8 {
            out.resize(out.len() + block(it.data.len()) - it.data.len(), 0);
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn sample() -> Vec<u8> {
        let f: Vec<u8> = [1.5f32, -2.0, 3.25].iter().flat_map(|v| v.to_le_bytes()).collect();
        let yml = b"type: transformer\n\0".to_vec();
        write(&[
            Item { name: "b".into(), ty: ItemType::Float32, shape: vec![1, 3], data: Cow::Owned(f) },
            Item {
                name: "special:model.yml".into(),
                ty: ItemType::Int8,
                shape: vec![yml.len()],
                data: Cow::Owned(yml),
            },
        ])
    }

    #[test]
    fn round_trip() {
        let bytes = sample();
        let items = parse(&bytes).unwrap();
        assert_eq!(items.len(), 2);
        assert_eq!(items[0].f32s().unwrap(), vec![1.5, -2.0, 3.25]);
        assert_eq!(items[0].rows_cols(), (1, 3));
        assert_eq!(&items[1].data[..4], b"type");
    }

    #[test]
    fn every_truncation_is_an_error() {
        let bytes = sample();
        for cut in 0..bytes.len() - 1 {
            // The yml item has no padding, so any cut inside the data block is visible.
            assert!(parse(&bytes[..cut]).is_err(), "cut at {cut}");
        }
    }

    #[test]
    fn random_bytes_are_errors_not_panics() {
        let mut seed = 0x9e3779b97f4a7c15u64;
        for len in [0usize, 7, 8, 16, 48, 100, 1000, 5000] {
            for _ in 0..50 {
                let bytes: Vec<u8> = (0..len)
                    .map(|_| {
                        seed ^= seed << 13;
                        seed ^= seed >> 7;
                        seed ^= seed << 17;
                        seed as u8
                    })
                    .collect();
                let _ = parse(&bytes);
            }
        }
        // Flipping the count or a length in a real file is caught.
        let mut bytes = sample();
        bytes[8] = 0xff;
        assert!(parse(&bytes).is_err());
        let mut bytes = sample();
        bytes[16 + 24] = 0xff; // data length of item 0
        assert!(parse(&bytes).is_err());
    }
}
