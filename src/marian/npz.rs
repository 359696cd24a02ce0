//! Marian's other model container: a numpy `.npz` (a zip of `.npy` arrays, stored or deflated),
//! read from bytes into the same items as the `.bin` reader.
//!
//! Only what Marian writes and reads is accepted: little-endian float32 arrays, one-byte arrays
//! (the `special:model.yml` text), C order. 1-D arrays become `[1, n]`, as Marian's loader does.

use std::borrow::Cow;
use std::io::Read;

use super::binary::{FormatError, Item, ItemType};

fn err<T>(msg: impl Into<String>) -> Result<T, FormatError> {
    Err(FormatError(msg.into()))
}

fn u16_at(b: &[u8], at: usize) -> Result<u16, FormatError> {
    b.get(at..at + 2)
        .map(|s| u16::from_le_bytes([s[0], s[1]]))
        .ok_or_else(|| FormatError("truncated zip record".into()))
}

fn u32_at(b: &[u8], at: usize) -> Result<u32, FormatError> {
    b.get(at..at + 4)
        .map(|s| u32::from_le_bytes([s[0], s[1], s[2], s[3]]))
        .ok_or_else(|| FormatError("truncated zip record".into()))
}

fn u64_at(b: &[u8], at: usize) -> Result<u64, FormatError> {
    b.get(at..at + 8)
        .map(|s| u64::from_le_bytes(s.try_into().unwrap_or([0; 8])))
        .ok_or_else(|| FormatError("truncated zip record".into()))
}

/// One member of the zip archive.
struct Entry {
    name: String,
    method: u16,
    compressed: u64,
    uncompressed: u64,
    local_offset: u64,
}

/// Whether the bytes look like a zip archive (an `.npz`).
pub fn is_npz(bytes: &[u8]) -> bool {
    bytes.starts_with(b"PK\x03\x04")
}

fn entries(b: &[u8]) -> Result<Vec<Entry>, FormatError> {
    // The end-of-central-directory record is in the last 64 KiB + 22 bytes.
    let lo = b.len().saturating_sub(65_557);
    let eocd = (lo..b.len().saturating_sub(21))
        .rev()
        .find(|&i| b[i..i + 4] == [0x50, 0x4b, 0x05, 0x06])
        .ok_or_else(|| FormatError("not a zip archive: no end-of-central-directory record (truncated .npz?)".into()))?;
    let count = u16_at(b, eocd + 10)? as usize;
    let mut cd = u32_at(b, eocd + 16)? as usize;
    let mut out = Vec::with_capacity(count.min(4096));
    for _ in 0..count {
        if u32_at(b, cd)? != 0x0201_4b50 {
            return err("corrupt zip central directory");
        }
        let method = u16_at(b, cd + 10)?;
        let mut compressed = u32_at(b, cd + 20)? as u64;
        let mut uncompressed = u32_at(b, cd + 24)? as u64;
        let name_len = u16_at(b, cd + 28)? as usize;
        let extra_len = u16_at(b, cd + 30)? as usize;
        let comment_len = u16_at(b, cd + 32)? as usize;
        let mut local_offset = u32_at(b, cd + 42)? as u64;
        let name_bytes =
            b.get(cd + 46..cd + 46 + name_len).ok_or_else(|| FormatError("truncated zip entry name".into()))?;
        let name =
            String::from_utf8(name_bytes.to_vec()).map_err(|_| FormatError("zip entry name is not UTF-8".into()))?;
        // Zip64: the real sizes live in extra field 0x0001, in this order, when the 32-bit ones
        // are saturated.
        let extra = b.get(cd + 46 + name_len..cd + 46 + name_len + extra_len).unwrap_or(&[]);
        let mut e = 0;
        while e + 4 <= extra.len() {
            let id = u16_at(extra, e)?;
            let len = u16_at(extra, e + 2)? as usize;
            if id == 1 {
                let mut p = e + 4;
                for field in [&mut uncompressed, &mut compressed, &mut local_offset] {
                    if *field == 0xffff_ffff && p + 8 <= e + 4 + len {
                        *field = u64_at(extra, p)?;
                        p += 8;
                    }
                }
            }
            e += 4 + len;
        }
        out.push(Entry { name, method, compressed, uncompressed, local_offset });
        cd += 46 + name_len + extra_len + comment_len;
    }
    Ok(out)
}

fn member<'a>(b: &'a [u8], e: &Entry) -> Result<Cow<'a, [u8]>, FormatError> {
    let at = usize::try_from(e.local_offset).map_err(|_| FormatError("zip offset overflows".into()))?;
    if u32_at(b, at)? != 0x0403_4b50 {
        return err(format!("zip member {}: bad local header", e.name));
    }
    let start = at + 30 + u16_at(b, at + 26)? as usize + u16_at(b, at + 28)? as usize;
    let len = usize::try_from(e.compressed).map_err(|_| FormatError("zip size overflows".into()))?;
    let data = start
        .checked_add(len)
        .and_then(|end| b.get(start..end))
        .ok_or_else(|| FormatError(format!("zip member {} is truncated", e.name)))?;
    match e.method {
        0 => Ok(Cow::Borrowed(data)),
        8 => {
            // Never inflate beyond what the directory promises (a zip bomb stays small).
            let cap = e.uncompressed.min(1 << 34);
            let mut out = Vec::with_capacity(cap.min(1 << 28) as usize);
            flate2::read::DeflateDecoder::new(data)
                .take(cap)
                .read_to_end(&mut out)
                .map_err(|io| FormatError(format!("zip member {}: {io}", e.name)))?;
            Ok(Cow::Owned(out))
        }
        m => err(format!("zip member {} uses compression method {m}; only stored and deflate are supported", e.name)),
    }
}

/// Parses one `.npy` array: its element type, shape and data.
fn npy<'a>(name: &str, b: Cow<'a, [u8]>) -> Result<Item<'a>, FormatError> {
    let bad = |m: &str| FormatError(format!("array {name}: {m}"));
    if !b.starts_with(b"\x93NUMPY") || b.len() < 10 {
        return Err(bad("not a .npy array"));
    }
    let (hlen, hstart) = match b[6] {
        1 => (u16_at(&b, 8)? as usize, 10),
        2 | 3 => (u32_at(&b, 8)? as usize, 12),
        v => return Err(bad(&format!(".npy version {v}"))),
    };
    let header = b.get(hstart..hstart + hlen).ok_or_else(|| bad("truncated header"))?;
    let header = std::str::from_utf8(header).map_err(|_| bad("header is not text"))?;
    let field = |key: &str| -> Option<&str> {
        let at = header.find(&format!("'{key}'"))?;
        Some(header[at + key.len() + 2..].trim_start().strip_prefix(':')?.trim_start())
    };
    let descr = field("descr").and_then(|s| s.strip_prefix('\'')).and_then(|s| s.split('\'').next());
    let ty = match descr {
        Some("<f4") => ItemType::Float32,
        Some("|i1" | "<i1" | "|u1" | "<u1" | "|S1" | "|b1") => ItemType::Int8,
        Some(d) => return Err(bad(&format!("element type {d} (only float32 and bytes)"))),
        None => return Err(bad("header has no descr")),
    };
    if field("fortran_order").is_some_and(|s| s.starts_with("True")) {
        return Err(bad("Fortran order is not supported"));
    }
    let shape_text = field("shape").and_then(|s| s.strip_prefix('(')).and_then(|s| s.split(')').next());
    let shape_text = shape_text.ok_or_else(|| bad("header has no shape"))?;
    let mut shape = Vec::new();
    for part in shape_text.split(',').map(str::trim).filter(|p| !p.is_empty()) {
        shape.push(part.parse::<usize>().map_err(|_| bad(&format!("shape entry {part:?}")))?);
    }
    if shape.len() == 1 && ty == ItemType::Float32 {
        shape.insert(0, 1);
    }
    let elements = shape.iter().try_fold(1usize, |a, &d| a.checked_mul(d)).ok_or_else(|| bad("shape overflows"))?;
    let need = ty.bytes_for(elements).ok_or_else(|| bad("shape overflows"))?;
    let start = hstart + hlen;
    if b.len() < start + need {
        return Err(bad(&format!("needs {need} bytes of data, has {}", b.len().saturating_sub(start))));
    }
    let data = match b {
        Cow::Borrowed(s) => Cow::Borrowed(&s[start..start + need]),
        Cow::Owned(v) => Cow::Owned(v[start..start + need].to_vec()),
    };
    Ok(Item { name: name.to_string(), ty, shape, data })
}

fn npy_bytes(item: &Item) -> Vec<u8> {
    let descr = match item.ty {
        ItemType::Float32 => "<f4",
        _ => "|i1",
    };
    let dims: Vec<String> = item.shape.iter().map(|d| d.to_string()).collect();
    let shape = if dims.len() == 1 { format!("({},)", dims[0]) } else { format!("({})", dims.join(", ")) };
    let mut h = format!("{{'descr': '{descr}', 'fortran_order': False, 'shape': {shape}, }}");
    while (10 + h.len() + 1) % 64 != 0 {
        h.push(' ');
    }
    h.push('\n');
    let mut out = b"\x93NUMPY\x01\x00".to_vec();
    out.extend_from_slice(&(h.len() as u16).to_le_bytes());
    out.extend_from_slice(h.as_bytes());
    let n = item.ty.bytes_for(item.elements()).unwrap_or(0).min(item.data.len());
    out.extend_from_slice(&item.data[..n]);
    out
}

/// Writes items as an uncompressed `.npz` (what numpy's `savez` and Marian write). Used by tests
/// and conversions; intgemm8 items cannot be stored in an `.npz`.
pub fn write(items: &[Item]) -> Vec<u8> {
    let mut out = Vec::new();
    let mut central = Vec::new();
    for item in items {
        let name = format!("{}.npy", item.name);
        let data = npy_bytes(item);
        let crc = crc32(&data);
        let off = out.len() as u32;
        out.extend_from_slice(&0x0403_4b50u32.to_le_bytes());
        out.extend_from_slice(&[20, 0, 0, 0, 0, 0, 0, 0, 0, 0]);
        out.extend_from_slice(&crc.to_le_bytes());
        out.extend_from_slice(&(data.len() as u32).to_le_bytes());
        out.extend_from_slice(&(data.len() as u32).to_le_bytes());
        out.extend_from_slice(&(name.len() as u16).to_le_bytes());
        out.extend_from_slice(&0u16.to_le_bytes());
        out.extend_from_slice(name.as_bytes());
        out.extend_from_slice(&data);
        central.extend_from_slice(&0x0201_4b50u32.to_le_bytes());
        central.extend_from_slice(&[20, 0, 20, 0, 0, 0, 0, 0, 0, 0, 0, 0]);
        central.extend_from_slice(&crc.to_le_bytes());
        central.extend_from_slice(&(data.len() as u32).to_le_bytes());
        central.extend_from_slice(&(data.len() as u32).to_le_bytes());
        central.extend_from_slice(&(name.len() as u16).to_le_bytes());
        central.extend_from_slice(&[0; 12]);
        central.extend_from_slice(&off.to_le_bytes());
        central.extend_from_slice(name.as_bytes());
    }
    let cd_off = out.len() as u32;
    out.extend_from_slice(&central);
    out.extend_from_slice(&0x0605_4b50u32.to_le_bytes());
    out.extend_from_slice(&[0, 0, 0, 0]);
    out.extend_from_slice(&(items.len() as u16).to_le_bytes());
    out.extend_from_slice(&(items.len() as u16).to_le_bytes());
    out.extend_from_slice(&(central.len() as u32).to_le_bytes());
    out.extend_from_slice(&cd_off.to_le_bytes());
    out.extend_from_slice(&[0, 0]);
    out
}

/// The zip CRC-32 (numpy checks it when it reads an archive).
fn crc32(data: &[u8]) -> u32 {
    let mut crc = !0u32;
    for &b in data {
        crc ^= b as u32;
        for _ in 0..8 {
            crc = if crc & 1 != 0 { (crc >> 1) ^ 0xEDB8_8320 } else { crc >> 1 };
        }
    }
    !crc
}

/// Reads every array of an `.npz` model.
pub fn parse(bytes: &[u8]) -> Result<Vec<Item<'_>>, FormatError> {
    let mut items = Vec::new();
    for e in entries(bytes)? {
        let name = e.name.strip_suffix(".npy").unwrap_or(&e.name).to_string();
        let data = member(bytes, &e)?;
        items.push(npy(&name, data)?);
    }
    if items.is_empty() {
        return err("the .npz archive holds no arrays");
    }
    Ok(items)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn f32_item(name: &str, shape: &[usize], values: &[f32]) -> Item<'static> {
        Item {
            name: name.into(),
            ty: ItemType::Float32,
            shape: shape.to_vec(),
            data: Cow::Owned(values.iter().flat_map(|v| v.to_le_bytes()).collect()),
        }
    }

    #[test]
    fn crc_of_the_zip_spec_example() {
        assert_eq!(crc32(b"123456789"), 0xCBF4_3926);
    }

    #[test]
    fn reads_stored_arrays() {
        let z = write(&[f32_item("a", &[2, 2], &[1.0, 2.0, 3.0, 4.0]), f32_item("b", &[3], &[5.0, 6.0, 7.0])]);
        assert!(is_npz(&z));
        let items = parse(&z).unwrap();
        assert_eq!(items[0].name, "a");
        assert_eq!(items[0].f32s().unwrap(), vec![1.0, 2.0, 3.0, 4.0]);
        assert_eq!(items[1].shape, vec![1, 3]);
    }

    #[test]
    fn truncations_and_noise_are_errors() {
        let z = write(&[f32_item("a", &[2, 2], &[1.0, 2.0, 3.0, 4.0])]);
        for cut in 0..z.len() {
            assert!(parse(&z[..cut]).is_err(), "cut {cut}");
        }
        let mut seed = 12345u64;
        for _ in 0..300 {
            let mut bad = z.clone();
            for _ in 0..4 {
                seed = seed.wrapping_mul(6364136223846793005).wrapping_add(1442695040888963407);
                let at = (seed >> 33) as usize % bad.len();
                bad[at] = (seed >> 17) as u8;
            }
            let _ = parse(&bad);
        }
    }
}
