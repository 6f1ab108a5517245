//! The call policy: what happens to one tool call between the model's arguments and the
//! result the model reads, the same on every host.
//!
//! ```text
//! span  ── check ──────────────── execute ─────────────── finish
//!          limits, prepare,         the tool, contained:    redaction (errors),
//!          coerce, validate         panic, timeout, abort   result budget, the span
//! ```
//!
//! A host without hooks runs all of it with [`CallPolicy::call`] (the MCP server). The
//! agent loop runs the steps one by one, with its `before_tool_call` hook between
//! [`check`](CallPolicy::check) and [`execute`](CallPolicy::execute) and its
//! `after_tool_call` hook before [`finish`](CallPolicy::finish). Either way the same
//! containment, the same texts and the same improvements over Pi apply, so an improvement
//! is available on every host or on none.

use std::borrow::Cow;
use std::fmt;
use std::sync::Arc;
use std::time::Duration;

use serde_json::Value;
use tracing::Instrument;

mod contain;
mod span;

use crate::details::JsonDetails;
use crate::error::ToolError;
use crate::result::JsonToolResult;
use crate::safety::{Redactor, ResultBudget};
use crate::schema::ArgumentLimits;
use crate::tool::{AgentTool, ToolInvocation};
use crate::update::OnUpdate;
pub use contain::panic_text;
pub use contain::{call_contained, check_contained, execute_contained};
pub use span::{CallFailure, CallSpan};

/// How a host runs each tool call. Everything is off by default (Pi's behaviour) except
/// the [`argument_limits`](Self::argument_limits), which only refuse what no real tool
/// call sends.
///
/// ```
/// use std::time::Duration;
/// use pi_tool_core::CallPolicy;
/// use pi_tool_core::safety::{Redactor, ResultBudget};
///
/// let policy = CallPolicy::new()
///     .tool_timeout(Duration::from_secs(30))
///     .redact_secrets(Redactor::new(["sk-live-0123456789"]).unwrap())
///     .result_budget(ResultBudget::new(50 * 1024, 2000));
/// assert_eq!(policy.tool_timeout, Some(Duration::from_secs(30)));
/// ```
#[derive(Clone)]
#[non_exhaustive]
pub struct CallPolicy {
    /// The most bytes, nesting levels and string characters a call's arguments may have
    /// before any tool code sees them (4 MiB, 64, 1 Mi characters; see
    /// [`ArgumentLimits`]). On by default, unlike the rest; a tool's own
    /// [`ToolSpec::argument_limits`](crate::ToolSpec) replace these for that tool.
    pub argument_limits: ArgumentLimits,
    /// Ends a call that runs longer, with an error, for tools without a timeout of their
    /// own ([`ToolSpec::timeout`](crate::ToolSpec)).
    pub tool_timeout: Option<Duration>,
    /// Redacts configured secrets from every error before the model sees it.
    pub redactor: Option<Arc<Redactor>>,
    /// Bounds what the model reads of each result; the full text stays in the details
    /// (`{"details", "fullText", "truncation"}`, see [`ResultBudget`]).
    pub result_budget: Option<ResultBudget>,
    /// Records each call's arguments and result (and its progress text) in its
    /// `execute_tool` span, through [`redactor`](Self::redactor) first. Off by default:
    /// traces leave the process.
    pub trace_content: bool,
}

impl Default for CallPolicy {
    /// Pi's behaviour, with the default [`ArgumentLimits`].
    fn default() -> Self {
        CallPolicy {
            argument_limits: ArgumentLimits::new(),
            tool_timeout: None,
            redactor: None,
            result_budget: None,
            trace_content: false,
        }
    }
}

impl CallPolicy {
    /// Pi's behaviour, with the default [`ArgumentLimits`].
    pub fn new() -> Self {
        CallPolicy::default()
    }

    /// Sets the limits on every call's arguments (tools' own limits take precedence);
    /// [`ArgumentLimits::unlimited`] is Pi's behaviour.
    #[must_use]
    pub fn argument_limits(mut self, limits: ArgumentLimits) -> Self {
        self.argument_limits = limits;
        self
    }

    /// Ends calls that run longer than `timeout` (tools' own timeouts take precedence).
    #[must_use]
    pub fn tool_timeout(mut self, timeout: Duration) -> Self {
        self.tool_timeout = Some(timeout);
        self
    }

    /// Redacts `redactor`'s secrets (and its built-in token patterns) from the text of
    /// every error: tool errors, panics, timeouts, validation messages and, on hosts with
    /// hooks, hook failures and block reasons.
    #[must_use]
    pub fn redact_secrets(mut self, redactor: Redactor) -> Self {
        self.redactor = Some(Arc::new(redactor));
        self
    }

    /// Bounds the text of every result the model reads; the full text stays in the
    /// details.
    #[must_use]
    pub fn result_budget(mut self, budget: ResultBudget) -> Self {
        self.result_budget = Some(budget);
        self
    }

    /// Records arguments and results in the tool spans, redacted first.
    #[must_use]
    pub fn trace_content(mut self, on: bool) -> Self {
        self.trace_content = on;
        self
    }

    /// The whole path, for a host without hooks: [`span`](Self::span),
    /// [`check`](Self::check), [`execute`](Self::execute), then the error redacted or the
    /// result budgeted, and both recorded in the span. Never panics, whatever the tool
    /// does.
    pub async fn call(
        &self,
        tool: &dyn AgentTool,
        call: ToolInvocation<'_>,
    ) -> Result<JsonToolResult, ToolError> {
        let span = self.span(tool.name(), call.id, call.params);
        let on_update = self.traced_updates(&span, call.on_update.clone());
        let run = async {
            let params = self.check(tool, call.params)?;
            let call = ToolInvocation {
                params: &*params,
                on_update: on_update.clone(),
                ..call
            };
            self.execute(tool, call).await
        };
        let outcome = if span.span().is_disabled() {
            run.await
        } else {
            run.instrument(span.span().clone()).await
        };
        on_update.close();
        match outcome {
            Ok(result) => Ok(self.finish(&span, result, None)),
            Err(error) => Err(self.fail(&span, error)),
        }
    }

    /// Starts the `execute_tool` span of a call (a child of the current span) and
    /// records the model's arguments in it if the policy traces content.
    pub fn span(&self, tool_name: &str, call_id: &str, arguments: &Value) -> CallSpan {
        let span = CallSpan::new(tool_name, call_id);
        span.record_arguments(arguments, self);
        span
    }

    /// Checks raw model arguments: the argument limits (the tool's own
    /// [`ToolSpec::argument_limits`](crate::ToolSpec) when set, else the policy's), then
    /// the tool's `prepare_arguments`, Pi's null normalisation and coercion, and
    /// validation against the tool's [`ToolSchema`](crate::schema::ToolSchema). A panic
    /// in `prepare_arguments` reads as a panic in `execute` does. The arguments come back
    /// borrowed unless a step changed them.
    pub fn check<'a>(
        &self,
        tool: &dyn AgentTool,
        arguments: &'a Value,
    ) -> Result<Cow<'a, Value>, ToolError> {
        check_contained(tool, arguments, &self.argument_limits)
    }

    /// Executes checked arguments, contained: a panic, the timeout (the tool's own, else
    /// the policy's) and an abort become a [`ToolError`] with the same text on every host.
    pub async fn execute(
        &self,
        tool: &dyn AgentTool,
        call: ToolInvocation<'_>,
    ) -> Result<JsonToolResult, ToolError> {
        let timeout = tool.spec().timeout.or(self.tool_timeout);
        execute_contained(tool, call, timeout).await
    }

    /// Finishes a call that has a result (hosts that turn errors into error results, as
    /// the agent loop does): an error result's text is redacted, every result goes
    /// through the budget, and the span records how the call ended (`failure` is `None`
    /// for a success).
    pub fn finish(
        &self,
        span: &CallSpan,
        mut result: JsonToolResult,
        failure: Option<CallFailure>,
    ) -> JsonToolResult {
        if failure.is_some()
            && let Some(redactor) = &self.redactor
        {
            redactor.redact_content(&mut result.content);
        }
        if let Some(budget) = &self.result_budget {
            result = budget.apply_json(result);
        }
        span.record_result(&result, failure, self);
        result
    }

    /// Finishes a call that failed, for hosts that keep errors apart from results (the
    /// MCP server): the error's text redacted, and its kind recorded in the span.
    pub fn fail(&self, span: &CallSpan, error: ToolError) -> ToolError {
        let error = match &self.redactor {
            Some(redactor) => redactor.redact_error(error),
            None => error,
        };
        span.record_error(&error, self);
        error
    }

    /// `on_update` that also records each update in the call's span. Only when a
    /// subscriber wants the span: otherwise the host's callback comes back untouched (and
    /// nothing is allocated).
    pub fn traced_updates(
        &self,
        span: &CallSpan,
        on_update: OnUpdate<Option<JsonDetails>>,
    ) -> OnUpdate<Option<JsonDetails>> {
        if span.span().is_disabled() {
            return on_update;
        }
        let (span, policy) = (span.clone(), self.clone());
        OnUpdate::new(move |update: JsonToolResult| {
            span.record_update(&update, &policy);
            on_update.send(update);
        })
    }
}

impl fmt::Debug for CallPolicy {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("CallPolicy")
            .field("argument_limits", &self.argument_limits)
            .field("tool_timeout", &self.tool_timeout)
            // The redactor's secrets never reach a log.
            .field("redactor", &self.redactor.is_some())
            .field(
                "result_budget",
                &self
                    .result_budget
                    .as_ref()
                    .map(|b| (b.max_bytes(), b.max_lines())),
            )
            .field("trace_content", &self.trace_content)
            .finish()
    }
}
