//! `AgentSession`: tools from several sources, extensions, active tools and a system
//! prompt rebuilt from them, on top of the [`Agent`](crate::agent::Agent) runtime.
//!
//! ```text
//!  AgentSession::builder()
//!    .builtin_tools(pack, defaults)      the host's built-ins, first in the registry
//!    .extension(e1).extension(e2)        load order: e1 registers tools + handlers, then e2
//!    .custom_tool(t) / .agent_tool(t)    the host's own tools (owner "custom tools")
//!    .tools([...]) / .exclude_tools([...])   filter the registry itself
//!    .no_tools(NoTools::Builtin | All)   start without the built-ins / without any tool
//!    .build()?            ──► registry (unique names, or an error naming both owners)
//!                         ──► active tools ──► system prompt ("Available tools", "Guidelines")
//!  session.prompt("...")  ──► Agent run; tool_call / tool_result chains around each call;
//!                             every later turn sees the current active tools and prompt
//! ```
//!
//! * [`RegisteredTool`], [`ToolSource`]: who owns which tool and where it came from
//!   (built-in, extension, custom); allowlist, excludes and [`NoTools`]; a built-in
//!   shadowed by an extension or custom tool of its name; duplicate names among
//!   extension and custom tools refused ([`DuplicateToolError`]).
//!
//! # Built-in tools
//!
//! Pi's session always has its coding tools. pi-tool's has the built-ins its host gives
//! ([`AgentSessionBuilder::builtin_tools`]), none by default: the runtime does not
//! depend on a tool pack (`pi-tool-coding` depends on the core alone), and a host that
//! is not a coding agent needs no `bash`. A coding agent passes Pi's set:
//!
//! ```text
//! AgentSession::builder(model)
//!     .builtin_tools(pi_tool_coding::builtin_tools(), pi_tool_coding::CODING_TOOL_NAMES)
//! ```
//!
//! Then the session is Pi's: `read`, `bash`, `edit` and `write` active, `grep`, `find`,
//! `ls` (and `powershell`) registered; `tools`, `exclude_tools` and `no_tools` as Pi
//! applies them; [`AgentSession::all_tools`] reports each tool's [`ToolSource`] and
//! [`RegisteredTool::source_path`].
//! * [`SystemPrompt`]: Pi's tool sections of the system prompt; the rest is configurable.
//! * [`Extension`] and its [`ExtensionApi`] handle.
//! * [`ToolCallHandler`], [`ToolResultHandler`], [`ToolExecutionHandler`]: `tool_call`,
//!   `tool_result` and `tool_execution_*` handlers and their chains.
//! * [`Transcript`]: the messages of the session, in memory.
//!
//! Tools get a fresh [`ExtensionContext`](crate::context::ExtensionContext) per execute call and
//! handlers one per emission; it is a live view of the session and becomes stale after
//! [`AgentSession::dispose`]. Differences from Pi are listed in `docs/differences-from-pi.md`.
//!
//! ```
//! use std::sync::Arc;
//! use pi_tool::model::AssistantContent;
//! use pi_tool::testing::{FauxModel, FauxTurn};
//! use pi_tool::session::{AgentSession, FnExtension, ToolCallDecision, ToolCallEvent};
//! use pi_tool::{AgentTool, json};
//! use pi_tool::context::ExtensionContext;
//! # use pi_tool::{JsonToolResult, ToolError, ToolInvocation, ToolSpec};
//! # use pi_tool::schema::ToolSchema;
//! # struct Echo(ToolSpec);
//! # #[pi_tool::async_trait]
//! # impl AgentTool for Echo {
//! #     fn spec(&self) -> &ToolSpec { &self.0 }
//! #     async fn execute(&self, call: ToolInvocation<'_>) -> Result<JsonToolResult, ToolError> {
//! #         Ok(JsonToolResult::text(call.params.to_string(), None))
//! #     }
//! # }
//! # fn echo(name: &str) -> Arc<dyn AgentTool> {
//! #     let schema = Arc::new(ToolSchema::from_json(json!({"type": "object"})));
//! #     let mut spec = ToolSpec::new(name, "echo", schema);
//! #     spec.prompt_snippet = Some(format!("Echo ({name})"));
//! #     Arc::new(Echo(spec))
//! # }
//! # tokio::runtime::Builder::new_current_thread().enable_all().build().unwrap().block_on(async {
//! let model = FauxModel::new(vec![FauxTurn::new(vec![
//!     AssistantContent::tool_call("c1", "delete_all", json!({})),
//! ])]);
//! let session = AgentSession::builder(Arc::new(model))
//!     .custom_tool(echo("echo"))
//!     .extension(FnExtension::new("guard", |api| {
//!         api.register_tool(echo("delete_all"))?;
//!         api.on_tool_call(|e: &mut ToolCallEvent, _: &ExtensionContext| {
//!             Ok(if e.tool_name == "delete_all" {
//!                 ToolCallDecision::block("not today")
//!             } else {
//!                 ToolCallDecision::Allow
//!             })
//!         })
//!     }))
//!     .build()?;
//! assert_eq!(session.active_tool_names(), ["delete_all", "echo"]);
//! assert!(session.system_prompt().contains("- echo: Echo (echo)"));
//! session.prompt("clean up").await?; // Err only when the run cannot start
//! session.ensure_ok()?; // Err when the model call failed (Pi's semantics: `prompt` is Ok)
//! let messages = session.agent().messages();
//! let result = messages.iter().find_map(|m| m.as_tool_result()).unwrap();
//! assert_eq!(result.content[0].as_text(), Some("not today"));
//!
//! // A second owner for a name is refused, naming both.
//! let error = AgentSession::builder(Arc::new(FauxModel::default()))
//!     .extension(FnExtension::new("a", |api| api.register_tool(echo("echo"))))
//!     .custom_tool(echo("echo"))
//!     .build()
//!     .unwrap_err();
//! assert_eq!(error.to_string(), "tool name \"echo\" is registered twice: by <inline:a> and by custom tools");
//! # Ok::<(), Box<dyn std::error::Error>>(())
//! # }).unwrap();
//! ```

mod approval;
mod builder;
mod event;
mod extension;
mod facade;
mod handlers;
mod hooks;
mod prompt;
mod registry;
mod shared;
mod store;
mod tool;

use std::fmt;

pub use builder::AgentSessionBuilder;
pub use event::{ActiveToolsChange, ExtensionErrorEvent, SessionEvent, SubscriptionId};
pub use extension::{Extension, ExtensionApi, FnExtension, NOT_INITIALIZED_MESSAGE};
pub use facade::AgentSession;
pub use handlers::{
    ToolCallDecision, ToolCallEvent, ToolCallHandler, ToolExecutionHandler, ToolResultEvent,
    ToolResultHandler, ToolResultPatch,
};
pub use prompt::{PromptTemplate, SystemPrompt};
pub use registry::{CUSTOM_TOOLS_OWNER, DuplicateToolError, NoTools, RegisteredTool, ToolSource};
pub use store::Transcript;

use crate::agent::AgentError;
use crate::pack::{ToolNameError, ToolOwner};

/// Why a session operation failed.
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub enum SessionError {
    /// Two owners registered the same tool name.
    DuplicateTools(DuplicateToolError),
    /// A tool name providers would reject.
    InvalidToolName {
        /// Who registered it.
        owner: ToolOwner,
        /// What is wrong with the name.
        error: ToolNameError,
    },
    /// An extension's registration step failed.
    Extension {
        /// The extension (`<inline:NAME>`).
        owner: ToolOwner,
        /// Its error.
        message: String,
    },
    /// An action method was called while extensions were loading (Pi's text).
    NotInitialized,
    /// The session was disposed.
    Disposed,
    /// The agent refused the prompt (a run is active).
    Agent(AgentError),
    /// The builder's run policy carried `before_tool_call` / `after_tool_call` hooks: a
    /// session's hooks are its extensions' handlers.
    PolicyHooks,
    /// A registered tool reaches (`#[pi_tool(reaches = [...])]`) a tool the session does
    /// not have.
    MissingReach(pi_tool_core::pack::MissingReach),
}

impl fmt::Display for SessionError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            SessionError::DuplicateTools(e) => e.fmt(f),
            SessionError::InvalidToolName { owner, error } => {
                write!(f, "{error} (registered by {owner})")
            }
            SessionError::Extension { owner, message } => {
                write!(f, "extension {owner} failed to load: {message}")
            }
            SessionError::NotInitialized => f.write_str(NOT_INITIALIZED_MESSAGE),
            SessionError::Disposed => f.write_str("the session was disposed"),
            SessionError::Agent(e) => e.fmt(f),
            SessionError::PolicyHooks => f.write_str(
                "a session's before_tool_call and after_tool_call are its extensions' tool_call and tool_result handlers: register an Extension instead of giving the run policy hooks",
            ),
            SessionError::MissingReach(e) => e.fmt(f),
        }
    }
}

impl std::error::Error for SessionError {}

impl From<DuplicateToolError> for SessionError {
    fn from(error: DuplicateToolError) -> Self {
        SessionError::DuplicateTools(error)
    }
}
