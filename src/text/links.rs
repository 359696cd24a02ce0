//! URLs and e-mail addresses: a URL with a scheme (`https://…`) is read by its own rule, whatever
//! its host; links without one and e-mail addresses are found with `linkify`, then corrected where
//! a reader would disagree with it. They are cut out of the text and put back byte for byte.

use std::ops::Range;

use linkify::{LinkFinder, LinkKind};

/// Byte ranges of the URLs and e-mail addresses in `text`, in order, not overlapping.
///
/// A URL with a scheme is a link whatever its host looks like (see [`with_scheme`]): linkify
/// checks hosts against domain rules and so lets `https://a.b/x`, `http://[::1]:8080/`,
/// `https://例え.テスト/` or `http://x_y.lan/` go to the model. On top of linkify (which already balances parentheses, so `(see https://x.org/a_(b))` keeps
/// the inner pair, and drops trailing `.,:;!?'"`): closing quotes `»”’›` and an ellipsis at the
/// end are not part of a link; a `mailto:` before an address is; and a link without a scheme
/// (`example.com/corto`) must end its host in a known top-level domain, written in lower case or
/// in a shouted all-capitals host, so that "Sr.Whitehead", "EE.UU" or "informe.pdf" stay words.
pub(crate) fn find(text: &str) -> Vec<Range<usize>> {
    let mut finder = LinkFinder::new();
    finder.url_must_have_scheme(false);
    finder.kinds(&[LinkKind::Url, LinkKind::Email]);
    let schemed = with_scheme(text);
    let mut links = Vec::new();
    for link in finder.links(text) {
        if schemed.iter().any(|s| s.start < link.end() && link.start() < s.end) {
            continue;
        }
        let (mut start, mut end) = (link.start(), link.end());
        while let Some(c) = text[start..end].chars().next_back().filter(|c| TRAILING_NOT_LINK.contains(*c)) {
            end -= c.len_utf8();
        }
        if start >= end {
            continue;
        }
        let s = &text[start..end];
        match link.kind() {
            LinkKind::Email => {
                // linkify takes any non-ASCII character for the local part ("⟦@ana.es").
                let local = s.split('@').next().unwrap_or_default();
                if !local.chars().all(|c| c.is_alphanumeric() || "!#$%&'*+-/=?^_`{|}~.".contains(c)) {
                    continue;
                }
                if text[..start].ends_with("mailto:") {
                    start -= "mailto:".len();
                }
            }
            _ if !s.contains("://") && !plausible_bare_host(&text[..start], s) => continue,
            _ => {}
        }
        links.push(start..end);
    }
    links.extend(schemed);
    links.sort_by_key(|r| r.start);
    links
}

/// URLs written with a scheme (`scheme://` then at least one host character), whatever the host:
/// a URL runs to the next space, control character or character no URL holds unescaped (`<>"`,
/// backquote, CJK and typographic quotes and punctuation); then, as linkify does, unbalanced
/// closing brackets and sentence punctuation at its end are left out (`(see https://x/a_(b)).`).
fn with_scheme(text: &str) -> Vec<Range<usize>> {
    let bytes = text.as_bytes();
    let mut links: Vec<Range<usize>> = Vec::new();
    let mut from = 0;
    while let Some(found) = text[from..].find("://") {
        let colon = from + found;
        from = colon + 3;
        if links.last().is_some_and(|l| l.end > colon) {
            continue;
        }
        // The scheme: a letter, then letters, digits, `+`, `-` or `.` (RFC 3986).
        let mut start = colon;
        while start > 0 && (bytes[start - 1].is_ascii_alphanumeric() || b"+-.".contains(&bytes[start - 1])) {
            start -= 1;
        }
        while start < colon && !bytes[start].is_ascii_alphabetic() {
            start += 1;
        }
        if start == colon {
            continue;
        }
        let rest = &text[colon + 3..];
        let len = rest.find(|c: char| ends_url(c)).unwrap_or(rest.len());
        let mut end = colon + 3 + len;
        loop {
            let url = &text[start..end];
            let Some(last) = url.chars().next_back() else { break };
            let unbalanced = |open: char| url.matches(open).count() < url.matches(last).count();
            let trim = match last {
                ')' => unbalanced('('),
                ']' => unbalanced('['),
                '}' => unbalanced('{'),
                c => TRAILING_NOT_LINK.contains(c),
            };
            if !trim {
                break;
            }
            end -= last.len_utf8();
        }
        // A host needs at least one character that is not punctuation (`https://.` is not a link).
        if text[colon + 3..end].chars().next().is_some_and(|c| c.is_alphanumeric() || c == '[') {
            links.push(start..end);
            from = end.max(from);
        }
    }
    links
}

/// Characters that end a URL: spacing, controls, what RFC 3986 never leaves unescaped in one and
/// the typographic and CJK punctuation a sentence puts right after a link (`…/a」`, `…/a。`).
fn ends_url(c: char) -> bool {
    c.is_whitespace() || c.is_control() || "<>\"`«»“”„‹›「」『』【】〈〉《》。、，！？；：（）".contains(c)
}

/// Closing quotes and ellipses that end a sentence, not a link. Trimmed repeatedly, together
/// with the punctuation linkify itself would have trimmed before them (`https://x.org/a.»`).
const TRAILING_NOT_LINK: &str = "»”’›….,:;!?'\"";

/// Whether a link without a scheme is a real host: `before` is the text in front of it.
fn plausible_bare_host(before: &str, link: &str) -> bool {
    if before.chars().next_back().is_some_and(|c| c.is_alphanumeric() || "@#_.-".contains(c)) {
        return false;
    }
    let host = link.split(['/', '?', '#', ':']).next().unwrap_or(link);
    if host.to_ascii_lowercase().starts_with("www.") {
        return true;
    }
    let Some((_, tld)) = host.rsplit_once('.') else { return false };
    let shouted = host.chars().all(|c| !c.is_lowercase());
    let lower = tld.chars().all(|c| c.is_ascii_lowercase());
    (lower || shouted) && KNOWN_TLDS.contains(&tld.to_ascii_lowercase().as_str())
}

/// Top-level domains common in posts. A bare host with another ending is taken for a typo
/// ("dijo.Luego") or a file name rather than a link.
const KNOWN_TLDS: &[&str] = &[
    "com", "org", "net", "edu", "gov", "mil", "int", "info", "biz", "name", "pro", "io", "ai", "app", "dev", "co",
    "me", "tv", "xyz", "online", "site", "shop", "blog", "news", "link", "club", "store", "tech", "cloud", "live",
    "social", "art", "eu", "asia", "cat", "eus", "gal", "es", "uk", "de", "fr", "it", "pt", "nl", "be", "ch", "at",
    "se", "no", "dk", "fi", "ie", "pl", "cz", "gr", "ro", "hu", "ru", "ua", "tr", "us", "ca", "mx", "ar", "cl", "pe",
    "ve", "br", "uy", "py", "bo", "ec", "cr", "cu", "gt", "hn", "ni", "pa", "sv", "do", "pr", "au", "nz", "jp", "cn",
    "kr", "tw", "hk", "in", "za", "ly", "gl", "ws", "fm", "gg", "to", "is", "ma", "ng", "ke",
];

#[cfg(test)]
mod tests {
    use super::*;

    fn links(text: &str) -> Vec<&str> {
        find(text).into_iter().map(|r| &text[r]).collect()
    }

    #[test]
    fn keeps_what_a_reader_calls_the_link() {
        let cases: &[(&str, &[&str])] = &[
            ("(see https://x.org/a_(b))", &["https://x.org/a_(b)"]),
            ("https://x.org/a.", &["https://x.org/a"]),
            ("Mira https://x.org/a, y dime", &["https://x.org/a"]),
            ("¿Viste https://x.org/a?", &["https://x.org/a"]),
            ("¡Entra en https://x.org/a!", &["https://x.org/a"]),
            ("«https://x.org/a»", &["https://x.org/a"]),
            ("“https://x.org/a.”", &["https://x.org/a"]),
            ("\"https://x.org/a\"", &["https://x.org/a"]),
            ("https://t.co/abc…", &["https://t.co/abc"]),
            ("[https://x.org/a]", &["https://x.org/a"]),
            ("x.org/a_(b)c)", &["x.org/a_(b)c"]),
            ("https://x.org/a%20b.html?x=(1)&y=2#frag", &["https://x.org/a%20b.html?x=(1)&y=2#frag"]),
            (
                "http://example.org/a/b?q=pol%C3%ADtica+agraria&lang=es#comentarios ",
                &["http://example.org/a/b?q=pol%C3%ADtica+agraria&lang=es#comentarios"],
            ),
            (
                "https://example.com/búsqueda?término=año&página=2",
                &["https://example.com/búsqueda?término=año&página=2"],
            ),
            ("vía example.com/corto y www.example.com.", &["example.com/corto", "www.example.com"]),
            ("VISITA EXAMPLE.COM YA", &["EXAMPLE.COM"]),
            ("escribe a ana@example.es.", &["ana@example.es"]),
            ("mailto:ana@example.es", &["mailto:ana@example.es"]),
            ("http://localhost:8080/x y ftp://x.org/a", &["http://localhost:8080/x", "ftp://x.org/a"]),
            ("a https://x.org/1 b https://x.org/2", &["https://x.org/1", "https://x.org/2"]),
        ];
        for (text, want) in cases {
            assert_eq!(links(text), *want, "{text:?}");
        }
    }

    #[test]
    fn a_url_with_a_scheme_is_kept_whatever_its_host() {
        let cases: &[(&str, &[&str])] = &[
            ("mira https://a.b/x ya", &["https://a.b/x"]),
            ("https://a.b.c.d.e.f/g", &["https://a.b.c.d.e.f/g"]),
            ("en https://x.zzz/q?a=1&b=(2).", &["https://x.zzz/q?a=1&b=(2)"]),
            ("http://localhost/ y http://localhost", &["http://localhost/", "http://localhost"]),
            ("(http://127.0.0.1:8080/a?b=c)", &["http://127.0.0.1:8080/a?b=c"]),
            ("http://[::1]:8080/x, o", &["http://[::1]:8080/x"]),
            ("[http://[2001:db8::1]/p]", &["http://[2001:db8::1]/p"]),
            ("http://[fe80::1%25eth0]:80/", &["http://[fe80::1%25eth0]:80/"]),
            ("https://user:pw@x.org/a", &["https://user:pw@x.org/a"]),
            ("https://xn--bcher-kva.example/a", &["https://xn--bcher-kva.example/a"]),
            ("«https://bücher.example/a»", &["https://bücher.example/a"]),
            ("見て https://例え.テスト/パス。次", &["https://例え.テスト/パス"]),
            ("「https://пример.рф/」", &["https://пример.рф/"]),
            ("http://x_y.lan/a", &["http://x_y.lan/a"]),
            ("https://x/y", &["https://x/y"]),
            (
                "(ver https://es.wikipedia.org/wiki/Río_(desambiguación)).",
                &["https://es.wikipedia.org/wiki/Río_(desambiguación)"],
            ),
            ("https://mastodon.social/@ana y @ana@x.org", &["https://mastodon.social/@ana"]),
            ("gopher://x.org/1 y git+ssh://git@host:repo.git", &["gopher://x.org/1", "git+ssh://git@host:repo.git"]),
            ("<https://x.org/a>", &["https://x.org/a"]),
            ("Mirahttps://x.org/a", &["Mirahttps://x.org/a"]),
        ];
        for (text, want) in cases {
            assert_eq!(links(text), *want, "{text:?}");
        }
    }

    #[test]
    fn words_with_dots_mentions_and_numbers_are_not_links() {
        for text in [
            "@ana.garcia hola",
            "@user@mastodon.social dice",
            "fin.Luego vamos",
            "Lo dijo.Es así",
            "EE.UU. es grande",
            "p.ej. esto",
            "Sr.Whitehead",
            "informe.pdf",
            "3.5 y 1.500 €",
            "#example.com",
            "a.b",
            "javascript:alert(1)",
            "https:// y https://. y ://x.org",
            "⟦@ana.es ¿@ana.garcia «@x.com",
        ] {
            assert_eq!(links(text), Vec::<&str>::new(), "{text:?}");
        }
    }
}
