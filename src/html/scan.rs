//! One read of the document: its text nodes, tags and comments with their bytes, and the runs of
//! text that are translated together.
//!
//! A *run* is what the model reads as one post: the text between two sentence boundaries, with
//! the inline elements (`b`, `em`, `a`, `span`...) and comments inside it. Boundaries are every
//! other tag (`p`, `br`, `li`, `div`, unknown ones), elements whose content is not translated
//! (with all they hold), elements kept whole (links, mentions, hashtags), any bytes the tokenizer
//! reports as none of these (a doctype, a stray end tag), and inline tags that do not pair up
//! inside one run (an element closed by `</p>`, never closed, or closed across another).

use std::cell::RefCell;
use std::ops::Range;
use std::rc::Rc;

use lol_html::html_content::TextType;
use lol_html::{DocumentContentHandlers, HandlerResult, RewriteStrSettings, element, rewrite_str};

/// Elements whose content is never translated (code, preformatted text).
const NOT_TRANSLATED: &[&str] =
    &["code", "pre", "kbd", "samp", "var", "script", "style", "textarea", "template", "math", "svg"];

/// Elements inside a sentence (Bergamot's `inlineTags`, plus a few of the same kind): they do
/// not end it, and are placed on the translated words they wrapped. `img` and `wbr` are void.
const INLINE: &[&str] = &[
    "a", "abbr", "b", "bdi", "bdo", "cite", "del", "dfn", "em", "font", "i", "img", "ins", "mark", "output", "q",
    "ruby", "s", "small", "span", "strike", "strong", "sub", "sup", "time", "u", "wbr",
];

/// How an element named `name` (any case) is treated: [`super::TagRole`].
pub(super) fn role(name: &str) -> super::TagRole {
    let name = name.to_ascii_lowercase();
    if NOT_TRANSLATED.contains(&name.as_str()) {
        super::TagRole::Untranslated
    } else if INLINE.contains(&name.as_str()) {
        super::TagRole::Inline
    } else {
        super::TagRole::Block
    }
}

#[derive(Clone, Debug, PartialEq)]
pub(super) enum Kind {
    /// A text node; `translatable` when inside nothing that forbids it and not raw text.
    Text { translatable: bool },
    /// A start tag; `end` is the token of its end tag, if it has one.
    Start { end: Option<usize> },
    /// An end tag and the token of its start tag.
    End { start: usize },
    /// A comment or a void element (`img`, `br`): a point between words.
    Point,
}

#[derive(Clone, Debug)]
pub(super) struct Token {
    /// The token's bytes in the document.
    pub range: Range<usize>,
    pub kind: Kind,
    /// Inside a run (placed by alignment) rather than a boundary.
    pub inline: bool,
    /// A void inline element (`img`, `wbr`): placed as a point, like a comment.
    pub void: bool,
    /// The outermost open `<a>` around it, by order of appearance.
    anchor: Option<usize>,
}

#[derive(Default)]
struct State {
    tokens: Vec<Token>,
    /// Start of the text node being read (lol_html may hand a node over in several chunks).
    pending: Option<Range<usize>>,
    no_translate: usize,
    anchors: Vec<usize>,
    anchor_count: usize,
    /// Token of each `<a>`, by number.
    anchor_tokens: Vec<usize>,
}

impl State {
    fn push(&mut self, token: Token) -> usize {
        self.tokens.push(token);
        self.tokens.len() - 1
    }
}

/// The document's tokens in order, boundaries marked (see the module doc).
pub(super) fn scan(html: &str) -> Result<Vec<Token>, String> {
    let state = Rc::new(RefCell::new(State::default()));
    let on_element = {
        let state = state.clone();
        move |el: &mut lol_html::html_content::Element| -> HandlerResult {
            let name = el.tag_name();
            let class = el.get_attribute("class").unwrap_or_default();
            let classes: Vec<&str> = class.split_ascii_whitespace().collect();
            let forbids = NOT_TRANSLATED.contains(&name.as_str())
                || el.get_attribute("translate").is_some_and(|v| v.trim().eq_ignore_ascii_case("no"))
                || classes.iter().any(|c| ["notranslate", "h-card", "mention", "hashtag"].contains(c));
            let range = el.source_location().bytes();
            let mut s = state.borrow_mut();
            let inline = INLINE.contains(&name.as_str()) && !forbids && s.no_translate == 0;
            let anchor = s.anchors.first().copied();
            // Void elements (`br`, `img`) have no end tag, so no content to govern.
            let Some(handlers) = el.end_tag_handlers() else {
                s.push(Token { range, kind: Kind::Point, inline, void: true, anchor });
                return Ok(());
            };
            let start = s.push(Token { range, kind: Kind::Start { end: None }, inline, void: false, anchor });
            s.no_translate += forbids as usize;
            let is_anchor = name == "a";
            if is_anchor {
                let n = s.anchor_count;
                s.anchor_count += 1;
                s.anchors.push(n);
                s.anchor_tokens.push(start);
            }
            drop(s);
            let state = state.clone();
            handlers.push(Box::new(move |end| {
                let mut s = state.borrow_mut();
                s.no_translate -= forbids as usize;
                if is_anchor {
                    s.anchors.pop();
                }
                let range = end.source_location().bytes();
                // An end tag the tokenizer made up (an element closed by another's) has no bytes.
                if !range.is_empty() {
                    let anchor = s.tokens[start].anchor;
                    let e = s.push(Token { range, kind: Kind::End { start }, inline, void: false, anchor });
                    s.tokens[start].kind = Kind::Start { end: Some(e) };
                }
                Ok(())
            }));
            Ok(())
        }
    };
    let on_text = {
        let state = state.clone();
        move |t: &mut lol_html::html_content::TextChunk| -> HandlerResult {
            let mut s = state.borrow_mut();
            let here = t.source_location().bytes();
            let range = match s.pending.take() {
                Some(p) => p.start..here.end.max(p.end),
                None => here,
            };
            if t.last_in_text_node() {
                let translatable = s.no_translate == 0 && t.text_type() == TextType::Data;
                let anchor = s.anchors.first().copied();
                if !range.is_empty() {
                    s.push(Token {
                        range,
                        kind: Kind::Text { translatable },
                        inline: translatable,
                        void: false,
                        anchor,
                    });
                }
            } else {
                s.pending = Some(range);
            }
            Ok(())
        }
    };
    let on_comment = {
        let state = state.clone();
        move |c: &mut lol_html::html_content::Comment| -> HandlerResult {
            let mut s = state.borrow_mut();
            let inline = s.no_translate == 0;
            let anchor = s.anchors.first().copied();
            s.push(Token { range: c.source_location().bytes(), kind: Kind::Point, inline, void: true, anchor });
            Ok(())
        }
    };
    rewrite_str(
        html,
        RewriteStrSettings::new()
            .append_element_content_handler(element!("*", on_element))
            .append_document_content_handler(DocumentContentHandlers::default().text(on_text).comments(on_comment)),
    )
    .map_err(|e| e.to_string())?;
    let State { mut tokens, anchor_tokens, .. } = state.take();
    // An `<a>` whose whole text is a link, a mention or a hashtag is kept whole.
    for (a, &start) in anchor_tokens.iter().enumerate() {
        let text: String = tokens
            .iter()
            .filter(|t| t.anchor == Some(a) && matches!(t.kind, Kind::Text { .. }))
            .map(|t| super::decode(&html[t.range.clone()]))
            .collect();
        let text = text.trim();
        let whole = text.starts_with(['@', '#']) && !text.contains(char::is_whitespace)
            || crate::text::prose(text).trim().is_empty();
        if whole {
            for t in tokens.iter_mut().filter(|t| t.anchor == Some(a)) {
                t.inline = false;
                if let Kind::Text { translatable } = &mut t.kind {
                    *translatable = false;
                }
            }
            tokens[start].inline = false;
            if let Kind::Start { end: Some(e) } = tokens[start].kind {
                tokens[e].inline = false;
            }
        }
    }
    Ok(order(tokens))
}

/// The tokens by position (end tags are recorded after their content), indices fixed up.
fn order(tokens: Vec<Token>) -> Vec<Token> {
    let mut by_pos: Vec<usize> = (0..tokens.len()).collect();
    by_pos.sort_by_key(|&i| (tokens[i].range.start, tokens[i].range.end));
    let mut new_index = vec![0; tokens.len()];
    for (n, &i) in by_pos.iter().enumerate() {
        new_index[i] = n;
    }
    by_pos
        .into_iter()
        .map(|i| {
            let mut t = tokens[i].clone();
            t.kind = match t.kind {
                Kind::Start { end } => Kind::Start { end: end.map(|e| new_index[e]) },
                Kind::End { start } => Kind::End { start: new_index[start] },
                k => k,
            };
            t
        })
        .collect()
}

/// The runs of `tokens`: ranges of token indices, each inline tag paired inside its run and
/// properly nested. Tags that cannot be are made boundaries first.
pub(super) fn runs(tokens: &mut [Token]) -> Vec<Range<usize>> {
    loop {
        let runs = split(tokens);
        let mut changed = false;
        for run in &runs {
            let mut open: Vec<usize> = Vec::new();
            for i in run.clone() {
                match tokens[i].kind {
                    Kind::Start { end } if !tokens[i].void => match end {
                        Some(e) if run.contains(&e) && tokens[e].inline => open.push(i),
                        _ => {
                            unpair(tokens, i);
                            changed = true;
                        }
                    },
                    Kind::End { start } => {
                        if open.last() == Some(&start) {
                            open.pop();
                        } else {
                            // Closed across another element (`<b><i>x</b></i>`).
                            unpair(tokens, start);
                            for &o in &open {
                                unpair(tokens, o);
                            }
                            open.clear();
                            changed = true;
                        }
                    }
                    _ => {}
                }
            }
            for &o in &open {
                unpair(tokens, o);
                changed = true;
            }
        }
        if !changed {
            return runs;
        }
    }
}

fn unpair(tokens: &mut [Token], start: usize) {
    tokens[start].inline = false;
    if let Kind::Start { end: Some(e) } = tokens[start].kind {
        tokens[e].inline = false;
    }
}

/// Maximal sequences of inline tokens with no bytes between them.
fn split(tokens: &[Token]) -> Vec<Range<usize>> {
    let mut runs = Vec::new();
    let mut start: Option<usize> = None;
    for i in 0..tokens.len() {
        let joined = i > 0 && tokens[i - 1].range.end == tokens[i].range.start;
        if start.is_some() && (!tokens[i].inline || !joined) {
            runs.push(start.take().unwrap_or(i)..i);
        }
        if tokens[i].inline && start.is_none() {
            start = Some(i);
        }
    }
    if let Some(s) = start {
        runs.push(s..tokens.len());
    }
    runs
}
