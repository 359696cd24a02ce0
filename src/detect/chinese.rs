//! Simplified or Traditional Chinese, by the characters written differently in the two.

/// Frequent characters of Simplified Chinese whose Traditional form differs (们 for 們, 这 for 這).
const SIMPLIFIED: &str = "们这来个国说会时为对过还发后么学经现没点开长问题间见关动种东车书门话马头认让觉实样业电听记语万与两进边气给号写买卖钱难页爱岁龙鸟鱼汉亲应该从";
/// The Traditional forms of the same characters, in the same order.
const TRADITIONAL: &str = "們這來個國說會時為對過還發後麼學經現沒點開長問題間見關動種東車書門話馬頭認讓覺實樣業電聽記語萬與兩進邊氣給號寫買賣錢難頁愛歲龍鳥魚漢親應該從";

/// `Hant` when `text` holds more characters peculiar to Traditional Chinese than to Simplified,
/// else `Hans` (most Chinese written today, and what a text without either kind is taken for).
pub fn chinese_script(text: &str) -> &'static str {
    let (mut simplified, mut traditional) = (0usize, 0usize);
    for c in text.chars() {
        if SIMPLIFIED.contains(c) {
            simplified += 1;
        } else if TRADITIONAL.contains(c) {
            traditional += 1;
        }
    }
    if traditional > simplified { "Hant" } else { "Hans" }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_two_lists_pair_up_and_never_overlap() {
        assert_eq!(SIMPLIFIED.chars().count(), TRADITIONAL.chars().count());
        for (s, t) in SIMPLIFIED.chars().zip(TRADITIONAL.chars()) {
            assert_ne!(s, t);
            assert!(!TRADITIONAL.contains(s) && !SIMPLIFIED.contains(t), "{s} / {t}");
        }
    }

    #[test]
    fn tells_the_scripts_apart() {
        assert_eq!(chinese_script("我们这个时候还没有来。"), "Hans");
        assert_eq!(chinese_script("我們這個時候還沒有來。"), "Hant");
        assert_eq!(chinese_script("你好"), "Hans");
    }
}
