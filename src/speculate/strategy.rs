//! Draft tokens → target candidates: the three strategies of the paper.
//!
//! Whatever a strategy proposes, verification keeps the output equal to the target's own greedy
//! output; a strategy only decides how many candidates survive. Special tokens never travel
//! through text: a draft EOS becomes the target's EOS, another special becomes the target's
//! special with the same text if there is one, and otherwise ends the candidates.

use std::fmt;
use std::str::FromStr;

use super::tokens::{
    TextTokenizer, Token, TokenizerError, bytes_of, complete_utf8_prefix, is_char_start, same_vocabulary, text_bytes,
};

/// How draft tokens become target candidates.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord, serde::Serialize)]
#[serde(rename_all = "lowercase")]
pub enum Strategy {
    /// Draft ids are used as target ids as they are (a control across vocabularies).
    None,
    /// Decode the new draft tokens to text, encode that text alone with the target tokenizer.
    /// Across identical vocabularies the ids are taken as they are (as `None`).
    Naive,
    /// Encode the text of the last p committed target tokens plus the new draft text, and keep
    /// what lies after the committed text. Across identical vocabularies the ids are taken as
    /// they are (as `None`).
    Context,
}

impl Strategy {
    pub const ALL: [Strategy; 3] = [Strategy::None, Strategy::Naive, Strategy::Context];

    pub fn name(self) -> &'static str {
        match self {
            Strategy::None => "none",
            Strategy::Naive => "naive",
            Strategy::Context => "context",
        }
    }
}

impl fmt::Display for Strategy {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

impl FromStr for Strategy {
    type Err = String;
    fn from_str(s: &str) -> Result<Strategy, String> {
        match s.trim() {
            "none" => Ok(Strategy::None),
            "naive" => Ok(Strategy::Naive),
            "context" => Ok(Strategy::Context),
            other => Err(format!("unknown strategy {other:?}: use none, naive or context")),
        }
    }
}

/// A target and a draft tokenizer, with what is needed to move between them.
pub struct Pair<'a, TT: ?Sized, DT: ?Sized> {
    pub target: &'a TT,
    pub draft: &'a DT,
    /// End-of-sequence ids (the first is the one a draft EOS maps to).
    pub target_eos: Vec<u32>,
    pub draft_eos: Vec<u32>,
    /// The target model's logits width: ids at or above it cannot be fed to the target.
    pub target_rows: usize,
    /// Every id means the same in both vocabularies: ids cross unchanged.
    pub identical: bool,
}

impl<'a, TT: TextTokenizer + ?Sized, DT: TextTokenizer + ?Sized> Pair<'a, TT, DT> {
    pub fn new(target: &'a TT, draft: &'a DT, target_eos: Vec<u32>, draft_eos: Vec<u32>, target_rows: usize) -> Self {
        let identical = same_vocabulary(target, draft);
        Pair { target, draft, target_eos, draft_eos, target_rows, identical }
    }

    /// The target id for a draft special token, if it has one.
    pub fn special_to_target(&self, id: u32) -> Option<u32> {
        if self.identical {
            return Some(id).filter(|&i| (i as usize) < self.target_rows);
        }
        if self.draft_eos.contains(&id) {
            return self.target_eos.first().copied();
        }
        match self.draft.token(id) {
            Token::Special(s) => self.target.special_id(s),
            _ => None,
        }
    }

    /// The draft id for a target special token, if it has one.
    pub fn special_to_draft(&self, id: u32) -> Option<u32> {
        if self.identical {
            return Some(id);
        }
        if self.target_eos.contains(&id) {
            return self.draft_eos.first().copied();
        }
        match self.target.token(id) {
            Token::Special(s) => self.draft.special_id(s),
            _ => None,
        }
    }

    /// Whether a draft id is ordinary text (else it is a special or unknown id).
    fn draft_is_text(&self, id: u32) -> bool {
        !self.draft_eos.contains(&id) && matches!(self.draft.token(id), Token::Text(_))
    }
}

/// Target candidates for draft `proposals`, after `committed` target ids.
pub fn translate<TT: TextTokenizer + ?Sized, DT: TextTokenizer + ?Sized>(
    strategy: Strategy,
    pair: &Pair<TT, DT>,
    committed: &[u32],
    proposals: &[u32],
    prefix: usize,
) -> Result<Vec<u32>, TokenizerError> {
    // The text part ends at the first non-text draft token, which may map to a target special.
    let text_len = proposals.iter().position(|&d| !pair.draft_is_text(d)).unwrap_or(proposals.len());
    let (text, rest) = proposals.split_at(text_len);
    let tail = rest.first().and_then(|&d| pair.special_to_target(d));
    // Identical vocabularies need no translation: the ids already are target ids, as the draft's
    // re-synchronisation takes them (resync.rs), and as llama.cpp and Transformers pass the draft
    // ids of a compatible pair. A text round trip there would only measure how the tokenizer
    // encodes a fragment on its own (SentencePiece marks `lita` as the word start `▁lita`), not
    // a difference between vocabularies.
    let strategy = if pair.identical { Strategy::None } else { strategy };
    let mut out = match strategy {
        Strategy::None => {
            let mut out: Vec<u32> = text.iter().copied().take_while(|&d| (d as usize) < pair.target_rows).collect();
            if out.len() < text.len() {
                // An id the target cannot see ends the run: what was drafted after it depends on it.
                return Ok(out);
            }
            out.extend(tail);
            return Ok(out);
        }
        Strategy::Naive => {
            if text.is_empty() {
                Vec::new()
            } else {
                let s = pair.draft.decode(text)?;
                pair.target.encode(&s, false)?
            }
        }
        Strategy::Context => {
            let new = bytes_of(pair.draft, text);
            let (ids, complete) = continue_text(pair.target, committed, &new, prefix)?;
            if !complete {
                // Part of the draft text could not be translated (held back or dropped), so a
                // special token drafted after it cannot follow directly.
                return Ok(ids);
            }
            ids
        }
    };
    // Special text inside the draft text (a literal `</s>`) is matched as a special token by
    // some tokenizers; it must not reach the target as if it were text.
    if let Some(cut) = out.iter().position(|&t| text_bytes(pair.target, t).is_none()) {
        out.truncate(cut);
        return Ok(out);
    }
    out.extend(tail);
    Ok(out)
}

/// Target ids that spell exactly `new` after the `committed` target ids, found by encoding the
/// text of the last `prefix` committed tokens together with `new` and keeping the tokens after
/// the committed text. Also returns whether all of `new` was translated (an incomplete UTF-8
/// character at the end is held back for the next round).
///
/// The cut is made at the byte position where the new text starts, counted from the end, so an
/// artefact at the start of the prefix (a SentencePiece word-start marker added in front of a
/// word piece) does not matter. When the prefix ids come out unchanged this is the same as
/// dropping `prefix` ids. When the tokenizer merges across the boundary (committed `…spo`,
/// new `lita` → one token `spolita`), committed ids cannot change, so the rest of the straddling
/// token is encoded as a word continuation and the tokens after it are kept.
pub fn continue_text<T: TextTokenizer + ?Sized>(
    tok: &T,
    committed: &[u32],
    new: &[u8],
    prefix: usize,
) -> Result<(Vec<u32>, bool), TokenizerError> {
    // The prefix: up to `prefix` committed text tokens, not reaching back over a special token,
    // starting at a character start.
    let mut start = committed.len();
    while start > 0 && committed.len() - start < prefix && text_bytes(tok, committed[start - 1]).is_some() {
        start -= 1;
    }
    while start < committed.len()
        && !text_bytes(tok, committed[start]).and_then(|b| b.first()).is_some_and(|&b| is_char_start(b))
    {
        start += 1;
    }
    let head = bytes_of(tok, &committed[start..]);
    let mut window = head.clone();
    window.extend_from_slice(new);
    let valid = complete_utf8_prefix(&window);
    if valid <= head.len() {
        // Nothing complete to translate: the new bytes only begin a character, or they do not
        // continue a character the committed text left open.
        return Ok((Vec::new(), new.is_empty()));
    }
    let complete = valid == window.len();
    let new_part = &window[head.len()..valid];
    // `valid` ends at a character boundary of valid UTF-8, so this cannot fail; stay safe anyway.
    let Ok(text) = std::str::from_utf8(&window[..valid]) else { return Ok((Vec::new(), false)) };
    let enc = if head.is_empty() { tok.encode_continuation(text)? } else { tok.encode(text, false)? };
    let mut ends = Vec::with_capacity(enc.len());
    let mut all = Vec::new();
    for &id in &enc {
        all.extend_from_slice(text_bytes(tok, id).unwrap_or(&[]));
        ends.push(all.len());
    }
    if !all.ends_with(new_part) {
        // The tokenizer changed the new text (normalisation): its ids would not spell the draft.
        return Ok((Vec::new(), false));
    }
    let cut = all.len() - new_part.len();
    if cut == 0 {
        return Ok((enc, complete));
    }
    // First token ending after the cut.
    let j = ends.partition_point(|&e| e <= cut);
    let token_start = if j == 0 { 0 } else { ends[j - 1] };
    if token_start == cut {
        return Ok((enc[j..].to_vec(), complete));
    }
    // A merge reaches across the committed text: encode the rest of that token on its own.
    let rest = &all[cut..ends[j]];
    let Ok(rest_text) = std::str::from_utf8(rest) else { return Ok((Vec::new(), false)) };
    let mut ids = tok.encode_continuation(rest_text)?;
    if bytes_of(tok, &ids) != rest {
        return Ok((Vec::new(), false));
    }
    ids.extend_from_slice(&enc[j + 1..]);
    Ok((ids, complete))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::speculate::testutil::{MODELS, tok};

    #[test]
    fn strategy_names_round_trip() {
        for s in Strategy::ALL {
            assert_eq!(s.name().parse::<Strategy>(), Ok(s));
        }
        assert!("fancy".parse::<Strategy>().unwrap_err().contains("none, naive or context"));
    }

    /// Context translation spells exactly the draft text after the committed text (up to an
    /// incomplete last character), wherever the committed text ends, for every ordered pair of
    /// fixture tokenizers.
    #[test]
    fn context_candidates_spell_the_draft_text_exactly() {
        let texts = [
            "Rzeczpospolita Polska to państwo w Europie Środkowej.",
            "Zażółć gęślą jaźń, 123 zł — ok.",
            "fn main() {\n\tprintln!(\"hi\");\n}",
        ];
        let mut cases = 0;
        for t in MODELS {
            let target = tok(t);
            for d in MODELS {
                let draft = tok(d);
                let pair = Pair::new(target, draft, vec![], vec![], target.len());
                for text in texts {
                    let target_ids = target.encode(text, false).unwrap();
                    let draft_ids = draft.encode(text, false).unwrap();
                    for split_t in 1..target_ids.len() {
                        let committed = &target_ids[..split_t];
                        let done = bytes_of(target, committed);
                        // The draft proposes the text after the committed text: its tokens from
                        // the first one that starts there.
                        let mut at = 0;
                        let Some(first) = draft_ids.iter().position(|&id| {
                            let here = at;
                            at += text_bytes(draft, id).unwrap().len();
                            here == done.len()
                        }) else {
                            continue;
                        };
                        let proposals = &draft_ids[first..(first + 4).min(draft_ids.len())];
                        let new = bytes_of(draft, proposals);
                        let cands = translate(Strategy::Context, &pair, committed, proposals, 5).unwrap();
                        let got = bytes_of(target, &cands);
                        let expect = complete_utf8_prefix(&[done.as_slice(), &new].concat()).saturating_sub(done.len());
                        assert_eq!(
                            String::from_utf8_lossy(&got),
                            String::from_utf8_lossy(&new[..expect]),
                            "{t}<-{d} {text:?} committed {split_t} tokens"
                        );
                        cases += 1;
                    }
                }
            }
        }
        assert!(cases > 100, "only {cases} cases");
    }

    #[test]
    fn same_tokenizer_context_translation_is_the_identity_on_canonical_text() {
        for m in MODELS {
            let t = tok(m);
            let pair = Pair::new(t, t, vec![], vec![], t.len());
            assert!(pair.identical);
            let ids = t.encode("Rzeczpospolita Polska to państwo w Europie Środkowej, nad Bałtykiem.", false).unwrap();
            for split in 1..ids.len() - 1 {
                let end = (split + 3).min(ids.len());
                let c = translate(Strategy::Context, &pair, &ids[..split], &ids[split..end], 5).unwrap();
                assert_eq!(c, ids[split..end], "{m} at {split}");
            }
        }
    }

    #[test]
    fn naive_marks_a_word_piece_as_a_word_start_in_sentencepiece() {
        // The round trip itself, as across vocabularies: the pair is told its vocabularies differ.
        let m = tok("mistral-tiny");
        let pair = Pair { identical: false, ..Pair::new(m, m, vec![2], vec![2], m.len()) };
        let ids = m.encode("Rzeczpospolita", false).unwrap();
        assert!(ids.len() >= 2);
        let naive = translate(Strategy::Naive, &pair, &ids[..1], &ids[1..], 5).unwrap();
        let context = translate(Strategy::Context, &pair, &ids[..1], &ids[1..], 5).unwrap();
        assert_ne!(naive, ids[1..], "naive loses the word continuation");
        assert_eq!(context, ids[1..]);
    }

    #[test]
    fn identical_vocabularies_take_draft_ids_as_they_are_in_every_strategy() {
        let m = tok("mistral-tiny");
        let pair = Pair::new(m, m, vec![2], vec![2], m.len());
        assert!(pair.identical);
        let ids = m.encode("Rzeczpospolita Polska", false).unwrap();
        // Word pieces (which naive's round trip would turn into a word start), a segmentation
        // the tokenizer would not make (one piece per letter), and an EOS.
        let odd: Vec<u32> = "zecz".chars().flat_map(|c| m.encode_continuation(&c.to_string()).unwrap()).collect();
        assert_ne!(odd, m.encode_continuation("zecz").unwrap());
        for proposals in [ids[1..].to_vec(), odd, vec![ids[1], 2]] {
            for s in Strategy::ALL {
                assert_eq!(translate(s, &pair, &ids[..1], &proposals, 5).unwrap(), proposals, "{s} {proposals:?}");
            }
        }
    }

    #[test]
    fn specials_map_by_eos_and_by_content_and_never_as_text() {
        let l = tok("llama3-tiny");
        let q = tok("qwen2-tiny");
        let pair = Pair::new(l, q, vec![128009, 128001], vec![151645, 151643], 128256);
        let hi = q.encode(" hi", false).unwrap();
        let mut props = hi.clone();
        props.push(151645);
        for s in Strategy::ALL {
            let c = translate(s, &pair, &[128000], &props, 5).unwrap();
            if s != Strategy::None {
                assert_eq!(c.last(), Some(&128009), "{s}: draft EOS becomes the target's first EOS");
                assert_eq!(bytes_of(l, &c), b" hi");
            }
        }
        // A special without a counterpart ends the candidates.
        let im_start = q.special_id("<|im_start|>").unwrap();
        let c = translate(Strategy::Context, &pair, &[128000], &[hi[0], im_start, hi[0]], 5).unwrap();
        assert_eq!(bytes_of(l, &c), b" hi");
        assert!(c.iter().all(|&t| matches!(l.token(t), Token::Text(_))));
        // `none` drops ids the target cannot see, and everything drafted after them.
        let c = translate(Strategy::None, &pair, &[], &[5, 200_000, 6], 5).unwrap();
        assert_eq!(c, vec![5]);
    }

    #[test]
    fn incomplete_utf8_is_held_back() {
        let l = tok("llama3-tiny");
        let q = tok("qwen2-tiny");
        let pair = Pair::new(q, l, vec![], vec![], 151_936);
        // Find a llama token that is a lone UTF-8 lead byte.
        let lead = (0..l.len() as u32).find(|&i| text_bytes(l, i) == Some(&[0xC4][..])).expect("byte token 0xC4");
        let word = l.encode(" za", false).unwrap();
        let mut props = word.clone();
        props.push(lead);
        let c = translate(Strategy::Context, &pair, &q.encode("Ala", false).unwrap(), &props, 5).unwrap();
        assert_eq!(bytes_of(q, &c), b" za", "the half character waits for its second byte");
    }
}
