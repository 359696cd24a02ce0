//! The languages reseam identifies and what lingua's rules know of them: their alphabets, the
//! characters only one of them writes, the characters only a few write. The tables are lingua-rs
//! 1.8.0's (src/language.rs, src/constant.rs; Apache-2.0, © Peter M. Stahl), kept for these 51.

use super::script::Alphabet;

/// A language, by its index in [`LANGUAGES`] (lingua's order, which breaks ties between equal scores).
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub(crate) struct Language(pub(crate) u8);

/// A set of languages, one bit each (there are fewer than 64).
pub(crate) type LanguageSet = u64;

impl Language {
    pub(crate) fn all() -> impl Iterator<Item = Language> {
        (0..LANGUAGES.len() as u8).map(Language)
    }

    pub(crate) fn bit(self) -> LanguageSet {
        1 << self.0
    }

    pub(crate) fn name(self) -> &'static str {
        LANGUAGES[self.0 as usize].0
    }

    /// ISO 639-1 code (`nb` for Bokmål, `zh` for Chinese).
    pub(crate) fn iso_639_1(self) -> &'static str {
        LANGUAGES[self.0 as usize].1
    }

    pub(crate) fn iso_639_3(self) -> &'static str {
        LANGUAGES[self.0 as usize].2
    }

    pub(crate) fn alphabets(self) -> &'static [Alphabet] {
        LANGUAGES[self.0 as usize].3
    }

    /// Characters no other language of lingua's writes; empty for most.
    pub(crate) fn unique_characters(self) -> &'static str {
        LANGUAGES[self.0 as usize].4
    }

    pub(crate) fn from_iso_639_1(code: &str) -> Option<Language> {
        Language::all().find(|l| l.iso_639_1() == code)
    }

    pub(crate) fn by_name(name: &str) -> Option<Language> {
        Language::all().find(|l| l.name() == name)
    }

    pub(crate) const CHINESE: Language = Language(9);
    pub(crate) const JAPANESE: Language = Language(27);
}

/// The members of a set, in order.
pub(crate) fn members(set: LanguageSet) -> impl Iterator<Item = Language> {
    Language::all().filter(move |l| set & l.bit() != 0)
}

/// (name, ISO 639-1, ISO 639-3, alphabets, characters only it writes), in lingua's order (by name).
pub(super) const LANGUAGES: &[(&str, &str, &str, &[Alphabet], &str)] = &[
    ("Albanian", "sq", "sqi", &[Alphabet::Latin], ""),
    ("Arabic", "ar", "ara", &[Alphabet::Arabic], ""),
    ("Azerbaijani", "az", "aze", &[Alphabet::Latin], "Əə"),
    ("Belarusian", "be", "bel", &[Alphabet::Cyrillic], ""),
    ("Bengali", "bn", "ben", &[Alphabet::Bengali], ""),
    ("Bokmal", "nb", "nob", &[Alphabet::Latin], ""),
    ("Bosnian", "bs", "bos", &[Alphabet::Latin], ""),
    ("Bulgarian", "bg", "bul", &[Alphabet::Cyrillic], ""),
    ("Catalan", "ca", "cat", &[Alphabet::Latin], "Ïï"),
    ("Chinese", "zh", "zho", &[Alphabet::Han], ""),
    ("Croatian", "hr", "hrv", &[Alphabet::Latin], ""),
    ("Czech", "cs", "ces", &[Alphabet::Latin], "ĚěŘřŮů"),
    ("Danish", "da", "dan", &[Alphabet::Latin], ""),
    ("Dutch", "nl", "nld", &[Alphabet::Latin], ""),
    ("English", "en", "eng", &[Alphabet::Latin], ""),
    ("Estonian", "et", "est", &[Alphabet::Latin], ""),
    ("Finnish", "fi", "fin", &[Alphabet::Latin], ""),
    ("French", "fr", "fra", &[Alphabet::Latin], ""),
    ("German", "de", "deu", &[Alphabet::Latin], "ß"),
    ("Greek", "el", "ell", &[Alphabet::Greek], ""),
    ("Gujarati", "gu", "guj", &[Alphabet::Gujarati], ""),
    ("Hebrew", "he", "heb", &[Alphabet::Hebrew], ""),
    ("Hindi", "hi", "hin", &[Alphabet::Devanagari], ""),
    ("Hungarian", "hu", "hun", &[Alphabet::Latin], "ŐőŰű"),
    ("Icelandic", "is", "isl", &[Alphabet::Latin], ""),
    ("Indonesian", "id", "ind", &[Alphabet::Latin], ""),
    ("Italian", "it", "ita", &[Alphabet::Latin], ""),
    ("Japanese", "ja", "jpn", &[Alphabet::Hiragana, Alphabet::Katakana, Alphabet::Han], ""),
    ("Korean", "ko", "kor", &[Alphabet::Hangul], ""),
    ("Latvian", "lv", "lav", &[Alphabet::Latin], "ĢģĶķĻļŅņ"),
    ("Lithuanian", "lt", "lit", &[Alphabet::Latin], "ĖėĮįŲų"),
    ("Malay", "ms", "msa", &[Alphabet::Latin], ""),
    ("Nynorsk", "nn", "nno", &[Alphabet::Latin], ""),
    ("Persian", "fa", "fas", &[Alphabet::Arabic], ""),
    ("Polish", "pl", "pol", &[Alphabet::Latin], "ŁłŃńŚśŹź"),
    ("Portuguese", "pt", "por", &[Alphabet::Latin], ""),
    ("Romanian", "ro", "ron", &[Alphabet::Latin], "Țţ"),
    ("Russian", "ru", "rus", &[Alphabet::Cyrillic], ""),
    ("Serbian", "sr", "srp", &[Alphabet::Cyrillic], "ЂђЋћ"),
    ("Slovak", "sk", "slk", &[Alphabet::Latin], "ĹĺĽľŔŕ"),
    ("Slovene", "sl", "slv", &[Alphabet::Latin], ""),
    ("Spanish", "es", "spa", &[Alphabet::Latin], "¿¡"),
    ("Swedish", "sv", "swe", &[Alphabet::Latin], ""),
    ("Tamil", "ta", "tam", &[Alphabet::Tamil], ""),
    ("Telugu", "te", "tel", &[Alphabet::Telugu], ""),
    ("Thai", "th", "tha", &[Alphabet::Thai], ""),
    ("Turkish", "tr", "tur", &[Alphabet::Latin], ""),
    ("Ukrainian", "uk", "ukr", &[Alphabet::Cyrillic], "ҐґЄєЇї"),
    ("Urdu", "ur", "urd", &[Alphabet::Arabic], ""),
    (
        "Vietnamese",
        "vi",
        "vie",
        &[Alphabet::Latin],
        "ẰằẦầẲẳẨẩẴẵẪẫẮắẤấẠạẶặẬậỀềẺẻỂểẼẽỄễẾếỆệỈỉĨĩỊịƠơỒồỜờỎỏỔổỞởỖỗỠỡỐốỚớỘộỢợƯưỪừỦủỬửŨũỮữỨứỤụỰựỲỳỶỷỸỹỴỵ",
    ),
    ("Welsh", "cy", "cym", &[Alphabet::Latin], ""),
];

/// Characters that only a few languages write, and those languages (by name).
pub(super) const CHARS_TO_LANGUAGES: &[(&str, &[&str])] = &[
    ("Ãã", &["Portuguese", "Vietnamese"]),
    ("ĄąĘę", &["Lithuanian", "Polish"]),
    ("Żż", &["Polish", "Romanian"]),
    ("Îî", &["French", "Romanian"]),
    ("Ññ", &["Spanish"]),
    ("ŇňŤť", &["Czech", "Slovak"]),
    ("Ăă", &["Romanian", "Vietnamese"]),
    ("İıĞğ", &["Azerbaijani", "Turkish"]),
    ("ЈјЉљЊњ", &["Serbian"]),
    ("ẸẹỌọ", &["Vietnamese"]),
    ("ÐðÞþ", &["Icelandic", "Turkish"]),
    ("Ûû", &["French", "Hungarian"]),
    ("ĀāĒēĪī", &["Latvian"]),
    ("Şş", &["Azerbaijani", "Romanian", "Turkish"]),
    ("Ďď", &["Czech", "Romanian", "Slovak"]),
    ("Ćć", &["Bosnian", "Croatian", "Polish"]),
    ("Đđ", &["Bosnian", "Croatian", "Vietnamese"]),
    ("Іі", &["Belarusian", "Ukrainian"]),
    ("Ìì", &["Italian", "Vietnamese"]),
    ("Øø", &["Bokmal", "Danish", "Nynorsk"]),
    ("Ūū", &["Latvian", "Lithuanian"]),
    ("Ëë", &["Albanian", "Dutch", "French"]),
    ("ÈèÙù", &["French", "Italian", "Vietnamese"]),
    ("Êê", &["French", "Portuguese", "Vietnamese"]),
    ("Õõ", &["Estonian", "Hungarian", "Portuguese", "Vietnamese"]),
    ("Ôô", &["French", "Portuguese", "Slovak", "Vietnamese"]),
    ("ЁёЫыЭэ", &["Belarusian", "Russian"]),
    ("ЩщЪъ", &["Bulgarian", "Russian"]),
    ("Òò", &["Catalan", "Italian", "Vietnamese"]),
    ("Ââ", &["French", "Portuguese", "Romanian", "Turkish", "Vietnamese"]),
    ("Ææ", &["Bokmal", "Danish", "Icelandic", "Nynorsk"]),
    ("Åå", &["Bokmal", "Danish", "Nynorsk", "Swedish"]),
    ("Ýý", &["Czech", "Icelandic", "Slovak", "Turkish", "Vietnamese"]),
    ("Ää", &["Estonian", "Finnish", "German", "Slovak", "Swedish"]),
    ("Àà", &["Catalan", "French", "Italian", "Portuguese", "Vietnamese"]),
    ("Üü", &["Azerbaijani", "Catalan", "Estonian", "German", "Hungarian", "Spanish", "Turkish"]),
    ("ČčŠšŽž", &["Bosnian", "Czech", "Croatian", "Latvian", "Lithuanian", "Slovak", "Slovene"]),
    ("Çç", &["Albanian", "Azerbaijani", "Catalan", "French", "Portuguese", "Turkish"]),
    ("Öö", &["Azerbaijani", "Estonian", "Finnish", "German", "Hungarian", "Icelandic", "Swedish", "Turkish"]),
    ("Óó", &["Catalan", "Hungarian", "Icelandic", "Polish", "Portuguese", "Slovak", "Spanish", "Vietnamese"]),
    ("ÁáÍíÚú", &["Catalan", "Czech", "Icelandic", "Hungarian", "Portuguese", "Slovak", "Spanish", "Vietnamese"]),
    (
        "Éé",
        &[
            "Catalan",
            "Czech",
            "French",
            "Hungarian",
            "Icelandic",
            "Italian",
            "Portuguese",
            "Slovak",
            "Spanish",
            "Vietnamese",
        ],
    ),
];
