//! P-allow: the keyword allow-lists of each provider. A keyword outside the list is not
//! silently lost: it moves into the node's description as `key: value`, as the Anthropic
//! SDK and pydantic-ai do, so the model still reads the constraint.

use serde_json::{Map, Value};

use super::Ctx;
use crate::schema::keywords::append_description;

/// Every JSON Schema 2020-12 keyword (core, applicator, unevaluated, validation,
/// meta-data, format, content vocabularies).
pub(crate) const DRAFT_2020_12: &[&str] = &[
    "$schema",
    "$id",
    "$ref",
    "$anchor",
    "$dynamicRef",
    "$dynamicAnchor",
    "$vocabulary",
    "$comment",
    "$defs",
    "prefixItems",
    "items",
    "contains",
    "additionalProperties",
    "properties",
    "patternProperties",
    "dependentSchemas",
    "propertyNames",
    "if",
    "then",
    "else",
    "allOf",
    "anyOf",
    "oneOf",
    "not",
    "unevaluatedItems",
    "unevaluatedProperties",
    "type",
    "const",
    "enum",
    "multipleOf",
    "maximum",
    "exclusiveMaximum",
    "minimum",
    "exclusiveMinimum",
    "maxLength",
    "minLength",
    "pattern",
    "maxItems",
    "minItems",
    "uniqueItems",
    "maxContains",
    "minContains",
    "maxProperties",
    "minProperties",
    "required",
    "dependentRequired",
    "title",
    "description",
    "default",
    "deprecated",
    "readOnly",
    "writeOnly",
    "examples",
    "format",
    "contentEncoding",
    "contentMediaType",
    "contentSchema",
];

/// One provider's keyword rules.
pub(crate) struct Allow {
    /// Keywords kept as they are.
    pub(crate) keep: &'static [&'static str],
    /// Keywords removed without a note.
    pub(crate) drop: &'static [&'static str],
    /// `Some(list)`: only these `format`s are kept; others become notes.
    pub(crate) formats: Option<&'static [&'static str]>,
    /// Keep `x-*` extension keywords (MCP); otherwise they are dropped.
    pub(crate) keep_extensions: bool,
    /// A kept keyword whose value the provider still refuses (it becomes a note).
    pub(crate) refuses: fn(&str, &Value) -> bool,
}

fn refuses_nothing(_: &str, _: &Value) -> bool {
    false
}

/// Anthropic strict: `minItems` only 0 or 1.
fn anthropic_refuses(key: &str, value: &Value) -> bool {
    key == "minItems" && value.as_u64().is_none_or(|n| n > 1)
}

impl Allow {
    /// Applies the rules to one schema node.
    pub(crate) fn apply(&self, m: &mut Map<String, Value>, _: &str, _: &mut Ctx) {
        let mut notes: Vec<String> = Vec::new();
        let keys: Vec<String> = m.keys().cloned().collect();
        for key in keys {
            let k = key.as_str();
            if k == "description" {
                continue;
            }
            if self.drop.contains(&k) {
                m.shift_remove(k);
            } else if k.starts_with("x-") {
                if !self.keep_extensions {
                    m.shift_remove(k);
                }
            } else if k == "format"
                && let Some(formats) = self.formats
            {
                let keep = m
                    .get(k)
                    .and_then(Value::as_str)
                    .is_some_and(|f| formats.contains(&f) && self.keep.contains(&"format"));
                if !keep && let Some(v) = m.shift_remove(k) {
                    notes.push(format!("format: {}", show(&v)));
                }
            } else if (!self.keep.contains(&k) || m.get(k).is_some_and(|v| (self.refuses)(k, v)))
                && let Some(v) = m.shift_remove(k)
                && !is_machine_limit(k, &v)
            {
                notes.push(format!("{k}: {}", show(&v)));
            }
        }
        if !notes.is_empty() {
            append_description(m, &notes.join(", "));
        }
    }
}

/// The 32-bit limits N3b adds for `i32`/`u32`: enforced by the validator, but only noise
/// in a description the model reads ("maximum: 4294967295" on every `u32`).
fn is_machine_limit(key: &str, value: &Value) -> bool {
    let limits: &[i64] = match key {
        "maximum" => &[i32::MAX as i64, u32::MAX as i64],
        "minimum" => &[i32::MIN as i64],
        _ => return false,
    };
    value.as_i64().is_some_and(|v| limits.contains(&v))
}

fn show(v: &Value) -> String {
    match v {
        Value::String(s) => s.clone(),
        other => other.to_string(),
    }
}

/// `mcp`: the portable schema; every 2020-12 keyword and `x-*` extensions stay.
pub(crate) const MCP: Allow = Allow {
    keep: DRAFT_2020_12,
    drop: &["$comment", "$schema"],
    formats: None,
    keep_extensions: true,
    refuses: refuses_nothing,
};

/// `anthropic` and `openai`: every 2020-12 keyword.
pub(crate) const FULL: Allow = Allow {
    keep: DRAFT_2020_12,
    drop: &["$schema"],
    formats: None,
    keep_extensions: false,
    refuses: refuses_nothing,
};

/// `anthropic-strict` (structured outputs' documented subset).
pub(crate) const ANTHROPIC_STRICT: Allow = Allow {
    keep: &[
        "type",
        "enum",
        "const",
        "anyOf",
        "allOf",
        "$ref",
        "$defs",
        "description",
        "title",
        "properties",
        "required",
        "additionalProperties",
        "items",
        "minItems",
        "format",
        "pattern",
    ],
    drop: &["$comment", "deprecated", "readOnly", "writeOnly"],
    formats: Some(&[
        "date-time",
        "time",
        "date",
        "duration",
        "email",
        "hostname",
        "uri",
        "ipv4",
        "ipv6",
        "uuid",
    ]),
    keep_extensions: false,
    refuses: anthropic_refuses,
};

/// `openai-strict` (Structured Outputs' supported keywords).
pub(crate) const OPENAI_STRICT: Allow = Allow {
    keep: &[
        "type",
        "enum",
        "const",
        "anyOf",
        "$ref",
        "$defs",
        "description",
        "title",
        "properties",
        "required",
        "additionalProperties",
        "items",
        "pattern",
        "format",
        "multipleOf",
        "maximum",
        "exclusiveMaximum",
        "minimum",
        "exclusiveMinimum",
        "minItems",
        "maxItems",
    ],
    drop: &["default", "$comment", "deprecated", "readOnly", "writeOnly"],
    formats: Some(&[
        "date-time",
        "time",
        "date",
        "duration",
        "email",
        "hostname",
        "ipv4",
        "ipv6",
        "uuid",
    ]),
    keep_extensions: false,
    refuses: refuses_nothing,
};

/// `gemini` (`parametersJsonSchema`; the keywords of `responseJsonSchema`).
pub(crate) const GEMINI: Allow = Allow {
    keep: &[
        "$id",
        "$defs",
        "$ref",
        "$anchor",
        "type",
        "format",
        "description",
        "enum",
        "items",
        "prefixItems",
        "minItems",
        "maxItems",
        "minimum",
        "maximum",
        "anyOf",
        "properties",
        "additionalProperties",
        "required",
        "propertyOrdering",
        "default",
    ],
    drop: &[
        "title",
        "examples",
        "$comment",
        "deprecated",
        "readOnly",
        "writeOnly",
    ],
    formats: None,
    keep_extensions: false,
    refuses: refuses_nothing,
};

/// `gemini-openapi` (`parameters`: the proto `Schema`; any other key is a 400).
pub(crate) const GEMINI_OPENAPI: Allow = Allow {
    keep: &[
        "type",
        "format",
        "description",
        "nullable",
        "enum",
        "maxItems",
        "minItems",
        "properties",
        "required",
        "minProperties",
        "maxProperties",
        "minLength",
        "maxLength",
        "pattern",
        "example",
        "anyOf",
        "propertyOrdering",
        "default",
        "items",
        "minimum",
        "maximum",
    ],
    drop: &[
        "title",
        "$comment",
        "deprecated",
        "readOnly",
        "writeOnly",
        "$defs",
        "$ref",
    ],
    formats: Some(&["date-time", "enum"]),
    keep_extensions: false,
    refuses: refuses_nothing,
};

/// `ollama` (what Ollama's Go structs keep; the rest would be dropped unseen).
pub(crate) const OLLAMA: Allow = Allow {
    keep: &[
        "type",
        "description",
        "enum",
        "items",
        "properties",
        "required",
        "anyOf",
    ],
    drop: &[
        "title",
        "$comment",
        "deprecated",
        "readOnly",
        "writeOnly",
        "examples",
        "additionalProperties",
    ],
    formats: Some(&[]),
    keep_extensions: false,
    refuses: refuses_nothing,
};
