//! The request pi-ai's `openai-completions` `streamSimple` sends: `buildParams` (the
//! body), `createClient` (the headers, through the `openai` SDK's header order) and the
//! SDK's URL.

use serde_json::{Map, Value, json};

use super::cache::{apply_anthropic_cache_control, cache_control};
use super::compat::Compat;
use super::messages::{convert_messages, convert_tools};
use super::thinking::{apply_thinking, clamp_thinking_level, thinking_budget};
use crate::AgentTool;
use crate::model::{ApiKey, CacheRetention, Context, Message, Model, StreamOptions, ToolChoice};
use crate::providers::http::user_agent;
use crate::providers::options::{base_max_tokens, cache_retention, merged_sampling_params};

/// What `streamSimple` resolved before the request: the body and where it goes.
pub(super) struct Prepared {
    pub(super) url: String,
    pub(super) headers: Vec<(String, String)>,
    pub(super) body: Vec<u8>,
    pub(super) compat: Compat,
    /// The key the headers carry, to keep it out of error texts.
    pub(super) api_key: ApiKey,
}

/// Everything `streamSimple` needs, or the error pi-ai throws before any request.
pub(super) fn prepare(
    model: &Model,
    context: &Context,
    options: &StreamOptions,
    api_key: &ApiKey,
) -> Result<Prepared, String> {
    let compat = super::compat::resolve(model);
    let retention = cache_retention(options);
    let effort = options
        .reasoning
        .map(|level| clamp_thinking_level(model, level))
        .filter(|level| *level != "off");
    let body = build_params(model, context, options, &compat, retention, effort);
    let session = options
        .session_id
        .as_deref()
        .filter(|_| retention != CacheRetention::None);
    Ok(Prepared {
        url: chat_completions_url(&model.base_url),
        headers: headers(model, context, options, &compat, session, api_key),
        body: crate::js::stringify(&Value::Object(body)).into_bytes(),
        compat,
        api_key: api_key.clone(),
    })
}

/// The SDK's `buildURL`: the base URL (default OpenAI's) plus `/chat/completions`.
fn chat_completions_url(base_url: &str) -> String {
    let base = if base_url.is_empty() {
        "https://api.openai.com/v1"
    } else {
        base_url
    };
    if base.ends_with('/') {
        format!("{base}chat/completions")
    } else {
        format!("{base}/chat/completions")
    }
}

/// The header list the SDK builds: its own defaults, the bearer key, pi's default
/// headers (user agent, model headers, session affinity, caller headers; a `None` caller
/// value removes the header), then the body's content type. Names are compared
/// case-insensitively; a later value replaces an earlier one.
fn headers(
    model: &Model,
    context: &Context,
    options: &StreamOptions,
    compat: &Compat,
    session: Option<&str>,
    api_key: &ApiKey,
) -> Vec<(String, String)> {
    let mut list = HeaderList::default();
    list.set("accept", Some("application/json".to_owned()));
    list.set("user-agent", Some("OpenAI/JS 6.40.0".to_owned()));
    // The SDK reads these from the environment when pi-ai passes no organization.
    for (name, var) in [
        ("openai-organization", "OPENAI_ORG_ID"),
        ("openai-project", "OPENAI_PROJECT_ID"),
    ] {
        if let Ok(value) = std::env::var(var) {
            list.set(name, Some(value));
        }
    }
    list.set(
        "authorization",
        Some(format!("Bearer {}", api_key.expose())),
    );
    list.set("user-agent", Some(user_agent()));
    for (name, value) in model.headers.iter().flatten() {
        list.set(name, Some(value.clone()));
    }
    if model.provider == "github-copilot" {
        copilot_headers(&context.messages, &mut list);
    }
    if let Some(session) = session.filter(|_| compat.send_session_affinity_headers) {
        if compat.session_affinity_format == "openrouter" {
            list.set("x-session-id", Some(session.to_owned()));
        } else {
            if compat.session_affinity_format == "openai" {
                list.set("session_id", Some(session.to_owned()));
            }
            list.set("x-client-request-id", Some(session.to_owned()));
            list.set("x-session-affinity", Some(session.to_owned()));
        }
    }
    for (name, value) in &options.headers {
        list.set(name, value.clone());
    }
    list.set("content-type", Some("application/json".to_owned()));
    list.0
}

/// `buildCopilotDynamicHeaders`: who initiated the turn (the user when the last message
/// is theirs), the intent, and whether images are sent.
fn copilot_headers(messages: &[Message], list: &mut HeaderList) {
    let initiator = match messages.last() {
        Some(message) if !matches!(message, Message::User(_)) => "agent",
        _ => "user",
    };
    list.set("x-initiator", Some(initiator.to_owned()));
    list.set("openai-intent", Some("conversation-edits".to_owned()));
    let image = |content: &[pi_tool_core::Content]| {
        content
            .iter()
            .any(|c| matches!(c, pi_tool_core::Content::Image { .. }))
    };
    let vision = messages.iter().any(|message| match message {
        Message::User(user) => !user.plain_text && image(&user.content),
        Message::ToolResult(result) => image(&result.content),
        Message::Assistant(_) => false,
    });
    if vision {
        list.set("copilot-vision-request", Some("true".to_owned()));
    }
}

/// Headers by lower-cased name, in first-set order.
#[derive(Default)]
struct HeaderList(Vec<(String, String)>);

impl HeaderList {
    fn set(&mut self, name: &str, value: Option<String>) {
        let name = name.to_ascii_lowercase();
        self.0.retain(|(n, _)| *n != name);
        if let Some(value) = value {
            self.0.push((name, value));
        }
    }
}

/// Whether a caller header `name` is set to a non-blank value (pi-ai's `hasHeader`).
pub(super) fn has_header(options: &StreamOptions, name: &str) -> bool {
    options.headers.iter().any(|(key, value)| {
        key.eq_ignore_ascii_case(name)
            && value
                .as_deref()
                .is_some_and(|v| !crate::js::js_trim(v).is_empty())
    })
}

fn has_tool_history(messages: &[Message]) -> bool {
    messages.iter().any(|message| match message {
        Message::ToolResult(_) => true,
        Message::Assistant(assistant) => assistant
            .content
            .iter()
            .any(|block| matches!(block, crate::model::AssistantContent::ToolCall(_))),
        Message::User(_) => false,
    })
}

/// `buildParams`.
fn build_params(
    model: &Model,
    context: &Context,
    options: &StreamOptions,
    compat: &Compat,
    retention: CacheRetention,
    effort: Option<&'static str>,
) -> Map<String, Value> {
    let mut messages = convert_messages(model, context, compat);
    let cache_control = cache_control(compat, retention);
    let mut params = Map::new();
    params.insert("model".into(), json!(model.id));
    params.insert("messages".into(), Value::Null);
    params.insert("stream".into(), json!(true));
    let long = retention == CacheRetention::Long && compat.supports_long_cache_retention;
    if ((model.base_url.contains("api.openai.com") && retention != CacheRetention::None) || long)
        && let Some(session) = &options.session_id
    {
        // `clampOpenAIPromptCacheKey`: at most 64 code points.
        let key: String = session.chars().take(64).collect();
        params.insert("prompt_cache_key".into(), json!(key));
    }
    if long {
        params.insert("prompt_cache_retention".into(), json!("24h"));
    }
    if compat.supports_usage_in_streaming {
        params.insert("stream_options".into(), json!({"include_usage": true}));
    }
    if compat.supports_store {
        params.insert("store".into(), json!(false));
    }
    let max_tokens = base_max_tokens(model, context, options);
    if max_tokens > 0 {
        let field = if compat.max_tokens_field == "max_tokens" {
            "max_tokens"
        } else {
            "max_completion_tokens"
        };
        params.insert(field.into(), json!(max_tokens));
    }
    if let Some(temperature) = options.temperature {
        params.insert("temperature".into(), crate::js::number_value(temperature));
    }
    let deferred = if compat.deferred_tools_mode.as_deref() == Some("kimi") {
        deferred_tool_names(&context.messages)
    } else {
        Vec::new()
    };
    let active: Vec<&std::sync::Arc<dyn AgentTool>> = context
        .tools
        .iter()
        .filter(|tool| !deferred.iter().any(|name| name == tool.name()))
        .collect();
    let mut tools = None;
    if !active.is_empty() {
        tools = Some(convert_tools(active.into_iter(), compat));
        if compat.zai_tool_stream {
            params.insert("tool_stream".into(), json!(true));
        }
    } else if has_tool_history(&context.messages) {
        tools = Some(Vec::new());
    }
    if let Some(control) = &cache_control {
        apply_anthropic_cache_control(&mut messages, tools.as_mut(), control);
    }
    params.insert("messages".into(), Value::Array(messages));
    if let Some(tools) = tools {
        params.insert("tools".into(), Value::Array(tools));
    }
    if let Some(choice) = &options.tool_choice {
        params.insert("tool_choice".into(), tool_choice(choice));
    }
    if let Some(priority) = &compat.vllm_priority {
        params.insert("priority".into(), priority.clone());
    }
    let budget = thinking_budget(model, effort, max_tokens);
    apply_thinking(&mut params, model, compat, effort, budget);
    if let (Some(field), Some(budget)) = (compat.thinking_token_budget_field(), budget) {
        params.insert(field.to_owned(), json!(budget));
    }
    if let Some(routing) = &compat.open_router_routing {
        params.insert("provider".into(), routing.clone());
    }
    if let Some(routing) = &compat.vercel_gateway_routing {
        let truthy = |key: &str| {
            routing
                .get(key)
                .filter(|v| crate::providers::openai_sse::js_truthy(v))
                .cloned()
        };
        let (only, order) = (truthy("only"), truthy("order"));
        if only.is_some() || order.is_some() {
            let mut gateway = Map::new();
            if let Some(only) = only {
                gateway.insert("only".into(), only);
            }
            if let Some(order) = order {
                gateway.insert("order".into(), order);
            }
            params.insert("providerOptions".into(), json!({"gateway": gateway}));
        }
    }
    // Last, so the caller's keys override the named fields.
    for (key, value) in merged_sampling_params(model, options).into_iter().flatten() {
        params.insert(key, value);
    }
    params
}

fn tool_choice(choice: &ToolChoice) -> Value {
    match choice {
        ToolChoice::Auto => json!("auto"),
        ToolChoice::None => json!("none"),
        ToolChoice::Required => json!("required"),
        ToolChoice::Tool(name) => json!({"type": "function", "function": {"name": name}}),
        #[allow(unreachable_patterns)]
        _ => json!("auto"),
    }
}

/// Names announced by tool results (`addedToolNames`), for Kimi's deferred tools.
fn deferred_tool_names(messages: &[Message]) -> Vec<String> {
    let mut names: Vec<String> = Vec::new();
    for message in messages {
        if let Message::ToolResult(result) = message {
            for name in result.added_tool_names.iter().flatten() {
                if !names.contains(name) {
                    names.push(name.clone());
                }
            }
        }
    }
    names
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_url_joins_like_the_sdk() {
        assert_eq!(
            chat_completions_url("http://h/v1"),
            "http://h/v1/chat/completions"
        );
        assert_eq!(
            chat_completions_url("http://h/v1/"),
            "http://h/v1/chat/completions"
        );
        assert_eq!(
            chat_completions_url(""),
            "https://api.openai.com/v1/chat/completions"
        );
    }
}
