//! The server side: [`PackServer`], an rmcp `ServerHandler` over a [`ToolPack`].
//!
//! rmcp does the protocol (framing, `initialize`, version negotiation, one task per
//! request, a cancellation token per request, dropping the response of a cancelled
//! request); this module lists the pack and runs each call through the server's
//! [`CallPolicy`] (`dispatch.rs`). One job a file:
//!
//! - `mod.rs`: the server's state; `builder.rs`: its constructors and settings;
//! - `handler.rs`: the `ServerHandler` methods; `dispatch.rs`: one `tools/call`, plain
//!   or as a task;
//! - `serve/`: the transports (`serve_stdio`/`serve_io` on the line framing of `io/`,
//!   `serve_http` on the layer of `http/`), which take an rmcp service, not a server;
//! - what a call crosses: `call.rs` (the measured call), `convert.rs` and `schema.rs`
//!   (pi-tool's shapes to MCP's), `progress.rs`, `input/` (the calling client),
//!   `disconnect.rs` (a closed HTTP response aborts its call);
//! - what a server serves besides its pack: `served.rs` (tools that change), `tasks.rs`,
//!   `resources.rs`, `prompts.rs`, `extras.rs` (their answers), `subscriptions.rs`.

use std::collections::HashMap;
use std::fmt;
use std::sync::{Arc, Mutex};

use pi_tool_core::CallPolicy;
use pi_tool_core::TaskSupport;
use pi_tool_core::concurrency::{ConcurrencyLimits, Scheduler};
#[allow(deprecated)]
// `logging/setLevel`: 2026-07-28 removed it, the revisions before have it.
use rmcp::model::LoggingLevel;
use rmcp::model::{CacheScope, Implementation, RequestStateCodec};

use self::admission::SessionCalls;
use self::call::CallEnd;
use self::prompts::{Completions, PromptPack};
use self::resources::ResourcePack;
use self::serve::http::limits::HttpLimits;
use self::served::Served;
use self::subscriptions::Subscriptions;
use self::tasks::Tasks;

#[cfg(doc)]
use pi_tool_core::pack::ToolPack;

mod admission;
mod builder;
pub(crate) mod call;
pub(crate) mod convert;
mod disconnect;
mod dispatch;
mod extras;
mod handler;
pub(crate) mod input;
mod nested;
mod progress;
pub(crate) mod prompts;
pub(crate) mod resources;
mod schema;
pub(crate) mod serve;
pub(crate) mod served;
mod subscriptions;
pub(crate) mod tasks;

type CallEndHook = Arc<dyn Fn(&CallEnd) + Send + Sync>;

/// Serves the tools of a [`ToolPack`] over MCP. See the [crate docs](crate).
///
/// Cheap to clone; implements rmcp's `ServerHandler`, so any rmcp transport serves it
/// (`rmcp::ServiceExt::serve`); [`serve_stdio`](Self::serve_stdio) is the common case.
#[derive(Clone)]
pub struct PackServer {
    /// The served tools, shared by every session and changed through [`ServedTools`].
    served: Arc<Served>,
    server_info: Implementation,
    instructions: Option<String>,
    on_call_end: Option<CallEndHook>,
    policy: Arc<McpPolicy>,
    max_message_bytes: usize,
    max_pending_requests: usize,
    stateless_http: bool,
    allowed_hosts: Vec<String>,
    allowed_origins: Vec<String>,
    http_limits: HttpLimits,
    resources: ResourcePack,
    prompts: PromptPack,
    completions: Option<Completions>,
    cache_hints: (u64, CacheScope),
    /// Seals the `requestState` of input-required results (MCP 2026-07-28).
    request_state: Arc<RequestStateCodec>,
    /// The resource subscriptions of the client session this handler serves (HTTP gives
    /// each session a clone with its own, `serve_http`).
    subscriptions: Subscriptions,
    /// The session's `logging/setLevel` (before 2026-07-28); `None` until it is set.
    #[allow(deprecated)]
    log_level: Arc<Mutex<Option<LoggingLevel>>>,
    /// `with_task_support`'s settings by tool name, over what each tool's spec declares
    /// (`Forbidden` included, which turns a declaration off).
    task_support: Arc<HashMap<String, TaskSupport>>,
    tasks: Arc<Tasks>,
    /// The calls of the client session this handler serves, direct and nested (each
    /// `serve_io` connection and each HTTP session starts a count of its own).
    session_calls: Arc<SessionCalls>,
}

/// What an MCP server applies to its calls: the call policy every host shares, the
/// concurrency classes across clients, and the limits on calls.
#[derive(Clone)]
struct McpPolicy {
    policy: CallPolicy,
    /// The limits of `with_concurrency` / `with_max_concurrency`.
    concurrency: ConcurrencyLimits,
    /// Their scheduler, shared by every session; `None` when nothing is limited.
    scheduler: Option<Arc<Scheduler>>,
    /// The limits on the nested calls of a served tool.
    nested: nested::NestedLimits,
    /// Calls per client session, direct and nested.
    max_session_calls: Option<u32>,
}

impl fmt::Debug for PackServer {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("PackServer")
            .field(
                "tools",
                &self
                    .served
                    .entries()
                    .iter()
                    .map(|e| e.listed.name.clone())
                    .collect::<Vec<_>>(),
            )
            .field("server_info", &self.server_info)
            .finish()
    }
}
