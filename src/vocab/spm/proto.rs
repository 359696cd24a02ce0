//! The fields of a serialized SentencePiece `ModelProto` (sentencepiece_model.proto) that
//! encoding and decoding read; every other field is skipped. A hand reader of protobuf's wire
//! format: five messages, a dozen fields, no code generation or build script.

use super::SpmError;

/// `ModelProto.SentencePiece.Type`.
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
    pub score: f32,
    pub kind: PieceType,
}

/// `TrainerSpec.ModelType`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ModelType {
    Unigram,
    Bpe,
    Word,
    Char,
}

/// `NormalizerSpec`, with the proto's defaults.
#[derive(Clone, Debug)]
pub struct NormalizerSpec {
    pub precompiled_charsmap: Vec<u8>,
    pub add_dummy_prefix: bool,
    pub remove_extra_whitespaces: bool,
    pub escape_whitespaces: bool,
}

impl Default for NormalizerSpec {
    fn default() -> Self {
        NormalizerSpec {
            precompiled_charsmap: Vec::new(),
            add_dummy_prefix: true,
            remove_extra_whitespaces: true,
            escape_whitespaces: true,
        }
    }
}

/// `TrainerSpec`, the few fields used after training, with the proto's defaults.
#[derive(Clone, Debug)]
pub struct TrainerSpec {
    pub model_type: ModelType,
    pub treat_whitespace_as_suffix: bool,
    pub byte_fallback: bool,
    pub unk_surface: String,
    pub unk_piece: String,
    pub bos_piece: String,
    pub eos_piece: String,
    pub pad_piece: String,
}

impl Default for TrainerSpec {
    fn default() -> Self {
        TrainerSpec {
            model_type: ModelType::Unigram,
            treat_whitespace_as_suffix: false,
            byte_fallback: false,
            unk_surface: " \u{2047} ".into(),
            unk_piece: "<unk>".into(),
            bos_piece: "<s>".into(),
            eos_piece: "</s>".into(),
            pad_piece: "<pad>".into(),
        }
    }
}

#[derive(Clone, Debug, Default)]
pub struct ModelProto {
    pub pieces: Vec<Piece>,
    pub trainer: TrainerSpec,
    pub normalizer: NormalizerSpec,
    pub denormalizer: Option<NormalizerSpec>,
}

enum Value<'a> {
    Varint(u64),
    Fixed32(u32),
    Bytes(&'a [u8]),
    Other,
}

struct Reader<'a> {
    b: &'a [u8],
    at: usize,
    what: &'static str,
}

impl<'a> Reader<'a> {
    fn new(b: &'a [u8], what: &'static str) -> Self {
        Reader { b, at: 0, what }
    }

    fn bad(&self, why: &str) -> SpmError {
        SpmError::Proto(format!("{} at byte {}: {why}", self.what, self.at))
    }

    fn varint(&mut self) -> Result<u64, SpmError> {
        let mut v = 0u64;
        for shift in (0..70).step_by(7) {
            let Some(&byte) = self.b.get(self.at) else { return Err(self.bad("a varint runs past the end")) };
            self.at += 1;
            v |= u64::from(byte & 0x7f).checked_shl(shift).unwrap_or(0);
            if byte < 0x80 {
                return Ok(v);
            }
        }
        Err(self.bad("a varint longer than 10 bytes"))
    }

    fn take(&mut self, n: u64) -> Result<&'a [u8], SpmError> {
        let end = usize::try_from(n).ok().and_then(|n| self.at.checked_add(n)).filter(|&e| e <= self.b.len());
        let Some(end) = end else { return Err(self.bad("a field runs past the end")) };
        let s = &self.b[self.at..end];
        self.at = end;
        Ok(s)
    }

    /// The next field's number and value, or None at the end.
    fn next(&mut self) -> Result<Option<(u64, Value<'a>)>, SpmError> {
        if self.at >= self.b.len() {
            return Ok(None);
        }
        let key = self.varint()?;
        let value = match key & 7 {
            0 => Value::Varint(self.varint()?),
            1 => {
                self.take(8)?;
                Value::Other
            }
            2 => {
                let n = self.varint()?;
                Value::Bytes(self.take(n)?)
            }
            5 => {
                let b = self.take(4)?;
                Value::Fixed32(u32::from_le_bytes([b[0], b[1], b[2], b[3]]))
            }
            w => return Err(self.bad(&format!("wire type {w} is not used by SentencePiece"))),
        };
        if key >> 3 == 0 {
            return Err(self.bad("field number 0"));
        }
        Ok(Some((key >> 3, value)))
    }

    fn string(&self, b: &[u8], field: &str) -> Result<String, SpmError> {
        String::from_utf8(b.to_vec()).map_err(|_| self.bad(&format!("{field} is not UTF-8")))
    }
}

fn piece(b: &[u8]) -> Result<Piece, SpmError> {
    let mut r = Reader::new(b, "a piece");
    let mut p = Piece { text: String::new(), score: 0.0, kind: PieceType::Normal };
    while let Some((n, v)) = r.next()? {
        match (n, v) {
            (1, Value::Bytes(s)) => p.text = r.string(s, "its text")?,
            (2, Value::Fixed32(f)) => p.score = f32::from_bits(f),
            (3, Value::Varint(t)) => {
                p.kind = match t {
                    1 => PieceType::Normal,
                    2 => PieceType::Unknown,
                    3 => PieceType::Control,
                    4 => PieceType::UserDefined,
                    5 => PieceType::Unused,
                    6 => PieceType::Byte,
                    t => return Err(r.bad(&format!("piece type {t} is unknown"))),
                }
            }
            (1..=3, _) => return Err(r.bad(&format!("field {n} has the wrong wire type"))),
            _ => {}
        }
    }
    Ok(p)
}

fn normalizer(b: &[u8]) -> Result<NormalizerSpec, SpmError> {
    let mut r = Reader::new(b, "the normalizer spec");
    let mut s = NormalizerSpec::default();
    while let Some((n, v)) = r.next()? {
        match (n, v) {
            (2, Value::Bytes(m)) => s.precompiled_charsmap = m.to_vec(),
            (3, Value::Varint(x)) => s.add_dummy_prefix = x != 0,
            (4, Value::Varint(x)) => s.remove_extra_whitespaces = x != 0,
            (5, Value::Varint(x)) => s.escape_whitespaces = x != 0,
            (2..=5, _) => return Err(r.bad(&format!("field {n} has the wrong wire type"))),
            _ => {}
        }
    }
    Ok(s)
}

fn trainer(b: &[u8]) -> Result<TrainerSpec, SpmError> {
    let mut r = Reader::new(b, "the trainer spec");
    let mut s = TrainerSpec::default();
    while let Some((n, v)) = r.next()? {
        match (n, v) {
            (3, Value::Varint(t)) => {
                s.model_type = match t {
                    1 => ModelType::Unigram,
                    2 => ModelType::Bpe,
                    3 => ModelType::Word,
                    4 => ModelType::Char,
                    t => return Err(r.bad(&format!("model type {t} is unknown"))),
                }
            }
            (24, Value::Varint(x)) => s.treat_whitespace_as_suffix = x != 0,
            (35, Value::Varint(x)) => s.byte_fallback = x != 0,
            (44, Value::Bytes(t)) => s.unk_surface = r.string(t, "unk_surface")?,
            (45, Value::Bytes(t)) => s.unk_piece = r.string(t, "unk_piece")?,
            (46, Value::Bytes(t)) => s.bos_piece = r.string(t, "bos_piece")?,
            (47, Value::Bytes(t)) => s.eos_piece = r.string(t, "eos_piece")?,
            (48, Value::Bytes(t)) => s.pad_piece = r.string(t, "pad_piece")?,
            (3 | 24 | 35 | 44..=48, _) => return Err(r.bad(&format!("field {n} has the wrong wire type"))),
            _ => {}
        }
    }
    Ok(s)
}

impl ModelProto {
    pub fn parse(b: &[u8]) -> Result<ModelProto, SpmError> {
        let mut r = Reader::new(b, "the model");
        let mut m = ModelProto::default();
        while let Some((n, v)) = r.next()? {
            match (n, v) {
                (1, Value::Bytes(p)) => m.pieces.push(piece(p)?),
                (2, Value::Bytes(t)) => m.trainer = trainer(t)?,
                (3, Value::Bytes(s)) => m.normalizer = normalizer(s)?,
                (5, Value::Bytes(s)) => m.denormalizer = Some(normalizer(s)?),
                (1..=3 | 5, _) => return Err(r.bad(&format!("field {n} has the wrong wire type"))),
                _ => {}
            }
        }
        Ok(m)
    }
}
