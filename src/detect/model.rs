//! The n-gram models and lingua's high-accuracy scoring over them.
//!
//! A models file holds, per language, an `fst::Map` from a lowercased n-gram of 1 to 5 characters
//! to its conditional probability given its first n-1 characters (the probability itself for a
//! unigram), as lingua's `ngrams.fst` does; the values are stored as `ln p` quantized to
//! 1/[`Models::scale`] (or as lingua's f64 bits when the scale is 0, a full model used to check
//! the scoring against lingua). Layout, little-endian:
//! `RSLID1\n`, scale (f32), language count (u8), then per language its ISO 639-3 code (3 bytes),
//! the map's length (u32) and the map.

use std::collections::HashSet;

use super::languages::{Language, LanguageSet, members};

pub(crate) const MAGIC: &[u8] = b"RSLID1\n";

#[derive(Debug, thiserror::Error)]
pub enum ModelsError {
    #[error("language models: {0}")]
    Corrupt(String),
}

/// The n-gram models of the languages a models file holds.
pub struct Models {
    maps: Vec<Option<fst::Map<Vec<u8>>>>,
    scale: f32,
}

impl std::fmt::Debug for Models {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let n = self.maps.iter().flatten().count();
        f.debug_struct("Models").field("languages", &n).field("scale", &self.scale).finish()
    }
}

impl Models {
    /// Reads a models file; an error names what is wrong (a truncated or foreign file).
    pub fn parse(bytes: &[u8]) -> Result<Models, ModelsError> {
        let bad = |what: &str| ModelsError::Corrupt(what.to_string());
        let rest =
            bytes.strip_prefix(MAGIC).ok_or_else(|| bad("not a reseam language models file (no RSLID1 header)"))?;
        let take = |rest: &mut &[u8], n: usize, what: &str| -> Result<Vec<u8>, ModelsError> {
            if rest.len() < n {
                return Err(bad(&format!("truncated in {what}")));
            }
            let (head, tail) = rest.split_at(n);
            *rest = tail;
            Ok(head.to_vec())
        };
        let mut rest = rest;
        let scale = f32::from_le_bytes(take(&mut rest, 4, "the header")?.try_into().unwrap_or_default());
        if !(scale == 0.0 || scale.is_finite() && scale > 0.0) {
            return Err(bad("the scale is not a positive number"));
        }
        let count = take(&mut rest, 1, "the header")?[0] as usize;
        let mut maps: Vec<Option<fst::Map<Vec<u8>>>> = Language::all().map(|_| None).collect();
        for _ in 0..count {
            let code = take(&mut rest, 3, "a language's code")?;
            let code = String::from_utf8_lossy(&code).into_owned();
            let language = Language::all()
                .find(|l| l.iso_639_3() == code)
                .ok_or_else(|| bad(&format!("unknown language code `{code}`")))?;
            let len = u32::from_le_bytes(take(&mut rest, 4, &code)?.try_into().unwrap_or_default()) as usize;
            let map = take(&mut rest, len, &format!("the model of {code}"))?;
            let map = fst::Map::new(map).map_err(|e| bad(&format!("the model of {code}: {e}")))?;
            // The map's checksum: fst reads a damaged map without further checks.
            map.as_fst().verify().map_err(|e| bad(&format!("the model of {code}: {e}")))?;
            maps[language.0 as usize] = Some(map);
        }
        if !rest.is_empty() {
            return Err(bad("bytes after the last model"));
        }
        Ok(Models { maps, scale })
    }

    /// The languages this file has a model of.
    pub(crate) fn languages(&self) -> LanguageSet {
        Language::all().filter(|l| self.maps[l.0 as usize].is_some()).fold(0, |s, l| s | l.bit())
    }

    /// The values of the 1- to 5-grams starting at `start` in a language's model, in one walk
    /// down its map (each n-gram is the prefix of the next): `out[n - 1]` for the n-gram.
    fn walk(&self, language: Language, gram: &str, out: &mut [Option<f64>; 5]) {
        *out = [None; 5];
        let Some(map) = self.maps[language.0 as usize].as_ref() else { return };
        let fst = map.as_fst();
        let mut node = fst.root();
        let mut acc = fst::raw::Output::zero();
        for (n, (i, c)) in gram.char_indices().take(5).enumerate() {
            for &b in &gram.as_bytes()[i..i + c.len_utf8()] {
                let Some(t) = node.find_input(b) else { return };
                let t = node.transition(t);
                acc = acc.cat(t.out);
                node = fst.node(t.addr);
            }
            if node.is_final() {
                out[n] = Some(self.decode(acc.cat(node.final_output()).value()));
            }
        }
    }

    fn decode(&self, value: u64) -> f64 {
        if self.scale == 0.0 { f64::from_bits(value) } else { -(value as f64) / self.scale as f64 }
    }

    /// lingua's confidence values for `words` among `languages` (which the rules left): the
    /// softmax of each language's mean log probability over the text's distinct n-grams of 1 to 5
    /// characters (only trigrams from 120 characters on), each n-gram scored by the longest of
    /// its prefixes the language's model holds. Sorted best first, ties in language order; all
    /// zero when no model knows any n-gram.
    pub(crate) fn confidences(&self, words: &[String], languages: LanguageSet) -> Vec<(Language, f64)> {
        let chars: usize = words.iter().map(|w| w.chars().count()).sum();
        let lengths: Vec<usize> = (if chars >= 120 { 3..4 } else { 1..6 }).filter(|&n| chars >= n).collect();
        let candidates: Vec<Language> = members(languages).collect();
        // Every position where an n-gram starts (the rest of its word from there), and for each
        // length the positions of the text's distinct n-grams.
        let mut starts: Vec<&str> = Vec::new();
        let mut distinct: Vec<Vec<usize>> = vec![Vec::new(); lengths.len()];
        let mut seen: Vec<HashSet<&str>> = vec![HashSet::new(); lengths.len()];
        for word in words {
            let bounds: Vec<usize> = word.char_indices().map(|(i, _)| i).chain([word.len()]).collect();
            for s in 0..bounds.len() - 1 {
                let mut used = false;
                for (j, &n) in lengths.iter().enumerate() {
                    if s + n < bounds.len() && seen[j].insert(&word[bounds[s]..bounds[s + n]]) {
                        distinct[j].push(starts.len());
                        used = true;
                    }
                }
                if used {
                    starts.push(&word[bounds[s]..]);
                }
            }
        }
        // Per length: each language's sum, when negative (lingua leaves out a language with none).
        let mut sums: Vec<Vec<Option<f64>>> = vec![vec![None; candidates.len()]; lengths.len()];
        let mut unigrams_known: Vec<usize> = vec![0; candidates.len()];
        let mut values = vec![[None; 5]; starts.len()];
        for (c, &l) in candidates.iter().enumerate() {
            for (v, start) in values.iter_mut().zip(&starts) {
                self.walk(l, start, v);
            }
            for (j, &n) in lengths.iter().enumerate() {
                let positions = &distinct[j];
                if n == 1 {
                    unigrams_known[c] = positions.iter().filter(|&&p| values[p][0].is_some()).count();
                }
                let sum: f64 = positions.iter().filter_map(|&p| values[p][..n].iter().rev().find_map(|v| *v)).sum();
                sums[j][c] = (sum < 0.0).then_some(sum);
            }
        }
        let mut summed: Vec<(Language, f64)> = Vec::new();
        for (i, &l) in candidates.iter().enumerate() {
            let mut sum: f64 = sums.iter().map(|row| row[i].unwrap_or(0.0)).sum();
            if lengths.first() == Some(&1) && unigrams_known[i] > 0 {
                sum /= unigrams_known[i] as f64;
            }
            if sum != 0.0 {
                summed.push((l, sum.exp()));
            }
        }
        let mut values: Vec<(Language, f64)> = candidates.iter().map(|&l| (l, 0.0)).collect();
        if !summed.is_empty() {
            let denominator: f64 = summed.iter().map(|(_, p)| p).sum();
            if denominator == 0.0 {
                // Too long a text for exp: the language of the highest sum of the first length takes it all.
                let best = candidates
                    .iter()
                    .zip(&sums[0])
                    .filter_map(|(l, s)| s.map(|s| (*l, s)))
                    .max_by(|a, b| a.1.total_cmp(&b.1).then(b.0.cmp(&a.0)));
                if let Some((l, _)) = best {
                    set(&mut values, l, 1.0);
                }
            } else {
                for (l, p) in summed {
                    set(&mut values, l, p / denominator);
                }
            }
        }
        sort(&mut values);
        values
    }
}

pub(crate) fn set(values: &mut [(Language, f64)], language: Language, value: f64) {
    if let Some(v) = values.iter_mut().find(|v| v.0 == language) {
        v.1 = value;
    }
}

/// Best first; equal values in language order (lingua's comparator).
pub(crate) fn sort(values: &mut [(Language, f64)]) {
    values.sort_by(|a, b| b.1.total_cmp(&a.1).then(a.0.cmp(&b.0)));
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A models file holding one language's map of `grams` (values as lingua's f64 bits).
    pub(crate) fn file(grams: &[(&str, f64)]) -> Vec<u8> {
        let mut sorted: Vec<(&str, f64)> = grams.to_vec();
        sorted.sort_by(|a, b| a.0.cmp(b.0));
        let mut b = fst::MapBuilder::memory();
        for (g, v) in sorted {
            b.insert(g, v.to_bits()).unwrap();
        }
        let map = b.into_inner().unwrap();
        let mut out = MAGIC.to_vec();
        out.extend(0f32.to_le_bytes());
        out.push(1);
        out.extend(b"spa");
        out.extend((map.len() as u32).to_le_bytes());
        out.extend(map);
        out
    }

    #[test]
    fn one_walk_reads_every_prefix() {
        let models = Models::parse(&file(&[("a", -1.0), ("añ", -2.0), ("año", -3.5), ("b", -4.0)])).unwrap();
        let spanish = Language::from_iso_639_1("es").unwrap();
        let mut out = [None; 5];
        models.walk(spanish, "añox", &mut out);
        assert_eq!(out, [Some(-1.0), Some(-2.0), Some(-3.5), None, None]);
        models.walk(spanish, "xa", &mut out);
        assert_eq!(out, [None; 5]);
        models.walk(Language::from_iso_639_1("en").unwrap(), "a", &mut out);
        assert_eq!(out, [None; 5]);
    }

    #[test]
    fn bad_files_are_errors_not_panics() {
        let good = file(&[("a", -1.0), ("ab", -2.0)]);
        assert!(Models::parse(&good).is_ok());
        for n in 0..good.len() {
            assert!(Models::parse(&good[..n]).is_err(), "truncated to {n}");
        }
        let mut extra = good.clone();
        extra.push(0);
        assert!(Models::parse(&extra).is_err());
        for i in MAGIC.len() + 8..good.len() {
            let mut flipped = good.clone();
            flipped[i] ^= 0x5a;
            assert!(Models::parse(&flipped).is_err(), "byte {i} flipped");
        }
        for seed in 0..200u32 {
            let random: Vec<u8> = (0..seed * 7).map(|i| (i.wrapping_mul(2654435761) >> 13 ^ seed) as u8).collect();
            let mut file = MAGIC.to_vec();
            file.extend(random);
            let _ = Models::parse(&file);
        }
        let mut unknown = good.clone();
        unknown[MAGIC.len() + 5..MAGIC.len() + 8].copy_from_slice(b"xyz");
        assert!(Models::parse(&unknown).unwrap_err().to_string().contains("xyz"));
    }
}
