//! Canonical JSON (FORMAT.md §5.1): sorted keys, integral numbers without a fraction,
//! `JSON.stringify(value, null, 2)` layout, one trailing newline.
//!
//! [`ecma_canonical_json`] is the provider recordings' variant
//! (`conformance/providers/FORMAT.md` §3): the same layout, with every number written as
//! ECMAScript's `Number.prototype.toString` writes it (`0.000015`, not `1.5e-5`).

use pi_tool_core::__runtime::js;
use serde_json::{Map, Value};

/// The value with every object's keys sorted and every integral float turned into an
/// integer (`1000.0` → `1000`), recursively.
pub fn canonical(value: &Value) -> Value {
    match value {
        Value::Object(map) => {
            let mut keys: Vec<&String> = map.keys().collect();
            keys.sort();
            let mut out = Map::with_capacity(map.len());
            for key in keys {
                out.insert(key.clone(), canonical(&map[key]));
            }
            Value::Object(out)
        }
        Value::Array(items) => Value::Array(items.iter().map(canonical).collect()),
        Value::Number(n) => js_number(n),
        other => other.clone(),
    }
}

/// A number as JavaScript prints it: integral values without a fraction.
fn js_number(n: &serde_json::Number) -> Value {
    if n.is_f64() {
        js::number_value(js::as_f64(n))
    } else {
        Value::Number(n.clone())
    }
}

/// `JSON.stringify(value)` (compact, JavaScript's key order).
pub fn js_stringify(value: &Value) -> String {
    js::stringify(value)
}

/// The file content of an output value.
pub fn canonical_json(value: &Value) -> String {
    let mut text = serde_json::to_string_pretty(&canonical(value)).unwrap_or_default();
    text.push('\n');
    text
}

/// The file content of a provider recording (`conformance/providers/FORMAT.md` §3): keys
/// sorted by their UTF-8 bytes, two-space indentation, strings escaped as
/// `JSON.stringify` escapes them, numbers as ECMAScript prints them, one trailing newline.
pub fn ecma_canonical_json(value: &Value) -> String {
    let mut out = String::new();
    write_value(&mut out, value, 0);
    out.push('\n');
    out
}

fn write_value(out: &mut String, value: &Value, indent: usize) {
    match value {
        Value::Null => out.push_str("null"),
        Value::Bool(b) => out.push_str(if *b { "true" } else { "false" }),
        Value::Number(n) => out.push_str(&json_number(n)),
        Value::String(s) => write_string(out, s),
        Value::Array(items) => {
            if items.is_empty() {
                out.push_str("[]");
                return;
            }
            out.push('[');
            for (i, item) in items.iter().enumerate() {
                out.push_str(if i == 0 { "\n" } else { ",\n" });
                push_indent(out, indent + 2);
                write_value(out, item, indent + 2);
            }
            out.push('\n');
            push_indent(out, indent);
            out.push(']');
        }
        Value::Object(map) => {
            if map.is_empty() {
                out.push_str("{}");
                return;
            }
            // `str` orders by UTF-8 bytes, which is the format's key order.
            let mut keys: Vec<&String> = map.keys().collect();
            keys.sort();
            out.push('{');
            for (i, key) in keys.into_iter().enumerate() {
                out.push_str(if i == 0 { "\n" } else { ",\n" });
                push_indent(out, indent + 2);
                write_string(out, key);
                out.push_str(": ");
                write_value(out, &map[key], indent + 2);
            }
            out.push('\n');
            push_indent(out, indent);
            out.push('}');
        }
    }
}

fn push_indent(out: &mut String, n: usize) {
    out.extend(std::iter::repeat_n(' ', n));
}

/// A string as `JSON.stringify` escapes it: only `"`, `\` and the C0 controls.
fn write_string(out: &mut String, s: &str) {
    out.push_str(&js::stringify(&Value::String(s.to_owned())));
}

/// A JSON number as JavaScript holds and prints it: integers beyond 2^53 become the
/// nearest double first, as `JSON.parse` would make them.
fn json_number(n: &serde_json::Number) -> String {
    js::stringify(&Value::Number(n.clone()))
}

/// ECMAScript's `Number.prototype.toString()` of a double (what `JSON.stringify` writes),
/// with non-finite values as `null`.
pub fn ecma_number(value: f64) -> String {
    if value.is_finite() {
        js::format_f64(value)
    } else {
        "null".to_owned()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn sorts_keys_and_prints_integral_floats_as_integers() {
        let v = json!({"b": 1000.0, "a": [{"z": 1, "y": 3.5}], "c": {}, "d": []});
        assert_eq!(
            canonical_json(&v),
            "{\n  \"a\": [\n    {\n      \"y\": 3.5,\n      \"z\": 1\n    }\n  ],\n  \"b\": 1000,\n  \"c\": {},\n  \"d\": []\n}\n"
        );
        assert_eq!(
            js_stringify(&json!({"b": 2.0, "a": "°"})),
            "{\"b\":2,\"a\":\"°\"}"
        );
    }
    #[test]
    fn ecma_numbers_are_javascripts() {
        for (v, js) in [
            (0.0, "0"),
            (-0.0, "0"),
            (3.0, "3"),
            (64000.0, "64000"),
            (2.19, "2.19"),
            (3.75, "3.75"),
            (0.3, "0.3"),
            (0.000015, "0.000015"),
            (0.00007500000000000001, "0.00007500000000000001"),
            (0.0046170000000000004, "0.0046170000000000004"),
            (1e-7, "1e-7"),
            (1.5e-7, "1.5e-7"),
            (1e21, "1e+21"),
            (1.5e21, "1.5e+21"),
            (123456789012345680000.0, "123456789012345680000"),
            (-2.5, "-2.5"),
            (0.1 + 0.2, "0.30000000000000004"),
            (f64::NAN, "null"),
            (f64::INFINITY, "null"),
        ] {
            assert_eq!(ecma_number(v), js, "{v:e}");
        }
    }

    #[test]
    fn ecma_canonical_json_layout_and_escapes() {
        let v = json!({
            "b": [1, 2.5, {"z": null, "a": true}],
            "a": "q\"\\\u{8}\u{c}\n\r\t\u{1}\u{1f}/\u{7f}\u{2028}é",
            "é": {},
            "e": [],
            "big": 18014398509481985u64,
        });
        assert_eq!(
            ecma_canonical_json(&v),
            "{\n  \"a\": \"q\\\"\\\\\\b\\f\\n\\r\\t\\u0001\\u001f/\u{7f}\u{2028}é\",\n  \"b\": [\n    1,\n    2.5,\n    {\n      \"a\": true,\n      \"z\": null\n    }\n  ],\n  \"big\": 18014398509481984,\n  \"e\": [],\n  \"é\": {}\n}\n"
        );
    }
}
