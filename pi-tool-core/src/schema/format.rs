//! The string formats TypeBox 1.3 enforces (`format` keyword), ported from its
//! `format/*.ts` checks. A format TypeBox does not know (schemars' `uint32`, `int64`, `double`…)
//! is accepted, as in TypeBox.
//!
//! Not ported (accepted like unknown formats, documented in the module docs of
//! [`crate::schema`]): `url`, `iri`, `iri-reference`, `idn-email`, `idn-hostname`,
//! `json-pointer-uri-fragment`.

use std::sync::OnceLock;

use regex::Regex;

/// A `format` value, resolved once when the schema is compiled.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Format {
    DateTime,
    Date,
    Time,
    Duration,
    Email,
    Hostname,
    Ipv4,
    Ipv6,
    Uri,
    UriReference,
    UriTemplate,
    Uuid,
    JsonPointer,
    RelativeJsonPointer,
    Regex,
}

impl Format {
    /// The checker for a format name, or `None` when the name is not enforced.
    pub(crate) fn from_name(name: &str) -> Option<Format> {
        Some(match name {
            "date-time" => Format::DateTime,
            "date" => Format::Date,
            "time" => Format::Time,
            "duration" => Format::Duration,
            "email" => Format::Email,
            "hostname" => Format::Hostname,
            "ipv4" => Format::Ipv4,
            "ipv6" => Format::Ipv6,
            "uri" => Format::Uri,
            "uri-reference" => Format::UriReference,
            "uri-template" => Format::UriTemplate,
            "uuid" => Format::Uuid,
            "json-pointer" => Format::JsonPointer,
            "relative-json-pointer" => Format::RelativeJsonPointer,
            "regex" => Format::Regex,
            _ => return None,
        })
    }

    /// Whether `s` has this format.
    pub(crate) fn test(self, s: &str) -> bool {
        match self {
            Format::DateTime => is_date_time(s),
            Format::Date => is_date(s),
            Format::Time => is_time(s),
            Format::Duration => matches(&DURATION, DURATION_RE, s),
            Format::Email => !s.contains("..") && matches(&EMAIL, EMAIL_RE, s),
            Format::Hostname => is_hostname(s),
            Format::Ipv4 => is_ipv4(s.as_bytes()),
            Format::Ipv6 => is_ipv6(s.as_bytes()),
            Format::Uri => is_uri(s.as_bytes()),
            Format::UriReference => {
                s.is_ascii() && !s.contains('\\') && matches(&URI_REF, URI_REF_RE, s)
            }
            Format::UriTemplate => matches(&URI_TEMPLATE, URI_TEMPLATE_RE, s),
            Format::Uuid => matches(&UUID, UUID_RE, s),
            Format::JsonPointer => matches(&JSON_POINTER, JSON_POINTER_RE, s),
            Format::RelativeJsonPointer => matches(&REL_POINTER, REL_POINTER_RE, s),
            Format::Regex => !s.is_empty() && Regex::new(s).is_ok(),
        }
    }
}

static DURATION: OnceLock<Option<Regex>> = OnceLock::new();
const DURATION_RE: &str = r"^P(([0-9]+Y([0-9]+M([0-9]+D)?)?|[0-9]+M([0-9]+D)?|[0-9]+D)(T([0-9]+H([0-9]+M([0-9]+S)?)?|[0-9]+M([0-9]+S)?|[0-9]+S))?|T([0-9]+H([0-9]+M([0-9]+S)?)?|[0-9]+M([0-9]+S)?|[0-9]+S)|[0-9]+W)$";
static EMAIL: OnceLock<Option<Regex>> = OnceLock::new();
// TypeBox's pattern minus its `(?!.*\.\.)` lookahead, which `test` checks separately.
const EMAIL_RE: &str = r"(?i)^[a-z0-9!#$%&'*+/=?^_`{|}~-]+(?:\.[a-z0-9!#$%&'*+/=?^_`{|}~-]+)*@[a-z0-9](?:[a-z0-9-]{0,61}[a-z0-9])?(?:\.[a-z0-9](?:[a-z0-9-]{0,61}[a-z0-9])?)*$";
static URI_REF: OnceLock<Option<Regex>> = OnceLock::new();
const URI_REF_RE: &str = r"(?i)^(?:(?:[a-z][a-z0-9+\-.]*:)?(?://[^\s\[\]{}<>^`|]*)?|[^\s\[\]{}<>^`|]*)(?:\?[^\s\[\]{}<>^`|]*)?(?:#[^\s\[\]{}<>^`|]*)?$";
static URI_TEMPLATE: OnceLock<Option<Regex>> = OnceLock::new();
const URI_TEMPLATE_RE: &str = r#"(?i)^(?:(?:[^\x00-\x20"'<>%\\^`{|}]|%[0-9a-f]{2})|\{[+#./;?&=,!@|]?(?:[a-z0-9_]|%[0-9a-f]{2})+(?::[1-9][0-9]{0,3}|\*)?(?:,(?:[a-z0-9_]|%[0-9a-f]{2})+(?::[1-9][0-9]{0,3}|\*)?)*\})*$"#;
static UUID: OnceLock<Option<Regex>> = OnceLock::new();
const UUID_RE: &str = r"(?i)^[0-9a-f]{8}-(?:[0-9a-f]{4}-){3}[0-9a-f]{12}$";
static JSON_POINTER: OnceLock<Option<Regex>> = OnceLock::new();
const JSON_POINTER_RE: &str = r"^(?:/(?:[^~/]|~0|~1)*)*$";
static REL_POINTER: OnceLock<Option<Regex>> = OnceLock::new();
const REL_POINTER_RE: &str = r"^(?:0|[1-9][0-9]*)(?:#|(?:/(?:[^~/]|~0|~1)*)*)$";

/// Tests `s` against a lazily compiled constant pattern. The patterns are constants covered
/// by the tests below, so `None` (a pattern that fails to compile) cannot happen in practice;
/// it rejects rather than panics.
fn matches(cell: &OnceLock<Option<Regex>>, pattern: &str, s: &str) -> bool {
    cell.get_or_init(|| Regex::new(pattern).ok())
        .as_ref()
        .is_some_and(|re| re.is_match(s))
}

fn two_digits(b: &[u8]) -> Option<u32> {
    if b.len() == 2 && b.iter().all(u8::is_ascii_digit) {
        Some(u32::from(b[0] - b'0') * 10 + u32::from(b[1] - b'0'))
    } else {
        None
    }
}

fn is_date(s: &str) -> bool {
    let b = s.as_bytes();
    if b.len() != 10 || b[4] != b'-' || b[7] != b'-' || !b[..4].iter().all(u8::is_ascii_digit) {
        return false;
    }
    let year: u32 = s[..4].parse().unwrap_or(0);
    let (Some(month), Some(day)) = (two_digits(&b[5..7]), two_digits(&b[8..10])) else {
        return false;
    };
    const DAYS: [u32; 13] = [0, 31, 28, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31];
    let leap = year.is_multiple_of(4) && (!year.is_multiple_of(100) || year.is_multiple_of(400));
    (1..=12).contains(&month)
        && day >= 1
        && day
            <= if month == 2 && leap {
                29
            } else {
                DAYS[month as usize]
            }
}

fn is_time(s: &str) -> bool {
    // ^(\d\d):(\d\d):(\d\d(?:\.\d+)?)(?:Z|([+-])(\d\d):(\d\d))?$  (case-insensitive)
    let b = s.as_bytes();
    if b.len() < 8 || b[2] != b':' || b[5] != b':' {
        return false;
    }
    let (Some(hr), Some(min)) = (two_digits(&b[0..2]), two_digits(&b[3..5])) else {
        return false;
    };
    let Some(sec_whole) = two_digits(&b[6..8]) else {
        return false;
    };
    let mut i = 8;
    let mut sec = f64::from(sec_whole);
    if i < b.len() && b[i] == b'.' {
        let start = i + 1;
        i = start;
        while i < b.len() && b[i].is_ascii_digit() {
            i += 1;
        }
        if i == start {
            return false;
        }
        sec = s[6..i].parse().unwrap_or(f64::NAN);
    }
    let (mut sign, mut tz_h, mut tz_m) = (0i32, 0u32, 0u32);
    let rest = &b[i..];
    match rest {
        [] => {}
        [b'z' | b'Z'] => {}
        [sg @ (b'+' | b'-'), h1, h2, b':', m1, m2] => {
            let (Some(h), Some(m)) = (two_digits(&[*h1, *h2]), two_digits(&[*m1, *m2])) else {
                return false;
            };
            sign = if *sg == b'-' { -1 } else { 1 };
            tz_h = h;
            tz_m = m;
        }
        _ => return false,
    }
    if tz_h > 23 || tz_m > 59 {
        return false;
    }
    // Strict time zone: an offset or a `z` somewhere is required.
    if sign == 0 && !s.contains(['z', 'Z']) {
        return false;
    }
    if hr <= 23 && min <= 59 && sec < 60.0 {
        return true;
    }
    let sign = if sign == -1 { -1 } else { 1 };
    let utc_min = min as i32 - tz_m as i32 * sign;
    let utc_hr = hr as i32 - tz_h as i32 * sign - i32::from(utc_min < 0);
    (utc_hr == 23 || utc_hr == -1) && (utc_min == 59 || utc_min == -1) && sec < 61.0
}

fn is_date_time(s: &str) -> bool {
    let mut parts = s.split(['T', 't']);
    match (parts.next(), parts.next(), parts.next()) {
        (Some(d), Some(t), None) => is_date(d) && is_time(t),
        _ => false,
    }
}

fn is_hostname(s: &str) -> bool {
    // TypeBox measures in UTF-16 units; non-ASCII labels fail the label check anyway, except
    // punycode, which is ASCII.
    if s.is_empty() || s.len() > 253 || s.ends_with('.') {
        return false;
    }
    s.split('.').all(is_label)
}

fn is_label(l: &str) -> bool {
    if l.is_empty() || l.len() > 63 {
        return false;
    }
    let b = l.as_bytes();
    if l.to_ascii_lowercase().starts_with("xn--") {
        // Punycode payload: basic code points, then base-36 digits; TypeBox decodes it fully.
        // We accept syntactically valid payloads (letters, digits, one delimiter).
        let payload = &l[4..];
        return !payload.is_empty()
            && !payload.starts_with('-')
            && payload
                .bytes()
                .all(|c| c.is_ascii_alphanumeric() || c == b'-');
    }
    if b[0] == b'-' || b[b.len() - 1] == b'-' {
        return false;
    }
    if b.len() >= 4 && b[2] == b'-' && b[3] == b'-' {
        return false;
    }
    b.iter().all(|c| c.is_ascii_alphanumeric() || *c == b'-')
}

fn is_ipv4(b: &[u8]) -> bool {
    let (mut dots, mut num, mut digits, mut leading) = (0, 0u32, 0, 0u8);
    for &ch in b {
        if ch == b'.' {
            if digits == 0 || num > 255 || (leading == b'0' && digits > 1) {
                return false;
            }
            dots += 1;
            num = 0;
            digits = 0;
            leading = 0;
        } else if ch.is_ascii_digit() {
            if digits == 0 {
                leading = ch;
            }
            num = num.saturating_mul(10).saturating_add(u32::from(ch - b'0'));
            digits += 1;
        } else {
            return false;
        }
    }
    dots == 3 && digits > 0 && num <= 255 && !(leading == b'0' && digits > 1)
}

fn is_ipv6(b: &[u8]) -> bool {
    let len = b.len();
    if len == 0 {
        return false;
    }
    let at = |i: usize| b.get(i).copied().unwrap_or(0);
    let (mut groups, mut compressed, mut i) = (0, false, 0);
    if at(0) == b':' && at(1) == b':' {
        if len == 2 {
            return true;
        }
        compressed = true;
        i = 2;
    }
    while i < len {
        let start = i;
        while i < len && b[i].is_ascii_hexdigit() {
            i += 1;
        }
        let digits = i - start;
        if digits == 0 {
            return false;
        }
        let next = at(i);
        if next == b'.' {
            if !is_ipv4(&b[start..]) {
                return false;
            }
            groups += 2;
            break;
        }
        if digits > 4 {
            return false;
        }
        groups += 1;
        if i == len {
            break;
        }
        if next != b':' {
            return false;
        }
        i += 1;
        if at(i) == b':' {
            if compressed || at(i + 1) == b':' {
                return false;
            }
            compressed = true;
            i += 1;
            if i == len {
                break;
            }
        }
    }
    if compressed { groups <= 7 } else { groups == 8 }
}

fn is_unreserved(c: u8) -> bool {
    c.is_ascii_alphanumeric() || matches!(c, b'-' | b'.' | b'_' | b'~')
}

fn is_sub_delim(c: u8) -> bool {
    matches!(
        c,
        b'!' | b'$' | b'&' | b'\'' | b'(' | b')' | b'*' | b'+' | b',' | b';' | b'='
    )
}

fn is_uri(b: &[u8]) -> bool {
    let len = b.len();
    let at = |i: usize| b.get(i).copied().unwrap_or(0);
    if len == 0 || !at(0).is_ascii_alphabetic() {
        return false;
    }
    let mut i = 1;
    while i < len {
        let ch = b[i];
        if ch == b':' {
            break;
        }
        if !(ch.is_ascii_alphanumeric() || matches!(ch, b'+' | b'-' | b'.')) {
            return false;
        }
        i += 1;
    }
    if at(i) != b':' {
        return false;
    }
    i += 1;
    if at(i) == b'/' && at(i + 1) == b'/' {
        i += 2;
        let authority_start = i;
        let mut at_pos = None;
        for (j, &ch) in b.iter().enumerate().skip(i) {
            if ch == b'@' {
                at_pos = Some(j);
                break;
            }
            if matches!(ch, b'/' | b'?' | b'#') {
                break;
            }
        }
        if let Some(at_pos) = at_pos {
            let mut j = authority_start;
            while j < at_pos {
                let ch = b[j];
                if ch == b'[' || ch == b']' {
                    return false;
                }
                if ch == b'%' {
                    if j + 2 >= at_pos
                        || !at(j + 1).is_ascii_hexdigit()
                        || !at(j + 2).is_ascii_hexdigit()
                    {
                        return false;
                    }
                    j += 2;
                } else if !is_unreserved(ch) && !is_sub_delim(ch) && ch != b':' {
                    return false;
                }
                j += 1;
            }
            i = at_pos + 1;
        }
        if at(i) == b'[' {
            i += 1;
            while i < len && b[i] != b']' {
                i += 1;
            }
            if at(i) != b']' {
                return false;
            }
            i += 1;
        } else {
            while i < len {
                let ch = b[i];
                if matches!(ch, b'/' | b'?' | b'#' | b':') {
                    break;
                }
                if ch < 128 && !is_unreserved(ch) && !is_sub_delim(ch) {
                    return false;
                }
                i += 1;
            }
        }
        if at(i) == b':' {
            i += 1;
            while i < len {
                let ch = b[i];
                if matches!(ch, b'/' | b'?' | b'#') {
                    break;
                }
                if !ch.is_ascii_digit() {
                    return false;
                }
                i += 1;
            }
        }
    }
    while i < len {
        let ch = b[i];
        if ch == b'%' {
            if i + 2 >= len || !at(i + 1).is_ascii_hexdigit() || !at(i + 2).is_ascii_hexdigit() {
                return false;
            }
            i += 2;
        } else if ch > 127
            || !(is_unreserved(ch)
                || is_sub_delim(ch)
                || matches!(ch, b':' | b'@' | b'/' | b'?' | b'#'))
        {
            // URIs are ASCII-only; otherwise pchar, '/', '?' or '#'.
            return false;
        }
        i += 1;
    }
    true
}

#[cfg(test)]
mod tests {
    use super::*;

    fn ok(f: &str, s: &str) -> bool {
        Format::from_name(f).is_some_and(|f| f.test(s))
    }

    #[test]
    fn every_constant_pattern_compiles() {
        for p in [
            DURATION_RE,
            EMAIL_RE,
            URI_REF_RE,
            URI_TEMPLATE_RE,
            UUID_RE,
            JSON_POINTER_RE,
            REL_POINTER_RE,
        ] {
            assert!(Regex::new(p).is_ok(), "{p}");
        }
    }

    #[test]
    fn formats_accept_and_reject_like_typebox() {
        assert!(ok("date", "2024-01-31") && ok("date", "2024-02-29"));
        assert!(!ok("date", "2024-13-01") && !ok("date", "2023-02-29") && !ok("date", "2024-1-01"));
        assert!(
            ok("time", "10:20:30Z") && ok("time", "10:20:30.5+02:00") && ok("time", "23:59:60Z")
        );
        assert!(!ok("time", "10:20:30") && !ok("time", "24:00:00Z"));
        assert!(
            ok("date-time", "2024-01-31T10:20:30Z") && !ok("date-time", "2024-01-31 10:20:30Z")
        );
        assert!(ok("email", "a@b.co") && !ok("email", "nope") && !ok("email", "a..b@c.d"));
        assert!(ok("uuid", "123e4567-e89b-12d3-a456-426614174000") && !ok("uuid", "x"));
        assert!(ok("ipv4", "192.168.0.1") && !ok("ipv4", "256.1.1.1") && !ok("ipv4", "01.1.1.1"));
        assert!(
            ok("ipv6", "::1")
                && ok("ipv6", "2001:db8::8a2e:370:7334")
                && ok("ipv6", "::ffff:1.2.3.4")
        );
        assert!(!ok("ipv6", "1:::2") && !ok("ipv6", "12345::"));
        assert!(
            ok("hostname", "example.com")
                && !ok("hostname", "-bad.com")
                && !ok("hostname", "a.com.")
        );
        assert!(
            ok("uri", "https://user@example.com:8080/p?q=1#f")
                && !ok("uri", "/relative")
                && !ok("uri", "http://a b")
        );
        assert!(ok("uri-reference", "/relative?x#y") && !ok("uri-reference", "a\\b"));
        assert!(ok("duration", "P1Y2M3DT4H5M6S") && ok("duration", "P2W") && !ok("duration", "P"));
        assert!(ok("json-pointer", "/a/~0b") && !ok("json-pointer", "a"));
        assert!(ok("relative-json-pointer", "1/a") && ok("relative-json-pointer", "0#"));
        assert!(ok("uri-template", "/users/{id}") && !ok("uri-template", "/users/{id"));
        assert!(ok("regex", "^a+$") && !ok("regex", "(") && !ok("regex", ""));
        assert!(Format::from_name("uint32").is_none());
    }
}
