//! Parameter schemas: generated once per tool, normalised, and enforced on every call.
//!
//! A [`ToolSchema`] holds the JSON Schema the model sees and the compiled validator that
//! checks the model's arguments against exactly that schema. Typed tools get theirs from
//! schemars ([`ToolSchema::for_type`], cached per type); tools defined at run time give a
//! plain JSON Schema ([`ToolSchema::from_json`]).
//!
//! NOTE: minimal first version; normalisation, Pi's coercion and Pi's error texts follow.

use std::any::TypeId;
use std::collections::HashMap;
use std::sync::{Arc, OnceLock, RwLock};

use schemars::JsonSchema;
use serde_json::Value;

use crate::error::{ToolError, ToolErrorKind};

/// A tool's parameter schema and its compiled validator, built once per tool.
pub struct ToolSchema {
    json: Value,
    validator: Result<(), String>,
}

impl std::fmt::Debug for ToolSchema {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("ToolSchema")
            .field("json", &self.json)
            .finish()
    }
}

impl ToolSchema {
    /// The schema of a params type, generated and compiled on first use and cached per type.
    pub fn for_type<P: JsonSchema + 'static>() -> Arc<ToolSchema> {
        static CACHE: OnceLock<RwLock<HashMap<TypeId, Arc<ToolSchema>>>> = OnceLock::new();
        let cache = CACHE.get_or_init(Default::default);
        let id = TypeId::of::<P>();
        if let Some(hit) = cache.read().ok().and_then(|c| c.get(&id).cloned()) {
            return hit;
        }
        let generator = schemars::generate::SchemaSettings::draft2020_12()
            .with(|s| s.meta_schema = None)
            .into_generator();
        let mut json = generator.into_root_schema_for::<P>().to_value();
        if let Some(o) = json.as_object_mut() {
            o.shift_remove("title");
        }
        let schema = Arc::new(ToolSchema::from_json(json));
        if let Ok(mut c) = cache.write() {
            c.entry(id).or_insert_with(|| schema.clone());
        }
        schema
    }

    /// A schema given as plain JSON, used as is.
    pub fn from_json(json: Value) -> ToolSchema {
        let validator = if json.is_object() {
            Ok(())
        } else {
            Err("the schema is not an object".to_owned())
        };
        ToolSchema { json, validator }
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
