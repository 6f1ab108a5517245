//! pi-ai's `convertResponsesMessages` and `convertResponsesTools`
//! (`api/openai-responses-shared.js`): the transcript and the tools as Responses `input`
//! items and `tools` entries.
//!
//! Replay is stateless (`store: false`), so an assistant turn goes back as the items the
//! API streamed: a reasoning item is the JSON kept in `thinkingSignature`, a text block is
//! a `message` item with the id from its `textSignature`, and a tool call is a
//! `function_call` whose id pair `call_id|item_id` was joined by the stream processor.

use std::collections::{HashMap, HashSet};

use serde_json::{Map, Value, json};

use crate::js;
use crate::js::utf16_len;
use crate::model::{AssistantContent, AssistantMessage, Message, Model};
use crate::providers::hash::short_hash;
use crate::providers::partial_json::json_parse;
use crate::providers::transform::transform_messages;
use pi_tool_core::Content;

/// A tool as the request shows it: pi-ai's `Tool` (`{name, description, parameters}`).
#[derive(Debug, Clone, Copy)]
pub(super) struct WireTool<'a> {
    pub(super) name: &'a str,
    pub(super) description: &'a str,
    pub(super) parameters: &'a Value,
}

/// Options of `convertResponsesTools`.
#[derive(Debug, Clone, Copy, Default)]
pub(super) struct ToolOptions {
    /// Write `strict` on function tools.
    pub(super) supports_strict_mode: bool,
    /// Mark the tools `defer_loading` (tool-search replay).
    pub(super) defer_loading: bool,
}

/// How tools that a tool result activated are announced (pi-ai's `deferredToolsMode`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum DeferredToolsMode {
    /// An `additional_tools` developer item after the result.
    AdditionalTools,
    /// A client-executed `tool_search_call` / `tool_search_output` pair.
    ToolSearch,
}

/// `convertResponsesTools(tools, options)`.
///
/// pi-tool's tools carry no constrained-sampling configuration, so no tool becomes a
/// grammar (`custom`) tool and `strict` is always `false` where it is written: what pi-ai
/// does for tools without `constrainedSampling`.
pub(super) fn convert_tools(tools: &[WireTool<'_>], options: ToolOptions) -> Vec<Value> {
    tools
        .iter()
        .map(|tool| {
            let mut item = Map::new();
            item.insert("type".into(), json!("function"));
            item.insert("name".into(), json!(tool.name));
            item.insert("description".into(), json!(tool.description));
            item.insert("parameters".into(), tool.parameters.clone());
            if options.defer_loading {
                item.insert("defer_loading".into(), Value::Bool(true));
            }
            if options.supports_strict_mode {
                item.insert("strict".into(), Value::Bool(false));
            }
            Value::Object(item)
        })
        .collect()
}

/// The tools of a request split as pi-ai's `splitDeferredTools` splits them: `immediate`
/// go in `tools`; `deferred` (activated by a tool result and not called before it) are
/// announced after the result that activated them.
pub(super) struct ToolPlacement<'a> {
    pub(super) immediate: Vec<WireTool<'a>>,
    pub(super) deferred: HashMap<&'a str, WireTool<'a>>,
}

/// `splitDeferredTools(context, enabled)`: tools deduplicated by name (a later definition
/// replaces an earlier one in the earlier one's place, as a `Map` does).
pub(super) fn split_deferred_tools<'a>(
    tools: &[WireTool<'a>],
    messages: &[Message],
    enabled: bool,
) -> ToolPlacement<'a> {
    let mut unique: Vec<WireTool<'a>> = Vec::with_capacity(tools.len());
    for tool in tools {
        match unique.iter_mut().find(|t| t.name == tool.name) {
            Some(slot) => *slot = *tool,
            None => unique.push(*tool),
        }
    }
    if !enabled {
        return ToolPlacement {
            immediate: unique,
            deferred: HashMap::new(),
        };
    }
    let mut deferred_names: HashSet<&str> = HashSet::new();
    let mut used: HashSet<&str> = HashSet::new();
    for message in messages {
        match message {
            Message::Assistant(assistant) => {
                for call in assistant.tool_calls() {
                    used.insert(&call.name);
                }
            }
            Message::ToolResult(result) => {
                for name in result.added_tool_names.iter().flatten() {
                    if !used.contains(name.as_str()) {
                        deferred_names.insert(name);
                    }
                }
            }
            Message::User(_) => {}
        }
    }
    let mut placement = ToolPlacement {
        immediate: Vec::new(),
        deferred: HashMap::new(),
    };
    for tool in unique {
        if deferred_names.contains(tool.name) {
            placement.deferred.insert(tool.name, tool);
        } else {
            placement.immediate.push(tool);
        }
    }
    placement
}

/// What `convertResponsesMessages` needs besides the model and the transcript.
pub(super) struct ConvertOptions<'a, 'b> {
    pub(super) system_prompt: &'b str,
    pub(super) deferred_tools: &'b HashMap<&'a str, WireTool<'a>>,
    pub(super) deferred_tools_mode: Option<DeferredToolsMode>,
    pub(super) tool_options: ToolOptions,
}

/// Providers whose tool-call ids are `call_id|item_id` pairs worth keeping across models
/// (`OPENAI_TOOL_CALL_PROVIDERS`).
const TOOL_CALL_PROVIDERS: [&str; 3] = ["openai", "openai-codex", "opencode"];

/// `convertResponsesMessages(model, context, OPENAI_TOOL_CALL_PROVIDERS, options)`.
///
/// Err is the text of what pi-ai throws while converting: `JSON.parse`'s message for a
/// thinking signature that is not JSON.
pub(super) fn convert_messages(
    model: &Model,
    messages: &[Message],
    options: &ConvertOptions<'_, '_>,
) -> Result<Vec<Value>, String> {
    let normalize = |id: &str, target: &Model, source: &AssistantMessage| {
        normalize_tool_call_id(id, target, source)
    };
    let transformed = transform_messages(messages, model, Some(&normalize));
    let mut items: Vec<Value> = Vec::new();
    let mut loaded_tools: HashSet<&str> = HashSet::new();

    if !options.system_prompt.is_empty() {
        let developer = model.reasoning
            && model
                .compat
                .as_ref()
                .and_then(|c| c.get("supportsDeveloperRole"))
                != Some(&Value::Bool(false));
        items.push(json!({
            "role": if developer { "developer" } else { "system" },
            "content": options.system_prompt,
        }));
    }

    let mut msg_index = 0usize;
    for message in &transformed {
        match message {
            Message::User(user) => {
                if user.content.is_empty() {
                    continue;
                }
                let content: Vec<Value> = user.content.iter().map(user_part).collect();
                items.push(json!({"role": "user", "content": content}));
            }
            Message::Assistant(assistant) => {
                let output = assistant_items(model, assistant, msg_index, options)?;
                if output.is_empty() {
                    continue;
                }
                items.extend(output);
            }
            Message::ToolResult(result) => {
                let call_id = result.tool_call_id.split('|').next().unwrap_or_default();
                items.push(json!({
                    "type": "function_call_output",
                    "call_id": call_id,
                    "output": tool_result_output(model, &result.content),
                }));
                let mut activated: Vec<WireTool<'_>> = Vec::new();
                for name in result.added_tool_names.iter().flatten() {
                    let Some((key, tool)) = options.deferred_tools.get_key_value(name.as_str())
                    else {
                        continue;
                    };
                    if loaded_tools.insert(key) {
                        activated.push(*tool);
                    }
                }
                if !activated.is_empty() {
                    push_activated_tools(&mut items, &result.tool_call_id, &activated, options);
                }
            }
        }
        msg_index += 1;
    }
    Ok(items)
}

/// The items announcing tools a tool result activated.
fn push_activated_tools(
    items: &mut Vec<Value>,
    tool_call_id: &str,
    tools: &[WireTool<'_>],
    options: &ConvertOptions<'_, '_>,
) {
    match options.deferred_tools_mode {
        Some(DeferredToolsMode::AdditionalTools) => items.push(json!({
            "type": "additional_tools",
            "role": "developer",
            "tools": convert_tools(tools, options.tool_options),
        })),
        Some(DeferredToolsMode::ToolSearch) => {
            let names: Vec<&str> = tools.iter().map(|t| t.name).collect();
            let call_id = format!(
                "pi_tool_load_{}",
                short_hash(&format!("{tool_call_id}:{}", names.join(",")))
            );
            items.push(json!({
                "type": "tool_search_call",
                "call_id": call_id,
                "execution": "client",
                "status": "completed",
                "arguments": {"query": names.join(" "), "limit": names.len()},
            }));
            items.push(json!({
                "type": "tool_search_output",
                "call_id": call_id,
                "execution": "client",
                "status": "completed",
                "tools": convert_tools(tools, ToolOptions {
                    defer_loading: true,
                    ..options.tool_options
                }),
            }));
        }
        None => {}
    }
}

fn user_part(part: &Content) -> Value {
    match part {
        Content::Text { text } => json!({"type": "input_text", "text": text}),
        Content::Image { data, mime_type } => json!({
            "type": "input_image",
            "detail": "auto",
            "image_url": format!("data:{mime_type};base64,{data}"),
        }),
        // Text or an image (`Content::for_model`).
        other => user_part(&other.for_model()),
    }
}

/// One assistant message as input items.
fn assistant_items(
    model: &Model,
    message: &AssistantMessage,
    msg_index: usize,
    options: &ConvertOptions<'_, '_>,
) -> Result<Vec<Value>, String> {
    let same_provider_and_api = message.provider == model.provider && message.api == model.api;
    let same_model = same_provider_and_api && message.model == model.id;
    let different_model = same_provider_and_api && message.model != model.id;
    let mut output = Vec::new();
    let mut text_index = 0usize;
    for block in &message.content {
        match block {
            AssistantContent::Thinking {
                thinking_signature, ..
            } => {
                if let Some(signature) = thinking_signature.as_deref().filter(|s| !s.is_empty()) {
                    output.push(json_parse(signature)?);
                }
            }
            AssistantContent::Text {
                text,
                text_signature,
            } => {
                let parsed = parse_text_signature(text_signature.as_deref());
                let fallback = if text_index == 0 {
                    format!("msg_pi_{msg_index}")
                } else {
                    format!("msg_pi_{msg_index}_{text_index}")
                };
                text_index += 1;
                let id = match parsed.as_ref().map(|p| p.id.as_str()) {
                    None | Some("") => fallback,
                    // OpenAI caps item ids at 64 characters.
                    Some(id) if utf16_len(id) > 64 => format!("msg_{}", short_hash(id)),
                    Some(id) => id.to_owned(),
                };
                let mut item = Map::new();
                item.insert("type".into(), json!("message"));
                item.insert("role".into(), json!("assistant"));
                item.insert(
                    "content".into(),
                    json!([{"type": "output_text", "text": text, "annotations": []}]),
                );
                item.insert("status".into(), json!("completed"));
                item.insert("id".into(), json!(id));
                if let Some(phase) = parsed.and_then(|p| p.phase) {
                    item.insert("phase".into(), json!(phase));
                }
                output.push(Value::Object(item));
            }
            AssistantContent::ToolCall(call) => {
                let mut parts = call.id.split('|');
                let call_id = parts.next().unwrap_or_default();
                let item_id = parts.next();
                // A different model's fc_ ids were paired with its own reasoning items;
                // a function_call item id must be fc_*.
                let item_id = item_id.filter(|id| id.starts_with("fc_") && !different_model);
                let mut item = Map::new();
                item.insert("type".into(), json!("function_call"));
                if let Some(id) = item_id {
                    item.insert("id".into(), json!(id));
                }
                item.insert("call_id".into(), json!(call_id));
                item.insert("name".into(), json!(&*call.name));
                item.insert("arguments".into(), json!(js::stringify(&call.arguments)));
                let replay_namespace =
                    same_model || options.deferred_tools.contains_key(&*call.name);
                if let Some(namespace) = call.namespace.as_ref().filter(|_| replay_namespace) {
                    item.insert("namespace".into(), json!(namespace));
                }
                output.push(Value::Object(item));
            }
        }
    }
    Ok(output)
}

struct TextSignature {
    id: String,
    phase: Option<&'static str>,
}

/// `parseTextSignature`: the v1 JSON form `{"v":1,"id":...,"phase"?}`, else the legacy
/// plain id.
fn parse_text_signature(signature: Option<&str>) -> Option<TextSignature> {
    let signature = signature.filter(|s| !s.is_empty())?;
    if signature.starts_with('{')
        && let Ok(Value::Object(parsed)) = serde_json::from_str::<Value>(signature)
        && parsed.get("v").and_then(Value::as_f64) == Some(1.0)
        && let Some(Value::String(id)) = parsed.get("id")
    {
        let phase = match parsed.get("phase").and_then(Value::as_str) {
            Some("commentary") => Some("commentary"),
            Some("final_answer") => Some("final_answer"),
            _ => None,
        };
        return Some(TextSignature {
            id: id.clone(),
            phase,
        });
    }
    Some(TextSignature {
        id: signature.to_owned(),
        phase: None,
    })
}

/// `convertToolResultOutput`: text (or a placeholder) unless the result has images the
/// model can see, then `input_text` / `input_image` parts.
fn tool_result_output(model: &Model, content: &[Content]) -> Value {
    let text = content
        .iter()
        .filter_map(Content::as_text)
        .collect::<Vec<_>>()
        .join("\n");
    let images: Vec<(&str, &str)> = content
        .iter()
        .filter_map(|c| match c {
            Content::Image { data, mime_type } => Some((data.as_str(), mime_type.as_str())),
            _ => None,
        })
        .collect();
    if images.is_empty() || !model.input.iter().any(|i| i == "image") {
        return Value::String(if !text.is_empty() {
            text
        } else if !images.is_empty() {
            "(see attached image)".to_owned()
        } else {
            "(no tool output)".to_owned()
        });
    }
    let mut parts = Vec::with_capacity(images.len() + 1);
    if !text.is_empty() {
        parts.push(json!({"type": "input_text", "text": text}));
    }
    for (data, mime_type) in images {
        parts.push(json!({
            "type": "input_image",
            "detail": "auto",
            "image_url": format!("data:{mime_type};base64,{data}"),
        }));
    }
    Value::Array(parts)
}

/// `normalizeIdPart`: characters outside `[A-Za-z0-9_-]` become `_` (one per UTF-16 code
/// unit, as the regex sees them), at most 64, trailing `_` removed.
fn normalize_id_part(part: &str) -> String {
    let mut out = String::with_capacity(part.len());
    for c in part.chars() {
        if c.is_ascii_alphanumeric() || c == '_' || c == '-' {
            out.push(c);
        } else {
            for _ in 0..c.len_utf16() {
                out.push('_');
            }
        }
    }
    out.truncate(64);
    out.trim_end_matches('_').to_owned()
}

/// The `normalizeToolCallId` pi-ai's Responses provider gives `transformMessages` for
/// tool calls of other models.
fn normalize_tool_call_id(id: &str, model: &Model, source: &AssistantMessage) -> String {
    if !TOOL_CALL_PROVIDERS.contains(&model.provider.as_str()) || !id.contains('|') {
        return normalize_id_part(id);
    }
    let mut parts = id.split('|');
    let call_id = normalize_id_part(parts.next().unwrap_or_default());
    // `id.split("|")` with `[callId, itemId]`: a third part is ignored.
    let item_id = parts.next().unwrap_or_default();
    let foreign = source.provider != model.provider || source.api != model.api;
    let mut item_id = if foreign {
        let hashed = format!("fc_{}", short_hash(item_id));
        // Base-36 digits are ASCII, so 64 bytes are 64 code units.
        hashed.chars().take(64).collect()
    } else {
        normalize_id_part(item_id)
    };
    // OpenAI Responses requires function_call item ids to start with "fc".
    if !item_id.starts_with("fc_") {
        item_id = normalize_id_part(&format!("fc_{item_id}"));
    }
    format!("{call_id}|{item_id}")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn id_parts_are_sanitised_like_the_regex() {
        assert_eq!(normalize_id_part("call.1:x"), "call_1_x");
        assert_eq!(normalize_id_part("a😀b"), "a__b");
        assert_eq!(normalize_id_part("abc__"), "abc");
        assert_eq!(normalize_id_part(&"x".repeat(70)).len(), 64);
    }

    #[test]
    fn foreign_pairs_get_a_hashed_fc_item_id() {
        let model = Model::new("gpt-5-mini", "openai-responses", "openai");
        let source = AssistantMessage::empty(
            &Model::new("claude", "anthropic-messages", "anthropic"),
            crate::model::StopReason::ToolUse,
        );
        let id = normalize_tool_call_id("call_1|rs_weird/id", &model, &source);
        assert_eq!(id, format!("call_1|fc_{}", short_hash("rs_weird/id")));
        let same_api = AssistantMessage::empty(
            &Model::new("gpt-4o", "openai-responses", "openai"),
            crate::model::StopReason::ToolUse,
        );
        assert_eq!(
            normalize_tool_call_id("call_1|item.2", &model, &same_api),
            "call_1|fc_item_2"
        );
        let other = Model::new("x", "openai-responses", "llama-cpp");
        assert_eq!(normalize_tool_call_id("a|b", &other, &source), "a_b");
    }

    #[test]
    fn text_signatures_read_both_forms() {
        let v1 =
            parse_text_signature(Some(r#"{"v":1,"id":"msg_1","phase":"final_answer"}"#)).unwrap();
        assert_eq!((v1.id.as_str(), v1.phase), ("msg_1", Some("final_answer")));
        let legacy = parse_text_signature(Some("msg_legacy")).unwrap();
        assert_eq!((legacy.id.as_str(), legacy.phase), ("msg_legacy", None));
        let bad = parse_text_signature(Some("{not json")).unwrap();
        assert_eq!(bad.id, "{not json");
        assert!(parse_text_signature(Some("")).is_none());
    }

    #[test]
    fn tool_results_without_visible_images_are_text() {
        let mut model = Model::new("m", "openai-responses", "openai");
        model.input = vec!["text".into()];
        let content = vec![Content::image("AAAA", "image/png")];
        assert_eq!(
            tool_result_output(&model, &content),
            json!("(see attached image)")
        );
        assert_eq!(tool_result_output(&model, &[]), json!("(no tool output)"));
        model.input.push("image".into());
        let content = vec![
            Content::text("a"),
            Content::text("b"),
            Content::image("AAAA", "image/png"),
        ];
        assert_eq!(
            tool_result_output(&model, &content),
            json!([
                {"type": "input_text", "text": "a\nb"},
                {"type": "input_image", "detail": "auto", "image_url": "data:image/png;base64,AAAA"}
            ])
        );
    }
}
