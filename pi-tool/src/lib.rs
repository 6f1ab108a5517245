//! pi-tool: define the tools LLM agents call, with the semantics of Pi 0.85.0.
#![warn(missing_docs)]

mod abort;
pub mod agent;
mod content;
mod context;
mod error;
mod mode;
pub mod pack;
mod params;
pub mod profiles;
mod result;
pub mod safety;
pub mod schema;
pub mod session;
mod tool;
mod update;

pub use abort::{AbortController, AbortSignal};
pub use content::Content;
pub use context::{
    ContextError, ExtensionContext, ExtensionContextBuilder, ExtensionUi, Mode, NoUi, NotifyLevel,
    STALE_CONTEXT_MESSAGE,
};
pub use error::{ABORTED_MESSAGE, ToolError, ToolErrorKind};
pub use mode::ToolExecutionMode;
pub use pack::{PackEntry, PackError, ToolOwner, ToolPack, check_tool_name};
pub use params::NoParams;
pub use result::{AgentToolResult, IntoToolResult, JsonToolResult, NoDetails};
pub use schema::ToolSchema;
pub use tool::{
    AgentTool, IntoAgentTool, IntoToolDefinition, ToolDefinition, ToolMetadata, ToolSpec,
    TypedTool, TypedToolDefinition, deserialize_params, wrap_tool_definition,
};
pub use update::OnUpdate;

#[doc(hidden)]
pub mod __private;

pub use pi_tool_macros::{pi_tool, pi_tools};

/// Re-exported so that tool crates need no direct dependency on them.
pub use async_trait::async_trait;
pub use schemars::JsonSchema;
pub use serde_json::{Value, json};

#[doc(hidden)]
pub use tracing as __tracing;

/// The schemars version pi-tool generates schemas with. A params type deriving
/// [`JsonSchema`] without its own schemars dependency names it:
/// `#[schemars(crate = "pi_tool::schemars")]`.
pub use schemars;
