//! How an [`Agent`](super::Agent) is built and what it holds: [`AgentOptions`] (Pi's
//! `AgentOptions`), [`AgentState`], the queue modes and the errors a prompt can meet.

use std::collections::HashSet;
use std::num::NonZeroUsize;
use std::sync::Arc;
use std::time::Duration;

use super::hooks::{AfterToolCall, BeforeToolCall, PrepareNextTurn};
use super::policy::RunPolicy;
use super::run::ContinueError;
use super::suspend::DurableRuns;
use crate::model::Message;
use crate::model::{Model, StreamFn, StreamOptions, ThinkingLevel};
use crate::safety::Redactor;
use pi_tool_core::AgentTool;
use pi_tool_core::ToolExecutionMode;

/// How queued steering / follow-up messages are delivered.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum QueueMode {
    /// One message per poll (Pi's default).
    #[default]
    OneAtATime,
    /// Every queued message at once.
    All,
}

/// The agent's state (Pi's `AgentState`).
#[derive(Clone, Default)]
#[non_exhaustive]
pub struct AgentState {
    /// The system prompt.
    pub system_prompt: String,
    /// The model descriptor.
    pub model: Model,
    /// The thinking level.
    pub thinking_level: ThinkingLevel,
    /// The tools; repeated names: the first wins.
    pub tools: Vec<Arc<dyn AgentTool>>,
    /// The transcript.
    pub messages: Vec<Message>,
    /// Whether a run is active.
    pub is_streaming: bool,
    /// The message being streamed: set at `message_start`, cleared at `message_end`.
    /// (Pi also replaces it at every `message_update`; pi-tool does not keep update
    /// partials, so that streaming stays O(n).)
    pub streaming_message: Option<Message>,
    /// Ids of the tool calls that started and have not ended.
    pub pending_tool_calls: HashSet<Arc<str>>,
    /// The error of the last failed assistant message of the current/last run.
    pub error_message: Option<String>,
}

impl std::fmt::Debug for AgentState {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("AgentState")
            .field("system_prompt", &self.system_prompt)
            .field("model", &self.model.id)
            .field(
                "tools",
                &self.tools.iter().map(|t| t.name()).collect::<Vec<_>>(),
            )
            .field("messages", &self.messages.len())
            .field("is_streaming", &self.is_streaming)
            .field("error_message", &self.error_message)
            .finish_non_exhaustive()
    }
}

/// How to build an [`Agent`](super::Agent) (Pi's `AgentOptions`).
#[derive(Clone)]
#[non_exhaustive]
pub struct AgentOptions {
    /// The initial state (prompt, model, tools, transcript).
    pub initial_state: AgentState,
    /// The model implementation.
    pub stream_fn: Arc<dyn StreamFn>,
    /// How tool calls run: batch mode, hooks, limits, redaction, result budget.
    pub policy: RunPolicy,
    /// Runs between turns (hosts that change tools between turns).
    pub prepare_next_turn: Option<Arc<dyn PrepareNextTurn>>,
    /// Request options for every model call (API key, token limit, temperature, tool
    /// choice); the run sets the signal and the reasoning level itself.
    pub stream_options: StreamOptions,
    /// Steering delivery.
    pub steering_mode: QueueMode,
    /// Follow-up delivery.
    pub follow_up_mode: QueueMode,
    /// Where runs suspend when a call waits for a decision (`None`: such a call is
    /// blocked, saying that nothing here can wait for the decision).
    pub durable: Option<DurableRuns>,
}

impl AgentOptions {
    /// Options with this model implementation and Pi's defaults.
    pub fn new(stream_fn: Arc<dyn StreamFn>) -> Self {
        AgentOptions {
            initial_state: AgentState::default(),
            stream_fn,
            policy: RunPolicy::default(),
            prepare_next_turn: None,
            stream_options: StreamOptions::default(),
            steering_mode: QueueMode::OneAtATime,
            follow_up_mode: QueueMode::OneAtATime,
            durable: None,
        }
    }

    /// Runs suspend into this store when a call waits for a decision
    /// ([`Agent::run`](super::Agent::run), [`Agent::resume_run`](super::Agent::resume_run)).
    #[must_use]
    pub fn durable(mut self, runs: DurableRuns) -> Self {
        self.durable = Some(runs);
        self
    }

    /// Sets the system prompt.
    #[must_use]
    pub fn system_prompt(mut self, prompt: impl Into<String>) -> Self {
        self.initial_state.system_prompt = prompt.into();
        self
    }

    /// Sets the request options of every model call (API key, token limit, temperature,
    /// tool choice, ...).
    pub fn stream_options(mut self, options: StreamOptions) -> Self {
        self.stream_options = options;
        self
    }

    /// Sets the model descriptor.
    #[must_use]
    pub fn model(mut self, model: Model) -> Self {
        self.initial_state.model = model;
        self
    }

    /// Sets the tools.
    #[must_use]
    pub fn tools(mut self, tools: Vec<Arc<dyn AgentTool>>) -> Self {
        self.initial_state.tools = tools;
        self
    }

    /// Sets the batch mode.
    #[must_use]
    pub fn tool_execution(mut self, mode: ToolExecutionMode) -> Self {
        self.policy.tool_execution = mode;
        self
    }

    /// Installs a `before_tool_call` hook.
    #[must_use]
    pub fn before_tool_call(mut self, hook: Arc<dyn BeforeToolCall>) -> Self {
        self.policy.before_tool_call = Some(hook);
        self
    }

    /// Installs an `after_tool_call` hook.
    #[must_use]
    pub fn after_tool_call(mut self, hook: Arc<dyn AfterToolCall>) -> Self {
        self.policy.after_tool_call = Some(hook);
        self
    }

    /// Installs a `prepare_next_turn` hook.
    #[must_use]
    pub fn prepare_next_turn(mut self, hook: Arc<dyn PrepareNextTurn>) -> Self {
        self.prepare_next_turn = Some(hook);
        self
    }

    /// Bounds how many calls of a parallel batch run at once.
    #[must_use]
    pub fn max_concurrency(mut self, limit: NonZeroUsize) -> Self {
        self.policy.max_concurrency = Some(limit);
        self
    }

    /// Ends calls that run longer than `timeout` (tools' own timeouts take precedence).
    #[must_use]
    pub fn tool_timeout(mut self, timeout: Duration) -> Self {
        self.policy.call.tool_timeout = Some(timeout);
        self
    }

    /// Sets the whole run policy (the call policy, batch mode, concurrency, hooks).
    #[must_use]
    pub fn policy(mut self, policy: RunPolicy) -> Self {
        self.policy = policy;
        self
    }

    /// Bounds the text of every result the model reads; the full text stays in the
    /// details ([`CallPolicy::result_budget`](pi_tool_core::CallPolicy)).
    #[must_use]
    pub fn result_budget(mut self, budget: crate::safety::ResultBudget) -> Self {
        self.policy.call.result_budget = Some(budget);
        self
    }

    /// Redacts `redactor`'s secrets (and its built-in token patterns) from the text of
    /// every error result: tool errors, panics, hook failures, block reasons and
    /// validation messages, before events, the transcript or the model see them.
    #[must_use]
    pub fn redact_secrets(mut self, redactor: Redactor) -> Self {
        self.policy.call.redactor = Some(Arc::new(redactor));
        self
    }
}

/// Why a prompt could not start.
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub enum AgentError {
    /// A run is active (Pi's text).
    AlreadyProcessing,
    /// `continue` cannot start from this transcript.
    Continue(ContinueError),
    /// `continue` with an empty transcript.
    NoMessages,
    /// A durable run was asked of an agent without a store ([`AgentOptions::durable`]).
    NoStore,
    /// The store refused or failed (a run taken by another process, an unknown run, a
    /// state it cannot read, a database error).
    Store(crate::durable::StoreError),
    /// A tool of the agent reaches (`#[pi_tool(reaches = [...])]`) a tool the agent does
    /// not have: the run refuses to start, naming both, instead of the nested call
    /// failing with `Tool x not found` in the middle of the run.
    MissingReach(pi_tool_core::pack::MissingReach),
}

impl std::fmt::Display for AgentError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            AgentError::AlreadyProcessing => f.write_str(
                "Agent is already processing a prompt. Use steer() or followUp() to queue messages, or wait for completion.",
            ),
            AgentError::Continue(e) => e.fmt(f),
            AgentError::NoMessages => f.write_str("No messages to continue from"),
            AgentError::NoStore => f.write_str("This agent has no store for durable runs"),
            AgentError::Store(e) => e.fmt(f),
            AgentError::MissingReach(e) => e.fmt(f),
        }
    }
}

impl std::error::Error for AgentError {}
