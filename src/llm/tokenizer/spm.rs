//! What a SentencePiece piece stands for inside a text, for decoding to bytes (the model itself
//! is [`crate::vocab::spm::SentencePiece`], whose own decoding gives strings).

use crate::vocab::spm::{PieceType, SentencePiece};

/// The bytes a piece stands for inside a text (`▁` → space, `<0xNN>` → that byte). Control
/// pieces stand for nothing unless `keep_control` (then their own text, as Transformers prints
/// special tokens); the unknown piece for SentencePiece's ` ⁇ `.
pub fn piece_bytes(sp: &SentencePiece, id: u32, keep_control: bool) -> Vec<u8> {
    let (Some(kind), Some(text)) = (sp.piece_type(id), sp.id_to_piece(id)) else { return Vec::new() };
    match kind {
        PieceType::Control if keep_control => text.as_bytes().to_vec(),
        PieceType::Control => Vec::new(),
        PieceType::Unknown => " \u{2047} ".as_bytes().to_vec(),
        PieceType::Byte => {
            let h = text.trim_start_matches("<0x").trim_end_matches('>');
            u8::from_str_radix(h, 16).map(|b| vec![b]).unwrap_or_default()
        }
        _ => text.replace('\u{2581}', " ").into_bytes(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn mistral() -> SentencePiece {
        let path =
            std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/llm/mistral-tiny/tokenizer.model");
        SentencePiece::from_bytes(&std::fs::read(path).unwrap()).unwrap()
    }

    #[test]
    fn mistral_model_pieces() {
        let sp = mistral();
        assert_eq!(sp.len(), 32000);
        assert_eq!(sp.id_to_piece(1), Some("<s>"));
        assert_eq!(sp.piece_type(1), Some(PieceType::Control));
        assert_eq!(sp.piece_type(0), Some(PieceType::Unknown));
        assert_eq!(piece_bytes(&sp, 1, false), b"");
        assert_eq!(piece_bytes(&sp, 1, true), b"<s>");
        assert_eq!(piece_bytes(&sp, 0, false), " \u{2047} ".as_bytes());
        assert_eq!(piece_bytes(&sp, 3, false), vec![0]); // <0x00>
        assert_eq!(piece_bytes(&sp, 28705, false), b" "); // ▁
        assert!(piece_bytes(&sp, 32000, true).is_empty());
        assert!(sp.adds_dummy_prefix());
    }

    #[test]
    fn continuation_model_keeps_everything_but_the_prefix_rules() {
        let sp = mistral();
        let cont = sp.for_continuations();
        assert!(!cont.adds_dummy_prefix());
        assert_eq!(cont.len(), 32000);
        assert!(sp.adds_dummy_prefix(), "the original is untouched");
        // Running text keeps its spaces and gets no `▁` in front.
        let text = "word  and";
        let bytes: Vec<u8> = cont.encode_ids(text).into_iter().flat_map(|id| piece_bytes(&cont, id, false)).collect();
        assert_eq!(bytes, text.as_bytes());
        let bytes: Vec<u8> = sp.encode_ids(text).into_iter().flat_map(|id| piece_bytes(&sp, id, false)).collect();
        // The model itself puts `▁` in front (Mistral's model keeps repeated spaces either way).
        assert_eq!(bytes, b" word  and");
    }
}
