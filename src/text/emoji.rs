//! Emoji, found as whole grapheme clusters so that ZWJ sequences (👨‍👩‍👧‍👦), flags (🇪🇸, 🏴󠁧󠁢󠁳󠁣󠁴󠁿),
//! skin tones (👍🏽), keycaps (1️⃣) and variation selectors (❤️) stay in one piece.
//!
//! Emoji are cut out of the text like links and put back byte for byte. The models see emoji only
//! as byte-fallback pieces, which a small model reproduces unreliably (one wrong byte turns a
//! family into U+FFFD or into another emoji), and emoji rarely carry grammar, so translating the
//! text on either side on its own costs little and guarantees none is lost or changed.

use std::ops::Range;

use unicode_properties::{EmojiStatus, UnicodeEmoji};
use unicode_segmentation::UnicodeSegmentation;

/// Byte ranges of runs of emoji in `text` (adjacent emoji form one run), in order.
pub(crate) fn find(text: &str) -> Vec<Range<usize>> {
    let mut runs: Vec<Range<usize>> = Vec::new();
    if !text.chars().any(may_be_emoji) {
        return runs;
    }
    for (i, g) in text.grapheme_indices(true) {
        let start = if is_emoji(g) {
            i
        } else if let Some((k, _)) = g.char_indices().find(|&(_, c)| is_presentation(c)) {
            // A skin tone or other emoji component extending a non-emoji (" 🏽"): only the emoji part.
            i + k
        } else {
            continue;
        };
        match runs.last_mut() {
            Some(last) if last.end == start => last.end = i + g.len(),
            _ => runs.push(start..i + g.len()),
        }
    }
    runs
}

/// Whether `c` can make a grapheme an emoji or hold one. Below U+203C (‼) the only emoji
/// characters are `©`, `®` and ASCII digits, `#` and `*`, and those count only beside U+FE0F or
/// U+20E3, both above it (checked for every character below it in a test). So text with none of
/// these holds no emoji, and most posts skip the segmentation into graphemes (on the thread that
/// feeds the engine, which shares the cores with the compute threads).
fn may_be_emoji(c: char) -> bool {
    c >= '\u{203C}' || c == '©' || c == '®'
}

/// Whether one grapheme cluster is an emoji.
///
/// Text-style symbols that Unicode also lists as emoji (`©`, `®`, `™`, `‼`, arrows, digits, `#`)
/// count only with the emoji variation selector or a keycap, so that "Coca-Cola™" stays a word.
pub(crate) fn is_emoji(grapheme: &str) -> bool {
    let Some(first) = grapheme.chars().next() else { return false };
    if is_presentation(first) {
        return true;
    }
    if first.is_emoji_char() && grapheme.contains(['\u{FE0F}', '\u{20E3}']) {
        return true;
    }
    // Text-default pictographs (❤ ☺ ✈ ☀) are emoji in posts; the ones below U+2300 are
    // punctuation, letterlike symbols and arrows.
    first.emoji_status() == EmojiStatus::EmojiOther && first as u32 >= 0x2300
}

/// Characters shown as emoji by default, modifier bases (👍, ☝) and emoji components that are
/// pictures themselves (skin tones, regional indicators).
fn is_presentation(c: char) -> bool {
    matches!(
        c.emoji_status(),
        EmojiStatus::EmojiPresentation
            | EmojiStatus::EmojiModifierBase
            | EmojiStatus::EmojiPresentationAndModifierBase
            | EmojiStatus::EmojiPresentationAndEmojiComponent
            | EmojiStatus::EmojiPresentationAndModifierAndEmojiComponent
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    fn emoji(text: &str) -> Vec<&str> {
        find(text).into_iter().map(|r| &text[r]).collect()
    }

    #[test]
    fn finds_whole_sequences() {
        let family = "👨\u{200d}👩\u{200d}👧\u{200d}👦";
        let coder = "👩\u{200d}💻";
        let scotland = "🏴\u{E0067}\u{E0062}\u{E0073}\u{E0063}\u{E0074}\u{E007F}";
        assert_eq!(emoji(&format!("Hola {family} y {coder}.")), [family, coder]);
        assert_eq!(emoji("🇪🇸🇪🇺 vamos 👍🏽"), ["🇪🇸🇪🇺", "👍🏽"]);
        assert_eq!(emoji(&format!("x{scotland}y")), [scotland]);
        assert_eq!(emoji("Te quiero ❤️ y ❤ y ☕️"), ["❤️", "❤", "☕️"]);
        assert_eq!(emoji("pulsa 1️⃣ o #️⃣"), ["1️⃣", "#️⃣"]);
        assert_eq!(emoji("🔥🔥🔥😂 fin 🔥 🔥"), ["🔥🔥🔥😂", "🔥", "🔥"]);
        assert_eq!(emoji("tono suelto 🏽"), ["🏽"]);
        assert_eq!(emoji("x\u{FE0F} y ©\u{FE0F}"), ["©\u{FE0F}"]);
    }

    #[test]
    fn no_character_below_the_first_that_may_be_emoji_makes_one() {
        for c in ('\0'..'\u{203C}').filter(|&c| !may_be_emoji(c)) {
            assert!(!is_presentation(c), "{c:?}");
            assert!(!is_emoji(&c.to_string()), "{c:?}");
            let status = c.emoji_status();
            let component = c == '\u{200D}' && status == EmojiStatus::NonEmojiButEmojiComponent; // the joiner
            assert!(status == EmojiStatus::NonEmoji || component || c.is_ascii(), "{c:?} is {status:?}");
            // The only emoji characters left are ASCII's keycap bases, which need U+FE0F or U+20E3.
            assert!(!c.is_emoji_char() || c.is_ascii(), "{c:?}");
        }
        assert!('‼'.is_emoji_char() && '©'.is_emoji_char() && '®'.is_emoji_char());
        assert_eq!(emoji("Hola, ¿qué tal? Años: 1 # 2 * 3 «ñ» €"), Vec::<&str>::new());
        assert_eq!(emoji("a © b"), Vec::<&str>::new());
        assert_eq!(emoji("pulsa 1\u{FE0F}\u{20E3}"), ["1\u{FE0F}\u{20E3}"]);
    }

    #[test]
    fn text_symbols_are_not_emoji() {
        for text in ["Coca-Cola™ ©2026 ®", "¿¡Qué‼", "1 # 2 * 3", "a ↔ b", "…", "«»", "€ 3,5", "中文。"]
        {
            assert_eq!(emoji(text), Vec::<&str>::new(), "{text:?}");
        }
    }
}
