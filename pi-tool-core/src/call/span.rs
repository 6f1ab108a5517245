//! The `execute_tool` span of one call: OpenTelemetry's GenAI conventions, in one place
//! for every host.
//!
//! `execute_tool {tool name}` is a child of the current span where the call starts (the
//! turn, in the agent loop; a root, in the MCP server). Fields:
//! `gen_ai.operation.name = "execute_tool"`, `gen_ai.tool.name`, `gen_ai.tool.call.id`,
//! `gen_ai.tool.type = "function"`; on failure `error.type` (a [`CallFailure`]) and
//! `otel.status_code = "ERROR"`; a DEBUG event `tool progress` per update. A call of a
//! durable run that needs approval also records `pi_tool.approval.digest` and
//! `pi_tool.approval.decision` (see [`CallSpan::record_approval`]).
//!
//! **Content is off by default.** Arguments and results can carry whatever the user and
//! the tools handle, and traces go to other systems. [`CallPolicy::trace_content`] turns
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

use super::CallPolicy;
use crate::error::{ToolError, ToolErrorKind};
use crate::result::JsonToolResult;
use crate::safety::Redactor;

/// How a call failed, as the span's `error.type` records it: low-cardinality, as
/// OpenTelemetry asks; the message stays out of the span (it is the model's to read).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct CallFailure(&'static str);

impl CallFailure {
    /// A call that names a tool the host does not have.
    pub const NOT_FOUND: CallFailure = CallFailure("tool_not_found");
    /// A call that a `before_tool_call` hook blocked.
    pub const BLOCKED: CallFailure = CallFailure("blocked");
    /// A call the host did not run because the model's response hit its output token
    /// limit (its arguments may be cut off).
    pub const TRUNCATED: CallFailure = CallFailure("truncated");
    /// A call the host did not run because a limit on calls was reached (per run, per
    /// turn, per session or per call tree).
    pub const LIMIT: CallFailure = CallFailure("call_limit");

    /// A failed call of this kind: `tool_error` (the tool's own error, or a hook's),
    /// `aborted`, `invalid_arguments`, `timeout`, `panic`.
    pub const fn of(kind: ToolErrorKind) -> CallFailure {
        CallFailure(match kind {
            ToolErrorKind::Aborted => "aborted",
            ToolErrorKind::InvalidArguments => "invalid_arguments",
            ToolErrorKind::Timeout => "timeout",
            ToolErrorKind::Panicked => "panic",
            _ => "tool_error",
        })
    }

    /// The value of `error.type`.
    pub const fn error_type(self) -> &'static str {
        self.0
    }
}

/// The span of one tool call (`execute_tool {tool name}`) and what a host records into it.
///
/// A host creates it when the call starts, runs the call's futures inside it
/// (`future.instrument(span.span().clone())`, never `enter()` across an `.await`), and
/// ends it with [`CallSpan::record_result`] or [`CallSpan::record_error`]. The
/// span's parent is the current span where it is created: the turn, in the agent loop.
#[derive(Clone, Debug)]
pub struct CallSpan {
    span: Span,
}

impl CallSpan {
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
            "pi_tool.approval.digest" = Empty,
            "pi_tool.approval.decision" = Empty,
        );
        CallSpan { span }
    }

    /// A span that records nothing (a placeholder once a call's span has ended).
    pub fn none() -> Self {
        CallSpan { span: Span::none() }
    }

    /// The `tracing` span, to instrument the call's futures with.
    pub fn span(&self) -> &Span {
        &self.span
    }

    /// Records the model's arguments, if `policy` traces content.
    #[inline]
    pub fn record_arguments(&self, arguments: &Value, policy: &CallPolicy) {
        if policy.trace_content && !self.span.is_disabled() {
            self.record_json("gen_ai.tool.call.arguments", arguments, policy);
        }
    }

    /// Records `value`, redacted, as the JSON text of `field`. Out of line: only a traced
    /// run gets here.
    #[inline(never)]
    fn record_json(&self, field: &'static str, value: &Value, policy: &CallPolicy) {
        let text = redacted_json(value, policy.redactor.as_deref());
        self.span.record(field, text.as_str());
    }

    /// A progress update (`on_update`): a DEBUG event inside the span, with the update's
    /// text if `policy` traces content.
    #[inline]
    pub fn record_update(&self, update: &JsonToolResult, policy: &CallPolicy) {
        if !self.span.is_disabled() {
            self.record_update_traced(update, policy);
        }
    }

    #[inline(never)]
    fn record_update_traced(&self, update: &JsonToolResult, policy: &CallPolicy) {
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

    /// Records how the call ended: `failure` is `None` for a success. The result (what the model reads) is recorded if `policy` traces
    /// content.
    #[inline]
    pub fn record_result(
        &self,
        result: &JsonToolResult,
        failure: Option<CallFailure>,
        policy: &CallPolicy,
    ) {
        if !self.span.is_disabled() {
            self.record_result_traced(result, failure, policy);
        }
    }

    #[inline(never)]
    fn record_result_traced(
        &self,
        result: &JsonToolResult,
        failure: Option<CallFailure>,
        policy: &CallPolicy,
    ) {
        if let Some(failure) = failure {
            self.mark_failed(failure);
        }
        if policy.trace_content {
            self.record_json("gen_ai.tool.call.result", &result.to_json(), policy);
        }
    }

    /// Records a failed call (a host without error results, such as the MCP server): the
    /// error's kind as `error.type`, its message as the result if `policy` traces content.
    pub fn record_error(&self, error: &ToolError, policy: &CallPolicy) {
        self.record_failure(CallFailure::of(error.kind()), error.message(), policy);
    }

    /// Records a failure (for example [`CallFailure::NOT_FOUND`]), with `message`
    /// as the result if `policy` traces content.
    pub fn record_failure(&self, failure: CallFailure, message: &str, policy: &CallPolicy) {
        if self.span.is_disabled() {
            return;
        }
        self.mark_failed(failure);
        if policy.trace_content {
            let message = match &policy.redactor {
                Some(redactor) => redactor.redact(message),
                None => Cow::Borrowed(message),
            };
            self.span.record("gen_ai.tool.call.result", &*message);
        }
    }

    /// Records the approval of a call: the digest the decision names and what became of
    /// it (`pending` when the run suspends, then `approve`, `deny`, `expired`, or
    /// `changed` when what would run no longer matches the digest).
    pub fn record_approval(&self, digest: &str, decision: &str) {
        if self.span.is_disabled() {
            return;
        }
        self.span.record("pi_tool.approval.digest", digest);
        self.span.record("pi_tool.approval.decision", decision);
    }

    fn mark_failed(&self, failure: CallFailure) {
        self.span.record("error.type", failure.error_type());
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
        assert_eq!(
            CallFailure::of(ToolErrorKind::Failed).error_type(),
            "tool_error"
        );
        assert_eq!(
            CallFailure::of(ToolErrorKind::Aborted).error_type(),
            "aborted"
        );
        assert_eq!(
            CallFailure::of(ToolErrorKind::InvalidArguments).error_type(),
            "invalid_arguments"
        );
        assert_eq!(
            CallFailure::of(ToolErrorKind::Timeout).error_type(),
            "timeout"
        );
        assert_eq!(
            CallFailure::of(ToolErrorKind::Panicked).error_type(),
            "panic"
        );
    }

    #[test]
    fn a_span_without_subscriber_records_nothing_and_does_not_panic() {
        let span = CallSpan::new("t", "c");
        assert!(span.span().is_disabled());
        let policy = CallPolicy::default();
        span.record_arguments(&json!({}), &policy);
        span.record_update(&JsonToolResult::text("x", None), &policy);
        span.record_result(
            &JsonToolResult::text("x", None),
            Some(CallFailure::of(ToolErrorKind::Failed)),
            &policy,
        );
    }
}
