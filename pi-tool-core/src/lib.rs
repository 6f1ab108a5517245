//! pi-tool-core: the contract of the tools LLM agents call, with the semantics of Pi 0.85.0.
//!
//! This is what a **tool pack** (a crate of tools that others mount) depends on: the
//! traits a tool implements, what crosses a call (arguments, results, progress, the abort
//! signal, the context), the schema pipeline that checks the model's arguments, packs, and
//! the one contained call path with its [`CallPolicy`]. The runtime that drives tools (the
//! model layer, the agent loop, sessions, providers, the testing kit) is
//! [`pi-tool`](https://docs.rs/pi-tool), which re-exports everything here at the same
//! paths; hosts depend on it, packs do not need to.
//!
//! A pack of one tool, called the way every host calls it, through [`CallPolicy::call`]:
//!
//! ```
//! use pi_tool_core::pack::ToolPack;
//! use pi_tool_core::{AbortSignal, CallPolicy, OnUpdate, ToolError, ToolInvocation, json, pi_tool, tool_pack};
//!
//! /// The model's arguments; field docs become property descriptions.
//! #[pi_tool_core::params]
//! struct AddParams {
//!     /// The first addend.
//!     a: i64,
//!     /// The second addend.
//!     b: i64,
//! }
//!
//! /// Adds two integers.
//! #[pi_tool(name = "add", read_only)]
//! async fn add(params: AddParams) -> Result<String, ToolError> {
//!     let sum = params.a.checked_add(params.b).ok_or_else(|| ToolError::new("the sum overflows"))?;
//!     Ok(sum.to_string())
//! }
//!
//! /// What the crate exports: every tool, with unique names.
//! pub fn pack() -> ToolPack {
//!     tool_pack![Add]
//! }
//!
//! # #[tokio::main(flavor = "current_thread")]
//! # async fn main() {
//! let pack = pack();
//! let tool = pack.get("add").unwrap();
//! // What the host applies to every call: argument limits, a default timeout, secret
//! // redaction, a result budget, the `execute_tool` span. The defaults are safe.
//! let policy = CallPolicy::new();
//! let args = json!({"a": 2, "b": "40"}); // Pi coerces "40" to the schema's integer
//! let call = ToolInvocation::new("call_1", &args, AbortSignal::never(), OnUpdate::none());
//! let result = policy.call(&**tool, call).await.unwrap();
//! assert_eq!(result.text_content(), "42");
//!
//! let args = json!({"a": 2});
//! let call = ToolInvocation::new("call_2", &args, AbortSignal::never(), OnUpdate::none());
//! let error = policy.call(&**tool, call).await.unwrap_err();
//! assert!(error.message().starts_with("Validation failed for tool \"add\":"));
//! # }
//! ```
//!
//! # The model
//!
//! 1. **The tool contract.** Two traits: [`Tool`], typed, which `#[pi_tool]` implements,
//!    and [`AgentTool`], Pi's `execute` at JSON level, object safe: hosts hold
//!    `Arc<dyn AgentTool>`. Each call arrives as one [`ToolInvocation`] (Pi's
//!    `toolCallId, params, signal, onUpdate` and, where a session runs it, the fifth
//!    argument, the [`ExtensionContext`](context::ExtensionContext));
//!    [`wrap_tool_definition`] is Pi's 5-to-4 adapter, binding a fresh context per call.
//!    One generic adapter ([`IntoAgentTool`]) turns a typed tool into the JSON level, where
//!    a result's typed details become [`JsonDetails`]: JSON text made once, parsed into a
//!    `Value` only if someone reads it as one.
//! 2. **The argument pipeline.** Each tool's [`ToolSchema`](schema::ToolSchema) is
//!    generated once (schemars, normalised for every provider) and compiled once. The
//!    model's arguments are untrusted: they go through the argument limits,
//!    `prepare_arguments`, Pi's null normalisation and coercion, validation against
//!    exactly the schema the model saw, then serde. A failure is an error with Pi's text,
//!    so the model can retry.
//! 3. **The call path.** [`CallPolicy`] is how every host runs a call: it checks the
//!    arguments (no tool can skip validation), executes the tool with a panic, a timeout
//!    or an abort contained, then redacts secrets, applies the result budget and records
//!    the `execute_tool` span. The agent loop runs its hooks between these steps; the MCP
//!    server runs them in one [`CallPolicy::call`].
//!
//! Around them: [`pack`] ships tools as crates with unique names, [`safety`] has the
//! helpers for paths, commands, result budgets and secrets, [`concurrency`] is the
//! scheduler of weighted concurrency classes every host shares, and [`model::Model`] is
//! the descriptor a tool reads as Pi's `ctx.model`.
#![warn(missing_docs)]
#![cfg_attr(docsrs, feature(doc_cfg))]

mod abort;
pub mod bounds;
mod call;
pub mod concurrency;
mod content;
pub mod context;
mod details;
mod error;
mod js;
mod mode;
pub mod model;
mod nested;
pub mod pack;
mod params;
pub mod profiles;
mod result;
pub mod safety;
pub mod schema;
mod tool;
mod tool_name_repair;
mod update;

pub use abort::{AbortController, AbortSignal};
pub use call::{
    CallFailure, CallPolicy, CallSpan, call_contained, check_contained, execute_contained,
};
pub use content::{Content, EmbeddedResource, ResourceLink};
pub use details::JsonDetails;
pub use error::{ABORTED_MESSAGE, ToolError, ToolErrorKind};
pub use mode::{ConcurrencyClass, TaskSupport, ToolExecutionMode};
pub use nested::{CallScope, DEFAULT_MAX_DEPTH, NestedCall, ToolCaller, error_of_result};
pub use params::NoParams;
pub use result::{AgentToolResult, IntoToolResult, Json, JsonToolResult, NoDetails};
pub use tool::{
    AgentTool, DynamicToolset, IntoAgentTool, Tool, ToolAnnotations, ToolInvocation, ToolSpec,
    ToolsetListener, ToolsetSubscription, wrap_tool_definition,
};
pub use update::OnUpdate;

#[doc(hidden)]
pub mod __private;
#[doc(hidden)]
pub mod __runtime;

// The pack macros of the core (documented items of this crate): their generated code
// names `::pi_tool_core`, so a pack that depends on the core alone needs no `crate` key.
pub use pi_tool_macros::{
    core_output as output, core_params as params, core_pi_tool as pi_tool,
    core_pi_tools as pi_tools,
};

/// Re-exported so that tool crates need no direct dependency on them.
pub use async_trait::async_trait;
pub use schemars::JsonSchema;
pub use serde_json::{Value, json};

/// The schemars version pi-tool generates schemas with. A params type deriving
/// [`JsonSchema`] without its own schemars dependency names it:
/// `#[schemars(crate = "pi_tool_core::schemars")]`.
pub use schemars;
