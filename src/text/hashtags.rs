//! #hashtags. Like mentions they stay in the text the model sees when they sit inside a sentence
//! ("el #Brexit es..."), and go back to their original spelling in order when the translation has
//! as many; unlike mentions they are never lost: any hashtag of the source missing from the
//! translation is appended to it. Hashtags at the edges of a sentence (the usual trailing list)
//! never reach the model (see `edges`).

use std::ops::Range;

use super::mentions::{handle_len, is_handle_char, replace_in_order};

/// Byte ranges of the hashtags of a source text: `#` (not after a letter, digit, `_`, `#` or `&`,
/// so "C#" and "&#39;" are not tags) then handle characters including at least one letter.
pub(crate) fn find(text: &str) -> Vec<Range<usize>> {
    let mut found = Vec::new();
    let mut from = 0;
    while let Some(hash) = text[from..].find('#').map(|i| from + i) {
        from = hash + 1;
        if text[..hash].chars().next_back().is_some_and(|c| is_handle_char(c) || c == '#' || c == '&') {
            continue;
        }
        let len = handle_len(&text[hash + 1..]);
        if text[hash + 1..hash + 1 + len].chars().any(char::is_alphabetic) {
            from = hash + 1 + len;
            found.push(hash..from);
        }
    }
    found
}

/// Hashtags as a translation may spell them: `#`, perhaps one space, then handle characters.
fn find_in_output(text: &str) -> Vec<Range<usize>> {
    let mut found = Vec::new();
    let mut from = 0;
    while let Some(hash) = text[from..].find('#').map(|i| from + i) {
        from = hash + 1;
        let gap = usize::from(text[hash + 1..].starts_with(' '));
        let len = handle_len(&text[hash + 1 + gap..]);
        if len > 0 {
            from = hash + 1 + gap + len;
            found.push(hash..from);
        }
    }
    found
}

/// Puts the source's hashtags back into `output`: in order when the counts agree, and any that
/// are still missing are appended, after a space.
pub(crate) fn restore(source: &str, output: String) -> String {
    let wanted = find(source);
    if wanted.is_empty() {
        return output;
    }
    let got = find_in_output(&output);
    let mut restored = if wanted.len() == got.len() {
        replace_in_order(&output, &got, wanted.iter().map(|r| &source[r.clone()]))
    } else {
        output
    };
    let mut present: Vec<String> = find(&restored).into_iter().map(|r| restored[r].to_string()).collect();
    let mut missing = Vec::new();
    for tag in wanted.iter().map(|r| &source[r.clone()]) {
        match present.iter().position(|p| p == tag) {
            Some(i) => {
                present.swap_remove(i);
            }
            None => missing.push(tag),
        }
    }
    for tag in missing {
        if !restored.is_empty() && !restored.ends_with(char::is_whitespace) {
            restored.push(' ');
        }
        restored.push_str(tag);
    }
    restored
}

#[cfg(test)]
mod tests {
    use super::*;

    fn tags(text: &str) -> Vec<&str> {
        find(text).into_iter().map(|r| &text[r]).collect()
    }

    #[test]
    fn finds_tags_with_accents_digits_and_underscores() {
        assert_eq!(
            tags("#UE #Presupuesto2026 #última_hora #PolíticaAgraria"),
            ["#UE", "#Presupuesto2026", "#última_hora", "#PolíticaAgraria"]
        );
        assert_eq!(tags("(#Brexit), #1 C# &#39; ##x #"), ["#Brexit"]);
    }

    #[test]
    fn restores_in_order_or_appends_the_lost_ones() {
        let src = "El #Brexit y la #UE";
        assert_eq!(restore(src, "The # brexit and the #EU".into()), "The #Brexit and the #UE");
        assert_eq!(restore(src, "The #brexit and the EU".into()), "The #brexit and the EU #Brexit #UE");
        assert_eq!(
            restore(src, "#Brexit, #Brexit, #brexit and the EU".into()),
            "#Brexit, #Brexit, #brexit and the EU #UE"
        );
        assert_eq!(restore(src, String::new()), "#Brexit #UE");
        assert_eq!(restore("Sin etiquetas", "No #tags".into()), "No #tags");
    }
}
