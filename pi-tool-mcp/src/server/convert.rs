//! Between pi-tool's shapes and MCP's: tool specs to `Tool`, results to
//! `CallToolResult`, progress updates to `notifications/progress` parameters.
//!
//! MCP has slots for what the model reads (content, `isError`) and for a human title;
//! Pi's host-only fields (details, prompt snippet, guidelines, execution mode) go into
//! `_meta` under keys that start with [`TOOL_META_PREFIX`](crate::TOOL_META_PREFIX), which MCP reserves for exactly
//! this kind of implementation-specific data. Clients that do not know them ignore them;
//! the Pi bridge reads them back.
//!
//! Declared effects ([`pi_tool_core::ToolAnnotations`]) become MCP's `annotations`, hint for
//! hint; a hint the tool did not declare is left out, so the client applies MCP's
//! defaults. A tool that declares nothing has no `annotations` at all.
//!
//! A structured tool (one returning `Json<T>`) lists its [`OutputSchema`] as
//! `outputSchema` (always an object root, MCP's rule) and answers with
//! `structuredContent`: its details, wrapped as `{"result": value}` when `T`'s own root is
//! not an object. The text block stays the bare value's JSON, for clients that read only
//! text (MCP asks a server to send both). The value travels those two times only: a
//! structured result's details are *not* repeated in `_meta` (other tools' details are).
//! When the value is wrapped, `_meta[`[`WRAPPED_RESULT_META_KEY`](crate::WRAPPED_RESULT_META_KEY)`]` is `true`, so a
//! reader (the Pi bridge, this crate's client) takes the bare value back out of
//! `structuredContent.result` as the details.

use std::sync::Arc;

use pi_tool_core::schema::OutputSchema;
use pi_tool_core::{Content, JsonToolResult, ToolError, ToolSpec, Value};
use rmcp::model::{
    CallToolResult, ContentBlock, JsonObject, MetaObject, NotificationMetaObject,
    ProgressNotificationParam, ProgressToken, Tool, ToolAnnotations,
};

use super::schema::mcp_input_schema;
use crate::meta::{
    CONCURRENCY_META_KEY, DETAILS_META_KEY, PARTIAL_RESULT_META_KEY, REACHES_META_KEY,
    TOOL_META_PREFIX, WRAPPED_RESULT_META_KEY,
};

/// The MCP listing of one tool, and the schema profile's report on it; `declared` lists
/// the parameter schema as declared (see [`mcp_input_schema`]).
pub(crate) fn mcp_tool(spec: &ToolSpec, declared: bool) -> (Tool, Vec<String>) {
    let mut meta = JsonObject::new();
    if let Some(snippet) = &spec.prompt_snippet {
        meta.insert(
            format!("{TOOL_META_PREFIX}promptSnippet"),
            Value::String(snippet.clone()),
        );
    }
    if !spec.prompt_guidelines.is_empty() {
        meta.insert(
            format!("{TOOL_META_PREFIX}promptGuidelines"),
            Value::from(spec.prompt_guidelines.clone()),
        );
    }
    if let Some(mode) = spec.execution_mode {
        meta.insert(
            format!("{TOOL_META_PREFIX}executionMode"),
            Value::String(mode.as_str().to_owned()),
        );
    }
    // What the tool may call, so that a client can show it before approving the tool.
    if !spec.reaches.is_empty() {
        meta.insert(
            REACHES_META_KEY.to_owned(),
            Value::from(spec.reaches.clone()),
        );
    }
    if let Some(class) = &spec.concurrency {
        meta.insert(
            CONCURRENCY_META_KEY.to_owned(),
            serde_json::json!({"class": class.name(), "weight": class.weight()}),
        );
    }
    let (schema, report) = mcp_input_schema(spec, declared);
    let mut tool = Tool::new(spec.name.clone(), spec.description.clone(), schema)
        .with_title(spec.label.clone());
    if let Some(annotations) = mcp_annotations(&spec.annotations) {
        tool = tool.with_annotations(annotations);
    }
    if let Some(Value::Object(schema)) = spec.output_schema.as_ref().map(|o| o.json()) {
        tool = tool.with_raw_output_schema(Arc::new(schema.clone()));
    }
    if meta.is_empty() {
        (tool, report)
    } else {
        (tool.with_meta(MetaObject(meta)), report)
    }
}

/// MCP's `annotations` of declared effects; `None` when nothing is declared.
fn mcp_annotations(effects: &pi_tool_core::ToolAnnotations) -> Option<ToolAnnotations> {
    if effects.is_empty() {
        return None;
    }
    Some(ToolAnnotations::from_raw(
        effects.title.as_ref().map(|t| t.to_string()),
        effects.read_only,
        effects.destructive,
        effects.idempotent,
        effects.open_world,
    ))
}

fn content_block(content: Content) -> ContentBlock {
    match content {
        Content::Text { text } => ContentBlock::text(text),
        Content::Image { data, mime_type } => ContentBlock::image(data, mime_type),
        // Audio, resource links and embedded resources are MCP's own kinds, in MCP's
        // JSON shape already; a kind rmcp could not read is sent as a model reads it.
        other => serde_json::to_value(&other)
            .and_then(serde_json::from_value::<ContentBlock>)
            .unwrap_or_else(|_| match other.for_model() {
                Content::Image { data, mime_type } => ContentBlock::image(data, mime_type),
                text => ContentBlock::text(text.as_text().unwrap_or_default()),
            }),
    }
}

/// The `tools/call` result of a call: content and details on success; on failure one
/// text block with the error's message and `isError: true` (what Pi's agent makes of a
/// thrown error). `output` is the tool's output schema: a success then carries its
/// details as `structuredContent` instead of in `_meta` (marked with
/// [`WRAPPED_RESULT_META_KEY`] when wrapped).
pub(crate) fn call_tool_result(
    result: Result<JsonToolResult, ToolError>,
    output: Option<&OutputSchema>,
) -> CallToolResult {
    match result {
        Ok(result) => {
            let mut meta = JsonObject::new();
            let mut structured = None;
            if let Some(details) = result.details {
                let details = details.into_value();
                match output {
                    Some(output) => {
                        if output.is_wrapped() {
                            meta.insert(WRAPPED_RESULT_META_KEY.to_owned(), Value::Bool(true));
                        }
                        structured = Some(output.structured(details));
                    }
                    None => {
                        meta.insert(DETAILS_META_KEY.to_owned(), details);
                    }
                }
            }
            if let Some(terminate) = result.terminate {
                meta.insert(
                    format!("{TOOL_META_PREFIX}terminate"),
                    Value::Bool(terminate),
                );
            }
            let mut out =
                CallToolResult::success(result.content.into_iter().map(content_block).collect());
            out.structured_content = structured;
            if !meta.is_empty() {
                out.meta = Some(MetaObject(meta));
            }
            out
        }
        Err(error) => CallToolResult::error(vec![ContentBlock::text(error.message())]),
    }
}

/// The `notifications/progress` parameters of the `count`-th update (1-based: MCP wants
/// progress to grow with every notification).
pub(crate) fn progress_param(
    token: ProgressToken,
    count: u64,
    update: &JsonToolResult,
) -> ProgressNotificationParam {
    let mut param = ProgressNotificationParam::new(token, count as f64);
    let text = update.text_content();
    if !text.is_empty() {
        param = param.with_message(text);
    }
    if let Ok(partial) = serde_json::to_value(update) {
        let mut meta = JsonObject::new();
        meta.insert(PARTIAL_RESULT_META_KEY.to_owned(), partial);
        param.meta = Some(NotificationMetaObject(MetaObject(meta)));
    }
    param
}

#[cfg(test)]
mod tests {
    use super::*;
    use pi_tool_core::schema::ToolSchema;
    use pi_tool_core::{ToolExecutionMode, json};
    use std::sync::Arc;

    #[test]
    fn a_listing_carries_label_and_pi_fields() {
        let schema = ToolSchema::from_json(json!({"type": "object", "properties": {}}));
        let mut spec = ToolSpec::new("get_weather", "Weather.", Arc::new(schema));
        spec.label = "Get weather".to_owned();
        spec.prompt_snippet = Some("Look up weather".to_owned());
        spec.execution_mode = Some(ToolExecutionMode::Parallel);
        let (tool, report) = mcp_tool(&spec, false);
        assert!(report.is_empty(), "{report:?}");
        let listed = serde_json::to_value(tool).unwrap();
        assert_eq!(
            listed,
            json!({
                "name": "get_weather",
                "title": "Get weather",
                "description": "Weather.",
                // The `mcp` profile's form of a tool without parameters.
                "inputSchema": {"type": "object", "additionalProperties": false},
                "_meta": {
                    "pi-tool/promptSnippet": "Look up weather",
                    "pi-tool/executionMode": "parallel"
                }
            })
        );
    }

    #[test]
    fn declared_effects_become_mcp_annotations_and_undeclared_hints_stay_absent() {
        let schema = Arc::new(ToolSchema::from_json(
            json!({"type": "object", "properties": {}}),
        ));
        let plain = ToolSpec::new("a", "A.", schema.clone());
        let listed = serde_json::to_value(mcp_tool(&plain, false).0).unwrap();
        assert!(listed.get("annotations").is_none(), "{listed}");

        let declared = ToolSpec::new("b", "B.", schema).annotations(
            pi_tool_core::ToolAnnotations::new()
                .read_only(true)
                .open_world(false)
                .title("Bee"),
        );
        let listed = serde_json::to_value(mcp_tool(&declared, false).0).unwrap();
        assert_eq!(
            listed["annotations"],
            json!({"title": "Bee", "readOnlyHint": true, "openWorldHint": false})
        );
    }

    fn call_tool_result_plain(result: Result<JsonToolResult, ToolError>) -> CallToolResult {
        call_tool_result(result, None)
    }

    #[test]
    fn an_error_is_a_readable_error_result() {
        let value = serde_json::to_value(call_tool_result_plain(Err(ToolError::new(
            "Unsupported city: Oslo",
        ))))
        .unwrap();
        assert_eq!(value["isError"], json!(true));
        assert_eq!(
            value["content"],
            json!([{"type": "text", "text": "Unsupported city: Oslo"}])
        );
    }

    #[test]
    fn details_travel_in_meta_not_in_content() {
        let result =
            JsonToolResult::text("Tokyo: 24 degrees celsius", Some(json!({"t": 24}).into()));
        let value = serde_json::to_value(call_tool_result_plain(Ok(result))).unwrap();
        assert_eq!(value["isError"], json!(false));
        assert_eq!(value["_meta"][DETAILS_META_KEY], json!({"t": 24}));
        assert_eq!(
            value["content"],
            json!([{"type": "text", "text": "Tokyo: 24 degrees celsius"}])
        );
    }

    #[test]
    fn a_structured_result_is_sent_as_structured_content_and_text_only() {
        let object = OutputSchema::from_json(json!({
            "type": "object",
            "properties": {"t": {"type": "integer"}}
        }));
        assert!(!object.is_wrapped());
        let result = JsonToolResult::text(r#"{"t":24}"#, Some(json!({"t": 24}).into()));
        let value = serde_json::to_value(call_tool_result(Ok(result), Some(&object))).unwrap();
        assert_eq!(value["structuredContent"], json!({"t": 24}));
        assert_eq!(
            value["content"],
            json!([{"type": "text", "text": r#"{"t":24}"#}])
        );
        // Not a third time as details, and nothing to unwrap.
        assert!(value.get("_meta").is_none(), "{value}");

        let array = OutputSchema::from_json(json!({"type": "array", "items": {"type": "integer"}}));
        assert!(array.is_wrapped());
        let result = JsonToolResult::text("[1,2]", Some(json!([1, 2]).into()));
        let value = serde_json::to_value(call_tool_result(Ok(result), Some(&array))).unwrap();
        assert_eq!(value["structuredContent"], json!({"result": [1, 2]}));
        assert_eq!(
            value["_meta"],
            json!({WRAPPED_RESULT_META_KEY: true}),
            "the wrap is marked and the details are not repeated"
        );
    }

    #[test]
    fn progress_counts_up_and_carries_the_text() {
        let update =
            JsonToolResult::text("Checking Tokyo...", Some(json!({"phase": "lookup"}).into()));
        let value = serde_json::to_value(progress_param(
            ProgressToken(rmcp::model::NumberOrString::Number(7)),
            2,
            &update,
        ))
        .unwrap();
        assert_eq!(value["progressToken"], json!(7));
        assert_eq!(value["progress"], json!(2.0));
        assert_eq!(value["message"], json!("Checking Tokyo..."));
        assert_eq!(
            value["_meta"][PARTIAL_RESULT_META_KEY]["details"],
            json!({"phase": "lookup"})
        );
    }
}
