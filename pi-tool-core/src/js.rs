//! JavaScript value semantics pi-tool must reproduce, in one place for the schema pipeline,
//! the providers and the conformance runner: `Number(string)`, `String(number)`, `trim`,
//! `===` / deep equality on JSON values, TypeBox's string length, `text.length`, the key order
//! of objects, and `JSON.stringify` (compact, and `(v, null, 2)`).
//!
//! Pi is written in JavaScript, where a JSON number is one IEEE-754 double: `5.0` and `5` are the
//! same value, `String(1e21)` is `"1e+21"`, and `Number(" 0x10 ")` is 16. serde_json keeps integers
//! and floats apart, so every place where Pi's behaviour depends on a number goes through here.

use serde_json::{Map, Number, Value};

/// A JSON number as JavaScript sees it (always a double).
pub fn as_f64(n: &Number) -> f64 {
    n.as_f64().unwrap_or(f64::NAN)
}

/// `Number.isInteger` for a JSON number.
pub fn is_integer(n: &Number) -> bool {
    if n.is_i64() || n.is_u64() {
        return true;
    }
    let f = as_f64(n);
    f.is_finite() && f.trunc() == f
}

/// The JSON value of a double, as JavaScript would print it: integral values become integers
/// (so `5.0` prints `5` and deserialises into `u32`), others stay floats.
pub fn number_value(f: f64) -> Value {
    if f.is_finite() && f.trunc() == f {
        if f == 0.0 {
            return Value::from(0u64);
        }
        if f > 0.0 && f < 18_446_744_073_709_551_616.0 {
            return Value::from(f as u64);
        }
        if (-9_223_372_036_854_775_808.0..0.0).contains(&f) {
            return Value::from(f as i64);
        }
    }
    Number::from_f64(f).map_or(Value::Null, Value::Number)
}

/// JavaScript's white space and line terminators (what `String.prototype.trim` removes).
pub fn is_js_space(c: char) -> bool {
    matches!(
        c,
        '\u{9}' | '\u{a}' | '\u{b}' | '\u{c}' | '\u{d}' | ' ' | '\u{a0}' | '\u{1680}' | '\u{2000}'
            ..='\u{200a}'
                | '\u{2028}'
                | '\u{2029}'
                | '\u{202f}'
                | '\u{205f}'
                | '\u{3000}'
                | '\u{feff}'
    )
}

/// `str.trim()` with JavaScript's definition of white space.
pub fn js_trim(s: &str) -> &str {
    s.trim_matches(is_js_space)
}

/// `Number(s)` for a string: `None` where JavaScript gives `NaN`.
pub fn parse_number(s: &str) -> Option<f64> {
    let t = js_trim(s);
    if t.is_empty() {
        return Some(0.0);
    }
    let b = t.as_bytes();
    if b.len() > 2 && b[0] == b'0' {
        let radix = match b[1] {
            b'x' | b'X' => 16,
            b'o' | b'O' => 8,
            b'b' | b'B' => 2,
            _ => 0,
        };
        if radix != 0 {
            let mut v = 0f64;
            for &c in &b[2..] {
                let d = (c as char).to_digit(radix)?;
                v = v * f64::from(radix) + f64::from(d);
            }
            return Some(v);
        }
    }
    let (sign, body) = match b[0] {
        b'+' => (1.0, &t[1..]),
        b'-' => (-1.0, &t[1..]),
        _ => (1.0, t),
    };
    if body == "Infinity" {
        return Some(sign * f64::INFINITY);
    }
    if !is_decimal_literal(body.as_bytes()) {
        return None;
    }
    body.parse::<f64>().ok().map(|v| sign * v)
}

/// `StrUnsignedDecimalLiteral`: digits with an optional fraction and exponent, at least one
/// digit in the mantissa, no separators.
fn is_decimal_literal(b: &[u8]) -> bool {
    let mut i = 0;
    let int_start = i;
    while i < b.len() && b[i].is_ascii_digit() {
        i += 1;
    }
    let mut digits = i - int_start;
    if i < b.len() && b[i] == b'.' {
        i += 1;
        let frac_start = i;
        while i < b.len() && b[i].is_ascii_digit() {
            i += 1;
        }
        digits += i - frac_start;
    }
    if digits == 0 {
        return false;
    }
    if i < b.len() && (b[i] == b'e' || b[i] == b'E') {
        i += 1;
        if i < b.len() && (b[i] == b'+' || b[i] == b'-') {
            i += 1;
        }
        let exp_start = i;
        while i < b.len() && b[i].is_ascii_digit() {
            i += 1;
        }
        if i == exp_start {
            return false;
        }
    }
    i == b.len()
}

/// `String(n)` (`Number.prototype.toString()`) for a finite double.
pub fn format_f64(f: f64) -> String {
    if f == 0.0 {
        return "0".to_owned();
    }
    if f.is_nan() {
        return "NaN".to_owned();
    }
    if f.is_infinite() {
        return if f > 0.0 { "Infinity" } else { "-Infinity" }.to_owned();
    }
    // Rust's `{:e}` prints the shortest digits that round-trip, like ECMAScript's algorithm.
    let mut sci = format!("{:e}", f.abs());
    let shortest = sci
        .bytes()
        .take_while(|&b| b != b'e')
        .filter(u8::is_ascii_digit)
        .count();
    // Where two shortest candidates are equally close (an exact tie, possible only at 16
    // or more digits), ECMAScript takes the even one and `{:e}` may not; exact-precision
    // formatting rounds ties to even, so it gives ECMAScript's pick when it round-trips.
    if shortest >= 16 {
        let even = format!("{:.*e}", shortest - 1, f.abs());
        if even.parse::<f64>() == Ok(f.abs()) {
            sci = even;
        }
    }
    let (mantissa, exp) = sci.split_once('e').unwrap_or((sci.as_str(), "0"));
    let digits: String = mantissa.chars().filter(char::is_ascii_digit).collect();
    let e: i32 = exp.parse().unwrap_or(0);
    let k = digits.len() as i32;
    let n = e + 1;
    let mut out = String::new();
    if f < 0.0 {
        out.push('-');
    }
    if k <= n && n <= 21 {
        out.push_str(&digits);
        out.extend(std::iter::repeat_n('0', (n - k) as usize));
    } else if 0 < n && n <= 21 {
        out.push_str(&digits[..n as usize]);
        out.push('.');
        out.push_str(&digits[n as usize..]);
    } else if -6 < n && n <= 0 {
        out.push_str("0.");
        out.extend(std::iter::repeat_n('0', (-n) as usize));
        out.push_str(&digits);
    } else {
        out.push_str(&digits[..1]);
        if k > 1 {
            out.push('.');
            out.push_str(&digits[1..]);
        }
        out.push('e');
        out.push(if n > 0 { '+' } else { '-' });
        out.push_str(&(n - 1).abs().to_string());
    }
    out
}

/// `String(n)` for a JSON number (integers print exactly).
pub fn format_number(n: &Number) -> String {
    if n.is_i64() || n.is_u64() {
        n.to_string()
    } else {
        format_f64(as_f64(n))
    }
}

/// `===` for primitives and TypeBox's `IsDeepEqual` for arrays and objects (key order ignored).
pub fn deep_equal(a: &Value, b: &Value) -> bool {
    match (a, b) {
        (Value::Number(x), Value::Number(y)) => as_f64(x) == as_f64(y),
        // Said first, though `a == b` below agrees: a string enum's options are compared
        // on every call, and this skips `Value`'s own dispatch.
        (Value::String(x), Value::String(y)) => x == y,
        (Value::Array(x), Value::Array(y)) => {
            x.len() == y.len() && x.iter().zip(y).all(|(l, r)| deep_equal(l, r))
        }
        (Value::Object(x), Value::Object(y)) => {
            x.len() == y.len()
                && x.iter()
                    .all(|(k, v)| y.get(k).is_some_and(|w| deep_equal(v, w)))
        }
        _ => a == b,
    }
}

/// Equality as TypeBox's `uniqueItems` hash sees it: like [`deep_equal`], but `0` and `-0`
/// differ (the hash reads the double's bytes).
pub fn same_item(a: &Value, b: &Value) -> bool {
    match (a, b) {
        (Value::Number(x), Value::Number(y)) => as_f64(x).to_bits() == as_f64(y).to_bits(),
        (Value::Array(x), Value::Array(y)) => {
            x.len() == y.len() && x.iter().zip(y).all(|(l, r)| same_item(l, r))
        }
        (Value::Object(x), Value::Object(y)) => {
            x.len() == y.len()
                && x.iter()
                    .all(|(k, v)| y.get(k).is_some_and(|w| same_item(v, w)))
        }
        _ => a == b,
    }
}

fn is_combining_mark(c: u32) -> bool {
    (0x0300..=0x036F).contains(&c)
        || (0x1AB0..=0x1AFF).contains(&c)
        || (0x1DC0..=0x1DFF).contains(&c)
        || (0xFE20..=0xFE2F).contains(&c)
}

fn is_variation_selector(c: u32) -> bool {
    (0xFE00..=0xFE0F).contains(&c)
}

fn is_regional_indicator(c: u32) -> bool {
    (0x1F1E6..=0x1F1FF).contains(&c)
}

fn is_modifier(c: u32) -> bool {
    is_combining_mark(c) || is_variation_selector(c)
}

/// TypeBox 1.3's string length (`minLength`/`maxLength`): UTF-16 code units for plain text,
/// and its simplified grapheme clusters (combining marks, variation selectors, ZWJ sequences,
/// flag pairs; astral characters count once) as soon as any such code point appears.
pub fn string_length(s: &str) -> usize {
    if s.is_ascii() {
        return s.len();
    }
    let fast = s
        .chars()
        .all(|c| (c as u32) <= 0xFFFF && !is_modifier(c as u32) && c != '\u{200D}');
    if fast {
        // Every char is one UTF-16 unit here.
        return s.chars().count();
    }
    let cps: Vec<u32> = s.chars().map(|c| c as u32).collect();
    let mut count = 0;
    let mut i = 0;
    while i < cps.len() {
        let start = cps[i];
        i += 1;
        while i < cps.len() && is_modifier(cps[i]) {
            i += 1;
        }
        // A ZWJ joins the next code point unless it is the last one.
        while i + 1 < cps.len() && cps[i] == 0x200D {
            i += 2;
            while i < cps.len() && is_modifier(cps[i]) {
                i += 1;
            }
        }
        if is_regional_indicator(start) && i < cps.len() && is_regional_indicator(cps[i]) {
            i += 1;
        }
        count += 1;
    }
    count
}

/// Whether a key is an array index, which JavaScript objects enumerate first, ascending.
fn is_index_key(k: &str) -> bool {
    !k.is_empty()
        && k.len() <= 10
        && k.bytes().all(|b| b.is_ascii_digit())
        && (k == "0" || !k.starts_with('0'))
        && k.parse::<u64>().is_ok_and(|n| n < u64::from(u32::MAX))
}

/// An object's keys in JavaScript's enumeration order: array-index keys ascending, then the
/// others in insertion order.
pub fn js_keys(map: &Map<String, Value>) -> Vec<&String> {
    let mut keys: Vec<&String> = map.keys().collect();
    if keys.iter().any(|k| is_index_key(k)) {
        keys.sort_by_key(|k| {
            if is_index_key(k) {
                (0, k.parse::<u64>().unwrap_or(0))
            } else {
                (1, 0)
            }
        });
    }
    keys
}

/// Whether a value nests more than `limit` containers deep. Recursive, but the recursion
/// stops one level past `limit`, however deep the value is.
pub fn depth_exceeds(value: &Value, limit: usize) -> bool {
    match value {
        Value::Array(items) => limit == 0 || items.iter().any(|v| depth_exceeds(v, limit - 1)),
        Value::Object(map) => limit == 0 || map.values().any(|v| depth_exceeds(v, limit - 1)),
        _ => false,
    }
}

// JSON text as JavaScript writes it: compact `JSON.stringify` (pi-ai sends tool-call
// arguments and measures tools this way) and `string.length` (UTF-16 code units).

/// `JSON.stringify(value, null, 2)`.
pub fn stringify_pretty(value: &Value) -> String {
    let mut out = String::new();
    write_value(&mut out, value, Some(0));
    out
}

/// The largest integer a double holds exactly (`Number.MAX_SAFE_INTEGER + 1`).
const SAFE_INTEGER_LIMIT: u64 = 1 << 53;

/// `JSON.stringify(value)`: compact, keys in JavaScript's enumeration order, numbers as
/// `String(double)` (`1e+21`, `12345678901234567000`).
pub fn stringify(value: &Value) -> String {
    let mut out = String::new();
    write_value(&mut out, value, None);
    out
}

/// JavaScript's `text.length`: UTF-16 code units.
pub fn utf16_len(text: &str) -> usize {
    if text.is_ascii() {
        return text.len();
    }
    text.chars().map(char::len_utf16).sum()
}

/// One writer for both layouts: `indent` is the current depth of the pretty form, `None`
/// for the compact one.
fn write_value(out: &mut String, value: &Value, indent: Option<usize>) {
    let inner = indent.map(|i| i + 1);
    match value {
        Value::Null => out.push_str("null"),
        Value::Bool(b) => out.push_str(if *b { "true" } else { "false" }),
        // The pretty form prints what the schema pipeline shows (integers exactly); the
        // compact one what pi-ai sends (a double's digits past 2^53).
        Value::Number(n) if indent.is_some() => out.push_str(&format_number(n)),
        Value::Number(n) => write_number(out, n),
        Value::String(s) => write_string(out, s),
        Value::Array(items) => {
            if items.is_empty() {
                out.push_str("[]");
                return;
            }
            out.push('[');
            for (i, item) in items.iter().enumerate() {
                if i > 0 {
                    out.push(',');
                }
                newline(out, inner);
                write_value(out, item, inner);
            }
            newline(out, indent);
            out.push(']');
        }
        Value::Object(map) => {
            if map.is_empty() {
                out.push_str("{}");
                return;
            }
            out.push('{');
            for (i, key) in js_keys(map).into_iter().enumerate() {
                if i > 0 {
                    out.push(',');
                }
                newline(out, inner);
                write_string(out, key);
                out.push_str(if indent.is_some() { ": " } else { ":" });
                if let Some(v) = map.get(key) {
                    write_value(out, v, inner);
                }
            }
            newline(out, indent);
            out.push('}');
        }
    }
}

fn newline(out: &mut String, indent: Option<usize>) {
    if let Some(indent) = indent {
        out.push('\n');
        for _ in 0..indent {
            out.push_str("  ");
        }
    }
}

fn write_number(out: &mut String, n: &Number) {
    // An integer a double holds exactly prints as itself; a larger one prints as the
    // double JavaScript would hold (its JSON.parse rounds it).
    let exact = n.as_u64().is_some_and(|u| u <= SAFE_INTEGER_LIMIT)
        || n.as_i64()
            .is_some_and(|i| i.unsigned_abs() <= SAFE_INTEGER_LIMIT);
    if exact {
        out.push_str(&n.to_string());
        return;
    }
    let f = as_f64(n);
    if f.is_finite() {
        out.push_str(&format_f64(f));
    } else {
        // JSON.stringify(Infinity) and JSON.stringify(NaN) are "null".
        out.push_str("null");
    }
}

fn write_string(out: &mut String, s: &str) {
    out.push('"');
    let mut plain_from = 0;
    for (i, c) in s.char_indices() {
        let escape = match c {
            '"' => "\\\"",
            '\\' => "\\\\",
            '\u{8}' => "\\b",
            '\u{c}' => "\\f",
            '\n' => "\\n",
            '\r' => "\\r",
            '\t' => "\\t",
            c if (c as u32) < 0x20 => "",
            _ => continue,
        };
        out.push_str(&s[plain_from..i]);
        if escape.is_empty() {
            out.push_str(&format!("\\u{:04x}", c as u32));
        } else {
            out.push_str(escape);
        }
        plain_from = i + c.len_utf8();
    }
    out.push_str(&s[plain_from..]);
    out.push('"');
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn number_parses_like_javascript() {
        assert_eq!(parse_number(" 24 "), Some(24.0));
        assert_eq!(parse_number("0x10"), Some(16.0));
        assert_eq!(parse_number("0b101"), Some(5.0));
        assert_eq!(parse_number("0o17"), Some(15.0));
        assert_eq!(parse_number("1e3"), Some(1000.0));
        assert_eq!(parse_number("-5"), Some(-5.0));
        assert_eq!(parse_number(".5"), Some(0.5));
        assert_eq!(parse_number("5."), Some(5.0));
        assert_eq!(parse_number(""), Some(0.0));
        assert_eq!(parse_number("-Infinity"), Some(f64::NEG_INFINITY));
        for bad in [
            "abc", "12px", "-0x10", "1_000", "1e", "e5", ".", "inf", "NaN", "0x",
        ] {
            assert_eq!(parse_number(bad), None, "{bad}");
        }
    }

    #[test]
    fn numbers_print_like_javascript() {
        let cases = [
            (3.5, "3.5"),
            (-0.25, "-0.25"),
            (1e21, "1e+21"),
            // 124247347733806.625 exactly: a tie between two 17-digit candidates, where
            // Node prints the even one.
            (f64::from_bits(0x42dc_4025_c1a9_4ba8), "124247347733806.62"),
            (1e-7, "1e-7"),
            (123456789.125, "123456789.125"),
            (0.000001, "0.000001"),
            (1.5e300, "1.5e+300"),
            (100.0, "100"),
            (-0.0, "0"),
        ];
        for (f, s) in cases {
            assert_eq!(format_f64(f), s);
        }
        assert_eq!(number_value(5.0), json!(5));
        assert_eq!(number_value(-3.0), json!(-3));
        assert_eq!(number_value(2.5), json!(2.5));
    }

    #[test]
    fn length_counts_like_typebox() {
        assert_eq!(string_length("abc"), 3);
        assert_eq!(string_length("héllo"), 5);
        assert_eq!(string_length("😀"), 1);
        assert_eq!(string_length("e\u{301}"), 1);
        assert_eq!(string_length("👨\u{200D}👩\u{200D}👧"), 1);
        assert_eq!(string_length("🇫🇷🇩🇪"), 2);
        assert_eq!(string_length("a\u{200D}"), 2);
    }

    #[test]
    fn stringify_matches_json_stringify() {
        let v = json!({"b": [1, 2.0, "x\n\u{1}"], "a": {}, "c": [], "10": true, "2": null});
        assert_eq!(
            stringify_pretty(&v),
            "{\n  \"2\": null,\n  \"10\": true,\n  \"b\": [\n    1,\n    2,\n    \"x\\n\\u0001\"\n  ],\n  \"a\": {},\n  \"c\": []\n}"
        );
    }

    #[test]
    fn equality_is_javascript_equality() {
        assert!(deep_equal(&json!(1), &json!(1.0)));
        assert!(deep_equal(
            &json!({"a": 1, "b": 2}),
            &json!({"b": 2, "a": 1})
        ));
        assert!(!deep_equal(&json!([1, 2]), &json!([2, 1])));
        assert!(!same_item(&json!(0.0), &json!(-0.0)));
    }
}

#[cfg(test)]
mod stringify_tests {
    use super::*;

    use serde_json::json;

    #[test]
    fn stringify_matches_javascript() {
        // Expected strings from Node 22's JSON.stringify of the same values.
        let cases = [
            (
                json!({"b": 1, "a": [true, null, "x"]}),
                r#"{"b":1,"a":[true,null,"x"]}"#,
            ),
            (json!({"b": 1, "2": 0, "1": 0}), r#"{"1":0,"2":0,"b":1}"#),
            (json!(1.5), "1.5"),
            (json!(1e21), "1e+21"),
            (json!(1e-7), "1e-7"),
            (json!(0.000001), "0.000001"),
            (json!(100.0), "100"),
            (json!(12_345_678_901_234_567_890u64), "12345678901234567000"),
            (json!(-9_007_199_254_740_993i64), "-9007199254740992"),
            (
                json!("a\"b\\c\n\u{1}\u{7f}é😀"),
                "\"a\\\"b\\\\c\\n\\u0001\u{7f}é😀\"",
            ),
        ];
        for (value, expected) in cases {
            assert_eq!(stringify(&value), expected, "{value:?}");
        }
    }

    #[test]
    fn length_counts_utf16_units() {
        assert_eq!(utf16_len("abc"), 3);
        assert_eq!(utf16_len("é"), 1);
        assert_eq!(utf16_len("😀"), 2);
        assert_eq!(utf16_len(""), 0);
    }
}
