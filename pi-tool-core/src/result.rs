//! Tool results: what a tool returns, and what a progress update carries.
//!
//! `AgentToolResult<D>` is Pi's `AgentToolResult<T>`: model-visible `content`, host-visible
//! `details` (typed, never sent to the model), and two loop controls, `terminate` and
//! `added_tool_names`. Its JSON is Pi's (`addedToolNames`, keys left out when unset).
//!
//! Tools that cross the object-safe [`AgentTool`](crate::AgentTool) boundary use
//! [`JsonToolResult`], where `details` is `Option<JsonDetails>`: `None` means the tool returned
//! no `details` key at all, which Pi keeps distinct from `details: null`. Typed details become
//! JSON text once, at that boundary ([`JsonDetails`]).

use std::any::Any;

use serde::{Deserialize, Serialize};
use serde_json::Value;

use crate::content::Content;
use crate::details::JsonDetails;
use crate::error::ToolError;

mod structured;

pub use structured::Json;
pub(crate) use structured::render_text;

/// The result of one tool execution, or one progress update (Pi's `AgentToolResult<T>`).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(
    rename_all = "camelCase",
    bound(
        serialize = "D: Serialize + 'static",
        deserialize = "D: Deserialize<'de>"
    )
)]
#[non_exhaustive]
pub struct AgentToolResult<D = Value> {
    /// What the model reads: text and image blocks.
    pub content: Vec<Content>,
    /// Structured data for hosts and UIs; never shown to the model.
    #[serde(skip_serializing_if = "details_absent")]
    pub details: D,
    /// Token usage of work done inside the tool (for example a sub-agent), passed through.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub usage: Option<Value>,
    /// `Some(true)` asks the loop to stop after this batch; it stops only when every
    /// result of the batch says so (Pi's batch rule).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub terminate: Option<bool>,
    /// Tools this call made active (Pi's deferred-tool load point). Copied onto the
    /// toolResult message only when non-empty.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub added_tool_names: Option<Vec<String>>,
}

/// A result at the JSON level, as [`AgentTool`](crate::AgentTool) returns it.
///
/// `details: None` means "no details key", `Some(JsonDetails::null())` means `details: null`.
pub type JsonToolResult = AgentToolResult<Option<JsonDetails>>;

fn details_absent<D: 'static>(details: &D) -> bool {
    (details as &dyn Any)
        .downcast_ref::<Option<JsonDetails>>()
        .is_some_and(Option::is_none)
}

impl<D> AgentToolResult<D> {
    /// A result with the given content and details.
    pub fn new(content: Vec<Content>, details: D) -> Self {
        AgentToolResult {
            content,
            details,
            usage: None,
            terminate: None,
            added_tool_names: None,
        }
    }

    /// A result with one text block and the given details.
    pub fn text(text: impl Into<String>, details: D) -> Self {
        Self::new(vec![Content::text(text)], details)
    }

    /// Marks the result as terminating (see [`terminate`](Self::terminate)).
    #[must_use]
    pub fn with_terminate(mut self, terminate: bool) -> Self {
        self.terminate = Some(terminate);
        self
    }

    /// Records tools this call made active.
    #[must_use]
    pub fn with_added_tool_names<I, S>(mut self, names: I) -> Self
    where
        I: IntoIterator<Item = S>,
        S: Into<String>,
    {
        self.added_tool_names = Some(names.into_iter().map(Into::into).collect());
        self
    }

    /// Attaches a usage object.
    #[must_use]
    pub fn with_usage(mut self, usage: Value) -> Self {
        self.usage = Some(usage);
        self
    }

    /// Appends a content block.
    #[must_use]
    pub fn with_content(mut self, content: impl Into<Content>) -> Self {
        self.content.push(content.into());
        self
    }

    /// Replaces the details, keeping everything else.
    pub fn map_details<E>(self, f: impl FnOnce(D) -> E) -> AgentToolResult<E> {
        AgentToolResult {
            content: self.content,
            details: f(self.details),
            usage: self.usage,
            terminate: self.terminate,
            added_tool_names: self.added_tool_names,
        }
    }

    /// The text of all text blocks, joined by newlines.
    pub fn text_content(&self) -> String {
        let mut out = String::new();
        for text in self.content.iter().filter_map(Content::as_text) {
            if !out.is_empty() {
                out.push('\n');
            }
            out.push_str(text);
        }
        out
    }
}

impl<D: Serialize> AgentToolResult<D> {
    /// Serialises `details` (to JSON text, once) and returns the JSON-level result.
    pub fn into_json(self) -> Result<JsonToolResult, ToolError> {
        self.into_json_with(|details| JsonDetails::from_typed(details))
    }
}

impl<D> AgentToolResult<D> {
    /// [`into_json`](Self::into_json) with the details' serialisation given: a typed
    /// tool's details are a `bounds::ToolDetails`, which reaches serde through its own
    /// method.
    pub(crate) fn into_json_with(
        self,
        to_json: impl FnOnce(&D) -> Result<JsonDetails, serde_json::Error>,
    ) -> Result<JsonToolResult, ToolError> {
        let details = to_json(&self.details).map_err(|error| {
            ToolError::new(format!("Tool details could not be serialised: {error}"))
        })?;
        Ok(self.map_details(|_| Some(details)))
    }
}

impl JsonToolResult {
    /// The error result the loop builds from a message (Pi's `createErrorToolResult`):
    /// one text block and `details: {}`.
    pub fn error(message: impl Into<String>) -> Self {
        AgentToolResult::text(message, Some(JsonDetails::empty_object()))
    }

    /// Reads a result from its JSON object, keeping `details` absent and `details: null`
    /// apart (serde's `Option` would merge them).
    pub fn from_json(value: Value) -> Result<Self, serde_json::Error> {
        let details = value.as_object().and_then(|o| o.get("details")).cloned();
        let mut result: JsonToolResult = serde_json::from_value(value)?;
        result.details = details.map(JsonDetails::from);
        Ok(result)
    }

    /// The result as a JSON value (Pi's object shape).
    pub fn to_json(&self) -> Value {
        // Serialising plain data into a Value cannot fail.
        serde_json::to_value(self).unwrap_or(Value::Null)
    }
}

/// Details for tools that have none: serialises as `{}` (Pi's error results use `{}` too)
/// and accepts any JSON when read back.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct NoDetails;

impl Serialize for NoDetails {
    fn serialize<S: serde::Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        use serde::ser::SerializeMap;
        serializer.serialize_map(Some(0))?.end()
    }
}

impl<'de> Deserialize<'de> for NoDetails {
    fn deserialize<De: serde::Deserializer<'de>>(deserializer: De) -> Result<Self, De::Error> {
        serde::de::IgnoredAny::deserialize(deserializer).map(|_| NoDetails)
    }
}

/// What a tool function may return on success: a full [`AgentToolResult`] or plain text.
///
/// Plain text becomes one text block with [`NoDetails`].
///
/// `Details` is not required to be `Serialize` here: [`Tool::Details`](crate::Tool)
/// requires it, and checking it in one place gives one compile error for one mistake.
pub trait IntoToolResult {
    /// The details type of the result.
    type Details: Send + 'static;
    /// Converts into a result.
    fn into_tool_result(self) -> AgentToolResult<Self::Details>;
}

impl<D: Send + 'static> IntoToolResult for AgentToolResult<D> {
    type Details = D;
    fn into_tool_result(self) -> AgentToolResult<D> {
        self
    }
}

impl IntoToolResult for String {
    type Details = NoDetails;
    fn into_tool_result(self) -> AgentToolResult<NoDetails> {
        AgentToolResult::text(self, NoDetails)
    }
}

impl IntoToolResult for &'static str {
    type Details = NoDetails;
    fn into_tool_result(self) -> AgentToolResult<NoDetails> {
        AgentToolResult::text(self, NoDetails)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn typed_result_serialises_like_pi() {
        let r = AgentToolResult::text("Tokyo: 24 degrees celsius", json!({"temperature": 24}))
            .with_added_tool_names(["x"])
            .with_terminate(true);
        assert_eq!(
            serde_json::to_value(&r).unwrap(),
            json!({"content": [{"type": "text", "text": "Tokyo: 24 degrees celsius"}],
                   "details": {"temperature": 24}, "terminate": true, "addedToolNames": ["x"]})
        );
    }

    #[test]
    fn json_result_keeps_absent_and_null_details_apart() {
        let absent = JsonToolResult::from_json(json!({"content": []})).unwrap();
        assert_eq!(absent.details, None);
        assert_eq!(absent.to_json(), json!({"content": []}));
        let null = JsonToolResult::from_json(json!({"content": [], "details": null})).unwrap();
        assert_eq!(null.details, Some(JsonDetails::null()));
        assert_eq!(null.to_json(), json!({"content": [], "details": null}));
    }

    #[test]
    fn error_result_has_empty_object_details() {
        assert_eq!(
            JsonToolResult::error("boom").to_json(),
            json!({"content": [{"type": "text", "text": "boom"}], "details": {}})
        );
    }

    #[test]
    fn plain_text_has_no_details() {
        let r = "hi".into_tool_result().into_json().unwrap();
        assert_eq!(
            r.to_json(),
            json!({"content": [{"type": "text", "text": "hi"}], "details": {}})
        );
    }
}
