//! The request body: pi-ai's `buildParams`, `convertMessages`, `convertToolResult`,
//! `convertContentBlocks`, `convertTools` and `splitDeferredTools`.
//!
//! Keys are written in pi-ai's order (serde_json keeps insertion order here), so the
//! body reads like the one pi-ai sends.

use std::collections::HashSet;
use std::sync::Arc;

use serde_json::{Map, Value, json};

use super::compat::AnthropicCompat;
use crate::AgentTool;
use crate::agent::{
    AssistantContent, AssistantMessage, Context, Message, Model, ToolChoice, ToolResultMessage,
};
use crate::content::Content;
use crate::providers::transform::transform_messages;
use crate::schema::js::js_trim;

/// Claude Code's tool names (pi-ai's stealth mode for OAuth tokens), canonical casing.
const CLAUDE_CODE_TOOLS: [&str; 17] = [
    "Read",
    "Write",
    "Edit",
    "Bash",
    "Grep",
    "Glob",
    "AskUserQuestion",
    "EnterPlanMode",
    "ExitPlanMode",
    "KillShell",
    "NotebookEdit",
    "Skill",
    "Task",
    "TaskOutput",
    "TodoWrite",
    "WebFetch",
    "WebSearch",
];

/// `toClaudeCodeName`: a Claude Code tool name in its casing, else the name.
pub(super) fn to_claude_code_name(name: &str) -> String {
    let lower = name.to_lowercase();
    CLAUDE_CODE_TOOLS
        .iter()
        .find(|t| t.to_lowercase() == lower)
        .map_or_else(|| name.to_owned(), |t| (*t).to_owned())
}

/// `fromClaudeCodeName`: the context's tool whose name matches case-insensitively.
pub(super) fn from_claude_code_name(name: &str, tools: &[String]) -> String {
    let lower = name.to_lowercase();
    tools
        .iter()
        .find(|t| t.to_lowercase() == lower)
        .cloned()
        .unwrap_or_else(|| name.to_owned())
}

/// `normalizeToolCallId`: `[^a-zA-Z0-9_-]` becomes `_`, then the first 64 characters.
/// The regex and the slice work on UTF-16 code units, so an astral character becomes two
/// `_`; the result is ASCII, so characters and units agree after the replacement.
fn normalize_tool_call_id(id: &str, _: &Model, _: &AssistantMessage) -> String {
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

/// What `buildParams` needs besides the model and context.
pub(super) struct BodyInputs<'a> {
    pub(super) oauth: bool,
    pub(super) cache_control: Option<Value>,
    pub(super) max_tokens: u64,
    pub(super) betas: &'a [String],
    pub(super) temperature: Option<f64>,
    pub(super) thinking_enabled: bool,
    pub(super) thinking_budget_tokens: Option<u64>,
    pub(super) effort: Option<String>,
    pub(super) metadata: Option<&'a Map<String, Value>>,
    pub(super) tool_choice: Option<&'a ToolChoice>,
}

/// `buildParams`.
pub(super) fn build_params(
    model: &Model,
    context: &Context,
    compat: &AnthropicCompat,
    inputs: &BodyInputs<'_>,
) -> Value {
    let normalize: &dyn Fn(&str, &Model, &AssistantMessage) -> String = &normalize_tool_call_id;
    let messages = transform_messages(&context.messages, model, Some(normalize));
    let normalize_name = |name: &str| {
        if inputs.oauth {
            to_claude_code_name(name)
        } else {
            name.to_owned()
        }
    };
    let (mut immediate, mut deferred) = split_deferred_tools(
        &context.tools,
        &messages,
        compat.supports_tool_references,
        &normalize_name,
    );
    if immediate.is_empty() && !deferred.is_empty() {
        immediate = std::mem::take(&mut deferred);
    }
    let deferred_names: HashSet<String> =
        deferred.iter().map(|t| normalize_name(t.name())).collect();
    let managed_provider = compat.mid_convo_effort.then_some(model.provider.as_str());
    let converted = convert_messages(
        &messages,
        inputs.oauth,
        inputs.cache_control.as_ref(),
        compat.allow_empty_signature,
        &deferred_names,
        &normalize_name,
        managed_provider,
    );
    let active_effort = inputs.effort.clone().unwrap_or_else(|| "high".to_owned());
    let messages = if compat.mid_convo_effort {
        insert_thinking_level_messages(converted, &active_effort)
    } else {
        converted.messages
    };

    let mut params = Map::new();
    params.insert("model".into(), json!(model.id));
    params.insert("messages".into(), Value::Array(messages));
    params.insert("max_tokens".into(), json!(inputs.max_tokens));
    params.insert("stream".into(), json!(true));
    // `betas` travels as the `anthropic-beta` header (the SDK takes it out of the body).
    let _ = inputs.betas;

    let system_block = |text: &str| {
        let mut block = Map::new();
        block.insert("type".into(), json!("text"));
        block.insert("text".into(), json!(text));
        if let Some(cache) = &inputs.cache_control {
            block.insert("cache_control".into(), cache.clone());
        }
        Value::Object(block)
    };
    if inputs.oauth {
        let mut system = vec![system_block(
            "You are Claude Code, Anthropic's official CLI for Claude.",
        )];
        if !context.system_prompt.is_empty() {
            system.push(system_block(&context.system_prompt));
        }
        params.insert("system".into(), Value::Array(system));
    } else if !context.system_prompt.is_empty() {
        params.insert(
            "system".into(),
            Value::Array(vec![system_block(&context.system_prompt)]),
        );
    }

    if let Some(temperature) = inputs.temperature
        && !inputs.thinking_enabled
        && !compat.mid_convo_effort
        && compat.supports_temperature
    {
        params.insert("temperature".into(), json!(temperature));
    }

    if !immediate.is_empty() || !deferred.is_empty() {
        let tool_cache = if compat.supports_cache_control_on_tools {
            inputs.cache_control.as_ref()
        } else {
            None
        };
        let mut tools = convert_tools(&immediate, &normalize_name, compat, tool_cache, false);
        tools.extend(convert_tools(
            &deferred,
            &normalize_name,
            compat,
            None,
            true,
        ));
        params.insert("tools".into(), Value::Array(tools));
    }

    if compat.mid_convo_effort {
        params.insert(
            "thinking".into(),
            json!({
                "type": "adaptive",
                "display": "summarized",
                "block_binding": {"prefix_mismatch_behavior": "drop_block"}
            }),
        );
        params.insert("output_config".into(), json!({"effort": "high"}));
    } else if model.reasoning {
        if inputs.thinking_enabled {
            if compat.force_adaptive_thinking {
                params.insert(
                    "thinking".into(),
                    json!({"type": "adaptive", "display": "summarized"}),
                );
                if let Some(effort) = &inputs.effort {
                    params.insert("output_config".into(), json!({ "effort": effort }));
                }
            } else {
                let budget = inputs
                    .thinking_budget_tokens
                    .filter(|b| *b != 0)
                    .unwrap_or(1024);
                params.insert(
                    "thinking".into(),
                    json!({"type": "enabled", "budget_tokens": budget, "display": "summarized"}),
                );
            }
        } else if !off_level_unsupported(model) {
            params.insert("thinking".into(), json!({"type": "disabled"}));
        }
    }

    if let Some(Value::String(user_id)) = inputs.metadata.and_then(|m| m.get("user_id")) {
        params.insert("metadata".into(), json!({ "user_id": user_id }));
    }

    if let Some(choice) = inputs.tool_choice {
        let choice = match choice {
            ToolChoice::Auto => json!({"type": "auto"}),
            ToolChoice::None => json!({"type": "none"}),
            ToolChoice::Required => json!({"type": "any"}),
            ToolChoice::Tool(name) => json!({"type": "tool", "name": name}),
        };
        params.insert("tool_choice".into(), choice);
    }

    if !compat.allowed_fallback_models.is_empty() {
        let fallbacks: Vec<Value> = compat
            .allowed_fallback_models
            .iter()
            .map(|f| json!({ "model": f.model }))
            .collect();
        params.insert("fallbacks".into(), Value::Array(fallbacks));
    }
    Value::Object(params)
}

/// `model.thinkingLevelMap?.off === null`: the model cannot turn thinking off.
fn off_level_unsupported(model: &Model) -> bool {
    model
        .thinking_level_map
        .as_ref()
        .and_then(|m| m.get("off"))
        .is_some_and(Value::is_null)
}

type Tools = Vec<Arc<dyn AgentTool>>;

/// `splitDeferredTools`: tools first loaded by a tool result's `addedToolNames` (and never
/// called before) are sent with `defer_loading`; the rest up front. Names dedupe by their
/// normalised form, the last definition winning at the first position.
fn split_deferred_tools(
    tools: &[Arc<dyn AgentTool>],
    messages: &[Message],
    enabled: bool,
    normalize: &dyn Fn(&str) -> String,
) -> (Tools, Tools) {
    let mut unique: Vec<(String, Arc<dyn AgentTool>)> = Vec::new();
    for tool in tools {
        let name = normalize(tool.name());
        match unique.iter_mut().find(|(n, _)| *n == name) {
            Some(slot) => slot.1 = tool.clone(),
            None => unique.push((name, tool.clone())),
        }
    }
    if !enabled {
        return (unique.into_iter().map(|(_, t)| t).collect(), Vec::new());
    }
    let mut deferred_names: Vec<String> = Vec::new();
    let mut used: HashSet<String> = HashSet::new();
    for message in messages {
        match message {
            Message::Assistant(assistant) => {
                for call in assistant.tool_calls() {
                    used.insert(normalize(&call.name));
                }
            }
            Message::ToolResult(result) => {
                for name in result.added_tool_names.iter().flatten() {
                    let name = normalize(name);
                    if !used.contains(&name) && !deferred_names.contains(&name) {
                        deferred_names.push(name);
                    }
                }
            }
            Message::User(_) => {}
        }
    }
    let mut immediate = Vec::new();
    let mut deferred = Vec::new();
    for (name, tool) in unique {
        if deferred_names.contains(&name) {
            deferred.push(tool);
        } else {
            immediate.push(tool);
        }
    }
    (immediate, deferred)
}

/// `convertTools`. No tool here asks for constrained sampling, so the schema is always
/// pi-ai's legacy `{type: "object", properties, required}`.
fn convert_tools(
    tools: &[Arc<dyn AgentTool>],
    normalize: &dyn Fn(&str) -> String,
    compat: &AnthropicCompat,
    cache_control: Option<&Value>,
    defer_loading: bool,
) -> Vec<Value> {
    let last = tools.len().saturating_sub(1);
    tools
        .iter()
        .enumerate()
        .map(|(index, tool)| {
            let spec = tool.spec();
            let schema = spec.parameters.json();
            let field = |key: &str, default: Value| match schema.get(key) {
                None | Some(Value::Null) => default,
                Some(value) => value.clone(),
            };
            let mut out = Map::new();
            out.insert("name".into(), json!(normalize(tool.name())));
            out.insert("description".into(), json!(spec.description));
            if compat.supports_eager_tool_input_streaming {
                out.insert("eager_input_streaming".into(), json!(true));
            }
            out.insert(
                "input_schema".into(),
                json!({
                    "type": "object",
                    "properties": field("properties", json!({})),
                    "required": field("required", json!([])),
                }),
            );
            if defer_loading {
                out.insert("defer_loading".into(), json!(true));
            }
            if let Some(cache) = cache_control
                && index == last
            {
                out.insert("cache_control".into(), cache.clone());
            }
            Value::Object(out)
        })
        .collect()
}

/// `convertMessages`' result: the wire messages, and the historical effort of the
/// assistant messages at these indices (managed-effort models).
struct Converted {
    messages: Vec<Value>,
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
fn convert_messages(
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
        .map(|block| match block {
            Content::Text { text } => text_block(text),
            Content::Image { data, mime_type } => image_block(data, mime_type),
        })
        .collect();
    if !content.iter().any(|c| matches!(c, Content::Text { .. })) {
        blocks.insert(0, text_block("(see attached image)"));
    }
    Value::Array(blocks)
}

/// `insertThinkingLevelMessages`: a `system` effort marker before each historical
/// assistant message that had one, and the active effort at the end.
fn insert_thinking_level_messages(converted: Converted, active_effort: &str) -> Vec<Value> {
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
