//! Connecting over streamable HTTP waits for the server's standalone stream.
//!
//! Under 2025-11-25 a server may send requests of its own (elicitation, sampling) on the
//! GET stream the client opens after `initialize`, and a server that sends one before
//! that stream is open drops it (the TypeScript SDK's transport does). rmcp's client
//! opens the stream in the background; [`Watched`] wraps its HTTP client and says when
//! the first GET of the session settled (open, refused, or failed), so that
//! [`McpToolset::connect`](super::McpToolset::connect) returns only once the server can
//! reach the client, and the first call cannot race the stream.

use std::collections::HashMap;
use std::sync::Arc;

use futures::stream::BoxStream;
use hyper::header::{HeaderName, HeaderValue};
use rmcp::model::ClientJsonRpcMessage;
use rmcp::transport::streamable_http_client::{
    SseError, StreamableHttpClient, StreamableHttpError, StreamableHttpPostResponse,
};
use tokio::sync::watch;

/// An HTTP client of rmcp's transport that reports when the standalone stream settled.
#[derive(Clone)]
pub(crate) struct Watched<C> {
    inner: C,
    settled: Arc<watch::Sender<bool>>,
}

impl<C> Watched<C> {
    /// `inner`, and a receiver that turns `true` once there is no standalone stream to
    /// wait for.
    pub(crate) fn new(inner: C) -> (Self, watch::Receiver<bool>) {
        let (settled, receiver) = watch::channel(false);
        (
            Watched {
                inner,
                settled: Arc::new(settled),
            },
            receiver,
        )
    }

    fn settle(&self) {
        self.settled.send_replace(true);
    }
}

impl<C: StreamableHttpClient + Sync> StreamableHttpClient for Watched<C> {
    type Error = C::Error;

    async fn post_message(
        &self,
        uri: Arc<str>,
        message: ClientJsonRpcMessage,
        session_id: Option<Arc<str>>,
        auth_header: Option<String>,
        custom_headers: HashMap<HeaderName, HeaderValue>,
    ) -> Result<StreamableHttpPostResponse, StreamableHttpError<Self::Error>> {
        let response = self
            .inner
            .post_message(uri, message, session_id, auth_header, custom_headers)
            .await;
        self.after_post(&response);
        response
    }

    async fn post_message_with_max_sse_event_size(
        &self,
        uri: Arc<str>,
        message: ClientJsonRpcMessage,
        session_id: Option<Arc<str>>,
        auth_header: Option<String>,
        custom_headers: HashMap<HeaderName, HeaderValue>,
        max_sse_event_size: usize,
    ) -> Result<StreamableHttpPostResponse, StreamableHttpError<Self::Error>> {
        let response = self
            .inner
            .post_message_with_max_sse_event_size(
                uri,
                message,
                session_id,
                auth_header,
                custom_headers,
                max_sse_event_size,
            )
            .await;
        self.after_post(&response);
        response
    }

    async fn post_message_with_response_limits(
        &self,
        uri: Arc<str>,
        message: ClientJsonRpcMessage,
        session_id: Option<Arc<str>>,
        auth_header: Option<String>,
        custom_headers: HashMap<HeaderName, HeaderValue>,
        limits: rmcp::transport::streamable_http_client::StreamableHttpResponseLimits,
    ) -> Result<StreamableHttpPostResponse, StreamableHttpError<Self::Error>> {
        let response = self
            .inner
            .post_message_with_response_limits(
                uri,
                message,
                session_id,
                auth_header,
                custom_headers,
                limits,
            )
            .await;
        self.after_post(&response);
        response
    }

    async fn delete_session(
        &self,
        uri: Arc<str>,
        session_id: Arc<str>,
        auth_header: Option<String>,
        custom_headers: HashMap<HeaderName, HeaderValue>,
    ) -> Result<(), StreamableHttpError<Self::Error>> {
        self.inner
            .delete_session(uri, session_id, auth_header, custom_headers)
            .await
    }

    async fn get_stream(
        &self,
        uri: Arc<str>,
        session_id: Option<Arc<str>>,
        last_event_id: Option<String>,
        auth_header: Option<String>,
        custom_headers: HashMap<HeaderName, HeaderValue>,
    ) -> Result<
        BoxStream<'static, Result<sse_stream::Sse, SseError>>,
        StreamableHttpError<Self::Error>,
    > {
        let stream = self
            .inner
            .get_stream(uri, session_id, last_event_id, auth_header, custom_headers)
            .await;
        self.settle();
        stream
    }

    async fn get_stream_with_max_sse_event_size(
        &self,
        uri: Arc<str>,
        session_id: Option<Arc<str>>,
        last_event_id: Option<String>,
        auth_header: Option<String>,
        custom_headers: HashMap<HeaderName, HeaderValue>,
        max_sse_event_size: usize,
    ) -> Result<
        BoxStream<'static, Result<sse_stream::Sse, SseError>>,
        StreamableHttpError<Self::Error>,
    > {
        let stream = self
            .inner
            .get_stream_with_max_sse_event_size(
                uri,
                session_id,
                last_event_id,
                auth_header,
                custom_headers,
                max_sse_event_size,
            )
            .await;
        self.settle();
        stream
    }
}

impl<C> Watched<C> {
    /// A response that is not the start of a session (no session id: a stateless
    /// server, or 2026-07-28) means no standalone stream will be opened; a failed POST
    /// ends the wait too (the handshake reports it).
    fn after_post<E>(&self, response: &Result<StreamableHttpPostResponse, E>) {
        let session = match response {
            Ok(StreamableHttpPostResponse::Json(_, session))
            | Ok(StreamableHttpPostResponse::Sse(_, session)) => session.is_some(),
            Ok(StreamableHttpPostResponse::Accepted) => return,
            Ok(_) | Err(_) => false,
        };
        if !session {
            self.settle();
        }
    }
}
