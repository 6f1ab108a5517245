//! The connections of [`PackServer::serve_http`](crate::PackServer::serve_http): the
//! accept loop and each connection's HTTP/1 settings, bounded as [`HttpLimits`] says,
//! and the graceful shutdown.
//!
//! - An `accept()` error (the process is out of file descriptors, the peer reset
//!   before the accept) is logged and retried after a pause that doubles up to a
//!   second, as axum's `serve` does; it never ends the server.
//! - Every accepted socket gets `TCP_NODELAY`: an event stream's events are small
//!   writes, which Nagle's algorithm would hold back until the client's delayed ACK
//!   (40 ms or more per call on a kept-alive connection).
//! - At most [`HttpLimits::max_connections`] connections are open; the next one is
//!   accepted when one closes (the kernel's backlog holds it meanwhile).
//! - hyper's header-read deadline ([`HttpLimits::header_read_timeout`]) closes a
//!   connection that does not send a whole request head in time: a slow header, and
//!   an idle kept-alive connection alike (the deadline runs while it waits for the next
//!   request).
//! - A request body that stalls for as long (no bytes between two of its frames) is
//!   cut off: tower-http's `TimeoutBody` wraps each body (`framing.rs`), and the
//!   request is answered 408.
//!
//! Hand-written here because no tower or tower-http layer does it: the connection cap
//! bounds sockets before hyper sees them, where a layer (`ConcurrencyLimit`) would bound
//! requests, and a kept-alive connection between requests is still a socket; the
//! header deadline is hyper's own (a layer runs only once a request head was read); and
//! the accept loop's backoff is below any service. A whole-request `TimeoutLayer` does
//! not fit an MCP server at all: a call's response is an event stream that may rightly
//! run for minutes.

use std::convert::Infallible;
use std::future::Future;
use std::sync::Arc;
use std::time::Duration;

use hyper::body::Incoming;
use rmcp::ServerHandler;
use tokio::net::TcpListener;
use tokio::sync::{Semaphore, watch};
use tokio::task::JoinSet;

use super::framing::RequestBody;
use super::layer::HttpLayer;
use super::limits::HttpLimits;

/// The first pause after an `accept()` error; each further error doubles it.
const FIRST_BACKOFF: Duration = Duration::from_millis(5);
/// The longest pause after an `accept()` error.
const MAX_BACKOFF: Duration = Duration::from_secs(1);

/// Accepts connections on `listener` for `http` until `shutdown` resolves, then shuts
/// down: no more connections, each open one closed once its responses are written,
/// for at most `limits.shutdown_grace`; after it `abort` runs (it cancels the calls
/// still running, whose tools see their abort signal) and the connections are given a
/// second to end.
pub(crate) async fn accept<S>(
    listener: TcpListener,
    http: Arc<HttpLayer<S>>,
    limits: &HttpLimits,
    shutdown: impl Future<Output = ()>,
    abort: impl FnOnce(),
) where
    S: ServerHandler + Send + 'static,
{
    let permits = Arc::new(Semaphore::new(limits.max_connections.max(1)));
    let (closing, closed) = watch::channel(false);
    let mut connections = JoinSet::new();
    let mut shutdown = std::pin::pin!(shutdown);
    let mut backoff = FIRST_BACKOFF;
    loop {
        let permit = tokio::select! {
            permit = permits.clone().acquire_owned() => permit,
            () = &mut shutdown => break,
        };
        // The semaphore is never closed.
        let Ok(permit) = permit else { break };
        let accepted = tokio::select! {
            accepted = listener.accept() => accepted,
            () = &mut shutdown => break,
        };
        let stream = match accepted {
            Ok((stream, _)) => {
                backoff = FIRST_BACKOFF;
                stream
            }
            Err(error) => {
                tracing::warn!(
                    target: "pi_tool_mcp::http",
                    "cannot accept a connection: {error}; retrying in {backoff:?}"
                );
                tokio::select! {
                    () = tokio::time::sleep(backoff) => {}
                    () = &mut shutdown => break,
                }
                backoff = (backoff * 2).min(MAX_BACKOFF);
                continue;
            }
        };
        // Only fails on a socket already closed, which hyper then reports.
        let _ = stream.set_nodelay(true);
        let http = http.clone();
        let mut closed = closed.clone();
        let header_read_timeout = limits.header_read_timeout;
        let body_deadline = limits.header_read_timeout;
        // Finished connections are reaped so the set does not grow.
        while connections.try_join_next().is_some() {}
        connections.spawn(async move {
            let _permit = permit;
            let service = hyper::service::service_fn(move |request: hyper::Request<Incoming>| {
                let http = http.clone();
                async move {
                    let request = request.map(|body| RequestBody::streamed(body, body_deadline));
                    Ok::<_, Infallible>(http.serve(request).await)
                }
            });
            let mut builder = hyper::server::conn::http1::Builder::new();
            builder
                .timer(hyper_util::rt::TokioTimer::new())
                .header_read_timeout(header_read_timeout);
            let connection =
                builder.serve_connection(hyper_util::rt::TokioIo::new(stream), service);
            let mut connection = std::pin::pin!(connection);
            // A client that drops its connection ends only that connection.
            tokio::select! {
                _ = connection.as_mut() => return,
                _ = closed.wait_for(|closed| *closed) => {}
            }
            connection.as_mut().graceful_shutdown();
            let _ = connection.await;
        });
    }
    drop(listener);
    let _ = closing.send(true);
    let drained = async { while connections.join_next().await.is_some() {} };
    if tokio::time::timeout(limits.shutdown_grace, drained)
        .await
        .is_err()
    {
        abort();
        let drained = async { while connections.join_next().await.is_some() {} };
        if tokio::time::timeout(Duration::from_secs(1), drained)
            .await
            .is_err()
        {
            connections.abort_all();
        }
    }
}
