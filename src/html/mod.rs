//! HTML in, HTML out (`translate --html`, the server's `format: html`): the text of an HTML
//! fragment or page is translated and every byte of markup is kept.
//!
//! Text flows: HTML → `lol_html` (the HTML tokenizer of Cloudflare's streaming rewriter, which
//! reads malformed markup as a browser's tokenizer does and writes everything it is not told to
//! change byte for byte) → text nodes, entities decoded → a posts translator (the social-post
//! pipeline: links, mentions, hashtags, emoji, spacing kept) → entities encoded → the same text
//! nodes, rewritten in place.
//!
//! | what | how |
//! | --- | --- |
//! | tags, attributes, comments, doctype, whitespace between tags | never touched: byte for byte |
//! | a text node | translated as one post; so every element boundary (block or inline) ends a sentence |
//! | `script`, `style`, `textarea`, `title` and other raw text | not translated (only plain text data is) |
//! | `code`, `pre`, `kbd`, `samp`, `var`, `translate="no"`, `class="notranslate"` and their content | not translated |
//! | `<a>` whose text is a link, mention or hashtag; `span.h-card`, `.mention`, `.hashtag` | kept whole, like links in text (Mastodon's links split the URL over spans) |
//! | entities in translated text | decoded for the model; `&`, `<`, `>` encoded again, and any other character the source wrote as an entity written with that entity |
//!
//! Inline markup (`b`, `em`, `a` around words) stays on the words it wrapped only as long as each
//! run of text between tags is translated on its own, which is what is done here: a sentence cut
//! by an inline tag is translated in pieces. Bergamot instead translates the whole sentence and
//! puts each tag back on the target words aligned (by the decoder's attention) with the source
//! words it wrapped; that needs the alignment out of the decoder, not yet available (see the
//! report in the commit).

use std::cell::RefCell;
use std::rc::Rc;

use lol_html::html_content::{ContentType, TextType};
use lol_html::{DocumentContentHandlers, HandlerResult, RewriteStrSettings, element, rewrite_str};

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

/// Elements whose content is never translated (code, preformatted text).
const NOT_TRANSLATED: &[&str] =
    &["code", "pre", "kbd", "samp", "var", "script", "style", "textarea", "template", "math", "svg"];

/// One text node of the document, as pass one saw it.
#[derive(Debug, Default)]
struct Node {
    /// The node's source bytes (entities not decoded).
    raw: String,
    /// Inside no element that forbids translation.
    translatable: bool,
    /// The outermost open `<a>` around it, by order of appearance.
    anchor: Option<usize>,
}

#[derive(Default)]
struct Scan {
    nodes: Vec<Node>,
    /// Text of the node being read (lol_html may hand a node over in several chunks).
    pending: String,
    /// Open elements that forbid translation.
    no_translate: usize,
    /// Open `<a>` elements (their numbers), outermost first.
    anchors: Vec<usize>,
    anchor_count: usize,
}

/// The decoded text of every translatable text node, and the nodes, from one read of `html`.
fn scan(html: &str) -> Result<Vec<Node>, String> {
    let state = Rc::new(RefCell::new(Scan::default()));
    let on_element = {
        let state = state.clone();
        move |el: &mut lol_html::html_content::Element| -> HandlerResult {
            let name = el.tag_name();
            let class = el.get_attribute("class").unwrap_or_default();
            let classes: Vec<&str> = class.split_ascii_whitespace().collect();
            let forbids = NOT_TRANSLATED.contains(&name.as_str())
                || el.get_attribute("translate").is_some_and(|v| v.trim().eq_ignore_ascii_case("no"))
                || classes.iter().any(|c| ["notranslate", "h-card", "mention", "hashtag"].contains(c));
            let anchor = name == "a";
            // Void elements (`br`, `img`) have no end tag, so no content to govern.
            let Some(handlers) = el.end_tag_handlers() else { return Ok(()) };
            {
                let mut s = state.borrow_mut();
                s.no_translate += forbids as usize;
                if anchor {
                    let n = s.anchor_count;
                    s.anchor_count += 1;
                    s.anchors.push(n);
                }
            }
            let state = state.clone();
            handlers.push(Box::new(move |_end| {
                let mut s = state.borrow_mut();
                s.no_translate -= forbids as usize;
                if anchor {
                    s.anchors.pop();
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
            s.pending.push_str(t.as_str());
            if t.last_in_text_node() {
                let raw = std::mem::take(&mut s.pending);
                let translatable = s.no_translate == 0 && t.text_type() == TextType::Data;
                let anchor = s.anchors.first().copied();
                s.nodes.push(Node { raw, translatable, anchor });
            }
            Ok(())
        }
    };
    rewrite_str(
        html,
        RewriteStrSettings::new()
            .append_element_content_handler(element!("*", on_element))
            .append_document_content_handler(DocumentContentHandlers::default().text(on_text)),
    )
    .map_err(|e| e.to_string())?;
    let mut scan = state.take();
    // An `<a>` whose whole text is a link, a mention or a hashtag is kept whole.
    for a in 0..scan.anchor_count {
        let text: String = scan.nodes.iter().filter(|n| n.anchor == Some(a)).map(|n| decode(&n.raw)).collect();
        let text = text.trim();
        let whole = text.starts_with(['@', '#']) && !text.contains(char::is_whitespace)
            || crate::text::prose(text).trim().is_empty();
        if whole {
            scan.nodes.iter_mut().filter(|n| n.anchor == Some(a)).for_each(|n| n.translatable = false);
        }
    }
    Ok(scan.nodes)
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

/// The text of `html` that would be translated, node after node (for language identification).
pub fn text_content(html: &str) -> String {
    match scan(html) {
        Ok(nodes) => nodes.iter().filter(|n| n.translatable).map(|n| decode(&n.raw)).collect::<Vec<_>>().join(" "),
        Err(_) => html.to_string(),
    }
}

/// Translates the text of `html` with `translate` (posts in, one translation per post out, as
/// `Translator::translate_posts` in `translate`), keeping all markup byte for byte. One
/// call to `translate` for all text nodes (none if there is no text).
pub fn translate<E: std::error::Error + 'static>(
    html: &str,
    mut translate: impl FnMut(&[&str]) -> Result<Vec<String>, E>,
) -> Result<String, HtmlError<E>> {
    let nodes = scan(html).map_err(HtmlError::Parse)?;
    let texts: Vec<String> = nodes.iter().filter(|n| n.translatable).map(|n| decode(&n.raw)).collect();
    let wanted: Vec<&str> = texts.iter().map(String::as_str).collect();
    let translations = if wanted.iter().any(|t| t.chars().any(char::is_alphabetic)) {
        translate(&wanted).map_err(HtmlError::Translate)?
    } else {
        texts.clone()
    };
    if translations.len() != texts.len() {
        return Err(HtmlError::Count { expected: texts.len(), got: translations.len() });
    }
    let mut out_texts = translations.into_iter();
    let replacements: Vec<Option<String>> =
        nodes.iter().map(|n| n.translatable.then(|| out_texts.next()).flatten().map(|t| encode(&n.raw, &t))).collect();
    // Pass two sees the same text nodes in the same order: the same tokenizer over the same bytes.
    let index = Rc::new(RefCell::new(0usize));
    let on_text = move |t: &mut lol_html::html_content::TextChunk| -> HandlerResult {
        let n = *index.borrow();
        if let Some(Some(new)) = replacements.get(n) {
            if t.last_in_text_node() {
                t.replace(new, ContentType::Html);
            } else {
                t.remove();
            }
        }
        if t.last_in_text_node() {
            *index.borrow_mut() += 1;
        }
        Ok(())
    };
    rewrite_str(
        html,
        RewriteStrSettings::new().append_document_content_handler(DocumentContentHandlers::default().text(on_text)),
    )
    .map_err(|e| HtmlError::Parse(e.to_string()))
}

#[cfg(test)]
mod tests;
