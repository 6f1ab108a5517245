//! pi-ai's `OpenAICompletionsCompat`, and `getCompat`: the switches detected from the
//! model's provider and base URL, overridden key by key by `model.compat`.

use serde::{Deserialize, Serialize};
use serde_json::{Map, Value};

use crate::model::Model;

/// Compatibility switches of an OpenAI Chat Completions server (pi-ai's
/// `OpenAICompletionsCompat`), read from [`Model::compat`]. Every field is optional: an
/// unset field takes the value pi-ai detects from `model.provider` and `model.base_url`
/// (z.ai, Together, Moonshot, OpenRouter, Cloudflare, NVIDIA, Ant Ling, DeepSeek,
/// Cerebras, xAI, chutes.ai, opencode). Unknown keys are ignored.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
#[non_exhaustive]
pub struct OpenAiCompletionsCompat {
    /// Whether the server accepts the `store` field (then `store: false` is sent).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub supports_store: Option<bool>,
    /// Whether the server accepts the `developer` role (used instead of `system` for
    /// reasoning models).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub supports_developer_role: Option<bool>,
    /// Whether the server accepts `reasoning_effort`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub supports_reasoning_effort: Option<bool>,
    /// Whether `stream_options: {include_usage: true}` is sent (default true).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub supports_usage_in_streaming: Option<bool>,
    /// Whether streamed responses carry a `finish_reason`; when false, the stop reason
    /// is inferred (`toolUse` with a tool call, else `stop`). Default true.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub supports_finish_reason: Option<bool>,
    /// The output-limit field: `max_completion_tokens` or `max_tokens`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub max_tokens_field: Option<String>,
    /// Whether tool results carry the tool's `name`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub requires_tool_result_name: Option<bool>,
    /// Whether a user message right after tool results needs an assistant message
    /// between them (`I have processed the tool results.`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub requires_assistant_after_tool_result: Option<bool>,
    /// Whether replayed thinking is sent as plain text content.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub requires_thinking_as_text: Option<bool>,
    /// Whether every replayed assistant message of a reasoning model carries a
    /// `reasoning_content` field (empty when there was no reasoning).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub requires_reasoning_content_on_assistant_messages: Option<bool>,
    /// How reasoning is requested: `openai` (`reasoning_effort`), `openrouter`,
    /// `deepseek`, `together`, `baseten`, `zai`, `qwen`, `qwen-chat-template`,
    /// `chat-template`, `string-thinking` or `ant-ling`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub thinking_format: Option<String>,
    /// `chat_template_kwargs` for the `chat-template` format; `{"$var": ...}` values
    /// are filled with pi's thinking values.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub chat_template_kwargs: Option<Map<String, Value>>,
    /// `chat_template_args` for the `baseten` format.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub chat_template_args: Option<Map<String, Value>>,
    /// OpenRouter routing preferences, sent as the `provider` field.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub open_router_routing: Option<Value>,
    /// Vercel AI Gateway routing (`only`, `order`), sent as `providerOptions.gateway`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub vercel_gateway_routing: Option<Value>,
    /// Whether z.ai's `tool_stream: true` is sent with tools.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub zai_tool_stream: Option<bool>,
    /// The top-level field that caps reasoning tokens (`thinking_token_budget`,
    /// `thinking_budget` or `thinking_budget_tokens`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub thinking_token_budget_field: Option<String>,
    /// Alias for `thinking_token_budget_field: "thinking_token_budget"` (vLLM).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub supports_thinking_token_budget: Option<bool>,
    /// Whether OpenAI grammar (custom) tools are supported. Tools here carry no grammar,
    /// so this only changes how a streamed `custom` tool call is read.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub supports_open_ai_grammar_tools: Option<bool>,
    /// Whether tool definitions carry `strict` (default true).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub supports_strict_mode: Option<bool>,
    /// `anthropic`: Anthropic-style `cache_control` markers on the system prompt, the
    /// last tool and the last conversation text.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub cache_control_format: Option<String>,
    /// Whether the session id is sent as session-affinity headers.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub send_session_affinity_headers: Option<bool>,
    /// `kimi`: tools added by a tool result are announced in a system message.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub deferred_tools_mode: Option<String>,
    /// Session-affinity headers: `openai` (`session_id`, `x-client-request-id`,
    /// `x-session-affinity`), `openai-nosession` (the last two) or `openrouter`
    /// (`x-session-id`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub session_affinity_format: Option<String>,
    /// Whether long prompt-cache retention is supported (`prompt_cache_retention:
    /// "24h"`, or `ttl: "1h"` with Anthropic-style markers). Default true.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub supports_long_cache_retention: Option<bool>,
    /// vLLM's scheduler priority, sent as `priority`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub vllm_priority: Option<Value>,
}

/// The resolved switches (pi-ai's `getCompat(model)`).
#[derive(Debug, Clone)]
pub(super) struct Compat {
    pub(super) supports_store: bool,
    pub(super) supports_developer_role: bool,
    pub(super) supports_reasoning_effort: bool,
    pub(super) supports_usage_in_streaming: bool,
    pub(super) supports_finish_reason: bool,
    pub(super) max_tokens_field: String,
    pub(super) requires_tool_result_name: bool,
    pub(super) requires_assistant_after_tool_result: bool,
    pub(super) requires_thinking_as_text: bool,
    pub(super) requires_reasoning_content_on_assistant_messages: bool,
    pub(super) thinking_format: String,
    pub(super) chat_template_kwargs: Map<String, Value>,
    pub(super) chat_template_args: Map<String, Value>,
    pub(super) zai_tool_stream: bool,
    pub(super) supports_thinking_token_budget: bool,
    pub(super) thinking_token_budget_field: Option<String>,
    pub(super) supports_strict_mode: bool,
    pub(super) cache_control_format: Option<String>,
    pub(super) send_session_affinity_headers: bool,
    pub(super) deferred_tools_mode: Option<String>,
    pub(super) session_affinity_format: String,
    pub(super) supports_long_cache_retention: bool,
    pub(super) vllm_priority: Option<Value>,
    /// `model.compat.openRouterRouting` when truthy (any object), sent as `provider`.
    pub(super) open_router_routing: Option<Value>,
    /// `model.compat.vercelGatewayRouting`.
    pub(super) vercel_gateway_routing: Option<Value>,
}

/// pi-ai's `detectCompat`: what the provider name and base URL say about the server.
fn detect(model: &Model) -> Compat {
    let provider = model.provider.as_str();
    let url = model.base_url.as_str();
    let has = |needle: &str| url.contains(needle);
    let is_zai =
        matches!(provider, "zai" | "zai-coding-cn") || has("api.z.ai") || has("open.bigmodel.cn");
    let is_together = provider == "together" || has("api.together.ai") || has("api.together.xyz");
    let is_moonshot = matches!(provider, "moonshotai" | "moonshotai-cn") || has("api.moonshot.");
    let is_open_router = provider == "openrouter" || has("openrouter.ai");
    let is_cloudflare_workers = provider == "cloudflare-workers-ai" || has("api.cloudflare.com");
    let is_cloudflare_gateway =
        provider == "cloudflare-ai-gateway" || has("gateway.ai.cloudflare.com");
    let is_nvidia = provider == "nvidia" || has("integrate.api.nvidia.com");
    let is_ant_ling = provider == "ant-ling" || has("api.ant-ling.com");
    let is_deepseek = provider == "deepseek" || url.to_lowercase().contains("deepseek.com");
    let is_grok = provider == "xai" || has("api.x.ai");
    let is_non_standard = is_nvidia
        || provider == "cerebras"
        || has("cerebras.ai")
        || is_grok
        || is_together
        || has("chutes.ai")
        || is_deepseek
        || is_zai
        || is_moonshot
        || provider == "opencode"
        || has("opencode.ai")
        || is_cloudflare_workers
        || is_cloudflare_gateway
        || is_ant_ling;
    let use_max_tokens = has("chutes.ai")
        || is_deepseek
        || is_moonshot
        || is_cloudflare_gateway
        || is_together
        || is_nvidia
        || is_ant_ling
        || is_zai;
    let developer_role_model =
        is_open_router && (model.id.starts_with("anthropic/") || model.id.starts_with("openai/"));
    let thinking_format = if is_deepseek {
        "deepseek"
    } else if is_zai {
        "zai"
    } else if is_together {
        "together"
    } else if is_ant_ling {
        "ant-ling"
    } else if is_open_router {
        "openrouter"
    } else {
        "openai"
    };
    Compat {
        supports_store: !is_non_standard,
        supports_developer_role: developer_role_model || (!is_non_standard && !is_open_router),
        supports_reasoning_effort: !is_grok
            && !is_zai
            && !is_moonshot
            && !is_together
            && !is_cloudflare_gateway
            && !is_nvidia
            && !is_ant_ling,
        supports_usage_in_streaming: true,
        supports_finish_reason: true,
        max_tokens_field: if use_max_tokens {
            "max_tokens"
        } else {
            "max_completion_tokens"
        }
        .to_owned(),
        requires_tool_result_name: false,
        requires_assistant_after_tool_result: false,
        requires_thinking_as_text: false,
        requires_reasoning_content_on_assistant_messages: is_deepseek,
        thinking_format: thinking_format.to_owned(),
        chat_template_kwargs: Map::new(),
        chat_template_args: Map::new(),
        zai_tool_stream: false,
        supports_thinking_token_budget: false,
        thinking_token_budget_field: None,
        supports_strict_mode: !is_moonshot && !is_together && !is_cloudflare_gateway && !is_nvidia,
        // Only the provider name counts here, not the URL.
        cache_control_format: (provider == "openrouter" && model.id.starts_with("anthropic/"))
            .then(|| "anthropic".to_owned()),
        send_session_affinity_headers: false,
        deferred_tools_mode: None,
        session_affinity_format: if is_open_router {
            "openrouter"
        } else {
            "openai"
        }
        .to_owned(),
        supports_long_cache_retention: !(is_together
            || is_cloudflare_workers
            || is_cloudflare_gateway
            || is_nvidia
            || is_ant_ling),
        vllm_priority: None,
        open_router_routing: None,
        vercel_gateway_routing: None,
    }
}

/// pi-ai's `getCompat`: detection, overridden by each set field of `model.compat`.
///
/// A `compat` whose fields have the wrong JSON types is ignored as a whole (pi-ai would
/// use the odd values as they are).
pub(super) fn resolve(model: &Model) -> Compat {
    let mut compat = detect(model);
    let Some(raw) = model.compat.as_ref() else {
        return compat;
    };
    let set: OpenAiCompletionsCompat = serde_json::from_value(raw.clone()).unwrap_or_default();
    macro_rules! take {
        ($($field:ident),*) => {$(
            if let Some(value) = set.$field { compat.$field = value; }
        )*};
    }
    take!(
        supports_store,
        supports_developer_role,
        supports_reasoning_effort,
        supports_usage_in_streaming,
        supports_finish_reason,
        max_tokens_field,
        requires_tool_result_name,
        requires_assistant_after_tool_result,
        requires_thinking_as_text,
        requires_reasoning_content_on_assistant_messages,
        thinking_format,
        chat_template_kwargs,
        chat_template_args,
        zai_tool_stream,
        supports_thinking_token_budget,
        supports_strict_mode,
        send_session_affinity_headers,
        session_affinity_format,
        supports_long_cache_retention
    );
    if set.thinking_token_budget_field.is_some() {
        compat.thinking_token_budget_field = set.thinking_token_budget_field;
    }
    if set.cache_control_format.is_some() {
        compat.cache_control_format = set.cache_control_format;
    }
    if set.deferred_tools_mode.is_some() {
        compat.deferred_tools_mode = set.deferred_tools_mode;
    }
    compat.vllm_priority = set.vllm_priority.filter(|v| !v.is_null());
    // `buildParams` reads these from the raw `model.compat`, where any object is truthy.
    compat.open_router_routing = raw
        .get("openRouterRouting")
        .filter(|v| super::super::openai_sse::js_truthy(v))
        .cloned();
    compat.vercel_gateway_routing = raw
        .get("vercelGatewayRouting")
        .filter(|v| super::super::openai_sse::js_truthy(v))
        .cloned();
    compat
}

impl Compat {
    /// `resolveThinkingTokenBudgetField`.
    pub(super) fn thinking_token_budget_field(&self) -> Option<&str> {
        match self.thinking_token_budget_field.as_deref() {
            Some(field) if !field.is_empty() => Some(field),
            _ if self.supports_thinking_token_budget => Some("thinking_token_budget"),
            _ => None,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn model(provider: &str, base_url: &str, id: &str) -> Model {
        let mut model = Model::new(id, "openai-completions", provider);
        model.base_url = base_url.to_owned();
        model
    }

    #[test]
    fn openai_itself_is_standard() {
        let c = resolve(&model("openai", "https://api.openai.com/v1", "gpt-4o"));
        assert!(c.supports_store && c.supports_developer_role && c.supports_reasoning_effort);
        assert_eq!(c.max_tokens_field, "max_completion_tokens");
        assert_eq!(c.thinking_format, "openai");
        assert_eq!(c.session_affinity_format, "openai");
    }

    #[test]
    fn servers_are_recognised_by_url() {
        let c = resolve(&model("x", "https://api.deepseek.com/v1", "deepseek-chat"));
        assert!(!c.supports_store && !c.supports_developer_role);
        assert_eq!(c.max_tokens_field, "max_tokens");
        assert_eq!(c.thinking_format, "deepseek");
        assert!(c.requires_reasoning_content_on_assistant_messages);
        let c = resolve(&model("x", "https://api.z.ai/api/paas/v4", "glm-4.6"));
        assert_eq!(c.thinking_format, "zai");
        assert!(!c.supports_reasoning_effort);
        let c = resolve(&model(
            "x",
            "https://openrouter.ai/api/v1",
            "anthropic/claude",
        ));
        assert_eq!(c.thinking_format, "openrouter");
        assert!(c.supports_developer_role);
        assert_eq!(c.session_affinity_format, "openrouter");
        // The cache-control format needs the provider name, not only the URL.
        assert_eq!(c.cache_control_format, None);
        let c = resolve(&model(
            "openrouter",
            "https://openrouter.ai/api/v1",
            "anthropic/x",
        ));
        assert_eq!(c.cache_control_format.as_deref(), Some("anthropic"));
        let c = resolve(&model("x", "https://integrate.api.nvidia.com/v1", "m"));
        assert!(!c.supports_strict_mode && !c.supports_long_cache_retention);
    }

    #[test]
    fn model_compat_overrides_detection() {
        let mut m = model("llama-cpp", "http://127.0.0.1:8080/v1", "qwen");
        m.compat = Some(json!({
            "supportsFinishReason": false,
            "maxTokensField": "max_tokens",
            "thinkingTokenBudgetField": "thinking_budget_tokens",
            "openRouterRouting": {},
            "somethingElse": 1
        }));
        let c = resolve(&m);
        assert!(!c.supports_finish_reason);
        assert!(c.supports_store);
        assert_eq!(c.max_tokens_field, "max_tokens");
        assert_eq!(
            c.thinking_token_budget_field(),
            Some("thinking_budget_tokens")
        );
        assert_eq!(c.open_router_routing, Some(json!({})));
    }
}
