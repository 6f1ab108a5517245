//! `convertMessages` and `convertTools`: pi's transcript and tools as Chat Completions
//! messages and function tools.

use serde_json::{Map, Value, json};

use super::compat::Compat;
use super::details::{parse_legacy_encrypted_detail, parse_reasoning_details};
use crate::AgentTool;
use crate::js::stringify;
use crate::model::{AssistantContent, AssistantMessage, Context, Message, Model};
use crate::providers::hash::short_hash;
use crate::providers::transform::transform_messages;
use pi_tool_core::Content;

/// The assistant fields a thinking signature may name (`OPENAI_COMPLETIONS_REASONING_FIELDS`).
const REASONING_FIELDS: [&str; 3] = ["reasoning", "reasoning_content", "reasoning_text"];

/// `normalizeToolCallId`: Responses-style `call|item` ids become one id of at most 40
/// characters from `[A-Za-z0-9_-]`; OpenAI's own ids are cut at 40.
fn normalize_tool_call_id(id: &str, model: &Model) -> String {
    if let Some((call, item)) = id.split_once('|') {
        // The regex replaces UTF-16 code units, so an astral character gives two `_`.
        let clean = |s: &str| -> String {
            s.chars()
                .flat_map(|c| {
                    let keep = c.is_ascii_alphanumeric() || c == '_' || c == '-';
                    let n = if keep { 1 } else { c.len_utf16() };
                    std::iter::repeat_n(if keep { c } else { '_' }, n)
                })
                .collect()
        };
        let (call, item) = (clean(call), clean(item));
        let combined = if item.is_empty() {
            call.clone()
        } else {
            format!("{call}_{item}")
        };
        if combined.len() <= 40 {
            return combined;
        }
        let hash: String = short_hash(id).chars().take(8).collect();
        let keep = 40usize.saturating_sub(hash.len() + 1).max(1);
        let prefix: String = call.chars().take(keep).collect();
        return format!("{prefix}_{hash}");
    }
    if model.provider == "openai" && id.encode_utf16().count() > 40 {
        let units: Vec<u16> = id.encode_utf16().take(40).collect();
        return String::from_utf16_lossy(&units);
    }
    id.to_owned()
}

fn image_part(data: &str, mime_type: &str) -> Value {
    json!({"type": "image_url", "image_url": {"url": format!("data:{mime_type};base64,{data}")}})
}

/// `convertMessages`.
pub(super) fn convert_messages(model: &Model, context: &Context, compat: &Compat) -> Vec<Value> {
    let normalize =
        |id: &str, model: &Model, _source: &AssistantMessage| normalize_tool_call_id(id, model);
    let messages = transform_messages(&context.messages, model, Some(&normalize));
    let mut params = Vec::new();
    if !context.system_prompt.is_empty() {
        let role = if model.reasoning && compat.supports_developer_role {
            "developer"
        } else {
            "system"
        };
        params.push(json!({"role": role, "content": context.system_prompt}));
    }
    let mut last_role: Option<&str> = None;
    let mut i = 0;
    while i < messages.len() {
        let message = &messages[i];
        if compat.requires_assistant_after_tool_result
            && last_role == Some("toolResult")
            && matches!(message, Message::User(_))
        {
            params.push(
                json!({"role": "assistant", "content": "I have processed the tool results."}),
            );
        }
        match message {
            Message::User(user) => {
                if user.plain_text {
                    let text: String = user.content.iter().filter_map(Content::as_text).collect();
                    params.push(json!({"role": "user", "content": text}));
                } else {
                    let content: Vec<Value> = user
                        .content
                        .iter()
                        .map(|item| match item.for_model() {
                            Content::Image { data, mime_type } => image_part(&data, &mime_type),
                            // `for_model` gives text or an image.
                            other => {
                                json!({"type": "text", "text": other.as_text().unwrap_or_default()})
                            }
                        })
                        .collect();
                    if content.is_empty() {
                        i += 1;
                        continue;
                    }
                    params.push(json!({"role": "user", "content": content}));
                }
            }
            Message::Assistant(assistant) => match convert_assistant(model, compat, assistant) {
                Some(converted) => params.push(converted),
                None => {
                    i += 1;
                    continue;
                }
            },
            Message::ToolResult(_) => {
                let (next, sent_images) =
                    convert_tool_results(model, context, compat, &messages, i, &mut params);
                last_role = Some(if sent_images { "user" } else { "toolResult" });
                i = next;
                continue;
            }
        }
        last_role = Some(message.role());
        i += 1;
    }
    params
}

/// One assistant message, or `None` when it has neither content nor tool calls.
fn convert_assistant(model: &Model, compat: &Compat, msg: &AssistantMessage) -> Option<Value> {
    let mut out = Map::new();
    out.insert("role".into(), json!("assistant"));
    out.insert(
        "content".into(),
        if compat.requires_assistant_after_tool_result {
            json!("")
        } else {
            Value::Null
        },
    );
    let text_parts: Vec<&str> = msg
        .content
        .iter()
        .filter_map(|block| match block {
            AssistantContent::Text { text, .. } if !crate::js::js_trim(text).is_empty() => {
                Some(text.as_str())
            }
            _ => None,
        })
        .collect();
    let text: String = text_parts.concat();
    let thinking: Vec<(&str, Option<&str>)> = msg
        .content
        .iter()
        .filter_map(|block| match block {
            AssistantContent::Thinking {
                thinking,
                thinking_signature,
                ..
            } => Some((thinking.as_str(), thinking_signature.as_deref())),
            _ => None,
        })
        .collect();
    let tool_calls: Vec<&crate::model::ToolCall> = msg
        .content
        .iter()
        .filter_map(|block| match block {
            AssistantContent::ToolCall(call) => Some(call),
            _ => None,
        })
        .collect();
    let signed = thinking
        .iter()
        .find_map(|(_, signature)| parse_reasoning_details(*signature));
    let legacy: Vec<Value> = tool_calls
        .iter()
        .filter_map(|call| parse_legacy_encrypted_detail(call.thought_signature.as_deref()))
        .collect();
    let preserved = signed.or((!legacy.is_empty()).then_some(legacy));
    let non_empty: Vec<&(&str, Option<&str>)> = thinking
        .iter()
        .filter(|(text, _)| !crate::js::js_trim(text).is_empty())
        .collect();
    if !non_empty.is_empty() {
        if compat.requires_thinking_as_text {
            let joined = non_empty
                .iter()
                .map(|(t, _)| *t)
                .collect::<Vec<_>>()
                .join("\n\n");
            let mut parts = vec![json!({"type": "text", "text": joined})];
            parts.extend(
                text_parts
                    .iter()
                    .map(|t| json!({"type": "text", "text": t})),
            );
            out.insert("content".into(), Value::Array(parts));
        } else {
            if !text.is_empty() {
                out.insert("content".into(), json!(text));
            }
            if preserved.is_none() {
                let mut signature = non_empty[0].1;
                if model.provider == "opencode-go" && signature == Some("reasoning") {
                    signature = Some("reasoning_content");
                }
                if let Some(field) = signature.filter(|s| REASONING_FIELDS.contains(s)) {
                    let joined = non_empty
                        .iter()
                        .map(|(t, _)| *t)
                        .collect::<Vec<_>>()
                        .join("\n");
                    out.insert(field.to_owned(), json!(joined));
                }
            }
        }
    } else if !text.is_empty() {
        out.insert("content".into(), json!(text));
    }
    if !tool_calls.is_empty() {
        let calls: Vec<Value> = tool_calls
            .iter()
            .map(|call| {
                json!({
                    "id": call.id.as_ref(),
                    "type": "function",
                    "function": {"name": call.name.as_ref(), "arguments": stringify(&call.arguments)},
                })
            })
            .collect();
        out.insert("tool_calls".into(), Value::Array(calls));
    }
    if let Some(details) = preserved {
        out.insert("reasoning_details".into(), Value::Array(details));
    }
    if compat.requires_reasoning_content_on_assistant_messages
        && model.reasoning
        && !out.contains_key("reasoning_content")
    {
        out.insert("reasoning_content".into(), json!(""));
    }
    let has_content = match out.get("content") {
        Some(Value::String(s)) => !s.is_empty(),
        Some(Value::Array(a)) => !a.is_empty(),
        _ => false,
    };
    (has_content || out.contains_key("tool_calls")).then_some(Value::Object(out))
}

/// A run of tool results starting at `start`: one `tool` message each, then their
/// images as a user message (for vision models), then Kimi's deferred tools. Returns
/// the index after the run and whether the images were sent.
fn convert_tool_results(
    model: &Model,
    context: &Context,
    compat: &Compat,
    messages: &[Message],
    start: usize,
    params: &mut Vec<Value>,
) -> (usize, bool) {
    let vision = model.input.iter().any(|i| i == "image");
    let mut images = Vec::new();
    let mut deferred: Vec<String> = Vec::new();
    let mut j = start;
    while let Some(Message::ToolResult(result)) = messages.get(j) {
        let text = result
            .content
            .iter()
            .filter_map(Content::as_text)
            .collect::<Vec<_>>()
            .join("\n");
        let has_images = result
            .content
            .iter()
            .any(|c| matches!(c, Content::Image { .. }));
        let content = if !text.is_empty() {
            text
        } else if has_images {
            "(see attached image)".to_owned()
        } else {
            "(no tool output)".to_owned()
        };
        let mut message = Map::new();
        message.insert("role".into(), json!("tool"));
        message.insert("content".into(), json!(content));
        message.insert("tool_call_id".into(), json!(result.tool_call_id.as_ref()));
        if compat.requires_tool_result_name && !result.tool_name.is_empty() {
            message.insert("name".into(), json!(result.tool_name.as_ref()));
        }
        params.push(Value::Object(message));
        if compat.deferred_tools_mode.as_deref() == Some("kimi") {
            for name in result.added_tool_names.iter().flatten() {
                if !deferred.contains(name) {
                    deferred.push(name.clone());
                }
            }
        }
        if has_images && vision {
            for block in &result.content {
                if let Content::Image { data, mime_type } = block {
                    images.push(image_part(data, mime_type));
                }
            }
        }
        j += 1;
    }
    let sent_images = !images.is_empty();
    if sent_images {
        if compat.requires_assistant_after_tool_result {
            params.push(
                json!({"role": "assistant", "content": "I have processed the tool results."}),
            );
        }
        let mut content =
            vec![json!({"type": "text", "text": "Attached image(s) from tool result:"})];
        content.extend(images);
        params.push(json!({"role": "user", "content": content}));
    }
    if !deferred.is_empty() {
        let tools: Vec<_> = deferred
            .iter()
            .filter_map(|name| context.tools.iter().find(|t| t.name() == name))
            .collect();
        if !tools.is_empty() {
            // Kimi takes a system message with tools and no content field.
            params
                .push(json!({"role": "system", "tools": convert_tools(tools.into_iter(), compat)}));
        }
    }
    (j, sent_images)
}

/// `convertTools`: function tools with the schema as given; `strict: false` unless the
/// server rejects the field (tools here carry no constrained-sampling config).
pub(super) fn convert_tools<'a>(
    tools: impl Iterator<Item = &'a std::sync::Arc<dyn AgentTool>>,
    compat: &Compat,
) -> Vec<Value> {
    tools
        .map(|tool| {
            let spec = tool.spec();
            let mut function = Map::new();
            function.insert("name".into(), json!(tool.name()));
            function.insert("description".into(), json!(spec.description));
            function.insert("parameters".into(), spec.parameters.json().clone());
            if compat.supports_strict_mode {
                function.insert("strict".into(), json!(false));
            }
            json!({"type": "function", "function": function})
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn responses_ids_are_folded_into_forty_safe_characters() {
        let model = Model::new("m", "openai-completions", "other");
        assert_eq!(normalize_tool_call_id("call_1|fc_2", &model), "call_1_fc_2");
        assert_eq!(normalize_tool_call_id("call+1|", &model), "call_1");
        let long = format!("call_abc|{}", "x/".repeat(100));
        let id = normalize_tool_call_id(&long, &model);
        assert!(id.starts_with("call_abc_") && id.len() <= 40, "{id}");
        let openai = Model::new("m", "openai-completions", "openai");
        assert_eq!(normalize_tool_call_id(&"a".repeat(50), &openai).len(), 40);
        assert_eq!(normalize_tool_call_id(&"a".repeat(50), &model).len(), 50);
    }
}
