//! Mozilla version comparison (`Services.vc.compare`, xpcom `nsVersionComparator`), which is what
//! Firefox uses to pick model versions: `1.0a1 < 1.0b1 < 1.0 < 1.0.1 < 1.1`, `1.0 == 1.0.0 == 1`.
//!
//! A version is dot-separated parts; each part is `<number-a><string-b><number-c><extra-d>`. A missing
//! number is 0, a missing string sorts *after* any present string (so `1.0` > `1.0a`), `*` is the
//! largest number, and `1.0+` means `1.1pre`. Missing parts count as `0`.

use std::cmp::Ordering;

/// Compares two version strings exactly as Firefox does.
pub fn compare(a: &str, b: &str) -> Ordering {
    let mut pa = Some(a);
    let mut pb = Some(b);
    loop {
        let (va, rest_a) = parse_part(pa);
        let (vb, rest_b) = parse_part(pb);
        let r = compare_parts(&va, &vb);
        if r != Ordering::Equal {
            return r;
        }
        pa = rest_a;
        pb = rest_b;
        if pa.is_none() && pb.is_none() {
            return Ordering::Equal;
        }
    }
}

#[derive(Debug, Default, PartialEq)]
struct Part<'a> {
    num_a: i32,
    /// `None` when absent, which sorts after every present string.
    str_b: Option<&'a str>,
    num_c: i32,
    extra_d: Option<&'a str>,
}

/// Splits off and parses the first part; returns the rest after the dot (None at the end, as
/// the C code turns an empty remainder into a null pointer).
fn parse_part(s: Option<&str>) -> (Part<'_>, Option<&str>) {
    let Some(s) = s else { return (Part::default(), None) };
    let (part, rest) = match s.find('.') {
        Some(i) => (&s[..i], Some(&s[i + 1..]).filter(|r| !r.is_empty())),
        None => (s, None),
    };
    let mut p = Part::default();
    let after_a;
    if part == "*" {
        p.num_a = i32::MAX;
        after_a = "";
    } else {
        let (n, r) = strtol(part);
        p.num_a = n;
        after_a = r;
    }
    if after_a.is_empty() {
        return (p, rest);
    }
    if after_a.starts_with('+') {
        // "1.0+" is "1.1pre": the C code bumps number-a and replaces the string.
        p.num_a = p.num_a.wrapping_add(1);
        p.str_b = Some("pre");
        return (p, rest);
    }
    match after_a.find(|c: char| c.is_ascii_digit() || c == '+' || c == '-') {
        None => p.str_b = Some(after_a),
        Some(i) => {
            p.str_b = Some(&after_a[..i]);
            let (n, r) = strtol(&after_a[i..]);
            p.num_c = n;
            p.extra_d = Some(r).filter(|r| !r.is_empty());
        }
    }
    (p, rest)
}

/// C `strtol(s, &end, 10)` narrowed to i32 as `ns_strtol` does: leading white space and a sign
/// are accepted; no digits means 0 with nothing consumed; out of range means 0.
fn strtol(s: &str) -> (i32, &str) {
    let bytes = s.as_bytes();
    let mut i = 0;
    while i < bytes.len() && matches!(bytes[i], b' ' | b'\t' | b'\n' | b'\x0b' | b'\x0c' | b'\r') {
        i += 1;
    }
    let mut negative = false;
    if i < bytes.len() && (bytes[i] == b'+' || bytes[i] == b'-') {
        negative = bytes[i] == b'-';
        i += 1;
    }
    let digits_start = i;
    while i < bytes.len() && bytes[i].is_ascii_digit() {
        i += 1;
    }
    if i == digits_start {
        return (0, s);
    }
    // Every byte consumed is ASCII, so `i` is a char boundary.
    let value = s[digits_start..i].parse::<i64>().ok().map(|v| if negative { -v } else { v });
    let value = value.and_then(|v| i32::try_from(v).ok()).unwrap_or(0);
    (value, &s[i..])
}

fn compare_parts(a: &Part, b: &Part) -> Ordering {
    a.num_a
        .cmp(&b.num_a)
        .then_with(|| compare_optional(a.str_b, b.str_b))
        .then_with(|| a.num_c.cmp(&b.num_c))
        .then_with(|| compare_optional(a.extra_d, b.extra_d))
}

/// An absent string is greater than any present one; present strings compare bytewise.
fn compare_optional(a: Option<&str>, b: Option<&str>) -> Ordering {
    match (a, b) {
        (None, None) => Ordering::Equal,
        (None, Some(_)) => Ordering::Greater,
        (Some(_), None) => Ordering::Less,
        (Some(x), Some(y)) => x.as_bytes().cmp(y.as_bytes()),
    }
}

/// Whether `version` lies in Firefox's accepted range for models: `MIN.0a <= v < (MAX+1).0a`.
pub fn in_major_range(version: &str, min_major: u32, max_major: u32) -> bool {
    compare(&format!("{min_major}.0a"), version) != Ordering::Greater
        && compare(&format!("{}.0a", max_major as u64 + 1), version) == Ordering::Greater
}

#[cfg(test)]
mod tests {
    use super::*;
    use Ordering::*;

    #[test]
    fn orders_prereleases_before_releases() {
        let ordered =
            ["1.0a1", "1.0a2", "1.0b1", "1.0b2", "1.0pre1", "1.0", "1.0.1", "1.1a1", "1.1", "1.10", "2.0a", "2.0"];
        for (i, a) in ordered.iter().enumerate() {
            for (j, b) in ordered.iter().enumerate() {
                assert_eq!(compare(a, b), i.cmp(&j), "{a} vs {b}");
            }
        }
    }

    #[test]
    fn equal_forms() {
        for (a, b) in [("1", "1.0"), ("1.0", "1.0.0"), ("1.", "1"), ("1.0a", "1.0a0"), ("", "0")] {
            assert_eq!(compare(a, b), Equal, "{a} vs {b}");
        }
    }

    #[test]
    fn plus_and_star() {
        assert_eq!(compare("1.0+", "1.1pre"), Equal);
        assert_eq!(compare("1.0+", "1.1"), Less);
        assert_eq!(compare("1.*", "1.999999"), Greater);
        assert_eq!(compare("3.*", "4.0"), Less);
    }

    #[test]
    fn numbers_compare_as_numbers_and_overflow_is_zero() {
        assert_eq!(compare("3.10", "3.9"), Greater);
        assert_eq!(compare("99999999999", "0"), Equal);
        assert_eq!(compare("-1", "0"), Less);
    }

    #[test]
    fn firefox_major_range() {
        for v in ["3.0a", "3.0a1", "3.0b1", "3.0", "3.1", "3.99.1", "3.5b2"] {
            assert!(in_major_range(v, 3, 3), "{v}");
        }
        for v in ["2.9", "2.1", "1.0", "4.0a1", "4.0", "10.0"] {
            assert!(!in_major_range(v, 3, 3), "{v}");
        }
        assert!(in_major_range("1.0", 1, 2) && in_major_range("2.1", 1, 2) && !in_major_range("3.0a1", 1, 2));
    }
}
