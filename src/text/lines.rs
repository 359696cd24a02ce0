//! A post becomes lines; each line's terminator and its leading and trailing spacing are kept
//! byte for byte and never shown to the translator.

use std::ops::Range;

/// Splits `text` into lines: `(line, terminator)` byte ranges, covering `text` exactly. A line
/// ends at LF, CRLF, a lone CR, or the other mandatory breaks of UAX #14 (VT, FF, NEL, U+2028,
/// U+2029); the last line has an empty terminator. `"a\n"` gives two lines, the second empty.
pub(crate) fn split(text: &str) -> Vec<(Range<usize>, Range<usize>)> {
    let mut lines = Vec::new();
    let mut start = 0;
    let mut chars = text.char_indices().peekable();
    while let Some((i, c)) = chars.next() {
        let end = match c {
            '\r' if chars.peek().is_some_and(|&(_, n)| n == '\n') => {
                chars.next();
                i + 2
            }
            c if is_break(c) => i + c.len_utf8(),
            _ => continue,
        };
        lines.push((start..i, i..end));
        start = end;
    }
    lines.push((start..text.len(), text.len()..text.len()));
    lines
}

/// Whether `c` ends a line (CR, LF and the other mandatory breaks of UAX #14).
pub(crate) fn is_break(c: char) -> bool {
    matches!(c, '\n' | '\r' | '\u{0B}' | '\u{0C}' | '\u{85}' | '\u{2028}' | '\u{2029}')
}

/// `range` without the whitespace at its two ends, as `(leading, core, trailing)`.
pub(crate) fn trim(text: &str, range: Range<usize>) -> (Range<usize>, Range<usize>, Range<usize>) {
    let s = &text[range.clone()];
    let core_start = range.start + (s.len() - s.trim_start().len());
    let core_end = range.start + s.trim_end().len();
    if core_start >= core_end {
        // Only spacing: all of it is leading, so nothing is sent.
        return (range.clone(), range.end..range.end, range.end..range.end);
    }
    (range.start..core_start, core_start..core_end, core_end..range.end)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn pieces(text: &str) -> Vec<(&str, &str)> {
        split(text).into_iter().map(|(l, t)| (&text[l], &text[t])).collect()
    }

    #[test]
    fn keeps_every_kind_of_line_break() {
        assert_eq!(pieces("a"), [("a", "")]);
        assert_eq!(pieces(""), [("", "")]);
        assert_eq!(pieces("a\nb"), [("a", "\n"), ("b", "")]);
        assert_eq!(pieces("a\r\n\r\nb\r\n"), [("a", "\r\n"), ("", "\r\n"), ("b", "\r\n"), ("", "")]);
        assert_eq!(pieces("a\rb\u{2028}c\n\n"), [("a", "\r"), ("b", "\u{2028}"), ("c", "\n"), ("", "\n"), ("", "")]);
        assert_eq!(pieces("\r\r\n"), [("", "\r"), ("", "\r\n"), ("", "")]);
    }

    #[test]
    fn trims_unicode_spacing() {
        let t = " \t\u{a0}hola  mundo \u{3000}";
        let (a, b, c) = trim(t, 0..t.len());
        assert_eq!((&t[a], &t[b], &t[c]), (" \t\u{a0}", "hola  mundo", " \u{3000}"));
        let t = "  \t ";
        let (a, b, c) = trim(t, 0..t.len());
        assert_eq!((&t[a], &t[b], &t[c]), ("  \t ", "", ""));
    }
}
