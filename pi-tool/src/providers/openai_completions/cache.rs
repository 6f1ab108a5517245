//! Anthropic-style prompt-cache markers on a Chat Completions body (`cacheControlFormat:
//! "anthropic"`, OpenRouter's Claude models): `getCompatCacheControl` and
//! `applyAnthropicCacheControl`.

use serde_json::{Value, json};

use super::compat::Compat;
use crate::model::CacheRetention;

/// `getCompatCacheControl`.
pub(super) fn cache_control(compat: &Compat, retention: CacheRetention) -> Option<Value> {
    if compat.cache_control_format.as_deref() != Some("anthropic")
        || retention == CacheRetention::None
    {
        return None;
    }
    if retention == CacheRetention::Long && compat.supports_long_cache_retention {
        Some(json!({"type": "ephemeral", "ttl": "1h"}))
    } else {
        Some(json!({"type": "ephemeral"}))
    }
}

/// `applyAnthropicCacheControl`: the first system/developer message, the last tool, and
/// the last user/assistant/tool message with text.
pub(super) fn apply_anthropic_cache_control(
    messages: &mut [Value],
    tools: Option<&mut Vec<Value>>,
    control: &Value,
) {
    if let Some(system) = messages
        .iter_mut()
        .find(|m| matches!(role(m), "system" | "developer"))
    {
        add_cache_control_to_text(system, control);
    }
    if let Some(Value::Object(last)) = tools.and_then(|tools| tools.last_mut()) {
        last.insert("cache_control".into(), control.clone());
    }
    for message in messages.iter_mut().rev() {
        if matches!(role(message), "user" | "assistant" | "tool")
            && add_cache_control_to_text(message, control)
        {
            return;
        }
    }
}

fn role(message: &Value) -> &str {
    message.get("role").and_then(Value::as_str).unwrap_or("")
}

fn add_cache_control_to_text(message: &mut Value, control: &Value) -> bool {
    let Some(content) = message.get_mut("content") else {
        return false;
    };
    match content {
        Value::String(text) => {
            if text.is_empty() {
                return false;
            }
            let text = std::mem::take(text);
            *content = json!([{"type": "text", "text": text, "cache_control": control}]);
            true
        }
        Value::Array(parts) => {
            for part in parts.iter_mut().rev() {
                if part.get("type").and_then(Value::as_str) == Some("text")
                    && let Value::Object(part) = part
                {
                    part.insert("cache_control".into(), control.clone());
                    return true;
                }
            }
            false
        }
        _ => false,
    }
}
