//! pi-ai's option arithmetic shared by the providers: `api/simple-options.js` (the
//! output-token cap clamped to the context window, thinking budgets),
//! `utils/estimate.js` (the context-size estimate that clamp uses) and
//! `resolveCacheRetention`.
//!
//! The estimate measures what pi-ai measures: `string.length` in UTF-16 code units,
//! tool-call arguments and tools as compact `JSON.stringify` text, 4 characters per
//! token, 4800 characters per image. Tools are measured in pi-ai's wire shape
//! `{name, description, parameters}` (the shape `streamSimple` receives); Pi's coding
//! agent hands pi-ai its richer `AgentTool` objects, whose extra fields (`label`, ...)
//! would add to its estimate.

// Each provider uses its own part of pi-ai's options (thinking budgets are Anthropic's and
// Completions'), so a build with one provider leaves the rest unused.
#![cfg_attr(
    not(all(feature = "anthropic-messages", feature = "openai-completions")),
    allow(dead_code)
)]

use serde_json::{Map, Value};

use crate::AgentTool;
use crate::js::{stringify, utf16_len};
use crate::model::{
    AssistantContent, CacheRetention, Context, Message, Model, StopReason, StreamOptions,
    ThinkingLevel, Usage,
};
use pi_tool_core::Content;

/// `resolveCacheRetention`: the option, else `long` when `PI_CACHE_RETENTION=long`, else
/// `short`. Every provider reads the same rule.
pub(crate) fn cache_retention(options: &StreamOptions) -> CacheRetention {
    if let Some(retention) = options.cache_retention {
        return retention;
    }
    if std::env::var("PI_CACHE_RETENTION").is_ok_and(|v| v == "long") {
        CacheRetention::Long
    } else {
        CacheRetention::Short
    }
}

const CHARS_PER_TOKEN: u64 = 4;
const ESTIMATED_IMAGE_CHARS: u64 = 4800;
/// Tokens kept free of the context window beyond the estimate (`CONTEXT_SAFETY_TOKENS`).
const CONTEXT_SAFETY_TOKENS: i128 = 4096;
const MIN_MAX_TOKENS: u64 = 1;

/// Tokens always left for the answer when a thinking budget shares the response ceiling.
pub(crate) const MIN_ANSWER_TOKENS: u64 = 1024;

/// Thinking-token budgets per level (pi-ai's `ThinkingBudgets`); an unset level takes
/// pi-ai's default (`DEFAULT_THINKING_BUDGETS`: 1024, 2048, 8192, 16384).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub(crate) struct ThinkingBudgets {
    /// Budget for `minimal`.
    pub(crate) minimal: Option<u64>,
    /// Budget for `low`.
    pub(crate) low: Option<u64>,
    /// Budget for `medium`.
    pub(crate) medium: Option<u64>,
    /// Budget for `high` (also `xhigh`, which clamps to `high`).
    pub(crate) high: Option<u64>,
}

/// pi-ai's `clampReasoning`: `xhigh` becomes `high`, every other level stays.
pub(crate) fn clamp_reasoning(level: ThinkingLevel) -> ThinkingLevel {
    match level {
        ThinkingLevel::Xhigh => ThinkingLevel::High,
        other => other,
    }
}

/// pi-ai's `thinkingBudgetForLevel`: the budget of the (clamped) level. `Off` has no
/// budget in pi-ai (providers never ask for it); it is 0 here.
pub(crate) fn thinking_budget_for_level(
    level: ThinkingLevel,
    budgets: Option<&ThinkingBudgets>,
) -> u64 {
    let custom = budgets.copied().unwrap_or_default();
    match clamp_reasoning(level) {
        ThinkingLevel::Off => 0,
        ThinkingLevel::Minimal => custom.minimal.unwrap_or(1024),
        ThinkingLevel::Low => custom.low.unwrap_or(2048),
        ThinkingLevel::Medium => custom.medium.unwrap_or(8192),
        ThinkingLevel::High | ThinkingLevel::Xhigh => custom.high.unwrap_or(16384),
    }
}

/// pi-ai's `clampThinkingBudgetToAnswerRoom`: caps a thinking budget so at least
/// [`MIN_ANSWER_TOKENS`] remain under a shared response ceiling.
pub(crate) fn clamp_thinking_budget_to_answer_room(budget: u64, ceiling: u64) -> u64 {
    budget.min(ceiling.saturating_sub(MIN_ANSWER_TOKENS))
}

/// pi-ai's `adjustMaxTokensForThinking`: `(max_tokens, thinking_budget)` for a request
/// whose output ceiling must hold the thinking budget. `base` is the caller's cap
/// (`None`: none, use the model's); the budget is added to it, up to `model_max`.
pub(crate) fn adjust_max_tokens_for_thinking(
    base: Option<u64>,
    model_max: u64,
    level: ThinkingLevel,
    budgets: Option<&ThinkingBudgets>,
) -> (u64, u64) {
    let mut thinking_budget = thinking_budget_for_level(level, budgets);
    let max_tokens = match base {
        None => model_max,
        Some(base) => base.saturating_add(thinking_budget).min(model_max),
    };
    if max_tokens <= thinking_budget {
        thinking_budget = clamp_thinking_budget_to_answer_room(thinking_budget, max_tokens);
    }
    (max_tokens, thinking_budget)
}

/// pi-ai's `clampMaxTokensToContext`: `max_tokens`, lowered so the estimated context
/// plus a 4096-token safety margin plus the answer fit the model's context window (at
/// least 1). A model without a window (0) only gets the floor of 1.
pub(crate) fn clamp_max_tokens_to_context(
    model: &Model,
    context: &Context,
    max_tokens: u64,
) -> u64 {
    if model.context_window == 0 {
        return max_tokens.max(MIN_MAX_TOKENS);
    }
    let available = i128::from(model.context_window)
        - i128::from(estimate_context_tokens(context))
        - CONTEXT_SAFETY_TOKENS;
    let floor = u64::try_from(available.max(i128::from(MIN_MAX_TOKENS))).unwrap_or(u64::MAX);
    max_tokens.min(floor)
}

/// `buildBaseOptions(...).maxTokens`: the caller's cap or the model's, clamped to the
/// context window.
pub(crate) fn base_max_tokens(model: &Model, context: &Context, options: &StreamOptions) -> u64 {
    clamp_max_tokens_to_context(
        model,
        context,
        options.max_tokens.unwrap_or(model.max_tokens),
    )
}

/// `buildBaseOptions(...).samplingParams`: the model's sampling parameters overridden
/// key by key by the caller's (`{...model.samplingParams, ...options.samplingParams}`),
/// `None` when neither has any.
pub(crate) fn merged_sampling_params(
    model: &Model,
    options: &StreamOptions,
) -> Option<Map<String, Value>> {
    if model.sampling_params.is_none() && options.sampling_params.is_none() {
        return None;
    }
    let mut merged = model.sampling_params.clone().unwrap_or_default();
    for (key, value) in options.sampling_params.iter().flatten() {
        // Like an object spread, an overridden key keeps its first position.
        merged.insert(key.clone(), value.clone());
    }
    Some(merged)
}

/// pi-ai's `estimateContextTokens(context).tokens`.
///
/// After the last successful assistant message that reported usage (and that no later
/// message predates), the estimate is that usage plus an estimate of the messages after
/// it (and of tools they activated); without one, every message is estimated, plus the
/// system prompt and all tools.
pub(crate) fn estimate_context_tokens(context: &Context) -> u64 {
    let messages = &context.messages;
    match last_assistant_usage(messages) {
        Some((index, usage)) => {
            let trailing: u64 = messages[index + 1..]
                .iter()
                .map(estimate_message_tokens)
                .sum();
            let added: Vec<&str> = messages[index + 1..]
                .iter()
                .filter_map(Message::as_tool_result)
                .flat_map(|r| r.added_tool_names.iter().flatten())
                .map(String::as_str)
                .collect();
            let added_tools: Vec<&dyn AgentTool> = context
                .tools
                .iter()
                .map(|t| &**t)
                .filter(|t| added.contains(&t.name()))
                .collect();
            context_tokens(usage) + trailing + estimate_tools_tokens(&added_tools)
        }
        None => {
            let messages: u64 = messages.iter().map(estimate_message_tokens).sum();
            let system = if context.system_prompt.is_empty() {
                0
            } else {
                estimate_text_tokens(&context.system_prompt)
            };
            let tools: Vec<&dyn AgentTool> = context.tools.iter().map(|t| &**t).collect();
            messages + system + estimate_tools_tokens(&tools)
        }
    }
}

/// pi-ai's `calculateContextTokens`: the total, or the sum of the parts when the
/// provider reported no total.
fn context_tokens(usage: &Usage) -> u64 {
    if usage.total_tokens != 0 {
        return usage.total_tokens;
    }
    // Counts come from providers and stored sessions: saturate instead of overflowing.
    usage
        .input
        .saturating_add(usage.output)
        .saturating_add(usage.cache_read)
        .saturating_add(usage.cache_write)
}

/// pi-ai's `getLastAssistantUsageInfo`: the index and usage of the last assistant message
/// that succeeded, reported usage, and is not older than any message before it (a newer
/// message inserted before it, such as a compaction summary, invalidates its usage).
fn last_assistant_usage(messages: &[Message]) -> Option<(usize, &Usage)> {
    let mut latest_prefix_timestamp: Option<u64> = None;
    let mut found = None;
    for (i, message) in messages.iter().enumerate() {
        let timestamp = match message {
            Message::User(m) => m.timestamp,
            Message::ToolResult(m) => m.timestamp,
            Message::Assistant(m) => {
                let applies = latest_prefix_timestamp.is_none_or(|t| m.timestamp >= t);
                if applies
                    && !matches!(m.stop_reason, StopReason::Aborted | StopReason::Error)
                    && context_tokens(&m.usage) > 0
                {
                    found = Some((i, &m.usage));
                }
                m.timestamp
            }
        };
        latest_prefix_timestamp =
            Some(latest_prefix_timestamp.map_or(timestamp, |t| t.max(timestamp)));
    }
    found
}

fn estimate_text_tokens(text: &str) -> u64 {
    (utf16_len(text) as u64).div_ceil(CHARS_PER_TOKEN)
}

fn estimate_content_tokens(content: &[Content]) -> u64 {
    let chars: u64 = content
        .iter()
        .map(|block| match block {
            Content::Text { text } => utf16_len(text) as u64,
            Content::Image { .. } => ESTIMATED_IMAGE_CHARS,
            other => match other.for_model() {
                Content::Text { text } => utf16_len(&text) as u64,
                _ => ESTIMATED_IMAGE_CHARS,
            },
        })
        .sum();
    chars.div_ceil(CHARS_PER_TOKEN)
}

/// pi-ai's `estimateMessageTokens`.
fn estimate_message_tokens(message: &Message) -> u64 {
    match message {
        Message::User(m) => estimate_content_tokens(&m.content),
        Message::ToolResult(m) => estimate_content_tokens(&m.content),
        Message::Assistant(m) => {
            let chars: u64 = m
                .content
                .iter()
                .map(|block| match block {
                    AssistantContent::Text { text, .. } => utf16_len(text) as u64,
                    AssistantContent::Thinking { thinking, .. } => utf16_len(thinking) as u64,
                    AssistantContent::ToolCall(call) => {
                        (utf16_len(&call.name) + utf16_len(&stringify(&call.arguments))) as u64
                    }
                })
                .sum();
            chars.div_ceil(CHARS_PER_TOKEN)
        }
    }
}

/// pi-ai's `estimateToolsTokens`: the compact JSON of the wire tools, 4 characters per
/// token; nothing for no tools.
fn estimate_tools_tokens(tools: &[&dyn AgentTool]) -> u64 {
    if tools.is_empty() {
        return 0;
    }
    let wire: Vec<Value> = tools
        .iter()
        .map(|tool| {
            let spec = tool.spec();
            let mut object = Map::new();
            object.insert("name".into(), Value::String(spec.name.clone()));
            object.insert(
                "description".into(),
                Value::String(spec.description.clone()),
            );
            object.insert("parameters".into(), spec.parameters.json().clone());
            Value::Object(object)
        })
        .collect();
    estimate_text_tokens(&stringify(&Value::Array(wire)))
}

#[cfg(test)]
mod tests {
    use std::sync::Arc;

    use async_trait::async_trait;
    use serde_json::Value;

    use super::*;

    use crate::schema::ToolSchema;
    use crate::{JsonToolResult, ToolError, ToolSpec};

    struct SpecOnly(ToolSpec);

    #[async_trait]
    impl AgentTool for SpecOnly {
        fn spec(&self) -> &ToolSpec {
            &self.0
        }

        async fn execute(
            &self,
            _call: crate::ToolInvocation<'_>,
        ) -> Result<JsonToolResult, ToolError> {
            Err(ToolError::new("not called"))
        }
    }

    fn context(case: &Value) -> Context {
        let tools = case["tools"]
            .as_array()
            .into_iter()
            .flatten()
            .map(|tool| {
                let spec = ToolSpec::new(
                    tool["name"].as_str().unwrap_or_default(),
                    tool["description"].as_str().unwrap_or_default(),
                    Arc::new(ToolSchema::from_json(tool["parameters"].clone())),
                );
                Arc::new(SpecOnly(spec)) as Arc<dyn AgentTool>
            })
            .collect();
        Context {
            system_prompt: case["systemPrompt"].as_str().unwrap_or_default().to_owned(),
            messages: serde_json::from_value(case["messages"].clone()).unwrap_or_default(),
            tools,
        }
    }

    /// Contexts and the numbers pi-ai 0.85.0 gives for them under Node 22
    /// (`estimateContextTokens(c).tokens`, then `clampMaxTokensToContext` with windows of
    /// 4200, 0 and 200 000 and caps of 1000, 0 and 64 000).
    const CASES: &str = r#"[{"systemPrompt": "You are a helpful assistant. Ünïcödé 😀", "tools": [{"name": "read", "description": "Read a file", "parameters": {"type": "object", "properties": {"path": {"type": "string", "description": "Path 😀"}, "limit": {"type": "number", "maximum": 1e+21, "minimum": 0.5}}, "required": ["path"]}}, {"name": "write", "description": "Write", "parameters": {"type": "object", "properties": {}}}], "messages": [{"role": "user", "content": [{"type": "text", "text": "hello 😀 wörld"}, {"type": "image", "data": "aGVsbG8=", "mimeType": "image/png"}], "timestamp": 1}, {"role": "user", "content": "plain string content", "timestamp": 2}, {"role": "assistant", "content": [{"type": "thinking", "thinking": "hmm, let me think"}, {"type": "text", "text": "ok"}, {"type": "toolCall", "id": "c1", "name": "read", "arguments": {"path": "a\"b\\c\n😀", "n": 1.5, "big": 1e+21, "z": [true, null]}}], "stopReason": "toolUse", "usage": {"input": 0, "output": 0, "cacheRead": 0, "cacheWrite": 0, "totalTokens": 0, "cost": {"input": 0, "output": 0, "cacheRead": 0, "cacheWrite": 0, "total": 0}}, "timestamp": 3, "api": "x", "provider": "y", "model": "z"}, {"role": "toolResult", "toolCallId": "c1", "toolName": "read", "content": [{"type": "text", "text": "file contents here"}], "isError": false, "timestamp": 4}]}, {"systemPrompt": "sys", "tools": [{"name": "read", "description": "Read a file", "parameters": {"type": "object"}}, {"name": "grep", "description": "Search", "parameters": {"type": "object", "properties": {"q": {"type": "string"}}}}], "messages": [{"role": "user", "content": [{"type": "text", "text": "hi"}], "timestamp": 10}, {"role": "assistant", "content": [{"type": "text", "text": "calling"}], "stopReason": "toolUse", "usage": {"input": 100, "output": 20, "cacheRead": 5, "cacheWrite": 0, "totalTokens": 125, "cost": {"input": 0, "output": 0, "cacheRead": 0, "cacheWrite": 0, "total": 0}}, "timestamp": 11, "api": "x", "provider": "y", "model": "z"}, {"role": "toolResult", "toolCallId": "c2", "toolName": "read", "content": [{"type": "text", "text": "0123456789"}, {"type": "image", "data": "x", "mimeType": "image/png"}], "isError": false, "addedToolNames": ["grep", "missing"], "timestamp": 12}, {"role": "user", "content": [{"type": "text", "text": "more"}], "timestamp": 13}]}, {"systemPrompt": "", "tools": [], "messages": [{"role": "user", "content": [{"type": "text", "text": "abc"}], "timestamp": 10}, {"role": "assistant", "content": [{"type": "text", "text": "a"}], "stopReason": "stop", "usage": {"input": 7, "output": 3, "cacheRead": 1, "cacheWrite": 2, "totalTokens": 0, "cost": {"input": 0, "output": 0, "cacheRead": 0, "cacheWrite": 0, "total": 0}}, "timestamp": 11, "api": "x", "provider": "y", "model": "z"}, {"role": "assistant", "content": [{"type": "text", "text": "bbbbb"}], "stopReason": "error", "usage": {"input": 1000, "output": 0, "cacheRead": 0, "cacheWrite": 0, "totalTokens": 1000, "cost": {"input": 0, "output": 0, "cacheRead": 0, "cacheWrite": 0, "total": 0}}, "timestamp": 12, "api": "x", "provider": "y", "model": "z"}]}, {"systemPrompt": "sys prompt", "tools": [{"name": "t", "description": "d", "parameters": {}}], "messages": [{"role": "user", "content": [{"type": "text", "text": "newer summary"}], "timestamp": 50}, {"role": "assistant", "content": [{"type": "text", "text": "old"}], "stopReason": "stop", "usage": {"input": 500, "output": 0, "cacheRead": 0, "cacheWrite": 0, "totalTokens": 500, "cost": {"input": 0, "output": 0, "cacheRead": 0, "cacheWrite": 0, "total": 0}}, "timestamp": 20, "api": "x", "provider": "y", "model": "z"}, {"role": "user", "content": [{"type": "text", "text": "q"}], "timestamp": 60}]}]"#;
    const EXPECTED: [(u64, u64, u64, u64); 4] = [
        (1321, 1, 1, 64000),
        (1356, 1, 1, 64000),
        (15, 89, 1, 64000),
        (21, 83, 1, 64000),
    ];

    #[test]
    fn estimates_and_clamps_match_pi_ai() {
        let cases: Value = serde_json::from_str(CASES).unwrap_or_default();
        let cases = cases.as_array().cloned().unwrap_or_default();
        assert_eq!(cases.len(), EXPECTED.len());
        for (i, (case, expected)) in cases.iter().zip(EXPECTED).enumerate() {
            let context = context(case);
            assert_eq!(
                context.messages.len(),
                case["messages"].as_array().map_or(0, Vec::len),
                "case {i} reads"
            );
            let window = |context_window| {
                let mut model = Model::default();
                model.context_window = context_window;
                model
            };
            let actual = (
                estimate_context_tokens(&context),
                clamp_max_tokens_to_context(&window(4200), &context, 1000),
                clamp_max_tokens_to_context(&window(0), &context, 0),
                clamp_max_tokens_to_context(&window(200_000), &context, 64_000),
            );
            assert_eq!(actual, expected, "case {i}");
        }
    }

    #[test]
    fn thinking_budgets_follow_pi_ai() {
        assert_eq!(
            thinking_budget_for_level(ThinkingLevel::Minimal, None),
            1024
        );
        assert_eq!(thinking_budget_for_level(ThinkingLevel::Low, None), 2048);
        assert_eq!(thinking_budget_for_level(ThinkingLevel::Medium, None), 8192);
        assert_eq!(thinking_budget_for_level(ThinkingLevel::High, None), 16384);
        assert_eq!(thinking_budget_for_level(ThinkingLevel::Xhigh, None), 16384);
        let custom = ThinkingBudgets {
            high: Some(30_000),
            ..ThinkingBudgets::default()
        };
        assert_eq!(
            thinking_budget_for_level(ThinkingLevel::Xhigh, Some(&custom)),
            30_000
        );
        assert_eq!(
            thinking_budget_for_level(ThinkingLevel::Low, Some(&custom)),
            2048
        );
        assert_eq!(clamp_reasoning(ThinkingLevel::Xhigh), ThinkingLevel::High);
        assert_eq!(
            clamp_reasoning(ThinkingLevel::Minimal),
            ThinkingLevel::Minimal
        );
        // adjustMaxTokensForThinking: the caller's cap plus the budget, up to the model's.
        let high = ThinkingLevel::High;
        assert_eq!(
            adjust_max_tokens_for_thinking(Some(4096), 64_000, high, None),
            (20_480, 16_384)
        );
        assert_eq!(
            adjust_max_tokens_for_thinking(Some(60_000), 64_000, high, None),
            (64_000, 16_384)
        );
        assert_eq!(
            adjust_max_tokens_for_thinking(None, 64_000, high, None),
            (64_000, 16_384)
        );
        // A ceiling at or under the budget keeps 1024 tokens for the answer.
        assert_eq!(
            adjust_max_tokens_for_thinking(None, 8000, high, None),
            (8000, 6976)
        );
        assert_eq!(
            adjust_max_tokens_for_thinking(None, 1000, high, None),
            (1000, 0)
        );
        assert_eq!(clamp_thinking_budget_to_answer_room(5000, 4000), 2976);
        assert_eq!(clamp_thinking_budget_to_answer_room(100, 4000), 100);
        assert_eq!(clamp_thinking_budget_to_answer_room(100, 10), 0);
    }

    #[test]
    fn sampling_params_merge_key_by_key() {
        let mut model = Model::default();
        let mut options = StreamOptions::default();
        assert_eq!(merged_sampling_params(&model, &options), None);
        let map = |v: Value| v.as_object().cloned();
        model.sampling_params = map(serde_json::json!({"top_p": 0.9, "top_k": 40}));
        options.sampling_params = map(serde_json::json!({"min_p": 0.1, "top_p": 0.5}));
        let merged = merged_sampling_params(&model, &options).unwrap_or_default();
        assert_eq!(
            crate::js::stringify(&Value::Object(merged)),
            r#"{"top_p":0.5,"top_k":40,"min_p":0.1}"#
        );
        model.max_tokens = 300;
        model.context_window = 0;
        assert_eq!(base_max_tokens(&model, &Context::default(), &options), 300);
        options.max_tokens = Some(0);
        assert_eq!(base_max_tokens(&model, &Context::default(), &options), 1);
    }
}
