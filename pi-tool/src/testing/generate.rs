//! Valid arguments from a tool's own schema: the generator behind
//! [`SchemaModel`](super::SchemaModel).
//!
//! A schema is walked once per *case*. Case `k` makes two choices everywhere:
//! `k % 2 == 0` puts every optional property in, `k % 2 == 1` leaves them all out; and
//! `k / 2` picks the option at every choice point (the `k/2`-th enum value, `anyOf` /
//! `oneOf` branch, entry of a `type` list, candidate number among the bounds, array
//! length, string format example). So a handful of cases covers each option of each
//! choice point at least once, with optional properties present and absent. Items of an
//! array use shifted choices, so that a list of enums holds different values.
//!
//! `$ref`s (`#`, `#/$defs/X`) are followed; after [`MAX_REF_DEPTH`] of them the walk turns
//! minimal (optional properties out, arrays at `minItems`, the cheapest union branch), so
//! recursive types end. Every case is then checked against the tool's compiled schema by
//! the caller: a case the generator got wrong is dropped (and reported), never sent.

use std::cell::Cell;

use serde_json::{Map, Value, json};

use super::scalars::{any_value, integer, number, pick, string};

/// `$ref`s followed before the walk turns minimal.
const MAX_REF_DEPTH: usize = 3;

/// Nesting at which the walk gives up (a schema the minimal walk cannot end).
const MAX_DEPTH: usize = 64;

/// How many items an array gets at most when its schema does not ask for more.
const SOFT_MAX_ITEMS: u64 = 3;

/// Schema nodes one walk may visit: a schema whose recursion or unions would make the
/// walk explode ends with an error instead of a hang.
const BUDGET: usize = 20_000;

/// The most cases generated per tool.
pub(crate) const MAX_CASES: usize = 12;

/// The cases for a schema: at least two (optional properties present, absent), more
/// when a choice point has more options. Duplicates are removed. Each is its case number
/// and the arguments, or why the generator could not build them.
pub(crate) fn cases(root: &Value) -> Vec<(usize, Result<Value, String>)> {
    let options = max_options(root, root, 0, 0, &Cell::new(BUDGET)).max(1);
    let count = (2 * options).clamp(2, MAX_CASES);
    let mut out: Vec<(usize, Result<Value, String>)> = Vec::new();
    for case in 0..count {
        let walk = Walk {
            root,
            present: case.is_multiple_of(2),
            budget: Cell::new(BUDGET),
        };
        let generated = walk.value(root, case / 2, 0, 0);
        if !out.iter().any(|(_, seen)| *seen == generated) {
            out.push((case, generated));
        }
    }
    out
}

/// The largest number of options at any choice point (bounded by [`MAX_CASES`]).
fn max_options(
    root: &Value,
    schema: &Value,
    refs: usize,
    depth: usize,
    budget: &Cell<usize>,
) -> usize {
    let Some(object) = schema.as_object() else {
        return 1;
    };
    if depth > MAX_DEPTH || budget.get() == 0 {
        return 1;
    }
    budget.set(budget.get() - 1);
    let mut most = 1;
    if let Some(reference) = object.get("$ref").and_then(Value::as_str) {
        if refs < MAX_REF_DEPTH
            && let Some(target) = resolve(root, reference)
        {
            most = most.max(max_options(root, target, refs + 1, depth + 1, budget));
        }
        return most;
    }
    if let Some(values) = object.get("enum").and_then(Value::as_array) {
        most = most.max(values.len());
    }
    if let Some(types) = object.get("type").and_then(Value::as_array) {
        most = most.max(types.len());
    }
    if types_of(object)
        .iter()
        .any(|t| matches!(*t, "integer" | "number" | "string"))
    {
        most = most.max(3);
    }
    for key in ["anyOf", "oneOf"] {
        if let Some(branches) = object.get(key).and_then(Value::as_array) {
            most = most.max(branches.len());
        }
    }
    for key in ["anyOf", "oneOf", "allOf", "prefixItems"] {
        for child in object
            .get(key)
            .and_then(Value::as_array)
            .into_iter()
            .flatten()
        {
            most = most.max(max_options(root, child, refs, depth + 1, budget));
        }
    }
    for child in object
        .get("properties")
        .and_then(Value::as_object)
        .into_iter()
        .flat_map(|p| p.values())
    {
        most = most.max(max_options(root, child, refs, depth + 1, budget));
    }
    for key in ["items", "additionalProperties"] {
        if let Some(child) = object.get(key) {
            most = most.max(max_options(root, child, refs, depth + 1, budget));
        }
    }
    most.min(MAX_CASES)
}

/// Resolves a local reference (`#`, `#/$defs/Node`, any JSON pointer into the root).
fn resolve<'a>(root: &'a Value, reference: &str) -> Option<&'a Value> {
    let pointer = reference.strip_prefix('#')?;
    if pointer.is_empty() {
        return Some(root);
    }
    root.pointer(pointer)
}

/// The `type` keyword as a list (empty when absent).
fn types_of(object: &Map<String, Value>) -> Vec<&str> {
    match object.get("type") {
        Some(Value::String(t)) => vec![t.as_str()],
        Some(Value::Array(ts)) => ts.iter().filter_map(Value::as_str).collect(),
        _ => Vec::new(),
    }
}

/// The type a schema without `type` describes, from its keywords.
fn implied_type(object: &Map<String, Value>) -> Option<&'static str> {
    let has = |keys: &[&str]| keys.iter().any(|k| object.contains_key(*k));
    if has(&[
        "properties",
        "required",
        "additionalProperties",
        "propertyNames",
        "minProperties",
        "maxProperties",
    ]) {
        Some("object")
    } else if has(&[
        "items",
        "prefixItems",
        "minItems",
        "maxItems",
        "uniqueItems",
    ]) {
        Some("array")
    } else if has(&["minLength", "maxLength", "pattern", "format"]) {
        Some("string")
    } else if has(&[
        "minimum",
        "maximum",
        "exclusiveMinimum",
        "exclusiveMaximum",
        "multipleOf",
    ]) {
        Some("number")
    } else {
        None
    }
}

/// One walk: one case's choices.
struct Walk<'a> {
    root: &'a Value,
    /// Whether optional properties go in.
    present: bool,
    /// Schema nodes this walk may still visit.
    budget: Cell<usize>,
}

impl Walk<'_> {
    /// A value for `schema`. `choice` picks among options; `refs` counts `$ref`s
    /// followed on this path.
    fn value(
        &self,
        schema: &Value,
        choice: usize,
        refs: usize,
        depth: usize,
    ) -> Result<Value, String> {
        if depth > MAX_DEPTH {
            return Err("the schema nests too deeply to end".to_owned());
        }
        match self.budget.get() {
            0 => return Err("the schema is too large to generate arguments for".to_owned()),
            left => self.budget.set(left - 1),
        }
        let object = match schema {
            Value::Bool(true) => return Ok(any_value(choice)),
            Value::Bool(false) => return Err("a `false` schema admits no value".to_owned()),
            Value::Object(object) => object,
            _ => return Err(format!("{schema} is not a schema")),
        };
        let minimal = refs >= MAX_REF_DEPTH;
        if let Some(reference) = object.get("$ref").and_then(Value::as_str) {
            let target = resolve(self.root, reference)
                .ok_or_else(|| format!("`$ref` {reference} does not resolve"))?;
            // Keywords beside a `$ref` apply too (2020-12): schemars puts an internally
            // tagged newtype variant's tag there.
            let siblings: Map<String, Value> = object
                .iter()
                .filter(|(k, _)| !matches!(k.as_str(), "$ref" | "description" | "title"))
                .map(|(k, v)| (k.clone(), v.clone()))
                .collect();
            if siblings.is_empty() {
                return self.value(target, choice, refs + 1, depth + 1);
            }
            let merged = with_siblings(target, &siblings);
            return self.value(&merged, choice, refs + 1, depth + 1);
        }
        if let Some(constant) = object.get("const") {
            return Ok(constant.clone());
        }
        if let Some(values) = object.get("enum").and_then(Value::as_array) {
            if values.is_empty() {
                return Err("an empty `enum` admits no value".to_owned());
            }
            return Ok(values[pick(choice, values.len())].clone());
        }
        if let Some(parts) = object.get("allOf").and_then(Value::as_array) {
            let merged = merge_all_of(object, parts, self.root);
            return self.value(&merged, choice, refs, depth + 1);
        }
        for key in ["anyOf", "oneOf"] {
            if let Some(branches) = object.get(key).and_then(Value::as_array) {
                return self.union(object, branches, choice, refs, depth, minimal);
            }
        }
        let types = types_of(object);
        let chosen = if types.is_empty() {
            match implied_type(object) {
                Some(t) => t,
                None => return Ok(any_value(choice)),
            }
        } else if (minimal || !self.present) && types.contains(&"null") {
            "null"
        } else {
            // As for unions: `null` where optional things stay out, the others in turn.
            let others: Vec<&str> = types.iter().copied().filter(|t| *t != "null").collect();
            if others.is_empty() {
                "null"
            } else {
                others[pick(choice, others.len())]
            }
        };
        match chosen {
            "null" => Ok(Value::Null),
            "boolean" => Ok(Value::Bool(choice.is_multiple_of(2))),
            "integer" => integer(object, choice),
            "number" => number(object, choice),
            "string" => string(object, choice),
            "array" => self.array(object, choice, refs, depth, minimal),
            "object" => self.object(object, choice, refs, depth, minimal),
            other => Err(format!("unknown type `{other}`")),
        }
    }

    fn union(
        &self,
        object: &Map<String, Value>,
        branches: &[Value],
        choice: usize,
        refs: usize,
        depth: usize,
        minimal: bool,
    ) -> Result<Value, String> {
        if branches.is_empty() {
            return Err("an empty union admits no value".to_owned());
        }
        // Siblings of the union (a `type`, `properties`) constrain every branch.
        let siblings: Map<String, Value> = object
            .iter()
            .filter(|(k, _)| !matches!(k.as_str(), "anyOf" | "oneOf" | "description" | "title"))
            .map(|(k, v)| (k.clone(), v.clone()))
            .collect();
        let mut order: Vec<usize> = (0..branches.len()).collect();
        if minimal || !self.present {
            // The cheapest branch first: `null`, then one without a reference.
            order.sort_by_key(|&i| branch_cost(&branches[i]));
        } else {
            // `null` (an `Option`'s other branch) only where optional things stay out, so
            // that what is inside the `Option` sees every choice.
            order.retain(|&i| branch_cost(&branches[i]) > 0);
            if order.is_empty() {
                order.push(0);
            }
            let first = pick(choice, order.len());
            order.rotate_left(first);
        }
        let mut last = String::new();
        for i in order {
            let branch = with_siblings(&branches[i], &siblings);
            match self.value(&branch, choice, refs, depth + 1) {
                Ok(value) => return Ok(value),
                Err(why) => last = why,
            }
        }
        Err(last)
    }

    fn array(
        &self,
        object: &Map<String, Value>,
        choice: usize,
        refs: usize,
        depth: usize,
        minimal: bool,
    ) -> Result<Value, String> {
        let min = object.get("minItems").and_then(Value::as_u64).unwrap_or(0);
        let max = object.get("maxItems").and_then(Value::as_u64);
        // 2020-12 tuples (`prefixItems` + `items`), or draft-07 ones (`items` as a list +
        // `additionalItems`).
        let (prefix, items): (&[Value], Option<&Value>) = match object.get("items") {
            Some(Value::Array(tuple)) => (tuple.as_slice(), object.get("additionalItems")),
            items => (
                object
                    .get("prefixItems")
                    .and_then(Value::as_array)
                    .map_or(&[], Vec::as_slice),
                items,
            ),
        };
        let rest_allowed =
            !matches!(items, Some(Value::Bool(false))) && (items.is_some() || prefix.is_empty());
        let wanted = if minimal {
            min
        } else {
            match choice % 3 {
                0 => min.max(1),
                1 => min,
                _ => min.max(SOFT_MAX_ITEMS),
            }
        };
        let mut len = wanted
            .max(min)
            .max(if minimal { 0 } else { prefix.len() as u64 });
        if let Some(max) = max {
            len = len.min(max);
        }
        if !rest_allowed {
            len = len.min(prefix.len() as u64);
        }
        if len < min {
            return Err(format!(
                "an array needs {min} items but its schema allows {len}"
            ));
        }
        let unique = object.get("uniqueItems").and_then(Value::as_bool) == Some(true);
        let mut out: Vec<Value> = Vec::new();
        let any = Value::Bool(true);
        for i in 0..len as usize {
            let schema = prefix.get(i).or(items).unwrap_or(&any);
            let mut tries = 0;
            loop {
                let item = self.value(schema, choice + i + tries, refs, depth + 1)?;
                if !unique || !out.contains(&item) {
                    out.push(item);
                    break;
                }
                tries += 1;
                if tries > 2 * MAX_CASES {
                    return Err(format!(
                        "no {} distinct items for a `uniqueItems` array",
                        len
                    ));
                }
            }
        }
        Ok(Value::Array(out))
    }

    fn object(
        &self,
        object: &Map<String, Value>,
        choice: usize,
        refs: usize,
        depth: usize,
        minimal: bool,
    ) -> Result<Value, String> {
        let required: Vec<&str> = object
            .get("required")
            .and_then(Value::as_array)
            .map(|r| r.iter().filter_map(Value::as_str).collect())
            .unwrap_or_default();
        let empty = Map::new();
        let properties = object
            .get("properties")
            .and_then(Value::as_object)
            .unwrap_or(&empty);
        let present = self.present && !minimal;
        let mut out = Map::new();
        for (name, schema) in properties {
            let is_required = required.contains(&name.as_str());
            if !is_required && !present {
                continue;
            }
            match self.value(schema, choice, refs, depth + 1) {
                Ok(value) => {
                    out.insert(name.clone(), value);
                }
                Err(why) if is_required => return Err(format!("{name}: {why}")),
                // An optional property the generator cannot fill stays out.
                Err(_) => {}
            }
        }
        for name in &required {
            if !out.contains_key(*name) {
                // Required but not described: any value will do.
                out.insert((*name).to_owned(), any_value(choice));
            }
        }
        let min = object
            .get("minProperties")
            .and_then(Value::as_u64)
            .unwrap_or(0) as usize;
        let extra = object.get("additionalProperties");
        // A map (no declared properties) gets an entry when optional things go in; any
        // object gets entries up to `minProperties`.
        let want_entries = if properties.is_empty() && present {
            1
        } else {
            0
        };
        let mut n = 0;
        while out.len() < min || n < want_entries {
            let Some(schema) = extra_schema(extra) else {
                break;
            };
            let key = self.key(object, choice + n, out.len())?;
            if out.contains_key(&key) {
                if n > MAX_CASES {
                    return Err("no distinct keys for the object's entries".to_owned());
                }
                n += 1;
                continue;
            }
            let value = self.value(&schema, choice + n, refs, depth + 1)?;
            out.insert(key, value);
            n += 1;
        }
        if let Some(max) = object.get("maxProperties").and_then(Value::as_u64) {
            let optional: Vec<String> = out
                .keys()
                .filter(|k| !required.contains(&k.as_str()))
                .cloned()
                .collect();
            for key in optional {
                if out.len() as u64 <= max {
                    break;
                }
                out.remove(&key);
            }
        }
        Ok(Value::Object(out))
    }

    /// A key for a map entry, from `propertyNames` when the schema has it.
    fn key(
        &self,
        object: &Map<String, Value>,
        choice: usize,
        index: usize,
    ) -> Result<String, String> {
        match object.get("propertyNames") {
            Some(names @ Value::Object(_)) => {
                let mut schema = names.clone();
                if let Some(o) = schema.as_object_mut() {
                    o.entry("type").or_insert_with(|| json!("string"));
                }
                match self.value(&schema, choice, 0, 0)? {
                    Value::String(key) => Ok(key),
                    other => Err(format!("`propertyNames` gave {other}, not a string")),
                }
            }
            _ => Ok(if index == 0 {
                "key".to_owned()
            } else {
                format!("key_{index}")
            }),
        }
    }
}

/// The schema of entries beyond the declared properties; `None` when there may be none.
fn extra_schema(additional: Option<&Value>) -> Option<Value> {
    match additional {
        None | Some(Value::Bool(true)) => Some(json!({"type": "string"})),
        Some(Value::Bool(false)) => None,
        Some(schema) => Some(schema.clone()),
    }
}

/// How expensive a union branch is to build minimally (`null` cheapest).
fn branch_cost(branch: &Value) -> u8 {
    let Some(object) = branch.as_object() else {
        return 1;
    };
    if types_of(object) == ["null"] || object.get("const") == Some(&Value::Null) {
        0
    } else if object.contains_key("$ref") {
        3
    } else if types_of(object)
        .iter()
        .any(|t| matches!(*t, "object" | "array"))
    {
        2
    } else {
        1
    }
}

/// A branch with the union's (or a `$ref`'s) sibling keywords added: `properties` and
/// `required` joined, any other keyword the branch's own when it has one.
fn with_siblings(branch: &Value, siblings: &Map<String, Value>) -> Value {
    if siblings.is_empty() {
        return branch.clone();
    }
    let Value::Object(own) = branch else {
        return branch.clone();
    };
    let mut merged = own.clone();
    for (key, value) in siblings {
        match (key.as_str(), merged.get_mut(key), value) {
            ("properties", Some(Value::Object(into)), Value::Object(from)) => {
                for (k, v) in from {
                    into.entry(k.clone()).or_insert_with(|| v.clone());
                }
            }
            ("required", Some(Value::Array(into)), Value::Array(from)) => {
                for v in from {
                    if !into.contains(v) {
                        into.push(v.clone());
                    }
                }
            }
            (_, Some(_), _) => {}
            (_, None, _) => {
                merged.insert(key.clone(), value.clone());
            }
        }
    }
    Value::Object(merged)
}

/// `allOf` as one schema: properties and `required` joined, other keywords from the
/// first part that has them (enough for the shapes schema generators emit).
fn merge_all_of(object: &Map<String, Value>, parts: &[Value], root: &Value) -> Value {
    let mut merged: Map<String, Value> = object
        .iter()
        .filter(|(k, _)| k.as_str() != "allOf")
        .map(|(k, v)| (k.clone(), v.clone()))
        .collect();
    for part in parts {
        let mut part = part;
        for _ in 0..MAX_REF_DEPTH {
            match part
                .get("$ref")
                .and_then(Value::as_str)
                .and_then(|r| resolve(root, r))
            {
                Some(target) => part = target,
                None => break,
            }
        }
        let Some(part) = part.as_object() else {
            continue;
        };
        for (key, value) in part {
            match (key.as_str(), merged.get_mut(key)) {
                ("properties", Some(Value::Object(into))) => {
                    if let Value::Object(from) = value {
                        for (k, v) in from {
                            into.entry(k.clone()).or_insert_with(|| v.clone());
                        }
                    }
                }
                ("required", Some(Value::Array(into))) => {
                    if let Value::Array(from) = value {
                        for v in from {
                            if !into.contains(v) {
                                into.push(v.clone());
                            }
                        }
                    }
                }
                (_, Some(_)) => {}
                (_, None) => {
                    merged.insert(key.clone(), value.clone());
                }
            }
        }
    }
    Value::Object(merged)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn all(schema: Value) -> Vec<Value> {
        cases(&schema)
            .into_iter()
            .map(|(_, c)| c.unwrap())
            .collect()
    }

    #[test]
    fn optional_properties_are_present_and_absent() {
        let got = all(json!({"type": "object", "properties": {
            "a": {"type": "string"}, "b": {"type": "boolean"}}, "required": ["a"]}));
        assert!(got.iter().any(|v| v.get("b").is_some()));
        assert!(got.iter().any(|v| v.get("b").is_none()));
        assert!(got.iter().all(|v| v.get("a").is_some()));
    }

    #[test]
    fn every_enum_value_and_both_bounds_appear() {
        let got = all(json!({"type": "object", "properties": {
            "u": {"type": "string", "enum": ["x", "y", "z", "w"]},
            "n": {"type": "integer", "minimum": 1, "maximum": 14}}, "required": ["u", "n"]}));
        for value in ["x", "y", "z", "w"] {
            assert!(got.iter().any(|v| v["u"] == value), "{value} in {got:?}");
        }
        assert!(got.iter().any(|v| v["n"] == 1));
        assert!(got.iter().any(|v| v["n"] == 14));
    }

    #[test]
    fn recursion_ends() {
        let got = all(json!({"type": "object", "properties": {
            "name": {"type": "string"}, "children": {"type": "array", "items": {"$ref": "#"}}},
            "required": ["name", "children"]}));
        assert!(!got.is_empty());
    }

    #[test]
    fn an_exploding_schema_ends_with_a_reason() {
        // Two required children of the root's own type, in a union with itself: no finite
        // value, and a naive walk would take 2^64 steps to find out.
        let schema = json!({"type": "object", "properties": {
            "l": {"anyOf": [{"$ref": "#"}, {"$ref": "#"}]}, "r": {"$ref": "#"}},
            "required": ["l", "r"]});
        let started = std::time::Instant::now();
        let got = cases(&schema);
        assert!(got.iter().all(|(_, c)| c.is_err()), "{got:?}");
        assert!(started.elapsed() < std::time::Duration::from_secs(10));
    }

    /// Every schema snapshot of the catalogue (raw schemars output, normalised, and each
    /// provider profile's wire schema): every case the generator builds validates.
    #[test]
    fn generated_cases_validate_against_every_catalogue_snapshot() {
        let dir = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/schemas");
        let mut checked = 0;
        let mut wrong = Vec::new();
        for profile in std::fs::read_dir(&dir).unwrap() {
            let profile = profile.unwrap().path();
            for file in std::fs::read_dir(&profile).unwrap() {
                let file = file.unwrap().path();
                let text = std::fs::read_to_string(&file).unwrap();
                let snapshot: Value = serde_json::from_str(&text).unwrap();
                let schema = snapshot.get("schema").cloned().unwrap_or(snapshot);
                let compiled = crate::schema::ToolSchema::from_json(schema.clone());
                if compiled.error().is_some() {
                    continue;
                }
                let generated = cases(&schema);
                if generated.iter().all(|(_, c)| c.is_err()) {
                    wrong.push(format!("{}: no case: {generated:?}", file.display()));
                }
                for (case, generated) in generated {
                    let Ok(arguments) = generated else { continue };
                    checked += 1;
                    if let Err(error) = compiled.validate("t", &arguments) {
                        wrong.push(format!(
                            "{} case {case}: {}",
                            file.display(),
                            error.message()
                        ));
                    }
                }
            }
        }
        assert!(checked > 1000, "{checked} cases");
        assert!(
            wrong.is_empty(),
            "{} of {checked} invalid:\n{}",
            wrong.len(),
            wrong.join("\n")
        );
    }

    /// Random schemas, well-formed or not (wrong keyword types, contradictions, dangling
    /// references): the generator never panics and always ends quickly.
    #[test]
    fn random_schemas_never_panic() {
        let mut seed: u64 = 0x9e37_79b9_7f4a_7c15;
        let mut next = move |n: u64| {
            seed ^= seed << 13;
            seed ^= seed >> 7;
            seed ^= seed << 17;
            seed % n
        };
        fn schema(next: &mut dyn FnMut(u64) -> u64, depth: u32) -> Value {
            let leaf = [
                json!({"type": "string", "minLength": 3, "maxLength": 1}),
                json!({"type": "string", "pattern": "^(a|b)+[0-9]{2}$"}),
                json!({"type": "string", "pattern": "(?=x)"}),
                json!({"type": "string", "format": "date-time"}),
                json!({"type": "integer", "minimum": 5, "maximum": 2}),
                json!({"type": "integer", "exclusiveMinimum": 1e300}),
                json!({"type": "number", "multipleOf": 0.0}),
                json!({"type": ["null", "boolean"]}),
                json!({"enum": []}),
                json!({"enum": "not a list"}),
                json!({"type": 5}),
                json!({"$ref": "#/$defs/missing"}),
                json!({"$ref": "#"}),
                json!(false),
                json!(true),
                json!({"const": {"a": 1}}),
                json!({"items": {"type": "integer"}, "minItems": 1_000_000}),
                json!({"properties": [], "required": "x"}),
            ];
            if depth == 0 || next(3) == 0 {
                return leaf[next(leaf.len() as u64) as usize].clone();
            }
            let child = |next: &mut dyn FnMut(u64) -> u64| schema(next, depth - 1);
            match next(6) {
                0 => json!({"type": "object", "properties": {"a": child(next), "b": child(next)},
                            "required": ["a"], "minProperties": next(4)}),
                1 => json!({"type": "array", "items": child(next), "minItems": next(3),
                            "maxItems": next(4), "uniqueItems": next(2) == 0}),
                2 => json!({"anyOf": [child(next), child(next)]}),
                3 => json!({"oneOf": [child(next)], "type": "object"}),
                4 => json!({"allOf": [child(next), {"$ref": "#"}]}),
                _ => json!({"type": "object", "additionalProperties": child(next),
                            "propertyNames": {"enum": ["k1", "k2"]}, "minProperties": 2}),
            }
        }
        let started = std::time::Instant::now();
        for _ in 0..150 {
            let root = json!({"type": "object", "properties": {"p": schema(&mut next, 4)}});
            let _ = cases(&root);
        }
        assert!(started.elapsed() < std::time::Duration::from_secs(60));
    }

    #[test]
    fn draft_07_tuples_are_filled() {
        let got = all(
            json!({"type": "object", "properties": {"p": {"type": "array",
            "items": [{"type": "string"}, {"type": "integer"}], "additionalItems": false}},
            "required": ["p"]}),
        );
        assert!(
            got.iter()
                .all(|v| v["p"][0].is_string() && v["p"][1].is_i64()),
            "{got:?}"
        );
    }

    #[test]
    fn unique_items_are_distinct() {
        let got = all(
            json!({"type": "object", "properties": {"s": {"type": "array",
            "uniqueItems": true, "minItems": 3, "items": {"type": "string", "enum": ["a", "b", "c"]}}},
            "required": ["s"]}),
        );
        for v in got {
            let items = v["s"].as_array().unwrap();
            assert_eq!(items.len(), 3);
            assert!(items.contains(&json!("a")) && items.contains(&json!("c")));
        }
    }
}
