//! Where subschemas live inside a JSON Schema object, and small order-preserving edits.
//!
//! Every pass (normalisation and provider profiles) walks the same positions, so they are
//! listed once here. Data-valued keywords (`default`, `examples`, `const`, `enum`) are
//! never walked: a `$ref` or `type` inside them is data, not schema.
//!
//! The workspace builds serde_json with `preserve_order`, where `Map::remove` is a swap
//! remove that reorders keys; these helpers only use `shift_*`, keeping wire schemas
//! deterministic and in declaration order.

use serde_json::{Map, Value};

/// Keywords whose value is one subschema.
pub const SINGLE: &[&str] = &[
    "items",
    "additionalItems",
    "not",
    "contains",
    "propertyNames",
    "additionalProperties",
    "unevaluatedProperties",
    "unevaluatedItems",
    "if",
    "then",
    "else",
    "contentSchema",
];

/// Keywords whose value maps names to subschemas.
pub const MAP: &[&str] = &[
    "properties",
    "patternProperties",
    "$defs",
    "definitions",
    "dependentSchemas",
];

/// Keywords whose value is a list of subschemas.
pub const LIST: &[&str] = &["anyOf", "oneOf", "allOf", "prefixItems"];

/// How a child schema hangs off its parent, for paths in messages and argument paths.
#[derive(Debug, Clone, Copy)]
pub enum Step<'a> {
    /// `parent[keyword]`.
    Key(&'a str),
    /// `parent[keyword][name]`.
    Entry(&'a str, &'a str),
    /// `parent[keyword][index]`.
    Index(&'a str, usize),
}

impl Step<'_> {
    /// The JSON-pointer segments of this step.
    pub fn push_pointer(&self, out: &mut String) {
        match self {
            Step::Key(k) => push_segment(out, k),
            Step::Entry(k, name) => {
                push_segment(out, k);
                push_segment(out, name);
            }
            Step::Index(k, i) => {
                push_segment(out, k);
                out.push('/');
                out.push_str(&i.to_string());
            }
        }
    }
}

/// Appends `/segment` with JSON-pointer escaping.
pub fn push_segment(out: &mut String, segment: &str) {
    out.push('/');
    for c in segment.chars() {
        match c {
            '~' => out.push_str("~0"),
            '/' => out.push_str("~1"),
            c => out.push(c),
        }
    }
}

/// Calls `f` on every direct subschema of `map`, mutably.
pub fn for_each_child_mut(map: &mut Map<String, Value>, mut f: impl FnMut(Step<'_>, &mut Value)) {
    for (key, value) in map.iter_mut() {
        let key = key.as_str();
        if SINGLE.contains(&key) {
            if key == "items" && value.is_array() {
                // Draft-07 tuple form.
                if let Value::Array(list) = value {
                    for (i, item) in list.iter_mut().enumerate() {
                        f(Step::Index(key, i), item);
                    }
                }
            } else {
                f(Step::Key(key), value);
            }
        } else if MAP.contains(&key) {
            if let Value::Object(entries) = value {
                for (name, item) in entries.iter_mut() {
                    f(Step::Entry(key, name.as_str()), item);
                }
            }
        } else if LIST.contains(&key)
            && let Value::Array(list) = value
        {
            for (i, item) in list.iter_mut().enumerate() {
                f(Step::Index(key, i), item);
            }
        }
    }
}

/// Calls `f` on every direct subschema of `map`.
pub fn for_each_child(map: &Map<String, Value>, mut f: impl FnMut(Step<'_>, &Value)) {
    for (key, value) in map.iter() {
        let key = key.as_str();
        if SINGLE.contains(&key) {
            if let Value::Array(list) = value {
                if key == "items" {
                    for (i, item) in list.iter().enumerate() {
                        f(Step::Index(key, i), item);
                    }
                }
            } else {
                f(Step::Key(key), value);
            }
        } else if MAP.contains(&key) {
            if let Value::Object(entries) = value {
                for (name, item) in entries.iter() {
                    f(Step::Entry(key, name.as_str()), item);
                }
            }
        } else if LIST.contains(&key)
            && let Value::Array(list) = value
        {
            for (i, item) in list.iter().enumerate() {
                f(Step::Index(key, i), item);
            }
        }
    }
}

/// The position of `key` in `map`.
pub fn index_of(map: &Map<String, Value>, key: &str) -> Option<usize> {
    map.keys().position(|k| k == key)
}

/// Replaces `old` by `new_key: value` at the same position (appends if `old` is absent).
pub fn replace_key(map: &mut Map<String, Value>, old: &str, new_key: &str, value: Value) {
    match index_of(map, old) {
        Some(i) => {
            map.shift_remove(old);
            map.shift_remove(new_key);
            let i = i.min(map.len());
            map.shift_insert(i, new_key.to_owned(), value);
        }
        None => {
            map.insert(new_key.to_owned(), value);
        }
    }
}

/// Appends `text` to the node's description: `"<existing> (<text>)"`, or `text` alone.
pub fn append_description(map: &mut Map<String, Value>, text: &str) {
    if text.is_empty() {
        return;
    }
    let joined = match map.get("description").and_then(Value::as_str) {
        Some(existing) if !existing.trim().is_empty() => format!("{existing} ({text})"),
        _ => text.to_owned(),
    };
    set_description(map, joined);
}

/// Sets the description, keeping its position or placing it first.
pub fn set_description(map: &mut Map<String, Value>, text: String) {
    if let Some(slot) = map.get_mut("description") {
        *slot = Value::String(text);
    } else {
        map.shift_insert(0, "description".to_owned(), Value::String(text));
    }
}

/// The JSON type names a schema's `type` keyword allows (empty if absent).
pub fn types_of(map: &Map<String, Value>) -> Vec<&str> {
    match map.get("type") {
        Some(Value::String(t)) => vec![t.as_str()],
        Some(Value::Array(list)) => list.iter().filter_map(Value::as_str).collect(),
        _ => Vec::new(),
    }
}

/// The JSON type name of a value, as JSON Schema spells it.
pub fn json_type_of(value: &Value) -> &'static str {
    match value {
        Value::Null => "null",
        Value::Bool(_) => "boolean",
        Value::Number(n) if n.is_i64() || n.is_u64() => "integer",
        Value::Number(_) => "number",
        Value::String(_) => "string",
        Value::Array(_) => "array",
        Value::Object(_) => "object",
    }
}
