//! `AgentSession`: an [`Agent`] with a tool registry, extensions, a rebuilt system
//! prompt and a transcript store (Pi's `AgentSession`).
//!
//! The session installs three agent hooks: `before_tool_call` runs the extensions'
//! `tool_call` chain, `after_tool_call` their `tool_result` chain, and
//! `prepare_next_turn` hands every later turn of a run the current active tools and
//! system prompt (so a change made by a tool applies from the next model call). One
//! agent listener feeds the store and the extensions' `tool_execution_*` handlers, then
//! the session's own subscribers.

use std::sync::Arc;
use std::sync::atomic::Ordering;

use super::SessionError;
use super::event::{ActiveToolsChange, SessionEvent, SubscriptionId};
use super::registry::RegisteredTool;
use super::shared::{Shared, lock};
use super::store::Transcript;
use crate::agent::{Agent, RunOutcome};
use crate::context::{ExtensionContext, ExtensionUi, Mode};
use crate::model::Message;
use pi_tool_core::AgentTool;

/// A session: an agent, its tools and extensions, a system prompt and a transcript
/// (Pi's `AgentSession`). Build one with [`AgentSession::builder`]. Cheap to clone.
#[derive(Clone)]
pub struct AgentSession {
    pub(crate) shared: Arc<Shared>,
}

impl std::fmt::Debug for AgentSession {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("AgentSession")
            .field("active_tools", &self.active_tool_names())
            .field("disposed", &self.shared.is_disposed())
            .finish_non_exhaustive()
    }
}

impl AgentSession {
    fn live(&self) -> Result<&Shared, SessionError> {
        if self.shared.is_disposed() {
            Err(SessionError::Disposed)
        } else {
            Ok(&self.shared)
        }
    }

    /// Prompts with a text and runs until the agent stops (Pi's `session.prompt`).
    ///
    /// `Ok` once the run has ended, even when the model call failed, as in Pi: call
    /// [`ensure_ok`](Self::ensure_ok) to get that failure as an `Err`.
    pub async fn prompt(&self, text: impl Into<String>) -> Result<(), SessionError> {
        self.live()?
            .agent
            .prompt(text)
            .await
            .map_err(SessionError::Agent)
    }

    /// Prompts with a text as the durable run `run_id`
    /// ([`Agent::run`](crate::agent::Agent::run)): with a store
    /// ([`AgentSessionBuilder::durable`](super::AgentSessionBuilder::durable)), a call
    /// that waits for a decision suspends the run into it.
    pub async fn run(
        &self,
        run_id: &str,
        text: impl Into<String>,
    ) -> Result<RunOutcome, SessionError> {
        self.live()?
            .agent
            .run(run_id, vec![Message::user_text(text)])
            .await
            .map_err(SessionError::Agent)
    }

    /// Takes up the suspended run `run_id` from the store
    /// ([`Agent::resume_run`](crate::agent::Agent::resume_run)). A fresh session's
    /// transcript starts with the messages the run had before it suspended.
    pub async fn resume_run(&self, run_id: &str) -> Result<RunOutcome, SessionError> {
        let shared = self.live()?;
        let before = shared.store.len();
        let outcome = shared
            .agent
            .resume_run(run_id)
            .await
            .map_err(SessionError::Agent)?;
        if before == 0 {
            // The events of the resumed run reached the transcript; the messages the run
            // had before it suspended are the agent's, ahead of them.
            let messages = shared.agent.messages();
            let added = shared.store.len();
            let earlier = messages.len().saturating_sub(added);
            shared.store.prepend(messages.into_iter().take(earlier));
        }
        Ok(outcome)
    }

    /// `Err` when the last run ended with a failed model call
    /// ([`Agent::ensure_ok`](crate::agent::Agent::ensure_ok)).
    ///
    /// As in Pi, [`prompt`](Self::prompt) returns `Ok` once the run has ended, even when
    /// the model call failed (a provider's "Connection error."): the failure is an
    /// assistant message with an error stop reason, which this turns into an `Err`:
    /// `session.prompt(text).await?;` then `session.ensure_ok()?;`.
    pub fn ensure_ok(&self) -> Result<(), crate::agent::RunFailed> {
        self.shared.agent.ensure_ok()
    }

    /// Aborts the active run, if any.
    pub fn abort(&self) {
        self.shared.agent.abort();
    }

    /// Waits until no run is active.
    pub async fn wait_for_idle(&self) {
        self.shared.agent.wait_for_idle().await;
    }

    /// Subscribes a listener to agent and extension events; listeners run in
    /// subscription order, after the extensions' `tool_execution_*` handlers.
    pub fn subscribe<F>(&self, listener: F) -> SubscriptionId
    where
        F: Fn(&SessionEvent) + Send + Sync + 'static,
    {
        let id = SubscriptionId(self.shared.next_listener.fetch_add(1, Ordering::Relaxed));
        lock(&self.shared.listeners).push((id, Arc::new(listener)));
        id
    }

    /// Removes a listener.
    pub fn unsubscribe(&self, id: SubscriptionId) {
        lock(&self.shared.listeners).retain(|(i, _)| *i != id);
    }

    /// Ends the session: aborts the active run, drops every listener, and makes every
    /// context and extension handle of this session stale. Idempotent.
    pub fn dispose(&self) {
        self.shared.disposed.store(true, Ordering::SeqCst);
        self.shared.agent.abort();
        lock(&self.shared.listeners).clear();
    }

    /// Whether [`dispose`](Self::dispose) was called.
    pub fn is_disposed(&self) -> bool {
        self.shared.is_disposed()
    }

    /// The agent underneath (transcript, state, model).
    pub fn agent(&self) -> &Agent {
        &self.shared.agent
    }

    /// The session's transcript: every message that ended during its runs (Pi's
    /// `session.sessionManager`).
    #[doc(alias = "sessionManager")]
    #[doc(alias = "session_manager")]
    pub fn transcript(&self) -> &Transcript {
        &self.shared.store
    }

    /// The active tool names, in order (Pi's `getActiveToolNames`).
    #[doc(alias = "getActiveToolNames")]
    pub fn active_tool_names(&self) -> Vec<String> {
        self.shared.active_tool_names()
    }

    /// Sets the active tools by name (Pi's `setActiveToolsByName`): unknown names are
    /// ignored and duplicates removed, both reported back; the system prompt is rebuilt;
    /// a running run sees the change from its next model call.
    #[doc(alias = "setActiveToolsByName")]
    pub fn set_active_tools<I, S>(&self, names: I) -> Result<ActiveToolsChange, SessionError>
    where
        I: IntoIterator<Item = S>,
        S: AsRef<str>,
    {
        Ok(self.live()?.set_active_tools(names))
    }

    /// The registry, in order (Pi's `getAllTools`).
    pub fn all_tools(&self) -> Vec<RegisteredTool> {
        lock(&self.shared.state)
            .registry
            .iter()
            .map(|e| e.tool.clone())
            .collect()
    }

    /// The definition registered under `name`.
    pub fn tool_definition(&self, name: &str) -> Option<Arc<dyn AgentTool>> {
        lock(&self.shared.state)
            .registry
            .iter()
            .find(|e| e.tool.name() == name)
            .map(|e| e.tool.definition.clone())
    }

    /// The current system prompt.
    pub fn system_prompt(&self) -> String {
        lock(&self.shared.state).system_prompt.clone()
    }

    /// The working directory contexts report.
    pub fn cwd(&self) -> &std::path::Path {
        &self.shared.cwd
    }

    /// Binds a mode and a UI (Pi's `bindExtensions` / `setUIContext`): later contexts
    /// report them; `None` is Pi's no-op UI (`has_ui()` false).
    pub fn bind_ui(&self, mode: Mode, ui: Option<Arc<dyn ExtensionUi>>) {
        let mut state = lock(&self.shared.state);
        state.mode = mode;
        state.ui = ui;
    }

    /// A context for code outside a tool call (it has no run signal).
    pub fn context(&self) -> ExtensionContext {
        self.shared.context(None)
    }
}
