//! The cleaning Firefox applies to text before translating it (its engine worker's `cleanText`),
//! where it applies here. Firefox also cuts the spacing at both ends and puts it back around the
//! result (done per line and per piece by the pipeline), and, for ja/ko/zh sources, inserts a
//! space between `。！？` and `“` so that its sentence splitter cuts there (done by `sentences`
//! without changing the text).

use std::borrow::Cow;

/// The text as sent to the translator: without soft hyphens (U+00AD), which are invisible but
/// would reach the model as bytes and split words.
pub(crate) fn for_translator(text: &str) -> Cow<'_, str> {
    if text.contains('\u{AD}') { Cow::Owned(text.replace('\u{AD}', "")) } else { Cow::Borrowed(text) }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn drops_soft_hyphens_only() {
        assert_eq!(for_translator("in\u{AD}for\u{AD}ma\u{AD}ción - sí"), "información - sí");
        assert!(matches!(for_translator("nada que hacer"), Cow::Borrowed(_)));
    }
}
