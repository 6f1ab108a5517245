//! Pi's `normalizeOptionalNulls`: an optional property sent as `null` is treated as absent.
//!
//! Strict structured-output modes make every property required and nullable, so models send
//! `null` for "not given". Before validating, Pi deletes a property whose value is `null` when
//! the property is not `required`, its schema is not a `$ref`, and its schema rejects `null`.
//! It recurses into present properties and array items (`items`), not into `allOf`/`anyOf`
//! or `$ref`s. Whether a property schema rejects `null` is computed once at compile time.

use serde_json::Value;

use super::check::MAX_FRAMES;
use super::compile::{Compiled, Node, NodeId, PiItems};

/// Deletes placeholder `null`s from `value` in place.
pub(crate) fn normalize(c: &Compiled, id: NodeId, value: &mut Value, depth: usize) {
    if depth > MAX_FRAMES {
        return;
    }
    let Node::Schema(k) = &c.nodes[id as usize] else {
        return;
    };
    let p = &k.pi;
    match value {
        Value::Array(items) => match &p.items {
            PiItems::Each(id) => items
                .iter_mut()
                .for_each(|item| normalize(c, *id, item, depth + 1)),
            PiItems::Tuple(ids) => {
                for (item, id) in items.iter_mut().zip(ids) {
                    if let Some(id) = id {
                        normalize(c, *id, item, depth + 1);
                    }
                }
            }
            PiItems::None => {}
        },
        Value::Object(map) => {
            for (i, (key, prop)) in p.properties.iter().enumerate() {
                let Some(slot) = map.get_mut(key) else {
                    continue;
                };
                let strip = slot.is_null()
                    && !p.required.iter().any(|r| r == key)
                    && !p.property_is_ref.get(i).copied().unwrap_or(true)
                    && p.property_rejects_null.get(i).copied().unwrap_or(false);
                if strip {
                    map.shift_remove(key);
                } else if let Some(prop) = prop {
                    normalize(c, *prop, slot, depth + 1);
                }
            }
        }
        _ => {}
    }
}
