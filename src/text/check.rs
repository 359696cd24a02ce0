//! What every translation of a post keeps, whatever the translator did: the same line breaks,
//! the same spacing at both ends of every line, and (unless raw) every link, e-mail address and
//! emoji byte for byte in order and every hashtag, on the line where it was. Tests use it on every
//! engine; a caller can use it to count damaged outputs.

use std::fmt;

use super::{emoji, hashtags, lines, links};

/// One way a translation failed to keep its post's shape. Lines are numbered from 1.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Violation {
    /// The line terminators differ (then no line is compared).
    LineBreaks { source: Vec<String>, translation: Vec<String> },
    /// The spacing at the start of a line differs.
    Leading { line: usize, source: String, translation: String },
    /// The spacing at the end of a line differs.
    Trailing { line: usize, source: String, translation: String },
    /// A link, e-mail address, emoji or hashtag of the source line is missing from the translated one.
    Missing { line: usize, what: &'static str, text: String },
}

impl fmt::Display for Violation {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Violation::LineBreaks { source, translation } => {
                write!(f, "line breaks differ: source {source:?}, translation {translation:?}")
            }
            Violation::Leading { line, source, translation } => {
                write!(f, "line {line}: leading spacing {source:?} became {translation:?}")
            }
            Violation::Trailing { line, source, translation } => {
                write!(f, "line {line}: trailing spacing {source:?} became {translation:?}")
            }
            Violation::Missing { line, what, text } => {
                write!(f, "line {line}: {what} {text:?} is missing or out of order")
            }
        }
    }
}

/// Everything `translation` fails to keep of `source`; empty when all is well. With `raw`, links,
/// emoji and hashtags are not expected to survive.
pub fn violations(source: &str, translation: &str, raw: bool) -> Vec<Violation> {
    let src_lines = lines::split(source);
    let out_lines = lines::split(translation);
    let terminators = |text: &str, lines: &[(std::ops::Range<usize>, std::ops::Range<usize>)]| -> Vec<String> {
        lines.iter().map(|(_, t)| text[t.clone()].to_string()).collect()
    };
    let (src_breaks, out_breaks) = (terminators(source, &src_lines), terminators(translation, &out_lines));
    if src_breaks != out_breaks {
        return vec![Violation::LineBreaks { source: src_breaks, translation: out_breaks }];
    }
    let mut found = Vec::new();
    for (n, ((src, _), (out, _))) in src_lines.into_iter().zip(out_lines).enumerate() {
        let (src, out, line) = (&source[src], &translation[out], n + 1);
        let lead = |s: &str| s[..s.len() - s.trim_start().len()].to_string();
        let trail = |s: &str| s[s.trim_end().len()..].to_string();
        let (src_lead, out_lead) = (lead(src), lead(out));
        if src_lead != out_lead {
            found.push(Violation::Leading { line, source: src_lead, translation: out_lead });
        } else if trail(src) != trail(out) {
            found.push(Violation::Trailing { line, source: trail(src), translation: trail(out) });
        }
        if !raw {
            kept(src, out, line, &mut found);
        }
    }
    found
}

/// Links and emoji in source order, and hashtags anywhere on the line.
fn kept(src: &str, out: &str, line: usize, found: &mut Vec<Violation>) {
    let link_spans = links::find(src);
    let mut expected: Vec<(usize, &'static str, &str)> = Vec::new();
    let mut outside = String::new();
    let mut from = 0;
    for link in link_spans.iter().cloned().chain(std::iter::once(src.len()..src.len())) {
        let between = &src[from..link.start];
        expected.extend(emoji::find(between).into_iter().map(|e| (from + e.start, "emoji", &between[e])));
        outside.push_str(between);
        outside.push(' ');
        if !link.is_empty() {
            expected.push((link.start, "link", &src[link.clone()]));
        }
        from = link.end;
    }
    expected.sort_by_key(|&(at, _, _)| at);
    let mut pos = 0;
    for (_, what, text) in expected {
        match out[pos..].find(text) {
            Some(i) => pos += i + text.len(),
            None => found.push(Violation::Missing { line, what, text: text.to_string() }),
        }
    }
    let mut tags: Vec<&str> = hashtags::find(&outside).into_iter().map(|r| &outside[r]).collect();
    tags.sort_unstable();
    for group in tags.chunk_by(|a, b| a == b) {
        if out.matches(group[0]).count() < group.len() {
            found.push(Violation::Missing { line, what: "hashtag", text: group[0].to_string() });
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn accepts_a_faithful_translation() {
        let src = "  Hola @ana https://x.org/a?b=1 👍🏽 #UE\r\n\nAdiós.\t";
        let out = "  Hello @ana https://x.org/a?b=1 👍🏽 #UE\r\n\nGoodbye.\t";
        assert_eq!(violations(src, out, false), []);
    }

    #[test]
    fn names_what_was_lost() {
        let src = " a https://x.org/1 😀 #UE b\nc ";
        let v = violations(src, " a https://x.org/2 #ue b\nc", false);
        let text: Vec<String> = v.iter().map(ToString::to_string).collect();
        assert_eq!(
            text,
            [
                "line 1: link \"https://x.org/1\" is missing or out of order",
                "line 1: emoji \"😀\" is missing or out of order",
                "line 1: hashtag \"#UE\" is missing or out of order",
                "line 2: trailing spacing \" \" became \"\"",
            ]
        );
        assert!(matches!(violations(src, "x", false)[..], [Violation::LineBreaks { .. }]));
        assert!(matches!(violations("a b", " a b", true)[..], [Violation::Leading { line: 1, .. }]));
    }
}
