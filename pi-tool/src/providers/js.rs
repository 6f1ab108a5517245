//! JavaScript's view of JSON text that the providers must reproduce: compact
//! `JSON.stringify` (pi-ai sends tool-call arguments and measures tools this way) and
//! `string.length` (UTF-16 code units).

use serde_json::{Number, Value};

use crate::schema::js::{as_f64, format_f64, js_keys};

/// The largest integer a double holds exactly (`Number.MAX_SAFE_INTEGER + 1`).
const SAFE_INTEGER_LIMIT: u64 = 1 << 53;

/// `JSON.stringify(value)`: compact, keys in JavaScript's enumeration order, numbers as
/// `String(double)` (`1e+21`, `12345678901234567000`).
pub(crate) fn stringify(value: &Value) -> String {
    let mut out = String::new();
    write_value(&mut out, value);
    out
}

/// JavaScript's `text.length`: UTF-16 code units.
pub(crate) fn utf16_len(text: &str) -> usize {
    if text.is_ascii() {
        return text.len();
    }
    text.chars().map(char::len_utf16).sum()
}

fn write_value(out: &mut String, value: &Value) {
    match value {
        Value::Null => out.push_str("null"),
        Value::Bool(b) => out.push_str(if *b { "true" } else { "false" }),
        Value::Number(n) => write_number(out, n),
        Value::String(s) => write_string(out, s),
        Value::Array(items) => {
            out.push('[');
            for (i, item) in items.iter().enumerate() {
                if i > 0 {
                    out.push(',');
                }
                write_value(out, item);
            }
            out.push(']');
        }
        Value::Object(map) => {
            out.push('{');
            for (i, key) in js_keys(map).into_iter().enumerate() {
                if i > 0 {
                    out.push(',');
                }
                write_string(out, key);
                out.push(':');
                if let Some(v) = map.get(key) {
                    write_value(out, v);
                }
            }
            out.push('}');
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
