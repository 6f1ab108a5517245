//! One request, prepared before anything is sent: pi-ai's `streamSimple` option mapping
//! (reasoning to a thinking budget or an effort, output cap clamped to the context), the
//! auth check, `getCacheControl`, `getBetaFeatures`, then the body and the headers.

use serde_json::{Value, json};

use super::body::{BodyInputs, build_params};
use super::compat::AnthropicCompat;
use super::headers::{Auth, HeaderInputs, HeaderSource, request_headers};
use crate::model::{ApiKey, CacheRetention, Context, Message, Model, StreamOptions, ThinkingLevel};
use crate::providers::env::resolve_api_key;
use crate::providers::http::user_agent;
use crate::providers::options::{
    adjust_max_tokens_for_thinking, base_max_tokens, cache_retention, clamp_max_tokens_to_context,
};
use pi_tool_core::Content;

const FINE_GRAINED_TOOL_STREAMING_BETA: &str = "fine-grained-tool-streaming-2025-05-14";
const INTERLEAVED_THINKING_BETA: &str = "interleaved-thinking-2025-05-14";
const SERVER_SIDE_FALLBACK_BETA: &str = "server-side-fallback-2026-07-01";
const MID_CONVERSATION_OUTPUT_CONFIG_BETA: &str = "mid-conversation-output-config-2026-07-01";
const THINKING_BINDING_CONTROLS_BETA: &str = "thinking-binding-controls-2026-08-01";

/// Everything the streaming half needs.
pub(super) struct Prepared {
    pub(super) url: String,
    pub(super) headers: Vec<(String, String)>,
    pub(super) body: Vec<u8>,
    /// OAuth stealth mode: tool names come back in Claude Code casing.
    pub(super) oauth: bool,
    /// The context's tool names (to map Claude Code names back).
    pub(super) tool_names: Vec<String>,
    pub(super) compat: AnthropicCompat,
    /// `providerThinkingLevel` of the output (managed-effort models).
    pub(super) provider_thinking_level: Option<String>,
    /// The key, to scrub from error texts (a server may echo it back).
    pub(super) secret: Option<ApiKey>,
}

/// What `streamSimple` hands to `stream` (pi-ai's `AnthropicOptions` subset we use).
struct Resolved {
    max_tokens: u64,
    thinking_enabled: bool,
    thinking_budget_tokens: Option<u64>,
    effort: Option<String>,
}

/// `mapThinkingLevelToEffort`.
fn effort_for(model: &Model, level: ThinkingLevel) -> String {
    let name = level_name(level);
    if let Some(Value::String(mapped)) = model.thinking_level_map.as_ref().and_then(|m| m.get(name))
    {
        return mapped.clone();
    }
    match level {
        ThinkingLevel::Minimal | ThinkingLevel::Low => "low",
        ThinkingLevel::Medium => "medium",
        _ => "high",
    }
    .to_owned()
}

fn level_name(level: ThinkingLevel) -> &'static str {
    match level {
        ThinkingLevel::Off => "off",
        ThinkingLevel::Minimal => "minimal",
        ThinkingLevel::Low => "low",
        ThinkingLevel::Medium => "medium",
        ThinkingLevel::High => "high",
        ThinkingLevel::Xhigh => "xhigh",
    }
}

/// `streamSimple`'s mapping. `reasoning: Off` counts as no reasoning (Pi's agent passes
/// no level when thinking is off).
fn resolve(
    model: &Model,
    context: &Context,
    options: &StreamOptions,
    compat: &AnthropicCompat,
) -> Resolved {
    let base = base_max_tokens(model, context, options);
    let level = options.reasoning.filter(|l| *l != ThinkingLevel::Off);
    let Some(level) = level else {
        return Resolved {
            max_tokens: base,
            thinking_enabled: false,
            thinking_budget_tokens: None,
            effort: None,
        };
    };
    if compat.force_adaptive_thinking {
        return Resolved {
            max_tokens: base,
            thinking_enabled: true,
            thinking_budget_tokens: None,
            effort: Some(effort_for(model, level)),
        };
    }
    let (adjusted, budget) =
        adjust_max_tokens_for_thinking(Some(base), model.max_tokens, level, None);
    let max_tokens = clamp_max_tokens_to_context(model, context, adjusted);
    Resolved {
        max_tokens,
        thinking_enabled: true,
        thinking_budget_tokens: Some(budget.min(max_tokens.saturating_sub(1024))),
        effort: None,
    }
}

/// `hasHeader`: a caller header with this name and a non-blank value.
fn has_header(options: &StreamOptions, name: &str) -> bool {
    options.headers.iter().any(|(key, value)| {
        key.eq_ignore_ascii_case(name)
            && value
                .as_deref()
                .is_some_and(|v| !crate::js::js_trim(v).is_empty())
    })
}

/// The credentials: the options' key, else the provider's environment variable, else a
/// caller header that authenticates (`assertRequestAuth`).
fn resolve_auth(model: &Model, options: &StreamOptions) -> Result<(Auth, bool), String> {
    match resolve_api_key(model, options) {
        Ok(key) => {
            let oauth = key.expose().contains("sk-ant-oat");
            if model.provider == "github-copilot" {
                Ok((Auth::Bearer(key), false))
            } else if oauth {
                Ok((Auth::Bearer(key), true))
            } else {
                Ok((Auth::ApiKey(key), false))
            }
        }
        Err(message) => {
            if ["authorization", "x-api-key", "cf-aig-authorization"]
                .iter()
                .any(|name| has_header(options, name))
            {
                Ok((Auth::None, false))
            } else {
                Err(message)
            }
        }
    }
}

/// `getBetaFeatures`: a caller's `anthropic-beta` header (model or options, last one
/// found) replaces pi-ai's list; `None` there sends none.
fn beta_features(
    model: &Model,
    context: &Context,
    oauth: bool,
    thinking_enabled: bool,
    options: &StreamOptions,
    compat: &AnthropicCompat,
) -> Vec<String> {
    let mut configured: Option<Option<String>> = None;
    for (name, value) in model.headers.iter().flatten() {
        if name.eq_ignore_ascii_case("anthropic-beta") {
            configured = Some(Some(value.clone()));
        }
    }
    for (name, value) in &options.headers {
        if name.eq_ignore_ascii_case("anthropic-beta") {
            configured = Some(value.clone());
        }
    }
    let mut features: Vec<String> = Vec::new();
    let mut add = |feature: &str| {
        if !feature.is_empty() && !features.iter().any(|f| f == feature) {
            features.push(feature.to_owned());
        }
    };
    match configured {
        Some(None) => {}
        Some(Some(list)) => list.split(',').map(str::trim).for_each(&mut add),
        None => {
            if oauth {
                add("claude-code-20250219");
                add("oauth-2025-04-20");
            }
            if !context.tools.is_empty() && !compat.supports_eager_tool_input_streaming {
                add(FINE_GRAINED_TOOL_STREAMING_BETA);
            }
            if model.reasoning && thinking_enabled && !compat.force_adaptive_thinking {
                add(INTERLEAVED_THINKING_BETA);
            }
            if !compat.allowed_fallback_models.is_empty() {
                add(SERVER_SIDE_FALLBACK_BETA);
            }
            if compat.mid_convo_effort {
                add(MID_CONVERSATION_OUTPUT_CONFIG_BETA);
                add(THINKING_BINDING_CONTROLS_BETA);
            }
        }
    }
    features
}

/// GitHub Copilot's dynamic headers (`buildCopilotDynamicHeaders`).
fn copilot_headers(context: &Context) -> HeaderSource {
    let initiator = match context.messages.last() {
        Some(message) if !matches!(message, Message::User(_)) => "agent",
        _ => "user",
    };
    let mut headers = vec![
        ("X-Initiator".to_owned(), Some(initiator.to_owned())),
        (
            "Openai-Intent".to_owned(),
            Some("conversation-edits".to_owned()),
        ),
    ];
    let has_images = context.messages.iter().any(|m| {
        let content = match m {
            Message::User(user) => &user.content,
            Message::ToolResult(result) => &result.content,
            Message::Assistant(_) => return false,
        };
        content.iter().any(|c| matches!(c, Content::Image { .. }))
    });
    if has_images {
        headers.push(("Copilot-Vision-Request".to_owned(), Some("true".to_owned())));
    }
    headers
}

/// `baseURL + "/v1/messages?beta=true"` as the SDK joins them.
fn messages_url(base_url: &str) -> String {
    let base = if base_url.is_empty() {
        "https://api.anthropic.com"
    } else {
        base_url
    };
    let path = if base.ends_with('/') {
        "v1/messages?beta=true"
    } else {
        "/v1/messages?beta=true"
    };
    format!("{base}{path}")
}

/// Builds the request; the error is pi-ai's missing-key failure.
pub(super) fn prepare(
    model: &Model,
    context: &Context,
    options: &StreamOptions,
) -> Result<Prepared, String> {
    let (auth, oauth) = resolve_auth(model, options)?;
    let compat = AnthropicCompat::of(model);
    let resolved = resolve(model, context, options, &compat);
    let retention = cache_retention(options);
    let cache_control = match retention {
        CacheRetention::None => None,
        CacheRetention::Long if compat.supports_long_cache_retention => {
            Some(json!({"type": "ephemeral", "ttl": "1h"}))
        }
        _ => Some(json!({"type": "ephemeral"})),
    };
    let betas = beta_features(
        model,
        context,
        oauth,
        resolved.thinking_enabled,
        options,
        &compat,
    );
    let body = build_params(
        model,
        context,
        &compat,
        &BodyInputs {
            oauth,
            cache_control,
            max_tokens: resolved.max_tokens,
            betas: &betas,
            temperature: options.temperature,
            thinking_enabled: resolved.thinking_enabled,
            thinking_budget_tokens: resolved.thinking_budget_tokens,
            effort: resolved.effort.clone(),
            metadata: options.metadata.as_ref(),
            tool_choice: options.tool_choice.as_ref(),
        },
    );
    let session_affinity = match retention {
        CacheRetention::None => None,
        _ => options.session_id.as_deref(),
    }
    .filter(|s| !s.is_empty() && compat.send_session_affinity_headers);
    let copilot = if model.provider == "github-copilot" {
        copilot_headers(context)
    } else {
        Vec::new()
    };
    let headers = request_headers(&HeaderInputs {
        model,
        auth: &auth,
        oauth,
        user_agent: user_agent(),
        session_affinity,
        copilot,
        options_headers: options
            .headers
            .iter()
            .map(|(n, v)| (n.clone(), v.clone()))
            .collect(),
        betas: (!betas.is_empty()).then(|| betas.join(",")),
    });
    let provider_thinking_level = compat
        .mid_convo_effort
        .then(|| resolved.effort.clone().unwrap_or_else(|| "high".to_owned()));
    Ok(Prepared {
        url: messages_url(&model.base_url),
        headers,
        body: serde_json::to_vec(&body).unwrap_or_default(),
        oauth,
        tool_names: context.tools.iter().map(|t| t.name().to_owned()).collect(),
        compat,
        provider_thinking_level,
        secret: match auth {
            Auth::ApiKey(key) | Auth::Bearer(key) => Some(key),
            Auth::None => None,
        },
    })
}
