//! An MCP `CallToolResult` as a pi-tool result.
//!
//! - `content` becomes our [`Content`], block for block: text, images, audio, resource
//!   links and embedded resources have the same JSON shape on both sides. A block of a
//!   kind we do not know becomes a text block that says so, rather than being dropped.
//! - `isError: true` becomes a [`ToolError`] with the server's text, so the model reads it
//!   as an error result, as it would an error of one of our own tools.
//! - `structuredContent` becomes the details (for hosts and UIs; the model reads the
//!   content); a pi-tool server's wrapped value (`_meta["pi-tool/wrappedResult"]: true`,
//!   `structuredContent: {"result": value}`) becomes the bare value, as the tool returned it. When the tool declared an `outputSchema`, the structured content must be
//!   there and match it (MCP: clients SHOULD validate it); otherwise the call is an error
//!   result that says why. A result with structured content and no content shows the
//!   model the structured content as JSON text (MCP asks servers to send both; not all do).
//! - Progress notifications become progress updates: the message (or "progress/total")
//!   as text, the numbers in the details.

use pi_tool_core::JsonDetails;
use pi_tool_core::schema::{ToolSchema, WRAPPED_RESULT_KEY};
use pi_tool_core::{Content, JsonToolResult, ToolError, Value};
use rmcp::model::{CallToolResult, ProgressNotificationParam};
use serde_json::json;

use crate::meta::WRAPPED_RESULT_META_KEY;

/// The result of a call of `tool` (our name) on `server`.
pub(crate) fn tool_result(
    server: &str,
    tool: &str,
    output_schema: Option<&ToolSchema>,
    result: CallToolResult,
) -> Result<JsonToolResult, ToolError> {
    let mut content: Vec<Content> = result.content.iter().map(content_block).collect();
    if result.is_error == Some(true) {
        let text = content
            .iter()
            .filter_map(Content::as_text)
            .collect::<Vec<_>>()
            .join("\n");
        return Err(ToolError::new(if text.is_empty() {
            format!("MCP server `{server}`: tool {tool} failed without a message")
        } else {
            text
        }));
    }
    if let Some(schema) = output_schema {
        let Some(structured) = &result.structured_content else {
            return Err(ToolError::new(format!(
                "MCP server `{server}`: tool {tool} declares an output schema but its result \
                 has no structuredContent"
            )));
        };
        if let Err(error) = schema.validate(tool, structured) {
            return Err(ToolError::new(format!(
                "MCP server `{server}`: the structuredContent of tool {tool} does not match \
                 its output schema: {}",
                error.message()
            )));
        }
    }
    let wrapped = result
        .meta
        .as_ref()
        .and_then(|meta| meta.0.get(WRAPPED_RESULT_META_KEY))
        == Some(&Value::Bool(true));
    let details = match result.structured_content {
        Some(structured) => {
            if content.is_empty() {
                content.push(Content::text(structured.to_string()));
            }
            Some(JsonDetails::from(if wrapped {
                unwrap_result(structured)
            } else {
                structured
            }))
        }
        None => None,
    };
    Ok(JsonToolResult::new(content, details))
}

/// The bare value of a wrapped `{"result": value}`; anything else as it is.
fn unwrap_result(structured: Value) -> Value {
    match structured {
        Value::Object(mut object) if object.len() == 1 => match object.remove(WRAPPED_RESULT_KEY) {
            Some(value) => value,
            None => Value::Object(object),
        },
        other => other,
    }
}

/// One MCP content block as ours.
fn content_block(block: &rmcp::model::ContentBlock) -> Content {
    let json = match serde_json::to_value(block) {
        Ok(json) => json,
        Err(error) => return Content::text(format!("[MCP content that cannot be read: {error}]")),
    };
    match serde_json::from_value::<Content>(json.clone()) {
        Ok(content) => content,
        Err(_) => {
            let kind = json
                .get("type")
                .and_then(Value::as_str)
                .unwrap_or("unknown");
            Content::text(format!(
                "[MCP content of type {kind:?}, which pi-tool cannot show]"
            ))
        }
    }
}

/// A progress notification as a progress update.
pub(crate) fn progress_update(progress: &ProgressNotificationParam) -> JsonToolResult {
    let text = match (&progress.message, progress.total) {
        (Some(message), _) => message.clone(),
        (None, Some(total)) => format!("progress {}/{}", progress.progress, total),
        (None, None) => format!("progress {}", progress.progress),
    };
    let mut details = json!({"progress": progress.progress});
    if let Some(total) = progress.total {
        details["total"] = json!(total);
    }
    if let Some(message) = &progress.message {
        details["message"] = json!(message);
    }
    JsonToolResult::new(vec![Content::text(text)], Some(JsonDetails::from(details)))
}

#[cfg(test)]
mod tests {
    use super::*;
    use rmcp::model::{ContentBlock, MetaObject};

    fn structured(value: Value, wrapped: bool) -> CallToolResult {
        let mut result = CallToolResult::success(vec![ContentBlock::text("text")]);
        result.structured_content = Some(value);
        if wrapped {
            let mut meta = serde_json::Map::new();
            meta.insert(WRAPPED_RESULT_META_KEY.to_owned(), Value::Bool(true));
            result.meta = Some(MetaObject(meta));
        }
        result
    }

    fn details(result: CallToolResult) -> Value {
        tool_result("s", "t", None, result)
            .unwrap()
            .details
            .unwrap()
            .into_value()
    }

    #[test]
    fn a_wrapped_value_is_unwrapped_only_when_marked() {
        assert_eq!(
            details(structured(json!({"result": [1, 2]}), true)),
            json!([1, 2])
        );
        assert_eq!(
            details(structured(json!({"result": null}), true)),
            Value::Null
        );
        // Another server's object that happens to have one `result` key stays as sent.
        assert_eq!(
            details(structured(json!({"result": [1, 2]}), false)),
            json!({"result": [1, 2]})
        );
        assert_eq!(details(structured(json!({"t": 1}), false)), json!({"t": 1}));
    }
}
