//! The seam between text and the engine: a line becomes sentences and the gaps between them, and
//! the translations are joined back with those gaps. This is the deliberately simple version; the
//! social-post text pipeline replaces [`SimpleSplitter`] through the [`LineSplitter`] trait.

/// A line cut into sentences: `lead`, then each sentence followed by the text after it (the gap
/// before the next sentence, or the line's trailing whitespace after the last one).
#[derive(Debug, PartialEq, Eq)]
pub struct Segmented<'a> {
    pub lead: &'a str,
    pub sentences: Vec<(&'a str, &'a str)>,
}

impl Segmented<'_> {
    /// Puts translations (one per sentence) back between the original gaps.
    pub fn join(&self, translations: &[String]) -> String {
        let mut out = String::from(self.lead);
        for ((_, gap), t) in self.sentences.iter().zip(translations) {
            out.push_str(t);
            out.push_str(gap);
        }
        out
    }
}

/// Turns a line into sentences.
pub trait LineSplitter {
    /// `fits` tells whether a piece of text fits the model as one sentence.
    fn split<'a>(&self, line: &'a str, fits: &dyn Fn(&str) -> bool) -> Segmented<'a>;
}

/// Until the text pipeline lands: leading and trailing whitespace are kept aside (as Firefox's
/// engine worker does), and a line is one sentence, as Bergamot's `ssplit-mode: sentence` treats
/// it, unless it does not fit the model; then it is cut after sentence-final punctuation
/// (`. ! ? …` possibly followed by closing quotes or brackets) that is followed by whitespace.
/// Sentences that still do not fit are cut into chunks by the decoder.
#[derive(Clone, Copy, Debug, Default)]
pub struct SimpleSplitter;

fn is_final(c: char) -> bool {
    matches!(c, '.' | '!' | '?' | '…' | '。' | '！' | '？')
}

fn is_closing(c: char) -> bool {
    matches!(c, '"' | '\'' | ')' | ']' | '}' | '»' | '”' | '’')
}

impl LineSplitter for SimpleSplitter {
    fn split<'a>(&self, line: &'a str, fits: &dyn Fn(&str) -> bool) -> Segmented<'a> {
        let body = line.trim();
        if body.is_empty() {
            return Segmented { lead: line, sentences: Vec::new() };
        }
        let start = line.len() - line.trim_start().len();
        let end = start + body.len();
        let (lead, trail) = (&line[..start], &line[end..]);
        if fits(body) {
            return Segmented { lead, sentences: vec![(body, trail)] };
        }
        let mut sentences = Vec::new();
        let mut sent_start = 0;
        let chars: Vec<(usize, char)> = body.char_indices().collect();
        let mut i = 0;
        while i < chars.len() {
            if is_final(chars[i].1) {
                let mut j = i + 1;
                while j < chars.len() && (is_final(chars[j].1) || is_closing(chars[j].1)) {
                    j += 1;
                }
                if j < chars.len() && chars[j].1.is_whitespace() {
                    let sent_end = chars[j].0;
                    let mut k = j;
                    while k < chars.len() && chars[k].1.is_whitespace() {
                        k += 1;
                    }
                    let next = chars[k].0;
                    sentences.push((&body[sent_start..sent_end], &body[sent_end..next]));
                    sent_start = next;
                    i = k;
                    continue;
                }
                i = j;
                continue;
            }
            i += 1;
        }
        sentences.push((&body[sent_start..], trail));
        Segmented { lead, sentences }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn short_lines_are_one_sentence_with_their_spacing() {
        let s = SimpleSplitter.split("  Hola. Adiós.\t", &|_| true);
        assert_eq!(s, Segmented { lead: "  ", sentences: vec![("Hola. Adiós.", "\t")] });
        assert_eq!(s.join(&["Hi. Bye.".into()]), "  Hi. Bye.\t");
        assert_eq!(SimpleSplitter.split("   ", &|_| true).sentences.len(), 0);
    }

    #[test]
    fn long_lines_split_at_sentence_ends() {
        let line = "Uno (dos). ¿Tres?  «Cuatro.» Cinco";
        let s = SimpleSplitter.split(line, &|_| false);
        let texts: Vec<&str> = s.sentences.iter().map(|(t, _)| *t).collect();
        assert_eq!(texts, vec!["Uno (dos).", "¿Tres?", "«Cuatro.»", "Cinco"]);
        let out = s.join(&["1".into(), "2".into(), "3".into(), "4".into()]);
        assert_eq!(out, "1 2  3 4");
        // No split inside numbers or before non-space.
        let s = SimpleSplitter.split("Pi es 3.14 y e.g.x fin.", &|_| false);
        assert_eq!(s.sentences.len(), 1);
    }
}
