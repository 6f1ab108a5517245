//! The run policy: how the agent runs the tool calls of a batch.
//!
//! What happens to each call (argument limits, timeout, redaction, result budget, trace
//! content) is the [`CallPolicy`] every host shares, held here as [`RunPolicy::call`].
//! What only a loop has is the rest: the batch mode, a concurrency limit, and Pi's
//! `before_tool_call` / `after_tool_call` hooks, which see the assistant message and the
//! context of the turn. The loop's [`LoopConfig`](super::LoopConfig), the
//! [`Agent`](super::Agent)'s [`AgentOptions`](super::AgentOptions) and the session builder
//! each take a `RunPolicy`. Everything is off by default, which is Pi's behaviour, except
//! the argument limits, which only refuse what no real tool call sends.

use std::num::NonZeroUsize;
use std::sync::Arc;

use pi_tool_core::{CallPolicy, DEFAULT_MAX_DEPTH, ToolExecutionMode};

use super::hooks::{AfterToolCall, BeforeToolCall};
use super::limits::RunLimits;
use super::widen::WidenSandbox;
use pi_tool_core::concurrency::ConcurrencyLimits;

/// How the tool calls of a run are executed: the agent's [`CallPolicy`] for each call,
/// and how a batch runs them. Everything is off by default (Pi's behaviour) except the
/// call policy's argument limits.
///
/// ```
/// use std::num::NonZeroUsize;
/// use std::time::Duration;
/// use pi_tool::CallPolicy;
/// use pi_tool::agent::RunPolicy;
///
/// let policy = RunPolicy::new()
///     .call(CallPolicy::new().tool_timeout(Duration::from_secs(30)))
///     .max_concurrency(NonZeroUsize::new(4).unwrap());
/// assert_eq!(policy.call.tool_timeout, Some(Duration::from_secs(30)));
/// ```
#[derive(Clone)]
#[non_exhaustive]
pub struct RunPolicy {
    /// What happens to each call: argument limits, timeout, redaction, result budget,
    /// trace content.
    pub call: CallPolicy,
    /// The batch mode (Pi's default: parallel). A tool whose own mode is sequential makes
    /// its whole batch sequential.
    pub tool_execution: ToolExecutionMode,
    /// At most this many calls of a parallel batch run at once (`None`: unbounded, as Pi).
    pub max_concurrency: Option<NonZeroUsize>,
    /// Runs before each call's execution and may block it (Pi's `beforeToolCall`).
    pub before_tool_call: Option<Arc<dyn BeforeToolCall>>,
    /// Runs after each executed call and may replace its result (Pi's `afterToolCall`).
    pub after_tool_call: Option<Arc<dyn AfterToolCall>>,
    /// How deep nested calls (`ctx.call_tool`) may go: a call at this depth cannot make
    /// nested calls (default [`DEFAULT_MAX_DEPTH`], 8; a direct call is depth 0).
    pub max_call_depth: usize,
    /// Limits per concurrency class and in total, in weight of executing calls, direct
    /// and nested (none by default: Pi has no limit).
    pub concurrency: ConcurrencyLimits,
    /// Limits on the number of calls per run and per turn, direct and nested.
    pub limits: RunLimits,
    /// Asked when a call's sandbox refused something a widening for that one call would
    /// allow; its approval runs the call once more, widened (`None`, the default: the
    /// model reads the refusal).
    pub widen_sandbox: Option<Arc<dyn WidenSandbox>>,
}

impl Default for RunPolicy {
    /// Pi's policy (parallel batches, no hooks, no limits) with the default argument
    /// limits.
    fn default() -> Self {
        RunPolicy {
            call: CallPolicy::default(),
            tool_execution: ToolExecutionMode::Parallel,
            max_concurrency: None,
            before_tool_call: None,
            after_tool_call: None,
            max_call_depth: DEFAULT_MAX_DEPTH,
            concurrency: ConcurrencyLimits::new(),
            limits: RunLimits::new(),
            widen_sandbox: None,
        }
    }
}

impl RunPolicy {
    /// Pi's policy (parallel batches, no hooks, no limits) with the default argument
    /// limits.
    pub fn new() -> Self {
        RunPolicy::default()
    }

    /// Sets what happens to each call.
    #[must_use]
    pub fn call(mut self, call: CallPolicy) -> Self {
        self.call = call;
        self
    }

    /// Sets the batch mode.
    #[must_use]
    pub fn tool_execution(mut self, mode: ToolExecutionMode) -> Self {
        self.tool_execution = mode;
        self
    }

    /// Bounds how many calls of a parallel batch run at once.
    #[must_use]
    pub fn max_concurrency(mut self, limit: NonZeroUsize) -> Self {
        self.max_concurrency = Some(limit);
        self
    }

    /// Installs a `before_tool_call` hook.
    #[must_use]
    pub fn before_tool_call(mut self, hook: Arc<dyn BeforeToolCall>) -> Self {
        self.before_tool_call = Some(hook);
        self
    }

    /// Sets how deep nested calls may go (0: tools make no nested calls).
    #[must_use]
    pub fn max_call_depth(mut self, depth: usize) -> Self {
        self.max_call_depth = depth;
        self
    }

    /// Sets the limits per concurrency class and in total.
    #[must_use]
    pub fn concurrency(mut self, limits: ConcurrencyLimits) -> Self {
        self.concurrency = limits;
        self
    }

    /// Sets the limits on the number of calls.
    #[must_use]
    pub fn limits(mut self, limits: RunLimits) -> Self {
        self.limits = limits;
        self
    }

    /// Installs an `after_tool_call` hook.
    #[must_use]
    pub fn after_tool_call(mut self, hook: Arc<dyn AfterToolCall>) -> Self {
        self.after_tool_call = Some(hook);
        self
    }

    /// Offers to widen a call's sandbox after it refused something: `hook` is asked
    /// (an [`ApprovalPolicy`](super::ApprovalPolicy) asks its UI), and its approval runs
    /// that call once more with exactly the widening asked (`docs/sandbox.md`, "Asking
    /// to widen").
    ///
    /// ```
    /// use std::sync::Arc;
    /// use pi_tool::agent::{ApprovalPolicy, RunPolicy};
    /// # struct Terminal;
    /// # impl pi_tool::context::ExtensionUi for Terminal {}
    ///
    /// let approval = Arc::new(ApprovalPolicy::new().ui(Arc::new(Terminal)));
    /// let policy = RunPolicy::new()
    ///     .before_tool_call(approval.clone()) // asks before destructive calls
    ///     .widen_sandbox(approval); // asks when a sandbox refused something
    /// # let _ = policy;
    /// ```
    #[must_use]
    pub fn widen_sandbox(mut self, hook: Arc<dyn WidenSandbox>) -> Self {
        self.widen_sandbox = Some(hook);
        self
    }
}

impl From<CallPolicy> for RunPolicy {
    fn from(call: CallPolicy) -> Self {
        RunPolicy::new().call(call)
    }
}

impl std::fmt::Debug for RunPolicy {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("RunPolicy")
            .field("call", &self.call)
            .field("tool_execution", &self.tool_execution)
            .field("max_concurrency", &self.max_concurrency)
            .field("before_tool_call", &self.before_tool_call.is_some())
            .field("after_tool_call", &self.after_tool_call.is_some())
            .field("max_call_depth", &self.max_call_depth)
            .field("concurrency", &self.concurrency)
            .field("limits", &self.limits)
            .field("widen_sandbox", &self.widen_sandbox.is_some())
            .finish()
    }
}
