//! [`PackServer`]: an rmcp `ServerHandler` over a [`ToolPack`].
//!
//! rmcp does the protocol (framing, `initialize`, version negotiation, one task per
//! request, a cancellation token per request, dropping the response of a cancelled
//! request); this handler only lists the pack and runs calls through [`run_call`].

// Logging and resource subscriptions are deprecated by SEP-2577 (2026-07-28); the
// revisions before it have them, and this server serves those too.
#![allow(deprecated)]

use std::collections::HashMap;
use std::fmt;
use std::num::NonZeroUsize;
use std::sync::{Arc, Mutex, OnceLock, PoisonError};

use pi_tool_core::context::ExtensionContext;
use pi_tool_core::pack::ToolPack;
use pi_tool_core::{
    AbortController, AbortSignal, AgentTool, CallPolicy, JsonToolResult, OnUpdate, ToolError,
    ToolErrorKind, Value, wrap_tool_definition,
};
use rmcp::model::{
    CacheScope, CallToolRequestParams, CallToolResponse, CancelTaskParams, ClientCapabilities,
    CompleteRequestParams, CompleteResult, CreateTaskResult, GetPromptRequestParams,
    GetPromptResponse, GetTaskParams, GetTaskResult, Implementation, InputRequiredResult,
    InputResponses, JsonObject, ListPromptsResult, ListResourceTemplatesResult,
    ListResourcesResult, ListToolsResult, LoggingLevel, PaginatedRequestParams, PromptsCapability,
    ReadResourceRequestParams, ReadResourceResponse, RequestStateCodec,
    ResourceUpdatedNotification, ResourceUpdatedNotificationParam, ResourcesCapability,
    ServerCapabilities, ServerConfig, ServerNotification, SetLevelRequestParams,
    SubscribeRequestParams, SubscriptionFilter, TASKS_EXTENSION_ID, Tool, ToolsCapability,
    UnsubscribeRequestParams, UpdateTaskParams,
};
use rmcp::service::{NotificationContext, RequestContext, RoleServer, SubscriptionContext};
use rmcp::{ErrorData as McpError, ServerHandler};
use tokio::sync::Semaphore;

#[cfg(doc)]
use crate::call::run_call;
use crate::call::{CallEnd, run_call_with_policy, trace_unknown_tool};
use crate::convert::call_tool_result;
use crate::disconnect::client_gone;
use crate::framing::{DEFAULT_MAX_MESSAGE_BYTES, serve_framed};
use crate::http_access::{BadEntry, HttpAccess};
use crate::http_framing::RequestBody;
use crate::http_serve::HttpLayer;
use crate::input::{BadState, CallInput, Suspended, mcp_context};
use crate::progress::ProgressForwarder;
use crate::prompts::{Completions, PromptPack};
use crate::resources::ResourcePack;
use crate::serve_extras::{complete, get_prompt, read_resource};
use crate::served::{Served, ServedTools, Wrap, effective_support, forward_list_changes};
use crate::subscriptions::Subscriptions;
use crate::tasks::{MemoryTaskStore, Running, TaskStore, TaskSupport, Tasks};
use crate::window::DEFAULT_MAX_PENDING_REQUESTS;

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
    log_level: Arc<Mutex<Option<LoggingLevel>>>,
    /// `with_task_support`'s settings by tool name, over what each tool's spec declares
    /// (`Forbidden` included, which turns a declaration off).
    task_support: Arc<HashMap<String, TaskSupport>>,
    tasks: Arc<Tasks>,
}

/// What an MCP server applies to its calls: the call policy every host shares, and a
/// concurrency limit across clients.
struct McpPolicy {
    policy: CallPolicy,
    /// Holds one permit per running call when a concurrency limit is set.
    permits: Option<Arc<Semaphore>>,
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

impl PackServer {
    /// A server for `pack`; each call's tool gets a context in print mode with the
    /// server's working directory, as there is no Pi session on this side, and with the
    /// calling client as its UI when the client declared `elicitation`
    /// (`has_ui() == true`; the UI's questions become elicitations, see
    /// [`CallingClient`](crate::CallingClient)); without it, no UI.
    pub fn new(pack: ToolPack) -> Self {
        Self::with_context(pack, mcp_context)
    }

    /// A server for `pack` whose five-argument tools get the context `ctx_factory` builds,
    /// once per call. [`CallingClient::current`](crate::CallingClient::current) works in
    /// the factory as in the tool.
    pub fn with_context<F>(pack: ToolPack, ctx_factory: F) -> Self
    where
        F: Fn() -> ExtensionContext + Clone + Send + Sync + 'static,
    {
        let tools = pack.tools_with_context(ctx_factory.clone());
        let wrap: Wrap = Arc::new(move |tool| wrap_tool_definition(tool, ctx_factory.clone()));
        PackServer {
            served: Arc::new(Served::new(tools, wrap)),
            server_info: Implementation::new("pi-tool-mcp", env!("CARGO_PKG_VERSION")),
            instructions: None,
            on_call_end: None,
            policy: Arc::new(McpPolicy {
                policy: CallPolicy::default(),
                permits: None,
            }),
            max_message_bytes: DEFAULT_MAX_MESSAGE_BYTES,
            max_pending_requests: DEFAULT_MAX_PENDING_REQUESTS,
            stateless_http: false,
            allowed_hosts: Vec::new(),
            allowed_origins: Vec::new(),
            resources: ResourcePack::new(),
            prompts: PromptPack::new(),
            completions: None,
            cache_hints: (0, CacheScope::Public),
            request_state: Arc::new(RequestStateCodec::new_unchecked(random_key())),
            subscriptions: Subscriptions::default(),
            log_level: Arc::default(),
            task_support: Arc::default(),
            tasks: Arc::new(Tasks::new(Arc::new(MemoryTaskStore::default()))),
        }
    }

    /// Lets the tool `name` run as a task (SEP-2663, see [`crate::TaskSupport`]) for
    /// clients that declared the `io.modelcontextprotocol/tasks` extension; the server
    /// then declares the extension. By default a tool runs as its spec declares
    /// (`#[pi_tool(task_support = "...")]`); this overrides it, and
    /// [`TaskSupport::Forbidden`] turns a declared task support off. A name the pack does
    /// not have is [`ServeError::Config`].
    pub fn with_task_support(
        mut self,
        name: &str,
        support: TaskSupport,
    ) -> Result<Self, ServeError> {
        if self.find(name).is_none() {
            return Err(ServeError::Config(format!(
                "task support for {name:?}, a tool the pack does not have"
            )));
        }
        Arc::make_mut(&mut self.task_support).insert(name.to_owned(), support);
        Ok(self)
    }

    /// Where tasks keep the state `tasks/get` reports ([`MemoryTaskStore`] unless set).
    #[must_use]
    pub fn with_task_store(mut self, store: impl TaskStore) -> Self {
        self.tasks = Arc::new(Tasks::new(Arc::new(store)));
        self
    }

    /// The key that seals the `requestState` of input-required results (MCP
    /// 2026-07-28, an HMAC over the state): give every replica of a server the same
    /// secret key of at least 32 bytes, so that any of them can resume a call another
    /// began. Unless set, each server has a random key of its own.
    pub fn with_request_state_key(mut self, key: impl Into<Vec<u8>>) -> Result<Self, ServeError> {
        let codec = RequestStateCodec::try_new(key)
            .map_err(|error| ServeError::Config(format!("the request state key: {error}")))?;
        self.request_state = Arc::new(codec);
        Ok(self)
    }

    /// Applies the call policy every host shares to each call: `tool_timeout` ends calls
    /// of tools without their own timeout, `argument_limits` refuse oversized arguments,
    /// the redactor scrubs every error text, the result budget bounds what the client's
    /// model reads (the full text stays in `structuredContent`'s details) and
    /// `trace_content` records arguments and results in the spans. A server has no batch
    /// and no hooks (they need an agent's assistant message and context); bound the calls
    /// running at once with [`with_max_concurrency`](Self::with_max_concurrency).
    #[must_use]
    pub fn with_policy(mut self, policy: CallPolicy) -> Self {
        let permits = self.policy.permits.clone();
        self.policy = Arc::new(McpPolicy { policy, permits });
        self
    }

    /// Bounds the calls running at once across all clients; others wait their turn.
    #[must_use]
    pub fn with_max_concurrency(mut self, limit: NonZeroUsize) -> Self {
        let policy = self.policy.policy.clone();
        self.policy = Arc::new(McpPolicy {
            policy,
            permits: Some(Arc::new(Semaphore::new(limit.get()))),
        });
        self
    }

    /// The name and version the server introduces itself with in `initialize`.
    #[must_use]
    pub fn with_server_info(mut self, name: impl Into<String>, version: impl Into<String>) -> Self {
        self.server_info = Implementation::new(name, version);
        self
    }

    /// Instructions for the client's model, sent in `initialize`.
    #[must_use]
    pub fn with_instructions(mut self, instructions: impl Into<String>) -> Self {
        self.instructions = Some(instructions.into());
        self
    }

    /// Calls `hook` after every finished call (for logs and metrics; not after a call
    /// whose tool never returns).
    #[must_use]
    pub fn on_call_end(mut self, hook: impl Fn(&CallEnd) + Send + Sync + 'static) -> Self {
        self.on_call_end = Some(Arc::new(hook));
        self
    }

    /// The largest message [`serve_stdio`](Self::serve_stdio) and
    /// [`serve_io`](Self::serve_io) read, in bytes (one line without its newline);
    /// [`DEFAULT_MAX_MESSAGE_BYTES`] (16 MiB) unless set. A longer line is not buffered:
    /// it is answered -32700 with its id when its first 64 KiB show one.
    #[must_use]
    pub fn with_max_message_bytes(mut self, bytes: usize) -> Self {
        self.max_message_bytes = bytes;
        self
    }

    /// How many requests of a [`serve_stdio`](Self::serve_stdio) /
    /// [`serve_io`](Self::serve_io) client may wait for their answers at once
    /// ([`DEFAULT_MAX_PENDING_REQUESTS`], 256, unless set; at least 1). While that many
    /// are pending, the client's further lines are not read: a client that stops reading
    /// its answers gets back-pressure (its writes stall) instead of a server that
    /// buffers every answer.
    #[must_use]
    pub fn with_max_pending_requests(mut self, requests: usize) -> Self {
        self.max_pending_requests = requests;
        self
    }

    /// Serves [`serve_http`](Self::serve_http) without sessions (rmcp's stateless
    /// streamable HTTP), for replicas behind a load balancer: every POST is answered on
    /// its own by whichever replica receives it, with no `Mcp-Session-Id` and no
    /// session state to share, so round-robin routing works.
    ///
    /// Each `tools/call` POST gets its response (and its progress notifications, when
    /// it carries a `progressToken`) as server-sent events on that POST's own response.
    ///
    /// **Cancellation** is closing that response: the replica running the call sees its
    /// client go away and aborts the call's [`AbortSignal`]. A `notifications/cancelled`
    /// is a POST of its own, which the balancer may route to any replica, none of which
    /// can tell which call it means: every replica accepts it (HTTP 202) and ignores it,
    /// so the call it names runs to the end and its client still gets the result.
    /// GET (a standalone event stream) and DELETE (ending a session) are answered 405.
    #[must_use]
    pub fn with_stateless_http(mut self, stateless: bool) -> Self {
        self.stateless_http = stateless;
        self
    }

    /// Hosts [`serve_http`](Self::serve_http) serves besides the loopback names
    /// (`localhost`, `127.0.0.1`, `::1`, any port): each `host` (any port) or
    /// `host:port`, as clients write it in the `Host` header. A request naming any other
    /// host is answered 403 (DNS-rebinding protection). Needed when the server is reached
    /// under a public name.
    #[must_use]
    pub fn with_allowed_hosts(
        mut self,
        hosts: impl IntoIterator<Item = impl Into<String>>,
    ) -> Self {
        self.allowed_hosts.extend(hosts.into_iter().map(Into::into));
        self
    }

    /// Browser origins [`serve_http`](Self::serve_http) serves: each
    /// `scheme://host` (the scheme's default port), `scheme://host:port`,
    /// `scheme://host:*` (any port) or `null`. A request whose `Origin` is not allowed
    /// is answered 403, as MCP requires; a request without `Origin` (not from a browser)
    /// is served. A server bound to a loopback address allows `http` and `https` origins
    /// on the loopback hosts, any port, without being told; one bound to another
    /// address allows only these.
    #[must_use]
    pub fn with_allowed_origins(
        mut self,
        origins: impl IntoIterator<Item = impl Into<String>>,
    ) -> Self {
        self.allowed_origins
            .extend(origins.into_iter().map(Into::into));
        self
    }

    /// Serves `resources` beside the tools (`resources/list`, `resources/templates/list`,
    /// `resources/read`), and declares the `resources` capability.
    #[must_use]
    pub fn with_resources(mut self, resources: ResourcePack) -> Self {
        self.resources = resources;
        self
    }

    /// Serves `prompts` beside the tools (`prompts/list`, `prompts/get`), and declares
    /// the `prompts` capability.
    #[must_use]
    pub fn with_prompts(mut self, prompts: PromptPack) -> Self {
        self.prompts = prompts;
        self
    }

    /// Answers `completion/complete` with `completions`, and declares the
    /// `completions` capability.
    #[must_use]
    pub fn with_completions(mut self, completions: Completions) -> Self {
        self.completions = Some(completions);
        self
    }

    /// The caching hints (MCP 2026-07-28) on every list result and resource read: how
    /// long a client may keep it, and who may share it. Unless set, `ttlMs` is 0 (ask
    /// again each time) and `cacheScope` is `public` (the lists are the same for every
    /// user).
    #[must_use]
    pub fn with_cache_hints(mut self, ttl: std::time::Duration, scope: CacheScope) -> Self {
        self.cache_hints = (u64::try_from(ttl.as_millis()).unwrap_or(u64::MAX), scope);
        self
    }

    /// Lists each tool's parameter schema as declared
    /// ([`ToolSchema::declared`](pi_tool_core::schema::ToolSchema::declared): the params
    /// type's generated schema, with `$schema`, `$defs`/`$ref`, `$anchor`,
    /// `allOf`/`anyOf`, `if`/`then`/`else` and `title` as written, which MCP allows for
    /// JSON Schema 2020-12) instead of pi-tool's normalised, provider-portable form.
    /// `x-mcp-header` declarations are still checked as they are by default (see
    /// [`Self::schema_report`]), and tools added later through [`ServedTools`] are listed
    /// the same way. Calls are validated against the normalised schema either way, and
    /// no `$ref` is ever dereferenced over the network.
    ///
    /// Opt-in because hosts often pass an MCP `inputSchema` straight to a model
    /// provider, and several providers refuse `$ref`/`$defs`, root-level `allOf` or
    /// `if`/`then`/`else`; by default a tool is listed in the `mcp` profile, which every
    /// provider accepts. Use it for clients that read the schema themselves.
    #[must_use]
    pub fn list_declared_schemas(self) -> Self {
        self.served.list_declared(true);
        self
    }

    /// The tools as `tools/list` gives them now, in order (the pack's, then those
    /// [`ServedTools::add`] added).
    pub fn listed_tools(&self) -> Vec<Tool> {
        self.served
            .entries()
            .iter()
            .map(|entry| entry.listed.clone())
            .collect()
    }

    /// A handle that changes the served tools while the server serves: see
    /// [`ServedTools`]. Once it has been taken the server declares `tools.listChanged`,
    /// so take it before serving; each change is then told to every client.
    pub fn served_tools(&self) -> ServedTools {
        self.served.take();
        ServedTools(self.served.clone())
    }

    /// What the `mcp` schema profile reported while listing the tools, one line each
    /// (`tool "x": error: …` means hosts that check schemas will reject that tool;
    /// warnings name what the listed schema approximates). Empty for portable tools.
    pub fn schema_report(&self) -> Vec<String> {
        self.served
            .entries()
            .iter()
            .flat_map(|entry| entry.report.iter().cloned())
            .collect()
    }

    /// Serves on standard input and output until the client closes the connection.
    /// Standard output carries only protocol messages; write logs to standard error.
    ///
    /// Every request gets exactly one answer, malformed ones included: see
    /// [`serve_io`](Self::serve_io).
    pub async fn serve_stdio(self) -> Result<(), ServeError> {
        self.serve_io(tokio::io::stdin(), tokio::io::stdout()).await
    }

    /// Serves newline-delimited JSON-RPC (MCP's stdio framing) read from `read` and
    /// written to `write`, until `read` ends.
    ///
    /// A framing layer in front of rmcp answers what rmcp would drop or misanswer: a
    /// line that does not parse (a number out of range such as `1e400`, a lone surrogate
    /// escape, nesting deeper than 128, invalid UTF-8) or is longer than
    /// [`with_max_message_bytes`](Self::with_max_message_bytes) gets -32700 Parse error,
    /// with the request's id when the line's top level shows it and `null` otherwise;
    /// a request whose params are not an object, and a `tools/call` whose `name` is not
    /// a string or whose `arguments` or `_meta` are not objects, gets -32602 Invalid
    /// params naming the field, with its id. Every other line reaches rmcp unchanged.
    pub async fn serve_io<R, W>(self, read: R, write: W) -> Result<(), ServeError>
    where
        R: tokio::io::AsyncRead + Unpin + Send + 'static,
        W: tokio::io::AsyncWrite + Unpin + Send + 'static,
    {
        let limit = self.max_message_bytes;
        let pending = self.max_pending_requests;
        serve_framed(self, read, write, limit, pending).await
    }

    /// Serves MCP's streamable HTTP transport on `listener` until the listener fails.
    /// Clients POST to any path (for example `http://127.0.0.1:8080/mcp`); each client
    /// session gets its own handler state, all sharing the same tools.
    ///
    /// DNS-rebinding protection, before anything reads a request: its `Host` must be
    /// `localhost`, `127.0.0.1` or `::1` (any port) or one of
    /// [`with_allowed_hosts`](Self::with_allowed_hosts), and its `Origin`, when it has
    /// one, a loopback origin (when `listener` is bound to a loopback address) or one of
    /// [`with_allowed_origins`](Self::with_allowed_origins); otherwise the answer is 403.
    /// An allowed host or origin that cannot be read fails with [`ServeError::Config`].
    ///
    /// Revision rules: a POST of MCP 2025-03-26 (no `MCP-Protocol-Version` header, or
    /// that one) may carry a batch, answered with one JSON array; at 2026-07-28 the
    /// methods that revision removed (`initialize`, `ping`, `logging/setLevel`,
    /// `resources/subscribe`, `resources/unsubscribe`) are answered HTTP 404 with
    /// -32601. Server-sent event ids are unique within a session.
    ///
    /// A client that closes a call's response (the POST's event stream) before the
    /// result aborts that call, as `notifications/cancelled` does: no event store is
    /// kept, so the stream cannot be resumed and the result could not be delivered.
    /// [`with_stateless_http`](Self::with_stateless_http) serves without sessions, for
    /// replicas behind a load balancer.
    ///
    /// Malformed messages get the answers [`serve_io`](Self::serve_io) gives, as JSON
    /// (HTTP 200 when the answer carries the request's id, 400 when it is `null`); a
    /// body over [`with_max_message_bytes`](Self::with_max_message_bytes) is not kept.
    pub async fn serve_http(self, listener: tokio::net::TcpListener) -> Result<(), ServeError> {
        use hyper::body::Incoming;
        use rmcp::transport::streamable_http_server::{
            StreamableHttpServerConfig, StreamableHttpService, session::local::LocalSessionManager,
        };
        let limit = self.max_message_bytes;
        let stateless = self.stateless_http;
        let loopback = listener
            .local_addr()
            .map_err(|error| ServeError::Accept(error.to_string()))?
            .ip()
            .is_loopback();
        let access = HttpAccess::new(loopback, &self.allowed_hosts, &self.allowed_origins)
            .map_err(|BadEntry(error)| ServeError::Config(error))?;
        let service = StreamableHttpService::new(
            // Each client session: the same tools, its own subscriptions and log level.
            move || {
                let mut session = self.clone();
                session.subscriptions = Subscriptions::default();
                session.log_level = Arc::default();
                Ok(session)
            },
            Arc::new(LocalSessionManager::default()),
            // The framing layer bounds the bodies it reads by the same limit.
            StreamableHttpServerConfig::default()
                .with_max_request_body_bytes(limit)
                .with_legacy_session_mode(!stateless)
                // `http_access.rs` checks Host and Origin before rmcp sees a request.
                .disable_allowed_hosts()
                .disable_allowed_origins()
                // rmcp's priming events all carry the id `0`, on every stream of a
                // session, while its other events count from 0 too: without them event
                // ids are unique per session. They invite a client to resume a stream,
                // which this server does not keep (a closed call stream ends its call).
                .with_sse_retry(None),
        );
        let http = Arc::new(HttpLayer {
            service,
            limit,
            access,
        });
        loop {
            let (stream, _) = listener
                .accept()
                .await
                .map_err(|error| ServeError::Accept(error.to_string()))?;
            let http = http.clone();
            let connection =
                hyper::service::service_fn(move |request: hyper::Request<Incoming>| {
                    let http = http.clone();
                    async move {
                        Ok::<_, std::convert::Infallible>(
                            http.serve(request.map(RequestBody::Streamed)).await,
                        )
                    }
                });
            tokio::spawn(async move {
                // A client that drops its connection ends only that connection.
                let _ = hyper::server::conn::http1::Builder::new()
                    .serve_connection(hyper_util::rt::TokioIo::new(stream), connection)
                    .await;
            });
        }
    }

    fn find(&self, name: &str) -> Option<Arc<dyn AgentTool>> {
        self.served.find(name)
    }

    /// Runs one `tools/call`; see [`run_call`] for the pipeline.
    async fn call(
        &self,
        request: CallToolRequestParams,
        context: RequestContext<RoleServer>,
    ) -> Result<CallToolResponse, McpError> {
        let call_id = format!("mcp-{}", context.id);
        let policy = &self.policy.policy;
        let Some(tool) = self.find(&request.name) else {
            // MCP lists an unknown tool among the protocol errors (-32602), at every
            // revision; the message is Pi's text for it, which names the tool.
            let error = ToolError::new(format!("Tool {} not found", request.name));
            trace_unknown_tool(&request.name, &call_id, &error, policy);
            return Err(McpError::invalid_params(
                error.message().to_owned(),
                Some(serde_json::json!({ "tool": request.name })),
            ));
        };
        if let Some(support) = effective_support(tool.as_ref(), &self.task_support) {
            let client_tasks = context
                .client_capabilities()
                .is_some_and(|capabilities| capabilities.supports_tasks());
            if client_tasks {
                return self.call_as_task(tool.clone(), request, context).await;
            }
            if support == TaskSupport::Required {
                return Err(McpError::missing_required_client_capability(
                    ClientCapabilities::builder().enable_tasks().build(),
                ));
            }
        }
        let arguments = Value::Object(request.arguments.unwrap_or_default());
        // rmcp cancels this token when the client sends `notifications/cancelled` for
        // this request: it is the call's abort signal. Over streamable HTTP, a client
        // that closes the call's response cancels it too (disconnect.rs).
        let token = context.ct.child_token();
        let signal = AbortSignal::from_token(token.clone());
        let input = self.call_input(
            &context,
            signal.clone(),
            ("tool", &request.name, &arguments),
            request.input_responses,
            request.request_state.as_deref(),
        )?;
        let gone = client_gone(&context);
        let progress =
            ProgressForwarder::new(context.peer.clone(), context.meta.get_progress_token());
        // A closed semaphore cannot happen (it is never closed); run unbounded if it did.
        let _permit = match &self.policy.permits {
            Some(permits) => permits.acquire().await.ok(),
            None => None,
        };
        let run = input.scope(run_call_with_policy(
            &tool,
            &call_id,
            arguments.clone(),
            policy,
            signal,
            progress.on_update(),
        ));
        let mut run = std::pin::pin!(run);
        let gone = async {
            match gone {
                Some(gone) => gone.aborted().await,
                None => std::future::pending().await,
            }
        };
        let (result, end) = tokio::select! {
            ended = &mut run => ended,
            () = gone => {
                token.cancel();
                run.await
            }
            () = input.suspended() => {
                // The round ends here: the tool asked what this request has no answer
                // for. Its future is dropped; the retried request runs it again.
                token.cancel();
                progress.finish().await;
                return self.suspended(&input);
            }
        };
        progress.finish().await;
        if let Some(hook) = &self.on_call_end {
            // A failing log hook must not cost the client its result.
            let _ = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| hook(&end)));
        }
        Ok(call_tool_result(result, tool.spec().output_schema.as_deref()).into())
    }
}

impl PackServer {
    /// Runs a call of a task-capable tool for a client that declared tasks: a plain
    /// result when the tool ends at once, an MRTR round when it asks before it first
    /// waits, otherwise a task (see `tasks.rs`).
    async fn call_as_task(
        &self,
        tool: Arc<dyn AgentTool>,
        request: CallToolRequestParams,
        context: RequestContext<RoleServer>,
    ) -> Result<CallToolResponse, McpError> {
        let call_id = format!("mcp-{}", context.id);
        let arguments = Value::Object(request.arguments.unwrap_or_default());
        // Not the request's token: the task outlives the request.
        let abort = AbortController::new();
        let input = self.call_input(
            &context,
            abort.signal(),
            ("tool", &request.name, &arguments),
            request.input_responses,
            request.request_state.as_deref(),
        )?;
        let task: Arc<OnceLock<Arc<Running>>> = Arc::default();
        let progress_task = task.clone();
        let on_update = OnUpdate::new(move |update: JsonToolResult| {
            let text = update.text_content();
            if let Some(running) = progress_task.get()
                && !text.is_empty()
            {
                Tasks::progress(running, text);
            }
        });
        let output = tool.spec().output_schema.clone();
        let policy = self.policy.clone();
        let signal = abort.signal();
        let mut run = Box::pin(input.scoped(async move {
            run_call_with_policy(
                &tool,
                &call_id,
                arguments,
                &policy.policy,
                signal,
                on_update,
            )
            .await
        }));
        // One step of the tool decides: done, asking (MRTR), or waiting (a task).
        tokio::select! {
            biased;
            (result, end) = &mut run => {
                self.call_ended(&end);
                return Ok(call_tool_result(result, output.as_deref()).into());
            }
            () = input.suspended() => {
                abort.abort();
                return self.suspended(&input);
            }
            () = std::future::ready(()) => {}
        }
        let (running, created) = self.tasks.create(abort).await?;
        let _ = task.set(running.clone());
        input.escalate(self.tasks.clone(), running.clone());
        let tasks = self.tasks.clone();
        let hook = self.on_call_end.clone();
        tokio::spawn(async move {
            // A task no client finishes (questions never answered) ends with its time
            // to live, aborted, so that it does not stay in memory.
            let (result, end) = match tokio::time::timeout(Tasks::TTL, &mut run).await {
                Ok(ended) => ended,
                Err(_) => {
                    running.abort();
                    run.await
                }
            };
            if let Some(hook) = &hook {
                let _ = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| hook(&end)));
            }
            let outcome = match result {
                // A panic is the server's failure, not the tool's answer.
                Err(error) if error.kind() == ToolErrorKind::Panicked => Err(json_object(
                    serde_json::json!({"code": -32603, "message": error.message()}),
                )),
                result => Ok(json_object(
                    serde_json::to_value(call_tool_result(result, output.as_deref()))
                        .unwrap_or_default(),
                )),
            };
            tasks.finish(&running, outcome).await;
        });
        Ok(CallToolResponse::Task(CreateTaskResult::new(created)))
    }

    fn call_ended(&self, end: &CallEnd) {
        if let Some(hook) = &self.on_call_end {
            // A failing log hook must not cost the client its result.
            let _ = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| hook(end)));
        }
    }

    /// The client of one request, with the answers a 2026-07-28 retry carries; a
    /// `requestState` that fails its check is -32602.
    fn call_input(
        &self,
        context: &RequestContext<RoleServer>,
        signal: AbortSignal,
        binding: (&str, &str, &Value),
        responses: Option<InputResponses>,
        state: Option<&str>,
    ) -> Result<CallInput, McpError> {
        let stateless = context
            .protocol_version()
            .is_some_and(|version| version.to_string().as_str() >= "2026-07-28");
        let log_level = if stateless {
            context.meta.log_level()
        } else {
            *self
                .log_level
                .lock()
                .unwrap_or_else(PoisonError::into_inner)
        };
        CallInput::new(
            stateless,
            context.peer.clone(),
            context.client_capabilities().unwrap_or_default(),
            log_level,
            signal,
            &self.request_state,
            binding,
            responses,
            state,
        )
        .map_err(|BadState(error)| McpError::invalid_params(error, None))
    }

    /// The answer to a 2026-07-28 round that ended on a question.
    fn suspended<T: From<InputRequiredResult>>(&self, input: &CallInput) -> Result<T, McpError> {
        match input.take_suspended(&self.request_state) {
            Some((Suspended::Input(requests), state)) => {
                Ok(InputRequiredResult::new(Some(requests), Some(state)).into())
            }
            Some((Suspended::MissingCapability(required), _)) => {
                Err(McpError::missing_required_client_capability(required))
            }
            Some((Suspended::BadAnswer(error), _)) => Err(McpError::invalid_params(error, None)),
            None => Err(McpError::internal_error(
                "the request state could not be sealed",
                None,
            )),
        }
    }
}

/// The object of a JSON value (an empty one for any other value).
fn json_object(value: Value) -> JsonObject {
    match value {
        Value::Object(object) => object,
        _ => JsonObject::new(),
    }
}

/// A random key for a server's request states: 32 bytes from the system's generator,
/// or (if it fails) from the standard library's randomly seeded hasher.
fn random_key() -> Vec<u8> {
    let mut key = vec![0u8; 32];
    if getrandom::fill(&mut key).is_err() {
        use std::hash::{BuildHasher, RandomState};
        for (i, chunk) in key.chunks_mut(8).enumerate() {
            let word = RandomState::new().hash_one((i, std::time::SystemTime::now()));
            chunk.copy_from_slice(&word.to_le_bytes());
        }
    }
    key
}

impl ServerHandler for PackServer {
    fn get_info(&self) -> ServerConfig {
        let mut capabilities = ServerCapabilities::default();
        let mut tools = ToolsCapability::default();
        if self.served.may_change() {
            tools.list_changed = Some(true);
        }
        capabilities.tools = Some(tools);
        if !self.resources.is_empty() {
            let mut resources = ResourcesCapability::default();
            resources.subscribe = Some(true);
            capabilities.resources = Some(resources);
        }
        capabilities.logging = Some(Default::default());
        if !self.prompts.is_empty() {
            capabilities.prompts = Some(PromptsCapability::default());
        }
        if self.completions.is_some() {
            capabilities.completions = Some(Default::default());
        }
        let entries = self.served.entries();
        let tasks = entries
            .iter()
            .any(|entry| effective_support(entry.tool.as_ref(), &self.task_support).is_some());
        if tasks {
            capabilities
                .extensions
                .get_or_insert_with(Default::default)
                .insert(TASKS_EXTENSION_ID.to_owned(), JsonObject::new());
        }
        let config = ServerConfig::new(capabilities).with_server_info(self.server_info.clone());
        match &self.instructions {
            Some(instructions) => config.with_instructions(instructions.clone()),
            None => config,
        }
    }

    /// A session of a revision before 2026-07-28 hears of every change of the served
    /// tools (`notifications/tools/list_changed`) once the [`ServedTools`] handle was
    /// taken, until it ends.
    async fn on_initialized(&self, context: NotificationContext<RoleServer>) {
        if self.served.may_change() {
            tokio::spawn(forward_list_changes(self.served.changes(), context.peer));
        }
    }

    async fn list_tools(
        &self,
        _request: Option<PaginatedRequestParams>,
        _context: RequestContext<RoleServer>,
    ) -> Result<ListToolsResult, McpError> {
        let (ttl, scope) = self.cache_hints;
        Ok(ListToolsResult::with_all_items(self.listed_tools())
            .with_ttl_ms(ttl)
            .with_cache_scope(scope))
    }

    async fn list_resources(
        &self,
        _request: Option<PaginatedRequestParams>,
        _context: RequestContext<RoleServer>,
    ) -> Result<ListResourcesResult, McpError> {
        let (ttl, scope) = self.cache_hints;
        Ok(
            ListResourcesResult::with_all_items(self.resources.resources())
                .with_ttl_ms(ttl)
                .with_cache_scope(scope),
        )
    }

    async fn list_resource_templates(
        &self,
        _request: Option<PaginatedRequestParams>,
        _context: RequestContext<RoleServer>,
    ) -> Result<ListResourceTemplatesResult, McpError> {
        let (ttl, scope) = self.cache_hints;
        Ok(
            ListResourceTemplatesResult::with_all_items(self.resources.templates())
                .with_ttl_ms(ttl)
                .with_cache_scope(scope),
        )
    }

    async fn read_resource(
        &self,
        request: ReadResourceRequestParams,
        _context: RequestContext<RoleServer>,
    ) -> Result<ReadResourceResponse, McpError> {
        read_resource(&self.resources, &request.uri, self.cache_hints).await
    }

    /// At 2026-07-28 a client listens for the updates of the resources the pack has
    /// (`subscriptions/listen`), as `resources/subscribe` before.
    fn accepted_subscription_filter(
        &self,
        requested: &SubscriptionFilter,
    ) -> Option<SubscriptionFilter> {
        let mut accepted = SubscriptionFilter::new();
        if requested.tools_list_changed == Some(true) && self.served.may_change() {
            accepted.tools_list_changed = Some(true);
        }
        accepted.resource_subscriptions = requested.resource_subscriptions.as_ref().map(|uris| {
            uris.iter()
                .filter(|uri| self.resources.has(uri))
                .cloned()
                .collect()
        });
        Some(accepted)
    }

    async fn listen(&self, context: SubscriptionContext) -> Result<(), McpError> {
        use tokio::sync::broadcast::error::RecvError;
        let mut updates = self.resources.updates();
        let mut tool_changes = self.served.changes();
        loop {
            tokio::select! {
                () = context.cancelled() => return Ok(()),
                change = tool_changes.recv(), if context.accepted().tools_list_changed == Some(true) => {
                    if let Ok(()) | Err(RecvError::Lagged(_)) = change {
                        // A closed stream ends with `cancelled`.
                        let _ = context.sink().notify_tool_list_changed().await;
                    }
                }
                update = updates.recv() => match update {
                    Ok(uri) => {
                        let update = ServerNotification::ResourceUpdatedNotification(
                            ResourceUpdatedNotification::new(ResourceUpdatedNotificationParam::new(uri)),
                        );
                        // A URI the listener did not ask for is not sent (the sink
                        // refuses it); a closed stream ends with `cancelled`.
                        let _ = context.sink().send(update).await;
                    }
                    Err(RecvError::Lagged(_)) => {}
                    Err(RecvError::Closed) => {
                        context.cancelled().await;
                        return Ok(());
                    }
                },
            }
        }
    }

    #[allow(deprecated)] // 2026-07-28 removed it; this serves the revisions before.
    async fn subscribe(
        &self,
        request: SubscribeRequestParams,
        context: RequestContext<RoleServer>,
    ) -> Result<(), McpError> {
        if !self.resources.has(&request.uri) {
            return Err(McpError::invalid_params(
                format!("Resource not found: {}", request.uri),
                Some(serde_json::json!({ "uri": request.uri })),
            ));
        }
        self.subscriptions
            .subscribe(request.uri, &self.resources, context.peer);
        Ok(())
    }

    #[allow(deprecated)] // 2026-07-28 removed it; this serves the revisions before.
    async fn unsubscribe(
        &self,
        request: UnsubscribeRequestParams,
        _context: RequestContext<RoleServer>,
    ) -> Result<(), McpError> {
        self.subscriptions.unsubscribe(&request.uri);
        Ok(())
    }

    #[allow(deprecated)] // 2026-07-28 removed it; this serves the revisions before.
    async fn set_level(
        &self,
        request: SetLevelRequestParams,
        _context: RequestContext<RoleServer>,
    ) -> Result<(), McpError> {
        *self
            .log_level
            .lock()
            .unwrap_or_else(PoisonError::into_inner) = Some(request.level);
        Ok(())
    }

    async fn list_prompts(
        &self,
        _request: Option<PaginatedRequestParams>,
        _context: RequestContext<RoleServer>,
    ) -> Result<ListPromptsResult, McpError> {
        let (ttl, scope) = self.cache_hints;
        Ok(ListPromptsResult::with_all_items(self.prompts.prompts())
            .with_ttl_ms(ttl)
            .with_cache_scope(scope))
    }

    async fn get_prompt(
        &self,
        mut request: GetPromptRequestParams,
        context: RequestContext<RoleServer>,
    ) -> Result<GetPromptResponse, McpError> {
        // A prompt's function asks its client as a tool does (CallingClient).
        let arguments = Value::Object(request.arguments.clone().unwrap_or_default());
        let name = request.name.clone();
        let input = self.call_input(
            &context,
            AbortSignal::from_token(context.ct.child_token()),
            ("prompt", &name, &arguments),
            request.input_responses.take(),
            request.request_state.take().as_deref(),
        )?;
        let get = input.scope(get_prompt(&self.prompts, request));
        tokio::select! {
            answer = get => answer,
            () = input.suspended() => self.suspended(&input),
        }
    }

    async fn complete(
        &self,
        request: CompleteRequestParams,
        _context: RequestContext<RoleServer>,
    ) -> Result<CompleteResult, McpError> {
        complete(self.completions.as_ref(), &request)
    }

    async fn get_task(
        &self,
        request: GetTaskParams,
        _context: RequestContext<RoleServer>,
    ) -> Result<GetTaskResult, McpError> {
        Ok(GetTaskResult::new(self.tasks.get(&request.task_id).await?))
    }

    async fn update_task(
        &self,
        request: UpdateTaskParams,
        _context: RequestContext<RoleServer>,
    ) -> Result<(), McpError> {
        self.tasks
            .update(&request.task_id, request.input_responses)
            .await
    }

    async fn cancel_task(
        &self,
        request: CancelTaskParams,
        _context: RequestContext<RoleServer>,
    ) -> Result<(), McpError> {
        self.tasks.cancel(&request.task_id).await
    }

    fn get_tool(&self, name: &str) -> Option<Tool> {
        self.served
            .entries()
            .iter()
            .find(|entry| entry.listed.name == name)
            .map(|entry| entry.listed.clone())
    }

    async fn call_tool(
        &self,
        request: CallToolRequestParams,
        context: RequestContext<RoleServer>,
    ) -> Result<CallToolResponse, McpError> {
        self.call(request, context).await
    }
}

/// Why serving stopped with an error.
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub enum ServeError {
    /// The MCP handshake failed (rmcp's error, as text).
    Initialize(String),
    /// The service task ended with an error (rmcp's error, as text).
    Service(String),
    /// The HTTP listener could not accept a connection.
    Accept(String),
    /// The server's settings are not valid (an allowed host or origin that is not one).
    Config(String),
}

impl fmt::Display for ServeError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            ServeError::Initialize(error) => write!(f, "MCP initialisation failed: {error}"),
            ServeError::Service(error) => write!(f, "MCP service task failed: {error}"),
            ServeError::Accept(error) => write!(f, "cannot accept a connection: {error}"),
            ServeError::Config(error) => write!(f, "invalid server settings: {error}"),
        }
    }
}

impl std::error::Error for ServeError {}
