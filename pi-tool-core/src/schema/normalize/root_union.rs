//! N5: a root `oneOf`/`anyOf` of object variants becomes one object.
//!
//! schemars emits a root union for enum-typed parameters and for a `#[serde(flatten)]`
//! enum; every provider (and most MCP hosts) rejects root combinators. The merged object
//! has the root's own properties, then every variant's properties (one property in
//! several variants with different schemas becomes an `anyOf` of them). When every
//! variant carries a tag property (a single `const`), it becomes a string `enum` of the
//! tags, variant docs go into its description, and variant-only properties say
//! `only when <tag> is …`. `required` keeps what every variant requires. The exact
//! variant rules are still enforced when the arguments are deserialised.

use serde_json::{Map, Value, json};

use crate::schema::keywords::{append_description, json_type_of, types_of};

/// Branch keys the merge understands; anything else is lost (with a warning).
const MERGED_KEYS: &[&str] = &[
    "type",
    "properties",
    "required",
    "additionalProperties",
    "unevaluatedProperties",
    "description",
    "title",
];

struct Tag {
    name: String,
    /// Per branch: the tag value.
    values: Vec<Value>,
}

/// Runs N5 on the root (no-op unless the root is a union of object schemas).
pub(super) fn merge_root_union(root: &mut Map<String, Value>, warnings: &mut Vec<String>) {
    let key = match (root.contains_key("oneOf"), root.contains_key("anyOf")) {
        (true, false) => "oneOf",
        (false, true) => "anyOf",
        _ => return,
    };
    let root_types = types_of(root);
    if !(root_types.is_empty() || root_types == ["object"]) {
        return;
    }
    let Some(Value::Array(branches)) = root.get(key) else {
        return;
    };
    let Some(branches) = branches
        .iter()
        .map(|b| b.as_object().filter(|b| is_object_schema(b)).cloned())
        .collect::<Option<Vec<Map<String, Value>>>>()
    else {
        return;
    };
    if branches.is_empty() {
        return;
    }
    let tag = find_tag(&branches);

    let mut properties = root
        .get("properties")
        .and_then(Value::as_object)
        .cloned()
        .unwrap_or_default();
    let own: Vec<String> = properties.keys().cloned().collect();

    // name → (distinct schemas, indices of the branches that have it)
    let mut collected: Vec<(String, Vec<Value>, Vec<usize>)> = Vec::new();
    let mut lost: Vec<String> = Vec::new();
    for (i, branch) in branches.iter().enumerate() {
        for k in branch.keys() {
            if !MERGED_KEYS.contains(&k.as_str()) && !lost.contains(k) {
                lost.push(k.clone());
            }
        }
        let Some(Value::Object(props)) = branch.get("properties") else {
            continue;
        };
        for (name, schema) in props {
            if own.contains(name) || tag.as_ref().is_some_and(|t| &t.name == name) {
                continue;
            }
            match collected.iter_mut().find(|(n, _, _)| n == name) {
                Some((_, schemas, present)) => {
                    if !schemas.contains(schema) {
                        schemas.push(schema.clone());
                    }
                    present.push(i);
                }
                None => collected.push((name.clone(), vec![schema.clone()], vec![i])),
            }
        }
    }

    if let Some(tag) = &tag {
        properties.insert(tag.name.clone(), tag_schema(tag, &branches));
    }
    for (name, mut schemas, present) in collected {
        let mut schema = if schemas.len() == 1 {
            schemas.pop().unwrap_or_else(|| json!({}))
        } else {
            json!({ "anyOf": schemas })
        };
        if let (Some(tag), true) = (&tag, present.len() < branches.len())
            && let Value::Object(m) = &mut schema
        {
            let values: Vec<String> = present.iter().map(|&i| show(&tag.values[i])).collect();
            append_description(
                m,
                &format!("only when {} is {}", tag.name, or_list(&values)),
            );
        }
        properties.insert(name, schema);
    }

    let mut required: Vec<Value> = root
        .get("required")
        .and_then(Value::as_array)
        .cloned()
        .unwrap_or_default();
    let branch_required = |b: &Map<String, Value>| -> Vec<Value> {
        b.get("required")
            .and_then(Value::as_array)
            .cloned()
            .unwrap_or_default()
    };
    if let Some(first) = branches.first() {
        for name in branch_required(first) {
            if branches.iter().all(|b| branch_required(b).contains(&name))
                && !required.contains(&name)
            {
                required.push(name);
            }
        }
    }
    let all_closed = branches
        .iter()
        .all(|b| b.get("additionalProperties") == Some(&Value::Bool(false)));

    let mut merged = Map::new();
    merged.insert("type".to_owned(), Value::from("object"));
    merged.insert("properties".to_owned(), Value::Object(properties));
    if !required.is_empty() {
        merged.insert("required".to_owned(), Value::Array(required));
    }
    let leftover_applicators = ["allOf", "if", "dependentSchemas", "$ref"]
        .iter()
        .any(|k| root.contains_key(*k));
    for (k, v) in root.iter() {
        match k.as_str() {
            "type" | "properties" | "required" => {}
            k2 if k2 == key => {}
            // With every property now in `properties` and no applicator left, the two
            // keywords mean the same; providers know only `additionalProperties`.
            "unevaluatedProperties"
                if !leftover_applicators && !root.contains_key("additionalProperties") =>
            {
                merged.insert("additionalProperties".to_owned(), v.clone());
            }
            _ => {
                merged.insert(k.clone(), v.clone());
            }
        }
    }
    if all_closed && !merged.contains_key("additionalProperties") {
        merged.insert("additionalProperties".to_owned(), Value::Bool(false));
    }
    *root = merged;

    let how = match &tag {
        Some(tag) => format!("with `{}` as the tag", tag.name),
        None => "without a tag property (all variant fields become optional)".to_owned(),
    };
    warnings.push(format!(
        "the root `{key}` of {} variants was merged into one object {how}",
        branches.len()
    ));
    if !lost.is_empty() {
        warnings.push(format!(
            "merging the root `{key}` dropped the variant keywords {}",
            lost.join(", ")
        ));
    }
}

fn is_object_schema(b: &Map<String, Value>) -> bool {
    let types = types_of(b);
    types == ["object"] || (types.is_empty() && b.contains_key("properties"))
}

/// The first property (in the first variant's order) that is a single constant in every
/// variant.
fn find_tag(branches: &[Map<String, Value>]) -> Option<Tag> {
    let first = branches.first()?.get("properties")?.as_object()?;
    'names: for name in first.keys() {
        let mut values = Vec::new();
        for b in branches {
            let schema = b.get("properties")?.as_object()?.get(name);
            match schema.and_then(single_value) {
                Some(v) => values.push(v),
                None => continue 'names,
            }
        }
        return Some(Tag {
            name: name.clone(),
            values,
        });
    }
    None
}

fn single_value(schema: &Value) -> Option<Value> {
    let m = schema.as_object()?;
    if let Some(c) = m.get("const") {
        return Some(c.clone());
    }
    match m.get("enum") {
        Some(Value::Array(list)) if list.len() == 1 => list.first().cloned(),
        _ => None,
    }
}

fn tag_schema(tag: &Tag, branches: &[Map<String, Value>]) -> Value {
    let mut values: Vec<Value> = Vec::new();
    for v in &tag.values {
        if !values.contains(v) {
            values.push(v.clone());
        }
    }
    let mut m = Map::new();
    let description = branches
        .first()
        .and_then(|b| {
            b.get("properties")?
                .get(&tag.name)?
                .get("description")?
                .as_str()
        })
        .map(str::to_owned);
    if let Some(d) = description {
        m.insert("description".to_owned(), Value::String(d));
    }
    let mut types: Vec<&str> = values.iter().map(json_type_of).collect();
    types.dedup();
    if let [only] = types.as_slice() {
        m.insert("type".to_owned(), Value::from(*only));
    }
    m.insert("enum".to_owned(), Value::Array(values));
    let docs: Vec<String> = branches
        .iter()
        .zip(&tag.values)
        .filter_map(|(b, v)| {
            let doc = b.get("description")?.as_str()?;
            Some(format!("{}: {doc}", show(v)))
        })
        .collect();
    if !docs.is_empty() {
        let text = docs.join("; ");
        match m.get("description").and_then(Value::as_str) {
            Some(d) => {
                let joined = format!("{d}\n{text}");
                m.insert("description".to_owned(), Value::String(joined));
            }
            None => {
                m.shift_insert(0, "description".to_owned(), Value::String(text));
            }
        }
    }
    Value::Object(m)
}

fn show(v: &Value) -> String {
    match v {
        Value::String(s) => s.clone(),
        other => other.to_string(),
    }
}

fn or_list(values: &[String]) -> String {
    match values {
        [] => String::new(),
        [one] => one.clone(),
        [init @ .., last] => format!("{} or {last}", init.join(", ")),
    }
}
