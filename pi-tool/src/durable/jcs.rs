//! RFC 8785, the JSON Canonicalization Scheme (JCS), for `serde_json` values: what the
//! approval digest and the audit chain hash.
//!
//! * object members sorted by their names' UTF-16 code units (not by UTF-8 bytes: the two
//!   orders differ above U+FFFF against U+E000..U+FFFF);
//! * numbers as ECMAScript's `Number.prototype.toString` prints the double (`1e+21`,
//!   `4.5`, `-0` as `0`); an integer beyond 2^53 is first rounded to the double, as a
//!   JavaScript parser would read it;
//! * strings with the escapes of ECMAScript's `JSON.stringify` (`\b \t \n \f \r \" \\`,
//!   other control characters as `\u00xx`, everything else as itself);
//! * no whitespace.

use std::fmt::Write as _;

use serde_json::{Map, Number, Value};

/// The canonical JSON text of `value` (RFC 8785).
pub fn canonicalize(value: &Value) -> String {
    let mut out = String::new();
    write_value(&mut out, value);
    out
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
        Value::Object(map) => write_object(out, map),
    }
}

fn write_object(out: &mut String, map: &Map<String, Value>) {
    let mut members: Vec<(&String, &Value)> = map.iter().collect();
    members.sort_by(|(a, _), (b, _)| a.encode_utf16().cmp(b.encode_utf16()));
    out.push('{');
    for (i, (key, value)) in members.into_iter().enumerate() {
        if i > 0 {
            out.push(',');
        }
        write_string(out, key);
        out.push(':');
        write_value(out, value);
    }
    out.push('}');
}

fn write_number(out: &mut String, n: &Number) {
    // JSON numbers are doubles in JCS; `as_f64` is the correctly rounded double of an
    // integer too (serde_json never holds a non-finite number).
    let f = n.as_f64().unwrap_or(0.0);
    if f == 0.0 {
        out.push('0');
    } else {
        out.push_str(&pi_tool_core::__runtime::js::format_f64(f));
    }
}

fn write_string(out: &mut String, s: &str) {
    out.push('"');
    for c in s.chars() {
        match c {
            '"' => out.push_str("\\\""),
            '\\' => out.push_str("\\\\"),
            '\u{8}' => out.push_str("\\b"),
            '\t' => out.push_str("\\t"),
            '\n' => out.push_str("\\n"),
            '\u{c}' => out.push_str("\\f"),
            '\r' => out.push_str("\\r"),
            c if c < ' ' => {
                let _ = write!(out, "\\u{:04x}", c as u32);
            }
            c => out.push(c),
        }
    }
    out.push('"');
}

#[cfg(test)]
mod tests {
    use super::canonicalize;
    use serde_json::{Value, json};

    fn canon(text: &str) -> String {
        let value: Value = serde_json::from_str(text).unwrap();
        canonicalize(&value)
    }

    /// RFC 8785 §3.2.2: the example of the whole scheme.
    #[test]
    fn rfc_8785_section_3_2_2() {
        let input = r#"{
          "numbers": [333333333.33333329, 1E30, 4.50, 2e-3, 0.000000000000000000000000001],
          "string": "\u20ac$\u000F\u000aA'\u0042\u0022\u005c\\\"\/",
          "literals": [null, true, false]
        }"#;
        assert_eq!(
            canon(input),
            r#"{"literals":[null,true,false],"numbers":[333333333.3333333,1e+30,4.5,0.002,1e-27],"string":"€$\u000f\nA'B\"\\\\\"/"}"#
        );
    }

    /// RFC 8785 §3.2.3: sorting by UTF-16 code units.
    #[test]
    fn rfc_8785_section_3_2_3_sorting() {
        let input = r#"{
          "\u20ac": "Euro Sign",
          "\r": "Carriage Return",
          "\ufb33": "Hebrew Letter Dalet With Dagesh",
          "1": "One",
          "\ud83d\ude00": "Emoji: Grinning Face",
          "\u0080": "Control",
          "\u00f6": "Latin Small Letter O With Diaeresis"
        }"#;
        let out = canon(input);
        let keys: Vec<&str> = [
            "\r",
            "1",
            "\u{80}",
            "\u{f6}",
            "\u{20ac}",
            "\u{1f600}",
            "\u{fb33}",
        ]
        .to_vec();
        let value: serde_json::Map<String, Value> = serde_json::from_str(&out).unwrap();
        assert_eq!(value.keys().map(String::as_str).collect::<Vec<_>>(), keys);
        assert!(out.starts_with(r#"{"\r":"Carriage Return","1":"One""#));
    }

    /// RFC 8785 Appendix B: IEEE 754 doubles and their canonical text.
    #[test]
    fn rfc_8785_appendix_b_numbers() {
        let cases: &[(u64, &str)] = &[
            (0x0000000000000000, "0"),
            (0x8000000000000000, "0"),
            (0x0000000000000001, "5e-324"),
            (0x8000000000000001, "-5e-324"),
            (0x7fefffffffffffff, "1.7976931348623157e+308"),
            (0xffefffffffffffff, "-1.7976931348623157e+308"),
            (0x4340000000000000, "9007199254740992"),
            (0xc340000000000000, "-9007199254740992"),
            (0x4430000000000000, "295147905179352830000"),
            (0x44b52d02c7e14af5, "9.999999999999997e+22"),
            (0x44b52d02c7e14af6, "1e+23"),
            (0x44b52d02c7e14af7, "1.0000000000000001e+23"),
            (0x444b1ae4d6e2ef4e, "999999999999999700000"),
            (0x444b1ae4d6e2ef4f, "999999999999999900000"),
            (0x444b1ae4d6e2ef50, "1e+21"),
            (0x3eb0c6f7a0b5ed8c, "9.999999999999997e-7"),
            (0x3eb0c6f7a0b5ed8d, "0.000001"),
            (0x41b3de4355555553, "333333333.3333332"),
            (0x41b3de4355555554, "333333333.33333325"),
            (0x41b3de4355555555, "333333333.3333333"),
            (0x41b3de4355555556, "333333333.3333334"),
            (0x41b3de4355555557, "333333333.33333343"),
            (0xbecbf647612f3696, "-0.0000033333333333333333"),
            (0x43143ff3c1cb0959, "1424953923781206.2"),
        ];
        for &(bits, expected) in cases {
            let value = serde_json::Number::from_f64(f64::from_bits(bits)).map(Value::Number);
            let value = value.unwrap_or(Value::Null);
            assert_eq!(canonicalize(&value), expected, "bits {bits:016x}");
        }
    }

    #[test]
    fn integers_and_their_double_spelling_are_one_text() {
        assert_eq!(canonicalize(&json!(7)), canonicalize(&json!(7.0)));
        assert_eq!(canonicalize(&json!(-0.0)), "0");
        // Beyond 2^53 an integer is the double a JavaScript parser reads.
        assert_eq!(
            canonicalize(&json!(9007199254740993u64)),
            "9007199254740992"
        );
    }

    #[test]
    fn nested_objects_sort_at_every_level() {
        let value = json!({"b": {"z": 1, "a": [{"y": 2, "x": 1}]}, "a": null});
        assert_eq!(
            canonicalize(&value),
            r#"{"a":null,"b":{"a":[{"x":1,"y":2}],"z":1}}"#
        );
    }
}
