//! Common normalisation (N0–N6): from schemars output to the canonical tool schema.
//!
//! schemars emits valid JSON Schema 2020-12, but every model provider trips over some of
//! it: `$schema`/`title` at the root, boolean schemas (`true` for `serde_json::Value`),
//! `oneOf` + `const` for unit enums with documented variants, non-standard numeric
//! `format`s (`uint32`), `$ref` with sibling keywords, and root-level unions for flattened
//! or enum-typed parameters. [`normalize`] rewrites all of that once, for every provider:
//!
//! | pass | what it does |
//! |---|---|
//! | N0 | removes root `$schema` and `title`; removes the root `description` and returns it as [`Normalized::root_description`] |
//! | N1 | boolean subschemas: `true` → `{}`, `false` → `{"not":{}}` (`additionalProperties`/`unevaluated*` keep their booleans) |
//! | N3 | deletes numeric formats (`int32`, `uint64`, `double`, …) after adding the bounds they imply where that is exact (N3b) |
//! | N4 | inlines every `$ref` to a non-recursive definition, merging the `$ref`'s siblings; `$defs` keeps only recursive definitions |
//! | N2 | a `oneOf`/`anyOf` of string constants becomes one string `enum`; variant docs move into the description |
//! | N5 | a root `oneOf`/`anyOf` of object variants becomes one object (with the tag as a string `enum`) |
//! | N6 | the root must be an object schema; it always gets `properties` |
//! | order | every schema object lists `title, description, type, format, properties` first and `$defs` last (schemars' own order), so merged nodes read like generated ones and wire schemas are byte-stable |
//!
//! N2 runs after N4 (the design table lists it before): a unit enum is usually reached
//! through a documented field, and N4 lets the field's doc replace the enum type's doc, so
//! collapsing after inlining keeps the variant docs next to the field doc instead of
//! losing them with the type doc.
//!
//! **N3b and 64-bit integers.** `uint32`/`int32` (and the 8/16-bit formats) get exact
//! `minimum`/`maximum`, so `5000000000` for a `u32` is rejected by the validator with a
//! path instead of by serde. No bound is added for `int64`, `uint64`, `int128`, `uint128`,
//! `int`, `uint`: their limits are beyond 2^53, where a JSON number is no longer exact for
//! consumers that read numbers as doubles (every JavaScript MCP client, and validators
//! that compare as `f64`): `u64::MAX` would be read as 2^64 and accept 2^64 itself. Their
//! overflow is left to serde, whose message is returned to the model. `float` (`f32`) gets
//! no bound either: serde saturates an out-of-range `f32` instead of failing, and a
//! `±3.4e38` bound on every `f32` would only add noise to what the model reads.
//!
//! The result is what [`ToolSchema`](super::ToolSchema) validates against and what the
//! provider profiles (`pi_tool::profiles`) derive their wire schemas from.

mod refs;
mod root_union;
mod unit_enum;

use std::fmt;

use serde_json::{Map, Value, json};

use super::keywords::{Step, for_each_child_mut, index_of, types_of};

/// Nesting limit for every walk: schemas come from Rust types, but a hand-written or
/// generated-by-macro schema must not overflow the stack.
pub(crate) const MAX_DEPTH: usize = 256;

/// The result of [`normalize`].
#[derive(Debug, Clone, PartialEq)]
#[non_exhaustive]
pub struct Normalized {
    /// The canonical schema: an object schema with `properties`.
    pub schema: Value,
    /// The root `description` (the params type's doc comment), removed from the schema.
    /// Use it as the tool description when the tool has none.
    pub root_description: Option<String>,
    /// Things a developer should know (a root union merged, an unknown `$ref` kept …).
    pub warnings: Vec<String>,
}

/// Why a schema cannot be used as a tool's parameters.
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub enum SchemaError {
    /// The root does not describe a JSON object (newtype, tuple or unit struct, a plain
    /// enum, `serde_json::Value` …). `found` says what it describes instead.
    RootNotObject {
        /// What the root schema describes, e.g. `a string`.
        found: String,
    },
    /// A `$ref` names a definition the schema does not contain.
    UnresolvedRef {
        /// The reference as written.
        reference: String,
    },
    /// The schema nests deeper than the walk allows.
    TooDeep,
}

impl fmt::Display for SchemaError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            SchemaError::RootNotObject { found } => write!(
                f,
                "the parameters schema describes {found}, but tool parameters must be a \
                 JSON object: use a struct with named fields"
            ),
            SchemaError::UnresolvedRef { reference } => {
                write!(
                    f,
                    "the schema refers to `{reference}`, which it does not define"
                )
            }
            SchemaError::TooDeep => write!(
                f,
                "the schema nests deeper than {MAX_DEPTH} levels and cannot be processed"
            ),
        }
    }
}

impl std::error::Error for SchemaError {}

/// Numeric `format` values schemars emits; none is defined by JSON Schema.
const NUMERIC_FORMATS: &[&str] = &[
    "int8", "int16", "int32", "int64", "int128", "int", "uint8", "uint16", "uint32", "uint64",
    "uint128", "uint", "float", "double",
];

/// Runs N0–N6 on a schemars root schema (see the module docs).
pub fn normalize(schema: Value) -> Result<Normalized, SchemaError> {
    let mut warnings = Vec::new();
    let mut schema = schema;
    // N1 first for the root itself: `serde_json::Value` params give a bare `true`.
    boolean_to_object(&mut schema);
    let Value::Object(mut root) = schema else {
        return Err(SchemaError::RootNotObject {
            found: "a non-schema value".to_owned(),
        });
    };

    // N0
    root.shift_remove("$schema");
    root.shift_remove("title");
    let root_description = match root.shift_remove("description") {
        Some(Value::String(s)) => Some(s),
        _ => None,
    };

    // N1
    boolean_schemas(&mut root, 0)?;
    // N3 (+ N3b)
    numeric_formats(&mut root, 0)?;
    // N4
    refs::inline_refs(&mut root, &mut warnings)?;
    // N2
    unit_enum::collapse_all(&mut root, 0)?;
    // N5
    root_union::merge_root_union(&mut root, &mut warnings);
    // N6
    check_root(&mut root, &mut warnings)?;
    canonical_order(&mut root, 0)?;

    Ok(Normalized {
        schema: Value::Object(root),
        root_description,
        warnings,
    })
}

fn boolean_to_object(value: &mut Value) {
    match value {
        Value::Bool(true) => *value = json!({}),
        Value::Bool(false) => *value = json!({"not": {}}),
        _ => {}
    }
}

/// N1: boolean schemas in schema positions; `additionalProperties: true/false` and the
/// `unevaluated*`/`additionalItems` booleans stay (they mark free-form or closed shapes).
fn boolean_schemas(map: &mut Map<String, Value>, depth: usize) -> Result<(), SchemaError> {
    if depth > MAX_DEPTH {
        return Err(SchemaError::TooDeep);
    }
    let mut result = Ok(());
    for_each_child_mut(map, |step, child| {
        let keeps_boolean = matches!(
            step,
            Step::Key(
                "additionalProperties"
                    | "unevaluatedProperties"
                    | "unevaluatedItems"
                    | "additionalItems"
            )
        );
        if !keeps_boolean {
            boolean_to_object(child);
        }
        if let Value::Object(m) = child
            && result.is_ok()
        {
            result = boolean_schemas(m, depth + 1);
        }
    });
    result
}

/// N3: numeric formats removed; N3b: the exact bounds they imply added first.
fn numeric_formats(map: &mut Map<String, Value>, depth: usize) -> Result<(), SchemaError> {
    if depth > MAX_DEPTH {
        return Err(SchemaError::TooDeep);
    }
    let format = map.get("format").and_then(Value::as_str).map(str::to_owned);
    if let Some(format) = format
        && NUMERIC_FORMATS.contains(&format.as_str())
    {
        let at = index_of(map, "format").unwrap_or(map.len());
        map.shift_remove("format");
        let types = types_of(map);
        let numeric = types.is_empty() || types.iter().any(|t| matches!(*t, "integer" | "number"));
        if let (true, Some((min, max))) = (numeric, implied_bounds(&format)) {
            tighten(map, at, "minimum", min, |new, old| new > old);
            let at = index_of(map, "minimum").map_or(at, |i| i + 1);
            tighten(map, at, "maximum", max, |new, old| new < old);
        }
    }
    let mut result = Ok(());
    for_each_child_mut(map, |_, child| {
        if let Value::Object(m) = child
            && result.is_ok()
        {
            result = numeric_formats(m, depth + 1);
        }
    });
    result
}

/// Bounds that are exact in every JSON reader (|x| < 2^53); see the module docs.
fn implied_bounds(format: &str) -> Option<(i64, i64)> {
    Some(match format {
        "int8" => (i8::MIN.into(), i8::MAX.into()),
        "int16" => (i16::MIN.into(), i16::MAX.into()),
        "int32" => (i32::MIN.into(), i32::MAX.into()),
        "uint8" => (0, u8::MAX.into()),
        "uint16" => (0, u16::MAX.into()),
        "uint32" => (0, u32::MAX.into()),
        _ => return None,
    })
}

/// Sets `key` to `bound` unless an existing value is already at least as tight.
fn tighten(
    map: &mut Map<String, Value>,
    at: usize,
    key: &str,
    bound: i64,
    tighter: impl Fn(f64, f64) -> bool,
) {
    match map.get_mut(key) {
        Some(existing) => {
            let old = existing.as_f64();
            // Precision: |bound| < 2^53, so the f64 comparison is exact for the bound.
            if old.is_none_or(|old| tighter(bound as f64, old)) {
                *existing = Value::from(bound);
            }
        }
        None => {
            map.shift_insert(at.min(map.len()), key.to_owned(), Value::from(bound));
        }
    }
}

/// Keywords that come first, in this order, in every schema object (schemars' order).
const FIRST_KEYWORDS: &[&str] = &[
    "$id",
    "title",
    "description",
    "type",
    "format",
    "properties",
];
/// Keywords that come last.
const LAST_KEYWORDS: &[&str] = &["$defs", "definitions"];

/// Puts the keys of every schema object in schemars' keyword order (stable otherwise).
pub(crate) fn canonical_order(
    map: &mut Map<String, Value>,
    depth: usize,
) -> Result<(), SchemaError> {
    if depth > MAX_DEPTH {
        return Err(SchemaError::TooDeep);
    }
    let rank = |k: &str| {
        FIRST_KEYWORDS
            .iter()
            .position(|f| *f == k)
            .unwrap_or(FIRST_KEYWORDS.len())
            + usize::from(LAST_KEYWORDS.contains(&k)) * 100
    };
    let mut entries: Vec<(String, Value)> = std::mem::take(map).into_iter().collect();
    entries.sort_by_key(|(k, _)| rank(k));
    map.extend(entries);
    let mut result = Ok(());
    for_each_child_mut(map, |_, child| {
        if let Value::Object(m) = child
            && result.is_ok()
        {
            result = canonical_order(m, depth + 1);
        }
    });
    result
}

/// N6: the root must be an object schema, and always has `properties`.
fn check_root(
    root: &mut Map<String, Value>,
    warnings: &mut Vec<String>,
) -> Result<(), SchemaError> {
    let types = types_of(root);
    if types.is_empty() && root.contains_key("properties") {
        root.shift_insert(0, "type".to_owned(), Value::from("object"));
        warnings
            .push("the root schema has `properties` but no `type`; `type: object` added".into());
    } else if types != ["object"] {
        return Err(SchemaError::RootNotObject {
            found: describe_root(root),
        });
    }
    if !root.contains_key("properties") {
        let at = index_of(root, "type").map_or(0, |i| i + 1);
        root.shift_insert(at, "properties".to_owned(), json!({}));
    }
    for key in ["anyOf", "oneOf", "allOf"] {
        if root.contains_key(key) {
            warnings.push(format!(
                "the root keeps a `{key}` that could not be merged into one object; \
                 most providers reject root-level `{key}`"
            ));
        }
    }
    Ok(())
}

/// What a non-object root describes, in words for the error message.
fn describe_root(root: &Map<String, Value>) -> String {
    let types = types_of(root);
    if !types.is_empty() {
        let article = |t: &str| match t {
            "array" | "integer" | "object" => format!("an {t}"),
            "null" => "null".to_owned(),
            _ => format!("a {t}"),
        };
        let words: Vec<String> = types.iter().map(|t| article(t)).collect();
        return match types.first() {
            Some(&"array") if root.contains_key("prefixItems") => {
                "a fixed-length array (a tuple)".to_owned()
            }
            Some(&"null") if types.len() == 1 => "null (a unit struct)".to_owned(),
            _ => words.join(" or "),
        };
    }
    for key in ["oneOf", "anyOf", "allOf"] {
        if root.contains_key(key) {
            return format!("a union (`{key}`) whose variants are not all objects");
        }
    }
    if root.contains_key("enum") || root.contains_key("const") {
        return "a fixed set of values".to_owned();
    }
    if root.contains_key("$ref") {
        return "a reference to another schema".to_owned();
    }
    "any JSON value".to_owned()
}
