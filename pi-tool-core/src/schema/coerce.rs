//! Pi's own coercion for plain JSON schemas (`coerceWithJsonSchema` in pi-ai's
//! `utils/validation.js`), run before validation.
//!
//! Models send `"24"` for a number or `1` for a boolean; Pi repairs the cases it considers
//! safe before it validates, and so must we, or a call that works in Pi would fail here. The
//! rules, verbatim from Pi (`coercePrimitiveByType`):
//!
//! | type | converts |
//! | --- | --- |
//! | number | non-blank strings `Number()` accepts as finite (`" 24 "`, `"0x10"`, `"1e3"`); `null` → 0; booleans → 1/0 |
//! | integer | the same, when the result is an integer (`"3.0"` → 3; `"3.7"` stays) |
//! | boolean | exactly `"true"`/`"false"`; numbers 1/0; `null` → false |
//! | string | `null` → `""`; numbers and booleans → `String(v)` (`3.5` → `"3.5"`) |
//! | null | `""`, 0 and false → `null` |
//!
//! The walk: `allOf` members in order; `anyOf`/`oneOf`: keep the value if a member accepts it,
//! else take the first member that accepts a coerced copy; `type`: the first type whose
//! conversion changes the value (skipped when a type array already matches); then object
//! `properties` (and an object-valued `additionalProperties`) and array `items`, but only
//! when `type` names `object`/`array`. Pi does not follow `$ref`, and neither does this.

use serde_json::Value;

use super::check;
use super::compile::{Compiled, Node, NodeId, PiItems, PiType};
use crate::js;

/// Coerces `value` in place, as Pi's `coerceWithJsonSchema(value, schema)` does (Pi returns
/// a new value for primitives and mutates objects and arrays; writing through `&mut` is the
/// same thing).
pub(crate) fn coerce(c: &Compiled, id: NodeId, value: &mut Value, depth: usize) {
    if depth > check::MAX_FRAMES {
        return;
    }
    let Node::Schema(k) = &c.nodes[id as usize] else {
        return;
    };
    let p = &k.pi;
    for member in &p.all_of {
        coerce(c, *member, value, depth + 1);
    }
    if !p.any_of.is_empty() {
        union(c, &p.any_of, value, depth);
    }
    if !p.one_of.is_empty() {
        union(c, &p.one_of, value, depth);
    }
    let matches_member = p.types.len() > 1 && p.types.iter().any(|t| matches_type(value, *t));
    if !p.types.is_empty() && !matches_member {
        for t in &p.types {
            if let Some(new) = primitive(value, *t) {
                *value = new;
                break;
            }
        }
    }
    if p.types.contains(&PiType::Object)
        && let Value::Object(map) = value
    {
        for (key, prop) in &p.properties {
            if let (Some(slot), Some(prop)) = (map.get_mut(key), prop) {
                coerce(c, *prop, slot, depth + 1);
            }
        }
        if let Some(extra) = p.additional {
            for (key, slot) in map.iter_mut() {
                if !p.properties.iter().any(|(name, _)| name == key) {
                    coerce(c, extra, slot, depth + 1);
                }
            }
        }
    }
    if p.types.contains(&PiType::Array)
        && let Value::Array(items) = value
    {
        match &p.items {
            PiItems::Each(id) => items
                .iter_mut()
                .for_each(|item| coerce(c, *id, item, depth + 1)),
            PiItems::Tuple(ids) => {
                for (item, id) in items.iter_mut().zip(ids) {
                    if let Some(id) = id {
                        coerce(c, *id, item, depth + 1);
                    }
                }
            }
            PiItems::None => {}
        }
    }
}

/// `coerceWithUnionSchema`: keep a value some member accepts; else the first member that
/// accepts a coerced copy wins; else leave the value.
fn union(c: &Compiled, members: &[NodeId], value: &mut Value, depth: usize) {
    if members.iter().any(|m| check::accepts(c, *m, value)) {
        return;
    }
    for m in members {
        let mut candidate = value.clone();
        coerce(c, *m, &mut candidate, depth + 1);
        if check::accepts(c, *m, &candidate) {
            *value = candidate;
            return;
        }
    }
}

/// Pi's `matchesJsonType`.
fn matches_type(v: &Value, t: PiType) -> bool {
    match t {
        PiType::Number => v.is_number(),
        PiType::Integer => matches!(v, Value::Number(n) if js::is_integer(n)),
        PiType::Boolean => v.is_boolean(),
        PiType::String => v.is_string(),
        PiType::Null => v.is_null(),
        PiType::Array => v.is_array(),
        PiType::Object => v.is_object(),
        PiType::Other => false,
    }
}

/// Pi's `coercePrimitiveByType`: `Some(new)` when the value changes.
pub(crate) fn primitive(v: &Value, t: PiType) -> Option<Value> {
    match (t, v) {
        (PiType::Number | PiType::Integer, Value::Null) => Some(Value::from(0)),
        (PiType::Number | PiType::Integer, Value::Bool(b)) => Some(Value::from(u8::from(*b))),
        (PiType::Number, Value::String(s)) if !js::js_trim(s).is_empty() => js::parse_number(s)
            .filter(|f| f.is_finite())
            .map(js::number_value),
        (PiType::Integer, Value::String(s)) if !js::js_trim(s).is_empty() => js::parse_number(s)
            .filter(|f| f.is_finite() && f.trunc() == *f)
            .map(js::number_value),
        (PiType::Boolean, Value::Null) => Some(Value::Bool(false)),
        (PiType::Boolean, Value::String(s)) if s == "true" => Some(Value::Bool(true)),
        (PiType::Boolean, Value::String(s)) if s == "false" => Some(Value::Bool(false)),
        (PiType::Boolean, Value::Number(n)) if js::as_f64(n) == 1.0 => Some(Value::Bool(true)),
        (PiType::Boolean, Value::Number(n)) if js::as_f64(n) == 0.0 => Some(Value::Bool(false)),
        (PiType::String, Value::Null) => Some(Value::String(String::new())),
        (PiType::String, Value::Number(n)) => Some(Value::String(js::format_number(n))),
        (PiType::String, Value::Bool(b)) => Some(Value::String(b.to_string())),
        (PiType::Null, Value::String(s)) if s.is_empty() => Some(Value::Null),
        (PiType::Null, Value::Number(n)) if js::as_f64(n) == 0.0 => Some(Value::Null),
        (PiType::Null, Value::Bool(false)) => Some(Value::Null),
        _ => None,
    }
}
