//! Target → draft: keeping the draft's context equal to what the target committed.
//!
//! After each round the target has committed accepted candidates plus its own correction or
//! bonus token. The draft's ids are brought in line: its own proposals stay as long as their text
//! is what was committed (no cache work for them); the committed text after that is encoded in
//! draft tokens, starting a few tokens back at a word start so that the segmentation is the one
//! the draft would have produced itself; the draft's cache is cut back to the longest prefix of
//! ids that did not change, and the rest is fed with the next draft pass.
//!
//! Vocabularies that are identical skip text altogether: target ids are draft ids.

use super::strategy::Pair;
use super::tokens::{TextTokenizer, Token, TokenizerError, complete_utf8_prefix, is_char_start, starts_word};

/// One unit of committed output as the draft sees it: a byte of text, or a special token that
/// the draft has too (specials the draft lacks are invisible to it).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Unit {
    Byte(u8),
    Special(u32),
}

/// The draft's ids and how they line up with the committed target output.
pub struct DraftContext {
    /// Prompt, then the committed output in draft tokens, then this round's proposals.
    pub ids: Vec<u32>,
    /// How many of `ids` are in the draft's cache (always fewer than `ids.len()`, so a draft
    /// pass has something to feed).
    pub fed: usize,
    prompt_len: usize,
    /// End (in `content` units) of each synced id after the prompt.
    ends: Vec<usize>,
    /// The committed target output, in units.
    content: Vec<Unit>,
    /// How many target output ids `content` (or, for identical vocabularies, `ids`) covers.
    consumed: usize,
}

/// What a re-synchronisation did.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Resync {
    /// Length the draft's cache must be cut to.
    pub keep: usize,
    /// Proposals of the last round whose text was committed at their place.
    pub proposals_committed: usize,
}

impl DraftContext {
    pub fn new(prompt: Vec<u32>) -> DraftContext {
        let prompt_len = prompt.len();
        DraftContext { ids: prompt, fed: 0, prompt_len, ends: Vec::new(), content: Vec::new(), consumed: 0 }
    }

    /// Ids to feed with the next draft pass.
    pub fn pending(&self) -> &[u32] {
        &self.ids[self.fed..]
    }

    /// Ids of the committed output in draft tokens (after the prompt; proposals excluded).
    pub fn synced_output(&self) -> &[u32] {
        &self.ids[self.prompt_len..self.prompt_len + self.ends.len()]
    }

    /// Brings `ids` in line with the target's output ids so far (`output`, prompt excluded),
    /// looking back at most `lookbehind` draft tokens for a word start to re-encode from.
    pub fn resync<TT: TextTokenizer + ?Sized, DT: TextTokenizer + ?Sized>(
        &mut self,
        pair: &Pair<TT, DT>,
        output: &[u32],
        lookbehind: usize,
    ) -> Result<Resync, TokenizerError> {
        let synced = self.prompt_len + self.ends.len();
        let (new_ids, proposals_committed) = if pair.identical {
            self.consumed = output.len();
            let proposals = &self.ids[synced..];
            let fresh = &output[self.ends.len().min(output.len())..];
            let ok = proposals.iter().zip(fresh).take_while(|(a, b)| a == b).count();
            self.ends = (1..=output.len()).collect();
            let mut ids = self.ids[..self.prompt_len].to_vec();
            ids.extend_from_slice(output);
            (ids, ok)
        } else {
            self.extend_content(pair, output);
            self.realign(pair.draft, synced, lookbehind)?
        };
        let lcp = self.ids.iter().zip(&new_ids).take_while(|(a, b)| a == b).count();
        let keep = self.fed.min(lcp).min(new_ids.len().saturating_sub(1));
        self.ids = new_ids;
        self.fed = keep;
        Ok(Resync { keep, proposals_committed })
    }

    fn extend_content<TT: TextTokenizer + ?Sized, DT: TextTokenizer + ?Sized>(
        &mut self,
        pair: &Pair<TT, DT>,
        output: &[u32],
    ) {
        for &id in &output[self.consumed.min(output.len())..] {
            match pair.target.token(id) {
                Token::Text(b) if !pair.target_eos.contains(&id) => {
                    self.content.extend(b.iter().map(|&x| Unit::Byte(x)))
                }
                Token::Unknown => {}
                _ => {
                    if let Some(d) = pair.special_to_draft(id) {
                        self.content.push(Unit::Special(d));
                    }
                }
            }
        }
        self.consumed = output.len();
    }

    /// The units a draft id stands for, or None if it cannot appear in committed output.
    fn units_match<DT: TextTokenizer + ?Sized>(&self, draft: &DT, id: u32, pos: usize) -> Option<usize> {
        match draft.token(id) {
            Token::Text(b) if !b.is_empty() => {
                let end = pos + b.len();
                let here = self.content.get(pos..end)?;
                here.iter().zip(b).all(|(u, &x)| *u == Unit::Byte(x)).then_some(end)
            }
            Token::Special(_) | Token::Text(_) => {
                (self.content.get(pos) == Some(&Unit::Special(id))).then_some(pos + 1)
            }
            Token::Unknown => None,
        }
    }

    /// New ids for the text path, and how many proposals were committed as drafted.
    fn realign<DT: TextTokenizer + ?Sized>(
        &mut self,
        draft: &DT,
        synced: usize,
        lookbehind: usize,
    ) -> Result<(Vec<u32>, usize), TokenizerError> {
        // 1. Proposals whose text is what was committed stay.
        let mut pos = self.ends.last().copied().unwrap_or(0);
        let mut committed = 0;
        for &id in &self.ids[synced..] {
            let Some(end) = self.units_match(draft, id, pos) else { break };
            self.ends.push(end);
            pos = end;
            committed += 1;
        }
        let mut ids = self.ids[..synced + committed].to_vec();
        // 2. The rest of the committed output, in draft tokens.
        while pos < self.content.len() {
            if let Unit::Special(id) = self.content[pos] {
                ids.push(id);
                pos += 1;
                self.ends.push(pos);
                continue;
            }
            let before = pos;
            pos = self.encode_segment(draft, &mut ids, lookbehind)?;
            if pos == before {
                break; // an incomplete character waits for the rest of its bytes
            }
        }
        Ok((ids, committed))
    }

    /// Encodes the text segment that starts at the end of the synced ids, re-encoding from a
    /// word start up to `lookbehind` tokens back. Returns the new end position.
    fn encode_segment<DT: TextTokenizer + ?Sized>(
        &mut self,
        draft: &DT,
        ids: &mut Vec<u32>,
        lookbehind: usize,
    ) -> Result<usize, TokenizerError> {
        let n = self.ends.len();
        let pos = self.ends.last().copied().unwrap_or(0);
        let end_of = |i: usize, ends: &[usize]| if i == 0 { 0 } else { ends[i - 1] };
        let is_text = |i: usize, ids: &[u32]| matches!(draft.token(ids[self.prompt_len + i]), Token::Text(_));
        // Where to start: the latest word start within `lookbehind` tokens, else here. Never
        // before a special token or into the prompt.
        let mut start = n;
        let mut i = n;
        while i > 0 && n - i < lookbehind && is_text(i - 1, ids) {
            i -= 1;
            let b = match draft.token(ids[self.prompt_len + i]) {
                Token::Text(b) => b,
                _ => &[],
            };
            if starts_word(b) || i == 0 || !is_text(i - 1, ids) {
                start = i;
                break;
            }
        }
        // The window must start at a character start.
        while start > 0
            && self.byte_at(end_of(start, &self.ends)).is_some_and(|b| !is_char_start(b))
            && is_text(start - 1, ids)
        {
            start -= 1;
        }
        let from = end_of(start, &self.ends);
        let seg_end = self.content[pos..]
            .iter()
            .position(|u| matches!(u, Unit::Special(_)))
            .map_or(self.content.len(), |p| pos + p);
        let window: Vec<u8> =
            self.content[from..seg_end].iter().map(|u| if let Unit::Byte(b) = u { *b } else { 0 }).collect();
        let valid = complete_utf8_prefix(&window);
        if from + valid <= pos {
            return Ok(pos);
        }
        // `valid` bytes form valid UTF-8 by construction.
        let Ok(text) = std::str::from_utf8(&window[..valid]) else { return Ok(pos) };
        let enc = draft.encode_continuation(text)?;
        let mut rel = Vec::with_capacity(enc.len());
        let mut spelled = Vec::with_capacity(valid);
        for &id in &enc {
            if let Token::Text(b) = draft.token(id) {
                spelled.extend_from_slice(b);
            }
            rel.push(spelled.len());
        }
        if spelled != window[..valid] {
            // The tokenizer normalised the text: keep what is synced, take the new part as the
            // tokenizer encodes it, and count it as covering the window.
            let rest = std::str::from_utf8(&window[pos - from..valid]).unwrap_or("");
            let more = draft.encode_continuation(rest)?;
            let m = more.len();
            ids.extend_from_slice(&more);
            self.ends.extend(std::iter::repeat_n(from + valid, m));
            return Ok(from + valid);
        }
        // Keep the draft's own tokens up to the last boundary both segmentations share.
        let left_len = pos - from;
        let shared = (start..n).rev().map(|i| self.ends[i] - from).find(|e| rel.binary_search(e).is_ok()).unwrap_or(0);
        let keep_tokens = start + (start..n).take_while(|&i| self.ends[i] - from <= shared).count();
        debug_assert!(shared <= left_len);
        ids.truncate(self.prompt_len + keep_tokens);
        self.ends.truncate(keep_tokens);
        let first_new = rel.partition_point(|&e| e <= shared);
        for (j, &id) in enc.iter().enumerate().skip(first_new) {
            ids.push(id);
            self.ends.push(from + rel[j]);
        }
        Ok(from + valid)
    }

    fn byte_at(&self, pos: usize) -> Option<u8> {
        match self.content.get(pos) {
            Some(Unit::Byte(b)) => Some(*b),
            _ => None,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::speculate::testutil::{MODELS, tok};
    use crate::speculate::tokens::bytes_of;

    /// Commits a text in target tokens a few at a time; after each re-sync the draft's ids spell
    /// the committed text (up to an incomplete last character), for every pair of tokenizers.
    #[test]
    fn draft_spells_the_committed_text_after_every_round() {
        let text = "Rzeczpospolita Polska — państwo w Europie Środkowej; 1024 zł.\n\tKöln, 東京 🇵🇱!";
        for t in MODELS {
            for d in MODELS {
                let (target, draft) = (tok(t), tok(d));
                let pair = Pair::new(target, draft, vec![], vec![], target.len());
                let out = target.encode(text, false).unwrap();
                for step in [1, 2, 3, 5] {
                    let prompt = draft.encode("Tekst:", true).unwrap();
                    let mut ctx = DraftContext::new(prompt.clone());
                    ctx.fed = prompt.len() - 1;
                    let mut n = 0;
                    while n < out.len() {
                        n = (n + step).min(out.len());
                        let r = ctx.resync(&pair, &out[..n], 8).unwrap();
                        assert!(r.keep < ctx.ids.len() && ctx.fed == r.keep);
                        let want = bytes_of(target, &out[..n]);
                        let got = bytes_of(draft, ctx.synced_output());
                        let expect = if pair.identical { want.len() } else { complete_utf8_prefix(&want) };
                        assert_eq!(
                            String::from_utf8_lossy(&got),
                            String::from_utf8_lossy(&want[..expect]),
                            "{t}->{d} step {step} at {n}"
                        );
                        ctx.fed = ctx.ids.len() - 1; // the next draft pass feeds the rest
                    }
                }
            }
        }
    }

    #[test]
    fn committed_proposals_stay_and_rejected_ones_go() {
        let (target, draft) = (tok("mistral-tiny"), tok("qwen2-tiny"));
        let pair = Pair::new(target, draft, vec![2], vec![151645], target.len());
        let prompt = draft.encode("Ala ma", false).unwrap();
        let mut ctx = DraftContext::new(prompt.clone());
        let out1 = target.encode(" kota", false).unwrap();
        ctx.resync(&pair, &out1, 8).unwrap();
        let synced = ctx.ids.clone();
        // The draft proposes " i psa", the target commits " i" and then " k".
        let props = draft.encode(" i psa", false).unwrap();
        ctx.ids.extend_from_slice(&props);
        ctx.fed = ctx.ids.len() - 1;
        let mut out2 = out1.clone();
        out2.extend(target.encode(" i k", false).unwrap());
        let r = ctx.resync(&pair, &out2, 8).unwrap();
        assert_eq!(r.proposals_committed, 1, "only ' i' was committed as drafted");
        assert_eq!(&ctx.ids[..synced.len() + 1], &[synced.as_slice(), &props[..1]].concat()[..]);
        assert_eq!(r.keep, synced.len() + 1, "the cache keeps the prompt, ' kota' and ' i'");
        assert_eq!(bytes_of(draft, ctx.synced_output()), b" kota i k");
    }

    #[test]
    fn identical_vocabularies_take_target_ids_as_they_are() {
        let t = tok("llama3-tiny");
        let pair = Pair::new(t, t, vec![128009], vec![128009], t.len());
        let mut ctx = DraftContext::new(vec![128000, 9906]);
        ctx.fed = 1;
        ctx.ids.extend([11, 12, 13]); // proposals
        ctx.fed = 4;
        let r = ctx.resync(&pair, &[11, 12, 99], 8).unwrap();
        assert_eq!(r.proposals_committed, 2);
        assert_eq!(ctx.ids, vec![128000, 9906, 11, 12, 99]);
        assert_eq!(r.keep, 4);
    }

    #[test]
    fn specials_cross_as_specials() {
        let (target, draft) = (tok("llama3-tiny"), tok("qwen2-tiny"));
        let pair = Pair::new(target, draft, vec![128009], vec![151645], target.len());
        let mut ctx = DraftContext::new(vec![9707]);
        let mut out = target.encode(" a", false).unwrap();
        out.push(128009);
        out.push(128002); // reserved special the draft does not have: invisible
        out.extend(target.encode(" b", false).unwrap());
        ctx.resync(&pair, &out, 8).unwrap();
        let synced = ctx.synced_output().to_vec();
        assert!(synced.contains(&151645));
        assert_eq!(bytes_of(draft, &synced), b" a b");
    }
}
