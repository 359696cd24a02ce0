//! Decoding to bytes. The `tokenizers` library decodes to `String`, replacing a token that ends
//! inside a UTF-8 character with U+FFFD; cross-tokenizer drafting needs the bytes themselves
//! (to hold back an unfinished character). This replays a `tokenizer.json` decoder chain on
//! bytes with the library's semantics, for the decoders LLM tokenizers use: `ByteLevel`,
//! `Metaspace`, and `Sequence`s of `Replace`, `ByteFallback`, `Fuse` and `Strip`.

use std::collections::HashMap;

use serde_json::Value;

/// One decoder of the chain.
#[derive(Clone, Debug, PartialEq)]
enum Step {
    /// GPT-2 byte-to-character mapping undone; tokens fused.
    ByteLevel,
    Replace {
        pattern: Vec<u8>,
        content: Vec<u8>,
    },
    ByteFallback,
    Fuse,
    Strip {
        content: Vec<u8>,
        start: usize,
        stop: usize,
    },
    /// `replacement` → space; in the first token the replacement is dropped (when the scheme
    /// adds a prefix at encode time).
    Metaspace {
        replacement: Vec<u8>,
        strip_first: bool,
    },
}

/// A decoder chain that can run on bytes.
#[derive(Clone, Debug)]
pub struct ByteDecoder {
    steps: Vec<Step>,
    byte_of_char: HashMap<char, u8>,
}

/// The GPT-2 mapping from bytes to printable characters (`Ġ` for space, ...).
fn bytes_to_chars() -> Vec<char> {
    let mut printable: Vec<u32> = (33..=126).chain(161..=172).chain(174..=255).collect();
    let mut chars: Vec<u32> = printable.clone();
    let mut extra = 0;
    for b in 0..256u32 {
        if !printable.contains(&b) {
            printable.push(b);
            chars.push(256 + extra);
            extra += 1;
        }
    }
    let mut out = vec!['\0'; 256];
    for (b, c) in printable.into_iter().zip(chars) {
        // Every value is below 256 + 256, a valid scalar value.
        out[b as usize] = char::from_u32(c).expect("GPT-2 byte characters are valid");
    }
    out
}

fn parse(v: &Value, steps: &mut Vec<Step>) -> Option<()> {
    let s = |key: &str| v.get(key).and_then(Value::as_str);
    match s("type")? {
        "Sequence" => {
            for d in v.get("decoders")?.as_array()? {
                parse(d, steps)?;
            }
        }
        "ByteLevel" => steps.push(Step::ByteLevel),
        "ByteFallback" => steps.push(Step::ByteFallback),
        "Fuse" => steps.push(Step::Fuse),
        "Replace" => {
            let pattern = v.get("pattern")?.get("String")?.as_str()?;
            steps.push(Step::Replace {
                pattern: pattern.as_bytes().to_vec(),
                content: s("content")?.as_bytes().to_vec(),
            });
        }
        "Strip" => steps.push(Step::Strip {
            content: s("content")?.as_bytes().to_vec(),
            start: v.get("start")?.as_u64()? as usize,
            stop: v.get("stop")?.as_u64()? as usize,
        }),
        "Metaspace" => {
            let replacement = s("replacement").unwrap_or("\u{2581}").as_bytes().to_vec();
            // Older files say `add_prefix_space`; newer ones `prepend_scheme`.
            let strip_first = match s("prepend_scheme") {
                Some(scheme) => scheme != "never",
                None => v.get("add_prefix_space").and_then(Value::as_bool).unwrap_or(true),
            };
            steps.push(Step::Metaspace { replacement, strip_first });
        }
        _ => return None,
    }
    Some(())
}

fn replace_all(hay: &[u8], pattern: &[u8], content: &[u8]) -> Vec<u8> {
    if pattern.is_empty() {
        return hay.to_vec();
    }
    let mut out = Vec::with_capacity(hay.len());
    let mut i = 0;
    while i < hay.len() {
        if hay[i..].starts_with(pattern) {
            out.extend_from_slice(content);
            i += pattern.len();
        } else {
            out.push(hay[i]);
            i += 1;
        }
    }
    out
}

fn byte_fallback(token: &[u8]) -> Option<u8> {
    if token.len() == 6 && token.starts_with(b"<0x") && token.ends_with(b">") {
        std::str::from_utf8(&token[3..5]).ok().and_then(|h| u8::from_str_radix(h, 16).ok())
    } else {
        None
    }
}

impl ByteDecoder {
    /// The chain of a `tokenizer.json` `decoder`, or `None` if it uses a decoder this does not
    /// replay (callers then fall back to the library's string).
    pub fn from_json(decoder: &Value) -> Option<ByteDecoder> {
        let mut steps = Vec::new();
        parse(decoder, &mut steps)?;
        let byte_of_char = bytes_to_chars().into_iter().enumerate().map(|(b, c)| (c, b as u8)).collect();
        Some(ByteDecoder { steps, byte_of_char })
    }

    /// Decodes token strings (as `id_to_token` gives them) to bytes. With `continuation`, the
    /// tokens are taken to follow earlier text: what a decoder strips at the start of a
    /// sequence (Metaspace's first prefix, a leading `Strip`) is kept.
    pub fn decode(&self, tokens: &[&str], continuation: bool) -> Vec<u8> {
        let mut toks: Vec<Vec<u8>> = tokens.iter().map(|t| t.as_bytes().to_vec()).collect();
        let mut fused = false;
        for step in &self.steps {
            match step {
                Step::ByteLevel => {
                    let mut all = Vec::new();
                    for t in &toks {
                        // Safe: toks hold valid UTF-8 until a byte step ran, and ByteLevel
                        // comes first in every chain that uses it.
                        let s = String::from_utf8_lossy(t);
                        match s.chars().map(|c| self.byte_of_char.get(&c).copied()).collect::<Option<Vec<u8>>>() {
                            Some(b) => all.extend(b),
                            None => all.extend_from_slice(t),
                        }
                    }
                    toks = vec![all];
                    fused = true;
                }
                Step::Replace { pattern, content } => {
                    toks = toks.iter().map(|t| replace_all(t, pattern, content)).collect();
                }
                Step::ByteFallback => {
                    for t in toks.iter_mut() {
                        if let Some(b) = byte_fallback(t) {
                            *t = vec![b];
                        }
                    }
                }
                Step::Fuse => {
                    toks = vec![toks.concat()];
                    fused = true;
                }
                Step::Strip { content, start, stop } => {
                    let skip_start = continuation && fused;
                    for t in toks.iter_mut() {
                        if !skip_start {
                            for _ in 0..*start {
                                if !content.is_empty() && t.starts_with(content) {
                                    t.drain(..content.len());
                                } else {
                                    break;
                                }
                            }
                        }
                        for _ in 0..*stop {
                            if !content.is_empty() && t.ends_with(content) {
                                t.truncate(t.len() - content.len());
                            } else {
                                break;
                            }
                        }
                    }
                }
                Step::Metaspace { replacement, strip_first } => {
                    for (i, t) in toks.iter_mut().enumerate() {
                        let content: &[u8] = if i == 0 && *strip_first && !continuation { b"" } else { b" " };
                        *t = replace_all(t, replacement, content);
                    }
                }
            }
        }
        toks.concat()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn gpt2_mapping_has_space_as_g_dot() {
        let m = bytes_to_chars();
        assert_eq!(m[b' ' as usize], 'Ġ');
        assert_eq!(m[b'a' as usize], 'a');
        assert_eq!(m[b'\n' as usize], 'Ċ');
    }

    #[test]
    fn byte_level_keeps_partial_characters() {
        let d = ByteDecoder::from_json(&serde_json::json!({"type": "ByteLevel"})).unwrap();
        // "ą" is C4 85: 'Ä' + '\u{0085}'-mapped character.
        let m = bytes_to_chars();
        let first = m[0xC4].to_string();
        assert_eq!(d.decode(&[&first], false), vec![0xC4]);
    }

    #[test]
    fn mistral_chain_strips_only_the_sequence_start() {
        let d = ByteDecoder::from_json(&serde_json::json!({"type": "Sequence", "decoders": [
            {"type": "Replace", "pattern": {"String": "\u{2581}"}, "content": " "},
            {"type": "ByteFallback"}, {"type": "Fuse"},
            {"type": "Strip", "content": " ", "start": 1, "stop": 0}]}))
        .unwrap();
        assert_eq!(d.decode(&["▁Ala", "▁ma", "<0xC5>", "<0x82>"], false), "Ala mał".as_bytes());
        assert_eq!(d.decode(&["▁ma", "<0xC5>"], true), b" ma\xC5");
    }

    #[test]
    fn unknown_decoders_are_declined() {
        assert!(ByteDecoder::from_json(&serde_json::json!({"type": "WordPiece", "prefix": "##"})).is_none());
    }
}
