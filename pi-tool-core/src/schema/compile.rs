//! Compiling a JSON Schema into a tree of typed nodes, once per tool.
//!
//! Every subschema becomes a [`Node`] in one vector; keywords are parsed into typed fields,
//! regexes are compiled, `format` names are resolved, and `$ref`s point at node indices (so a
//! recursive schema is a cycle of indices). Validation, coercion and null normalisation then
//! walk these nodes and never look at schema JSON again.
//!
//! Keyword validity follows TypeBox 1.3 (`schema/types/*.ts`): a keyword whose value has the
//! wrong JSON type (`"minLength": "5"`, `"required": "a"`) is ignored, as TypeBox ignores it.
//! What TypeBox cannot run either is a compile error here: a root that is neither an object
//! nor a boolean, a regex that does not compile, a `$ref` that does not resolve, or a schema
//! nested deeper than [`MAX_SCHEMA_DEPTH`].
//!
//! Pi's own passes (coercion, `normalizeOptionalNulls`) read a few keywords with plain
//! JavaScript rules instead (`schema.properties`, `schema.items`, `schema.anyOf`…); those
//! readings are kept separately in [`PiView`].

use std::collections::HashMap;

use serde_json::{Map, Value};

use super::format::Format;

/// An index into [`Compiled::nodes`].
pub(crate) type NodeId = u32;

/// How deep schema JSON may nest before compilation refuses it (guards the recursive compiler).
pub(crate) const MAX_SCHEMA_DEPTH: usize = 128;

/// A compiled schema: all subschemas, the root at index 0.
#[derive(Debug)]
pub(crate) struct Compiled {
    pub(crate) nodes: Vec<Node>,
    /// Whether any node uses `unevaluatedProperties`/`unevaluatedItems` (only then are
    /// evaluated keys and indices tracked, as in TypeBox's `HasUnevaluated`).
    pub(crate) tracks_evaluated: bool,
    /// Whether Pi's null normalisation and coercion can only change a value the validator
    /// rejects (see [`pi_is_transparent`]); then a value that validates as given skips them.
    pub(crate) pi_transparent: bool,
}

/// One subschema.
#[derive(Debug)]
pub(crate) enum Node {
    /// `true` or `false`.
    Bool(bool),
    /// An object schema.
    Schema(Box<Keywords>),
}

/// The JSON types a value can have, as bits.
pub(crate) mod ty {
    pub(crate) const NULL: u8 = 1;
    pub(crate) const BOOLEAN: u8 = 2;
    pub(crate) const INTEGER: u8 = 4;
    pub(crate) const NUMBER: u8 = 8;
    pub(crate) const STRING: u8 = 16;
    pub(crate) const ARRAY: u8 = 32;
    pub(crate) const OBJECT: u8 = 64;
    /// A type name TypeBox accepts every value for (an unknown name).
    pub(crate) const ANY: u8 = 128;
}

/// The `type` keyword.
#[derive(Debug)]
pub(crate) struct TypeKeyword {
    /// Accepted types as [`ty`] bits.
    pub(crate) mask: u8,
    /// The names as written, for the message (`must be string`, `must be either a or b`).
    pub(crate) names: Vec<String>,
    /// Whether `type` was an array (`must be either …` even for one name).
    pub(crate) is_array: bool,
}

/// `items`: one schema for all items, or (draft 4–2019) a schema per position.
#[derive(Debug)]
pub(crate) enum Items {
    Unsized(NodeId),
    Sized(Vec<NodeId>),
}

/// A `pattern`/`patternProperties` regex with its source (for messages).
#[derive(Debug)]
pub(crate) struct Pattern {
    pub(crate) regex: regex::Regex,
    pub(crate) source: String,
}

/// The validation keywords of one object schema, in TypeBox's evaluation order.
#[derive(Debug, Default)]
pub(crate) struct Keywords {
    pub(crate) types: Option<TypeKeyword>,
    // object
    pub(crate) required: Option<Vec<String>>,
    pub(crate) additional_properties: Option<NodeId>,
    /// TypeBox's compiled shortcut for `additionalProperties: false` when `required` has as
    /// many names as `properties` (and no `patternProperties`): it counts keys instead of
    /// matching them. Pi decides pass/fail with that compiled check, so we count too.
    pub(crate) additional_by_count: bool,
    pub(crate) dependencies: Option<Vec<(String, Dependency)>>,
    pub(crate) dependent_required: Option<Vec<(String, Vec<String>)>>,
    pub(crate) dependent_schemas: Option<Vec<(String, NodeId)>>,
    pub(crate) pattern_properties: Option<Vec<(Pattern, NodeId)>>,
    pub(crate) properties: Option<Vec<(String, NodeId)>>,
    /// The names of `properties` as a set, for schemas with many properties (so that
    /// `additionalProperties` stays linear in the number of keys).
    pub(crate) property_set: Option<std::collections::HashSet<String>>,
    pub(crate) property_names: Option<NodeId>,
    /// Set when the object keywords are only `properties`, `required` and
    /// `additionalProperties` (the shape of every derived params struct): one pass over the
    /// keys then checks all three.
    pub(crate) plain_object: Option<PlainObject>,
    pub(crate) min_properties: Option<f64>,
    pub(crate) max_properties: Option<f64>,
    // array
    pub(crate) additional_items: Option<NodeId>,
    pub(crate) contains: Option<NodeId>,
    pub(crate) items: Option<Items>,
    pub(crate) max_contains: Option<f64>,
    pub(crate) max_items: Option<f64>,
    pub(crate) min_contains: Option<f64>,
    pub(crate) min_items: Option<f64>,
    pub(crate) prefix_items: Option<Vec<NodeId>>,
    pub(crate) unique_items: bool,
    // string
    pub(crate) max_length: Option<f64>,
    pub(crate) min_length: Option<f64>,
    /// `Some(None)`: a format TypeBox does not enforce.
    pub(crate) format: Option<(String, Option<Format>)>,
    pub(crate) pattern: Option<Pattern>,
    // number
    pub(crate) exclusive_maximum: Option<f64>,
    pub(crate) exclusive_minimum: Option<f64>,
    pub(crate) maximum: Option<f64>,
    pub(crate) minimum: Option<f64>,
    pub(crate) multiple_of: Option<f64>,
    // in place
    /// Whether any keyword below is set (most nodes have none; the checker skips them).
    pub(crate) has_in_place: bool,
    pub(crate) reference: Option<NodeId>,
    pub(crate) constant: Option<Value>,
    pub(crate) enumeration: Option<Vec<Value>>,
    pub(crate) if_then_else: Option<(NodeId, Option<NodeId>, Option<NodeId>)>,
    pub(crate) not: Option<NodeId>,
    pub(crate) all_of: Option<Vec<NodeId>>,
    pub(crate) any_of: Option<Vec<NodeId>>,
    pub(crate) one_of: Option<Vec<NodeId>>,
    pub(crate) unevaluated_items: Option<NodeId>,
    pub(crate) unevaluated_properties: Option<NodeId>,
    /// Pi's JavaScript reading of this schema (coercion and null normalisation).
    pub(crate) pi: PiView,
}

/// What the one-pass object check needs beyond `properties` (see [`Keywords::plain_object`]).
#[derive(Debug)]
pub(crate) struct PlainObject {
    /// Per entry of `properties`: whether `required` names it.
    pub(crate) required: Vec<bool>,
    /// How many entries of `properties` are required.
    pub(crate) required_count: usize,
    /// Required names `properties` does not declare.
    pub(crate) required_elsewhere: Vec<String>,
}

impl PlainObject {
    fn of(k: &Keywords) -> Option<PlainObject> {
        let props = k.properties.as_ref()?;
        let plain = !k.additional_by_count
            && k.property_set.is_none()
            && k.dependencies.is_none()
            && k.dependent_required.is_none()
            && k.dependent_schemas.is_none()
            && k.pattern_properties.is_none()
            && k.property_names.is_none();
        if !plain {
            return None;
        }
        let names = k.required.as_deref().unwrap_or_default();
        let required: Vec<bool> = props.iter().map(|(name, _)| names.contains(name)).collect();
        let mut required_elsewhere: Vec<String> = Vec::new();
        for name in names {
            if !props.iter().any(|(p, _)| p == name) && !required_elsewhere.contains(name) {
                required_elsewhere.push(name.clone());
            }
        }
        Some(PlainObject {
            required_count: required.iter().filter(|&&r| r).count(),
            required,
            required_elsewhere,
        })
    }
}

/// A `dependencies` entry (draft 7): required names or a schema.
#[derive(Debug)]
pub(crate) enum Dependency {
    Names(Vec<String>),
    Schema(NodeId),
}

/// A JSON type name as Pi's coercion understands it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum PiType {
    Number,
    Integer,
    Boolean,
    String,
    Null,
    Array,
    Object,
    Other,
}

/// `schema.items` as Pi reads it: per position (holes for falsy entries) or one schema.
#[derive(Debug, Default)]
pub(crate) enum PiItems {
    #[default]
    None,
    Each(NodeId),
    Tuple(Vec<Option<NodeId>>),
}

/// The keywords Pi's `coerceWithJsonSchema` and `normalizeOptionalNulls` read, with
/// JavaScript's truthiness rules (not TypeBox's validity rules).
#[derive(Debug, Default)]
pub(crate) struct PiView {
    /// `getSchemaTypes`: the string entries of `type`.
    pub(crate) types: Vec<PiType>,
    /// `schema.properties` entries; `None` for a value that is not a schema.
    pub(crate) properties: Vec<(String, Option<NodeId>)>,
    /// `schema.required` (array entries that are strings).
    pub(crate) required: Vec<String>,
    /// `additionalProperties` when it is an object schema.
    pub(crate) additional: Option<NodeId>,
    pub(crate) items: PiItems,
    pub(crate) all_of: Vec<NodeId>,
    pub(crate) any_of: Vec<NodeId>,
    pub(crate) one_of: Vec<NodeId>,
    /// For each entry of `properties`: is it a `{"$ref": …}` schema (never stripped).
    pub(crate) property_is_ref: Vec<bool>,
    /// For each entry of `properties`: does its schema reject `null` (filled after refs
    /// resolve).
    pub(crate) property_rejects_null: Vec<bool>,
}

struct Compiler<'a> {
    root: &'a Value,
    nodes: Vec<Node>,
    /// Compiled JSON positions (by address) and their nodes, so that `$ref`s to a position
    /// reuse its node.
    seen: HashMap<*const Value, NodeId>,
    /// `$ref`s still to resolve: (node, reference).
    pending: Vec<(NodeId, String)>,
    tracks_evaluated: bool,
}

/// Compiles `schema`; the error says why the schema cannot be used.
/// Compiles a normalised schema. Which property schemas reject `null` is filled in by the
/// checker afterwards (`check::fill_null_rejection`), which reads the nodes.
pub(crate) fn compile(schema: &Value) -> Result<Compiled, String> {
    if !schema.is_object() && !schema.is_boolean() {
        return Err(format!(
            "the schema must be a JSON object or a boolean, not {}",
            kind(schema)
        ));
    }
    let mut c = Compiler {
        root: schema,
        nodes: Vec::new(),
        seen: HashMap::new(),
        pending: Vec::new(),
        tracks_evaluated: false,
    };
    c.node(schema, "#", 0)?;
    while let Some((id, reference)) = c.pending.pop() {
        let target = c.resolve(&reference)?;
        if let Node::Schema(k) = &mut c.nodes[id as usize] {
            k.reference = Some(target);
        }
    }
    let mut compiled = Compiled {
        nodes: c.nodes,
        tracks_evaluated: c.tracks_evaluated,
        pi_transparent: false,
    };
    for node in &mut compiled.nodes {
        if let Node::Schema(k) = node {
            k.has_in_place = k.reference.is_some()
                || k.constant.is_some()
                || k.enumeration.is_some()
                || k.if_then_else.is_some()
                || k.not.is_some()
                || k.all_of.is_some()
                || k.any_of.is_some()
                || k.one_of.is_some()
                || k.unevaluated_items.is_some()
                || k.unevaluated_properties.is_some();
        }
    }
    compiled.pi_transparent = compiled.nodes.iter().all(pi_is_transparent);
    Ok(compiled)
}

/// Whether Pi's passes read this node exactly as the validator does.
///
/// Pi coerces a value only where its type does not match (or no union branch accepts it) and
/// deletes a `null` only where the property schema rejects it; the validator checks the same
/// subschemas against the same values, so a value that validates is left unchanged by both
/// passes. That holds when every keyword Pi reads is one the validator enforces on the same
/// positions. It does not hold for: an ill-typed keyword TypeBox ignores but Pi reads (a `type`
/// array with non-strings, a union or `properties` with non-schema entries); a key matched by
/// `patternProperties` (validated by the pattern, coerced by `additionalProperties`); array
/// items under `prefixItems` (validated by position, coerced and normalised by `items`).
fn pi_is_transparent(node: &Node) -> bool {
    let Node::Schema(k) = node else {
        return true;
    };
    let p = &k.pi;
    let same_list = |validator: &Option<Vec<NodeId>>, pi: &Vec<NodeId>| {
        pi.is_empty() || validator.as_ref().is_some_and(|v| v == pi)
    };
    let items_agree = match (&p.items, &k.items) {
        (PiItems::None, _) => true,
        (PiItems::Each(a), Some(Items::Unsized(b))) => a == b,
        (PiItems::Tuple(a), Some(Items::Sized(b))) => {
            a.len() == b.len() && a.iter().all(Option::is_some)
        }
        _ => false,
    };
    (p.types.is_empty()
        || k.types
            .as_ref()
            .is_some_and(|t| t.names.len() == p.types.len()))
        && (p.properties.is_empty() || k.properties.is_some())
        && same_list(&k.all_of, &p.all_of)
        && same_list(&k.any_of, &p.any_of)
        && same_list(&k.one_of, &p.one_of)
        && !(k.pattern_properties.is_some() && p.additional.is_some())
        && (k.prefix_items.is_none() || matches!(p.items, PiItems::None))
        && items_agree
}

fn kind(v: &Value) -> &'static str {
    match v {
        Value::Null => "null",
        Value::Bool(_) => "a boolean",
        Value::Number(_) => "a number",
        Value::String(_) => "a string",
        Value::Array(_) => "an array",
        Value::Object(_) => "an object",
    }
}

fn number(map: &Map<String, Value>, key: &str) -> Option<f64> {
    map.get(key).and_then(Value::as_f64)
}

fn strings(v: &Value) -> Option<Vec<String>> {
    v.as_array()?
        .iter()
        .map(|s| s.as_str().map(str::to_owned))
        .collect()
}

fn is_schema(v: &Value) -> bool {
    v.is_object() || v.is_boolean()
}

fn pi_type(name: &str) -> PiType {
    match name {
        "number" => PiType::Number,
        "integer" => PiType::Integer,
        "boolean" => PiType::Boolean,
        "string" => PiType::String,
        "null" => PiType::Null,
        "array" => PiType::Array,
        "object" => PiType::Object,
        _ => PiType::Other,
    }
}

fn type_bit(name: &str) -> u8 {
    match name {
        "object" => ty::OBJECT,
        "array" => ty::ARRAY,
        "boolean" => ty::BOOLEAN,
        "integer" => ty::INTEGER,
        "number" => ty::NUMBER,
        "null" => ty::NULL,
        "string" => ty::STRING,
        // TypeBox's extended types: no JSON value is one of them.
        "bigint" | "constructor" | "function" | "symbol" | "undefined" | "void" => 0,
        _ => ty::ANY,
    }
}

fn compile_regex(source: &str, at: &str) -> Result<regex::Regex, String> {
    regex::Regex::new(source).map_err(|e| {
        let first = e.to_string();
        let first = first.lines().last().unwrap_or("").trim().to_owned();
        format!("invalid regular expression {source:?} at {at}: {first}")
    })
}

impl Compiler<'_> {
    /// Compiles the schema at `v` (JSON position `at`) and returns its node.
    fn node(&mut self, v: &Value, at: &str, depth: usize) -> Result<NodeId, String> {
        if depth > MAX_SCHEMA_DEPTH {
            return Err(format!(
                "the schema nests deeper than {MAX_SCHEMA_DEPTH} levels at {at}"
            ));
        }
        let addr = v as *const Value;
        if let Some(&id) = self.seen.get(&addr) {
            return Ok(id);
        }
        let id =
            NodeId::try_from(self.nodes.len()).map_err(|_| "the schema is too large".to_owned())?;
        self.seen.insert(addr, id);
        let map = match v {
            Value::Bool(b) => {
                self.nodes.push(Node::Bool(*b));
                return Ok(id);
            }
            Value::Object(map) => map,
            _ => {
                return Err(format!(
                    "expected a schema (object or boolean) at {at}, found {}",
                    kind(v)
                ));
            }
        };
        self.nodes.push(Node::Bool(true));
        let k = self.keywords(map, at, depth)?;
        if let Some(Value::String(reference)) = map.get("$ref") {
            self.pending.push((id, reference.clone()));
        }
        self.nodes[id as usize] = Node::Schema(k);
        Ok(id)
    }

    /// Compiles a subschema if `v` is one (`None` otherwise, for keywords TypeBox ignores).
    fn sub(&mut self, v: &Value, at: String, depth: usize) -> Result<Option<NodeId>, String> {
        if is_schema(v) {
            self.node(v, &at, depth + 1).map(Some)
        } else {
            Ok(None)
        }
    }

    /// Compiles a list of subschemas; `Ok(None)` unless `v` is an array of schemas.
    fn list(
        &mut self,
        v: Option<&Value>,
        at: &str,
        key: &str,
        depth: usize,
    ) -> Result<Option<Vec<NodeId>>, String> {
        let Some(Value::Array(items)) = v else {
            return Ok(None);
        };
        let mut out = Vec::with_capacity(items.len());
        for (i, item) in items.iter().enumerate() {
            match self.sub(item, format!("{at}/{key}/{i}"), depth)? {
                Some(id) => out.push(id),
                None => {
                    // Not every entry is a schema: TypeBox ignores the keyword; Pi still walks
                    // the schema entries, which the PiView reads separately.
                    return Ok(None);
                }
            }
        }
        Ok(Some(out))
    }

    /// Compiles the schema entries of a list keyword for Pi's walk (non-schemas skipped).
    fn pi_list(
        &mut self,
        v: Option<&Value>,
        at: &str,
        key: &str,
        depth: usize,
    ) -> Result<Vec<NodeId>, String> {
        let Some(Value::Array(items)) = v else {
            return Ok(Vec::new());
        };
        let mut out = Vec::new();
        for (i, item) in items.iter().enumerate() {
            if let Some(id) = self.sub(item, format!("{at}/{key}/{i}"), depth)? {
                out.push(id);
            }
        }
        Ok(out)
    }

    /// Compiles the schema values of an object keyword; `Ok(None)` unless all are schemas.
    fn schema_map(
        &mut self,
        v: Option<&Value>,
        at: &str,
        key: &str,
        depth: usize,
    ) -> Result<Option<Vec<(String, NodeId)>>, String> {
        let Some(Value::Object(entries)) = v else {
            return Ok(None);
        };
        let mut out = Vec::with_capacity(entries.len());
        let mut all = true;
        for (name, s) in entries {
            match self.sub(s, format!("{at}/{key}/{}", escape(name)), depth)? {
                Some(id) => out.push((name.clone(), id)),
                None => all = false,
            }
        }
        Ok(all.then_some(out))
    }

    // The keyword groups are separate functions so that the recursion (node → keywords →
    // group → sub → node) keeps small stack frames, even in debug builds.
    fn keywords(
        &mut self,
        map: &Map<String, Value>,
        at: &str,
        depth: usize,
    ) -> Result<Box<Keywords>, String> {
        let mut k = Box::<Keywords>::default();
        // $defs / definitions are compiled so that `$ref`s can point at them.
        for defs in ["$defs", "definitions"] {
            if let Some(Value::Object(entries)) = map.get(defs) {
                for (name, s) in entries {
                    self.sub(s, format!("{at}/{defs}/{}", escape(name)), depth)?;
                }
            }
        }
        if let Some(t) = map.get("type") {
            let names = match t {
                Value::String(s) => Some((vec![s.clone()], false)),
                Value::Array(_) => strings(t).map(|n| (n, true)),
                _ => None,
            };
            if let Some((names, is_array)) = names {
                let mask = names.iter().fold(0, |m, n| m | type_bit(n));
                k.types = Some(TypeKeyword {
                    mask,
                    names,
                    is_array,
                });
            }
            k.pi.types = match t {
                Value::String(s) => vec![pi_type(s)],
                Value::Array(a) => a.iter().filter_map(Value::as_str).map(pi_type).collect(),
                _ => Vec::new(),
            };
        }
        self.object_keywords(&mut k, map, at, depth)?;
        self.array_keywords(&mut k, map, at, depth)?;
        scalar_keywords(&mut k, map, at)?;
        self.in_place_keywords(&mut k, map, at, depth)?;
        if k.unevaluated_items.is_some() || k.unevaluated_properties.is_some() {
            self.tracks_evaluated = true;
        }
        Ok(k)
    }

    fn object_keywords(
        &mut self,
        k: &mut Keywords,
        map: &Map<String, Value>,
        at: &str,
        depth: usize,
    ) -> Result<(), String> {
        k.required = map.get("required").and_then(strings);
        if let Some(Value::Array(r)) = map.get("required") {
            k.pi.required = r
                .iter()
                .filter_map(Value::as_str)
                .map(str::to_owned)
                .collect();
        }
        if let Some(ap) = map.get("additionalProperties") {
            k.additional_properties = self.sub(ap, format!("{at}/additionalProperties"), depth)?;
            if ap.is_object() {
                k.pi.additional = k.additional_properties;
            }
        }
        if let Some(Value::Object(deps)) = map.get("dependencies") {
            let mut out = Vec::new();
            let mut valid = true;
            for (name, d) in deps {
                if let Some(names) = strings(d) {
                    out.push((name.clone(), Dependency::Names(names)));
                } else if let Some(id) =
                    self.sub(d, format!("{at}/dependencies/{}", escape(name)), depth)?
                {
                    out.push((name.clone(), Dependency::Schema(id)));
                } else {
                    valid = false;
                }
            }
            k.dependencies = valid.then_some(out);
        }
        if let Some(Value::Object(deps)) = map.get("dependentRequired") {
            k.dependent_required = deps
                .iter()
                .map(|(name, d)| strings(d).map(|n| (name.clone(), n)))
                .collect();
        }
        k.dependent_schemas =
            self.schema_map(map.get("dependentSchemas"), at, "dependentSchemas", depth)?;
        if let Some(Value::Object(pp)) = map.get("patternProperties") {
            let mut out = Vec::new();
            let mut valid = true;
            for (source, s) in pp {
                let regex = compile_regex(source, &format!("{at}/patternProperties"))?;
                match self.sub(
                    s,
                    format!("{at}/patternProperties/{}", escape(source)),
                    depth,
                )? {
                    Some(id) => out.push((
                        Pattern {
                            regex,
                            source: source.clone(),
                        },
                        id,
                    )),
                    None => valid = false,
                }
            }
            k.pattern_properties = valid.then_some(out);
        }
        if let Some(Value::Object(props)) = map.get("properties") {
            let mut out = Vec::with_capacity(props.len());
            let mut valid = true;
            for (name, s) in props {
                let id = self.sub(s, format!("{at}/properties/{}", escape(name)), depth)?;
                k.pi.properties.push((name.clone(), id));
                k.pi.property_is_ref
                    .push(s.get("$ref").is_some_and(Value::is_string));
                match id {
                    Some(id) => out.push((name.clone(), id)),
                    None => valid = false,
                }
            }
            if valid && out.len() > 16 {
                k.property_set = Some(out.iter().map(|(name, _)| name.clone()).collect());
            }
            k.properties = valid.then_some(out);
        }
        if let Some(pn) = map.get("propertyNames") {
            k.property_names = self.sub(pn, format!("{at}/propertyNames"), depth)?;
        }
        k.additional_by_count = map.get("additionalProperties") == Some(&Value::Bool(false))
            && k.pattern_properties.is_none()
            && matches!((&k.required, &k.properties), (Some(r), Some(p)) if r.len() == p.len());
        k.plain_object = PlainObject::of(k);
        k.min_properties = number(map, "minProperties");
        k.max_properties = number(map, "maxProperties");
        Ok(())
    }

    fn array_keywords(
        &mut self,
        k: &mut Keywords,
        map: &Map<String, Value>,
        at: &str,
        depth: usize,
    ) -> Result<(), String> {
        match map.get("items") {
            Some(Value::Array(items)) => {
                let mut all = Vec::with_capacity(items.len());
                let mut tuple = Vec::with_capacity(items.len());
                let mut valid = true;
                for (i, item) in items.iter().enumerate() {
                    let id = self.sub(item, format!("{at}/items/{i}"), depth)?;
                    // Pi skips falsy entries (`if (!itemSchema) continue`).
                    let truthy = !matches!(item, Value::Null | Value::Bool(false))
                        && item.as_f64() != Some(0.0)
                        && item.as_str() != Some("");
                    tuple.push(id.filter(|_| truthy));
                    match id {
                        Some(id) => all.push(id),
                        None => valid = false,
                    }
                }
                k.items = valid.then_some(Items::Sized(all));
                k.pi.items = PiItems::Tuple(tuple);
            }
            Some(items) => {
                if let Some(id) = self.sub(items, format!("{at}/items"), depth)? {
                    k.items = Some(Items::Unsized(id));
                    if items.is_object() {
                        k.pi.items = PiItems::Each(id);
                    }
                }
            }
            None => {}
        }
        if let Some(ai) = map.get("additionalItems") {
            // Only meaningful next to a positional `items` (TypeBox's IsValid).
            let id = self.sub(ai, format!("{at}/additionalItems"), depth)?;
            if matches!(k.items, Some(Items::Sized(_))) {
                k.additional_items = id;
            }
        }
        if let Some(c) = map.get("contains") {
            k.contains = self.sub(c, format!("{at}/contains"), depth)?;
        }
        k.max_contains = number(map, "maxContains");
        k.min_contains = number(map, "minContains");
        k.max_items = number(map, "maxItems");
        k.min_items = number(map, "minItems");
        k.prefix_items = self.list(map.get("prefixItems"), at, "prefixItems", depth)?;
        k.unique_items = map.get("uniqueItems") == Some(&Value::Bool(true));
        Ok(())
    }

    fn in_place_keywords(
        &mut self,
        k: &mut Keywords,
        map: &Map<String, Value>,
        at: &str,
        depth: usize,
    ) -> Result<(), String> {
        k.constant = map.get("const").cloned();
        if let Some(Value::Array(e)) = map.get("enum") {
            k.enumeration = Some(e.clone());
        }
        if let Some(i) = map.get("if")
            && let Some(if_id) = self.sub(i, format!("{at}/if"), depth)?
        {
            let then_id = match map.get("then") {
                Some(t) => self.sub(t, format!("{at}/then"), depth)?,
                None => None,
            };
            let else_id = match map.get("else") {
                Some(e) => self.sub(e, format!("{at}/else"), depth)?,
                None => None,
            };
            k.if_then_else = Some((if_id, then_id, else_id));
        }
        if let Some(n) = map.get("not") {
            k.not = self.sub(n, format!("{at}/not"), depth)?;
        }
        k.all_of = self.list(map.get("allOf"), at, "allOf", depth)?;
        k.any_of = self.list(map.get("anyOf"), at, "anyOf", depth)?;
        k.one_of = self.list(map.get("oneOf"), at, "oneOf", depth)?;
        k.pi.all_of = self.pi_list(map.get("allOf"), at, "allOf", depth)?;
        k.pi.any_of = self.pi_list(map.get("anyOf"), at, "anyOf", depth)?;
        k.pi.one_of = self.pi_list(map.get("oneOf"), at, "oneOf", depth)?;
        if let Some(u) = map.get("unevaluatedItems") {
            k.unevaluated_items = self.sub(u, format!("{at}/unevaluatedItems"), depth)?;
        }
        if let Some(u) = map.get("unevaluatedProperties") {
            k.unevaluated_properties = self.sub(u, format!("{at}/unevaluatedProperties"), depth)?;
        }
        Ok(())
    }

    /// Resolves a local `$ref` (`#` or `#/json/pointer`, percent-encoded) to a node.
    fn resolve(&mut self, reference: &str) -> Result<NodeId, String> {
        let dangling =
            || format!("the $ref {reference:?} does not resolve to a schema in this document");
        let Some(fragment) = reference.strip_prefix('#') else {
            return Err(format!(
                "{}: only local references (#...) are supported",
                dangling()
            ));
        };
        let fragment = percent_decode(fragment).ok_or_else(dangling)?;
        if !fragment.is_empty() && !fragment.starts_with('/') {
            return Err(format!("{}: anchors are not supported", dangling()));
        }
        let mut target = self.root;
        let mut depth = 0;
        if !fragment.is_empty() {
            for token in fragment[1..].split('/') {
                let token = token.replace("~1", "/").replace("~0", "~");
                target = match target {
                    Value::Object(m) => m.get(&token),
                    Value::Array(a) => token.parse::<usize>().ok().and_then(|i| a.get(i)),
                    _ => None,
                }
                .ok_or_else(dangling)?;
                depth += 1;
            }
        }
        if !is_schema(target) {
            return Err(dangling());
        }
        // A newly compiled target may hold `$ref`s of its own; `compile` keeps resolving.
        self.node(target, reference, depth)
    }
}

/// String and number keywords (no subschemas).
fn scalar_keywords(k: &mut Keywords, map: &Map<String, Value>, at: &str) -> Result<(), String> {
    k.max_length = number(map, "maxLength");
    k.min_length = number(map, "minLength");
    if let Some(Value::String(f)) = map.get("format") {
        k.format = Some((f.clone(), Format::from_name(f)));
    }
    if let Some(Value::String(p)) = map.get("pattern") {
        k.pattern = Some(Pattern {
            regex: compile_regex(p, &format!("{at}/pattern"))?,
            source: p.clone(),
        });
    }
    k.exclusive_maximum = number(map, "exclusiveMaximum");
    k.exclusive_minimum = number(map, "exclusiveMinimum");
    k.maximum = number(map, "maximum");
    k.minimum = number(map, "minimum");
    k.multiple_of = number(map, "multipleOf");
    Ok(())
}

fn escape(name: &str) -> String {
    name.replace('~', "~0").replace('/', "~1")
}

fn percent_decode(s: &str) -> Option<String> {
    if !s.contains('%') {
        return Some(s.to_owned());
    }
    let b = s.as_bytes();
    let mut out = Vec::with_capacity(b.len());
    let mut i = 0;
    while i < b.len() {
        if b[i] == b'%' {
            let hex = s.get(i + 1..i + 3)?;
            out.push(u8::from_str_radix(hex, 16).ok()?);
            i += 3;
        } else {
            out.push(b[i]);
            i += 1;
        }
    }
    String::from_utf8(out).ok()
}
