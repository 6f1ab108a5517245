//! `Agent`: the stateful wrapper around the loop (Pi's `Agent`).
//!
//! An agent owns a transcript, a model and its tools. [`Agent::prompt`] runs the loop
//! on a snapshot of that state (tools changed mid-run take effect only through
//! [`AgentOptions::prepare_next_turn`], as in Pi), reduces every event into the state
//! (messages, pending tool calls, error message) and then hands it to the listeners,
//! **awaited one after another in subscription order**. [`Agent::abort`] aborts the
//! active run's signal; [`Agent::steer`] and [`Agent::follow_up`] queue messages for the
//! running loop.
//!
//! Unlike Pi, a listener that fails or panics does not fail the run: the failure is
//! reported through `tracing` and the next listener still gets the event.
//! A tool list with repeated names behaves like Pi's (the first match wins) and is
//! reported with a `tracing` warning.

use std::collections::HashSet;
use std::num::NonZeroUsize;
use std::panic::AssertUnwindSafe;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex, MutexGuard};
use std::time::Duration;

use async_trait::async_trait;
use futures::FutureExt;

use super::event::AgentEvent;
use super::faux::FauxModel;
use super::hooks::{AfterToolCall, BeforeToolCall, PrepareNextTurn};
use super::message::{AssistantMessage, Message, StopReason};
use super::model::{Model, StreamFn, StreamOptions, ThinkingLevel};
use super::policy::RunPolicy;
use super::run::{
    AgentEventSink, ContinueError, Emit, LoopConfig, run_agent_loop, run_agent_loop_continue,
};
use crate::abort::{AbortController, AbortSignal};
use crate::mode::ToolExecutionMode;
use crate::safety::Redactor;
use crate::tool::AgentTool;

/// What a listener returns: an error is reported, never propagated.
pub type ListenerResult = Result<(), Box<dyn std::error::Error + Send + Sync>>;

/// An event listener, awaited in subscription order (Pi's `agent.subscribe(listener)`).
#[async_trait]
pub trait AgentListener: Send + Sync + 'static {
    /// Handles one event; `signal` is the active run's abort signal.
    async fn on_event(&self, event: &AgentEvent, signal: &AbortSignal) -> ListenerResult;
}

type SyncListener = dyn Fn(&AgentEvent, &AbortSignal) -> ListenerResult + Send + Sync;

/// A subscribed listener. Synchronous listeners are called without boxing a future
/// (the common case: recording, forwarding to a channel).
#[derive(Clone)]
enum Listener {
    Sync(Arc<SyncListener>),
    Async(Arc<dyn AgentListener>),
}

/// Identifies a subscription, for [`Agent::unsubscribe`].
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct ListenerId(u64);

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

/// How to build an [`Agent`] (Pi's `AgentOptions`).
#[derive(Clone)]
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
}

impl Default for AgentOptions {
    /// The faux model (answers `Done.`), no tools.
    fn default() -> Self {
        AgentOptions::new(Arc::new(FauxModel::default()))
    }
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
        }
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
        self.policy.tool_timeout = Some(timeout);
        self
    }

    /// Sets the whole run policy (hooks, limits, redaction, result budget).
    #[must_use]
    pub fn policy(mut self, policy: RunPolicy) -> Self {
        self.policy = policy;
        self
    }

    /// Bounds the text of every result the model reads; the full text stays in the
    /// details ([`RunPolicy::result_budget`]).
    #[must_use]
    pub fn result_budget(mut self, budget: crate::safety::ResultBudget) -> Self {
        self.policy.result_budget = Some(budget);
        self
    }

    /// Redacts `redactor`'s secrets (and its built-in token patterns) from the text of
    /// every error result: tool errors, panics, hook failures, block reasons and
    /// validation messages, before events, the transcript or the model see them.
    #[must_use]
    pub fn redact_secrets(mut self, redactor: Redactor) -> Self {
        self.policy.redactor = Some(Arc::new(redactor));
        self
    }
}

/// Why a prompt could not start.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum AgentError {
    /// A run is active (Pi's text).
    AlreadyProcessing,
    /// `continue` cannot start from this transcript.
    Continue(ContinueError),
    /// `continue` with an empty transcript.
    NoMessages,
}

impl std::fmt::Display for AgentError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            AgentError::AlreadyProcessing => f.write_str(
                "Agent is already processing a prompt. Use steer() or followUp() to queue messages, or wait for completion.",
            ),
            AgentError::Continue(e) => e.fmt(f),
            AgentError::NoMessages => f.write_str("No messages to continue from"),
        }
    }
}

impl std::error::Error for AgentError {}

struct Queue {
    mode: QueueMode,
    messages: Vec<Message>,
}

impl Queue {
    fn drain(&mut self) -> Vec<Message> {
        match self.mode {
            QueueMode::All => std::mem::take(&mut self.messages),
            QueueMode::OneAtATime if self.messages.is_empty() => Vec::new(),
            QueueMode::OneAtATime => vec![self.messages.remove(0)],
        }
    }
}

struct Inner {
    state: Mutex<AgentState>,
    /// Copy-on-write: a run keeps an `Arc` of the list, not a copy.
    listeners: Mutex<Arc<Vec<Listed>>>,
    /// Bumped (under the lock) whenever `listeners` changes: a run re-reads the list only
    /// then, instead of taking the lock for every event (seven per tool call).
    listeners_version: AtomicU64,
    next_listener: AtomicU64,
    options: AgentOptions,
    steering: Arc<Mutex<Queue>>,
    follow_up: Arc<Mutex<Queue>>,
    active: Arc<Mutex<Option<AbortController>>>,
    idle: tokio::sync::Notify,
}

fn lock<T>(m: &Mutex<T>) -> MutexGuard<'_, T> {
    // State updates are single assignments; a panicking listener cannot leave them torn.
    m.lock().unwrap_or_else(|poisoned| poisoned.into_inner())
}

/// Aborts an agent's active run without keeping the agent alive (for listeners and
/// tools that must not hold the agent).
#[derive(Clone)]
pub struct AbortHandle {
    active: Arc<Mutex<Option<AbortController>>>,
}

impl AbortHandle {
    /// Aborts the active run, if any.
    pub fn abort(&self) {
        if let Some(controller) = lock(&self.active).as_ref() {
            controller.abort();
        }
    }
}

/// A stateful agent (Pi's `Agent`). Cheap to clone; clones share everything.
#[derive(Clone)]
pub struct Agent {
    inner: Arc<Inner>,
}

fn warn_duplicates(tools: &[Arc<dyn AgentTool>]) {
    let mut seen = HashSet::new();
    for tool in tools {
        if !seen.insert(tool.name()) {
            tracing::warn!(
                tool = tool.name(),
                "duplicate tool name: the first tool with this name handles every call"
            );
        }
    }
}

impl Agent {
    /// An agent with these options.
    pub fn new(options: AgentOptions) -> Self {
        warn_duplicates(&options.initial_state.tools);
        let mut state = options.initial_state.clone();
        state.is_streaming = false;
        state.pending_tool_calls.clear();
        Agent {
            inner: Arc::new(Inner {
                state: Mutex::new(state),
                listeners: Mutex::new(Arc::new(Vec::new())),
                listeners_version: AtomicU64::new(0),
                next_listener: AtomicU64::new(0),
                steering: Arc::new(Mutex::new(Queue {
                    mode: options.steering_mode,
                    messages: Vec::new(),
                })),
                follow_up: Arc::new(Mutex::new(Queue {
                    mode: options.follow_up_mode,
                    messages: Vec::new(),
                })),
                options,
                active: Arc::new(Mutex::new(None)),
                idle: tokio::sync::Notify::new(),
            }),
        }
    }

    /// Subscribes a synchronous listener; it returns `Err` to report a failure.
    ///
    /// Listeners are called in subscription order for every event. As in Pi, which walks
    /// a live `Set`, a listener subscribed while an event is being delivered (by another
    /// listener) is called for that event too, and one unsubscribed before its turn is not.
    pub fn subscribe<F>(&self, listener: F) -> ListenerId
    where
        F: Fn(&AgentEvent, &AbortSignal) -> ListenerResult + Send + Sync + 'static,
    {
        self.add_listener(Listener::Sync(Arc::new(listener)))
    }

    /// Subscribes an asynchronous listener.
    pub fn subscribe_listener(&self, listener: Arc<dyn AgentListener>) -> ListenerId {
        self.add_listener(Listener::Async(listener))
    }

    fn add_listener(&self, listener: Listener) -> ListenerId {
        let id = ListenerId(self.inner.next_listener.fetch_add(1, Ordering::Relaxed));
        let mut listeners = lock(&self.inner.listeners);
        Arc::make_mut(&mut listeners).push((id, listener));
        self.inner.listeners_version.fetch_add(1, Ordering::Release);
        id
    }

    /// Removes a listener.
    pub fn unsubscribe(&self, id: ListenerId) {
        let mut listeners = lock(&self.inner.listeners);
        Arc::make_mut(&mut listeners).retain(|(i, _)| *i != id);
        self.inner.listeners_version.fetch_add(1, Ordering::Release);
    }

    /// A snapshot of the state.
    pub fn state(&self) -> AgentState {
        lock(&self.inner.state).clone()
    }

    /// The transcript.
    pub fn messages(&self) -> Vec<Message> {
        lock(&self.inner.state).messages.clone()
    }

    /// The error message of the last failed assistant message.
    pub fn error_message(&self) -> Option<String> {
        lock(&self.inner.state).error_message.clone()
    }

    /// Whether a run is active.
    pub fn is_streaming(&self) -> bool {
        lock(&self.inner.state).is_streaming
    }

    /// Replaces the tools (takes effect at the next run).
    pub fn set_tools(&self, tools: Vec<Arc<dyn AgentTool>>) {
        warn_duplicates(&tools);
        lock(&self.inner.state).tools = tools;
    }

    /// Replaces the system prompt.
    pub fn set_system_prompt(&self, prompt: impl Into<String>) {
        lock(&self.inner.state).system_prompt = prompt.into();
    }

    /// Replaces the model descriptor.
    pub fn set_model(&self, model: Model) {
        lock(&self.inner.state).model = model;
    }

    /// Sets the thinking level.
    pub fn set_thinking_level(&self, level: ThinkingLevel) {
        lock(&self.inner.state).thinking_level = level;
    }

    /// Replaces the transcript.
    pub fn set_messages(&self, messages: Vec<Message>) {
        lock(&self.inner.state).messages = messages;
    }

    /// Queues a message injected after the current turn.
    pub fn steer(&self, message: Message) {
        lock(&self.inner.steering).messages.push(message);
    }

    /// Queues a message run once the agent would otherwise stop.
    pub fn follow_up(&self, message: Message) {
        lock(&self.inner.follow_up).messages.push(message);
    }

    /// Drops every queued steering and follow-up message.
    pub fn clear_all_queues(&self) {
        lock(&self.inner.steering).messages.clear();
        lock(&self.inner.follow_up).messages.clear();
    }

    /// Whether messages are queued.
    pub fn has_queued_messages(&self) -> bool {
        !lock(&self.inner.steering).messages.is_empty()
            || !lock(&self.inner.follow_up).messages.is_empty()
    }

    /// Aborts the active run, if any.
    pub fn abort(&self) {
        self.abort_handle().abort();
    }

    /// A handle that aborts this agent's runs without keeping the agent alive.
    pub fn abort_handle(&self) -> AbortHandle {
        AbortHandle {
            active: self.inner.active.clone(),
        }
    }

    /// The active run's signal.
    pub fn signal(&self) -> Option<AbortSignal> {
        lock(&self.inner.active)
            .as_ref()
            .map(AbortController::signal)
    }

    /// Waits until no run is active.
    pub async fn wait_for_idle(&self) {
        loop {
            let notified = self.inner.idle.notified();
            if lock(&self.inner.active).is_none() {
                return;
            }
            notified.await;
        }
    }

    /// Clears the transcript, runtime state and queues.
    pub fn reset(&self) -> Result<(), AgentError> {
        if lock(&self.inner.active).is_some() {
            return Err(AgentError::AlreadyProcessing);
        }
        {
            let mut state = lock(&self.inner.state);
            state.messages.clear();
            state.is_streaming = false;
            state.streaming_message = None;
            state.pending_tool_calls.clear();
            state.error_message = None;
        }
        self.clear_all_queues();
        Ok(())
    }

    /// Prompts with a text and runs until the agent stops (Pi's `agent.prompt(text)`).
    pub async fn prompt(&self, text: impl Into<String>) -> Result<(), AgentError> {
        self.prompt_messages(vec![Message::user_text(text)]).await
    }

    /// Prompts with messages and runs until the agent stops.
    pub async fn prompt_messages(&self, messages: Vec<Message>) -> Result<(), AgentError> {
        let (signal, context, config) = self.begin()?;
        let _finish = FinishOnDrop(self);
        let stream_fn = self.inner.options.stream_fn.clone();
        let mut sink = AgentSink::new(self, signal.clone());
        let run = run_agent_loop(messages, context, &config, &mut sink, &signal, &*stream_fn);
        let outcome = AssertUnwindSafe(run).catch_unwind().await;
        if let Err(panic) = outcome {
            self.fail_run(panic_message(&*panic), &signal).await;
        }
        Ok(())
    }

    /// Continues from the transcript (Pi's `agent.continue()`, a keyword in Rust): the
    /// last message must be a user or tool-result message, or queued messages must exist.
    #[doc(alias = "continue")]
    pub async fn resume(&self) -> Result<(), AgentError> {
        let last_is_assistant = match lock(&self.inner.state).messages.last() {
            None => return Err(AgentError::NoMessages),
            Some(m) => matches!(m, Message::Assistant(_)),
        };
        if last_is_assistant {
            let steering = lock(&self.inner.steering).drain();
            if !steering.is_empty() {
                return self.prompt_messages(steering).await;
            }
            let follow_ups = lock(&self.inner.follow_up).drain();
            if !follow_ups.is_empty() {
                return self.prompt_messages(follow_ups).await;
            }
            return Err(AgentError::Continue(ContinueError::LastIsAssistant));
        }
        let (signal, context, config) = self.begin()?;
        let _finish = FinishOnDrop(self);
        let stream_fn = self.inner.options.stream_fn.clone();
        let mut sink = AgentSink::new(self, signal.clone());
        let run = run_agent_loop_continue(context, &config, &mut sink, &signal, &*stream_fn);
        match AssertUnwindSafe(run).catch_unwind().await {
            Ok(Ok(_)) => Ok(()),
            Ok(Err(error)) => Err(AgentError::Continue(error)),
            Err(panic) => {
                self.fail_run(panic_message(&*panic), &signal).await;
                Ok(())
            }
        }
    }

    fn begin(&self) -> Result<(AbortSignal, super::Context, LoopConfig), AgentError> {
        let controller = AbortController::new();
        {
            let mut active = lock(&self.inner.active);
            if active.is_some() {
                return Err(AgentError::AlreadyProcessing);
            }
            *active = Some(controller.clone());
        }
        let mut state = lock(&self.inner.state);
        state.is_streaming = true;
        state.streaming_message = None;
        state.error_message = None;
        let context = super::Context {
            system_prompt: state.system_prompt.clone(),
            messages: state.messages.clone(),
            tools: state.tools.clone(),
        };
        let options = &self.inner.options;
        let steering = self.inner.steering.clone();
        let follow_up = self.inner.follow_up.clone();
        let config = LoopConfig {
            model: state.model.clone(),
            reasoning: (state.thinking_level != ThinkingLevel::Off).then_some(state.thinking_level),
            policy: options.policy.clone(),
            prepare_next_turn: options.prepare_next_turn.clone(),
            steering_messages: Some(Arc::new(move || lock(&steering).drain())),
            follow_up_messages: Some(Arc::new(move || lock(&follow_up).drain())),
            stream_options: options.stream_options.clone(),
        };
        Ok((controller.signal(), context, config))
    }

    fn finish(&self) {
        {
            let mut state = lock(&self.inner.state);
            state.is_streaming = false;
            state.streaming_message = None;
            state.pending_tool_calls.clear();
        }
        *lock(&self.inner.active) = None;
        self.inner.idle.notify_waiters();
    }

    /// Pi's `handleRunFailure`: a synthetic failed assistant message ends the run.
    async fn fail_run(&self, error: String, signal: &AbortSignal) {
        let model = lock(&self.inner.state).model.clone();
        let mut message = AssistantMessage::empty(
            &model,
            if signal.is_aborted() {
                StopReason::Aborted
            } else {
                StopReason::Error
            },
        );
        message.content = vec![super::message::AssistantContent::text("")];
        message.error_message = Some(error);
        let message = Message::from(message);
        let mut sink = AgentSink::new(self, signal.clone());
        sink.emit(AgentEvent::MessageStart {
            message: message.clone(),
        })
        .await;
        sink.emit(AgentEvent::MessageEnd {
            message: message.clone(),
        })
        .await;
        sink.emit(AgentEvent::TurnEnd {
            message: message.clone(),
            tool_results: Vec::new(),
        })
        .await;
        sink.emit(AgentEvent::AgentEnd {
            messages: vec![message],
        })
        .await;
    }

    fn reduce(&self, event: &AgentEvent) {
        // Most events (message updates, turn starts, tool updates) change no state: only
        // the ones below take the lock.
        match event {
            AgentEvent::MessageStart { message } => {
                lock(&self.inner.state).streaming_message = Some(message.clone());
            }
            AgentEvent::MessageEnd { message } => {
                let mut state = lock(&self.inner.state);
                state.streaming_message = None;
                state.messages.push(message.clone());
            }
            AgentEvent::ToolExecutionStart { tool_call_id, .. } => {
                lock(&self.inner.state)
                    .pending_tool_calls
                    .insert(tool_call_id.clone());
            }
            AgentEvent::ToolExecutionEnd { tool_call_id, .. } => {
                lock(&self.inner.state)
                    .pending_tool_calls
                    .remove(tool_call_id);
            }
            AgentEvent::TurnEnd {
                message: Message::Assistant(m),
                ..
            } => {
                if let Some(error) = &m.error_message {
                    lock(&self.inner.state).error_message = Some(error.clone());
                }
            }
            AgentEvent::AgentEnd { .. } => lock(&self.inner.state).streaming_message = None,
            _ => {}
        }
    }
}

fn panic_message(panic: &(dyn std::any::Any + Send)) -> String {
    crate::contain::panic_text(panic, "the agent run panicked")
}

/// Ends the run when the prompt future completes or is dropped (a cancelled prompt
/// must not leave the agent "already processing" forever).
struct FinishOnDrop<'a>(&'a Agent);

impl Drop for FinishOnDrop<'_> {
    fn drop(&mut self) {
        self.0.finish();
    }
}

type Listed = (ListenerId, Listener);

struct AgentSink<'a> {
    agent: &'a Agent,
    signal: AbortSignal,
    /// The listeners as of `version` (see `Inner::listeners_version`).
    listeners: Arc<Vec<Listed>>,
    version: u64,
}

impl<'a> AgentSink<'a> {
    fn new(agent: &'a Agent, signal: AbortSignal) -> Self {
        let version = agent.inner.listeners_version.load(Ordering::Acquire);
        AgentSink {
            agent,
            signal,
            listeners: lock(&agent.inner.listeners).clone(),
            version,
        }
    }

    /// Re-reads the listeners if a subscribe or unsubscribe happened since the last read.
    fn refresh_listeners(&mut self) -> bool {
        let version = self.agent.inner.listeners_version.load(Ordering::Acquire);
        if version == self.version {
            return false;
        }
        self.listeners = lock(&self.agent.inner.listeners).clone();
        self.version = version;
        true
    }

    /// The index of the listener to call after the one at `index` (id `called`), as Pi's
    /// `for (const listener of this.listeners)` walks a live `Set`: a listener subscribed
    /// meanwhile is still called for this event, one unsubscribed before its turn is not.
    /// Ids grow with each subscription and the list keeps that order.
    fn after(&mut self, called: ListenerId, index: usize) -> usize {
        if !self.refresh_listeners() {
            return index + 1;
        }
        self.listeners
            .iter()
            .position(|(id, _)| id.0 > called.0)
            .unwrap_or(self.listeners.len())
    }
}

fn report(event: &AgentEvent, outcome: std::thread::Result<ListenerResult>) {
    match outcome {
        Ok(Ok(())) => {}
        Ok(Err(error)) => tracing::error!(
            event = event.type_name(),
            %error,
            "agent listener failed; the run goes on"
        ),
        Err(panic) => tracing::error!(
            event = event.type_name(),
            panic = %panic_message(&*panic),
            "agent listener panicked; the run goes on"
        ),
    }
}

fn call_sync(f: &SyncListener, event: &AgentEvent, signal: &AbortSignal) {
    report(
        event,
        std::panic::catch_unwind(AssertUnwindSafe(|| f(event, signal))),
    );
}

impl AgentEventSink for AgentSink<'_> {
    fn emit(&mut self, event: AgentEvent) -> Emit<'_> {
        self.agent.reduce(&event);
        self.refresh_listeners();
        // The common case: synchronous listeners, called right here with nothing boxed.
        let mut next = 0;
        while let Some((id, Listener::Sync(f))) = self.listeners.get(next) {
            let id = *id;
            call_sync(&**f, &event, &self.signal);
            next = self.after(id, next);
        }
        if next >= self.listeners.len() {
            return Emit::Done;
        }
        // An asynchronous listener: the rest of the walk is awaited.
        Emit::boxed(async move {
            while let Some((id, listener)) = self.listeners.get(next).cloned() {
                match listener {
                    Listener::Sync(f) => call_sync(&*f, &event, &self.signal),
                    Listener::Async(l) => {
                        let outcome = AssertUnwindSafe(l.on_event(&event, &self.signal))
                            .catch_unwind()
                            .await;
                        report(&event, outcome);
                    }
                }
                next = self.after(id, next);
            }
        })
    }
}
