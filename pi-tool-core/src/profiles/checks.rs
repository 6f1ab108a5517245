//! Whole-schema checks: root shape, recursion, and the size budgets providers enforce.

use serde_json::{Map, Value, json};

use super::Ctx;
use crate::schema::MAX_DEPTH;
use crate::schema::keywords::{Step, for_each_child, for_each_child_mut, types_of};

/// Sizes of a wire schema that providers limit (OpenAI strict, Anthropic strict).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
#[non_exhaustive]
pub struct Budget {
    /// Properties declared by all objects together.
    pub properties: usize,
    /// Properties not listed in their object's `required`.
    pub optional_properties: usize,
    /// Properties whose schema is a union (`anyOf` or a `type` array).
    pub union_properties: usize,
    /// Deepest nesting of object schemas (the root object is level 1).
    pub object_depth: usize,
    /// `enum` values, all enums together.
    pub enum_values: usize,
    /// Characters of property names, definition names and enum/const strings.
    pub string_chars: usize,
}

impl Budget {
    /// Measures `schema`.
    pub fn of(schema: &Value) -> Budget {
        let mut b = Budget::default();
        if let Some(Value::Object(defs)) = schema.get("$defs") {
            b.string_chars += defs.keys().map(|k| k.chars().count()).sum::<usize>();
        }
        measure(schema, 0, 0, &mut b);
        b
    }
}

fn measure(value: &Value, depth: usize, objects: usize, b: &mut Budget) {
    let Value::Object(m) = value else {
        return;
    };
    if depth > MAX_DEPTH {
        return;
    }
    let mut objects = objects;
    if types_of(m).contains(&"object") || m.contains_key("properties") {
        objects += 1;
        b.object_depth = b.object_depth.max(objects);
    }
    if let Some(Value::Object(props)) = m.get("properties") {
        let required: Vec<&str> = m
            .get("required")
            .and_then(Value::as_array)
            .map(|r| r.iter().filter_map(Value::as_str).collect())
            .unwrap_or_default();
        for (name, schema) in props {
            b.properties += 1;
            b.string_chars += name.chars().count();
            if !required.contains(&name.as_str()) {
                b.optional_properties += 1;
            }
            let union = schema.get("anyOf").is_some()
                || schema.get("oneOf").is_some()
                || schema.get("type").is_some_and(Value::is_array);
            if union {
                b.union_properties += 1;
            }
        }
    }
    if let Some(Value::Array(values)) = m.get("enum") {
        b.enum_values += values.len();
        b.string_chars += values
            .iter()
            .filter_map(Value::as_str)
            .map(|s| s.chars().count())
            .sum::<usize>();
    }
    if let Some(Value::String(s)) = m.get("const") {
        b.string_chars += s.chars().count();
    }
    for_each_child(m, |_, child| measure(child, depth + 1, objects, b));
}

/// Every provider wants an object root without root-level combinators.
pub(crate) fn check_root(schema: &Value, ctx: &mut Ctx) {
    let Some(m) = schema.as_object() else {
        ctx.error("", "the schema is not a JSON object");
        return;
    };
    if types_of(m) != ["object"] {
        ctx.error("", "the root must have `type: \"object\"`");
    }
    for key in ["anyOf", "oneOf", "allOf"] {
        if m.contains_key(key) {
            ctx.error(
                "",
                &format!("root-level `{key}` is rejected; make the parameters one struct"),
            );
        }
    }
}

/// A `$ref` in the schema: from which scope (`#` or a definition), to which, whether the
/// innermost property holding it is required, and where it is.
pub(crate) struct RefEdge {
    pub(crate) from: String,
    pub(crate) to: String,
    pub(crate) required: bool,
    pub(crate) pointer: String,
}

/// Every `$ref` of the schema.
pub(crate) fn ref_edges(schema: &Value) -> Vec<RefEdge> {
    let mut out = Vec::new();
    let mut pointer = String::new();
    edges(schema, "#", true, &mut pointer, 0, &mut out);
    out
}

fn edges(
    value: &Value,
    scope: &str,
    required: bool,
    pointer: &mut String,
    depth: usize,
    out: &mut Vec<RefEdge>,
) {
    let Value::Object(m) = value else {
        return;
    };
    if depth > MAX_DEPTH {
        return;
    }
    if let Some(Value::String(r)) = m.get("$ref") {
        let to = if r == "#" {
            "#".to_owned()
        } else {
            r.strip_prefix("#/$defs/").unwrap_or(r).to_owned()
        };
        out.push(RefEdge {
            from: scope.to_owned(),
            to,
            required,
            pointer: pointer.clone(),
        });
    }
    let required_names: Vec<&str> = m
        .get("required")
        .and_then(Value::as_array)
        .map(|r| r.iter().filter_map(Value::as_str).collect())
        .unwrap_or_default();
    for_each_child(m, |step, child| {
        let len = pointer.len();
        step.push_pointer(pointer);
        match step {
            Step::Entry("$defs", name) if depth == 0 => {
                edges(child, name, true, pointer, depth + 1, out);
            }
            Step::Entry("properties", name) => {
                let req = required_names.contains(&name);
                edges(child, scope, req, pointer, depth + 1, out);
            }
            _ => edges(child, scope, required, pointer, depth + 1, out),
        }
        pointer.truncate(len);
    });
}

/// Does `from` reach `to` through references?
fn reaches(edges: &[RefEdge], from: &str, to: &str) -> bool {
    let mut stack = vec![from.to_owned()];
    let mut seen: Vec<String> = Vec::new();
    while let Some(at) = stack.pop() {
        if at == to {
            return true;
        }
        if seen.contains(&at) {
            continue;
        }
        seen.push(at.clone());
        stack.extend(edges.iter().filter(|e| e.from == at).map(|e| e.to.clone()));
    }
    false
}

/// The references that close a cycle (recursion).
pub(crate) fn cyclic_edges(schema: &Value) -> Vec<RefEdge> {
    let all = ref_edges(schema);
    let cyclic: Vec<bool> = all.iter().map(|e| reaches(&all, &e.to, &e.from)).collect();
    all.into_iter()
        .zip(cyclic)
        .filter_map(|(e, c)| c.then_some(e))
        .collect()
}

/// Profiles that cannot express recursion at all.
pub(crate) fn forbid_recursion(schema: &Value, ctx: &mut Ctx, why: &str) {
    for e in cyclic_edges(schema) {
        ctx.error(
            &e.pointer,
            &format!(
                "is recursive ({} leads back to {}); {why}",
                scope_name(&e.to),
                scope_name(&e.from)
            ),
        );
    }
}

fn scope_name(scope: &str) -> String {
    if scope == "#" {
        "the parameters object".to_owned()
    } else {
        format!("`{scope}`")
    }
}

/// Gemini: recursion only through non-required properties.
pub(crate) fn gemini_recursion(schema: &Value, ctx: &mut Ctx) {
    let mut warned = false;
    for e in cyclic_edges(schema) {
        if e.required {
            ctx.error(
                &e.pointer,
                "is a recursive reference inside a required property; Gemini only allows \
                 recursion through optional properties (use `Option<…>` or `#[serde(default)]`)",
            );
        } else if !warned {
            warned = true;
            ctx.warn(
                &e.pointer,
                "is recursive; Gemini unrolls recursion only to a limited depth",
            );
        }
    }
}

/// Ollama (and local servers) ignore `$ref`: each recursive definition is expanded
/// once where it is used, and the reference that would repeat it becomes a described
/// object; `$defs` goes.
pub(crate) fn cut_recursion(schema: &mut Value, ctx: &mut Ctx) {
    let defs = schema
        .as_object_mut()
        .and_then(|m| m.shift_remove("$defs"))
        .and_then(|d| d.as_object().cloned())
        .unwrap_or_default();
    let mut cut = false;
    let mut expanding = vec!["#".to_owned()];
    expand_refs(schema, &defs, &mut expanding, &mut cut, 0);
    if cut {
        ctx.warn(
            "",
            "has recursive parts; below one level they are described in words, as this \
             profile cannot express `$ref`",
        );
    }
}

fn expand_refs(
    value: &mut Value,
    defs: &Map<String, Value>,
    expanding: &mut Vec<String>,
    cut: &mut bool,
    depth: usize,
) {
    let Value::Object(m) = value else {
        return;
    };
    if depth > MAX_DEPTH {
        return;
    }
    let mut pushed = false;
    if let Some(Value::String(r)) = m.get("$ref").cloned() {
        let name = r.strip_prefix("#/$defs/").unwrap_or(&r).to_owned();
        let body = defs.get(&name).and_then(Value::as_object);
        match body {
            Some(body) if !expanding.contains(&name) => {
                m.shift_remove("$ref");
                let mut merged = body.clone();
                for (k, v) in std::mem::take(m) {
                    merged.insert(k, v);
                }
                *m = merged;
                expanding.push(name);
                pushed = true;
            }
            _ => {
                *cut = true;
                let shown = if r == "#" {
                    "the whole parameters object".to_owned()
                } else {
                    format!("`{name}`")
                };
                let target_type = if r == "#" {
                    Some(Value::from("object"))
                } else {
                    body.and_then(|d| d.get("type")).cloned()
                };
                m.shift_remove("$ref");
                if let Some(t) = target_type {
                    m.insert("type".to_owned(), t);
                }
                crate::schema::keywords::append_description(
                    m,
                    &format!("recursive: same structure as {shown}"),
                );
            }
        }
    }
    for_each_child_mut(m, |_, child| {
        expand_refs(child, defs, expanding, cut, depth + 1)
    });
    if pushed {
        expanding.pop();
    }
}

/// OpenAI strict: the documented size limits.
pub(crate) fn openai_limits(b: &Budget, ctx: &mut Ctx) {
    let limits = [
        (b.properties, 5000, "properties"),
        (b.object_depth, 10, "levels of object nesting"),
        (b.enum_values, 1000, "enum values"),
        (
            b.string_chars,
            120_000,
            "characters of names and enum values",
        ),
    ];
    for (n, max, what) in limits {
        if n > max {
            ctx.error(
                "",
                &format!("has {n} {what}; OpenAI strict mode allows {max}"),
            );
        }
    }
}

/// Anthropic strict: per-request limits that one tool alone must not exceed.
pub(crate) fn anthropic_limits(b: &Budget, ctx: &mut Ctx) {
    if b.optional_properties > ANTHROPIC_MAX_OPTIONAL {
        ctx.error(
            "",
            &format!(
                "has {} optional properties; Anthropic strict mode allows {ANTHROPIC_MAX_OPTIONAL} per request",
                b.optional_properties
            ),
        );
    }
    if b.union_properties > ANTHROPIC_MAX_UNIONS {
        ctx.error(
            "",
            &format!(
                "has {} properties with unions; Anthropic strict mode allows {ANTHROPIC_MAX_UNIONS} per request",
                b.union_properties
            ),
        );
    }
}

/// Anthropic strict mode: strict tools per request.
pub(crate) const ANTHROPIC_MAX_STRICT_TOOLS: usize = 20;
/// Anthropic strict mode: optional properties per request.
pub(crate) const ANTHROPIC_MAX_OPTIONAL: usize = 24;
/// Anthropic strict mode: properties using `anyOf`/type arrays per request.
pub(crate) const ANTHROPIC_MAX_UNIONS: usize = 16;

/// A no-parameter tool's schema for MCP (2025-11-25 recommendation).
pub(crate) fn mcp_no_params(schema: &mut Value) {
    let Some(m) = schema.as_object() else {
        return;
    };
    let empty = m
        .get("properties")
        .is_some_and(|p| p.as_object().is_some_and(Map::is_empty));
    let only_shape = m
        .keys()
        .all(|k| matches!(k.as_str(), "type" | "properties" | "additionalProperties"));
    if empty && only_shape && m.get("additionalProperties").is_none() {
        *schema = json!({"type": "object", "additionalProperties": false});
    }
}

/// MCP 2026-07-28's `x-mcp-header` declarations (SEP-2243: a parameter a client mirrors
/// into an `Mcp-Param-{Name}` HTTP header), checked as MCP clients check them: on a
/// parameter reached from the root through `properties` alone, whose type is `string`,
/// `integer` or `boolean`, named by a non-empty HTTP token (RFC 9110), unique in the
/// tool regardless of case. A declaration that breaks a rule is an error and is left out
/// of the schema, since a client must refuse a tool that carries it.
pub(crate) fn mcp_param_headers(schema: &mut Value, ctx: &mut Ctx) {
    let mut seen: Vec<(String, String)> = Vec::new();
    param_headers_in(schema, &mut String::new(), true, true, &mut seen, ctx);
}

/// The `x-mcp-header` key.
const PARAM_HEADER: &str = "x-mcp-header";

/// Keywords whose values are instances or names, not schemas.
const NOT_SCHEMAS: &[&str] = &[
    "default",
    "const",
    "enum",
    "examples",
    "required",
    "dependentRequired",
];

fn param_headers_in(
    node: &mut Value,
    pointer: &mut String,
    root: bool,
    on_chain: bool,
    seen: &mut Vec<(String, String)>,
    ctx: &mut Ctx,
) {
    let len = pointer.len();
    match node {
        Value::Object(m) => {
            if let Some(header) = m.get(PARAM_HEADER) {
                let problem = if root {
                    Some(
                        "has `x-mcp-header`, which belongs on a parameter, not on the schema root"
                            .to_owned(),
                    )
                } else if !on_chain {
                    Some("has `x-mcp-header` where MCP does not allow it: only on a parameter reached through `properties` alone (not under `items`, `anyOf`, `$defs`, ...)".to_owned())
                } else {
                    param_header_problem(header, m.get("type"), pointer, seen)
                };
                if let Some(problem) = problem {
                    ctx.error(pointer, &problem);
                    m.shift_remove(PARAM_HEADER);
                }
            }
            for (key, value) in m.iter_mut() {
                let key = key.as_str();
                if NOT_SCHEMAS.contains(&key) || key.starts_with("x-") {
                    continue;
                }
                pointer.push('/');
                pointer.push_str(&key.replace('~', "~0").replace('/', "~1"));
                let named = matches!(
                    key,
                    "properties"
                        | "$defs"
                        | "definitions"
                        | "patternProperties"
                        | "dependentSchemas"
                );
                match value {
                    Value::Object(children) if named => {
                        let chain = on_chain && key == "properties";
                        for (name, child) in children.iter_mut() {
                            let at = pointer.len();
                            pointer.push('/');
                            pointer.push_str(&name.replace('~', "~0").replace('/', "~1"));
                            param_headers_in(child, pointer, false, chain, seen, ctx);
                            pointer.truncate(at);
                        }
                    }
                    _ => param_headers_in(value, pointer, false, false, seen, ctx),
                }
                pointer.truncate(len);
            }
        }
        Value::Array(items) => {
            for (i, item) in items.iter_mut().enumerate() {
                pointer.push_str(&format!("/{i}"));
                param_headers_in(item, pointer, false, false, seen, ctx);
                pointer.truncate(len);
            }
        }
        _ => {}
    }
}

/// What is wrong with one declaration on the parameter at `pointer`, if anything.
fn param_header_problem(
    header: &Value,
    ty: Option<&Value>,
    pointer: &str,
    seen: &mut Vec<(String, String)>,
) -> Option<String> {
    let Some(name) = header.as_str() else {
        return Some(format!(
            "has `x-mcp-header: {header}`, which must be a string: the header name after `Mcp-Param-`"
        ));
    };
    if name.is_empty() {
        return Some("has an empty `x-mcp-header`: name the header, as in `\"Region\"` for `Mcp-Param-Region`".to_owned());
    }
    if let Some(bad) = name.chars().find(|c| !is_token_char(*c)) {
        return Some(format!(
            "has `x-mcp-header: {name:?}`, which is not an HTTP header name ({bad:?} is not allowed): use letters, digits and ! # $ % & ' * + - . ^ _ ` | ~ (an RFC 9110 token)"
        ));
    }
    match ty.and_then(Value::as_str) {
        Some("string" | "integer" | "boolean") => {}
        _ => {
            let ty = ty.map_or_else(|| "none".to_owned(), Value::to_string);
            return Some(format!(
                "has `x-mcp-header: {name:?}` on a parameter of type {ty}: MCP mirrors only `string`, `integer` and `boolean` parameters (one type, not null) into headers"
            ));
        }
    }
    let folded = name.to_ascii_lowercase();
    if let Some((_, first)) = seen.iter().find(|(other, _)| *other == folded) {
        return Some(format!(
            "has `x-mcp-header: {name:?}`, which {} declares already (header names are case-insensitive): each header belongs to one parameter",
            super::where_(first)
        ));
    }
    seen.push((folded, pointer.to_owned()));
    None
}

/// RFC 9110 §5.6.2 `tchar`.
fn is_token_char(c: char) -> bool {
    c.is_ascii_alphanumeric() || "!#$%&'*+-.^_`|~".contains(c)
}
