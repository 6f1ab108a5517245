//! Parameter schemas: compiled once per tool, enforced on every call exactly as Pi does.
//!
//! A [`ToolSchema`] holds the JSON Schema the model sees and a validator compiled from it.
//! Typed tools get theirs from schemars ([`ToolSchema::for_type`], cached per type); tools
//! defined at run time give a plain JSON Schema ([`ToolSchema::from_json`]).
//!
//! Generated schemas are normalised once ([`normalize`], N0–N6) so that the schema the
//! model sees, the one arguments are validated against, and the provider wire schemas
//! (`pi_tool::profiles`) all derive from the same canonical object schema.
//!
//! # The argument pipeline
//!
//! [`ToolSchema::validate`] runs Pi 0.85.0's `validateToolArguments` for plain JSON schemas
//! (Pi's Rust-relevant regime: schemars output carries no TypeBox metadata, so TypeBox's own
//! `Value.Convert` never runs), step by step:
//!
//! 1. **Copy** (`structuredClone`). Later steps rewrite the arguments; the caller's value —
//!    the raw arguments other surfaces still show, and the text of the error — stays intact.
//! 2. **Drop placeholder nulls** (`normalizeOptionalNulls`, module `nulls`): an optional property
//!    sent as `null` is deleted, because strict provider modes make models send `null` for
//!    "absent".
//! 3. **Convert, if asked** (TypeBox's `Value.Convert`, module `convert`): only for a schema
//!    made with [`ToolSchema::with_typebox_convert`], standing for a tool whose Pi
//!    counterpart has a TypeBox schema (Pi's coding tools); a non-array becomes a one-item
//!    array where the schema wants an array, and TypeBox's looser primitive rules apply.
//! 4. **Coerce** (`coerceWithJsonSchema`, module `coerce`): `"24"` for a number becomes 24, `1`
//!    for a boolean becomes `true`, `42` for a string becomes `"42"`… Models get such details
//!    wrong all the time, Pi repairs them, and a tool must behave the same under both.
//! 5. **Validate** with TypeBox 1.3's semantics (the fast check allocates nothing on success).
//! 6. On failure, **Pi's text** (TypeBox's messages and order, Pi's paths):
//!
//! ```text
//! Validation failed for tool "get_weather":
//!   - city: must not have more than 80 characters
//!
//! Received arguments:
//! { …the arguments as given, JSON.stringify(args, null, 2)… }
//! ```
//!
//! After a successful check, integral floats (`5.0`) become integers so that serde accepts
//! them for integer fields (in JavaScript they are the same number).
//!
//! Steps 2 and 4 can only change a value the validator rejects, so arguments that already
//! validate skip them (unless the schema has one of the few shapes where Pi reads more than
//! the validator checks; `tests` compare both paths on every scenario schema). A schema
//! with step 3 always takes every step: TypeBox's conversion can change a valid value. String
//! lengths count as TypeBox 1.3 counts them: UTF-16 code units, except that a combining
//! mark, variation selector, ZWJ sequence or flag pair counts as one character with what it
//! joins, and an astral character (an emoji) counts once.
//!
//! # Why our own validator
//!
//! Pi's error texts are TypeBox's messages in TypeBox's order (every error, `required` before
//! `additionalProperties` before each property, `anyOf` branch errors before the `anyOf`
//! line, at most 8), and its coercion consults the validator on union branches; a generic
//! validator reports different errors in a different order. The `jsonschema` crate would also
//! bring a second `syn` major into the build. The compiled form (module `compile`) is a vector of
//! typed nodes with pre-parsed keywords, compiled regexes and `$ref`s resolved to indices,
//! built once per tool.
//!
//! # Limits and deliberate differences from Pi
//!
//! * Arguments nested deeper than [`MAX_ARGUMENT_DEPTH`] levels are rejected before any step
//!   runs (Pi would overflow its stack); schema evaluation is capped the same way.
//! * `$ref` supports local JSON pointers (`#`, `#/$defs/X`); a reference that does not resolve
//!   makes the schema unusable ([`ToolSchema::error`]) instead of failing every call.
//! * Union branches and property schemas are checked in the context of the whole schema;
//!   Pi compiles them standalone, where their `$ref`s do not resolve.
//! * `pattern` uses the `regex` crate: no look-around or back-references (the schema is then
//!   unusable), and `\d`/`\w` are Unicode-aware.
//! * JavaScript's `"key" in object` also sees inherited names (`toString`); we do not.
//! * When coercion changes a non-object root value and the result still fails, Pi returns the
//!   uncoerced value without validating it; we report the errors instead.
//! * Formats `url`, `iri`, `iri-reference`, `idn-email`, `idn-hostname` and
//!   `json-pointer-uri-fragment` are not checked (TypeBox checks them).

mod check;
mod coerce;
mod compile;
mod convert;
mod errors;
mod format;

mod deserialize;
pub(crate) mod keywords;
mod limits;
mod normalize;
mod nulls;
mod output;
mod tracked;

use std::any::TypeId;
use std::collections::HashMap;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, OnceLock, RwLock};

use schemars::JsonSchema;
use std::borrow::Cow;

use serde_json::{Value, json};

use crate::error::{ToolError, ToolErrorKind};
use crate::js;
use compile::Compiled;

pub(crate) use normalize::MAX_DEPTH;

pub use deserialize::deserialize_params;
pub use limits::ArgumentLimits;
pub use normalize::{Normalized, SchemaError, normalize};
pub use output::{OutputSchema, WRAPPED_RESULT_KEY};

/// How deeply arguments may nest (arrays and objects), as serde_json's parser allows.
pub const MAX_ARGUMENT_DEPTH: usize = 128;

/// How many schemas have been compiled in this process, for tests that prove caching
/// (`__private::schema_builds`; not part of the API).
pub(crate) static SCHEMA_BUILDS: AtomicUsize = AtomicUsize::new(0);

/// Why a [`ToolSchema`] cannot be used. `Display` gives the text every call of the tool
/// then fails with.
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub enum ToolSchemaError {
    /// The params type's generated schema cannot be a tool's (its root is not an object,
    /// a `$ref` does not resolve, ...).
    Params {
        /// The params type, as `std::any::type_name` spells it.
        type_name: String,
        /// What normalisation refused.
        error: SchemaError,
    },
    /// The JSON Schema does not compile (a malformed keyword, a non-local `$ref`, too
    /// deep): the compiler's message, naming the schema position.
    Compile {
        /// What is wrong, and where.
        message: String,
    },
}

impl std::fmt::Display for ToolSchemaError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            ToolSchemaError::Params { type_name, error } => {
                write!(f, "parameters type `{type_name}`: {error}")
            }
            ToolSchemaError::Compile { message } => f.write_str(message),
        }
    }
}

impl std::error::Error for ToolSchemaError {}

/// A tool's parameter schema and its compiled validator, built once per tool.
pub struct ToolSchema {
    json: Value,
    /// The schema as declared, before normalisation; `None` when it is [`Self::json`].
    declared: Option<Value>,
    compiled: Result<Compiled, ToolSchemaError>,
    root_description: Option<String>,
    warnings: Vec<String>,
    /// Whether arguments go through TypeBox's `Value.Convert` first (module `convert`).
    typebox_convert: bool,
}

impl std::fmt::Debug for ToolSchema {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("ToolSchema")
            .field("json", &self.json)
            .field("error", &self.error())
            .finish()
    }
}

impl ToolSchema {
    /// The schema of a params type, generated, normalised ([`normalize`]) and compiled on
    /// first use, and cached per type. A type whose schema is not an object (newtype,
    /// tuple or unit struct, plain enum …) gives a schema whose [`Self::error`] says why;
    /// every call of such a tool fails with that text.
    pub fn for_type<P: JsonSchema + 'static>() -> Arc<ToolSchema> {
        // Only the type's identity and its generator are per type: everything else is
        // compiled once, not once per tool of the user's crate.
        Self::for_type_erased(TypeId::of::<P>(), std::any::type_name::<P>(), generate::<P>)
    }

    #[inline(never)]
    fn for_type_erased(id: TypeId, type_name: &str, generate: fn() -> Value) -> Arc<ToolSchema> {
        type Cell = Arc<OnceLock<Arc<ToolSchema>>>;
        static CACHE: OnceLock<RwLock<HashMap<TypeId, Cell>>> = OnceLock::new();
        let cache = CACHE.get_or_init(Default::default);
        let hit = cache.read().ok().and_then(|c| c.get(&id).cloned());
        let cell = match hit {
            Some(cell) => cell,
            None => match cache.write() {
                Ok(mut c) => c.entry(id).or_default().clone(),
                // A poisoned cache (a panic while inserting): build without caching.
                Err(_) => Cell::default(),
            },
        };
        // Built outside the cache lock, once per type: threads asking for the same type at
        // the same time wait for the one that builds it.
        cell.get_or_init(|| Arc::new(ToolSchema::build(type_name, generate())))
            .clone()
    }

    /// Normalises and compiles the generated schema of the type named `type_name`
    /// (uncached): the one place [`Self::for_type`] builds from.
    fn build(type_name: &str, generated: Value) -> ToolSchema {
        let declared = generated.clone();
        let schema = match normalize(generated) {
            Ok(n) => {
                let mut schema = ToolSchema::from_json(n.schema);
                schema.root_description = n.root_description;
                schema.warnings = n.warnings;
                for w in &schema.warnings {
                    tracing::debug!(params = type_name, "schema: {w}");
                }
                schema
            }
            Err(error) => ToolSchema::unusable(
                json!({"type": "object", "properties": {}}),
                ToolSchemaError::Params {
                    type_name: type_name.to_owned(),
                    error,
                },
            ),
        };
        schema.with_declared(declared)
    }

    /// A schema given as plain JSON, used as is and compiled now.
    pub fn from_json(json: Value) -> ToolSchema {
        SCHEMA_BUILDS.fetch_add(1, Ordering::Relaxed);
        let compiled = compile::compile(&json)
            .map(|mut compiled| {
                check::fill_null_rejection(&mut compiled);
                compiled
            })
            .map_err(|message| ToolSchemaError::Compile { message });
        ToolSchema {
            json,
            declared: None,
            compiled,
            root_description: None,
            warnings: Vec::new(),
            typebox_convert: false,
        }
    }

    /// This schema, with TypeBox's `Value.Convert` run on the arguments before Pi's
    /// coercion, as pi-ai runs it for a tool whose parameters are a TypeBox schema (Pi's
    /// own coding tools are). For a plain JSON schema Pi's Convert does nothing, which is
    /// why it is off by default. The main visible effect: where the schema wants an array
    /// (one `items` schema), a value that is not one becomes a one-item array, so
    /// `"edits": "x"` fails as `edits.0: must be object`, as in Pi; blank strings become 0
    /// for numbers, `"TRUE"`/`"1"` become `true`, `null` becomes `"null"` for strings.
    /// The rules are listed in TypeBox's order in the `schema` module's source
    /// (`convert.rs`).
    ///
    /// ```
    /// use pi_tool_core::json;
    /// use pi_tool_core::schema::ToolSchema;
    ///
    /// let schema = ToolSchema::from_json(json!({
    ///     "type": "object",
    ///     "properties": {"tags": {"type": "array", "items": {"type": "string"}}},
    ///     "required": ["tags"]
    /// }));
    /// assert!(schema.validate("t", &json!({"tags": "solo"})).is_err());
    /// let schema = schema.with_typebox_convert();
    /// assert_eq!(schema.validate("t", &json!({"tags": "solo"})).unwrap(), json!({"tags": ["solo"]}));
    /// ```
    #[must_use]
    pub fn with_typebox_convert(mut self) -> ToolSchema {
        self.typebox_convert = true;
        self
    }

    /// Whether [`with_typebox_convert`](Self::with_typebox_convert) is on.
    pub fn converts_like_typebox(&self) -> bool {
        self.typebox_convert
    }

    /// A schema that cannot be used: every call fails with `reason` (see [`Self::error`]).
    fn unusable(json: Value, reason: ToolSchemaError) -> ToolSchema {
        let mut schema = ToolSchema::from_json(json);
        schema.compiled = Err(reason);
        schema
    }

    /// The params type's doc comment (the root `description` schemars emits), removed
    /// from [`Self::json`] by normalisation; a tool without a description can use it.
    pub fn root_description(&self) -> Option<&str> {
        self.root_description.as_deref()
    }

    /// What normalisation changed that a developer should know (e.g. a root union
    /// merged into one object).
    pub fn warnings(&self) -> &[String] {
        &self.warnings
    }

    /// The JSON Schema the model sees: the normalised one, which is also the one every
    /// call is validated against.
    pub fn json(&self) -> &Value {
        &self.json
    }

    /// The schema as it was declared, before normalisation: the params type's generated
    /// schema (`$schema`, `$defs`/`$ref`, `title`, composition and conditional keywords
    /// as written), or the JSON a schema was made from. Validation always runs on the
    /// normalised [`Self::json`]; this one is what an MCP listing may show (JSON Schema
    /// 2020-12 as written, which not every model provider accepts). Nothing in pi-tool
    /// resolves a `$ref` of it that is not local (`#…`): a network `$ref` is never
    /// fetched.
    ///
    /// ```
    /// use pi_tool_core::json;
    /// use pi_tool_core::schema::ToolSchema;
    ///
    /// let declared = json!({
    ///     "$schema": "https://json-schema.org/draft/2020-12/schema",
    ///     "type": "object",
    ///     "$defs": {"city": {"type": "string"}},
    ///     "properties": {"city": {"$ref": "#/$defs/city"}}
    /// });
    /// let normalized = pi_tool_core::schema::normalize(declared.clone()).unwrap();
    /// let schema = ToolSchema::from_json(normalized.schema).with_declared(declared.clone());
    /// assert_eq!(schema.declared(), &declared);
    /// assert_eq!(schema.json()["properties"]["city"], json!({"type": "string"}));
    /// ```
    pub fn declared(&self) -> &Value {
        self.declared.as_ref().unwrap_or(&self.json)
    }

    /// This schema, with `declared` as the schema it was declared as (see
    /// [`Self::declared`]): for a schema built from a normalised form of `declared`, as
    /// an MCP client does with a server's `inputSchema`. It changes nothing about
    /// validation.
    #[must_use]
    pub fn with_declared(mut self, declared: Value) -> ToolSchema {
        self.declared = (declared != self.json).then_some(declared);
        self
    }

    /// Why this schema cannot be used, if it cannot (calls then fail with this text).
    pub fn error(&self) -> Option<&ToolSchemaError> {
        self.compiled.as_ref().err()
    }

    /// Checks `args` (the prepared arguments) for the tool `tool_name` and returns the value
    /// execute receives: Pi's pipeline (copy, drop placeholder nulls, coerce, validate), or
    /// Pi's validation error text.
    ///
    /// ```
    /// use pi_tool_core::json;
    /// use pi_tool_core::schema::ToolSchema;
    ///
    /// let schema = ToolSchema::from_json(json!({
    ///     "type": "object",
    ///     "properties": {
    ///         "city": {"type": "string", "minLength": 1},
    ///         "days": {"type": "integer"}
    ///     },
    ///     "required": ["city"],
    ///     "additionalProperties": false
    /// }));
    /// // Pi's coercion: "3" for an integer becomes 3.
    /// let args = schema.validate("forecast", &json!({"city": "Oslo", "days": "3"})).unwrap();
    /// assert_eq!(args, json!({"city": "Oslo", "days": 3}));
    ///
    /// let error = schema.validate("forecast", &json!({"city": "", "hours": 2})).unwrap_err();
    /// assert_eq!(
    ///     error.message(),
    ///     "Validation failed for tool \"forecast\":
    ///   - root: must not have additional properties
    ///   - city: must not have fewer than 1 characters
    ///
    /// Received arguments:
    /// {
    ///   \"city\": \"\",
    ///   \"hours\": 2
    /// }"
    /// );
    /// ```
    pub fn validate(&self, tool_name: &str, args: &Value) -> Result<Value, ToolError> {
        self.validate_cow(tool_name, Cow::Borrowed(args))
            .map(Cow::into_owned)
    }

    /// [`validate`](Self::validate) without a copy where none is needed: arguments that
    /// are valid as given and that Pi's passes leave alone (the common case) come back as
    /// they came, borrowed or owned. What [`AgentTool::check_arguments`](crate::AgentTool)
    /// runs.
    pub(crate) fn validate_cow<'a>(
        &self,
        tool_name: &str,
        args: Cow<'a, Value>,
    ) -> Result<Cow<'a, Value>, ToolError> {
        let compiled = self.usable(tool_name)?;
        let shape = Shape::of(&args);
        if shape.too_deep {
            return Err(depth_error(tool_name));
        }
        // A value that validates as given is left unchanged by Pi's passes (see
        // `compile::pi_is_transparent`): skip them.
        // TypeBox's conversion can change a valid value (its `additionalProperties` pass
        // reaches declared properties), so a schema that converts takes every step.
        if compiled.pi_transparent && !self.typebox_convert && check::accepts(compiled, 0, &args) {
            let mut args = args;
            if shape.has_integral_float {
                integralize(args.to_mut());
            }
            return Ok(args);
        }
        self.validate_slow(compiled, tool_name, &args)
            .map(Cow::Owned)
    }

    fn usable(&self, tool_name: &str) -> Result<&Compiled, ToolError> {
        self.compiled.as_ref().map_err(|e| {
            ToolError::with_kind(
                ToolErrorKind::InvalidArguments,
                format!("Tool \"{tool_name}\" has an unusable parameters schema: {e}"),
            )
        })
    }

    /// Pi's full pipeline, without the shortcut for values that already validate.
    fn validate_slow(
        &self,
        compiled: &Compiled,
        tool_name: &str,
        args: &Value,
    ) -> Result<Value, ToolError> {
        let mut value = args.clone();
        nulls::normalize(compiled, 0, &mut value, 0);
        if self.typebox_convert && value.is_object() {
            // pi-ai drops Convert's return value: only what it changes inside the root
            // object counts (an object root is converted in place).
            convert::convert_root(compiled, &mut value);
        }
        coerce::coerce(compiled, 0, &mut value, 0);
        if check::accepts(compiled, 0, &value) {
            integralize(&mut value);
            return Ok(value);
        }
        let lines: Vec<String> = errors::collect(compiled, &value)
            .iter()
            .map(errors::Failure::pi_line)
            .collect();
        Err(ToolError::with_kind(
            ToolErrorKind::InvalidArguments,
            failure_text(tool_name, &lines, args),
        ))
    }
}

/// Pi's message: the error lines (or `Unknown validation error`) and the received arguments.
pub(crate) fn failure_text(tool_name: &str, lines: &[String], args: &Value) -> String {
    let body = if lines.is_empty() {
        "Unknown validation error".to_owned()
    } else {
        lines.join("\n")
    };
    let received = if js::depth_exceeds(args, MAX_ARGUMENT_DEPTH) {
        format!("(not shown: nested deeper than {MAX_ARGUMENT_DEPTH} levels)")
    } else {
        js::stringify_pretty(args)
    };
    format!(
        "Validation failed for tool \"{tool_name}\":\n{body}\n\nReceived arguments:\n{received}"
    )
}

/// The canonical schemars output for a params type, before normalisation: draft 2020-12
/// with the workspace's `preserve_order` (declaration order of properties) and no
/// `$schema` keyword. [`ToolSchema::for_type`] normalises it ([`normalize`]).
pub fn generate<P: JsonSchema>() -> Value {
    // Only schemars' walk over `P` is per type; the settings and the serialisation are not.
    schema_value(&schema_generator().into_root_schema_for::<P>())
}

#[inline(never)]
fn schema_generator() -> schemars::SchemaGenerator {
    schemars::generate::SchemaSettings::draft2020_12()
        .with(|s| s.meta_schema = None)
        .into_generator()
}

#[inline(never)]
fn schema_value(schema: &schemars::Schema) -> Value {
    // Serialising (rather than `to_value`) applies schemars' keyword order at every level
    // (`title, description, type, format, properties, …, $defs`).
    serde_json::to_value(schema).unwrap_or_else(|_| schema.clone().to_value())
}

/// Integral floats become integers (`5.0` → `5`): one JavaScript number, but serde rejects a
/// float for `u32`. Depth is bounded by [`MAX_ARGUMENT_DEPTH`] (checked before).
/// Arguments nested deeper than the validator walks get an error before any step.
fn depth_error(tool_name: &str) -> ToolError {
    ToolError::with_kind(
        ToolErrorKind::InvalidArguments,
        format!(
            "Validation failed for tool \"{tool_name}\":\n  - root: must not nest deeper than {MAX_ARGUMENT_DEPTH} levels\n\nReceived arguments:\n(not shown: nested deeper than {MAX_ARGUMENT_DEPTH} levels)"
        ),
    )
}

/// What one walk over the arguments learns before validation: whether they nest too deep to
/// validate, and whether any number is an integral float (only then does [`integralize`]
/// change them).
#[derive(Debug, Default)]
struct Shape {
    too_deep: bool,
    has_integral_float: bool,
}

impl Shape {
    fn of(args: &Value) -> Shape {
        let mut shape = Shape::default();
        shape.too_deep = !shape.walk(args, MAX_ARGUMENT_DEPTH);
        shape
    }

    /// `false` as soon as a container nests deeper than `levels_left`.
    fn walk(&mut self, value: &Value, levels_left: usize) -> bool {
        match value {
            Value::Number(n) => {
                if n.is_f64() {
                    let f = js::as_f64(n);
                    self.has_integral_float |= f.trunc() == f;
                }
                true
            }
            Value::Array(items) => {
                levels_left > 0 && items.iter().all(|v| self.child(v, levels_left - 1))
            }
            Value::Object(map) => {
                levels_left > 0 && map.values().all(|v| self.child(v, levels_left - 1))
            }
            _ => true,
        }
    }

    /// [`walk`](Self::walk) for a child, with strings, booleans and nulls (most
    /// arguments' leaves) answered without the call.
    #[inline(always)]
    fn child(&mut self, value: &Value, levels_left: usize) -> bool {
        match value {
            Value::Null | Value::Bool(_) | Value::String(_) => true,
            _ => self.walk(value, levels_left),
        }
    }
}

fn integralize(value: &mut Value) {
    match value {
        Value::Number(n) if n.is_f64() => {
            let f = js::as_f64(n);
            if f.trunc() == f {
                *value = js::number_value(f);
            }
        }
        Value::Array(items) => items.iter_mut().for_each(integralize),
        Value::Object(map) => map.values_mut().for_each(integralize),
        _ => {}
    }
}

#[cfg(test)]
mod tests;
