//! The state a session, its hooks, its tools, its contexts and its extension handles
//! share: the registry, the active tools, the system prompt, the session's subscribers.

use std::panic::AssertUnwindSafe;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{Arc, Mutex, MutexGuard, Weak};

use super::SessionError;
use super::handlers::{ToolCallHandler, ToolExecutionHandler, ToolResultHandler, panic_text};
use super::prompt::{SystemPrompt, build_system_prompt};
use super::registry::{
    CUSTOM_TOOLS_OWNER, Refresh, RegisteredTool, ToolFilter, ToolSource, build_registry,
    check_unique, next_active,
};
use super::store::Transcript;
use crate::agent::Agent;
use crate::context::{ExtensionContext, ExtensionUi, Mode};
use crate::model::Model;
use crate::pack::{ToolOwner, check_tool_name};
use pi_tool_core::__runtime::SessionLink;
use pi_tool_core::AbortSignal;
use pi_tool_core::{AgentTool, DynamicToolset, ToolSpec, ToolsetSubscription};

use super::event::{ActiveToolsChange, SessionEvent, SubscriptionId};
use super::tool::{SessionTool, ToolSession};

pub(crate) type SessionListener = Arc<dyn Fn(&SessionEvent) + Send + Sync>;

pub(crate) struct ExtensionSlot {
    pub(crate) owner: ToolOwner,
    pub(crate) tools: Vec<Arc<dyn AgentTool>>,
    pub(crate) tool_call: Vec<Arc<dyn ToolCallHandler>>,
    pub(crate) tool_result: Vec<Arc<dyn ToolResultHandler>>,
    pub(crate) tool_execution: Vec<Arc<dyn ToolExecutionHandler>>,
}

pub(crate) struct Entry {
    pub(crate) tool: RegisteredTool,
    pub(crate) wrapped: Arc<dyn AgentTool>,
}

pub(crate) struct State {
    pub(crate) mode: Mode,
    pub(crate) ui: Option<Arc<dyn ExtensionUi>>,
    pub(crate) extensions: Vec<ExtensionSlot>,
    pub(crate) registry: Vec<Entry>,
    /// Replaced, never changed in place: a tool call compares the list it started with
    /// to the one it ended with by pointer (see [`stamp_added_tools`]).
    pub(crate) active: Arc<Vec<String>>,
    pub(crate) active_tools: Vec<Arc<dyn AgentTool>>,
    pub(crate) system_prompt: String,
    pub(crate) ready: bool,
}

/// Everything the session, its hooks, tools, contexts and extension handles share.
pub(crate) struct Shared {
    pub(crate) agent: Agent,
    pub(crate) state: Mutex<State>,
    pub(crate) cwd: std::path::PathBuf,
    pub(crate) custom_tools: Vec<Arc<dyn AgentTool>>,
    /// The dynamic toolsets (MCP servers), each with the owner its tools are reported
    /// under.
    pub(crate) toolsets: Vec<(ToolOwner, Arc<dyn DynamicToolset>)>,
    /// Keep the session listening to its toolsets; dropped with the session.
    pub(crate) toolset_subscriptions: Mutex<Vec<ToolsetSubscription>>,
    /// The host's built-in tools, in registry order (before filtering and shadowing).
    pub(crate) builtins: Vec<RegisteredTool>,
    /// The names asked for first at construction (Pi's `initialActiveToolNames`).
    pub(crate) initial_active: Vec<String>,
    pub(crate) filter: ToolFilter,
    pub(crate) prompt: SystemPrompt,
    pub(crate) store: Transcript,
    pub(crate) disposed: AtomicBool,
    pub(crate) listeners: Mutex<Vec<(SubscriptionId, SessionListener)>>,
    pub(crate) next_listener: AtomicU64,
}

pub(crate) fn lock<T>(m: &Mutex<T>) -> MutexGuard<'_, T> {
    // Every update under these locks is a single assignment or push.
    m.lock().unwrap_or_else(|p| p.into_inner())
}

pub(crate) struct SharedParts {
    pub(crate) cwd: std::path::PathBuf,
    pub(crate) mode: Mode,
    pub(crate) ui: Option<Arc<dyn ExtensionUi>>,
    pub(crate) custom_tools: Vec<Arc<dyn AgentTool>>,
    pub(crate) toolsets: Vec<(ToolOwner, Arc<dyn DynamicToolset>)>,
    pub(crate) builtins: Vec<RegisteredTool>,
    pub(crate) initial_active: Vec<String>,
    pub(crate) filter: ToolFilter,
    pub(crate) prompt: SystemPrompt,
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
            toolsets: parts.toolsets,
            toolset_subscriptions: Mutex::new(Vec::new()),
            builtins: parts.builtins,
            initial_active: parts.initial_active,
            filter: parts.filter,
            prompt: parts.prompt,
            store: Transcript::new(),
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

    pub(crate) fn active_snapshot(&self) -> Arc<Vec<String>> {
        lock(&self.state).active.clone()
    }

    /// Every extension, custom and toolset tool with its owner, in source order before
    /// filtering (the built-ins are [`Shared::builtins`]). The toolsets' tools are as they
    /// are now.
    pub(crate) fn all_sources(&self, state: &State) -> Vec<RegisteredTool> {
        let custom = &self.custom_tools;
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
        for (owner, toolset) in &self.toolsets {
            for definition in toolset.current_tools() {
                tools.push(RegisteredTool {
                    definition,
                    owner: owner.clone(),
                    source: ToolSource::Toolset,
                });
            }
        }
        tools
    }

    /// Registers the toolsets' current tools (a toolset changed), by Pi's rules for a
    /// tool registered at run time (`Refresh::Runtime`). A toolset tool whose name an
    /// earlier source has, or that is not a valid tool name, is left out with a warning.
    pub(crate) fn refresh_toolsets(self: &Arc<Self>) {
        let mut state = lock(&self.state);
        if !state.ready {
            return;
        }
        let mut sources: Vec<RegisteredTool> = Vec::new();
        for tool in self.all_sources(&state) {
            if tool.source == ToolSource::Toolset {
                if let Err(error) = check_tool_name(tool.name()) {
                    tracing::warn!(owner = %tool.owner, "toolset tool left out: {error}");
                    continue;
                }
                if let Some(first) = sources.iter().find(|t| t.name() == tool.name()) {
                    tracing::warn!(
                        owner = %tool.owner,
                        "toolset tool `{}` left out: {} has that name",
                        tool.name(),
                        first.owner
                    );
                    continue;
                }
            }
            sources.push(tool);
        }
        let previous_names: Vec<String> = state
            .registry
            .iter()
            .map(|e| e.tool.name().to_owned())
            .collect();
        let previous_active = Arc::clone(&state.active);
        let registry = build_registry(&self.builtins, sources, &self.filter);
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
    }

    /// Builds the registry and the initial active set (construction).
    pub(crate) fn initialize(self: &Arc<Self>) -> Result<(), SessionError> {
        let mut state = lock(&self.state);
        let sources = self.all_sources(&state);
        for tool in self.builtins.iter().chain(&sources) {
            check_tool_name(tool.name()).map_err(|error| SessionError::InvalidToolName {
                owner: tool.owner.clone(),
                error,
            })?;
        }
        check_unique(sources.iter().map(|t| (&t.owner, &t.definition)))?;
        let extension_and_custom: Vec<String> =
            sources.iter().map(|t| t.name().to_owned()).collect();
        let registry = build_registry(&self.builtins, sources, &self.filter);
        // A reach to a tool this session does not have is a mistake of the mount, not of
        // a run: it fails here, naming both tools.
        pi_tool_core::pack::check_reaches(registry.iter().map(|t| t.definition.spec()))
            .map_err(SessionError::MissingReach)?;
        let active = next_active(
            &registry,
            &self.filter,
            Refresh::IncludeAll {
                requested: &self.initial_active,
                extension_and_custom: &extension_and_custom,
            },
        );
        state.registry = self.wrap(registry);
        state.ready = true;
        self.apply_active(&mut state, active);
        Ok(())
    }

    pub(crate) fn wrap(self: &Arc<Self>, registry: Vec<RegisteredTool>) -> Vec<Entry> {
        registry
            .into_iter()
            .map(|tool| Entry {
                wrapped: Arc::new(SessionTool {
                    definition: tool.definition.clone(),
                    session: Arc::downgrade(self) as Weak<dyn ToolSession>,
                }),
                tool,
            })
            .collect()
    }

    /// Sets the active list, rebuilds the prompt and hands both to the agent.
    pub(crate) fn apply_active(&self, state: &mut State, active: Vec<String>) {
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
        definition: Arc<dyn AgentTool>,
    ) -> Result<(), SessionError> {
        let mut state = lock(&self.state);
        let Some(owner) = state.extensions.get(index).map(|s| s.owner.clone()) else {
            return Err(SessionError::Disposed);
        };
        let name = definition.spec().name.clone();
        check_tool_name(&name).map_err(|error| SessionError::InvalidToolName {
            owner: owner.clone(),
            error,
        })?;
        if state.ready {
            // A late registration must not take a name from another owner.
            let mut sources = self.all_sources(&state);
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
        let registry = build_registry(&self.builtins, self.all_sources(&state), &self.filter);
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

    pub(crate) fn emit(&self, event: SessionEvent) {
        self.emit_with(|| event);
    }

    /// Builds the event only when someone listens (agent events are cloned per call).
    pub(crate) fn emit_with(&self, event: impl FnOnce() -> SessionEvent) {
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

    pub(crate) fn handlers<H: ?Sized>(
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

pub(crate) struct Link(Weak<Shared>);

impl Link {
    pub(crate) fn get(&self) -> Option<Arc<Shared>> {
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

impl ToolSession for Shared {
    fn call_context(self: Arc<Self>, signal: AbortSignal) -> Option<ExtensionContext> {
        (!self.is_disposed()).then(|| self.context(Some(signal)))
    }

    fn active_snapshot(&self) -> Arc<Vec<String>> {
        Shared::active_snapshot(self)
    }
}
