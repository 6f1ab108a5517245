//! Any MCP server's tools as pi-tool tools (the `client` feature): [`McpToolset`].
//!
//! ```no_run
//! # async fn run() -> Result<(), Box<dyn std::error::Error>> {
//! use pi_tool_mcp::client::{McpServer, McpToolset};
//!
//! let fs = McpToolset::connect(
//!     McpServer::stdio("fs", "npx", ["-y", "@modelcontextprotocol/server-filesystem", "/tmp"])
//!         .exclude(["write_file", "edit_file", "move_file"]),
//! )
//! .await?;
//! let tools = fs.tools(); // Vec<Arc<dyn AgentTool>>: give them to an Agent or a session
//! # Ok(()) }
//! ```
//!
//! Each tool of the server is an `Arc<dyn AgentTool>` on the same call path as our own
//! tools (`pi_tool_core::CallPolicy`): the server's `inputSchema` is compiled by our
//! schema pipeline, so arguments the model got wrong get Pi's validation text and are
//! never sent (the schema as the server wrote it stays the tool's
//! `ToolSchema::declared`; a network `$ref` in it is never fetched); the policy's timeout, result budget and redaction apply to the result.
//! During a call, the server's progress notifications reach `on_update`; the run's
//! abort (or the call's timeout) sends `notifications/cancelled`; `isError` is an error
//! result with the server's text; `structuredContent` is the details, checked against
//! the tool's `outputSchema`; images, audio and resources are content. See
//! `result.rs` for the details of each.
//!
//! **Trust.** MCP's tool annotations are hints from a server the host may not control.
//! A server is untrusted unless the host says otherwise ([`McpServer::trusted`]): its
//! tools count as destructive and open-world and not read-only (so an approval policy
//! asks before every call, and a read-only claim cannot lift a sequential mode),
//! whatever they claim. A trusted server's annotations are used as given, as
//! `#[pi_tool]`'s are, and so are the prompt snippet, guidelines and execution mode a
//! pi-tool server publishes in `_meta` (`pi-tool/…`).
//!
//! **Names.** Tools are named `mcp__<server>__<tool>` by default (the scheme of later Pi
//! versions and Claude Code), or with the prefix the host chooses
//! ([`McpServer::prefix`]); every name fits the 64-character limit and the characters
//! every provider accepts, and collisions are resolved deterministically (`names.rs`).
//! The call reaches the server under the tool's original name.
//! [`McpServer::include`] and [`McpServer::exclude`] filter by original name.
//!
//! **Changes.** A `notifications/tools/list_changed` (2025-11-25), or its 2026-07-28
//! successor on a `subscriptions/listen` stream that the toolset opens when the server
//! announces `tools.listChanged`, refreshes the toolset in the background (or
//! [`McpToolset::refresh`]); [`McpToolset::changes`] says when. Each
//! tool's description and schemas are pinned by a digest at first listing: a tool the
//! server later changes keeps its approved definition, every call of it is refused with
//! an error that says so, and [`McpToolset::accept_change`] is how the host takes the new
//! definition (protection against a "rug pull").
//!
//! **Input.** A server's elicitation requests are answered by the host's
//! [`InputHandler`], else by the UI of the session the running call came from, else
//! declined. Sampling requests (model calls) are declined unless the host gave a
//! [`SamplingHandler`] ([`McpServer::sampling_handler`]).
//!
//! **Revisions.** The client asks `server/discover` (2026-07-28, stateless, per-request
//! `_meta`) and falls back to `initialize` (2025-11-25) when the server answers as a
//! legacy server, by rmcp's `ClientLifecycleMode::Auto`; [`Revision`] forces one.
//!
//! **Transports.** [`McpServer::stdio`] starts a child process (a fixed program and
//! argument array, its own process group, an allow-listed environment; killed with its
//! group when the connection is dropped; see `stdio.rs`). [`McpServer::http`] reaches a
//! server over streamable HTTP (rmcp's client on reqwest with rustls), with a bearer
//! token ([`McpServer::bearer_token`]) or other headers ([`McpServer::header`]); the
//! token and header values never appear in `Debug` output or errors. With the `oauth`
//! feature, `McpServer::oauth` authorizes with OAuth 2.1 when the server asks for it
//! (see `OAuth`); without it, a server that answers 401 fails to connect with a
//! message that says so.

mod closed;
mod connection;
mod handler;
mod http_stream;
mod input;
mod listen;
mod names;
#[cfg(feature = "oauth")]
mod oauth;
mod result;
mod sampling;
mod stdio;
mod tool;
mod toolset;

use std::ffi::OsString;
use std::fmt;
use std::path::PathBuf;
use std::sync::Arc;
use std::time::Duration;

pub use input::{InputHandler, InputRequest, InputResponse};
#[cfg(feature = "oauth")]
#[cfg_attr(docsrs, doc(cfg(feature = "oauth")))]
pub use oauth::{Authorizer, HeadlessAuthorizer, OAuth};
pub use sampling::SamplingHandler;
pub use toolset::{McpToolset, PendingChange, ToolsetChanges};

use stdio::StdioCommand;

/// How long connecting (starting, the handshake and the first listing) may take by
/// default.
pub const DEFAULT_CONNECT_TIMEOUT: Duration = Duration::from_secs(30);

/// The timeout each MCP tool gets by default (the call policy's applies when the host
/// sets none here: [`McpServer::call_timeout`] with `None`).
pub const DEFAULT_CALL_TIMEOUT: Duration = Duration::from_secs(120);

/// How long a stdio server gets at each step of its shutdown (after stdin closes, after
/// `SIGTERM`) before the next.
pub const DEFAULT_SHUTDOWN_GRACE: Duration = Duration::from_secs(2);

/// Which protocol revision to speak.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
#[non_exhaustive]
pub enum Revision {
    /// 2026-07-28 when the server speaks it, else 2025-11-25: the server's answer to
    /// `server/discover` decides.
    #[default]
    Auto,
    /// 2026-07-28 only (`server/discover`, no `initialize`).
    Stateless,
    /// 2025-11-25 (`initialize`) only.
    Initialize,
}

/// Where the server is.
#[derive(Debug, Clone)]
enum Endpoint {
    Stdio(StdioCommand),
    Http(HttpEndpoint),
}

/// A streamable HTTP server. Header values and the token are secrets: never in `Debug`
/// or an error.
#[derive(Clone)]
struct HttpEndpoint {
    url: String,
    bearer: Option<String>,
    headers: Vec<(String, String)>,
    #[cfg(feature = "oauth")]
    oauth: Option<OAuth>,
}

impl fmt::Debug for HttpEndpoint {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let names: Vec<&str> = self.headers.iter().map(|(n, _)| n.as_str()).collect();
        f.debug_struct("HttpEndpoint")
            .field("url", &self.url)
            .field("bearer", &self.bearer.as_ref().map(|_| "<redacted>"))
            .field("headers", &names)
            .finish_non_exhaustive()
    }
}

/// One MCP server to take tools from, and how to treat it.
#[derive(Clone)]
pub struct McpServer {
    name: String,
    endpoint: Endpoint,
    trusted: bool,
    prefix: Option<String>,
    include: Option<Vec<String>>,
    exclude: Vec<String>,
    connect_timeout: Duration,
    call_timeout: Option<Duration>,
    max_message_bytes: usize,
    shutdown_grace: Duration,
    revision: Revision,
    input: Option<Arc<dyn InputHandler>>,
    sampling: Option<Arc<dyn SamplingHandler>>,
}

impl fmt::Debug for McpServer {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        // No environment values or headers: they may hold secrets.
        let endpoint = match &self.endpoint {
            Endpoint::Stdio(command) => command.display(),
            Endpoint::Http(http) => http.url.clone(),
        };
        f.debug_struct("McpServer")
            .field("name", &self.name)
            .field("endpoint", &endpoint)
            .field("trusted", &self.trusted)
            .field("prefix", &self.prefix)
            .field("include", &self.include)
            .field("exclude", &self.exclude)
            .field("revision", &self.revision)
            .field("sampling", &self.sampling.is_some())
            .finish_non_exhaustive()
    }
}

impl McpServer {
    fn new(name: impl Into<String>, endpoint: Endpoint) -> Self {
        McpServer {
            name: name.into(),
            endpoint,
            trusted: false,
            prefix: None,
            include: None,
            exclude: Vec::new(),
            connect_timeout: DEFAULT_CONNECT_TIMEOUT,
            call_timeout: Some(DEFAULT_CALL_TIMEOUT),
            max_message_bytes: crate::DEFAULT_MAX_MESSAGE_BYTES,
            shutdown_grace: DEFAULT_SHUTDOWN_GRACE,
            revision: Revision::Auto,
            input: None,
            sampling: None,
        }
    }

    /// A server started as a child process: `program` with exactly `args` (no shell),
    /// speaking MCP on its stdin and stdout. `name` identifies it in tool names and
    /// errors.
    pub fn stdio<I, A>(name: impl Into<String>, program: impl Into<OsString>, args: I) -> Self
    where
        I: IntoIterator<Item = A>,
        A: Into<OsString>,
    {
        McpServer::new(
            name,
            Endpoint::Stdio(StdioCommand {
                program: program.into(),
                args: args.into_iter().map(Into::into).collect(),
                env: Vec::new(),
                inherit: Vec::new(),
                inherit_all: false,
                current_dir: None,
                sandbox: None,
            }),
        )
    }

    /// A server reached over MCP's streamable HTTP transport at `url` (the MCP endpoint,
    /// e.g. `https://example.com/mcp`). `name` identifies it in tool names and errors.
    pub fn http(name: impl Into<String>, url: impl Into<String>) -> Self {
        McpServer::new(
            name,
            Endpoint::Http(HttpEndpoint {
                url: url.into(),
                bearer: None,
                headers: Vec::new(),
                #[cfg(feature = "oauth")]
                oauth: None,
            }),
        )
    }

    /// Sends `Authorization: Bearer <token>` with every HTTP request. Ignored for stdio.
    #[must_use]
    pub fn bearer_token(mut self, token: impl Into<String>) -> Self {
        if let Endpoint::Http(http) = &mut self.endpoint {
            http.bearer = Some(token.into());
        }
        self
    }

    /// Sends the header `name: value` with every HTTP request. Ignored for stdio; a name
    /// or value HTTP does not allow makes [`McpToolset::connect`] fail.
    #[must_use]
    pub fn header(mut self, name: impl Into<String>, value: impl Into<String>) -> Self {
        if let Endpoint::Http(http) = &mut self.endpoint {
            http.headers.push((name.into(), value.into()));
        }
        self
    }

    /// Authorizes with OAuth 2.1 when the server answers 401 (see [`OAuth`]); the
    /// tokens are kept for this toolset's connection. Ignored for stdio.
    #[cfg(feature = "oauth")]
    #[cfg_attr(docsrs, doc(cfg(feature = "oauth")))]
    #[must_use]
    pub fn oauth(mut self, oauth: OAuth) -> Self {
        if let Endpoint::Http(http) = &mut self.endpoint {
            http.oauth = Some(oauth);
        }
        self
    }

    /// The server's name, as given.
    pub fn name(&self) -> &str {
        &self.name
    }

    /// Sets an environment variable of a stdio server (the child otherwise gets only
    /// [`DEFAULT_ENV_ALLOWLIST`](pi_tool_core::safety::DEFAULT_ENV_ALLOWLIST) from ours).
    #[must_use]
    pub fn env(mut self, key: impl Into<OsString>, value: impl Into<OsString>) -> Self {
        if let Endpoint::Stdio(command) = &mut self.endpoint {
            command.env.push((key.into(), value.into()));
        }
        self
    }

    /// Passes our value of the variable `key` to a stdio server.
    #[must_use]
    pub fn inherit_env(mut self, key: impl Into<OsString>) -> Self {
        if let Endpoint::Stdio(command) = &mut self.endpoint {
            command.inherit.push(key.into());
        }
        self
    }

    /// Passes our whole environment to a stdio server (secrets included).
    #[must_use]
    pub fn inherit_all_env(mut self) -> Self {
        if let Endpoint::Stdio(command) = &mut self.endpoint {
            command.inherit_all = true;
        }
        self
    }

    /// The working directory of a stdio server.
    #[must_use]
    pub fn current_dir(mut self, dir: impl Into<PathBuf>) -> Self {
        if let Endpoint::Stdio(command) = &mut self.endpoint {
            command.current_dir = Some(dir.into());
        }
        self
    }

    /// Starts a stdio server inside `sandbox`, enforced by the kernel
    /// ([`Sandbox`](pi_tool_core::safety::Sandbox)): the files it may read and write,
    /// whether it has the network, its processes. A kernel that cannot enforce the
    /// profile makes [`McpToolset::connect`] fail, naming what it lacks. Ignored for
    /// HTTP.
    #[must_use]
    pub fn sandbox(mut self, sandbox: pi_tool_core::safety::Sandbox) -> Self {
        if let Endpoint::Stdio(command) = &mut self.endpoint {
            command.sandbox = Some(sandbox);
        }
        self
    }

    /// Marks the server trusted: its tool annotations are used as given (see the module
    /// docs).
    #[must_use]
    pub fn trusted(mut self, trusted: bool) -> Self {
        self.trusted = trusted;
        self
    }

    /// The prefix of the server's tool names instead of `mcp__<name>__`; `""` for none.
    #[must_use]
    pub fn prefix(mut self, prefix: impl Into<String>) -> Self {
        self.prefix = Some(prefix.into());
        self
    }

    /// Only these tools (by the server's names).
    #[must_use]
    pub fn include<I: IntoIterator<Item = S>, S: Into<String>>(mut self, tools: I) -> Self {
        self.include = Some(tools.into_iter().map(Into::into).collect());
        self
    }

    /// Not these tools (by the server's names).
    #[must_use]
    pub fn exclude<I: IntoIterator<Item = S>, S: Into<String>>(mut self, tools: I) -> Self {
        self.exclude.extend(tools.into_iter().map(Into::into));
        self
    }

    /// How long connecting may take ([`DEFAULT_CONNECT_TIMEOUT`]).
    #[must_use]
    pub fn connect_timeout(mut self, timeout: Duration) -> Self {
        self.connect_timeout = timeout;
        self
    }

    /// Each tool's timeout ([`DEFAULT_CALL_TIMEOUT`]); `None` leaves it to the call
    /// policy's.
    #[must_use]
    pub fn call_timeout(mut self, timeout: Option<Duration>) -> Self {
        self.call_timeout = timeout;
        self
    }

    /// The largest message accepted from the server
    /// ([`DEFAULT_MAX_MESSAGE_BYTES`](crate::DEFAULT_MAX_MESSAGE_BYTES)); a larger one
    /// ends the connection, and the calls waiting on it fail with the reason.
    #[must_use]
    pub fn max_message_bytes(mut self, bytes: usize) -> Self {
        self.max_message_bytes = bytes;
        self
    }

    /// How long a stdio server gets at each step of its shutdown
    /// ([`DEFAULT_SHUTDOWN_GRACE`]).
    #[must_use]
    pub fn shutdown_grace(mut self, grace: Duration) -> Self {
        self.shutdown_grace = grace;
        self
    }

    /// The protocol revision ([`Revision::Auto`]).
    #[must_use]
    pub fn revision(mut self, revision: Revision) -> Self {
        self.revision = revision;
        self
    }

    /// Who answers the server's input requests (elicitation), before a session's UI.
    #[must_use]
    pub fn input_handler(mut self, handler: Arc<dyn InputHandler>) -> Self {
        self.input = Some(handler);
        self
    }

    /// Who answers the server's sampling requests (model calls); without one they are
    /// declined and the client does not announce the `sampling` capability. See
    /// [`SamplingHandler`].
    #[must_use]
    pub fn sampling_handler(mut self, handler: Arc<dyn SamplingHandler>) -> Self {
        self.sampling = Some(handler);
        self
    }

    fn tool_prefix(&self) -> String {
        match &self.prefix {
            Some(prefix) => prefix.clone(),
            None => names::default_prefix(&self.name),
        }
    }

    fn wants(&self, tool: &str) -> bool {
        self.include
            .as_ref()
            .is_none_or(|include| include.iter().any(|t| t == tool))
            && !self.exclude.iter().any(|t| t == tool)
    }
}

/// Why a toolset could not connect or list.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct McpClientError {
    server: String,
    message: String,
}

impl McpClientError {
    fn new(server: &str, message: impl Into<String>) -> Self {
        McpClientError {
            server: server.to_owned(),
            message: message.into(),
        }
    }

    /// The server's name.
    pub fn server(&self) -> &str {
        &self.server
    }

    /// What went wrong.
    pub fn message(&self) -> &str {
        &self.message
    }
}

impl fmt::Display for McpClientError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "MCP server `{}`: {}", self.server, self.message)
    }
}

impl std::error::Error for McpClientError {}
