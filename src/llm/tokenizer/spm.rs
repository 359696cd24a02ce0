//! The pieces of a SentencePiece `tokenizer.model`, read from its protobuf, for decoding to
//! bytes (the `sentencepiece` crate encodes and decodes to strings but does not list pieces).
//! Only the fields needed are read: `ModelProto.pieces` (1) with `piece` (1) and `type` (3), and
//! `ModelProto.normalizer_spec` (3) `.add_dummy_prefix` (3).

/// `SentencePiece.Type`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum PieceType {
    Normal,
    Unknown,
    Control,
    UserDefined,
    Unused,
    Byte,
}

#[derive(Clone, Debug)]
pub struct Piece {
    pub text: String,
    pub kind: PieceType,
}

/// What decoding needs from the model file.
#[derive(Clone, Debug)]
pub struct SpmModel {
    pub pieces: Vec<Piece>,
    pub add_dummy_prefix: bool,
}

struct Reader<'a> {
    b: &'a [u8],
    at: usize,
}

impl<'a> Reader<'a> {
    fn varint(&mut self) -> Option<u64> {
        let mut v = 0u64;
        for shift in (0..64).step_by(7) {
            let byte = *self.b.get(self.at)?;
            self.at += 1;
            v |= ((byte & 0x7f) as u64) << shift;
            if byte & 0x80 == 0 {
                return Some(v);
            }
        }
        None
    }

    fn bytes(&mut self, n: usize) -> Option<&'a [u8]> {
        let end = self.at.checked_add(n)?;
        let s = self.b.get(self.at..end)?;
        self.at = end;
        Some(s)
    }

    /// Next (field, wire type, payload for length-delimited, value for varints).
    fn field(&mut self) -> Option<(u64, Field<'a>)> {
        let key = self.varint()?;
        let (num, wire) = (key >> 3, key & 7);
        let f = match wire {
            0 => Field::Varint(self.varint()?),
            1 => Field::Skip(self.bytes(8)?),
            2 => {
                let n = usize::try_from(self.varint()?).ok()?;
                Field::Bytes(self.bytes(n)?)
            }
            5 => Field::Skip(self.bytes(4)?),
            _ => return None,
        };
        Some((num, f))
    }

    fn done(&self) -> bool {
        self.at >= self.b.len()
    }
}

enum Field<'a> {
    Varint(u64),
    Bytes(&'a [u8]),
    Skip(#[allow(dead_code)] &'a [u8]),
}

fn piece(b: &[u8]) -> Option<Piece> {
    let mut r = Reader { b, at: 0 };
    let (mut text, mut kind) = (String::new(), PieceType::Normal);
    while !r.done() {
        match r.field()? {
            (1, Field::Bytes(s)) => text = String::from_utf8(s.to_vec()).ok()?,
            (3, Field::Varint(t)) => {
                kind = match t {
                    1 => PieceType::Normal,
                    2 => PieceType::Unknown,
                    3 => PieceType::Control,
                    4 => PieceType::UserDefined,
                    5 => PieceType::Unused,
                    6 => PieceType::Byte,
                    _ => return None,
                }
            }
            _ => {}
        }
    }
    Some(Piece { text, kind })
}

impl SpmModel {
    /// Parses a model file; `None` if it is not a SentencePiece model.
    pub fn parse(b: &[u8]) -> Option<SpmModel> {
        let mut r = Reader { b, at: 0 };
        let mut pieces = Vec::new();
        let mut add_dummy_prefix = true;
        while !r.done() {
            match r.field()? {
                (1, Field::Bytes(p)) => pieces.push(piece(p)?),
                (3, Field::Bytes(n)) => {
                    let mut nr = Reader { b: n, at: 0 };
                    while !nr.done() {
                        if let (3, Field::Varint(v)) = nr.field()? {
                            add_dummy_prefix = v != 0;
                        }
                    }
                }
                _ => {}
            }
        }
        if pieces.is_empty() { None } else { Some(SpmModel { pieces, add_dummy_prefix }) }
    }

    /// The bytes a piece stands for inside a text (`▁` → space, `<0xNN>` → that byte). Control
    /// pieces stand for nothing unless `keep_control` (then their own text, as Transformers
    /// prints special tokens); the unknown piece for SentencePiece's ` ⁇ `.
    pub fn piece_bytes(&self, id: usize, keep_control: bool) -> Vec<u8> {
        let Some(p) = self.pieces.get(id) else { return Vec::new() };
        match p.kind {
            PieceType::Control => {
                if keep_control {
                    p.text.as_bytes().to_vec()
                } else {
                    Vec::new()
                }
            }
            PieceType::Unknown => " \u{2047} ".as_bytes().to_vec(),
            PieceType::Byte => {
                let h = p.text.trim_start_matches("<0x").trim_end_matches('>');
                u8::from_str_radix(h, 16).map(|b| vec![b]).unwrap_or_default()
            }
            _ => p.text.replace('\u{2581}', " ").into_bytes(),
        }
    }
}

fn put_varint(out: &mut Vec<u8>, mut v: u64) {
    while v >= 0x80 {
        out.push((v as u8) | 0x80);
        v >>= 7;
    }
    out.push(v as u8);
}

/// The model file with the normalizer's `add_dummy_prefix` (3) and `remove_extra_whitespaces`
/// (4) switched off: encoding a piece of running text then gives pieces that spell exactly that
/// text, with no `▁` added in front and spaces kept. `None` if the file cannot be read as a
/// model.
pub fn for_continuations(b: &[u8]) -> Option<Vec<u8>> {
    let mut r = Reader { b, at: 0 };
    let mut out = Vec::with_capacity(b.len() + 8);
    let mut seen_normalizer = false;
    while !r.done() {
        let start = r.at;
        let (num, f) = r.field()?;
        match (num, f) {
            (3, Field::Bytes(n)) => {
                seen_normalizer = true;
                let mut spec = Vec::with_capacity(n.len() + 4);
                let mut nr = Reader { b: n, at: 0 };
                while !nr.done() {
                    let s = nr.at;
                    let (sub, _) = nr.field()?;
                    if sub != 3 && sub != 4 {
                        spec.extend_from_slice(&n[s..nr.at]);
                    }
                }
                spec.extend_from_slice(&[3 << 3, 0, 4 << 3, 0]);
                put_varint(&mut out, (3 << 3) | 2);
                put_varint(&mut out, spec.len() as u64);
                out.extend_from_slice(&spec);
            }
            _ => out.extend_from_slice(&b[start..r.at]),
        }
    }
    if !seen_normalizer {
        out.extend_from_slice(&[(3 << 3) | 2, 4, 3 << 3, 0, 4 << 3, 0]);
    }
    Some(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn mistral_model_pieces() {
        let path =
            std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/llm/mistral-tiny/tokenizer.model");
        let m = SpmModel::parse(&std::fs::read(path).unwrap()).unwrap();
        assert_eq!(m.pieces.len(), 32000);
        assert_eq!(m.pieces[1].text, "<s>");
        assert_eq!(m.pieces[1].kind, PieceType::Control);
        assert_eq!(m.pieces[0].kind, PieceType::Unknown);
        assert_eq!(m.piece_bytes(3, false), vec![0]); // <0x00>
        assert_eq!(m.piece_bytes(28705, false), b" "); // ▁
        assert!(m.add_dummy_prefix);
    }

    #[test]
    fn continuation_model_keeps_everything_but_the_prefix_rules() {
        let path =
            std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/llm/mistral-tiny/tokenizer.model");
        let raw = std::fs::read(path).unwrap();
        let cont = for_continuations(&raw).unwrap();
        let m = SpmModel::parse(&cont).unwrap();
        assert!(!m.add_dummy_prefix);
        assert_eq!(m.pieces.len(), 32000);
        assert!(SpmModel::parse(&raw).unwrap().add_dummy_prefix, "the original is untouched");
    }

    #[test]
    fn garbage_is_refused_without_panicking() {
        assert!(SpmModel::parse(b"").is_none());
        let mut seed = 1u64;
        for len in 0..300 {
            let b: Vec<u8> = (0..len)
                .map(|_| {
                    seed = seed.wrapping_mul(6364136223846793005).wrapping_add(1);
                    (seed >> 56) as u8
                })
                .collect();
            let _ = SpmModel::parse(&b);
            let _ = for_continuations(&b);
        }
    }
}
