//! Unit tests: one or more per keyword, per coercion rule, per null rule, and the limits.
//! The exact texts follow TypeBox 1.3's messages and Pi's path format.

mod coercion;
mod compile_errors;
mod differences;
mod keywords;
mod limits;
mod shortcut;
mod typebox;

use serde_json::{Value, json};

use super::ToolSchema;
use crate::error::ToolErrorKind;

pub(super) fn schema(s: Value) -> ToolSchema {
    let schema = ToolSchema::from_json(s);
    assert_eq!(schema.error(), None);
    schema
}

/// The error lines (`path: message`) for `args`, or a panic if they validate.
pub(super) fn errors(s: Value, args: Value) -> Vec<String> {
    let e = schema(s).validate("t", &args).expect_err("should fail");
    assert_eq!(e.kind(), ToolErrorKind::InvalidArguments);
    let text = e.message();
    let body = text
        .strip_prefix("Validation failed for tool \"t\":\n")
        .and_then(|t| t.split("\n\nReceived arguments:\n").next())
        .unwrap_or_else(|| panic!("unexpected text: {text}"));
    body.lines()
        .map(|l| l.strip_prefix("  - ").unwrap_or(l).to_owned())
        .collect()
}

pub(super) fn valid(s: Value, args: Value) -> Value {
    schema(s)
        .validate("t", &args)
        .unwrap_or_else(|e| panic!("should pass: {e}"))
}

pub(super) fn obj(props: Value) -> Value {
    json!({"type": "object", "properties": props})
}
