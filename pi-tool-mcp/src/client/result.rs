//! An MCP `CallToolResult` as a pi-tool result.
//!
//! - `content` becomes our [`Content`], block for block: text, images, audio, resource
//!   links and embedded resources have the same JSON shape on both sides. A block of a
//!   kind we do not know becomes a text block that says so, rather than being dropped.
//! - `isError: true` becomes a [`ToolError`] with the server's text, so the model reads it
//!   as an error result, as it would an error of one of our own tools.
//! - `structuredContent` becomes the details (for hosts and UIs; the model reads the
//!   content). When the tool declared an `outputSchema`, the structured content must be
//!   there and match it (MCP: clients SHOULD validate it); otherwise the call is an error
//!   result that says why. A result with structured content and no content shows the
//!   model the structured content as JSON text (MCP asks servers to send both; not all do).
//! - Progress notifications become progress updates: the message (or "progress/total")
//!   as text, the numbers in the details.

use pi_tool_core::JsonDetails;
use pi_tool_core::schema::ToolSchema;
use pi_tool_core::{Content, JsonToolResult, ToolError, Value};
use rmcp::model::{CallToolResult, ProgressNotificationParam};
use serde_json::json;

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
    let details = match result.structured_content {
        Some(structured) => {
            if content.is_empty() {
                content.push(Content::text(structured.to_string()));
            }
            Some(JsonDetails::from(structured))
        }
        None => None,
    };
    Ok(JsonToolResult::new(content, details))
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
