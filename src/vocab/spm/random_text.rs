//! Random strings for the comparison with the C++ library: words and the characters
//! normalization treats specially, mixed.

pub struct Gen(u64);

const POOLS: &[&str] = &[
    "abcdefghijklmnopqrstuvwxyz ABCDEFGHIJKLMNOPQRSTUVWXYZ áéíóúñüç ÁÉÍÓÚÑ 0123456789 .,;:!?¿¡'\"()-",
    " \t\n\r\u{a0}\u{1680}\u{2000}\u{2001}\u{2002}\u{2003}\u{2009}\u{200a}\u{200b}\u{200c}\u{200d}\u{2028}\u{2029}\u{202f}\u{205f}\u{3000}\u{feff}\u{ad}",
    "\u{0}\u{1}\u{7}\u{8}\u{b}\u{c}\u{1b}\u{7f}\u{80}\u{85}\u{9f}\u{200e}\u{200f}\u{202a}\u{202e}\u{2060}\u{fff9}\u{fffc}\u{fffd}",
    "！＂＃＄％＆＇（）＊＋，－．／０１２３４５６７８９：；＜＝＞？＠ＡＢＣＺａｂｃｚ［＼］＾＿｀｛｜｝～｡｢｣､･ｦｧｱｶﾞﾟﾊ",
    "ﬁﬂﬀﬃ℃№™Ω①⑩⑴⒜ⓐ㈠㍿㎏¹²³₀₁ⅠⅫⅰ½¼…ªºſµǅĲŉ𝐀𝑎𝔄𝟘",
    "\u{300}\u{301}\u{302}\u{303}\u{308}\u{327}\u{338}\u{20dd}\u{20e3}\u{3099}\u{309a}\u{e31}\u{e48}\u{94d}\u{5b0}\u{64b}",
    "😀🔥👍🏽👩‍💻❤️☺️✌🏿🇪🇸🏳️‍🌈1️⃣🫠\u{fe0e}\u{fe0f}\u{1f3fb}\u{200d}",
    "مرحبا بالعالم שָׁלוֹם سلام ہیلو ١٢٣ ﻻ ﷲ",
    "你好世界我們這個時候還沒有來これは日本語の文ですカタカナひらがな한국어문장ㄱㄴᄀᄁ「」【】、。漢字𠀀",
    "Москва Київ Ελλάδα ΑΘΗΝΑ İstanbul straße Łódź",
];

const WORDS: &[&str] = &[
    "el",
    "la",
    "de",
    "que",
    "the",
    "of",
    "and",
    "España",
    "niño",
    "corazón",
    "Zürich",
    "https://x.org/a?b=c",
    "@user",
    "#tag",
    "▁",
    "<unk>",
    "</s>",
    "<s>",
    "<0x41>",
    " ⁇ ",
    "\\ud800",
    "don't",
    "C++",
];

impl Gen {
    pub fn new(seed: u64) -> Gen {
        Gen(seed)
    }

    fn next(&mut self) -> usize {
        self.0 = self.0.wrapping_mul(6364136223846793005).wrapping_add(1442695040888963407);
        (self.0 >> 33) as usize
    }

    fn char_of(&mut self, pool: &str) -> char {
        let n = pool.chars().count();
        let k = self.next() % n;
        pool.chars().nth(k).unwrap_or(' ')
    }

    pub fn text(&mut self) -> String {
        let mut s = String::new();
        let parts = 1 + self.next() % 12;
        for _ in 0..parts {
            match self.next() % 4 {
                0 => s.push_str(WORDS[self.next() % WORDS.len()]),
                1 => {
                    let pool = POOLS[self.next() % POOLS.len()];
                    for _ in 0..1 + self.next() % 6 {
                        s.push(self.char_of(pool));
                    }
                }
                2 => s.push(' '),
                _ => {
                    // Any scalar value.
                    let c = char::from_u32((self.next() % 0x11_0000) as u32).unwrap_or('\u{fffd}');
                    s.push(c);
                }
            }
        }
        s
    }
}
