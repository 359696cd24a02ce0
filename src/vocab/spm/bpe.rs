//! The BPE model's merges (bpe_model.cc): the text split into characters (user-defined symbols
//! whole and never merged), then repeatedly the adjacent pair whose concatenation is the
//! highest-scoring piece merged (the leftmost on a tie), until no pair is a piece; a merge
//! into an UNUSED piece is undone at the end.

use std::cmp::Ordering;
use std::collections::{BinaryHeap, HashMap};

use super::{PieceType, SentencePiece};

struct Symbol {
    prev: i64,
    next: i64,
    freeze: bool,
    /// The symbol's bytes in the text (empty once merged into its left neighbour).
    start: usize,
    len: usize,
}

struct Pair {
    left: usize,
    right: usize,
    score: f32,
    size: usize,
}

impl PartialEq for Pair {
    fn eq(&self, o: &Self) -> bool {
        self.cmp(o) == Ordering::Equal
    }
}
impl Eq for Pair {}
impl PartialOrd for Pair {
    fn partial_cmp(&self, o: &Self) -> Option<Ordering> {
        Some(self.cmp(o))
    }
}
impl Ord for Pair {
    /// The library's queue order: the higher score first, then the lower left index.
    fn cmp(&self, o: &Self) -> Ordering {
        self.score.total_cmp(&o.score).then_with(|| o.left.cmp(&self.left))
    }
}

/// The merges into UNUSED pieces, to undo: by text, as the library keys them (a later merge
/// into the same text replaces an earlier one).
struct Rev<'t> {
    text: &'t [u8],
    map: HashMap<&'t [u8], (&'t [u8], &'t [u8])>,
}

impl<'t> Rev<'t> {
    fn insert(&mut self, whole: std::ops::Range<usize>, (l, r): (std::ops::Range<usize>, std::ops::Range<usize>)) {
        let t = self.text;
        self.map.insert(&t[whole], (&t[l], &t[r]));
    }
}

impl SentencePiece {
    /// The piece id of an ordinary piece's text (the library's `pieces_`).
    fn ordinary(&self, s: &[u8]) -> Option<u32> {
        self.trie.get(s)
    }

    pub(super) fn bpe(&self, text: &str) -> Vec<(usize, u32)> {
        let b = text.as_bytes();
        if b.is_empty() {
            return Vec::new();
        }
        let mut symbols: Vec<Symbol> = Vec::with_capacity(b.len());
        let mut at = 0;
        while at < b.len() {
            let user = self.normalizer_user_prefix(&b[at..]);
            let len = user.unwrap_or_else(|| super::unigram::char_len(b[at]).min(b.len() - at));
            let i = symbols.len() as i64;
            symbols.push(Symbol {
                prev: i - 1,
                next: if at + len < b.len() { i + 1 } else { -1 },
                freeze: user.is_some(),
                start: at,
                len,
            });
            at += len;
        }
        let mut agenda = BinaryHeap::new();
        let mut rev_merge = Rev { text: b, map: HashMap::new() };
        let add = |symbols: &[Symbol], agenda: &mut BinaryHeap<Pair>, rev: &mut Rev<'_>, l: i64, r: i64| {
            if l < 0 || r < 0 {
                return;
            }
            let (ls, rs) = (&symbols[l as usize], &symbols[r as usize]);
            if ls.freeze || rs.freeze {
                return;
            }
            let size = ls.len + rs.len;
            let Some(id) = self.ordinary(&b[ls.start..ls.start + size]) else { return };
            agenda.push(Pair { left: l as usize, right: r as usize, score: self.score(id), size });
            if self.piece_type(id) == Some(PieceType::Unused) {
                rev.insert(ls.start..ls.start + size, (ls.start..ls.start + ls.len, rs.start..rs.start + rs.len));
            }
        };
        for i in 1..symbols.len() as i64 {
            add(&symbols, &mut agenda, &mut rev_merge, i - 1, i);
        }
        while let Some(top) = agenda.pop() {
            let (l, r) = (&symbols[top.left], &symbols[top.right]);
            if l.len == 0 || r.len == 0 || l.len + r.len != top.size {
                continue;
            }
            let next = r.next;
            symbols[top.left].len = top.size;
            symbols[top.left].next = next;
            if next >= 0 {
                symbols[next as usize].prev = top.left as i64;
            }
            symbols[top.right].len = 0;
            let prev = symbols[top.left].prev;
            add(&symbols, &mut agenda, &mut rev_merge, prev, top.left as i64);
            add(&symbols, &mut agenda, &mut rev_merge, top.left as i64, next);
        }
        let mut out = Vec::new();
        let mut i = 0i64;
        while i >= 0 {
            let s = &symbols[i as usize];
            self.resegment(&b[s.start..s.start + s.len], &rev_merge.map, &mut out);
            i = s.next;
        }
        out
    }

    fn resegment<'t>(&self, w: &'t [u8], rev: &HashMap<&'t [u8], (&'t [u8], &'t [u8])>, out: &mut Vec<(usize, u32)>) {
        let id = self.piece_to_id(std::str::from_utf8(w).unwrap_or_default());
        if self.piece_type(id) == Some(PieceType::Unused)
            && let Some(&(l, r)) = rev.get(w)
        {
            self.resegment(l, rev, out);
            self.resegment(r, rev, out);
            return;
        }
        out.push((w.len(), id));
    }

    fn normalizer_user_prefix(&self, b: &[u8]) -> Option<usize> {
        self.user.longest_prefix(b).map(|(len, _)| len)
    }
}
