//! How the target's and the draft's tokenizers cut the same text: tokens per word, and how
//! many of the target's token boundaries the draft's tokens share. Cross-tokenizer drafting
//! loses where the boundaries differ (a draft token ending inside a target token cannot be
//! verified until the rest of that token is drafted), so these explain acceptance.

use serde::Serialize;

use super::tokens::TextTokenizer;

/// Over a set of texts (a report takes the prompts and the target's outputs).
#[derive(Clone, Debug, Default, PartialEq, Serialize)]
pub struct Segmentation {
    /// Whitespace-separated words.
    pub words: u64,
    pub target_tokens: u64,
    pub draft_tokens: u64,
    pub target_tokens_per_word: Option<f64>,
    pub draft_tokens_per_word: Option<f64>,
    /// Byte offsets inside the texts where a target token ends.
    pub target_boundaries: u64,
    /// Of those, the ones where a draft token ends too.
    pub shared_boundaries: u64,
    /// `shared_boundaries / target_boundaries`: 1 for the same tokenizer.
    pub shared_boundary_rate: Option<f64>,
}

/// Byte offsets strictly inside `text` where one of `tokenizer`'s tokens ends, found by decoding
/// every prefix of the encoding. A prefix whose text is not a prefix of `text` (a byte-level
/// token ending inside a character decodes to U+FFFD) marks no boundary.
fn boundaries<T: TextTokenizer + ?Sized>(tokenizer: &T, text: &str) -> (u64, Vec<usize>) {
    let Ok(ids) = tokenizer.encode(text, false) else {
        return (0, Vec::new());
    };
    let mut out = Vec::new();
    for i in 1..ids.len() {
        if let Ok(t) = tokenizer.decode(&ids[..i])
            && !t.is_empty()
            && t.len() < text.len()
            && text.starts_with(&t)
        {
            out.push(t.len());
        }
    }
    out.dedup();
    (ids.len() as u64, out)
}

/// Measures `texts` under both tokenizers.
pub fn measure<TT, DT>(target: &TT, draft: &DT, texts: &[&str]) -> Segmentation
where
    TT: TextTokenizer + ?Sized,
    DT: TextTokenizer + ?Sized,
{
    let mut s = Segmentation::default();
    for text in texts {
        s.words += text.split_whitespace().count() as u64;
        let (nt, bt) = boundaries(target, text);
        let (nd, bd) = boundaries(draft, text);
        s.target_tokens += nt;
        s.draft_tokens += nd;
        s.target_boundaries += bt.len() as u64;
        s.shared_boundaries += bt.iter().filter(|b| bd.binary_search(b).is_ok()).count() as u64;
    }
    let per = |n: u64, d: u64| (d > 0).then(|| n as f64 / d as f64);
    s.target_tokens_per_word = per(s.target_tokens, s.words);
    s.draft_tokens_per_word = per(s.draft_tokens, s.words);
    s.shared_boundary_rate = per(s.shared_boundaries, s.target_boundaries);
    s
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::speculate::testutil::tok;

    #[test]
    fn the_same_tokenizer_shares_every_boundary_and_others_fewer() {
        let text = "Rzeczpospolita Polska jest państwem w Europie Środkowej.";
        let m = tok("mistral-tiny");
        let s = measure(m, m, &[text]);
        assert_eq!(s.words, 7);
        assert_eq!(s.target_tokens, s.draft_tokens);
        assert!(s.target_boundaries > 7, "{s:?}");
        assert_eq!(s.shared_boundary_rate, Some(1.0));
        let q = measure(m, tok("qwen2-tiny"), &[text]);
        assert_eq!(q.target_boundaries, s.target_boundaries);
        // Word ends are shared; pieces inside words mostly are not.
        assert!(q.shared_boundaries >= 6 && q.shared_boundaries < q.target_boundaries, "{q:?}");
        assert!(q.draft_tokens_per_word.unwrap() > 1.0);
    }
}
