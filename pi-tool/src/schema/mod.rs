//! Parameter schemas: generated once per tool, normalised, and enforced on every call.
//!
//! A [`ToolSchema`] holds the JSON Schema the model sees and the compiled validator that
//! checks the model's arguments against exactly that schema. Typed tools get theirs from
//! schemars ([`ToolSchema::for_type`], cached per type); tools defined at run time give a
//! plain JSON Schema ([`ToolSchema::from_json`]).
//!
//! Generated schemas are normalised once ([`normalize`], N0–N6) so that the schema the
//! model sees, the one arguments are validated against, and the provider wire schemas
//! ([`crate::profiles`]) all derive from the same canonical object schema.
//!
//! NOTE: minimal validator; Pi's coercion and Pi's error texts follow.

use std::any::TypeId;
use std::collections::HashMap;
use std::sync::{Arc, OnceLock, RwLock};

use schemars::JsonSchema;
use serde_json::{Value, json};

use crate::error::{ToolError, ToolErrorKind};

pub(crate) mod keywords;
mod normalize;

pub(crate) use normalize::MAX_DEPTH;

pub use normalize::{Normalized, SchemaError, normalize};

/// A tool's parameter schema and its compiled validator, built once per tool.
pub struct ToolSchema {
    json: Value,
    validator: Result<(), String>,
    root_description: Option<String>,
    warnings: Vec<String>,
}

impl std::fmt::Debug for ToolSchema {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("ToolSchema")
            .field("json", &self.json)
            .finish()
    }
}

/// The canonical schemars output for a params type, before normalisation: draft 2020-12
/// with the workspace's `preserve_order` (declaration order of properties) and no
/// `$schema` keyword. [`ToolSchema::for_type`] normalises it ([`normalize`]).
pub fn generate<P: JsonSchema>() -> Value {
    let schema = schemars::generate::SchemaSettings::draft2020_12()
        .with(|s| s.meta_schema = None)
        .into_generator()
        .into_root_schema_for::<P>();
    // Serialising (rather than `to_value`) applies schemars' keyword order at every level
    // (`title, description, type, format, properties, …, $defs`).
    serde_json::to_value(&schema).unwrap_or_else(|_| schema.to_value())
}

impl ToolSchema {
    /// The schema of a params type, generated, normalised ([`normalize`]) and compiled on
    /// first use, and cached per type. A type whose schema is not an object (newtype,
    /// tuple or unit struct, plain enum …) gives a schema whose [`Self::error`] says why;
    /// every call of such a tool fails with that text.
    pub fn for_type<P: JsonSchema + 'static>() -> Arc<ToolSchema> {
        static CACHE: OnceLock<RwLock<HashMap<TypeId, Arc<ToolSchema>>>> = OnceLock::new();
        let cache = CACHE.get_or_init(Default::default);
        let id = TypeId::of::<P>();
        if let Some(hit) = cache.read().ok().and_then(|c| c.get(&id).cloned()) {
            return hit;
        }
        let schema = ToolSchema::build::<P>();
        let schema = Arc::new(schema);
        if let Ok(mut c) = cache.write() {
            c.entry(id).or_insert_with(|| schema.clone());
        }
        schema
    }

    /// Generates, normalises and compiles the schema of `P` (uncached): the one place
    /// [`Self::for_type`] builds from.
    fn build<P: JsonSchema>() -> ToolSchema {
        match normalize(generate::<P>()) {
            Ok(n) => {
                let mut schema = ToolSchema::from_json(n.schema);
                schema.root_description = n.root_description;
                schema.warnings = n.warnings;
                for w in &schema.warnings {
                    tracing::debug!(params = std::any::type_name::<P>(), "schema: {w}");
                }
                schema
            }
            Err(e) => ToolSchema::unusable(
                json!({"type": "object", "properties": {}}),
                format!("parameters type `{}`: {e}", std::any::type_name::<P>()),
            ),
        }
    }

    /// A schema given as plain JSON, used as is.
    pub fn from_json(json: Value) -> ToolSchema {
        let validator = if json.is_object() {
            Ok(())
        } else {
            Err("the schema is not an object".to_owned())
        };
        ToolSchema {
            json,
            validator,
            root_description: None,
            warnings: Vec::new(),
        }
    }

    /// A schema that cannot be used: every call fails with `reason` (see [`Self::error`]).
    fn unusable(json: Value, reason: String) -> ToolSchema {
        let mut schema = ToolSchema::from_json(json);
        schema.validator = Err(reason);
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

    /// The JSON Schema the model sees.
    pub fn json(&self) -> &Value {
        &self.json
    }

    /// Why this schema cannot be used, if it cannot (calls then fail with this text).
    pub fn error(&self) -> Option<&str> {
        self.validator.as_ref().err().map(String::as_str)
    }

    /// Checks `args` for the tool `tool_name` and returns the value execute receives.
    pub fn validate(&self, tool_name: &str, args: &Value) -> Result<Value, ToolError> {
        self.validator.as_ref().map_err(|e| {
            ToolError::with_kind(
                ToolErrorKind::InvalidArguments,
                format!("Tool \"{tool_name}\" has an unusable parameters schema: {e}"),
            )
        })?;
        if args.is_object() {
            return Ok(args.clone());
        }
        let lines = ["  - root: must be object".to_owned()];
        Err(ToolError::with_kind(
            ToolErrorKind::InvalidArguments,
            format!(
                "Validation failed for tool \"{tool_name}\":\n{}\n\nReceived arguments:\n{}",
                lines.join("\n"),
                serde_json::to_string_pretty(args).unwrap_or_default()
            ),
        ))
    }
}
