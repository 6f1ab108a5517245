//! TypeBox 1.3's `Value.Convert`, for schemas shaped as TypeBox builds them.
//!
//! pi-ai runs `Value.Convert(tool.parameters, args)` before its own coercion. Convert only
//! acts on TypeBox types (schemas carrying TypeBox's `~kind`), so for plain JSON schemas
//! it does nothing, and [`ToolSchema`](super::ToolSchema) skips it by default. Tools whose
//! Pi counterparts are built with TypeBox (Pi's own coding tools) opt in with
//! [`ToolSchema::with_typebox_convert`](super::ToolSchema::with_typebox_convert); their
//! arguments are then converted as TypeBox converts them, before Pi's coercion.
//!
//! The kind of each subschema is read from the keywords TypeBox's factories write:
//!
//! | keywords | kind | converts (`value/convert/*.mjs`) |
//! | --- | --- | --- |
//! | `const` | Literal | the value converted to the literal's type, kept when it then equals the literal |
//! | `anyOf` | Union | kept if a member accepts it, else the first member's conversion the union accepts |
//! | `enum` | Enum | as a union of its literals |
//! | `type: "object"` | Object | each key matched by a property (`^key$`, TypeBox's unescaped regex), and `additionalProperties` when it is a schema |
//! | `type: "object"` with `patternProperties` only | Record | keys matched by each pattern, then `additionalProperties` |
//! | `type: "array"`, one `items` | Array | **a non-array becomes `[value]`**, then every item |
//! | `type: "array"`, `items` per position | Tuple | an array's items up to the shorter length |
//! | `type: "number"` / `"integer"` | Number / Integer | `+string` when finite (`""` → 0), `"true"`/`"false"` in any case → 1/0, `"12n"`; booleans → 1/0; `null` → 0; integers truncated |
//! | `type: "boolean"` | Boolean | `"true"`/`"false"` in any case, `"1"`/`"0"`, 1/0, `null` → false |
//! | `type: "string"` | String | numbers and booleans → `toString()`, `null` → `"null"` |
//! | `type: "null"` | Null | `false`, 0, `""`, `"0"`, `"null"`/`"undefined"` in any case → `null` |
//!
//! Anything else (`$ref`, `allOf`, a type array) is left as it is: TypeBox converts a
//! `Ref` only through a context Pi does not pass, and Pi's tools use none of the others.

use serde_json::Value;

use super::check;
use super::compile::{Compiled, Items, Node, NodeId, ty};
use crate::js;

/// `Value.Convert(parameters, args)` as pi-ai calls it: only an object root is changed,
/// in place (any other kind of root returns a new value, which pi-ai drops).
pub(crate) fn convert_root(c: &Compiled, value: &mut Value) {
    let Some(Node::Schema(k)) = c.nodes.first() else {
        return;
    };
    let object_kind = k.constant.is_none()
        && k.any_of.is_none()
        && k.enumeration.is_none()
        && k.types
            .as_ref()
            .is_some_and(|t| !t.is_array && t.names.len() == 1 && t.mask == ty::OBJECT);
    if object_kind && value.is_object() {
        convert(c, 0, value, 0);
    }
}

/// Converts `value` in place as `Value.Convert(schema, value)` leaves it (TypeBox
/// mutates objects in place and returns new values for the rest; the root's return value
/// is dropped by pi-ai, so a root that is not an object is left alone by the caller).
pub(crate) fn convert(c: &Compiled, id: NodeId, value: &mut Value, depth: usize) {
    if depth > check::MAX_FRAMES {
        return;
    }
    let Node::Schema(k) = &c.nodes[id as usize] else {
        return;
    };
    if let Some(literal) = &k.constant {
        if let Some(new) = literal_value(literal, value) {
            *value = new;
        }
        return;
    }
    if let Some(members) = &k.any_of {
        if members.iter().any(|m| check::accepts(c, *m, value)) {
            return;
        }
        for m in members {
            let mut candidate = value.clone();
            convert(c, *m, &mut candidate, depth + 1);
            if check::accepts(c, id, &candidate) {
                *value = candidate;
                return;
            }
        }
        return;
    }
    if let Some(options) = &k.enumeration {
        if options.iter().any(|o| strict_equal(o, value)) {
            return;
        }
        if let Some(new) = options
            .iter()
            .filter_map(|o| literal_value(o, value))
            .find(|v| options.iter().any(|o| strict_equal(o, v)))
        {
            *value = new;
        }
        return;
    }
    let Some(types) = &k.types else {
        return;
    };
    if types.is_array || types.names.len() != 1 {
        return;
    }
    match types.mask {
        ty::OBJECT => {
            let Value::Object(map) = value else {
                return;
            };
            let keys: Vec<String> = map.keys().cloned().collect();
            // A Record (`patternProperties`, no `properties`) matches keys by its
            // patterns; an Object by its property names, as unescaped regexes.
            let entries: Vec<(Matcher, NodeId)> = match (&k.properties, &k.pattern_properties) {
                (None, Some(patterns)) => patterns
                    .iter()
                    .map(|(p, id)| (Matcher::property(&p.source), *id))
                    .collect(),
                (Some(props), _) => props
                    .iter()
                    .map(|(name, id)| (Matcher::property(name), *id))
                    .collect(),
                (None, None) => Vec::new(),
            };
            for (matcher, prop) in &entries {
                for key in &keys {
                    if matcher.matches(key)
                        && let Some(slot) = map.get_mut(key)
                    {
                        convert(c, *prop, slot, depth + 1);
                    }
                }
            }
            // TypeBox's `FromAdditionalProperties` converts, for every entry, each key
            // that entry does not match (so a key can be converted more than once, and no
            // key is when there is no entry).
            if let Some(extra) = k.pi.additional {
                for (matcher, _) in &entries {
                    for key in &keys {
                        if !matcher.matches(key)
                            && let Some(slot) = map.get_mut(key)
                        {
                            convert(c, extra, slot, depth + 1);
                        }
                    }
                }
            }
        }
        ty::ARRAY => match &k.items {
            Some(Items::Unsized(item)) => {
                if !value.is_array() {
                    *value = Value::Array(vec![value.take()]);
                }
                if let Value::Array(items) = value {
                    for slot in items {
                        convert(c, *item, slot, depth + 1);
                    }
                }
            }
            Some(Items::Sized(positions)) => {
                if let Value::Array(items) = value {
                    for (slot, item) in items.iter_mut().zip(positions) {
                        convert(c, *item, slot, depth + 1);
                    }
                }
            }
            None => {}
        },
        ty::NUMBER => {
            if let Some(n) = try_number(value) {
                *value = js::number_value(n);
            }
        }
        ty::INTEGER => {
            if let Some(n) = try_number(value) {
                *value = js::number_value(n.trunc());
            }
        }
        ty::BOOLEAN => {
            if let Some(b) = try_boolean(value) {
                *value = Value::Bool(b);
            }
        }
        ty::STRING => {
            if let Some(s) = try_string(value) {
                *value = Value::String(s);
            }
        }
        ty::NULL if try_null(value) => *value = Value::Null,
        _ => {}
    }
}

/// A property name or pattern as TypeBox matches keys with it: `new RegExp("^" + key +
/// "$")`, unescaped and ungrouped.
enum Matcher {
    Exact(String),
    Regex(regex::Regex),
}

impl Matcher {
    fn property(name: &str) -> Matcher {
        if name
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || c == '_' || c == '-')
        {
            return Matcher::Exact(name.to_owned());
        }
        // A name with regex syntax in it matches what the pattern matches, as in TypeBox;
        // one the regex crate cannot compile (JavaScript would throw) matches itself.
        match regex::Regex::new(&format!("^{name}$")) {
            Ok(regex) => Matcher::Regex(regex),
            Err(_) => Matcher::Exact(name.to_owned()),
        }
    }

    fn matches(&self, key: &str) -> bool {
        match self {
            Matcher::Exact(name) => name == key,
            Matcher::Regex(regex) => regex.is_match(key),
        }
    }
}

/// JavaScript's `===` on JSON values (objects and arrays are never equal: two parsed
/// values are two objects).
fn strict_equal(a: &Value, b: &Value) -> bool {
    match (a, b) {
        (Value::Number(x), Value::Number(y)) => js::as_f64(x) == js::as_f64(y),
        (Value::String(x), Value::String(y)) => x == y,
        (Value::Bool(x), Value::Bool(y)) => x == y,
        (Value::Null, Value::Null) => true,
        _ => false,
    }
}

/// `FromLiteral`: the value converted to the literal's type when that equals the literal.
fn literal_value(literal: &Value, value: &Value) -> Option<Value> {
    if strict_equal(literal, value) {
        return None;
    }
    let converted = match literal {
        Value::String(_) => Value::String(try_string(value)?),
        Value::Number(_) => js::number_value(try_number(value)?),
        Value::Bool(_) => Value::Bool(try_boolean(value)?),
        _ => return None,
    };
    strict_equal(literal, &converted).then_some(converted)
}

/// `TryNumber`: finite numbers only (`Guard.IsNumber` is `Number.isFinite`).
fn try_number(value: &Value) -> Option<f64> {
    match value {
        Value::Bool(b) => Some(f64::from(u8::from(*b))),
        Value::Number(n) => Some(js::as_f64(n)).filter(|f| f.is_finite()),
        Value::Null => Some(0.0),
        Value::String(s) => {
            if let Some(f) = js::parse_number(s).filter(|f| f.is_finite()) {
                return Some(f);
            }
            let lower = s.to_lowercase();
            if lower == "false" {
                return Some(0.0);
            }
            if lower == "true" {
                return Some(1.0);
            }
            // `TryBigInt`: only its `123n` form is left (the decimal and integer forms
            // already parsed above); in range of a safe integer.
            let digits = s.strip_suffix('n')?;
            let unsigned = digits.strip_prefix('-').unwrap_or(digits);
            let canonical = unsigned == "0"
                || (!unsigned.is_empty()
                    && !unsigned.starts_with('0')
                    && unsigned.bytes().all(|b| b.is_ascii_digit()));
            if !canonical {
                return None;
            }
            let n: i128 = digits.parse().ok()?;
            const SAFE: i128 = 9_007_199_254_740_991;
            // i128 -> f64 is exact for safe integers.
            (-SAFE..=SAFE).contains(&n).then_some(n as f64)
        }
        _ => None,
    }
}

/// `TryBoolean`.
fn try_boolean(value: &Value) -> Option<bool> {
    match value {
        Value::Bool(b) => Some(*b),
        Value::Number(n) => {
            let f = js::as_f64(n);
            if f == 0.0 {
                Some(false)
            } else if f == 1.0 {
                Some(true)
            } else {
                None
            }
        }
        Value::Null => Some(false),
        Value::String(s) => match s.to_lowercase().as_str() {
            "false" => Some(false),
            "true" => Some(true),
            _ if s == "0" => Some(false),
            _ if s == "1" => Some(true),
            _ => None,
        },
        _ => None,
    }
}

/// `TryString`.
fn try_string(value: &Value) -> Option<String> {
    match value {
        Value::Bool(b) => Some(b.to_string()),
        Value::Number(n) => Some(js::format_number(n)),
        Value::Null => Some("null".to_owned()),
        Value::String(s) => Some(s.clone()),
        _ => None,
    }
}

/// `TryNull`.
fn try_null(value: &Value) -> bool {
    match value {
        Value::Bool(b) => !*b,
        Value::Number(n) => js::as_f64(n) == 0.0,
        Value::Null => true,
        Value::String(s) => {
            let lower = s.to_lowercase();
            lower == "undefined" || lower == "null" || s.is_empty() || s == "0"
        }
        _ => false,
    }
}
