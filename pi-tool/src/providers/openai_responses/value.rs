//! Reading a streamed event as pi-ai's JavaScript reads it: a missing member is
//! `undefined`, reading through `undefined` or `null` throws V8's `TypeError`, and a value
//! in a template literal is `String(value)`.

use serde_json::Value;

use crate::js::format_number;
use crate::providers::openai_sse::js_truthy;

/// `value.key`: `Ok(None)` for `undefined` (a missing member, or any member of a
/// non-object value), Err with V8's message when `value` is `undefined` or `null`.
pub(super) fn member<'a>(value: Option<&'a Value>, key: &str) -> Result<Option<&'a Value>, String> {
    match value {
        None => Err(format!(
            "Cannot read properties of undefined (reading '{key}')"
        )),
        Some(Value::Null) => Err(format!("Cannot read properties of null (reading '{key}')")),
        Some(Value::Object(map)) => Ok(map.get(key)),
        Some(_) => Ok(None),
    }
}

/// `value?.key`: `undefined` through `undefined` or `null`.
pub(super) fn optional<'a>(value: Option<&'a Value>, key: &str) -> Option<&'a Value> {
    match value {
        Some(Value::Object(map)) => map.get(key),
        _ => None,
    }
}

/// JavaScript truthiness, `undefined` included.
pub(super) fn truthy(value: Option<&Value>) -> bool {
    value.is_some_and(js_truthy)
}

/// The member when it is a string.
pub(super) fn string(value: Option<&Value>) -> Option<&str> {
    value.and_then(Value::as_str)
}

/// `String(value)`, what a template literal or `+=` on a string writes.
pub(super) fn display(value: Option<&Value>) -> String {
    match value {
        None => "undefined".to_owned(),
        Some(Value::Null) => "null".to_owned(),
        Some(Value::Bool(b)) => b.to_string(),
        Some(Value::Number(n)) => format_number(n),
        Some(Value::String(s)) => s.clone(),
        Some(Value::Object(_)) => "[object Object]".to_owned(),
        Some(Value::Array(items)) => items.iter().map(join_element).collect::<Vec<_>>().join(","),
    }
}

/// How `Array.prototype.join` writes one element: `null` and `undefined` as nothing.
pub(super) fn join_element(value: &Value) -> String {
    match value {
        Value::Null => String::new(),
        other => display(Some(other)),
    }
}

/// A key that compares as JavaScript's `Map` compares keys (SameValueZero): numbers by
/// value (`0` and `0.0` are one key), strings by text, `undefined` and `null` as
/// themselves. Objects are never equal to one another in a `Map`; each gets a fresh key.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub(super) enum MapKey {
    Undefined,
    Null,
    Bool(bool),
    Number(u64),
    String(String),
    Unique(u64),
}

impl MapKey {
    /// The key of `value`; `next_unique` numbers object keys.
    pub(super) fn of(value: Option<&Value>, next_unique: &mut u64) -> MapKey {
        match value {
            None => MapKey::Undefined,
            Some(Value::Null) => MapKey::Null,
            Some(Value::Bool(b)) => MapKey::Bool(*b),
            Some(Value::Number(n)) => {
                let f = n.as_f64().unwrap_or(f64::NAN);
                // -0 and +0 are the same key.
                let f = if f == 0.0 { 0.0 } else { f };
                MapKey::Number(f.to_bits())
            }
            Some(Value::String(s)) => MapKey::String(s.clone()),
            Some(Value::Array(_) | Value::Object(_)) => {
                *next_unique += 1;
                MapKey::Unique(*next_unique)
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn member_access_throws_like_v8() {
        let v = json!({"a": null, "b": 1});
        assert_eq!(member(Some(&v), "b"), Ok(Some(&json!(1))));
        assert_eq!(member(Some(&v), "c"), Ok(None));
        assert_eq!(
            member(v.get("a"), "id"),
            Err("Cannot read properties of null (reading 'id')".to_owned())
        );
        assert_eq!(
            member(None, "type"),
            Err("Cannot read properties of undefined (reading 'type')".to_owned())
        );
        assert_eq!(member(Some(&json!("s")), "x"), Ok(None));
    }

    #[test]
    fn display_is_string_of_value() {
        assert_eq!(display(None), "undefined");
        assert_eq!(display(Some(&json!(2.0))), "2");
        assert_eq!(display(Some(&json!([1, null, "a"]))), "1,,a");
        assert_eq!(display(Some(&json!({"a": 1}))), "[object Object]");
    }

    #[test]
    fn map_keys_compare_like_same_value_zero() {
        let mut n = 0;
        assert_eq!(
            MapKey::of(Some(&json!(0)), &mut n),
            MapKey::of(Some(&json!(0.0)), &mut n)
        );
        assert_ne!(
            MapKey::of(Some(&json!({})), &mut n),
            MapKey::of(Some(&json!({})), &mut n)
        );
        assert_eq!(MapKey::of(None, &mut n), MapKey::Undefined);
    }
}
