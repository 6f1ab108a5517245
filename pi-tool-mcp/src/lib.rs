//! Serve any pi-tool [`ToolPack`] over the Model Context Protocol.
//!
//! An MCP client (Claude Desktop, an IDE, the Pi bridge in `bridges/pi/`) starts a
//! server, asks `tools/list`, and calls `tools/call`. [`PackServer`] answers both from a
//! [`ToolPack`], with the same semantics an in-process Pi agent gives the pack:
//!
//! - **`tools/list`** lists every tool in pack order: `name`, `title` (the label),
//!   `description`, and `inputSchema` in the `mcp` schema profile (the portable one; see
//!   `schema.rs`), or as declared with
//!   [`PackServer::list_declared_schemas`](crate::PackServer::list_declared_schemas). Pi's own fields that MCP has no slot for (prompt snippet, prompt
//!   guidelines, execution mode) travel in the tool's `_meta` under `pi-tool/…` keys.
//! - **`tools/call`** runs Pi's argument pipeline: `prepare_arguments`, then schema
//!   validation, then `execute`. Whatever fails (bad arguments with Pi's
//!   `Validation failed for tool "…"` text, the tool's own error, an abort, a timeout, a
//!   panic) is a result with `isError: true` whose text the model can read and act on.
//!   A tool the server does not have is the one JSON-RPC error, -32602 with Pi's text
//!   (`Tool x not found`) and `data.tool`, as MCP lists it among protocol errors. The
//!   result's `details` (for hosts, never for the model) travel in
//!   `_meta["pi-tool/details"]`; a structured tool's (`Json<T>`) travel as
//!   `structuredContent` instead, beside their JSON text, and nowhere else
//!   (`_meta["pi-tool/wrappedResult"]` marks a value wrapped as `{"result": value}`).
//! - **Progress**: when the request carries `_meta.progressToken`, every `onUpdate` of
//!   the tool becomes a `notifications/progress` (progress 1, 2, 3…, `message` = the
//!   update's text, the whole partial result in `_meta["pi-tool/partialResult"]`), all
//!   sent before the call's result.
//! - **Cancellation**: `notifications/cancelled` aborts that call's [`AbortSignal`]
//!   (rmcp's per-request cancellation token is the signal's token); the tool ends as it
//!   would in Pi, and rmcp sends no response for the cancelled request, as the protocol
//!   asks. Over streamable HTTP, a client that closes the call's response aborts it
//!   too; without sessions ([`PackServer::with_stateless_http`], for replicas behind a
//!   load balancer) that is the only cancellation, and a `notifications/cancelled` is
//!   accepted and ignored.
//! - **Input from the user** ([`CallingClient`]): the client of a call is its tool's
//!   user interface, model and workspace. The context of [`PackServer::new`] has a UI
//!   (`has_ui()`) exactly when the client declared `elicitation`, and its
//!   `confirm` / `select` / `input` become elicitations; a tool may also ask directly
//!   (`elicit`, `create_message`, `list_roots`). Before 2026-07-28 the server sends the
//!   request and waits; at 2026-07-28 the call answers an `InputRequiredResult` whose
//!   `requestState` is sealed with an HMAC under the server's key
//!   ([`PackServer::with_request_state_key`]), so any replica resumes it and a tampered
//!   state is refused (-32602).
//! - **Logging** ([`CallingClient::log`]): `notifications/message` at the level the
//!   client asked for (`logging/setLevel`, or the request's `_meta` at 2026-07-28), none
//!   before it asks.
//! - **Resource subscriptions**: `resources/subscribe` (before 2026-07-28) and
//!   `subscriptions/listen` (2026-07-28) hear of [`ResourcePack::notify_updated`].
//! - **Tools that change** ([`ServedTools`], from [`PackServer::served_tools`]): add,
//!   replace or remove tools while serving; clients hear of it
//!   (`notifications/tools/list_changed`, or on `subscriptions/listen` at 2026-07-28),
//!   and `tools.listChanged` is declared once the handle has been taken.
//! - **Tasks** (SEP-2663): a tool that declares [`TaskSupport`]
//!   (`#[pi_tool(task_support = "optional")]`, or [`PackServer::with_task_support`]) runs as a task for a client that declared the
//!   `io.modelcontextprotocol/tasks` extension: `tasks/get`, `tasks/update`,
//!   `tasks/cancel` (its [`AbortSignal`]), state in a [`TaskStore`].
//! - **Back-pressure**: a stdio client that stops reading its answers is not read
//!   either once [`DEFAULT_MAX_PENDING_REQUESTS`] requests wait for theirs.
//!
//! Transports: [`PackServer::serve_stdio`] (the usual way a client starts a tool server)
//! and [`PackServer::serve_http`] (MCP's streamable HTTP, loopback hosts only by
//! default); any other rmcp transport works through `rmcp::ServiceExt::serve`. Both
//! answer malformed requests themselves (a line that does not parse, params of the wrong
//! shape) with a JSON-RPC error carrying the request's id where it is readable, where
//! rmcp alone would drop the line or answer -32601 or id `null`; see
//! [`PackServer::serve_io`]. Another transport gets rmcp's own handling.
//!
//! ```no_run
//! # async fn run(pack: pi_tool_core::pack::ToolPack) -> Result<(), Box<dyn std::error::Error>> {
//! pi_tool_mcp::PackServer::new(pack)
//!     .with_server_info("weather", "0.1.0")
//!     .serve_stdio()
//!     .await?;
//! # Ok(()) }
//! ```
//!
//! [`ToolPack`]: pi_tool_core::pack::ToolPack
//! [`AbortSignal`]: pi_tool_core::AbortSignal
//! [`TaskSupport`]: pi_tool_core::TaskSupport
#![warn(missing_docs)]

#[cfg(feature = "client")]
#[cfg_attr(docsrs, doc(cfg(feature = "client")))]
pub mod client;
mod error;
mod meta;
mod server;

#[cfg(fuzzing)]
#[doc(hidden)]
pub mod __fuzz;

pub use error::ServeError;
pub use meta::{
    CONCURRENCY_META_KEY, DETAILS_META_KEY, PARTIAL_RESULT_META_KEY, REACHES_META_KEY,
    TOOL_META_PREFIX, WRAPPED_RESULT_META_KEY,
};
pub use server::PackServer;
pub use server::call::{CallEnd, CallOutcome};
pub use server::input::{CallingClient, InputError};
pub use server::prompts::{CompletionTarget, Completions, PromptError, PromptPack, PromptResult};
pub use server::resources::{ReadResult, ResourceError, ResourcePack};
pub use server::serve::http::limits::HttpLimits;
pub use server::serve::io::{DEFAULT_MAX_MESSAGE_BYTES, DEFAULT_MAX_PENDING_REQUESTS};
pub use server::served::ServedTools;
pub use server::tasks::{MemoryTaskStore, ORPHANED_TASK_MESSAGE, TaskStore, TaskStoreError};

/// The MCP SDK this crate serves with, for callers that want another transport
/// (`rmcp::ServiceExt::serve` works on any [`PackServer`]).
pub use rmcp;
