//! HTML in, HTML out (`translate --html`, the server's `format: html`): the text of an HTML
//! fragment or page is translated and every byte of markup is kept.
//!
//! Text flows: HTML → `lol_html` (the HTML tokenizer of Cloudflare's streaming rewriter, which
//! reads malformed markup as a browser's tokenizer does) → runs of text between sentence
//! boundaries ([`scan`]), entities decoded → a posts translator with alignment (the social-post
//! pipeline: links, mentions, hashtags, emoji, spacing kept; the decoder's attention says which
//! source bytes each target piece translates) → inline markup placed on the translated words
//! ([`place`]), entities encoded → the same bytes around.
//!
//! | what | how |
//! | --- | --- |
//! | tags, attributes, comments, doctype, whitespace between blocks | written byte for byte, each once, in the source's order |
//! | block elements (`p`, `br`, `li`, `div`, headings, any tag not inline) | end a sentence: the text between two is translated as one post |
//! | inline elements (`b`, `i`, `em`, `strong`, `span`, `a`, `sub`...) | do not end a sentence; placed on the translated words aligned with the words they wrapped (see [`place`]) |
//! | `<img>`, `<wbr>`, comments inside a sentence | placed before the first translated word aligned at or after them |
//! | `script`, `style`, `textarea`, `title` and other raw text | not translated (only plain text data is) |
//! | `code`, `pre`, `kbd`, `samp`, `var`, `translate="no"`, `class="notranslate"` and their content | not translated; end a sentence |
//! | `<a>` whose text is a link, mention or hashtag; `span.h-card`, `.mention`, `.hashtag` | kept whole, like links in text (Mastodon's links split the URL over spans) |
//! | inline tags that do not pair up within a sentence (closed by a block's end tag, never closed, misnested) | stay where they were and end the sentence, as every tag did before |
//! | entities in translated text | decoded for the model; `&`, `<`, `>` encoded again, and any other character the source wrote as an entity written with that entity |
//!
//! A run without inline markup comes out exactly as its text translated alone.

mod place;
mod scan;

use crate::text::Aligned;
use place::Node;
use scan::{Kind, Token};

#[derive(Debug, thiserror::Error)]
pub enum HtmlError<E: std::error::Error + 'static> {
    #[error("the HTML could not be read: {0}")]
    Parse(String),
    #[error("translating the HTML's text")]
    Translate(#[source] E),
    #[error("the translator returned {got} translations for {expected} texts (a bug, please report it)")]
    Count { expected: usize, got: usize },
}

impl<E: std::error::Error + 'static> HtmlError<E> {
    pub fn is_usage(&self) -> bool {
        // The translator's own error is the next link of the chain.
        matches!(self, HtmlError::Parse(_))
    }
}

/// A run of the document (see [`scan`]): its bytes, its decoded text, the raw text it was
/// decoded from, and its inline markup over the text.
struct Run {
    bytes: std::ops::Range<usize>,
    text: String,
    raw: String,
    nodes: Vec<Node>,
}

impl Run {
    fn new(html: &str, tokens: &[Token], range: std::ops::Range<usize>) -> Run {
        let bytes = tokens[range.start].range.start..tokens[range.end - 1].range.end;
        let (mut text, mut raw) = (String::new(), String::new());
        // Open elements: start tag bytes, text offset, children so far.
        let mut stack: Vec<(std::ops::Range<usize>, usize, Vec<Node>)> = vec![(0..0, 0, Vec::new())];
        for t in &tokens[range] {
            let here = t.range.clone();
            match t.kind {
                Kind::Text { .. } => {
                    raw.push_str(&html[here.clone()]);
                    text.push_str(&decode(&html[here]));
                }
                Kind::Point => {
                    let at = text.len();
                    if let Some(top) = stack.last_mut() {
                        top.2.push(Node::Point { bytes: here, at });
                    }
                }
                Kind::Start { .. } => stack.push((here, text.len(), Vec::new())),
                Kind::End { .. } => {
                    // Runs pair every tag (scan::runs), so the stack holds its start.
                    if stack.len() > 1
                        && let Some((start, from, children)) = stack.pop()
                        && let Some(top) = stack.last_mut()
                    {
                        top.2.push(Node::Element { start, end: here, src: from..text.len(), children });
                    }
                }
            }
        }
        let nodes = stack.pop().map(|s| s.2).unwrap_or_default();
        Run { bytes, text, raw, nodes }
    }
}

fn decode(raw: &str) -> String {
    html_escape::decode_html_entities(raw).into_owned()
}

/// `translation` written back as HTML text: `&`, `<`, `>` encoded, and every other character
/// that `raw` (the source node) wrote as an entity written with that entity again.
fn encode(raw: &str, translation: &str) -> String {
    let mut out = html_escape::encode_text_minimal(translation).into_owned();
    let mut rest = raw;
    while let Some(start) = rest.find('&') {
        let after = &rest[start..];
        let Some(end) = after.find(';').filter(|&e| e <= 32) else {
            rest = &after[1..];
            continue;
        };
        let entity = &after[..=end];
        let decoded = decode(entity);
        if decoded != entity && !["&", "<", ">"].contains(&decoded.as_str()) && !decoded.trim().is_empty()
            || decoded == "\u{a0}"
        {
            out = out.replace(&decoded, entity);
        }
        rest = &after[end + 1..];
    }
    out
}

/// What translating HTML does with an element, by its name alone (see the table above): what
/// the server checks DeepL's `ignore_tags`, `splitting_tags` and `non_splitting_tags` against.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum TagRole {
    /// Its content is kept as it is (`code`, `pre`, `script`...).
    Untranslated,
    /// Inside a sentence (`b`, `a`, `span`...).
    Inline,
    /// Ends a sentence (`p`, `br`, `li`, and any tag not known to be inline).
    Block,
}

pub fn tag_role(name: &str) -> TagRole {
    scan::role(name)
}

/// The text of `html` that would be translated, run after run (for language identification).
pub fn text_content(html: &str) -> String {
    match scan::scan(html) {
        Ok(mut tokens) => {
            let runs = scan::runs(&mut tokens);
            runs.into_iter().map(|r| Run::new(html, &tokens, r).text).collect::<Vec<_>>().join(" ")
        }
        Err(_) => html.to_string(),
    }
}

/// Translates the text of `html` with `translate` (posts in, one aligned translation per post
/// out, as `Translator::translate_posts_aligned`), keeping all markup. One call to `translate`
/// for all runs with letters (none if there are none).
pub fn translate<E: std::error::Error + 'static>(
    html: &str,
    mut translate: impl FnMut(&[&str]) -> Result<Vec<Aligned>, E>,
) -> Result<String, HtmlError<E>> {
    let mut tokens = scan::scan(html).map_err(HtmlError::Parse)?;
    let runs: Vec<Run> = scan::runs(&mut tokens)
        .into_iter()
        .map(|r| Run::new(html, &tokens, r))
        .filter(|r| r.text.chars().any(char::is_alphabetic))
        .collect();
    if runs.is_empty() {
        return Ok(html.to_string());
    }
    let wanted: Vec<&str> = runs.iter().map(|r| r.text.as_str()).collect();
    let translations = translate(&wanted).map_err(HtmlError::Translate)?;
    if translations.len() != runs.len() {
        return Err(HtmlError::Count { expected: runs.len(), got: translations.len() });
    }
    let mut out = String::with_capacity(html.len() * 2);
    let mut pos = 0;
    for (run, translation) in runs.iter().zip(&translations) {
        out.push_str(&html[pos..run.bytes.start]);
        if run.nodes.is_empty() {
            out.push_str(&encode(&run.raw, &translation.text));
        } else {
            let encode = |t: &str| encode(&run.raw, t);
            place::render(html, &run.text, &translation.text, &translation.pieces, &run.nodes, &encode, &mut out);
        }
        pos = run.bytes.end;
    }
    out.push_str(&html[pos..]);
    Ok(out)
}

#[cfg(test)]
mod tests;
