//! The run policy: how tool calls are run, the one struct every host embeds.
//!
//! Pi's hooks and batch mode, and pi-tool's improvements over Pi (a concurrency limit, a
//! default timeout, secret redaction, a result budget, argument limits), live here once.
//! The agent loop's [`LoopConfig`](super::LoopConfig), the [`Agent`](super::Agent)'s
//! [`AgentOptions`](super::AgentOptions) and the session builder each hold a `RunPolicy`,
//! so an improvement is available on every host or on none. Everything is off by default,
//! which is Pi's behaviour, except the argument limits, which only refuse what no real
//! tool call sends.

use std::num::NonZeroUsize;
use std::sync::Arc;
use std::time::Duration;

use pi_tool_core::ToolExecutionMode;
use crate::safety::{Redactor, ResultBudget};
use crate::schema::ArgumentLimits;

use super::hooks::{AfterToolCall, BeforeToolCall};

/// How the tool calls of a run are executed: the one policy the agent loop, the [`Agent`](super::Agent),
/// the session builder and the MCP server all take. Everything is off by default (Pi's
/// behaviour) except [`argument_limits`](Self::argument_limits).
#[derive(Clone)]
#[non_exhaustive]
pub struct RunPolicy {
    /// The most bytes, nesting levels and string characters a call's arguments may have
    /// before any tool code sees them (4 MiB, 64, 1 Mi characters; see
    /// [`ArgumentLimits`]). On by default, unlike the rest; a tool's own
    /// [`ToolSpec::argument_limits`](crate::ToolSpec) replace these for that tool.
    pub argument_limits: ArgumentLimits,
    /// The batch mode (Pi's default: parallel). A tool whose own mode is sequential makes
    /// its whole batch sequential.
    pub tool_execution: ToolExecutionMode,
    /// Runs before each call's execution and may block it (Pi's `beforeToolCall`).
    pub before_tool_call: Option<Arc<dyn BeforeToolCall>>,
    /// Runs after each executed call and may replace its result (Pi's `afterToolCall`).
    pub after_tool_call: Option<Arc<dyn AfterToolCall>>,
    /// At most this many calls of a parallel batch run at once (`None`: unbounded, as Pi).
    pub max_concurrency: Option<NonZeroUsize>,
    /// Ends a call that runs longer, with an error result, for tools without a timeout of
    /// their own.
    pub tool_timeout: Option<Duration>,
    /// Redacts configured secrets from every error result before the model sees it.
    pub redactor: Option<Arc<Redactor>>,
    /// Bounds what the model reads of each result; the full text stays in the details
    /// (`{"details", "fullText", "truncation"}`, see [`ResultBudget`]). Off by default,
    /// for Pi parity.
    pub result_budget: Option<ResultBudget>,
    /// Records each call's arguments and result (and its progress text) in its
    /// `execute_tool` span, through [`redactor`](Self::redactor) first
    /// ([`telemetry`](super::telemetry)). Off by default: traces leave the process.
    pub trace_content: bool,
}

impl Default for RunPolicy {
    /// Pi's policy (parallel batches, no hooks, no limits) with the default
    /// [`ArgumentLimits`].
    fn default() -> Self {
        RunPolicy {
            argument_limits: ArgumentLimits::new(),
            tool_execution: ToolExecutionMode::Parallel,
            before_tool_call: None,
            after_tool_call: None,
            max_concurrency: None,
            tool_timeout: None,
            redactor: None,
            result_budget: None,
            trace_content: false,
        }
    }
}

impl RunPolicy {
    /// Pi's policy (parallel batches, no hooks, no limits) with the default
    /// [`ArgumentLimits`].
    pub fn new() -> Self {
        RunPolicy::default()
    }

    /// Sets the limits on every call's arguments (tools' own limits take precedence);
    /// [`ArgumentLimits::unlimited`] is Pi's behaviour.
    #[must_use]
    pub fn argument_limits(mut self, limits: ArgumentLimits) -> Self {
        self.argument_limits = limits;
        self
    }

    /// Sets the batch mode.
    #[must_use]
    pub fn tool_execution(mut self, mode: ToolExecutionMode) -> Self {
        self.tool_execution = mode;
        self
    }

    /// Installs a `before_tool_call` hook.
    #[must_use]
    pub fn before_tool_call(mut self, hook: Arc<dyn BeforeToolCall>) -> Self {
        self.before_tool_call = Some(hook);
        self
    }

    /// Installs an `after_tool_call` hook.
    #[must_use]
    pub fn after_tool_call(mut self, hook: Arc<dyn AfterToolCall>) -> Self {
        self.after_tool_call = Some(hook);
        self
    }

    /// Bounds how many calls of a parallel batch run at once.
    #[must_use]
    pub fn max_concurrency(mut self, limit: NonZeroUsize) -> Self {
        self.max_concurrency = Some(limit);
        self
    }

    /// Ends calls that run longer than `timeout` (tools' own timeouts take precedence).
    #[must_use]
    pub fn tool_timeout(mut self, timeout: Duration) -> Self {
        self.tool_timeout = Some(timeout);
        self
    }

    /// Redacts `redactor`'s secrets (and its built-in token patterns) from the text of
    /// every error result: tool errors, panics, hook failures, block reasons and
    /// validation messages, before events, the transcript or the model see them.
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

    /// Records arguments and results in the tool spans, redacted first (the field
    /// `trace_content`).
    #[must_use]
    pub fn trace_content(mut self, on: bool) -> Self {
        self.trace_content = on;
        self
    }
}

impl std::fmt::Debug for RunPolicy {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("RunPolicy")
            .field("argument_limits", &self.argument_limits)
            .field("tool_execution", &self.tool_execution)
            .field("before_tool_call", &self.before_tool_call.is_some())
            .field("after_tool_call", &self.after_tool_call.is_some())
            .field("max_concurrency", &self.max_concurrency)
            .field("tool_timeout", &self.tool_timeout)
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
