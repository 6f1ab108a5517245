//! N2: a union of string constants (schemars' output for a unit enum with documented
//! variants) becomes one string `enum`, the form every provider accepts.

use serde_json::{Map, Value};

use super::{MAX_DEPTH, SchemaError};
use crate::schema::keywords::{append_description, for_each_child_mut, index_of, replace_key};

/// Keys a unit-variant branch may carry besides its value.
const BRANCH_KEYS: &[&str] = &["type", "const", "enum", "description", "title"];

/// Collapses every eligible `oneOf`/`anyOf` in the tree.
pub(super) fn collapse_all(map: &mut Map<String, Value>, depth: usize) -> Result<(), SchemaError> {
    if depth > MAX_DEPTH {
        return Err(SchemaError::TooDeep);
    }
    collapse(map);
    let mut result = Ok(());
    for_each_child_mut(map, |_, child| {
        if let Value::Object(m) = child
            && result.is_ok()
        {
            result = collapse_all(m, depth + 1);
        }
    });
    result
}

fn collapse(map: &mut Map<String, Value>) {
    let key = match (map.contains_key("oneOf"), map.contains_key("anyOf")) {
        (true, false) => "oneOf",
        (false, true) => "anyOf",
        _ => return,
    };
    if map.contains_key("enum") || map.contains_key("const") {
        return;
    }
    if let Some(t) = map.get("type")
        && t != "string"
    {
        return;
    }
    let Some(Value::Array(branches)) = map.get(key) else {
        return;
    };
    let Some((values, docs)) = string_constants(branches) else {
        return;
    };
    let at = index_of(map, key).unwrap_or(map.len());
    map.shift_remove(key);
    if !map.contains_key("type") {
        map.shift_insert(at.min(map.len()), "type".to_owned(), Value::from("string"));
    }
    let after_type = index_of(map, "type").map_or(map.len(), |i| i + 1);
    map.shift_insert(after_type, "enum".to_owned(), Value::Array(values));
    if !docs.is_empty() {
        append_variant_docs(map, &docs.join("; "));
    }
}

/// The values and `"<value>: <doc>"` lines of a union of string constants, or `None`
/// when any branch is something else.
fn string_constants(branches: &[Value]) -> Option<(Vec<Value>, Vec<String>)> {
    if branches.is_empty() {
        return None;
    }
    let mut values: Vec<Value> = Vec::new();
    let mut docs = Vec::new();
    for branch in branches {
        let b = branch.as_object()?;
        if b.keys().any(|k| !BRANCH_KEYS.contains(&k.as_str())) {
            return None;
        }
        if let Some(t) = b.get("type")
            && t != "string"
        {
            return None;
        }
        let own: Vec<Value> = match (b.get("const"), b.get("enum")) {
            (Some(c @ Value::String(_)), None) => vec![c.clone()],
            (None, Some(Value::Array(list))) if list.iter().all(Value::is_string) => list.clone(),
            _ => return None,
        };
        if own.is_empty() {
            return None;
        }
        if let Some(doc) = b.get("description").and_then(Value::as_str) {
            let names: Vec<&str> = own.iter().filter_map(Value::as_str).collect();
            // "; " joins the entries, so a doc's own closing period would read ".;".
            let doc = doc.trim().trim_end_matches('.');
            docs.push(format!("{}: {doc}", names.join(", ")));
        }
        for v in own {
            if !values.contains(&v) {
                values.push(v);
            }
        }
    }
    Some((values, docs))
}

/// Variant docs go on their own line after the enum's (or field's) own doc.
fn append_variant_docs(map: &mut Map<String, Value>, docs: &str) {
    match map.get("description").and_then(Value::as_str) {
        Some(existing) if !existing.trim().is_empty() => {
            let joined = format!("{existing}\n{docs}");
            replace_key(map, "description", "description", Value::String(joined));
        }
        _ => append_description(map, docs),
    }
}
