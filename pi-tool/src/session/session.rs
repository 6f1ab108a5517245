//! `AgentSession`: an [`Agent`] with a tool registry, extensions, a rebuilt system
//! prompt and a transcript store (Pi's `AgentSession`).
//!
//! The session installs three agent hooks: `before_tool_call` runs the extensions'
//! `tool_call` chain, `after_tool_call` their `tool_result` chain, and
//! `prepare_next_turn` hands every later turn of a run the current active tools and
//! system prompt (so a change made by a tool applies from the next model call). One
//! agent listener feeds the store and the extensions' `tool_execution_*` handlers, then
//! the session's own subscribers.

use std::panic::AssertUnwindSafe;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{Arc, Mutex, MutexGuard, Weak};

use async_trait::async_trait;
use futures::FutureExt;
use serde_json::Value;

use super::SessionError;
use super::handlers::{
    ToolCallEvent, ToolCallHandler, ToolExecutionHandler, ToolResultEvent, ToolResultHandler,
    panic_text, run_tool_call_chain, run_tool_result_chain,
};
use super::prompt::{SystemPrompt, build_system_prompt};
use super::registry::{
    CUSTOM_TOOLS_OWNER, Refresh, RegisteredTool, ToolFilter, ToolSource, build_registry,
    check_unique, next_active,
};
use super::store::SessionManager;
use crate::abort::AbortSignal;
use crate::agent::{
    AfterToolCall, AfterToolCallContext, AfterToolCallResult, Agent, AgentEvent, AgentListener,
    BeforeToolCall, BeforeToolCallContext, BeforeToolCallResult, CompletedTurn, Context,
    ListenerResult, Model, NextTurn, PrepareNextTurn,
};
use crate::context::{ExtensionContext, ExtensionUi, Mode, SessionLink};
use crate::details::JsonDetails;
use crate::error::ToolError;
use crate::pack::{ToolOwner, check_tool_name};
use crate::result::JsonToolResult;
use crate::safety::Redactor;
use crate::tool::{AgentTool, ToolDefinition, ToolSpec};
use crate::update::OnUpdate;

/// A failing extension handler, reported to the session's subscribers (Pi's
/// `bindExtensions({onError})`).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ExtensionErrorEvent {
    /// The extension (`<inline:NAME>`).
    pub extension_path: String,
    /// The event whose handler failed (`tool_result`).
    pub event: String,
    /// The error message.
    pub error: String,
}

/// What session subscribers receive: the agent's events and the extension events.
#[derive(Debug, Clone, PartialEq)]
#[non_exhaustive]
// Listeners receive events by reference; boxing the common variant would cost an
// allocation per event to save stack space on the rare one.
#[allow(clippy::large_enum_variant)]
pub enum SessionEvent {
    /// An agent event (Pi's `AgentEvent`).
    Agent(AgentEvent),
    /// An extension handler failed and was skipped.
    ExtensionError(ExtensionErrorEvent),
}

/// What a change of the active tools did.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct ActiveToolsChange {
    /// The active tool names now, in order.
    pub active: Vec<String>,
    /// Requested names that are not in the registry (unknown, or filtered out by the
    /// allowlist / excludes); ignored.
    pub unknown: Vec<String>,
    /// Names requested more than once; kept once (Pi keeps duplicates).
    pub duplicates: Vec<String>,
}

/// Identifies a session subscription.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct SubscriptionId(u64);

type SessionListener = Arc<dyn Fn(&SessionEvent) + Send + Sync>;

pub(crate) struct ExtensionSlot {
    pub(crate) owner: ToolOwner,
    pub(crate) tools: Vec<Arc<dyn ToolDefinition>>,
    pub(crate) tool_call: Vec<Arc<dyn ToolCallHandler>>,
    pub(crate) tool_result: Vec<Arc<dyn ToolResultHandler>>,
    pub(crate) tool_execution: Vec<Arc<dyn ToolExecutionHandler>>,
}

struct Entry {
    tool: RegisteredTool,
    wrapped: Arc<dyn AgentTool>,
}

pub(crate) struct State {
    pub(crate) mode: Mode,
    pub(crate) ui: Option<Arc<dyn ExtensionUi>>,
    pub(crate) extensions: Vec<ExtensionSlot>,
    registry: Vec<Entry>,
    /// Replaced, never changed in place: a tool call compares the list it started with
    /// to the one it ended with by pointer (see [`stamp_added_tools`]).
    active: Arc<Vec<String>>,
    active_tools: Vec<Arc<dyn AgentTool>>,
    system_prompt: String,
    ready: bool,
}

/// Everything the session, its hooks, tools, contexts and extension handles share.
pub(crate) struct Shared {
    pub(crate) agent: Agent,
    pub(crate) state: Mutex<State>,
    pub(crate) cwd: std::path::PathBuf,
    pub(crate) custom_tools: Vec<Arc<dyn ToolDefinition>>,
    pub(crate) filter: ToolFilter,
    pub(crate) prompt: SystemPrompt,
    pub(crate) redactor: Option<Redactor>,
    pub(crate) store: SessionManager,
    disposed: AtomicBool,
    listeners: Mutex<Vec<(SubscriptionId, SessionListener)>>,
    next_listener: AtomicU64,
}

fn lock<T>(m: &Mutex<T>) -> MutexGuard<'_, T> {
    // Every update under these locks is a single assignment or push.
    m.lock().unwrap_or_else(|p| p.into_inner())
}

pub(crate) struct SharedParts {
    pub(crate) cwd: std::path::PathBuf,
    pub(crate) mode: Mode,
    pub(crate) ui: Option<Arc<dyn ExtensionUi>>,
    pub(crate) custom_tools: Vec<Arc<dyn ToolDefinition>>,
    pub(crate) filter: ToolFilter,
    pub(crate) prompt: SystemPrompt,
    pub(crate) redactor: Option<Redactor>,
    pub(crate) owners: Vec<ToolOwner>,
}

impl Shared {
    pub(crate) fn new(agent: Agent, parts: SharedParts) -> Self {
        Shared {
            agent,
            state: Mutex::new(State {
                mode: parts.mode,
                ui: parts.ui,
                extensions: parts
                    .owners
                    .into_iter()
                    .map(|owner| ExtensionSlot {
                        owner,
                        tools: Vec::new(),
                        tool_call: Vec::new(),
                        tool_result: Vec::new(),
                        tool_execution: Vec::new(),
                    })
                    .collect(),
                registry: Vec::new(),
                active: Arc::new(Vec::new()),
                active_tools: Vec::new(),
                system_prompt: String::new(),
                ready: false,
            }),
            cwd: parts.cwd,
            custom_tools: parts.custom_tools,
            filter: parts.filter,
            prompt: parts.prompt,
            redactor: parts.redactor,
            store: SessionManager::in_memory(),
            disposed: AtomicBool::new(false),
            listeners: Mutex::new(Vec::new()),
            next_listener: AtomicU64::new(0),
        }
    }

    pub(crate) fn is_disposed(&self) -> bool {
        self.disposed.load(Ordering::SeqCst)
    }

    pub(crate) fn is_ready(&self) -> bool {
        lock(&self.state).ready
    }

    pub(crate) fn with_extension(&self, index: usize, f: impl FnOnce(&mut ExtensionSlot)) {
        if let Some(slot) = lock(&self.state).extensions.get_mut(index) {
            f(slot);
        }
    }

    pub(crate) fn active_tool_names(&self) -> Vec<String> {
        lock(&self.state).active.to_vec()
    }

    fn active_snapshot(&self) -> Arc<Vec<String>> {
        lock(&self.state).active.clone()
    }

    /// Every tool with its owner, in registry order before filtering.
    fn all_sources(state: &State, custom: &[Arc<dyn ToolDefinition>]) -> Vec<RegisteredTool> {
        let custom_owner = ToolOwner::new(CUSTOM_TOOLS_OWNER);
        let mut tools: Vec<RegisteredTool> = Vec::new();
        for slot in &state.extensions {
            for definition in &slot.tools {
                tools.push(RegisteredTool {
                    definition: definition.clone(),
                    owner: slot.owner.clone(),
                    source: ToolSource::Extension,
                });
            }
        }
        for definition in custom {
            tools.push(RegisteredTool {
                definition: definition.clone(),
                owner: custom_owner.clone(),
                source: ToolSource::Custom,
            });
        }
        tools
    }

    /// Builds the registry and the initial active set (construction).
    pub(crate) fn initialize(self: &Arc<Self>) -> Result<(), SessionError> {
        let mut state = lock(&self.state);
        let sources = Self::all_sources(&state, &self.custom_tools);
        for tool in &sources {
            check_tool_name(tool.name()).map_err(|message| SessionError::InvalidToolName {
                owner: tool.owner.clone(),
                message,
            })?;
        }
        check_unique(sources.iter().map(|t| (&t.owner, &t.definition)))?;
        let registry = build_registry(sources, &self.filter);
        let requested = self.filter.allowed.clone().unwrap_or_default();
        let active = next_active(
            &registry,
            &self.filter,
            Refresh::IncludeAll {
                requested: &requested,
            },
        );
        state.registry = self.wrap(registry);
        state.ready = true;
        self.apply_active(&mut state, active);
        Ok(())
    }

    fn wrap(self: &Arc<Self>, registry: Vec<RegisteredTool>) -> Vec<Entry> {
        registry
            .into_iter()
            .map(|tool| Entry {
                wrapped: Arc::new(SessionTool {
                    definition: tool.definition.clone(),
                    shared: Arc::downgrade(self),
                }),
                tool,
            })
            .collect()
    }

    /// Sets the active list, rebuilds the prompt and hands both to the agent.
    fn apply_active(&self, state: &mut State, active: Vec<String>) {
        let specs: Vec<&ToolSpec> = active
            .iter()
            .filter_map(|n| state.registry.iter().find(|e| e.tool.name() == n))
            .map(|e| e.tool.definition.spec())
            .collect();
        let prompt = build_system_prompt(&self.prompt, &specs, &self.cwd);
        let tools: Vec<Arc<dyn AgentTool>> = active
            .iter()
            .filter_map(|n| state.registry.iter().find(|e| e.tool.name() == n))
            .map(|e| e.wrapped.clone())
            .collect();
        self.agent.set_tools(tools.clone());
        self.agent.set_system_prompt(prompt.clone());
        state.active_tools = tools;
        state.system_prompt = prompt;
        state.active = Arc::new(active);
    }

    pub(crate) fn set_active_tools<I, S>(&self, names: I) -> ActiveToolsChange
    where
        I: IntoIterator<Item = S>,
        S: AsRef<str>,
    {
        let mut state = lock(&self.state);
        let mut change = ActiveToolsChange::default();
        for name in names {
            let name = name.as_ref();
            if !state.registry.iter().any(|e| e.tool.name() == name) {
                change.unknown.push(name.to_owned());
            } else if change.active.iter().any(|n| n == name) {
                if !change.duplicates.iter().any(|n| n == name) {
                    change.duplicates.push(name.to_owned());
                }
            } else {
                change.active.push(name.to_owned());
            }
        }
        self.apply_active(&mut state, change.active.clone());
        change
    }

    pub(crate) fn register_tool(
        self: &Arc<Self>,
        index: usize,
        definition: Arc<dyn ToolDefinition>,
    ) -> Result<(), SessionError> {
        let mut state = lock(&self.state);
        let Some(owner) = state.extensions.get(index).map(|s| s.owner.clone()) else {
            return Err(SessionError::Disposed);
        };
        let name = definition.spec().name.clone();
        check_tool_name(&name).map_err(|message| SessionError::InvalidToolName {
            owner: owner.clone(),
            message,
        })?;
        if state.ready {
            // A late registration must not take a name from another owner.
            let mut sources = Self::all_sources(&state, &self.custom_tools);
            sources.retain(|t| !(t.owner == owner && t.name() == name));
            sources.push(RegisteredTool {
                definition: definition.clone(),
                owner: owner.clone(),
                source: ToolSource::Extension,
            });
            check_unique(sources.iter().map(|t| (&t.owner, &t.definition)))?;
        }
        let slot = &mut state.extensions[index];
        match slot.tools.iter_mut().find(|t| t.spec().name == name) {
            Some(existing) => *existing = definition,
            None => slot.tools.push(definition),
        }
        if !state.ready {
            return Ok(());
        }
        let previous_names: Vec<String> = state
            .registry
            .iter()
            .map(|e| e.tool.name().to_owned())
            .collect();
        let previous_active = Arc::clone(&state.active);
        let registry = build_registry(Self::all_sources(&state, &self.custom_tools), &self.filter);
        let active = next_active(
            &registry,
            &self.filter,
            Refresh::Runtime {
                previous_active: &previous_active,
                previous_names: &previous_names,
            },
        );
        state.registry = self.wrap(registry);
        self.apply_active(&mut state, active);
        Ok(())
    }

    /// A fresh context for one execute call or one handler emission.
    pub(crate) fn context(self: &Arc<Self>, signal: Option<AbortSignal>) -> ExtensionContext {
        let (mode, ui) = {
            let state = lock(&self.state);
            (state.mode, state.ui.clone())
        };
        let mut builder = ExtensionContext::builder(self.cwd.clone())
            .mode(mode)
            .link(Arc::new(Link(Arc::downgrade(self))));
        if let Some(ui) = ui {
            builder = builder.ui(ui);
        }
        if let Some(signal) = signal {
            builder = builder.signal(signal);
        }
        builder.build()
    }

    fn emit(&self, event: SessionEvent) {
        self.emit_with(|| event);
    }

    /// Builds the event only when someone listens (agent events are cloned per call).
    fn emit_with(&self, event: impl FnOnce() -> SessionEvent) {
        let listeners: Vec<SessionListener> = lock(&self.listeners)
            .iter()
            .map(|(_, l)| l.clone())
            .collect();
        if listeners.is_empty() {
            return;
        }
        let event = event();
        for listener in listeners {
            if let Err(panic) = std::panic::catch_unwind(AssertUnwindSafe(|| listener(&event))) {
                tracing::error!(panic = %panic_text(&*panic), "session listener panicked");
            }
        }
    }

    fn redact(&self, error: ToolError) -> ToolError {
        match &self.redactor {
            Some(r) => r.redact_error(error),
            None => error,
        }
    }

    fn redact_text(&self, text: &str) -> String {
        match &self.redactor {
            Some(r) => r.redact(text).into_owned(),
            None => text.to_owned(),
        }
    }

    fn handlers<H: ?Sized>(
        &self,
        pick: impl Fn(&ExtensionSlot) -> &Vec<Arc<H>>,
    ) -> Vec<(ToolOwner, Arc<H>)> {
        let state = lock(&self.state);
        state
            .extensions
            .iter()
            .flat_map(|slot| pick(slot).iter().map(|h| (slot.owner.clone(), h.clone())))
            .collect()
    }
}

struct Link(Weak<Shared>);

impl Link {
    fn get(&self) -> Option<Arc<Shared>> {
        self.0.upgrade().filter(|s| !s.is_disposed())
    }
}

impl SessionLink for Link {
    fn is_live(&self) -> bool {
        self.get().is_some()
    }
    fn is_idle(&self) -> bool {
        self.get().is_none_or(|s| !s.agent.is_streaming())
    }
    fn model(&self) -> Model {
        self.get()
            .map(|s| s.agent.state().model)
            .unwrap_or_default()
    }
    fn system_prompt(&self) -> String {
        self.get()
            .map(|s| lock(&s.state).system_prompt.clone())
            .unwrap_or_default()
    }
    fn signal(&self) -> Option<AbortSignal> {
        self.get().and_then(|s| s.agent.signal())
    }
    fn abort(&self) {
        if let Some(s) = self.get() {
            s.agent.abort();
        }
    }
}

/// A registered definition as the agent sees it: a fresh context per execute (Pi's
/// `wrapToolDefinition(def, () => runner.createContext())`) and redacted errors.
struct SessionTool {
    definition: Arc<dyn ToolDefinition>,
    shared: Weak<Shared>,
}

#[async_trait]
impl AgentTool for SessionTool {
    fn spec(&self) -> &ToolSpec {
        self.definition.spec()
    }

    fn prepare_arguments<'a>(
        &self,
        arguments: &'a Value,
    ) -> Result<std::borrow::Cow<'a, Value>, ToolError> {
        self.definition.prepare_arguments(arguments)
    }

    async fn execute(
        &self,
        tool_call_id: &str,
        params: &Value,
        signal: AbortSignal,
        on_update: OnUpdate<Option<JsonDetails>>,
    ) -> Result<JsonToolResult, ToolError> {
        let Some(shared) = self.shared.upgrade().filter(|s| !s.is_disposed()) else {
            return Err(ToolError::new(SessionError::Disposed.to_string()));
        };
        let ctx = shared.context(Some(signal.clone()));
        let active_before = shared.active_snapshot();
        let outcome = self
            .definition
            .execute(tool_call_id, params, signal, on_update, ctx)
            .await;
        match outcome {
            Ok(mut result) => {
                stamp_added_tools(&mut result, &active_before, &shared.active_snapshot());
                Ok(result)
            }
            Err(error) => Err(shared.redact(error)),
        }
    }
}

/// Pi's wrapper (`extensions/wrapper.js`): when a call left the active tools a strict
/// superset of what it started with, the tools it added are recorded on its result
/// (`addedToolNames`, after any the tool named itself, without repeats), so that providers
/// can treat the result as the point where those tools were loaded.
fn stamp_added_tools(
    result: &mut JsonToolResult,
    before: &Arc<Vec<String>>,
    after: &Arc<Vec<String>>,
) {
    if Arc::ptr_eq(before, after) || before.iter().any(|name| !after.contains(name)) {
        return;
    }
    let added: Vec<&String> = after.iter().filter(|name| !before.contains(name)).collect();
    if added.is_empty() {
        return;
    }
    let names = result.added_tool_names.get_or_insert_with(Vec::new);
    let mut unique: Vec<String> = Vec::with_capacity(names.len() + added.len());
    for name in names.drain(..).chain(added.into_iter().cloned()) {
        if !unique.contains(&name) {
            unique.push(name);
        }
    }
    *names = unique;
}

pub(crate) struct SessionHooks(pub(crate) Weak<Shared>);

#[async_trait]
impl BeforeToolCall for SessionHooks {
    async fn before_tool_call(
        &self,
        ctx: BeforeToolCallContext<'_>,
        signal: &AbortSignal,
    ) -> Result<BeforeToolCallResult, ToolError> {
        let Some(shared) = self.0.upgrade() else {
            return Ok(BeforeToolCallResult::Allow);
        };
        let handlers: Vec<Arc<dyn ToolCallHandler>> = shared
            .handlers(|s| &s.tool_call)
            .into_iter()
            .map(|(_, h)| h)
            .collect();
        if handlers.is_empty() {
            return Ok(BeforeToolCallResult::Allow);
        }
        let mut event = ToolCallEvent {
            tool_name: ctx.tool_call.name.to_string(),
            tool_call_id: ctx.tool_call.id.to_string(),
            input: std::mem::take(ctx.args),
        };
        let ext_ctx = shared.context(Some(signal.clone()));
        let outcome = run_tool_call_chain(&handlers, &mut event, &ext_ctx).await;
        *ctx.args = event.input;
        match outcome {
            Ok(BeforeToolCallResult::Block {
                reason: Some(reason),
                terminate,
            }) if shared.redactor.is_some() => Ok(BeforeToolCallResult::Block {
                reason: Some(shared.redact_text(&reason)),
                terminate,
            }),
            Ok(decision) => Ok(decision),
            Err(error) => Err(shared.redact(error)),
        }
    }
}

#[async_trait]
impl AfterToolCall for SessionHooks {
    async fn after_tool_call(
        &self,
        ctx: AfterToolCallContext<'_>,
        signal: &AbortSignal,
    ) -> Result<AfterToolCallResult, ToolError> {
        let Some(shared) = self.0.upgrade() else {
            return Ok(AfterToolCallResult::default());
        };
        let handlers = shared.handlers(|s| &s.tool_result);
        let mut after = None;
        if !handlers.is_empty() {
            let mut event = ToolResultEvent {
                tool_name: ctx.tool_call.name.to_string(),
                tool_call_id: ctx.tool_call.id.to_string(),
                input: ctx.args.clone(),
                content: ctx.result.content.clone(),
                details: ctx.result.details.clone(),
                is_error: ctx.is_error,
                usage: ctx.result.usage.clone(),
            };
            let ext_ctx = shared.context(Some(signal.clone()));
            let list: Vec<Arc<dyn ToolResultHandler>> =
                handlers.iter().map(|(_, h)| h.clone()).collect();
            let (result, failures) = run_tool_result_chain(&list, &mut event, &ext_ctx).await;
            for failure in failures {
                let owner = handlers
                    .get(failure.index)
                    .map(|(o, _)| o.to_string())
                    .unwrap_or_default();
                shared.emit(SessionEvent::ExtensionError(ExtensionErrorEvent {
                    extension_path: owner,
                    event: "tool_result".to_owned(),
                    error: failure.message,
                }));
            }
            after = result;
        }
        if let Some(redactor) = &shared.redactor {
            let is_error = after
                .as_ref()
                .and_then(|a| a.is_error)
                .unwrap_or(ctx.is_error);
            if is_error {
                let mut content = after
                    .as_ref()
                    .and_then(|a| a.content.clone())
                    .unwrap_or_else(|| ctx.result.content.clone());
                redactor.redact_content(&mut content);
                if content != ctx.result.content {
                    let mut a = after.unwrap_or_default();
                    a.content = Some(content);
                    after = Some(a);
                }
            }
        }
        Ok(after.unwrap_or_default())
    }
}

#[async_trait]
impl PrepareNextTurn for SessionHooks {
    async fn prepare_next_turn(
        &self,
        turn: CompletedTurn<'_>,
        _signal: &AbortSignal,
    ) -> Option<NextTurn> {
        let shared = self.0.upgrade()?;
        let (system_prompt, tools) = {
            let state = lock(&shared.state);
            (state.system_prompt.clone(), state.active_tools.clone())
        };
        Some(NextTurn {
            context: Some(Context {
                system_prompt,
                messages: turn.context.messages.clone(),
                tools,
            }),
            model: None,
            thinking_level: None,
        })
    }
}

pub(crate) struct SessionForwarder(pub(crate) Weak<Shared>);

#[async_trait]
impl AgentListener for SessionForwarder {
    async fn on_event(&self, event: &AgentEvent, signal: &AbortSignal) -> ListenerResult {
        let Some(shared) = self.0.upgrade() else {
            return Ok(());
        };
        match event {
            AgentEvent::MessageEnd { message } => shared.store.append_message(message.clone()),
            AgentEvent::ToolExecutionStart { .. }
            | AgentEvent::ToolExecutionUpdate { .. }
            | AgentEvent::ToolExecutionEnd { .. } => {
                let handlers = shared.handlers(|s| &s.tool_execution);
                if !handlers.is_empty() {
                    let ctx = shared.context(Some(signal.clone()));
                    for (owner, handler) in handlers {
                        let outcome = AssertUnwindSafe(handler.on_tool_execution(event, &ctx))
                            .catch_unwind()
                            .await;
                        let error = match outcome {
                            Ok(Ok(())) => continue,
                            Ok(Err(e)) => e.message().to_owned(),
                            Err(panic) => panic_text(&*panic),
                        };
                        // Pi swallows these; we at least log them.
                        tracing::warn!(extension = %owner, event = event.type_name(), %error, "extension handler failed");
                    }
                }
            }
            _ => {}
        }
        shared.emit_with(|| SessionEvent::Agent(event.clone()));
        Ok(())
    }
}

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
    pub async fn prompt(&self, text: impl Into<String>) -> Result<(), SessionError> {
        self.live()?
            .agent
            .prompt(text)
            .await
            .map_err(SessionError::Agent)
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

    /// The transcript store.
    pub fn session_manager(&self) -> &SessionManager {
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
    pub fn tool_definition(&self, name: &str) -> Option<Arc<dyn ToolDefinition>> {
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
