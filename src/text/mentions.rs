//! @mentions. They stay in the text the model translates (they are often the subject or object
//! of the sentence), and afterwards each one in the translation goes back to the original handle,
//! in order, when the translation has as many as the source; otherwise the model's output stands.
//! Mentions at the edges of a sentence never reach the model at all (see `edges`).

use std::ops::Range;

use unicode_properties::{GeneralCategoryGroup, UnicodeGeneralCategory};

/// A character that may appear in a handle or hashtag: letters, digits, marks and `_`.
pub(crate) fn is_handle_char(c: char) -> bool {
    c.is_alphanumeric() || c == '_' || c.general_category_group() == GeneralCategoryGroup::Mark
}

/// Length in bytes of the run of handle characters at the start of `s`.
pub(crate) fn handle_len(s: &str) -> usize {
    s.char_indices().find(|&(_, c)| !is_handle_char(c)).map_or(s.len(), |(i, _)| i)
}

/// Byte ranges of the mentions in a source text: `@` (not after a letter, digit, `_` or `@`)
/// then a handle, whose parts may be joined by single dots (`@ana.garcia`), optionally followed
/// by `@host.domain` (fediverse: `@ana@mastodon.social`). A trailing dot is not part of it.
pub(crate) fn find(text: &str) -> Vec<Range<usize>> {
    let mut found = Vec::new();
    let mut from = 0;
    while let Some(at) = text[from..].find('@').map(|i| from + i) {
        from = at + 1;
        if text[..at].chars().next_back().is_some_and(|c| is_handle_char(c) || c == '@') {
            continue;
        }
        let mut end = dotted_len(&text[at + 1..], '.');
        if end == 0 {
            continue;
        }
        end += at + 1;
        if text[end..].starts_with('@') {
            let host = dotted_len(&text[end + 1..], '-');
            if text[end + 1..end + 1 + host].contains('.') {
                end += 1 + host;
            }
        }
        found.push(at..end);
        from = end;
    }
    found
}

/// Length of `word(.word)*` at the start of `s`; with `extra = '-'` dots and hyphens both join
/// (host names).
fn dotted_len(s: &str, extra: char) -> usize {
    let mut len = handle_len(s);
    if len == 0 {
        return 0;
    }
    loop {
        let rest = &s[len..];
        let Some(sep) = rest.chars().next().filter(|&c| c == '.' || c == extra) else { return len };
        let next = handle_len(&rest[sep.len_utf8()..]);
        if next == 0 {
            return len;
        }
        len += sep.len_utf8() + next;
    }
}

/// Mentions as a translation may spell them: any `@` followed by a handle, allowing one space
/// after the `@` (SentencePiece detokenisation sometimes puts one there) and any character
/// before it.
pub(crate) fn find_in_output(text: &str) -> Vec<Range<usize>> {
    let mut found = Vec::new();
    let mut from = 0;
    while let Some(at) = text[from..].find('@').map(|i| from + i) {
        from = at + 1;
        let gap = usize::from(text[at + 1..].starts_with(' '));
        let len = dotted_len(&text[at + 1 + gap..], '.');
        if len > 0 {
            from = at + 1 + gap + len;
            found.push(at..from);
        }
    }
    found
}

/// Puts the source's mentions back into `output` when the counts agree; else returns `output`.
pub(crate) fn restore(source: &str, output: String) -> String {
    let wanted = find(source);
    let got = find_in_output(&output);
    if wanted.is_empty() || wanted.len() != got.len() {
        return output;
    }
    replace_in_order(&output, &got, wanted.iter().map(|r| &source[r.clone()]))
}

/// `output` with each range of `spans` (in order, not overlapping) replaced by the next of `with`.
pub(crate) fn replace_in_order<'a>(
    output: &str,
    spans: &[Range<usize>],
    with: impl Iterator<Item = &'a str>,
) -> String {
    let mut restored = String::with_capacity(output.len());
    let mut pos = 0;
    for (span, original) in spans.iter().zip(with) {
        restored.push_str(&output[pos..span.start]);
        restored.push_str(original);
        pos = span.end;
    }
    restored.push_str(&output[pos..]);
    restored
}

#[cfg(test)]
mod tests {
    use super::*;

    fn mentions(text: &str) -> Vec<&str> {
        find(text).into_iter().map(|r| &text[r]).collect()
    }

    #[test]
    fn finds_handles_of_every_network() {
        assert_eq!(mentions("RT @usuario_123: hola"), ["@usuario_123"]);
        assert_eq!(mentions("(@Parlamento_UE)"), ["@Parlamento_UE"]);
        assert_eq!(mentions("@_x_ y @ana.garcia."), ["@_x_", "@ana.garcia"]);
        assert_eq!(mentions("gracias @comisión!"), ["@comisión"]);
        assert_eq!(mentions("@ana@mastodon.social dice"), ["@ana@mastodon.social"]);
        assert_eq!(mentions("@ana@ no"), ["@ana"]);
        assert_eq!(mentions("a@b correo@x @ 5pm @@x @"), Vec::<&str>::new());
    }

    #[test]
    fn output_mentions_allow_a_space_after_the_at() {
        let out = "Thanks @ USUARIO_123 and to@ana, @";
        let got: Vec<&str> = find_in_output(out).into_iter().map(|r| &out[r]).collect();
        assert_eq!(got, ["@ USUARIO_123", "@ana"]);
    }

    #[test]
    fn restores_only_when_counts_agree() {
        let src = "Gracias @ana_1 y @Bob.";
        assert_eq!(restore(src, "Thanks @ANA_1 and @ bob.".into()), "Thanks @ana_1 and @Bob.");
        assert_eq!(restore(src, "Thanks @ana_1.".into()), "Thanks @ana_1.");
        assert_eq!(restore(src, "Thanks @a, @b and @c.".into()), "Thanks @a, @b and @c.");
        assert_eq!(restore("Sin menciones", "Without @x".into()), "Without @x");
    }
}
