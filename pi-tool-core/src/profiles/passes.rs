//! Structural passes shared by the profiles (design §c.3): each rewrites one schema
//! node and is applied to every node by [`each_node`].

use serde_json::{Map, Value, json};

use super::Ctx;
use crate::schema::MAX_DEPTH;
use crate::schema::keywords::{
    append_description, for_each_child_mut, index_of, json_type_of, replace_key, types_of,
};

/// A pass over one schema node: the node, its JSON pointer, the collected messages.
pub(crate) type NodeFn<'a> = dyn FnMut(&mut Map<String, Value>, &str, &mut Ctx) + 'a;

/// Applies `f` to every schema object, parents before children (so children created by
/// `f` are visited too). `f` gets the node's JSON pointer.
pub(crate) fn each_node(schema: &mut Value, ctx: &mut Ctx, f: &mut NodeFn<'_>) {
    let mut path = String::new();
    go(schema, &mut path, 0, ctx, f);
}

fn go(value: &mut Value, path: &mut String, depth: usize, ctx: &mut Ctx, f: &mut NodeFn<'_>) {
    if depth > MAX_DEPTH {
        ctx.error(path, "the schema nests too deep to be processed");
        return;
    }
    let Value::Object(map) = value else {
        return;
    };
    f(map, path, ctx);
    for_each_child_mut(map, |step, child| {
        let len = path.len();
        step.push_pointer(path);
        go(child, path, depth + 1, ctx, f);
        path.truncate(len);
    });
}

/// Annotation keywords that stay on the outer node when a node is split into branches.
const ANNOTATIONS: &[&str] = &[
    "title",
    "description",
    "default",
    "deprecated",
    "examples",
    "readOnly",
    "writeOnly",
    "$comment",
];

/// P-oneOf: `oneOf` → `anyOf`. Serde's tagged variants are disjoint (by tag or by JSON
/// type), so "exactly one" and "at least one" accept the same values.
pub(crate) fn one_of_to_any_of(m: &mut Map<String, Value>, path: &str, ctx: &mut Ctx) {
    let Some(one_of) = m.get("oneOf").cloned() else {
        return;
    };
    match m.get_mut("anyOf") {
        Some(Value::Array(any_of)) => {
            if let Value::Array(list) = one_of {
                any_of.extend(list);
            }
            m.shift_remove("oneOf");
            ctx.warn(
                path,
                "`oneOf` and `anyOf` on one node were merged into one `anyOf`",
            );
        }
        _ => replace_key(m, "oneOf", "anyOf", one_of),
    }
}

/// P-const: `const: v` → `enum: [v]` (+ `type` from `v` when missing).
pub(crate) fn const_to_enum(m: &mut Map<String, Value>, _: &str, _: &mut Ctx) {
    let Some(value) = m.get("const").cloned() else {
        return;
    };
    let ty = json_type_of(&value);
    replace_key(m, "const", "enum", json!([value]));
    if !m.contains_key("type") {
        let at = index_of(m, "enum").unwrap_or(m.len());
        m.shift_insert(at, "type".to_owned(), Value::from(ty));
    }
}

/// P-tuple: `prefixItems` → one `items` schema (the distinct position schemas, as an
/// `anyOf` when they differ), lengths kept, and the positions described in words.
pub(crate) fn tuple_to_items(m: &mut Map<String, Value>, _: &str, _: &mut Ctx) {
    let Some(Value::Array(positions)) = m.get("prefixItems").cloned() else {
        return;
    };
    let n = positions.len();
    let rest = m.get("items").filter(|i| i.is_object()).cloned();
    let mut distinct: Vec<Value> = Vec::new();
    for s in positions.iter().chain(rest.iter()) {
        if !distinct.contains(s) {
            distinct.push(s.clone());
        }
    }
    let items = match distinct.len() {
        0 => json!({}),
        1 => distinct.pop().unwrap_or_else(|| json!({})),
        _ => json!({ "anyOf": distinct }),
    };
    m.shift_remove("items");
    replace_key(m, "prefixItems", "items", items);
    if !m.contains_key("minItems") {
        m.insert("minItems".to_owned(), Value::from(n));
    }
    if !m.contains_key("maxItems") && rest.is_none() {
        m.insert("maxItems".to_owned(), Value::from(n));
    }
    let shapes: Vec<String> = positions.iter().map(short_type).collect();
    append_description(
        m,
        &format!("tuple of {n} positional items: {}", shapes.join(", ")),
    );
}

/// A few words for a schema's shape, for descriptions.
pub(crate) fn short_type(schema: &Value) -> String {
    let Some(m) = schema.as_object() else {
        return "any value".to_owned();
    };
    let types = types_of(m);
    if !types.is_empty() {
        return types.join(" or ");
    }
    if let Some(Value::Array(values)) = m.get("enum") {
        let shown: Vec<String> = values.iter().map(Value::to_string).collect();
        return format!("one of {}", shown.join(", "));
    }
    if let Some(v) = m.get("const") {
        return v.to_string();
    }
    if let Some(Value::Array(branches)) = m.get("anyOf").or_else(|| m.get("oneOf")) {
        let shown: Vec<String> = branches.iter().map(short_type).collect();
        return shown.join(" or ");
    }
    "any value".to_owned()
}

/// Keywords that only constrain one JSON type (the rest go to every branch).
fn keyword_type(key: &str) -> Option<&'static str> {
    Some(match key {
        "minLength" | "maxLength" | "pattern" | "format" | "contentEncoding"
        | "contentMediaType" => "string",
        "minimum" | "maximum" | "exclusiveMinimum" | "exclusiveMaximum" | "multipleOf" => "number",
        "items" | "prefixItems" | "minItems" | "maxItems" | "uniqueItems" | "contains"
        | "minContains" | "maxContains" | "unevaluatedItems" => "array",
        "properties"
        | "required"
        | "additionalProperties"
        | "patternProperties"
        | "propertyNames"
        | "minProperties"
        | "maxProperties"
        | "unevaluatedProperties"
        | "dependentRequired"
        | "dependentSchemas" => "object",
        _ => return None,
    })
}

fn type_matches(value: &Value, ty: &str) -> bool {
    let actual = json_type_of(value);
    actual == ty || (ty == "number" && actual == "integer")
}

/// P-typearray→anyOf: `type: [T, "null"]` → `anyOf: [{type: T, …its keywords},
/// {type: "null"}]`; annotations stay outside.
pub(crate) fn type_array_to_any_of(m: &mut Map<String, Value>, _: &str, _: &mut Ctx) {
    let Some(Value::Array(types)) = m.get("type") else {
        return;
    };
    let types: Vec<String> = types
        .iter()
        .filter_map(Value::as_str)
        .map(str::to_owned)
        .collect();
    if let [only] = types.as_slice() {
        let only = Value::from(only.as_str());
        replace_key(m, "type", "type", only);
        return;
    }
    if m.contains_key("anyOf") {
        // `type` and `anyOf` on one node: keep the intersection by nesting.
        let any_of = m.shift_remove("anyOf").unwrap_or(Value::Null);
        m.insert("allOf".to_owned(), json!([{ "anyOf": any_of }]));
    }
    let mut outer = Map::new();
    let mut inner: Vec<(String, Value)> = Vec::new();
    for (k, v) in std::mem::take(m) {
        if k == "type" {
            outer.insert("anyOf".to_owned(), Value::Null);
        } else if ANNOTATIONS.contains(&k.as_str()) {
            outer.insert(k, v);
        } else {
            inner.push((k, v));
        }
    }
    let branches: Vec<Value> = types
        .iter()
        .map(|t| {
            let mut b = Map::new();
            b.insert("type".to_owned(), Value::from(t.as_str()));
            if t == "null" {
                return Value::Object(b);
            }
            for (k, v) in &inner {
                let applies = match keyword_type(k) {
                    Some(kt) => kt == t || (kt == "number" && t == "integer"),
                    None => true,
                };
                if !applies {
                    continue;
                }
                match (k.as_str(), v) {
                    ("enum", Value::Array(values)) => {
                        let own: Vec<Value> = values
                            .iter()
                            .filter(|v| type_matches(v, t))
                            .cloned()
                            .collect();
                        b.insert(k.clone(), Value::Array(own));
                    }
                    ("const", c) if !type_matches(c, t) => {}
                    _ => {
                        b.insert(k.clone(), v.clone());
                    }
                }
            }
            Value::Object(b)
        })
        .collect();
    outer.insert("anyOf".to_owned(), Value::Array(branches));
    *m = outer;
}

/// P-nullable (OpenAPI 3.0): nullability becomes `nullable: true`.
pub(crate) fn nullable(m: &mut Map<String, Value>, path: &str, ctx: &mut Ctx) {
    if matches!(m.get("type"), Some(Value::Array(_))) {
        type_array_to_any_of(m, path, ctx);
    }
    let Some(Value::Array(branches)) = m.get("anyOf") else {
        return;
    };
    let is_null = |b: &Value| {
        b.as_object()
            .is_some_and(|b| b.len() == 1 && b.get("type") == Some(&json!("null")))
    };
    if !branches.iter().any(is_null) {
        return;
    }
    let rest: Vec<Value> = branches.iter().filter(|b| !is_null(b)).cloned().collect();
    let at = index_of(m, "anyOf").unwrap_or(m.len());
    m.shift_remove("anyOf");
    match rest.as_slice() {
        [Value::Object(only)] => {
            let mut i = at;
            for (k, v) in only {
                if !m.contains_key(k) {
                    m.shift_insert(i.min(m.len()), k.clone(), v.clone());
                    i += 1;
                }
            }
        }
        [] => {
            m.shift_insert(at.min(m.len()), "type".to_owned(), Value::from("null"));
        }
        _ => {
            m.shift_insert(at.min(m.len()), "anyOf".to_owned(), Value::Array(rest));
        }
    }
    m.insert("nullable".to_owned(), Value::Bool(true));
}

/// P-ref-siblings for OpenAI: `{"$ref": r, …}` → `{"anyOf": [{"$ref": r}], …}`.
pub(crate) fn ref_siblings_any_of(m: &mut Map<String, Value>, _: &str, _: &mut Ctx) {
    if m.len() < 2 {
        return;
    }
    let Some(reference) = m.get("$ref").cloned() else {
        return;
    };
    match m.get_mut("anyOf") {
        Some(Value::Array(list)) => {
            list.push(json!({ "$ref": reference }));
            m.shift_remove("$ref");
        }
        _ => replace_key(m, "$ref", "anyOf", json!([{ "$ref": reference }])),
    }
}

/// P-ref-siblings for Gemini: only `description` and `default` may sit beside `$ref`.
pub(crate) fn ref_siblings_description_only(m: &mut Map<String, Value>, path: &str, ctx: &mut Ctx) {
    if !m.contains_key("$ref") {
        return;
    }
    let dropped: Vec<String> = m
        .keys()
        .filter(|k| !matches!(k.as_str(), "$ref" | "description" | "default"))
        .cloned()
        .collect();
    for k in &dropped {
        m.shift_remove(k);
    }
    if !dropped.is_empty() {
        ctx.warn(
            path,
            &format!("dropped {} beside a recursive `$ref`", dropped.join(", ")),
        );
    }
}

/// N9: `additionalProperties: true` is the default; drop it.
pub(crate) fn drop_additional_true(m: &mut Map<String, Value>, _: &str, _: &mut Ctx) {
    if m.get("additionalProperties") == Some(&Value::Bool(true)) {
        m.shift_remove("additionalProperties");
    }
}

/// Gemini: `required` may only name declared properties.
pub(crate) fn required_only_declared(m: &mut Map<String, Value>, path: &str, ctx: &mut Ctx) {
    let declared: Vec<String> = m
        .get("properties")
        .and_then(Value::as_object)
        .map(|p| p.keys().cloned().collect())
        .unwrap_or_default();
    let Some(Value::Array(required)) = m.get_mut("required") else {
        return;
    };
    let before = required.len();
    required.retain(|r| r.as_str().is_some_and(|r| declared.iter().any(|d| d == r)));
    if required.len() != before {
        ctx.warn(
            path,
            "dropped `required` names that are not declared properties",
        );
    }
    if required.is_empty() {
        m.shift_remove("required");
    }
}

/// Removes `default: null` (strict modes: `null` is how "absent" is spelled there).
pub(crate) fn drop_default_null(m: &mut Map<String, Value>, _: &str, _: &mut Ctx) {
    if m.get("default") == Some(&Value::Null) {
        m.shift_remove("default");
    }
}

/// OpenAI strict: regexes with lookaround are not supported; they move to the description.
pub(crate) fn lookaround_pattern_to_description(m: &mut Map<String, Value>, _: &str, _: &mut Ctx) {
    if let Some(p) = m.get("pattern").and_then(Value::as_str)
        && ["(?=", "(?!", "(?<=", "(?<!"].iter().any(|l| p.contains(l))
    {
        let note = format!("pattern: {p}");
        m.shift_remove("pattern");
        append_description(m, &note);
    }
}

/// Gemini OpenAPI: `enum` only holds strings; an all-string enum gets `type: string`,
/// any other enum becomes words in the description.
pub(crate) fn enum_strings(m: &mut Map<String, Value>, _: &str, _: &mut Ctx) {
    let Some(Value::Array(values)) = m.get("enum") else {
        return;
    };
    let non_null: Vec<&Value> = values.iter().filter(|v| !v.is_null()).collect();
    if non_null.iter().all(|v| v.is_string()) && !non_null.is_empty() {
        let strings: Vec<Value> = non_null.into_iter().cloned().collect();
        let had_null = strings.len() != values.len();
        replace_key(m, "enum", "enum", Value::Array(strings));
        if !m.contains_key("type") {
            let at = index_of(m, "enum").unwrap_or(m.len());
            m.shift_insert(at, "type".to_owned(), Value::from("string"));
        }
        if had_null {
            m.insert("nullable".to_owned(), Value::Bool(true));
        }
    } else {
        let shown: Vec<String> = values.iter().map(Value::to_string).collect();
        let note = format!("allowed values: {}", shown.join(", "));
        m.shift_remove("enum");
        append_description(m, &note);
    }
}

/// Gemini OpenAPI: no `additionalProperties`; a map schema becomes words.
pub(crate) fn drop_additional_properties(m: &mut Map<String, Value>, _: &str, _: &mut Ctx) {
    match m.shift_remove("additionalProperties") {
        Some(Value::Object(values)) => {
            let note = format!(
                "object with arbitrary keys; values: {}",
                short_type(&Value::Object(values))
            );
            append_description(m, &note);
        }
        Some(Value::Bool(true)) => {
            append_description(m, "object with arbitrary keys");
        }
        _ => {}
    }
}

/// Gemini OpenAPI: `examples` → `example` (the first one).
pub(crate) fn examples_to_example(m: &mut Map<String, Value>, _: &str, _: &mut Ctx) {
    if let Some(Value::Array(examples)) = m.get("examples").cloned() {
        match examples.into_iter().next() {
            Some(first) => replace_key(m, "examples", "example", first),
            None => {
                m.shift_remove("examples");
            }
        }
    }
}

/// Gemini OpenAPI: `propertyOrdering` for objects with more than one property.
pub(crate) fn property_ordering(m: &mut Map<String, Value>, _: &str, _: &mut Ctx) {
    let Some(Value::Object(props)) = m.get("properties") else {
        return;
    };
    if props.len() > 1 {
        let names: Vec<Value> = props.keys().map(|k| Value::from(k.as_str())).collect();
        m.insert("propertyOrdering".to_owned(), Value::Array(names));
    }
}

/// Gemini OpenAPI: an object type must declare properties ("should be non-empty for
/// OBJECT type"); the root may be empty (the declaration then omits `parameters`).
pub(crate) fn objects_have_properties(m: &mut Map<String, Value>, path: &str, ctx: &mut Ctx) {
    if path.is_empty() || !types_of(m).contains(&"object") {
        return;
    }
    let empty = m
        .get("properties")
        .and_then(Value::as_object)
        .is_none_or(Map::is_empty);
    if empty {
        ctx.error(
            path,
            "is an object without declared properties (a map, `serde_json::Map` or an \
             empty struct); Gemini's OpenAPI schema requires at least one property",
        );
    }
}
