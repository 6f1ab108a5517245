//! Validated arguments into the tool's params type, the last step of the argument
//! pipeline.

use serde::de::DeserializeOwned;
use serde_json::Value;

use super::tracked;
use crate::error::{ToolError, ToolErrorKind};

/// Deserialises validated arguments into a params type; a failure reads like Pi's
/// validation errors, with the path of the field serde rejected (`  - limit: invalid value:
/// integer 5000000000, expected u32`) and the arguments it was given.
///
/// The schema cannot say everything the type says (a `u32`'s range, a custom
/// `Deserialize`), so serde can still refuse arguments the schema accepted.
pub fn deserialize_params<P: DeserializeOwned>(
    tool_name: &str,
    params: &Value,
) -> Result<P, ToolError> {
    // One deserialiser that builds the path only on failure: no cost on success, and one
    // copy of `P`'s `Deserialize` code (see `tracked`).
    P::deserialize(tracked::Tracked(params))
        .map_err(|error| invalid_params(tool_name, params, &error))
}

#[inline(never)]
fn invalid_params(tool_name: &str, params: &Value, error: &tracked::PathError) -> ToolError {
    let line = format!("  - {}: {}", error.path(), error.message());
    ToolError::with_kind(
        ToolErrorKind::InvalidArguments,
        super::failure_text(tool_name, &[line], params),
    )
}
