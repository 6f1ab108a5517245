//! The HTTP request pi-ai's `streamSimple` makes for `openai-responses`: `buildParams`
//! (the JSON body), `createClient` (pi's headers) and the `openai` SDK's header layering
//! and URL joining.

use std::collections::BTreeMap;

use serde_json::{Map, Value, json};

use super::OpenAiResponsesCompat;
use super::convert::{
    ConvertOptions, DeferredToolsMode, ToolOptions, WireTool, convert_messages, convert_tools,
    split_deferred_tools,
};
use crate::js;
use crate::model::{
    ApiKey, CacheRetention, Context, Message, Model, StreamOptions, ThinkingLevel, ToolChoice,
};
use crate::providers::http::user_agent;
use crate::providers::options::{base_max_tokens, cache_retention, merged_sampling_params};
use pi_tool_core::Content;

/// OpenAI Responses rejects `max_output_tokens` below 16.
const MIN_OUTPUT_TOKENS: u64 = 16;
/// `clampOpenAIPromptCacheKey`: at most 64 code points.
const PROMPT_CACHE_KEY_MAX_CHARS: usize = 64;
/// The `openai` SDK's base URL when none is given.
const DEFAULT_BASE_URL: &str = "https://api.openai.com/v1";

/// A request ready to send.
pub(super) struct Request {
    pub(super) url: String,
    /// Final headers, one entry per lower-case name.
    pub(super) headers: Vec<(String, String)>,
    /// `JSON.stringify(params)`.
    pub(super) body: Vec<u8>,
}

impl std::fmt::Debug for Request {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        // Headers hold the key.
        f.debug_struct("Request")
            .field("url", &self.url)
            .field(
                "headers",
                &self.headers.iter().map(|(n, _)| n).collect::<Vec<_>>(),
            )
            .finish_non_exhaustive()
    }
}

/// Builds the request. Err is what pi-ai throws while building it (a thinking signature
/// that is not JSON, an invalid base URL).
pub(super) fn build_request(
    model: &Model,
    context: &Context,
    options: &StreamOptions,
    compat: &OpenAiResponsesCompat,
    api_key: &ApiKey,
) -> Result<Request, String> {
    let cache_retention = cache_retention(options);
    let body = build_params(model, context, options, compat, cache_retention)?;
    let url = request_url(&model.base_url)?;
    let session_id = options
        .session_id
        .as_deref()
        .filter(|id| !id.is_empty() && cache_retention != CacheRetention::None);
    let headers = build_headers(model, context, options, compat, api_key, session_id);
    Ok(Request {
        url,
        headers,
        body: js::stringify(&Value::Object(body)).into_bytes(),
    })
}

/// `baseURL + "/responses"` as the SDK joins it, checked as `new URL` checks it.
fn request_url(base_url: &str) -> Result<String, String> {
    let base = if base_url.is_empty() {
        DEFAULT_BASE_URL
    } else {
        base_url
    };
    let url = if base.ends_with('/') {
        format!("{base}responses")
    } else {
        format!("{base}/responses")
    };
    match reqwest::Url::parse(&url) {
        Ok(_) => Ok(url),
        Err(_) => Err("Invalid URL".to_owned()),
    }
}

/// pi-ai's `buildParams` with `streamSimple`'s options.
fn build_params(
    model: &Model,
    context: &Context,
    options: &StreamOptions,
    compat: &OpenAiResponsesCompat,
    cache_retention: CacheRetention,
) -> Result<Map<String, Value>, String> {
    let deferred_mode = if compat.supports_additional_tools.unwrap_or(false) {
        Some(DeferredToolsMode::AdditionalTools)
    } else if compat.supports_tool_search.unwrap_or(false) {
        Some(DeferredToolsMode::ToolSearch)
    } else {
        None
    };
    let tools: Vec<WireTool<'_>> = context
        .tools
        .iter()
        .map(|tool| WireTool {
            name: tool.name(),
            description: &tool.spec().description,
            parameters: tool.spec().parameters.json(),
        })
        .collect();
    let placement = split_deferred_tools(&tools, &context.messages, deferred_mode.is_some());
    let tool_options = ToolOptions {
        supports_strict_mode: compat.supports_strict_mode.unwrap_or(false),
        defer_loading: false,
    };
    let input = convert_messages(
        model,
        &context.messages,
        &ConvertOptions {
            system_prompt: &context.system_prompt,
            deferred_tools: &placement.deferred,
            deferred_tools_mode: deferred_mode,
            tool_options,
        },
    )?;

    let mut params = Map::new();
    params.insert("model".into(), json!(model.id));
    params.insert("input".into(), Value::Array(input));
    params.insert("stream".into(), Value::Bool(true));
    if cache_retention != CacheRetention::None
        && let Some(session_id) = options.session_id.as_deref()
    {
        let key: String = session_id
            .chars()
            .take(PROMPT_CACHE_KEY_MAX_CHARS)
            .collect();
        params.insert("prompt_cache_key".into(), json!(key));
    }
    if cache_retention == CacheRetention::Long
        && compat.supports_long_cache_retention.unwrap_or(true)
    {
        params.insert("prompt_cache_retention".into(), json!("24h"));
    }
    if cache_retention == CacheRetention::None
        && compat.supports_explicit_prompt_cache_mode.unwrap_or(false)
    {
        params.insert("prompt_cache_options".into(), json!({"mode": "explicit"}));
    }
    params.insert("store".into(), Value::Bool(false));

    let max_tokens = base_max_tokens(model, context, options);
    if max_tokens > 0 && compat.supports_max_output_tokens.unwrap_or(true) {
        params.insert(
            "max_output_tokens".into(),
            json!(max_tokens.max(MIN_OUTPUT_TOKENS)),
        );
    }
    if let Some(temperature) = options.temperature {
        params.insert("temperature".into(), json!(temperature));
    }
    if !placement.immediate.is_empty() {
        params.insert(
            "tools".into(),
            Value::Array(convert_tools(&placement.immediate, tool_options)),
        );
    }
    if let Some(choice) = &options.tool_choice {
        params.insert("tool_choice".into(), tool_choice(choice));
    }
    if model.reasoning {
        let effort = options
            .reasoning
            .map(|level| clamp_thinking_level(model, level_name(level)))
            .filter(|level| *level != "off");
        let level_map = model.thinking_level_map.as_ref();
        if let Some(effort) = effort {
            let mapped = level_map
                .and_then(|map| map.get(effort))
                .filter(|v| !v.is_null())
                .cloned()
                .unwrap_or_else(|| json!(effort));
            params.insert(
                "reasoning".into(),
                json!({"effort": mapped, "summary": "auto"}),
            );
            params.insert("include".into(), json!(["reasoning.encrypted_content"]));
        } else if model.provider != "github-copilot"
            && level_map.and_then(|map| map.get("off")) != Some(&Value::Null)
        {
            let off = level_map
                .and_then(|map| map.get("off"))
                .cloned()
                .unwrap_or_else(|| json!("none"));
            params.insert("reasoning".into(), json!({"effort": off}));
        }
        if model.provider == "xai" {
            params.insert("include".into(), json!(["reasoning.encrypted_content"]));
        }
    }
    // Last, so custom keys override the named request fields.
    for (key, value) in merged_sampling_params(model, options).into_iter().flatten() {
        params.insert(key, value);
    }
    Ok(params)
}

/// `toolChoice` in the Responses wire form.
fn tool_choice(choice: &ToolChoice) -> Value {
    match choice {
        ToolChoice::None => json!("none"),
        ToolChoice::Required => json!("required"),
        ToolChoice::Tool(name) => json!({"type": "function", "name": name}),
        _ => json!("auto"),
    }
}

/// pi-ai's thinking levels, in order (`EXTENDED_THINKING_LEVELS`).
const THINKING_LEVELS: [&str; 7] = ["off", "minimal", "low", "medium", "high", "xhigh", "max"];

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

/// `clampThinkingLevel(model, level)`: the level if the model supports it, else the
/// nearest supported one above it, else below it.
fn clamp_thinking_level(model: &Model, level: &'static str) -> &'static str {
    let map = model.thinking_level_map.as_ref();
    let supported: Vec<&'static str> = if !model.reasoning {
        vec!["off"]
    } else {
        THINKING_LEVELS
            .into_iter()
            .filter(|level| match map.and_then(|m| m.get(*level)) {
                Some(Value::Null) => false,
                mapped => !matches!(*level, "xhigh" | "max") || mapped.is_some(),
            })
            .collect()
    };
    if supported.contains(&level) {
        return level;
    }
    let Some(requested) = THINKING_LEVELS.iter().position(|l| *l == level) else {
        return supported.first().copied().unwrap_or("off");
    };
    THINKING_LEVELS[requested..]
        .iter()
        .chain(THINKING_LEVELS[..requested].iter().rev())
        .find(|l| supported.contains(l))
        .copied()
        .unwrap_or_else(|| supported.first().copied().unwrap_or("off"))
}

/// The headers: the SDK's defaults, its auth header, the client's default headers
/// (`OPENAI_CUSTOM_HEADERS`, then pi's), the JSON content type, in the SDK's layers.
fn build_headers(
    model: &Model,
    context: &Context,
    options: &StreamOptions,
    compat: &OpenAiResponsesCompat,
    api_key: &ApiKey,
    session_id: Option<&str>,
) -> Vec<(String, String)> {
    let mut headers = HeaderLayers::default();
    let mut sdk: Layer = vec![
        ("Accept".into(), Some("application/json".into())),
        ("User-Agent".into(), Some("OpenAI/JS 6.40.0".into())),
    ];
    for (name, var) in [
        ("OpenAI-Organization", "OPENAI_ORG_ID"),
        ("OpenAI-Project", "OPENAI_PROJECT_ID"),
    ] {
        if let Some(value) = env_value(var) {
            sdk.push((name.into(), Some(value)));
        }
    }
    headers.apply(&sdk);
    headers.apply(&vec![(
        "Authorization".into(),
        Some(format!("Bearer {}", api_key.expose())),
    )]);
    if let Some(custom) = env_value("OPENAI_CUSTOM_HEADERS") {
        let mut layer = JsObject::default();
        for line in custom.split('\n') {
            if let Some((name, value)) = line.split_once(':') {
                layer.set(name.trim(), Some(value.trim().to_owned()));
            }
        }
        headers.apply(&layer.0);
    }
    headers.apply(&pi_headers(model, context, options, compat, session_id).0);
    headers.apply(&vec![(
        "content-type".into(),
        Some("application/json".into()),
    )]);
    headers.finish()
}

/// `readEnv`: set and not empty after trimming.
fn env_value(name: &str) -> Option<String> {
    std::env::var(name)
        .ok()
        .map(|v| v.trim().to_owned())
        .filter(|v| !v.is_empty())
}

/// `createClient`'s `defaultHeaders`: pi's user agent, the model's headers, GitHub
/// Copilot's dynamic headers, the session-affinity headers, the caller's headers.
fn pi_headers(
    model: &Model,
    context: &Context,
    options: &StreamOptions,
    compat: &OpenAiResponsesCompat,
    session_id: Option<&str>,
) -> JsObject {
    let mut headers = JsObject::default();
    headers.set("User-Agent", Some(user_agent()));
    for (name, value) in model.headers.iter().flat_map(BTreeMap::iter) {
        headers.set(name, Some(value.clone()));
    }
    if model.provider == "github-copilot" {
        let initiator = match context.messages.last() {
            Some(message) if !matches!(message, Message::User(_)) => "agent",
            _ => "user",
        };
        headers.set("X-Initiator", Some(initiator.into()));
        headers.set("Openai-Intent", Some("conversation-edits".into()));
        if has_images(&context.messages) {
            headers.set("Copilot-Vision-Request", Some("true".into()));
        }
    }
    if let Some(session_id) = session_id {
        let format = compat.session_affinity_format.as_deref().unwrap_or(
            if model.provider == "openrouter" || model.base_url.contains("openrouter.ai") {
                "openrouter"
            } else {
                "openai"
            },
        );
        if format == "openrouter" {
            headers.set("x-session-id", Some(session_id.into()));
        } else {
            if format == "openai" {
                headers.set("session_id", Some(session_id.into()));
            }
            headers.set("x-client-request-id", Some(session_id.into()));
        }
    }
    for (name, value) in &options.headers {
        headers.set(name, value.clone());
    }
    headers
}

fn has_images(messages: &[Message]) -> bool {
    let image = |c: &Content| matches!(c, Content::Image { .. });
    messages.iter().any(|m| match m {
        Message::User(user) => user.content.iter().any(image),
        Message::ToolResult(result) => result.content.iter().any(image),
        Message::Assistant(_) => false,
    })
}

/// One layer of headers: names as given, `None` removes the header.
type Layer = Vec<(String, Option<String>)>;

/// A JavaScript object of headers: keys are case-sensitive, assigning an existing key
/// keeps its place.
#[derive(Default)]
struct JsObject(Layer);

impl JsObject {
    fn set(&mut self, name: &str, value: Option<String>) {
        match self.0.iter_mut().find(|(n, _)| n == name) {
            Some(entry) => entry.1 = value,
            None => self.0.push((name.to_owned(), value)),
        }
    }
}

/// The SDK's `buildHeaders` over plain-object layers: each key replaces what earlier
/// keys of the same name (in any case) set, and `null` removes the header.
#[derive(Default)]
struct HeaderLayers {
    /// (lower-case name, value), in insertion order.
    values: Vec<(String, String)>,
}

impl HeaderLayers {
    fn apply(&mut self, layer: &Layer) {
        for (name, value) in layer {
            let lower = name.to_ascii_lowercase();
            self.values.retain(|(n, _)| *n != lower);
            if let Some(value) = value {
                self.values.push((lower, value.clone()));
            }
        }
    }

    fn finish(self) -> Vec<(String, String)> {
        self.values
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn reasoning_model() -> Model {
        let mut model = Model::new("gpt-5-mini", "openai-responses", "openai");
        model.reasoning = true;
        model
    }

    #[test]
    fn thinking_levels_clamp_to_what_the_model_supports() {
        let mut model = reasoning_model();
        assert_eq!(clamp_thinking_level(&model, "medium"), "medium");
        // xhigh needs an explicit mapping.
        assert_eq!(clamp_thinking_level(&model, "xhigh"), "high");
        let mut map = Map::new();
        map.insert("high".into(), Value::Null);
        map.insert("medium".into(), Value::Null);
        model.thinking_level_map = Some(map);
        assert_eq!(clamp_thinking_level(&model, "high"), "low");
        model.reasoning = false;
        assert_eq!(clamp_thinking_level(&model, "high"), "off");
    }

    #[test]
    fn header_layers_replace_case_insensitively_and_null_removes() {
        let mut headers = HeaderLayers::default();
        headers.apply(&vec![
            ("Accept".into(), Some("application/json".into())),
            ("User-Agent".into(), Some("sdk".into())),
        ]);
        headers.apply(&vec![
            ("user-agent".into(), Some("pi".into())),
            ("X-A".into(), Some("1".into())),
            ("x-a".into(), Some("2".into())),
            ("accept".into(), None),
        ]);
        assert_eq!(
            headers.finish(),
            vec![
                ("user-agent".to_owned(), "pi".to_owned()),
                ("x-a".to_owned(), "2".to_owned())
            ]
        );
    }

    #[test]
    fn urls_join_like_the_sdk() {
        assert_eq!(
            request_url("http://127.0.0.1:1/v1").unwrap(),
            "http://127.0.0.1:1/v1/responses"
        );
        assert_eq!(
            request_url("http://h/v1/").unwrap(),
            "http://h/v1/responses"
        );
        assert_eq!(
            request_url("").unwrap(),
            "https://api.openai.com/v1/responses"
        );
        assert_eq!(request_url("not a url"), Err("Invalid URL".to_owned()));
    }

    #[test]
    fn tool_choice_wire_forms() {
        assert_eq!(tool_choice(&ToolChoice::Auto), json!("auto"));
        assert_eq!(tool_choice(&ToolChoice::Required), json!("required"));
        assert_eq!(
            tool_choice(&ToolChoice::Tool("f".into())),
            json!({"type": "function", "name": "f"})
        );
    }
}
