//! Canonical JSON (FORMAT.md §5.1): sorted keys, integral numbers without a fraction,
//! `JSON.stringify(value, null, 2)` layout, one trailing newline.

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
        Value::Number(n) => Value::Number(js_number(n)),
        other => other.clone(),
    }
}

/// A number as JavaScript prints it: integral values without a fraction.
fn js_number(n: &serde_json::Number) -> serde_json::Number {
    if n.is_f64()
        && let Some(f) = n.as_f64()
        && f.fract() == 0.0
        && f.abs() < 9_007_199_254_740_992.0
    {
        return serde_json::Number::from(f as i64);
    }
    n.clone()
}

/// The value with integral floats as integers, keys in their own order (for compact
/// JavaScript-style strings such as template renderings).
pub fn js_value(value: &Value) -> Value {
    match value {
        Value::Object(map) => {
            Value::Object(map.iter().map(|(k, v)| (k.clone(), js_value(v))).collect())
        }
        Value::Array(items) => Value::Array(items.iter().map(js_value).collect()),
        Value::Number(n) => Value::Number(js_number(n)),
        other => other.clone(),
    }
}

/// `JSON.stringify(value)` (compact, own key order).
pub fn js_stringify(value: &Value) -> String {
    serde_json::to_string(&js_value(value)).unwrap_or_default()
}

/// The file content of an output value.
pub fn canonical_json(value: &Value) -> String {
    let mut text = serde_json::to_string_pretty(&canonical(value)).unwrap_or_default();
    text.push('\n');
    text
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
}
