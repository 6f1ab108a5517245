//! The transports of a [`PackServer`]: newline-delimited JSON-RPC on standard input and
//! output or any byte stream (`io/`), and MCP's streamable HTTP (`http/`). Both take an
//! rmcp service; this file hands them the server and its settings.

use std::sync::Arc;

use std::future::Future;

use self::http::accept::accept;
use self::http::access::{BadEntry, HttpAccess};
use self::http::layer::HttpLayer;
use self::http::sessions::Sessions;
use self::http::table::SessionTable;
use self::http::trim::trim_after_sessions_end;
use self::io::serve_framed;
use super::PackServer;
use super::subscriptions::Subscriptions;
use crate::error::ServeError;

pub(crate) mod http;
pub(crate) mod io;

impl PackServer {
    /// Serves on standard input and output until the client closes the connection.
    /// Standard output carries only protocol messages; write logs to standard error.
    /// A served tool that reaches a tool the server does not serve is
    /// [`ServeError::MissingReach`], before anything is read (as for every transport).
    ///
    /// Every request gets exactly one answer, malformed ones included: see
    /// [`serve_io`](Self::serve_io).
    pub async fn serve_stdio(self) -> Result<(), ServeError> {
        // When both are pipes (as an MCP client starts a server), the non-blocking pipe
        // driver: tokio's `stdin()`/`stdout()` hand every read and write to a blocking
        // thread and back, two thread hops per message. Anything else (a terminal, a
        // file) falls back to those.
        let (read, write) = rmcp::transport::stdio_pipes();
        self.serve_io(read, write).await
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
    pub async fn serve_io<R, W>(mut self, read: R, write: W) -> Result<(), ServeError>
    where
        R: tokio::io::AsyncRead + Unpin + Send + 'static,
        W: tokio::io::AsyncWrite + Unpin + Send + 'static,
    {
        self.check_reaches()?;
        // A connection is a session: its calls count from zero.
        self.session_calls = Arc::default();
        let limit = self.max_message_bytes;
        let pending = self.max_pending_requests;
        serve_framed(self, read, write, limit, pending).await
    }

    /// Serves MCP's streamable HTTP transport on `listener`, for as long as the task
    /// runs (a failing `accept()` is logged and retried, not the end), within
    /// [`with_http_limits`](Self::with_http_limits)' bounds;
    /// [`serve_http_until`](Self::serve_http_until) also shuts down gracefully.
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
    /// body over [`with_max_message_bytes`](Self::with_max_message_bytes) is answered
    /// 413 and not read further. A `DELETE` of a session the server does not hold is
    /// 404, a session id that is not visible ASCII 400.
    pub async fn serve_http(self, listener: tokio::net::TcpListener) -> Result<(), ServeError> {
        self.serve_http_until(listener, std::future::pending())
            .await
    }

    /// Serves as [`serve_http`](Self::serve_http) until `shutdown` resolves, then shuts
    /// down gracefully and returns `Ok`: no new connection is accepted, each open one is
    /// closed once its responses are written, and calls still running after
    /// [`HttpLimits::shutdown_grace`](crate::HttpLimits::shutdown_grace) are aborted (their tools see the abort signal, and
    /// their clients get the aborted result or a closed stream); then the sessions end.
    /// A binary passes its SIGTERM or Ctrl-C here.
    pub async fn serve_http_until(
        self,
        listener: tokio::net::TcpListener,
        shutdown: impl Future<Output = ()> + Send,
    ) -> Result<(), ServeError> {
        use rmcp::transport::streamable_http_server::{
            StreamableHttpServerConfig, StreamableHttpService,
        };
        self.check_reaches()?;
        let limit = self.max_message_bytes;
        let stateless = self.stateless_http;
        let limits = self.http_limits.clone();
        let loopback = listener
            .local_addr()
            .map_err(|error| ServeError::Accept(error.to_string()))?
            .ip()
            .is_loopback();
        let access = HttpAccess::new(loopback, &self.allowed_hosts, &self.allowed_origins)
            .map_err(|BadEntry(error)| ServeError::Config(error))?;
        // A session without a message for this long ends, and rmcp forgets it.
        let manager = Arc::new(SessionTable::new(limits.session_idle_timeout));
        // The framing layer bounds the bodies it reads by the same limit.
        let config = StreamableHttpServerConfig::default()
            .with_max_request_body_bytes(limit)
            .with_legacy_session_mode(!stateless)
            // `http_access.rs` checks Host and Origin before rmcp sees a request.
            .disable_allowed_hosts()
            .disable_allowed_origins()
            // rmcp's priming events all carry the id `0`, on every stream of a
            // session, while its other events count from 0 too: without them event
            // ids are unique per session. They invite a client to resume a stream,
            // which this server does not keep (a closed call stream ends its call).
            .with_sse_retry(None);
        // Cancelled at the end of a shutdown's grace: every session, stream and call.
        let everything = config.cancellation_token.clone();
        let service = StreamableHttpService::new(
            // Each client session: the same tools, its own subscriptions, log level and
            // count of calls.
            move || {
                let mut session = self.clone();
                session.subscriptions = Subscriptions::default();
                session.log_level = Arc::default();
                session.session_calls = Arc::default();
                Ok(session)
            },
            manager.clone(),
            config,
        );
        let http = Arc::new(HttpLayer {
            service,
            limit,
            access,
            sessions: Sessions {
                manager: manager.clone(),
                max: limits.max_sessions,
                stateless,
                max_calls: limits.max_calls_per_session,
                calls: Default::default(),
                opening: Default::default(),
                admitting: Default::default(),
                settled: Default::default(),
            },
        });
        // Sessions that end in bulk give their memory back (`http/trim.rs`).
        let trimmer = (!stateless).then(|| tokio::spawn(trim_after_sessions_end(manager)));
        accept(listener, http, &limits, shutdown, move || {
            everything.cancel()
        })
        .await;
        if let Some(trimmer) = trimmer {
            trimmer.abort();
        }
        Ok(())
    }
}
