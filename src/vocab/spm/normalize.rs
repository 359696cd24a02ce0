//! SentencePiece's normalizer (normalizer.cc): the precompiled character map of the model
//! (`nmt_nfkc` in Firefox's vocabularies, a Darts double-array trie of source strings whose
//! values point into a block of NUL-terminated replacements), applied at each position to the
//! longest source that matches; user-defined symbols kept as they are; leading, trailing and
//! repeated spaces removed; `▁` for spaces and in front of the text.
//!
//! `spm_precompiled` (the `tokenizers` crate's reader of the same map) is not used: it applies
//! the map per grapheme cluster and takes the shortest match, and a corrupt map makes it panic.

use super::SpmError;
use super::proto::NormalizerSpec;
use super::trie::Trie;

pub const SPACE: &str = "\u{2581}";

/// Darts-clone's double array, read with bounds checks: a unit out of the array ends a search
/// instead of reading past it.
#[derive(Clone, Debug, Default)]
struct DoubleArray {
    units: Vec<u32>,
}

impl DoubleArray {
    fn unit(&self, i: usize) -> Option<u32> {
        self.units.get(i).copied()
    }

    fn offset(u: u32) -> usize {
        ((u >> 10) << ((u & (1 << 9)) >> 6)) as usize
    }

    fn label(u: u32) -> u32 {
        u & ((1 << 31) | 0xff)
    }

    fn has_leaf(u: u32) -> bool {
        (u >> 8) & 1 == 1
    }

    /// The longest key that is a prefix of `key`: (its length, its value).
    fn longest_prefix(&self, key: &[u8]) -> Option<(usize, usize)> {
        let mut best = None;
        let mut node = Self::offset(self.unit(0)?);
        for (i, &c) in key.iter().enumerate() {
            node ^= c as usize;
            let u = self.unit(node)?;
            if Self::label(u) != c as u32 {
                break;
            }
            node ^= Self::offset(u);
            if Self::has_leaf(u) {
                let value = self.unit(node)? & ((1 << 31) - 1);
                best = Some((i + 1, value as usize));
            }
        }
        best
    }
}

/// A normalizer spec made ready to apply.
#[derive(Clone, Debug)]
pub struct Normalizer {
    spec: NormalizerSpec,
    trie: Option<DoubleArray>,
    /// The replacements, NUL-terminated, that the trie's values point into.
    replacements: Vec<u8>,
    /// User-defined symbols, matched before the map and left as written.
    user: Trie,
}

/// A normalized text: `text` and, for each of its bytes and one past its end, the byte of the
/// input it came from.
pub struct Normalized {
    pub text: String,
    pub to_orig: Vec<usize>,
}

impl Normalizer {
    pub fn new(spec: NormalizerSpec, user: Trie) -> Result<Normalizer, SpmError> {
        let blob = &spec.precompiled_charsmap;
        let (trie, replacements) = if blob.is_empty() {
            (None, Vec::new())
        } else {
            let bad = |why: &str| SpmError::Proto(format!("the precompiled character map {why}"));
            if blob.len() <= 4 {
                return Err(bad("is shorter than its header"));
            }
            let size = u32::from_le_bytes([blob[0], blob[1], blob[2], blob[3]]) as usize;
            if size > blob.len() - 4 || !size.is_multiple_of(4) {
                return Err(bad(&format!("declares a trie of {size} bytes in {} bytes", blob.len())));
            }
            let units =
                blob[4..4 + size].chunks_exact(4).map(|c| u32::from_le_bytes([c[0], c[1], c[2], c[3]])).collect();
            (Some(DoubleArray { units }), blob[4 + size..].to_vec())
        };
        Ok(Normalizer { spec, trie, replacements, user })
    }

    pub fn spec(&self) -> &NormalizerSpec {
        &self.spec
    }

    /// The same normalizer without `add_dummy_prefix` and `remove_extra_whitespaces`.
    pub fn without_prefix_rules(&self) -> Normalizer {
        let mut n = self.clone();
        n.spec.add_dummy_prefix = false;
        n.spec.remove_extra_whitespaces = false;
        n
    }

    /// What the longest rule at the start of `input` turns it into, and how many bytes of
    /// `input` that consumes (NormalizePrefix).
    fn prefix<'a>(&'a self, input: &'a str) -> (&'a str, usize) {
        if let Some(len) = self.user.longest_prefix(input.as_bytes()).map(|(len, _)| len) {
            return (&input[..len], len);
        }
        if let Some((len, value)) = self.trie.as_ref().and_then(|t| t.longest_prefix(input.as_bytes()))
            && len <= input.len()
            && value < self.replacements.len()
            && input.is_char_boundary(len)
        {
            let rest = &self.replacements[value..];
            let end = rest.iter().position(|&b| b == 0).unwrap_or(rest.len());
            // A valid map replaces with UTF-8; anything else is read as no rule.
            if let Ok(s) = std::str::from_utf8(&rest[..end]) {
                return (s, len);
            }
        }
        let len = input.chars().next().map_or(0, char::len_utf8);
        (&input[..len], len)
    }

    /// Normalizer::Normalize.
    pub fn normalize(&self, mut input: &str) -> Normalized {
        let spec = &self.spec;
        let mut text = String::with_capacity(input.len() * 3 / 2 + 4);
        let mut to_orig = Vec::with_capacity(input.len() * 3 / 2 + 4);
        let mut consumed = 0;
        if spec.remove_extra_whitespaces {
            while !input.is_empty() {
                let (s, n) = self.prefix(input);
                if s != " " {
                    break;
                }
                input = &input[n..];
                consumed += n;
            }
        }
        if input.is_empty() {
            return Normalized { text, to_orig: vec![consumed] };
        }
        let space = if spec.escape_whitespaces { SPACE } else { " " };
        if spec.add_dummy_prefix {
            text.push_str(space);
            to_orig.extend(std::iter::repeat_n(consumed, space.len()));
        }
        let mut prev_space = spec.remove_extra_whitespaces;
        while !input.is_empty() {
            let (mut s, n) = self.prefix(input);
            while prev_space && s.starts_with(' ') {
                s = &s[1..];
            }
            if !s.is_empty() {
                for (i, c) in s.char_indices() {
                    if c == ' ' && spec.escape_whitespaces {
                        text.push_str(SPACE);
                        to_orig.extend(std::iter::repeat_n(consumed, SPACE.len()));
                    } else {
                        let len = c.len_utf8();
                        text.push_str(&s[i..i + len]);
                        to_orig.extend(std::iter::repeat_n(consumed, len));
                    }
                }
                prev_space = s.ends_with(' ');
            }
            consumed += n;
            input = &input[n..];
            if !spec.remove_extra_whitespaces {
                prev_space = false;
            }
        }
        if spec.remove_extra_whitespaces {
            while text.ends_with(space) {
                let len = text.len() - space.len();
                consumed = to_orig[len];
                text.truncate(len);
                to_orig.truncate(len);
            }
        }
        to_orig.push(consumed);
        Normalized { text, to_orig }
    }
}
