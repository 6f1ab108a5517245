//! `tracing` spans with OpenTelemetry's GenAI semantic conventions, built in one place.
//!
//! Every host builds its spans here, so the names and fields live once:
//!
//! ```text
//! invoke_agent                       one run (run_agent_loop / Agent / AgentSession)
//! └─ turn                            one assistant message and its tool batch
//!    ├─ chat {model}                 the model request
//!    ├─ execute_tool {tool name}     each tool call (parallel calls are siblings)
//!    │  └─ event "tool progress"     each on_update (DEBUG)
//!    └─ execute_tool {tool name}
//! execute_tool {tool name}           a call of the MCP server (pi-tool-mcp), a root
//! ```
//!
//! `tracing` span names are static (`invoke_agent`, `turn`, `chat`, `execute_tool`); the
//! OpenTelemetry name with the model or tool in it is the `otel.name` field, which
//! `tracing-opentelemetry` uses as the exported span's name. `otel.kind` (`client` for a
//! model request) and `otel.status_code` (`ERROR` on a failure) are its other special
//! fields; other layers see them as ordinary fields.
//!
//! Fields, by span:
//!
//! * `execute_tool`: `gen_ai.operation.name = "execute_tool"`, `gen_ai.tool.name`,
//!   `gen_ai.tool.call.id`, `gen_ai.tool.type = "function"`; on failure `error.type` (one
//!   of the [`error_type`] values, [`TOOL_NOT_FOUND`], [`BLOCKED`], [`TRUNCATED`]) and
//!   `otel.status_code = "ERROR"`.
//! * `chat`: `gen_ai.operation.name = "chat"`, `gen_ai.provider.name` (the model's
//!   provider as pi-ai names it: `anthropic`, `openai`, ...), `gen_ai.request.model`; when
//!   the answer is complete `gen_ai.response.id`, `gen_ai.response.model`,
//!   `gen_ai.usage.input_tokens` (all input tokens, cached ones included, as OpenTelemetry
//!   counts them; pi-ai's `usage.input` leaves those out), `gen_ai.usage.output_tokens`,
//!   `gen_ai.usage.cache_read.input_tokens`, `gen_ai.usage.cache_creation.input_tokens`,
//!   and `gen_ai.response.finish_reasons` (Pi's stop reason: `stop`, `length`, `toolUse`,
//!   `error`, `aborted`; one value, as a string, since a `tracing` field holds no array).
//!   A failed or aborted request sets `error.type` to that stop reason.
//! * `invoke_agent`: `gen_ai.operation.name = "invoke_agent"`, `gen_ai.provider.name`,
//!   `gen_ai.request.model` (the model the run starts with).
//! * `turn`: `pi_tool.turn`, the turn's number in the run, from 1.
//!
//! **Content is off by default.** Arguments and results can carry whatever the user and
//! the tools handle, and traces go to other systems. [`RunPolicy::trace_content`] turns
//! on `gen_ai.tool.call.arguments` (the model's arguments, as JSON) and
//! `gen_ai.tool.call.result` (the result the model reads, as JSON) and the text of each
//! progress event; each passes through the policy's redactor first.
//!
//! **Cost.** With no subscriber, or one that filters these spans out, building a span is
//! `tracing`'s callsite check (one atomic load) and recording into it is a branch on an
//! empty span: nothing is formatted, serialised or allocated.

use std::borrow::Cow;

use serde_json::Value;
use tracing::Span;
use tracing::field::Empty;

use crate::model::AssistantMessage;
use crate::model::Model;
use super::policy::RunPolicy;
use pi_tool_core::{ToolError, ToolErrorKind};
use pi_tool_core::JsonToolResult;
use crate::safety::Redactor;

/// `error.type` of a call that names a tool the host does not have.
pub const TOOL_NOT_FOUND: &str = "tool_not_found";
/// `error.type` of a call that a `before_tool_call` hook blocked.
pub const BLOCKED: &str = "blocked";
/// `error.type` of a call the loop did not run because the response hit the output token
/// limit (its arguments may be cut off).
pub const TRUNCATED: &str = "truncated";

/// The `error.type` of a failed call of this kind: `tool_error` (the tool's own error,
/// or a hook's), `aborted`, `invalid_arguments`, `timeout`, `panic`. Low-cardinality, as
/// OpenTelemetry asks; the message stays out of the span (it is the model's to read).
pub const fn error_type(kind: ToolErrorKind) -> &'static str {
    match kind {
        ToolErrorKind::Aborted => "aborted",
        ToolErrorKind::InvalidArguments => "invalid_arguments",
        ToolErrorKind::Timeout => "timeout",
        ToolErrorKind::Panicked => "panic",
        _ => "tool_error",
    }
}

/// The span of one agent run (`invoke_agent`), starting with `model`.
pub fn agent_span(model: &Model) -> Span {
    tracing::info_span!(
        "invoke_agent",
        "otel.name" = "invoke_agent",
        "gen_ai.operation.name" = "invoke_agent",
        "gen_ai.provider.name" = model.provider.as_str(),
        "gen_ai.request.model" = model.id.as_str(),
    )
}

/// The span of one turn of a run; `number` counts from 1.
pub fn turn_span(number: u64) -> Span {
    tracing::info_span!("turn", "pi_tool.turn" = number)
}

/// The span of one model request (`chat {model}`); record the answer with
/// [`record_chat_response`].
pub fn chat_span(model: &Model) -> Span {
    tracing::info_span!(
        "chat",
        "otel.name" = %format_args!("chat {}", model.id),
        "otel.kind" = "client",
        "otel.status_code" = Empty,
        "gen_ai.operation.name" = "chat",
        "gen_ai.provider.name" = model.provider.as_str(),
        "gen_ai.request.model" = model.id.as_str(),
        "gen_ai.response.id" = Empty,
        "gen_ai.response.model" = Empty,
        "gen_ai.response.finish_reasons" = Empty,
        "gen_ai.usage.input_tokens" = Empty,
        "gen_ai.usage.output_tokens" = Empty,
        "gen_ai.usage.cache_read.input_tokens" = Empty,
        "gen_ai.usage.cache_creation.input_tokens" = Empty,
        "error.type" = Empty,
    )
}

/// Records the final assistant message of a model request on its [`chat_span`].
pub fn record_chat_response(span: &Span, message: &AssistantMessage) {
    if span.is_disabled() {
        return;
    }
    let reason = message.stop_reason.name();
    span.record("gen_ai.response.finish_reasons", reason);
    if let Some(id) = &message.response_id {
        span.record("gen_ai.response.id", id.as_str());
    }
    let model = message.response_model.as_deref().unwrap_or(&message.model);
    if !model.is_empty() {
        span.record("gen_ai.response.model", model);
    }
    let usage = &message.usage;
    // OpenTelemetry counts every input token, cached ones included; pi-ai's `input`
    // leaves out what was read from or written to the cache.
    let input = usage
        .input
        .saturating_add(usage.cache_read)
        .saturating_add(usage.cache_write);
    span.record("gen_ai.usage.input_tokens", input);
    span.record("gen_ai.usage.output_tokens", usage.output);
    span.record("gen_ai.usage.cache_read.input_tokens", usage.cache_read);
    span.record(
        "gen_ai.usage.cache_creation.input_tokens",
        usage.cache_write,
    );
    if message.stop_reason.is_failure() {
        span.record("error.type", reason);
        span.record("otel.status_code", "ERROR");
    }
}

/// The span of one tool call (`execute_tool {tool name}`) and what a host records into it.
///
/// A host creates it when the call starts, runs the call's futures inside it
/// (`future.instrument(span.span().clone())`, never `enter()` across an `.await`), and
/// ends it with [`ToolCallSpan::record_result`] or [`ToolCallSpan::record_error`]. The
/// span's parent is the current span where it is created: the turn, in the agent loop.
#[derive(Clone, Debug)]
pub struct ToolCallSpan {
    span: Span,
}

impl ToolCallSpan {
    /// The span of the call `call_id` of `tool_name`, a child of the current span.
    #[inline]
    pub fn new(tool_name: &str, call_id: &str) -> Self {
        let span = tracing::info_span!(
            "execute_tool",
            "otel.name" = %format_args!("execute_tool {tool_name}"),
            "otel.status_code" = Empty,
            "gen_ai.operation.name" = "execute_tool",
            "gen_ai.tool.name" = tool_name,
            "gen_ai.tool.call.id" = call_id,
            "gen_ai.tool.type" = "function",
            "gen_ai.tool.call.arguments" = Empty,
            "gen_ai.tool.call.result" = Empty,
            "error.type" = Empty,
        );
        ToolCallSpan { span }
    }

    /// A span that records nothing (a placeholder once a call's span has ended).
    pub fn none() -> Self {
        ToolCallSpan { span: Span::none() }
    }

    /// The `tracing` span, to instrument the call's futures with.
    pub fn span(&self) -> &Span {
        &self.span
    }

    /// Records the model's arguments, if `policy` traces content.
    #[inline]
    pub fn record_arguments(&self, arguments: &Value, policy: &RunPolicy) {
        if policy.trace_content && !self.span.is_disabled() {
            self.record_json("gen_ai.tool.call.arguments", arguments, policy);
        }
    }

    /// Records `value`, redacted, as the JSON text of `field`. Out of line: only a traced
    /// run gets here.
    #[inline(never)]
    fn record_json(&self, field: &'static str, value: &Value, policy: &RunPolicy) {
        let text = redacted_json(value, policy.redactor.as_deref());
        self.span.record(field, text.as_str());
    }

    /// A progress update (`on_update`): a DEBUG event inside the span, with the update's
    /// text if `policy` traces content.
    #[inline]
    pub fn record_update(&self, update: &JsonToolResult, policy: &RunPolicy) {
        if !self.span.is_disabled() {
            self.record_update_traced(update, policy);
        }
    }

    #[inline(never)]
    fn record_update_traced(&self, update: &JsonToolResult, policy: &RunPolicy) {
        if policy.trace_content {
            let text = redacted_json(&update.to_json(), policy.redactor.as_deref());
            tracing::debug!(
                parent: &self.span,
                gen_ai.tool.call.update = text.as_str(),
                "tool progress"
            );
        } else {
            tracing::debug!(parent: &self.span, "tool progress");
        }
    }

    /// Records how the call ended: `error_type` is `None` for a success, else the value
    /// of `error.type`. The result (what the model reads) is recorded if `policy` traces
    /// content.
    #[inline]
    pub fn record_result(
        &self,
        result: &JsonToolResult,
        error_type: Option<&str>,
        policy: &RunPolicy,
    ) {
        if !self.span.is_disabled() {
            self.record_result_traced(result, error_type, policy);
        }
    }

    #[inline(never)]
    fn record_result_traced(
        &self,
        result: &JsonToolResult,
        error_type: Option<&str>,
        policy: &RunPolicy,
    ) {
        if let Some(error_type) = error_type {
            self.mark_failed(error_type);
        }
        if policy.trace_content {
            self.record_json("gen_ai.tool.call.result", &result.to_json(), policy);
        }
    }

    /// Records a failed call (a host without error results, such as the MCP server): the
    /// error's kind as `error.type`, its message as the result if `policy` traces content.
    pub fn record_error(&self, error: &ToolError, policy: &RunPolicy) {
        self.record_failure(error_type(error.kind()), error.message(), policy);
    }

    /// Records a failure as `error_type` (for example [`TOOL_NOT_FOUND`]), with `message`
    /// as the result if `policy` traces content.
    pub fn record_failure(&self, error_type: &str, message: &str, policy: &RunPolicy) {
        if self.span.is_disabled() {
            return;
        }
        self.mark_failed(error_type);
        if policy.trace_content {
            let message = match &policy.redactor {
                Some(redactor) => redactor.redact(message),
                None => Cow::Borrowed(message),
            };
            self.span.record("gen_ai.tool.call.result", &*message);
        }
    }

    fn mark_failed(&self, error_type: &str) {
        self.span.record("error.type", error_type);
        self.span.record("otel.status_code", "ERROR");
    }
}

/// `value` as JSON text with every string redacted. Strings are redacted before they are
/// escaped, so a secret with a quote or a backslash in it is still found; the text is
/// redacted once more for secrets in object keys.
fn redacted_json(value: &Value, redactor: Option<&Redactor>) -> String {
    let Some(redactor) = redactor else {
        return value.to_string();
    };
    let mut value = value.clone();
    redact_strings(&mut value, redactor);
    let text = value.to_string();
    match redactor.redact(&text) {
        Cow::Borrowed(_) => text,
        Cow::Owned(redacted) => redacted,
    }
}

fn redact_strings(value: &mut Value, redactor: &Redactor) {
    // Iterative: a model's arguments may nest deeper than the stack allows.
    let mut stack = vec![value];
    while let Some(value) = stack.pop() {
        match value {
            Value::String(text) => {
                if let Cow::Owned(redacted) = redactor.redact(text) {
                    *text = redacted;
                }
            }
            Value::Array(items) => stack.extend(items.iter_mut()),
            Value::Object(map) => stack.extend(map.values_mut()),
            _ => {}
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn strings_are_redacted_before_escaping() {
        let secret = "pass\"word-0123456789";
        let redactor = Redactor::new([secret]).unwrap();
        let text = redacted_json(
            &json!({"a": [format!("x {secret} y"), {"b": secret}], "n": 1}),
            Some(&redactor),
        );
        assert!(!text.contains("word-0123456789"), "{text}");
        assert!(text.contains("[REDACTED]"), "{text}");
        assert!(text.contains("\"n\":1"), "{text}");
    }

    #[test]
    fn every_kind_has_a_low_cardinality_error_type() {
        assert_eq!(error_type(ToolErrorKind::Failed), "tool_error");
        assert_eq!(error_type(ToolErrorKind::Aborted), "aborted");
        assert_eq!(
            error_type(ToolErrorKind::InvalidArguments),
            "invalid_arguments"
        );
        assert_eq!(error_type(ToolErrorKind::Timeout), "timeout");
        assert_eq!(error_type(ToolErrorKind::Panicked), "panic");
    }

    #[test]
    fn a_span_without_subscriber_records_nothing_and_does_not_panic() {
        let span = ToolCallSpan::new("t", "c");
        assert!(span.span().is_disabled());
        let policy = RunPolicy::default();
        span.record_arguments(&json!({}), &policy);
        span.record_update(&JsonToolResult::text("x", None), &policy);
        span.record_result(
            &JsonToolResult::text("x", None),
            Some("tool_error"),
            &policy,
        );
    }
}
