//! N4: inline every `$ref` to a non-recursive definition.
//!
//! Providers and MCP hosts handle `$defs`/`$ref` unevenly (Gemini's OpenAPI schema and
//! Ollama drop them; several MCP clients fail on them), and `$ref` with sibling keywords
//! (a documented field of struct type; the tag of an internally tagged newtype variant)
//! is dropped or rejected by most. Inlining removes both problems for everything that
//! is not recursive. A recursive definition (one that can reach itself through `$ref`s)
//! cannot be inlined and stays in `$defs`; `"$ref": "#"` (root recursion) stays too.
//!
//! Merging a `$ref` node with its definition: `properties` = the node's own first (they
//! win), then the definition's; `required` = the node's, then the definition's new names;
//! any other sibling replaces the definition's keyword (a field doc beats the type doc).
//! The merged keys sit where the `$ref` was.

use std::collections::{HashMap, HashSet};

use serde_json::{Map, Value};

use super::{MAX_DEPTH, SchemaError};
use crate::schema::keywords::{for_each_child, for_each_child_mut, push_segment};

/// The containers definitions may live in, with the `$ref` prefix that addresses them.
const CONTAINERS: &[(&str, &str)] = &[("$defs", "#/$defs"), ("definitions", "#/definitions")];

struct Defs {
    /// Reference string → definition body, in declaration order.
    bodies: Vec<(String, Value)>,
    /// Reference string → (container, name), to put recursive ones back.
    homes: HashMap<String, (&'static str, String)>,
    recursive: HashSet<String>,
    resolved: HashMap<String, Value>,
    in_progress: HashSet<String>,
}

/// Runs N4 on the root.
pub(super) fn inline_refs(
    root: &mut Map<String, Value>,
    warnings: &mut Vec<String>,
) -> Result<(), SchemaError> {
    let mut defs = Defs {
        bodies: Vec::new(),
        homes: HashMap::new(),
        recursive: HashSet::new(),
        resolved: HashMap::new(),
        in_progress: HashSet::new(),
    };
    let mut positions = Vec::new();
    for &(container, prefix) in CONTAINERS {
        let position = root.keys().position(|k| k == container);
        if let Some(Value::Object(entries)) = root.shift_remove(container) {
            positions.push((container, position));
            for (name, body) in entries {
                let mut reference = prefix.to_owned();
                push_segment(&mut reference, &name);
                defs.homes.insert(reference.clone(), (container, name));
                defs.bodies.push((reference, body));
            }
        }
    }
    if defs.bodies.is_empty() {
        return check_refs(root, &defs, warnings, 0);
    }
    defs.find_recursive()?;

    let mut root_value = Value::Object(std::mem::take(root));
    defs.inline_in(&mut root_value, 0)?;
    // Recursive definitions get their non-recursive references inlined as well.
    let mut kept: Vec<(&'static str, String, Value)> = Vec::new();
    for (reference, body) in defs.bodies.clone() {
        if defs.recursive.contains(&reference) {
            let mut body = body;
            defs.inline_in(&mut body, 0)?;
            if let Some((container, name)) = defs.homes.get(&reference) {
                kept.push((container, name.clone(), body));
            }
        }
    }
    let Value::Object(mut map) = root_value else {
        return Ok(());
    };
    for (container, position) in positions {
        let entries: Map<String, Value> = kept
            .iter()
            .filter(|(c, _, _)| *c == container)
            .map(|(_, name, body)| (name.clone(), body.clone()))
            .collect();
        if !entries.is_empty() {
            let at = position.unwrap_or(map.len()).min(map.len());
            map.shift_insert(at, container.to_owned(), Value::Object(entries));
        }
    }
    *root = map;
    check_refs(root, &defs, warnings, 0)
}

impl Defs {
    fn body(&self, reference: &str) -> Option<&Value> {
        self.bodies
            .iter()
            .find(|(r, _)| r == reference)
            .map(|(_, body)| body)
    }

    fn is_local_def(&self, reference: &str) -> bool {
        CONTAINERS
            .iter()
            .any(|(_, prefix)| reference.starts_with(&format!("{prefix}/")))
    }

    /// A definition is recursive when it can reach itself through `$ref`s.
    fn find_recursive(&mut self) -> Result<(), SchemaError> {
        let mut edges: HashMap<String, Vec<String>> = HashMap::new();
        for (reference, body) in &self.bodies {
            let mut out = Vec::new();
            collect_refs(body, &mut out, 0)?;
            out.retain(|r| self.homes.contains_key(r));
            edges.insert(reference.clone(), out);
        }
        for (reference, _) in &self.bodies {
            let mut seen = HashSet::new();
            let mut stack: Vec<&String> = edges.get(reference).into_iter().flatten().collect();
            while let Some(next) = stack.pop() {
                if next == reference {
                    self.recursive.insert(reference.clone());
                    break;
                }
                if seen.insert(next.clone()) {
                    stack.extend(edges.get(next).into_iter().flatten());
                }
            }
        }
        Ok(())
    }

    /// The definition with all its inlinable references inlined (memoised).
    fn resolved(&mut self, reference: &str) -> Result<Value, SchemaError> {
        if let Some(done) = self.resolved.get(reference) {
            return Ok(done.clone());
        }
        let Some(body) = self.body(reference).cloned() else {
            return Err(SchemaError::UnresolvedRef {
                reference: reference.to_owned(),
            });
        };
        if !self.in_progress.insert(reference.to_owned()) {
            // Unreachable for a correctly classified non-recursive definition; refuse
            // rather than loop.
            return Err(SchemaError::TooDeep);
        }
        let mut body = body;
        self.inline_in(&mut body, 0)?;
        self.in_progress.remove(reference);
        self.resolved.insert(reference.to_owned(), body.clone());
        Ok(body)
    }

    fn inline_in(&mut self, value: &mut Value, depth: usize) -> Result<(), SchemaError> {
        if depth > MAX_DEPTH {
            return Err(SchemaError::TooDeep);
        }
        let Value::Object(map) = value else {
            return Ok(());
        };
        if let Some(Value::String(reference)) = map.get("$ref") {
            let reference = reference.clone();
            if self.is_local_def(&reference) && !self.recursive.contains(&reference) {
                let body = self.resolved(&reference)?;
                *map = merge(std::mem::take(map), body);
            }
        }
        let mut result = Ok(());
        for_each_child_mut(map, |_, child| {
            if result.is_ok() {
                result = self.inline_in(child, depth + 1);
            }
        });
        result?;
        Ok(())
    }
}

/// Merges a `$ref` node's siblings into a copy of its definition (see the module docs).
fn merge(node: Map<String, Value>, definition: Value) -> Map<String, Value> {
    let definition = match definition {
        Value::Object(d) => d,
        Value::Bool(true) => Map::new(),
        Value::Bool(false) => {
            let mut m = Map::new();
            m.insert("not".to_owned(), Value::Object(Map::new()));
            m
        }
        _ => Map::new(),
    };
    let mut out = Map::new();
    for (key, value) in &node {
        match key.as_str() {
            "$ref" => {
                for (dk, dv) in &definition {
                    if !node.contains_key(dk) {
                        out.insert(dk.clone(), dv.clone());
                    }
                }
            }
            "properties" => {
                let mut props = value.as_object().cloned().unwrap_or_default();
                if let Some(Value::Object(def_props)) = definition.get("properties") {
                    for (name, schema) in def_props {
                        if !props.contains_key(name) {
                            props.insert(name.clone(), schema.clone());
                        }
                    }
                }
                out.insert(key.clone(), Value::Object(props));
            }
            "required" => {
                let mut required = value.as_array().cloned().unwrap_or_default();
                if let Some(Value::Array(def_required)) = definition.get("required") {
                    for name in def_required {
                        if !required.contains(name) {
                            required.push(name.clone());
                        }
                    }
                }
                out.insert(key.clone(), Value::Array(required));
            }
            _ => {
                out.insert(key.clone(), value.clone());
            }
        }
    }
    out
}

fn collect_refs(value: &Value, out: &mut Vec<String>, depth: usize) -> Result<(), SchemaError> {
    if depth > MAX_DEPTH {
        return Err(SchemaError::TooDeep);
    }
    let Value::Object(map) = value else {
        return Ok(());
    };
    if let Some(Value::String(r)) = map.get("$ref") {
        out.push(r.clone());
    }
    let mut result = Ok(());
    for_each_child(map, |_, child| {
        if result.is_ok() {
            result = collect_refs(child, out, depth + 1);
        }
    });
    result
}

/// Every remaining reference must be `#`, a kept definition, or (with a warning) foreign.
fn check_refs(
    root: &Map<String, Value>,
    defs: &Defs,
    warnings: &mut Vec<String>,
    depth: usize,
) -> Result<(), SchemaError> {
    let mut refs = Vec::new();
    collect_refs(&Value::Object(root.clone()), &mut refs, depth)?;
    let mut foreign: Vec<String> = Vec::new();
    for r in refs {
        if r == "#" || defs.recursive.contains(&r) {
            continue;
        }
        if defs.is_local_def(&r) {
            return Err(SchemaError::UnresolvedRef { reference: r });
        }
        if !foreign.contains(&r) {
            foreign.push(r);
        }
    }
    for r in foreign {
        warnings.push(format!(
            "`$ref: {r}` is not a local definition and was kept as is; providers may reject it"
        ));
    }
    Ok(())
}
