//! The request body: pi-ai's `buildParams` (the transcript and the tools come from
//! [`messages`](super::messages) and [`tools`](super::tools)).
//!
//! Keys are written in pi-ai's order (serde_json keeps insertion order here), so the
//! body reads like the one pi-ai sends.

use std::collections::HashSet;

use serde_json::{Map, Value, json};

use super::compat::AnthropicCompat;
use super::messages::{convert_messages, insert_thinking_level_messages, normalize_tool_call_id};
use super::tools::{convert_tools, split_deferred_tools, to_claude_code_name};
use crate::model::{AssistantMessage, Context, Model, ToolChoice};
use crate::providers::transform::transform_messages;

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
