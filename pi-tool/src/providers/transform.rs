//! pi-ai's `transformMessages` (`api/transform-messages.js`): the transcript a provider
//! actually sends, after adapting it to the target model.
//!
//! Three rewrites, in pi-ai's order, after the one pi-ai does not need: content kinds a
//! model cannot read (audio, resource links, embedded resources; Pi has none of them)
//! become text or images first (`Content::for_model`), so every provider sends only
//! what its API takes.
//! 1. Images become a text placeholder when the model takes no image input (a run of
//!    images collapses into one placeholder).
//! 2. Assistant messages from another model (provider, API or id differ) lose what only
//!    their own model can read: redacted thinking is dropped, thinking becomes plain text,
//!    text and tool-call signatures are dropped, and tool-call ids go through the
//!    provider's `normalize_tool_call_id` (tool results follow the renamed id). Empty
//!    thinking is dropped for every model unless it carries a signature for its own.
//! 3. Failed turns (stop reason error or aborted) are skipped, and every tool call left
//!    without a result before the next assistant or user message (or the end) gets a
//!    synthetic error result `No result provided`.

use std::collections::{HashMap, HashSet};
use std::sync::Arc;

use crate::js::js_trim;
use crate::model::now_millis;
use crate::model::{
    AssistantContent, AssistantMessage, Message, Model, StopReason, ToolCall, ToolResultMessage,
    UserMessage,
};
use pi_tool_core::Content;

const NON_VISION_USER_IMAGE_PLACEHOLDER: &str = "(image omitted: model does not support images)";
const NON_VISION_TOOL_IMAGE_PLACEHOLDER: &str =
    "(tool image omitted: model does not support images)";

/// The provider's tool-call id rewrite: `(id, target model, source message) -> id`.
pub(crate) type NormalizeToolCallId<'a> = &'a dyn Fn(&str, &Model, &AssistantMessage) -> String;

/// pi-ai's `transformMessages(messages, model, normalizeToolCallId)`.
pub(crate) fn transform_messages(
    messages: &[Message],
    model: &Model,
    normalize_tool_call_id: Option<NormalizeToolCallId<'_>>,
) -> Vec<Message> {
    let vision = model.input.iter().any(|i| i == "image");
    // Original id -> normalised id, filled by assistant messages, read by later results.
    let mut id_map: HashMap<Arc<str>, Arc<str>> = HashMap::new();
    let transformed: Vec<Message> = messages
        .iter()
        .map(|message| match message {
            Message::User(user) => {
                let degraded = for_model(&user.content);
                let content = degraded.as_deref().unwrap_or(&user.content);
                if vision && degraded.is_none() {
                    message.clone()
                } else {
                    Message::User(UserMessage {
                        content: if vision {
                            content.to_vec()
                        } else {
                            replace_images(content, NON_VISION_USER_IMAGE_PLACEHOLDER)
                        },
                        timestamp: user.timestamp,
                        plain_text: user.plain_text,
                    })
                }
            }
            Message::ToolResult(result) => {
                let degraded = for_model(&result.content);
                let content = degraded.as_deref().unwrap_or(&result.content);
                let mut result = if vision && degraded.is_none() {
                    result.clone()
                } else {
                    let mut copy = ToolResultMessage::clone(result);
                    copy.content = if vision {
                        content.to_vec()
                    } else {
                        replace_images(content, NON_VISION_TOOL_IMAGE_PLACEHOLDER)
                    };
                    Arc::new(copy)
                };
                if let Some(id) = id_map.get(&result.tool_call_id)
                    && **id != *result.tool_call_id
                {
                    Arc::make_mut(&mut result).tool_call_id = id.clone();
                }
                Message::ToolResult(result)
            }
            Message::Assistant(assistant) => Message::Assistant(transform_assistant(
                assistant,
                model,
                normalize_tool_call_id,
                &mut id_map,
            )),
        })
        .collect();
    insert_synthetic_results(transformed)
}

/// The blocks as a model is sent them ([`Content::for_model`]): `None` when all are text
/// or images already (Pi's kinds, the usual case, copied nothing).
fn for_model(content: &[Content]) -> Option<Vec<Content>> {
    content
        .iter()
        .any(|block| !matches!(block, Content::Text { .. } | Content::Image { .. }))
        .then(|| content.iter().map(Content::for_model).collect())
}

/// pi-ai's `replaceImagesWithPlaceholder`: each run of images becomes one placeholder
/// (also after a text block that already is the placeholder).
fn replace_images(content: &[Content], placeholder: &str) -> Vec<Content> {
    let mut out = Vec::with_capacity(content.len());
    let mut previous_was_placeholder = false;
    for block in content {
        match block {
            Content::Image { .. } => {
                if !previous_was_placeholder {
                    out.push(Content::text(placeholder));
                }
                previous_was_placeholder = true;
            }
            Content::Text { text } => {
                previous_was_placeholder = text == placeholder;
                out.push(block.clone());
            }
            // `for_model` left only text and images.
            other => {
                previous_was_placeholder = false;
                out.push(other.clone());
            }
        }
    }
    out
}

fn transform_assistant(
    message: &Arc<AssistantMessage>,
    model: &Model,
    normalize_tool_call_id: Option<NormalizeToolCallId<'_>>,
    id_map: &mut HashMap<Arc<str>, Arc<str>>,
) -> Arc<AssistantMessage> {
    let same_model =
        message.provider == model.provider && message.api == model.api && message.model == model.id;
    let mut changed = false;
    let mut content = Vec::with_capacity(message.content.len());
    for block in &message.content {
        match block {
            AssistantContent::Thinking {
                thinking,
                thinking_signature,
                redacted,
            } => {
                // Redacted thinking is opaque, encrypted for its own model only.
                if redacted.unwrap_or(false) {
                    if same_model {
                        content.push(block.clone());
                    } else {
                        changed = true;
                    }
                    continue;
                }
                // A signature is what replays the reasoning (OpenAI sends encrypted
                // reasoning with empty text), so keep it for the same model.
                if same_model && thinking_signature.as_deref().is_some_and(|s| !s.is_empty()) {
                    content.push(block.clone());
                    continue;
                }
                if js_trim(thinking).is_empty() {
                    changed = true;
                    continue;
                }
                if same_model {
                    content.push(block.clone());
                } else {
                    changed = true;
                    content.push(AssistantContent::text(thinking.clone()));
                }
            }
            AssistantContent::Text {
                text,
                text_signature,
            } => {
                if !same_model && text_signature.is_some() {
                    changed = true;
                    content.push(AssistantContent::text(text.clone()));
                } else {
                    content.push(block.clone());
                }
            }
            AssistantContent::ToolCall(call) => {
                if same_model {
                    content.push(block.clone());
                    continue;
                }
                let mut call: ToolCall = call.clone();
                if call
                    .thought_signature
                    .as_deref()
                    .is_some_and(|s| !s.is_empty())
                {
                    call.thought_signature = None;
                    changed = true;
                }
                if let Some(normalize) = normalize_tool_call_id {
                    let normalized = normalize(&call.id, model, message);
                    if *normalized != *call.id {
                        let normalized: Arc<str> = Arc::from(normalized);
                        id_map.insert(call.id.clone(), normalized.clone());
                        call.id = normalized;
                        changed = true;
                    }
                }
                content.push(AssistantContent::ToolCall(call));
            }
        }
    }
    if !changed {
        return message.clone();
    }
    let mut copy = AssistantMessage::clone(message);
    copy.content = content;
    Arc::new(copy)
}

/// The second pass: drop failed turns and answer orphaned tool calls.
fn insert_synthetic_results(transformed: Vec<Message>) -> Vec<Message> {
    let mut result = Vec::with_capacity(transformed.len());
    let mut pending: Vec<(Arc<str>, Arc<str>)> = Vec::new();
    let mut answered: HashSet<Arc<str>> = HashSet::new();
    let flush = |result: &mut Vec<Message>,
                 pending: &mut Vec<(Arc<str>, Arc<str>)>,
                 answered: &mut HashSet<Arc<str>>| {
        for (id, name) in pending.drain(..) {
            if !answered.contains(&id) {
                result.push(Message::ToolResult(Arc::new(ToolResultMessage {
                    tool_call_id: id,
                    tool_name: name,
                    content: vec![Content::text("No result provided")],
                    details: None,
                    usage: None,
                    added_tool_names: None,
                    is_error: true,
                    timestamp: now_millis(),
                })));
            }
        }
        answered.clear();
    };
    for message in transformed {
        match &message {
            Message::Assistant(assistant) => {
                flush(&mut result, &mut pending, &mut answered);
                // A failed turn may hold half a reasoning or half a tool call; replaying
                // it makes APIs reject the request, so the model retries from before it.
                if matches!(
                    assistant.stop_reason,
                    StopReason::Error | StopReason::Aborted
                ) {
                    continue;
                }
                pending.extend(
                    assistant
                        .tool_calls()
                        .map(|call| (call.id.clone(), call.name.clone())),
                );
                result.push(message);
            }
            Message::ToolResult(tool_result) => {
                answered.insert(tool_result.tool_call_id.clone());
                result.push(message);
            }
            Message::User(_) => {
                flush(&mut result, &mut pending, &mut answered);
                result.push(message);
            }
        }
    }
    flush(&mut result, &mut pending, &mut answered);
    result
}

#[cfg(test)]
mod tests {
    use std::path::PathBuf;

    use serde_json::Value;

    use super::*;

    fn vectors() -> Value {
        let path =
            PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("tests/data/transform/vectors.json");
        let text =
            std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
        serde_json::from_str(&text).unwrap_or_else(|e| panic!("{}: {e}", path.display()))
    }

    /// The generator's normaliser: Anthropic's id alphabet, at most 12 characters.
    fn normalize(id: &str, _: &Model, _: &AssistantMessage) -> String {
        id.chars()
            .map(|c| {
                if c.is_ascii_alphanumeric() || c == '_' || c == '-' {
                    c
                } else {
                    '_'
                }
            })
            .take(12)
            .collect()
    }

    /// Our output as JavaScript would print it (integral costs without a fraction), with
    /// the synthetic results' `Date.now()` written as 0.
    fn written(messages: &[Message]) -> Value {
        let mut value = serde_json::to_value(messages).unwrap_or_default();
        for message in value.as_array_mut().into_iter().flatten() {
            if message["role"] == "toolResult" && message["timestamp"].as_u64() > Some(1000) {
                message["timestamp"] = Value::from(0);
            }
        }
        serde_json::from_str(&crate::js::stringify(&value)).unwrap_or_default()
    }

    /// One transcript through pi-ai 0.85.0's transformMessages (recorded by
    /// scripts/gen-transform-vectors.mjs) and through ours: image placeholders, thinking
    /// and signatures for another model and for the same one, renamed tool-call ids and
    /// their results, a failed turn skipped, synthetic results for orphaned calls.
    #[test]
    fn matches_pi_ai() {
        let vectors = vectors();
        let messages: Vec<Message> =
            serde_json::from_value(vectors["messages"].clone()).unwrap_or_default();
        assert_eq!(
            messages.len(),
            vectors["messages"].as_array().map_or(0, Vec::len)
        );
        let mut model = Model::new("claude-x", "anthropic-messages", "anthropic");
        model.input = vec!["text".into()];
        let text_only = transform_messages(&messages, &model, Some(&normalize));
        assert_eq!(written(&text_only), vectors["textOnly"]);
        model.input = vec!["text".into(), "image".into()];
        let vision = transform_messages(&messages, &model, None);
        assert_eq!(written(&vision), vectors["vision"]);
    }

    #[test]
    fn untouched_messages_are_shared_not_copied() {
        let message = Message::from(AssistantMessage::empty(
            &Model::new("m", "a", "p"),
            StopReason::Stop,
        ));
        let out = transform_messages(
            std::slice::from_ref(&message),
            &Model::new("m", "a", "p"),
            None,
        );
        match (&message, &out[..]) {
            (Message::Assistant(a), [Message::Assistant(b)]) => assert!(Arc::ptr_eq(a, b)),
            other => panic!("{other:?}"),
        }
    }

    /// Audio, resource links and embedded resources (MCP's kinds, not Pi's) reach every
    /// provider as text, or as the image an embedded `image/*` blob is; a model without
    /// image input then gets the placeholder for that image.
    #[test]
    fn mcp_content_kinds_reach_providers_as_text_or_images() {
        let result: Message = serde_json::from_value(serde_json::json!({
            "role": "toolResult", "toolCallId": "c1", "toolName": "t", "isError": false,
            "timestamp": 1,
            "content": [
                {"type": "text", "text": "Here:"},
                {"type": "audio", "data": "UklGRg==", "mimeType": "audio/wav"},
                {"type": "resource_link", "uri": "file:///a", "name": "a"},
                {"type": "resource", "resource": {"uri": "test://r", "text": "hi"}},
                {"type": "resource", "resource": {"uri": "test://p", "mimeType": "image/png", "blob": "iVBO"}},
            ],
        }))
        .unwrap_or_else(|e| panic!("{e}"));
        let mut model = Model::new("m", "anthropic-messages", "p");
        model.input = vec!["text".into(), "image".into()];
        let content = |messages: Vec<Message>| match &messages[..] {
            [Message::ToolResult(result)] => result.content.clone(),
            other => panic!("{other:?}"),
        };
        let sent = content(transform_messages(
            std::slice::from_ref(&result),
            &model,
            None,
        ));
        assert_eq!(
            sent,
            [
                Content::text("Here:"),
                Content::text("[audio: audio/wav, 4 bytes, not shown to the model]"),
                Content::text("[resource link: a <file:///a>]"),
                Content::text("[resource test://r]\nhi"),
                Content::image("iVBO", "image/png"),
            ]
        );
        model.input = vec!["text".into()];
        let sent = content(transform_messages(
            std::slice::from_ref(&result),
            &model,
            None,
        ));
        assert_eq!(sent[4], Content::text(NON_VISION_TOOL_IMAGE_PLACEHOLDER));
    }
}
