//! Output schemas: what a structured tool result ([`Json<T>`](crate::Json)) looks like,
//! published as MCP's `outputSchema`.
//!
//! MCP requires `outputSchema` to have `type: "object"` at its root, and
//! `structuredContent` to be an object that matches it. Rust types have other roots
//! too (a `Vec`, a string, a plain enum, an `Option<T>`, a union of structs), so the
//! schema is decided on the type's own root, before normalisation:
//!
//! * a root with `type: "object"` (a struct, a map) is used as is;
//! * any other root is wrapped, `{"type": "object", "properties": {"result": <schema>},
//!   "required": ["result"]}`, and the structured value with it: `{"result": value}`.
//!   The text rendering the model reads stays the bare value.
//!
//! Then the schema is normalised like params ([`normalize`](super::normalize): `$ref`s
//! inlined, numeric formats and boolean schemas made portable), once per type. Deciding
//! before normalising matters: normalisation merges a params root union into one object
//! (right for arguments, lossy for a result), and a wrapped root has no union to merge.

use std::any::TypeId;
use std::collections::HashMap;
use std::sync::{Arc, OnceLock, RwLock};

use schemars::JsonSchema;
use serde_json::{Map, Value, json};

use super::{generate, normalize};

/// The property a non-object result is wrapped in.
pub const WRAPPED_RESULT_KEY: &str = "result";

/// A tool's output schema, with an object root (MCP's rule), built once per type.
#[derive(Debug, Clone, PartialEq)]
pub struct OutputSchema {
    json: Value,
    wrapped: bool,
}

impl OutputSchema {
    /// The output schema of `T`, generated, wrapped if its root is not an object,
    /// normalised, and cached per type.
    pub fn for_type<T: JsonSchema + 'static>() -> Arc<OutputSchema> {
        type Cell = Arc<OnceLock<Arc<OutputSchema>>>;
        static CACHE: OnceLock<RwLock<HashMap<TypeId, Cell>>> = OnceLock::new();
        let cache = CACHE.get_or_init(Default::default);
        let id = TypeId::of::<T>();
        let hit = cache.read().ok().and_then(|c| c.get(&id).cloned());
        let cell = match hit {
            Some(cell) => cell,
            None => match cache.write() {
                Ok(mut c) => c.entry(id).or_default().clone(),
                Err(_) => Cell::default(),
            },
        };
        cell.get_or_init(|| Arc::new(OutputSchema::from_json(generate::<T>())))
            .clone()
    }

    /// The output schema of a JSON Schema (a generated one, before normalisation).
    pub fn from_json(schema: Value) -> OutputSchema {
        let wrapped = !has_object_root(&schema);
        let candidate = if wrapped { wrap(schema) } else { schema };
        match normalize(candidate.clone()) {
            Ok(n) => OutputSchema {
                json: n.schema,
                wrapped,
            },
            // Normalisation refuses what it cannot make portable; the schema is still
            // an honest description (its root is an object), so publish it unnormalised.
            Err(error) => {
                tracing::debug!("output schema left unnormalised: {error}");
                OutputSchema {
                    json: candidate,
                    wrapped,
                }
            }
        }
    }

    /// The schema, its root an object (MCP's `outputSchema`).
    pub fn json(&self) -> &Value {
        &self.json
    }

    /// Whether the type's own root was not an object, so values travel as
    /// `{"result": value}`.
    pub fn is_wrapped(&self) -> bool {
        self.wrapped
    }

    /// The structured content for a result `value` (MCP's `structuredContent`): the value
    /// itself, or `{"result": value}` when the schema is wrapped.
    pub fn structured(&self, value: Value) -> Value {
        if self.wrapped {
            let mut m = Map::new();
            m.insert(WRAPPED_RESULT_KEY.to_owned(), value);
            Value::Object(m)
        } else {
            value
        }
    }
}

/// `type: "object"` exactly: `["object", "null"]` (an `Option`) is not an object root,
/// since `null` is not an object; neither is a root union.
fn has_object_root(schema: &Value) -> bool {
    schema.get("type").and_then(Value::as_str) == Some("object")
        && ![
            "oneOf", "anyOf", "allOf", "$ref", "not", "if", "enum", "const",
        ]
        .iter()
        .any(|k| schema.get(k).is_some())
}

/// `{"type": "object", "properties": {"result": schema}, "required": ["result"]}`, with
/// the schema's `$defs` moved to the new root, where its `$ref`s point.
fn wrap(mut schema: Value) -> Value {
    let defs = schema.as_object_mut().and_then(|o| o.remove("$defs"));
    if let Some(o) = schema.as_object_mut() {
        o.remove("$schema");
    }
    let mut root = json!({
        "type": "object",
        "properties": {WRAPPED_RESULT_KEY: schema},
        "required": [WRAPPED_RESULT_KEY],
    });
    if let (Some(defs), Some(o)) = (defs, root.as_object_mut()) {
        o.insert("$defs".to_owned(), defs);
    }
    root
}

#[cfg(test)]
mod tests {
    use std::collections::BTreeMap;

    use schemars::JsonSchema;
    use serde::Serialize;
    use serde_json::{Value, json};

    use super::OutputSchema;
    use crate::schema::ToolSchema;

    #[derive(Serialize, JsonSchema)]
    struct Forecast {
        city: String,
        celsius: i32,
        /// Nested through `$defs`.
        wind: Wind,
    }

    #[derive(Serialize, JsonSchema)]
    struct Wind {
        kmh: u32,
    }

    #[derive(Serialize, JsonSchema)]
    #[serde(rename_all = "lowercase")]
    enum Sky {
        Clear,
        Cloudy,
    }

    #[derive(Serialize, JsonSchema)]
    #[serde(untagged)]
    enum Answer {
        Number { value: i64 },
        Words { text: String },
    }

    #[derive(Serialize, JsonSchema)]
    #[serde(tag = "kind")]
    enum Tagged {
        Hit { id: u32 },
        Miss,
    }

    /// MCP's rule for one type and one value: an object root, and a structured value
    /// that the schema accepts unchanged.
    fn check<T: JsonSchema + Serialize + 'static>(value: T, wrapped: bool) -> Value {
        let output = OutputSchema::for_type::<T>();
        let schema = output.json();
        assert_eq!(schema["type"], json!("object"), "{schema}");
        assert_eq!(output.is_wrapped(), wrapped, "{schema}");
        if wrapped {
            assert_eq!(schema["required"], json!(["result"]), "{schema}");
            assert!(
                schema["properties"]["result"].is_object()
                    || schema["properties"]["result"].is_boolean()
            );
        }
        assert!(schema.get("$defs").is_none(), "refs are inlined: {schema}");
        let value = serde_json::to_value(value).unwrap();
        let structured = output.structured(value.clone());
        assert!(structured.is_object(), "{structured}");
        let validator = ToolSchema::from_json(schema.clone());
        assert_eq!(validator.error(), None);
        let checked = validator
            .validate("t", &structured)
            .unwrap_or_else(|e| panic!("{e}"));
        assert_eq!(checked, structured, "the value matches without coercion");
        if wrapped {
            assert_eq!(structured, json!({"result": value}));
        } else {
            assert_eq!(structured, value);
        }
        schema.clone()
    }

    #[test]
    fn an_object_root_is_used_as_is() {
        let forecast = Forecast {
            city: "Paris".into(),
            celsius: 18,
            wind: Wind { kmh: 12 },
        };
        let schema = check(forecast, false);
        assert_eq!(
            schema["properties"]["wind"]["properties"]["kmh"]["type"],
            json!("integer")
        );
        let map: BTreeMap<String, i32> = [("a".to_owned(), 1)].into();
        check(map, false);
    }

    #[test]
    fn every_other_root_is_wrapped_in_result() {
        check(vec![1, 2, 3], true);
        check("sunny".to_owned(), true);
        check(42_i64, true);
        check(true, true);
        check(Sky::Cloudy, true);
        check(Sky::Clear, true);
        check(Some(Wind { kmh: 3 }), true);
        check(None::<Wind>, true);
        check(Answer::Words { text: "hi".into() }, true);
        check(Answer::Number { value: 7 }, true);
        // A tagged union has object variants but no single object root.
        check(Tagged::Hit { id: 1 }, true);
        check(Tagged::Miss, true);
        check((1, "two".to_owned()), true);
        check(json!({"any": ["thing"]}), true);
        check((), true);
    }

    #[test]
    fn the_schema_is_built_once_per_type() {
        let a = OutputSchema::for_type::<Vec<String>>();
        let b = OutputSchema::for_type::<Vec<String>>();
        assert!(std::sync::Arc::ptr_eq(&a, &b));
    }
}
