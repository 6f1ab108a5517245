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
use std::panic::AssertUnwindSafe;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex, MutexGuard};

use futures::FutureExt;

use super::config::{AgentEventSink, LoopConfig};
use super::event::AgentEvent;
use super::listeners::{
    AgentListener, AgentSink, Listed, Listener, ListenerId, ListenerResult, Subscribers,
};
use super::options::{AgentError, AgentOptions, AgentState, QueueMode};
use super::run::{ContinueError, resume_agent_loop, run_agent_loop, run_agent_loop_continue};
use super::suspend::{Claimed, RunDurability, RunOutcome, take_up};
use crate::durable::{AuditEvent, AuditKind, now_ms};
use crate::model::{AssistantMessage, Message, StopReason};
use crate::model::{Model, ThinkingLevel};
use pi_tool_core::AgentTool;
use pi_tool_core::{AbortController, AbortSignal};

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

pub(super) struct Inner {
    state: Mutex<AgentState>,
    /// Copy-on-write: a run keeps an `Arc` of the list, not a copy.
    pub(super) listeners: Mutex<Arc<Vec<Listed>>>,
    /// Bumped (under the lock) whenever `listeners` changes: a run re-reads the list only
    /// then, instead of taking the lock for every event (seven per tool call).
    pub(super) listeners_version: AtomicU64,
    next_listener: AtomicU64,
    options: AgentOptions,
    steering: Arc<Mutex<Queue>>,
    follow_up: Arc<Mutex<Queue>>,
    active: Arc<Mutex<Option<AbortController>>>,
    idle: tokio::sync::Notify,
    /// Whether a run checks that every tool its tools reach is among them. A session's
    /// agent does not: the session checks its whole registry when it is built, and its
    /// agent holds only the active tools.
    check_reaches: bool,
}

pub(super) fn lock<T>(m: &Mutex<T>) -> MutexGuard<'_, T> {
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
    pub(super) inner: Arc<Inner>,
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
    ///
    /// Its tools' reaches (`#[pi_tool(reaches = [...])]`) are checked when a run starts,
    /// as the tools can still change ([`set_tools`](Self::set_tools)): a tool reaching a
    /// tool the agent does not have makes [`prompt`](Self::prompt), [`run`](Self::run),
    /// [`resume`](Self::resume) and [`resume_run`](Self::resume_run) return
    /// [`AgentError::MissingReach`] before anything starts.
    pub fn new(options: AgentOptions) -> Self {
        Self::build(options, true)
    }

    /// A session's agent: the session checks reaches over its registry.
    pub(crate) fn for_session(options: AgentOptions) -> Self {
        Self::build(options, false)
    }

    fn build(options: AgentOptions, check_reaches: bool) -> Self {
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
                check_reaches,
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

    /// `Err` when the last run ended with a failed model call (see [`RunFailed`](super::RunFailed)).
    ///
    /// As in Pi, [`prompt`](Self::prompt) returns `Ok` once the run has ended, even when
    /// the model call failed; the failure is an assistant message with an error stop
    /// reason, which this turns into an `Err`: `agent.prompt(text).await?;` then
    /// `agent.ensure_ok()?;`.
    pub fn ensure_ok(&self) -> Result<(), super::RunFailed> {
        match self.error_message() {
            Some(message) => Err(super::RunFailed::new(message)),
            None => Ok(()),
        }
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
    ///
    /// `Err` only when the run cannot start. A run whose model call fails (a provider's
    /// `Connection error.`, an abort) still returns `Ok`, as in Pi: follow with
    /// [`ensure_ok`](Self::ensure_ok) to get that failure as an `Err`.
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

    /// Runs `messages` as the durable run `run_id` (docs/durable-runs.md): as
    /// [`prompt_messages`](Self::prompt_messages), except that with a store
    /// ([`AgentOptions::durable`](super::AgentOptions::durable)) a call that waits for a
    /// decision ([`BeforeToolCallResult::Ask`](super::BeforeToolCallResult::Ask))
    /// suspends the run into the store: the result is then
    /// [`RunOutcome::Suspended`] with the pending approval, and
    /// [`resume_run`](Self::resume_run) takes the run up, in this process or another.
    ///
    /// A run that asks nothing never reaches the store. `run_id` must be unique in the
    /// store: the approval digest binds a decision to it.
    pub async fn run(
        &self,
        run_id: &str,
        messages: Vec<Message>,
    ) -> Result<RunOutcome, AgentError> {
        let (signal, context, mut config) = self.begin()?;
        let _finish = FinishOnDrop(self);
        let durable = self
            .inner
            .options
            .durable
            .clone()
            .map(|runs| Arc::new(RunDurability::new(runs, run_id.to_owned(), None)));
        config.durable = durable.clone();
        let stream_fn = self.inner.options.stream_fn.clone();
        let mut sink = AgentSink::new(self, signal.clone());
        let run = run_agent_loop(messages, context, &config, &mut sink, &signal, &*stream_fn);
        if let Err(panic) = AssertUnwindSafe(run).catch_unwind().await {
            self.fail_run(panic_message(&*panic), &signal).await;
        }
        self.outcome(run_id, durable.as_deref(), false).await
    }

    /// Takes up the suspended run `run_id` from the store (Pi has no equivalent): loads
    /// it, applies the decisions and goes on from the call it waited at, emitting the
    /// events the run would have emitted had it waited in memory from that point on (no
    /// second `agent_start`). A decision that is still open leaves the run waiting
    /// ([`RunOutcome::Suspended`]); a run another process holds is
    /// [`StoreError::RunTaken`](crate::durable::StoreError::RunTaken). The agent's
    /// transcript becomes the run's.
    pub async fn resume_run(&self, run_id: &str) -> Result<RunOutcome, AgentError> {
        let runs = self
            .inner
            .options
            .durable
            .clone()
            .ok_or(AgentError::NoStore)?;
        let (signal, mut context, mut config) = self.begin()?;
        let _finish = FinishOnDrop(self);
        let claimed = runs
            .store
            .claim(run_id, runs.lease)
            .await
            .map_err(AgentError::Store)?;
        let plan = match take_up(&runs, claimed).await.map_err(AgentError::Store)? {
            Claimed::Waiting(suspension) => return Ok(RunOutcome::Suspended(suspension)),
            Claimed::Ready(plan) => plan,
        };
        lock(&self.inner.state).messages = plan.transcript;
        context.messages = plan.messages;
        let durable = Arc::new(RunDurability::new(
            runs,
            run_id.to_owned(),
            Some(plan.batch),
        ));
        config.durable = Some(durable.clone());
        let stream_fn = self.inner.options.stream_fn.clone();
        let mut sink = AgentSink::new(self, signal.clone());
        let run = resume_agent_loop(
            context,
            plan.new_messages,
            plan.turn,
            &config,
            &mut sink,
            &signal,
            &*stream_fn,
        );
        if let Err(panic) = AssertUnwindSafe(run).catch_unwind().await {
            self.fail_run(panic_message(&*panic), &signal).await;
        }
        self.outcome(run_id, Some(&durable), true).await
    }

    /// How a durable run ended; a resumed run that finished is marked finished.
    async fn outcome(
        &self,
        run_id: &str,
        durable: Option<&RunDurability>,
        resumed: bool,
    ) -> Result<RunOutcome, AgentError> {
        match durable.and_then(RunDurability::suspension) {
            Some(Ok(suspension)) => Ok(RunOutcome::Suspended(suspension)),
            Some(Err(error)) => Err(AgentError::Store(error)),
            None => {
                if resumed && let Some(runs) = &self.inner.options.durable {
                    let event =
                        AuditEvent::new(AuditKind::Finished, run_id, now_ms()).with("scope", "run");
                    runs.store
                        .finish(run_id, &[event])
                        .await
                        .map_err(AgentError::Store)?;
                }
                Ok(RunOutcome::Finished {
                    run_id: run_id.to_owned(),
                })
            }
        }
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

    fn begin(&self) -> Result<(AbortSignal, crate::model::Context, LoopConfig), AgentError> {
        if self.inner.check_reaches {
            // A reach to a tool the agent lacks is a mistake of the mount: refused before
            // the run starts, naming both tools, rather than as `Tool x not found` at the
            // first nested call. Tools a `prepare_next_turn` hook swaps in mid-run are the
            // hook's to get right.
            let state = lock(&self.inner.state);
            pi_tool_core::pack::check_reaches(state.tools.iter().map(|tool| tool.spec()))
                .map_err(AgentError::MissingReach)?;
        }
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
        let context = crate::model::Context {
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
            durable: None,
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
        message.content = vec![crate::model::AssistantContent::text("")];
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

    pub(super) fn reduce(&self, event: &AgentEvent) {
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

impl Subscribers for Agent {
    fn reduce(&self, event: &AgentEvent) {
        Agent::reduce(self, event);
    }

    fn listeners_version(&self) -> u64 {
        self.inner.listeners_version.load(Ordering::Acquire)
    }

    fn listeners(&self) -> Arc<Vec<Listed>> {
        lock(&self.inner.listeners).clone()
    }
}

pub(super) fn panic_message(panic: &(dyn std::any::Any + Send)) -> String {
    pi_tool_core::__runtime::panic_text(panic, "the agent run panicked")
}

/// Ends the run when the prompt future completes or is dropped (a cancelled prompt
/// must not leave the agent "already processing" forever).
struct FinishOnDrop<'a>(&'a Agent);

impl Drop for FinishOnDrop<'_> {
    fn drop(&mut self) {
        self.0.finish();
    }
}
