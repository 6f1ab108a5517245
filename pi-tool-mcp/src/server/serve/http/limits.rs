//! [`HttpLimits`]: what one [`PackServer::serve_http`](crate::PackServer::serve_http)
//! holds at most, in one place with the defaults.

use std::time::Duration;

/// The bounds of [`PackServer::serve_http`](crate::PackServer::serve_http), set with
/// [`PackServer::with_http_limits`](crate::PackServer::with_http_limits). Every field
/// has a default meant for a server on the network; `HttpLimits::default()` gives them
/// all, and a deployment changes the ones it needs:
///
/// ```
/// let mut limits = pi_tool_mcp::HttpLimits::default();
/// limits.max_sessions = 1_000;
/// ```
///
/// | limit | default | when it is reached |
/// | --- | --- | --- |
/// | [`max_connections`](Self::max_connections) | 1 024 | the next connection waits in the kernel's backlog until one closes |
/// | [`header_read_timeout`](Self::header_read_timeout) | 30 s | a connection that sends no whole request head in time (a slow header, or idle between requests) is closed; a request body that sends nothing for as long gets HTTP 408 with a JSON-RPC -32700 |
/// | request body | [`with_max_message_bytes`](crate::PackServer::with_max_message_bytes), 16 MiB | HTTP 413 with a JSON-RPC -32700: at once for a larger `Content-Length`, while reading a chunked body as soon as it passes the limit; the rest is not read |
/// | [`max_sessions`](Self::max_sessions) | 10 000 | a request that would open a session is refused: HTTP 503, `Retry-After`, JSON-RPC -32000 (exact when `initialize`s arrive together) |
/// | [`session_idle_timeout`](Self::session_idle_timeout) | 5 min | a session with no request for that long ends and frees its slot |
/// | [`max_calls_per_session`](Self::max_calls_per_session) | 64 | a further `tools/call` of the session gets HTTP 429, `Retry-After` and JSON-RPC -32000 |
/// | [`shutdown_grace`](Self::shutdown_grace) | 10 s | at shutdown, calls still running are aborted |
///
/// At the session cap new sessions are refused rather than old ones evicted: an
/// eviction would let a flood of new sessions end every working client's session,
/// while a refusal only delays new clients, and never for longer than the idle timeout
/// (a flood's sessions, never used again, expire then).
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub struct HttpLimits {
    /// Connections open at once.
    pub max_connections: usize,
    /// How long a connection may take to send a request head, and stay idle between
    /// requests; and how long a request body may go without sending a byte.
    pub header_read_timeout: Duration,
    /// Sessions open at once.
    pub max_sessions: usize,
    /// How long a session may go without a request before it ends.
    pub session_idle_timeout: Duration,
    /// `tools/call` requests of one session running at once.
    pub max_calls_per_session: usize,
    /// How long a graceful shutdown lets running calls finish before it aborts them.
    pub shutdown_grace: Duration,
}

impl HttpLimits {
    /// [`max_connections`](Self::max_connections)' default.
    pub const DEFAULT_MAX_CONNECTIONS: usize = 1024;
    /// [`header_read_timeout`](Self::header_read_timeout)'s default.
    pub const DEFAULT_HEADER_READ_TIMEOUT: Duration = Duration::from_secs(30);
    /// [`max_sessions`](Self::max_sessions)' default.
    pub const DEFAULT_MAX_SESSIONS: usize = 10_000;
    /// [`session_idle_timeout`](Self::session_idle_timeout)'s default.
    pub const DEFAULT_SESSION_IDLE_TIMEOUT: Duration = Duration::from_secs(300);
    /// [`max_calls_per_session`](Self::max_calls_per_session)' default.
    pub const DEFAULT_MAX_CALLS_PER_SESSION: usize = 64;
    /// [`shutdown_grace`](Self::shutdown_grace)'s default.
    pub const DEFAULT_SHUTDOWN_GRACE: Duration = Duration::from_secs(10);
}

impl Default for HttpLimits {
    fn default() -> Self {
        HttpLimits {
            max_connections: Self::DEFAULT_MAX_CONNECTIONS,
            header_read_timeout: Self::DEFAULT_HEADER_READ_TIMEOUT,
            max_sessions: Self::DEFAULT_MAX_SESSIONS,
            session_idle_timeout: Self::DEFAULT_SESSION_IDLE_TIMEOUT,
            max_calls_per_session: Self::DEFAULT_MAX_CALLS_PER_SESSION,
            shutdown_grace: Self::DEFAULT_SHUTDOWN_GRACE,
        }
    }
}
