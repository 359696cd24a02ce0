//! Inline markup on the translated words, from the decoder's alignment, after Bergamot's
//! `html.cpp`, with one difference: every tag comes out once, in its place.
//!
//! 1. The translation is cut into *words*: each aligned piece starts one, except that a piece
//!    continuing a word (no space or delimiter `\n ,.(){}[]` between them, Bergamot's
//!    `isContinuation`) joins the word before it. A word takes the source of its piece of
//!    highest weight, or of the later piece when that one's elements extend the earlier one's
//!    (Bergamot's `hardAlignments`), so the pieces of one word never get different markup.
//! 2. An element wraps the words aligned with the source text it wrapped: from the first to the
//!    last such word, inside its parent's words and after its previous sibling's. Bergamot
//!    reopens a tag over every run of aligned words instead, which duplicates it; here the tag
//!    sequence stays the source's, so a word the model moved across a sibling's stays outside.
//! 3. An element none of whose words survived, a void element (`<img>`) and a comment go after
//!    the word aligned with the source word just before them (before the one aligned with the
//!    source word just after them, if none is before), still after their previous sibling.
//! 4. A word's leading whitespace stays outside the tags that open on it, and closing tags go
//!    right after a word, before the whitespace that follows (Bergamot's `TokenFormatter`).

use std::ops::Range;

use crate::text::AlignedPiece;

/// The markup of a run, as a tree over its plain text.
#[derive(Clone, Debug, PartialEq)]
pub(super) enum Node {
    /// An element: its start and end tags (bytes of the document), the text it wrapped (bytes
    /// of the run's text) and what it holds.
    Element { start: Range<usize>, end: Range<usize>, src: Range<usize>, children: Vec<Node> },
    /// A comment or void element at a place in the run's text.
    Point { bytes: Range<usize>, at: usize },
}

impl Node {
    fn src(&self) -> Range<usize> {
        match self {
            Node::Element { src, .. } => src.clone(),
            Node::Point { at, .. } => *at..*at,
        }
    }
}

/// A word of the translation: its leading whitespace, its text, and the source bytes it is
/// aligned with.
#[derive(Clone, Debug, PartialEq)]
pub(super) struct Word {
    pub ws: Range<usize>,
    pub body: Range<usize>,
    pub src: Option<Range<usize>>,
}

/// Source bytes and weight of a piece.
type Source = (Range<usize>, f32);

const DELIMITERS: &str = "\n ,.(){}[]";

/// Whether `r` (source bytes of a word) is text `e` wrapped.
fn within(r: &Range<usize>, e: &Range<usize>) -> bool {
    if r.is_empty() { e.start <= r.start && r.start < e.end } else { r.start < e.end && e.start < r.end }
}

/// The elements (by preorder number) around source bytes `r`, outermost first.
fn stack(nodes: &[Node], r: &Range<usize>) -> Vec<usize> {
    fn walk(nodes: &[Node], r: &Range<usize>, n: &mut usize, out: &mut Vec<usize>) {
        for node in nodes {
            let me = *n;
            *n += 1;
            if let Node::Element { src, children, .. } = node {
                if within(r, src) {
                    out.push(me);
                }
                walk(children, r, n, out);
            }
        }
    }
    let mut out = Vec::new();
    walk(nodes, r, &mut 0, &mut out);
    out
}

/// The words of translation `text` from its aligned `pieces` (step 1), and the whitespace
/// after the last one.
pub(super) fn words(text: &str, pieces: &[AlignedPiece], nodes: &[Node]) -> (Vec<Word>, Range<usize>) {
    // Where each piece starts, moved to a character boundary (a piece cut inside a character
    // joins the one before): the cuts between pieces, which lose no byte of the text.
    let boundary = |mut i: usize| {
        while !text.is_char_boundary(i) {
            i += 1;
        }
        i
    };
    let mut pieces: Vec<AlignedPiece> = pieces
        .iter()
        .filter(|p| p.target.start < p.target.end && p.target.end <= text.len())
        .map(|p| AlignedPiece { target: boundary(p.target.start)..p.target.end, ..p.clone() })
        .filter(|p| p.target.start < text.len())
        .collect();
    pieces.sort_by_key(|p| p.target.start);
    pieces.dedup_by_key(|p| p.target.start);
    // Each piece reaches to the next one's start; text before the first is aligned with nothing.
    let mut cuts: Vec<(Range<usize>, Option<Source>)> = Vec::new();
    let first = pieces.first().map_or(text.len(), |p| p.target.start);
    if first > 0 {
        cuts.push((0..first, None));
    }
    for (i, p) in pieces.iter().enumerate() {
        let end = pieces.get(i + 1).map_or(text.len(), |n| n.target.start);
        cuts.push((p.target.start..end, Some((p.source.clone(), p.score))));
    }
    let mut words: Vec<Word> = Vec::new();
    let mut scores: Vec<f32> = Vec::new();
    let mut ws_start = 0;
    for (range, src) in cuts {
        let chunk = &text[range.clone()];
        let body =
            range.start + (chunk.len() - chunk.trim_start().len())..range.end - (chunk.len() - chunk.trim_end().len());
        if body.is_empty() {
            continue;
        }
        let continues = body.start == ws_start
            && words.last().is_some_and(|w| {
                !text[w.body.clone()].ends_with(|c| DELIMITERS.contains(c))
                    && !text[body.clone()].starts_with(|c| DELIMITERS.contains(c))
            });
        let (src, score) = match src {
            Some((s, score)) => (Some(s), score),
            None => (None, 0.0),
        };
        if continues && let (Some(last), Some(prev_score)) = (words.last_mut(), scores.last_mut()) {
            last.body.end = body.end;
            let take = match (&last.src, &src) {
                (Some(p), Some(c)) => {
                    let (ps, cs) = (stack(nodes, p), stack(nodes, c));
                    cs.starts_with(&ps) || score >= *prev_score
                }
                (None, Some(_)) => true,
                _ => false,
            };
            if take {
                last.src = src;
                *prev_score = score;
            }
        } else {
            words.push(Word { ws: ws_start..body.start, body: body.clone(), src });
            scores.push(score);
        }
        ws_start = body.end;
    }
    (words, ws_start..text.len())
}

/// A node with the words it is placed on (step 2, 3): `lo..hi`, empty for points and elements
/// placed on no word; those go after `ws` bytes of word `lo`'s leading whitespace.
#[derive(Debug)]
struct Placed<'a> {
    node: &'a Node,
    lo: usize,
    hi: usize,
    ws: usize,
    children: Vec<Placed<'a>>,
}

/// Places `nodes` (siblings, in source order) on words `lo..hi`; `source` is the run's text.
fn place<'a>(nodes: &'a [Node], words: &[Word], source: &str, lo: usize, hi: usize) -> Vec<Placed<'a>> {
    let mut cursor = lo;
    let mut out = Vec::with_capacity(nodes.len());
    for node in nodes {
        let src = node.src();
        let aligned = |w: &Word| w.src.as_ref().is_some_and(|s| within(s, &src));
        let first = (cursor..hi).find(|&i| aligned(&words[i]));
        let last = (cursor..hi).rev().find(|&i| aligned(&words[i]));
        let (a, b, ws) = match (node, first, last) {
            (Node::Element { .. }, Some(f), Some(l)) => (f, l + 1, 0),
            _ => {
                let (at, ws) = point(words, source, cursor, hi, src.start);
                (at, at, ws)
            }
        };
        let children = match node {
            Node::Element { children, .. } => place(children, words, source, a, b),
            Node::Point { .. } => Vec::new(),
        };
        out.push(Placed { node, lo: a, hi: b, ws, children });
        cursor = b;
    }
    out
}

/// Where a point at source byte `at` goes among words `lo..hi`, and after how many bytes of
/// that word's leading whitespace: after the word aligned with the closest source before it
/// (after one space if the source had one before it), else right before the word aligned with
/// the closest source after it, else at the end.
fn point(words: &[Word], source: &str, lo: usize, hi: usize, at: usize) -> (usize, usize) {
    let src = |i: usize| words[i].src.clone();
    let ws_len = |i: usize| words.get(i).map_or(0, |w| w.ws.len());
    let before = (lo..hi).filter(|&i| src(i).is_some_and(|s| s.end <= at)).max_by_key(|&i| src(i).map(|s| s.end));
    if let Some(i) = before {
        let spaced = source.get(..at).is_some_and(|s| s.ends_with(' '));
        // Only a space (one byte) is split off; other whitespace stays in one piece.
        let ws = if spaced && i + 1 < hi && ws_len(i + 1) > 1 { 1 } else { 0 };
        return (i + 1, ws);
    }
    let after = (lo..hi).filter(|&i| src(i).is_some_and(|s| s.start >= at)).min_by_key(|&i| src(i).map(|s| s.start));
    match after {
        Some(i) => (i, ws_len(i)),
        None => (hi, 0),
    }
}

/// Writes the run: its words (`text`, entity-encoded by `encode`) with the markup placed on them.
pub(super) fn render(
    html: &str,
    source: &str,
    text: &str,
    pieces: &[AlignedPiece],
    nodes: &[Node],
    encode: &dyn Fn(&str) -> String,
    out: &mut String,
) {
    let (words, tail) = words(text, pieces, nodes);
    let placed = place(nodes, &words, source, 0, words.len());
    let mut w = Writer { html, text, words: &words, encode, out, ws_done: (0, 0) };
    w.nodes(&placed, 0, words.len());
    let tail = (w.encode)(&text[tail]);
    out.push_str(&tail);
}

struct Writer<'a> {
    html: &'a str,
    text: &'a str,
    words: &'a [Word],
    encode: &'a dyn Fn(&str) -> String,
    out: &'a mut String,
    /// The word whose leading whitespace is being written, and how many bytes of it are.
    ws_done: (usize, usize),
}

impl Writer<'_> {
    /// Word `i`'s leading whitespace up to `upto` bytes.
    fn ws_to(&mut self, i: usize, upto: usize) {
        let Some(word) = self.words.get(i) else { return };
        let from = if self.ws_done.0 == i { self.ws_done.1 } else { 0 };
        let upto = upto.min(word.ws.len());
        if from < upto {
            let ws = word.ws.start + from..word.ws.start + upto;
            let s = (self.encode)(&self.text[ws]);
            self.out.push_str(&s);
        }
        self.ws_done = (i, from.max(upto));
    }

    fn ws(&mut self, i: usize) {
        self.ws_to(i, usize::MAX);
    }

    fn words(&mut self, range: Range<usize>) {
        for i in range {
            self.ws(i);
            let s = (self.encode)(&self.text[self.words[i].body.clone()]);
            self.out.push_str(&s);
        }
    }

    fn nodes(&mut self, placed: &[Placed], lo: usize, hi: usize) {
        let mut cursor = lo;
        for p in placed {
            self.words(cursor..p.lo);
            if p.lo == p.hi {
                self.ws_to(p.lo, p.ws);
            } else {
                self.ws(p.lo);
            }
            match p.node {
                Node::Point { bytes, .. } => self.out.push_str(&self.html[bytes.clone()]),
                Node::Element { start, end, .. } => {
                    self.out.push_str(&self.html[start.clone()]);
                    self.nodes(&p.children, p.lo, p.hi);
                    self.out.push_str(&self.html[end.clone()]);
                }
            }
            cursor = p.hi;
        }
        self.words(cursor..hi);
    }
}
