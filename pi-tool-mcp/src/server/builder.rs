//! How a [`PackServer`] is made and set up: its constructors and its `with_*` settings,
//! each a value the other parts of the server read.

use std::num::NonZeroUsize;
use std::sync::Arc;

use pi_tool_core::concurrency::{ConcurrencyLimits, Scheduler};
use pi_tool_core::context::ExtensionContext;
use pi_tool_core::pack::ToolPack;
use pi_tool_core::{CallPolicy, TaskSupport, wrap_tool_definition};
use rmcp::model::{CacheScope, Implementation, RequestStateCodec, Tool};

use super::call::CallEnd;
use super::input::mcp_context;
use super::nested::NestedLimits;
use super::prompts::{Completions, PromptPack};
use super::resources::ResourcePack;
use super::serve::http::limits::HttpLimits;
use super::serve::io::{DEFAULT_MAX_MESSAGE_BYTES, DEFAULT_MAX_PENDING_REQUESTS};
use super::served::{Served, ServedTools, Wrap};
use super::subscriptions::Subscriptions;
use super::tasks::{MemoryTaskStore, TaskStore, Tasks};
use super::{McpPolicy, PackServer};
use crate::error::ServeError;

impl PackServer {
    /// A server for `pack`; each call's tool gets a context in print mode with the
    /// server's working directory, as there is no Pi session on this side, and with the
    /// calling client as its UI when the client declared `elicitation`
    /// (`has_ui() == true`; the UI's questions become elicitations, see
    /// [`CallingClient`](crate::CallingClient)); without it, no UI.
    pub fn new(pack: ToolPack) -> Self {
        Self::new_with_context(pack, mcp_context)
    }

    /// A server for `pack` whose five-argument tools get the context `ctx_factory` builds,
    /// once per call. [`CallingClient::current`](crate::CallingClient::current) works in
    /// the factory as in the tool.
    #[doc(alias = "with_context")]
    pub fn new_with_context<F>(pack: ToolPack, ctx_factory: F) -> Self
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
                concurrency: ConcurrencyLimits::new(),
                scheduler: None,
                nested: NestedLimits {
                    max_depth: pi_tool_core::DEFAULT_MAX_DEPTH,
                    max_calls: None,
                },
                max_session_calls: None,
            }),
            max_message_bytes: DEFAULT_MAX_MESSAGE_BYTES,
            max_pending_requests: DEFAULT_MAX_PENDING_REQUESTS,
            stateless_http: false,
            allowed_hosts: Vec::new(),
            allowed_origins: Vec::new(),
            http_limits: HttpLimits::default(),
            resources: ResourcePack::new(),
            prompts: PromptPack::new(),
            completions: None,
            cache_hints: (0, CacheScope::Public),
            request_state: Arc::new(RequestStateCodec::new_unchecked(random_key())),
            subscriptions: Subscriptions::default(),
            log_level: Arc::default(),
            task_support: Arc::default(),
            tasks: Arc::new(Tasks::new(Arc::new(MemoryTaskStore::default()))),
            session_calls: Arc::default(),
        }
    }

    /// Lets the tool `name` run as a task (SEP-2663, see [`TaskSupport`]) for
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
    /// running at once with [`with_concurrency`](Self::with_concurrency).
    #[must_use]
    pub fn with_policy(mut self, policy: CallPolicy) -> Self {
        Arc::make_mut(&mut self.policy).policy = policy;
        self
    }

    /// How deep the nested calls of a served tool (`ctx.call_tool`) may go (default 8;
    /// the served call is depth 0).
    #[must_use]
    pub fn with_max_call_depth(mut self, depth: usize) -> Self {
        Arc::make_mut(&mut self.policy).nested.max_depth = depth;
        self
    }

    /// At most `limit` nested calls per served call, counted over its whole tree; a call
    /// past it is refused with the limit in its text. Unlimited by default.
    #[must_use]
    pub fn with_max_nested_calls(mut self, limit: u32) -> Self {
        Arc::make_mut(&mut self.policy).nested.max_calls = Some(limit);
        self
    }

    /// At most `limit` tool calls per client session, direct and nested (a served
    /// tool's `ctx.call_tool`): each connection of [`serve_io`](Self::serve_io) /
    /// [`serve_stdio`](Self::serve_stdio) and each session of
    /// [`serve_http`](Self::serve_http) counts from zero. A call past it is not run: it
    /// is an error result (or, nested, the error the outer tool gets) with the limit in
    /// its text, and `call_limit` in its span. Unlimited by default. Without sessions
    /// ([`with_stateless_http`](Self::with_stateless_http)) each request is a session of
    /// its own, so only the call tree is bounded, by
    /// [`with_max_nested_calls`](Self::with_max_nested_calls).
    #[must_use]
    pub fn with_session_call_limit(mut self, limit: u32) -> Self {
        Arc::make_mut(&mut self.policy).max_session_calls = Some(limit);
        self
    }

    /// Weighted concurrency classes across all clients, as the agent's
    /// `RunPolicy::concurrency`: at most so much weight of calls of a class
    /// (`#[pi_tool(concurrency = ("browser", 2))]`) runs at once, and in total. Calls of a
    /// class start in the order they arrived, none starves, a cancelled call frees its
    /// room at once, and a served tool's nested calls take room of their own class while
    /// the outer call lends its room back, so nested calls never deadlock, at any limit
    /// (the rules: [`pi_tool_core::concurrency`]). Replaces earlier classes; a total set
    /// by [`with_max_concurrency`](Self::with_max_concurrency) is kept unless `limits`
    /// has one.
    #[must_use]
    pub fn with_concurrency(mut self, limits: ConcurrencyLimits) -> Self {
        let policy = Arc::make_mut(&mut self.policy);
        let total = limits.total_limit().or(policy.concurrency.total_limit());
        policy.concurrency = match total {
            Some(total) => limits.total(total),
            None => limits,
        };
        policy.scheduler = Scheduler::new(&policy.concurrency);
        self
    }

    /// Bounds the calls running at once across all clients; others wait their turn, in
    /// the order they came. The total limit of
    /// [`with_concurrency`](Self::with_concurrency): a tool with a weight
    /// (`#[pi_tool(concurrency = ("x", 2))]`) takes that much of it.
    #[must_use]
    pub fn with_max_concurrency(mut self, limit: NonZeroUsize) -> Self {
        let policy = Arc::make_mut(&mut self.policy);
        let total = u32::try_from(limit.get()).unwrap_or(u32::MAX);
        policy.concurrency = policy.concurrency.clone().total(total);
        policy.scheduler = Scheduler::new(&policy.concurrency);
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
    /// client go away and aborts the call's [`AbortSignal`](pi_tool_core::AbortSignal). A `notifications/cancelled`
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

    /// The bounds of [`serve_http`](Self::serve_http): connections, the header-read
    /// deadline, sessions, their idle expiry and the shutdown grace; see [`HttpLimits`]
    /// for each default and what happens when it is reached. The request body's limit is
    /// [`with_max_message_bytes`](Self::with_max_message_bytes).
    #[must_use]
    pub fn with_http_limits(mut self, limits: HttpLimits) -> Self {
        self.http_limits = limits;
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

    /// The caching hints (MCP 2026-07-28) on every list result and resource read of a
    /// request at that revision (the revisions before have none): how
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

    /// Checks that every tool a served tool reaches (`#[pi_tool(reaches = [...])]`) is
    /// served too: [`ServeError::MissingReach`], naming both, for the first that is not.
    /// [`serve_io`](Self::serve_io), [`serve_stdio`](Self::serve_stdio) and
    /// [`serve_http`](Self::serve_http) check this before they serve; a host that serves
    /// the server through another rmcp transport calls it first. Without it, the nested
    /// call would fail at call time with `Tool x not found`.
    pub fn check_reaches(&self) -> Result<(), ServeError> {
        self.served.check_reaches()
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
