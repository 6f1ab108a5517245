//! `AgentSessionBuilder`: everything a session is made of, checked once at `build`.
//!
//! `build` loads the extensions in order (each registers its tools and handlers), checks
//! that every tool name has one owner, builds the filtered registry, activates the
//! allowed tools (allowlist order first, then registry order) and renders the system
//! prompt. Any failure (duplicate names, an invalid name, an extension error) is returned
//! and no session exists.

use std::path::PathBuf;
use std::sync::Arc;

use super::SessionError;
use super::extension::{Extension, ExtensionApi};
use super::facade::AgentSession;
use super::hooks::{SessionForwarder, SessionHooks};
use super::prompt::{PromptTemplate, SystemPrompt};
use super::registry::{NoTools, RegisteredTool, ToolFilter, ToolSource};
use super::shared::{Shared, SharedParts, lock};
use crate::agent::{Agent, AgentOptions, DurableRuns, RunPolicy};
use crate::context::{ExtensionUi, Mode};
use crate::model::{Model, StreamFn, StreamOptions};
use crate::pack::{ToolOwner, ToolPack};
use pi_tool_core::{AgentTool, DynamicToolset, IntoAgentTool, ToolsetListener};

impl AgentSession {
    /// Starts a session on this model implementation (a provider, or
    /// `testing::FauxModel` in tests).
    pub fn builder(stream_fn: Arc<dyn StreamFn>) -> AgentSessionBuilder {
        AgentSessionBuilder {
            stream_fn,
            model: Model::default(),
            custom_tools: Vec::new(),
            builtins: Vec::new(),
            default_active: Vec::new(),
            no_tools: None,
            extensions: Vec::new(),
            toolsets: Vec::new(),
            tools: None,
            exclude_tools: Vec::new(),
            prompt: SystemPrompt::default(),
            cwd: None,
            mode: Mode::Print,
            ui: None,
            policy: RunPolicy::default(),
            stream_options: StreamOptions::default(),
            durable: None,
        }
    }
}

/// Builds an [`AgentSession`] (Pi's `createAgentSession` options).
pub struct AgentSessionBuilder {
    stream_fn: Arc<dyn StreamFn>,
    model: Model,
    custom_tools: Vec<Arc<dyn AgentTool>>,
    builtins: Vec<RegisteredTool>,
    default_active: Vec<String>,
    no_tools: Option<NoTools>,
    extensions: Vec<Arc<dyn Extension>>,
    toolsets: Vec<Arc<dyn DynamicToolset>>,
    tools: Option<Vec<String>>,
    exclude_tools: Vec<String>,
    prompt: SystemPrompt,
    cwd: Option<PathBuf>,
    mode: Mode,
    ui: Option<Arc<dyn ExtensionUi>>,
    /// The run policy; its hooks are the session's own (extensions' `tool_call` and
    /// `tool_result` handlers).
    policy: RunPolicy,
    stream_options: StreamOptions,
    durable: Option<DurableRuns>,
}

impl AgentSessionBuilder {
    /// Sets the model descriptor.
    #[must_use]
    pub fn model(mut self, model: Model) -> Self {
        self.model = model;
        self
    }

    /// Adds a custom tool (a typed tool or an `Arc<dyn AgentTool>`); it receives
    /// the session's context.
    #[must_use]
    pub fn custom_tool(mut self, tool: impl IntoAgentTool) -> Self {
        self.custom_tools.push(tool.into_agent_tool());
        self
    }

    /// Adds a plain four-argument tool as a custom tool (the context is dropped).
    #[must_use]
    pub fn agent_tool(mut self, tool: Arc<dyn AgentTool>) -> Self {
        self.custom_tools.push(tool.into_agent_tool());
        self
    }

    /// The host's built-in tools (Pi's `read`, `bash`, `edit`, `write`, `grep`, `find`,
    /// `ls`, ...), first in the registry in the pack's order, with the names active when
    /// neither [`tools`](Self::tools) nor [`no_tools`](Self::no_tools) says otherwise.
    /// Replaces any built-ins given before; a session has none unless the host gives
    /// them.
    ///
    /// pi-tool has no coding tools of its own: `pi_tool_coding::builtin_tools()` is Pi's
    /// set (`read`, `bash`, `powershell`, `edit`, `write`, `grep`, `find`, `ls`) and
    /// `pi_tool_coding::CODING_TOOL_NAMES` Pi's default active names (`read`, `bash`,
    /// `edit`, `write`). An extension or custom tool with a built-in's name shadows the
    /// built-in and takes its place in the registry (Pi's rule).
    #[must_use]
    pub fn builtin_tools<I, S>(mut self, tools: ToolPack, active_by_default: I) -> Self
    where
        I: IntoIterator<Item = S>,
        S: Into<String>,
    {
        self.builtins = tools
            .entries()
            .iter()
            .map(|entry| RegisteredTool {
                definition: entry.tool.clone(),
                owner: entry.owner.clone(),
                source: ToolSource::Builtin,
            })
            .collect();
        self.default_active = active_by_default.into_iter().map(Into::into).collect();
        self
    }

    /// Starts without the built-ins active ([`NoTools::Builtin`]) or without any tool
    /// ([`NoTools::All`]) (Pi's `noTools`). An allowlist ([`tools`](Self::tools)) wins
    /// over both.
    #[must_use]
    pub fn no_tools(mut self, no_tools: NoTools) -> Self {
        self.no_tools = Some(no_tools);
        self
    }

    /// Adds a source of tools that can change while the session runs (an MCP server's:
    /// pi-tool-mcp's `McpToolset`). Its tools are registered after the custom tools, in
    /// the order the toolsets are added; a name another source has is a
    /// [`SessionError::DuplicateTools`](super::SessionError::DuplicateTools) at `build`. The allowlist
    /// ([`tools`](Self::tools)) and [`exclude_tools`](Self::exclude_tools) name them as
    /// the toolset does (`mcp__weather__get_weather`). When the toolset changes, the
    /// session registers its current tools as Pi registers a tool at run time: a new
    /// tool becomes active (with an allowlist, if it is listed), a tool that is gone
    /// leaves the registry and the active tools; a new tool whose name another source
    /// has is left out, with a warning.
    #[must_use]
    pub fn toolset(mut self, toolset: Arc<dyn DynamicToolset>) -> Self {
        self.toolsets.push(toolset);
        self
    }

    /// Adds an extension; extensions load in the order they are added.
    #[must_use]
    pub fn extension(mut self, extension: impl Extension) -> Self {
        self.extensions.push(Arc::new(extension));
        self
    }

    /// The allowlist (Pi's `tools`): only these names (built-in, extension or custom)
    /// exist in the registry; they are active in this order. An empty list means no tools
    /// at all.
    #[must_use]
    pub fn tools<I, S>(mut self, names: I) -> Self
    where
        I: IntoIterator<Item = S>,
        S: Into<String>,
    {
        self.tools = Some(names.into_iter().map(Into::into).collect());
        self
    }

    /// Names removed from the registry for good (Pi's `excludeTools`).
    #[must_use]
    pub fn exclude_tools<I, S>(mut self, names: I) -> Self
    where
        I: IntoIterator<Item = S>,
        S: Into<String>,
    {
        self.exclude_tools.extend(names.into_iter().map(Into::into));
        self
    }

    /// Replaces the generated prompt with the host's own (no tool list, no guidelines).
    #[must_use]
    pub fn system_prompt(mut self, prompt: impl Into<String>) -> Self {
        self.prompt = SystemPrompt::Custom {
            text: prompt.into(),
            append: Vec::new(),
        };
        self
    }

    /// Uses the default prompt builder with this surrounding text.
    #[must_use]
    pub fn prompt_template(mut self, template: PromptTemplate) -> Self {
        self.prompt = SystemPrompt::Default(template);
        self
    }

    /// Appends a paragraph to the prompt (generated or custom).
    #[must_use]
    pub fn append_system_prompt(mut self, text: impl Into<String>) -> Self {
        match &mut self.prompt {
            SystemPrompt::Default(t) => t.append.push(text.into()),
            SystemPrompt::Custom { append, .. } => append.push(text.into()),
        }
        self
    }

    /// The working directory contexts report (default: the process's).
    #[must_use]
    pub fn cwd(mut self, cwd: impl Into<PathBuf>) -> Self {
        self.cwd = Some(cwd.into());
        self
    }

    /// The host mode contexts report (default `print`).
    #[must_use]
    pub fn mode(mut self, mode: Mode) -> Self {
        self.mode = mode;
        self
    }

    /// Attaches a user interface (`has_ui()` becomes true).
    #[must_use]
    pub fn ui(mut self, ui: Arc<dyn ExtensionUi>) -> Self {
        self.ui = Some(ui);
        self
    }

    /// How the session's tool calls run: the call policy (argument limits, timeout,
    /// secret redaction, result budget, trace content), the batch mode and the concurrency
    /// limit. Its hooks must be empty: a session's `before_tool_call` and
    /// `after_tool_call` are its extensions' `tool_call` and `tool_result` handlers, so
    /// [`build`](Self::build) refuses a policy with hooks ([`SessionError::PolicyHooks`]).
    #[must_use]
    pub fn policy(mut self, policy: RunPolicy) -> Self {
        self.policy = policy;
        self
    }

    /// Sets the request options of every model call (API key, token limit, temperature,
    /// tool choice, ...).
    #[must_use]
    pub fn stream_options(mut self, options: StreamOptions) -> Self {
        self.stream_options = options;
        self
    }

    /// Runs started with [`AgentSession::run`] suspend into this store when a call waits
    /// for a decision (a `tool_call` handler answering `Ask`, such as
    /// [`ApprovalPolicy::defer`](crate::agent::ApprovalPolicy::defer)), and
    /// [`AgentSession::resume_run`] takes them up (docs/durable-runs.md).
    #[must_use]
    pub fn durable(mut self, runs: DurableRuns) -> Self {
        self.durable = Some(runs);
        self
    }

    /// Loads the extensions and builds the registry, active tools and prompt.
    pub fn build(self) -> Result<AgentSession, SessionError> {
        if self.policy.before_tool_call.is_some() || self.policy.after_tool_call.is_some() {
            return Err(SessionError::PolicyHooks);
        }
        let owners: Vec<ToolOwner> = self
            .extensions
            .iter()
            .map(|e| ToolOwner::new(format!("<inline:{}>", e.name())))
            .collect();
        let cwd = self
            .cwd
            .unwrap_or_else(|| std::env::current_dir().unwrap_or_else(|_| PathBuf::from(".")));
        // Pi's `createAgentSession`: `noTools: "all"` is an empty allowlist unless `tools`
        // gives one; the names asked for first are the allowlist, else the default
        // built-ins (none under `noTools`), never an excluded name.
        let filter = ToolFilter {
            allowed: self
                .tools
                .clone()
                .or_else(|| (self.no_tools == Some(NoTools::All)).then(Vec::new)),
            excluded: self.exclude_tools.into_iter().collect(),
        };
        let initial_active: Vec<String> = match (self.tools, self.no_tools) {
            (Some(tools), _) => tools,
            (None, Some(_)) => Vec::new(),
            (None, None) => self.default_active,
        }
        .into_iter()
        .filter(|name| !filter.excluded.contains(name))
        .collect();
        let parts = SharedParts {
            cwd,
            mode: self.mode,
            ui: self.ui,
            custom_tools: self.custom_tools,
            toolsets: self
                .toolsets
                .iter()
                .map(|t| (ToolOwner::new(format!("<{}>", t.source_name())), t.clone()))
                .collect(),
            builtins: self.builtins,
            initial_active,
            filter,
            prompt: self.prompt,
            owners: owners.clone(),
        };
        let (stream_fn, model, policy, stream_options, durable) = (
            self.stream_fn,
            self.model,
            self.policy,
            self.stream_options,
            self.durable,
        );
        let shared = Arc::new_cyclic(|weak| {
            let hooks = Arc::new(SessionHooks(weak.clone()));
            let mut options = AgentOptions::new(stream_fn)
                .model(model)
                .policy(policy)
                .stream_options(stream_options)
                .before_tool_call(hooks.clone())
                .after_tool_call(hooks.clone())
                .prepare_next_turn(hooks);
            if let Some(durable) = durable {
                options = options.durable(durable);
            }
            Shared::new(Agent::for_session(options), parts)
        });
        shared
            .agent
            .subscribe_listener(Arc::new(SessionForwarder(Arc::downgrade(&shared))));
        for (index, (extension, owner)) in self.extensions.iter().zip(owners).enumerate() {
            let api = ExtensionApi {
                shared: Arc::downgrade(&shared),
                index,
                owner,
            };
            extension.register(&api)?;
        }
        shared.initialize()?;
        for toolset in &self.toolsets {
            let weak = Arc::downgrade(&shared);
            let (listener, subscription) = ToolsetListener::new(move || {
                if let Some(shared) = weak.upgrade() {
                    shared.refresh_toolsets();
                }
            });
            toolset.on_change(listener);
            // The session listens for as long as it lives.
            lock(&shared.toolset_subscriptions).push(subscription);
        }
        Ok(AgentSession { shared })
    }
}
