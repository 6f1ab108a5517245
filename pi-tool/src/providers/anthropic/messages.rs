//! The transcript on the wire: pi-ai's `convertMessages`, `convertToolResult`,
//! `convertContentBlocks`, `normalizeToolCallId` and `insertThinkingLevelMessages`.

use std::collections::HashSet;

use serde_json::{Map, Value, json};

use super::tools::to_claude_code_name;
use crate::js::js_trim;
use crate::model::{AssistantContent, AssistantMessage, Message, Model, ToolResultMessage};
use pi_tool_core::Content;

/// `normalizeToolCallId`: `[^a-zA-Z0-9_-]` becomes `_`, then the first 64 characters.
/// The regex and the slice work on UTF-16 code units, so an astral character becomes two
/// `_`; the result is ASCII, so characters and units agree after the replacement.
pub(super) fn normalize_tool_call_id(id: &str, _: &Model, _: &AssistantMessage) -> String {
    let mut out = String::with_capacity(id.len().min(64));
    for c in id.chars() {
        if c.is_ascii_alphanumeric() || c == '_' || c == '-' {
            out.push(c);
        } else {
            out.extend(std::iter::repeat_n('_', c.len_utf16()));
        }
        if out.len() >= 64 {
            out.truncate(64);
            break;
        }
    }
    out
}

/// `convertMessages`' result: the wire messages, and the historical effort of the
/// assistant messages at these indices (managed-effort models).
pub(super) struct Converted {
    pub(super) messages: Vec<Value>,
    levels: Vec<(usize, String)>,
}

fn is_anthropic_effort(value: &str) -> bool {
    matches!(value, "low" | "medium" | "high" | "xhigh" | "max")
}

fn image_block(data: &str, mime_type: &str) -> Value {
    json!({
        "type": "image",
        "source": {"type": "base64", "media_type": mime_type, "data": data}
    })
}

fn text_block(text: &str) -> Value {
    json!({"type": "text", "text": text})
}

/// `convertMessages`.
pub(super) fn convert_messages(
    messages: &[Message],
    oauth: bool,
    cache_control: Option<&Value>,
    allow_empty_signature: bool,
    deferred_names: &HashSet<String>,
    normalize: &dyn Fn(&str) -> String,
    managed_provider: Option<&str>,
) -> Converted {
    let mut params: Vec<Value> = Vec::new();
    let mut levels = Vec::new();
    let mut loaded: HashSet<String> = HashSet::new();
    let mut i = 0;
    while i < messages.len() {
        match &messages[i] {
            Message::User(user) if user.plain_text => {
                // pi's string content is sent as a string (blank ones are skipped).
                let text: String = user.content.iter().filter_map(Content::as_text).collect();
                if !js_trim(&text).is_empty() {
                    params.push(json!({"role": "user", "content": text}));
                }
            }
            Message::User(user) => {
                let blocks: Vec<Value> = user
                    .content
                    .iter()
                    .filter_map(|item| match item {
                        Content::Text { text } => {
                            (!js_trim(text).is_empty()).then(|| text_block(text))
                        }
                        Content::Image { data, mime_type } => Some(image_block(data, mime_type)),
                        other => Some(match other.for_model() {
                            Content::Image { data, mime_type } => image_block(&data, &mime_type),
                            // `for_model` gives text or an image.
                            text => text_block(text.as_text().unwrap_or_default()),
                        }),
                    })
                    .collect();
                if !blocks.is_empty() {
                    params.push(json!({"role": "user", "content": blocks}));
                }
            }
            Message::Assistant(assistant) => {
                let blocks = assistant_blocks(assistant, oauth, allow_empty_signature);
                if !blocks.is_empty() {
                    let index = params.len();
                    params.push(json!({"role": "assistant", "content": blocks}));
                    if let (Some(provider), Some(level)) = (
                        managed_provider,
                        assistant.provider_thinking_level.as_deref(),
                    ) && assistant.api == "anthropic-messages"
                        && assistant.provider == provider
                        && is_anthropic_effort(level)
                    {
                        levels.push((index, level.to_owned()));
                    }
                }
            }
            Message::ToolResult(_) => {
                // Consecutive results go in one user message (z.ai's endpoint needs it).
                let mut results = Vec::new();
                let mut siblings = Vec::new();
                while let Some(Message::ToolResult(result)) = messages.get(i) {
                    let (block, sibling) =
                        convert_tool_result(result, oauth, deferred_names, &mut loaded, normalize);
                    results.push(block);
                    siblings.extend(sibling);
                    i += 1;
                }
                results.extend(siblings);
                params.push(json!({"role": "user", "content": results}));
                continue;
            }
        }
        i += 1;
    }

    // Cache the conversation so far: mark the last block of a final user message (a
    // string content becomes one text block to carry the mark).
    if let (Some(cache), Some(last)) = (cache_control, params.last_mut())
        && last.get("role").and_then(Value::as_str) == Some("user")
        && let Some(content) = last.get_mut("content")
    {
        match content {
            Value::String(text) => {
                *content = json!([{"type": "text", "text": text, "cache_control": cache}]);
            }
            Value::Array(blocks) => {
                if let Some(Value::Object(block)) = blocks.last_mut()
                    && matches!(
                        block.get("type").and_then(Value::as_str),
                        Some("text" | "image" | "tool_result")
                    )
                {
                    block.insert("cache_control".into(), cache.clone());
                }
            }
            _ => {}
        }
    }
    Converted {
        messages: params,
        levels,
    }
}

fn assistant_blocks(
    assistant: &AssistantMessage,
    oauth: bool,
    allow_empty_signature: bool,
) -> Vec<Value> {
    let mut blocks = Vec::new();
    for block in &assistant.content {
        match block {
            AssistantContent::Text { text, .. } => {
                if !js_trim(text).is_empty() {
                    blocks.push(text_block(text));
                }
            }
            AssistantContent::Thinking {
                thinking,
                thinking_signature,
                redacted,
            } => {
                if *redacted == Some(true) {
                    let mut block = Map::new();
                    block.insert("type".into(), json!("redacted_thinking"));
                    if let Some(signature) = thinking_signature {
                        block.insert("data".into(), json!(signature));
                    }
                    blocks.push(Value::Object(block));
                    continue;
                }
                let signature = thinking_signature
                    .as_deref()
                    .filter(|s| !js_trim(s).is_empty());
                if js_trim(thinking).is_empty() && signature.is_none() {
                    continue;
                }
                match signature {
                    Some(signature) => blocks.push(json!({
                        "type": "thinking", "thinking": thinking, "signature": signature
                    })),
                    // No signature (an aborted stream): Anthropic takes it as text only;
                    // some compatible servers accept an empty signature.
                    None if allow_empty_signature => blocks.push(json!({
                        "type": "thinking", "thinking": thinking, "signature": ""
                    })),
                    None => blocks.push(text_block(thinking)),
                }
            }
            AssistantContent::ToolCall(call) => {
                let name = if oauth {
                    to_claude_code_name(&call.name)
                } else {
                    call.name.to_string()
                };
                let input = match call.arguments.as_ref() {
                    Value::Null => json!({}),
                    other => other.clone(),
                };
                blocks.push(json!({
                    "type": "tool_use", "id": &*call.id, "name": name, "input": input
                }));
            }
        }
    }
    blocks
}

/// `convertToolResult`: the `tool_result` block and the content that must follow every
/// result block (when tool references take the result's place).
fn convert_tool_result(
    result: &ToolResultMessage,
    oauth: bool,
    deferred_names: &HashSet<String>,
    loaded: &mut HashSet<String>,
    normalize: &dyn Fn(&str) -> String,
) -> (Value, Vec<Value>) {
    let mut references = Vec::new();
    for name in result.added_tool_names.iter().flatten() {
        let normalized = normalize(name);
        if !deferred_names.contains(&normalized) || loaded.contains(&normalized) {
            continue;
        }
        loaded.insert(normalized);
        let tool_name = if oauth {
            to_claude_code_name(name)
        } else {
            name.clone()
        };
        references.push(json!({"type": "tool_reference", "tool_name": tool_name}));
    }
    let converted = convert_content_blocks(&result.content);
    let (content, siblings) = if references.is_empty() {
        (converted, Vec::new())
    } else {
        let siblings = match converted {
            Value::String(text) => vec![text_block(&text)],
            Value::Array(blocks) => blocks,
            other => vec![other],
        };
        (Value::Array(references), siblings)
    };
    (
        json!({
            "type": "tool_result",
            "tool_use_id": &*result.tool_call_id,
            "content": content,
            "is_error": result.is_error,
        }),
        siblings,
    )
}

/// `convertContentBlocks`: text only becomes one string (blocks joined by `\n`); with an
/// image, blocks, led by a placeholder text when there is no text at all.
fn convert_content_blocks(content: &[Content]) -> Value {
    if !content.iter().any(|c| matches!(c, Content::Image { .. })) {
        let texts: Vec<&str> = content.iter().filter_map(Content::as_text).collect();
        return Value::String(texts.join("\n"));
    }
    let mut blocks: Vec<Value> = content
        .iter()
        .map(|block| match block.for_model() {
            Content::Image { data, mime_type } => image_block(&data, &mime_type),
            // `for_model` gives text or an image.
            text => text_block(text.as_text().unwrap_or_default()),
        })
        .collect();
    if !content.iter().any(|c| matches!(c, Content::Text { .. })) {
        blocks.insert(0, text_block("(see attached image)"));
    }
    Value::Array(blocks)
}

/// `insertThinkingLevelMessages`: a `system` effort marker before each historical
/// assistant message that had one, and the active effort at the end.
pub(super) fn insert_thinking_level_messages(
    converted: Converted,
    active_effort: &str,
) -> Vec<Value> {
    let mut out = Vec::with_capacity(converted.messages.len() + 1);
    for (index, message) in converted.messages.into_iter().enumerate() {
        if let Some((_, level)) = converted.levels.iter().find(|(i, _)| *i == index) {
            out.push(json!({"role": "system", "content": [], "output_config": {"effort": level}}));
        }
        out.push(message);
    }
    out.push(json!({"role": "system", "content": [], "output_config": {"effort": active_effort}}));
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn norm(id: &str) -> String {
        let model = Model::default();
        let message = AssistantMessage::empty(&model, crate::model::StopReason::Stop);
        normalize_tool_call_id(id, &model, &message)
    }

    #[test]
    fn tool_call_ids_are_cut_to_anthropics_pattern() {
        assert_eq!(norm("call_abc|def/g+h="), "call_abc_def_g_h_");
        // An astral character is two UTF-16 units, so two underscores.
        assert_eq!(norm("a\u{1f600}b\u{e9}"), "a__b_");
        assert_eq!(norm(&"x".repeat(70)).len(), 64);
        assert_eq!(
            norm(&format!("{}\u{1f600}", "y".repeat(63))),
            format!("{}_", "y".repeat(63))
        );
    }

    #[test]
    fn tool_result_content_is_a_string_unless_it_has_images() {
        let texts = [Content::text("a"), Content::text("b")];
        assert_eq!(convert_content_blocks(&texts), json!("a\nb"));
        assert_eq!(convert_content_blocks(&[]), json!(""));
        let image = Content::image("AAAA", "image/png");
        assert_eq!(
            convert_content_blocks(std::slice::from_ref(&image)),
            json!([
                {"type": "text", "text": "(see attached image)"},
                {"type": "image", "source": {"type": "base64", "media_type": "image/png", "data": "AAAA"}}
            ])
        );
    }
}
