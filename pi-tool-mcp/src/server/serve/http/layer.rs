//! The streamable HTTP server of [`PackServer::serve_http`](crate::PackServer::serve_http):
//! each request passes `http_access.rs`, then the framing checks (`http_framing.rs`),
//! then goes to rmcp; a 2025-03-26 batch is served one message at a time
//! (`http_revision.rs`).

use std::sync::Arc;

use http_body_util::combinators::BoxBody;
use hyper::body::Bytes;
use rmcp::ServerHandler;
use rmcp::transport::streamable_http_server::StreamableHttpService;

use super::access::{HttpAccess, Refused};
use super::framing::{Checked, RequestBody, ResponseBody, answer_response, check_request};
use super::revision::{answer_batch, is_event_stream, priming_event};
use super::sessions::{Refusal, Sessions};
use super::table::SessionTable;
use crate::server::disconnect::{GuardedBody, tag};

/// rmcp's streamable HTTP service of the sessions of `S`.
pub(crate) type RmcpService<S> = StreamableHttpService<S, SessionTable>;
type HttpResponse =
    hyper::Response<ResponseBody<GuardedBody<BoxBody<Bytes, std::convert::Infallible>>>>;

/// What [`PackServer::serve_http`](crate::PackServer::serve_http) puts in front of rmcp, shared by its connections.
pub(crate) struct HttpLayer<S: ServerHandler + Send + 'static> {
    pub(crate) service: RmcpService<S>,
    pub(crate) limit: usize,
    pub(crate) access: HttpAccess,
    pub(crate) sessions: Sessions,
}

impl<S: ServerHandler + Send + 'static> HttpLayer<S> {
    /// Serves one HTTP request: access, then a batch or one message.
    pub(crate) async fn serve(
        self: Arc<Self>,
        request: hyper::Request<RequestBody>,
    ) -> HttpResponse {
        if let Err(Refused(status, text)) = self.access.check(request.uri(), request.headers()) {
            return refused_response(status, text);
        }
        if let Some(refusal) = self
            .sessions
            .check(request.method(), request.headers())
            .await
        {
            return refusal_response(refusal);
        }
        match check_request(request, self.limit, true).await {
            Checked::Batch(parts, items) => {
                let layer = self.clone();
                let (status, body) = answer_batch(items, move |item| {
                    let layer = layer.clone();
                    let request = batch_item(&parts, item);
                    Box::pin(async move { layer.serve_message(request).await })
                })
                .await;
                answer_response(status, body)
            }
            checked => self.finish(checked).await,
        }
    }

    /// Serves one message of a batch as a POST of its own.
    async fn serve_message(self: Arc<Self>, request: hyper::Request<RequestBody>) -> HttpResponse {
        let checked = check_request(request, self.limit, false).await;
        self.finish(checked).await
    }

    async fn finish(&self, checked: Checked) -> HttpResponse {
        match checked {
            Checked::Forward(mut request) => {
                let body = match request.body() {
                    RequestBody::Read(body) => body.as_ref(),
                    RequestBody::Streamed(_) => None,
                };
                // Held until rmcp has answered, so the session it opens is counted.
                let _opening = match self
                    .sessions
                    .check_open(request.method(), request.headers(), body)
                    .await
                {
                    Ok(opening) => opening,
                    Err(refusal) => return refusal_response(refusal),
                };
                let slot = match self.sessions.call_slot(request.headers(), body).await {
                    Ok(slot) => slot,
                    Err(refusal) => return refusal_response(refusal),
                };
                let priming = priming_event(&request);
                // A client that closes this response ends its call.
                let gone = tag(&mut request);
                let response = self.service.handle(*request).await;
                let priming = priming.filter(|_| is_event_stream(&response));
                response.map(|body| {
                    let body = GuardedBody::new(body, gone).holding(slot);
                    match priming {
                        Some(first) => ResponseBody::Primed(Some(first), body),
                        None => ResponseBody::Rmcp(body),
                    }
                })
            }
            Checked::Answer(status, body) => answer_response(status, body),
            // Only `serve` asks for batches.
            Checked::Batch(..) => answer_response(hyper::StatusCode::BAD_REQUEST, None),
        }
    }
}

/// One message of a batch as a request of its own: the batch's method, target and
/// headers (its length is the message's), the message as the body.
fn batch_item(parts: &hyper::http::request::Parts, item: Bytes) -> hyper::Request<RequestBody> {
    let mut request = hyper::Request::new(RequestBody::Read(Some(item)));
    *request.method_mut() = parts.method.clone();
    *request.uri_mut() = parts.uri.clone();
    *request.version_mut() = parts.version;
    *request.headers_mut() = parts.headers.clone();
    request.headers_mut().remove(hyper::header::CONTENT_LENGTH);
    request
}

/// The answer to a request `sessions.rs` refused.
fn refusal_response(refusal: Refusal) -> HttpResponse {
    let mut response = answer_response(refusal.status, Some(refusal.body));
    if let Some(seconds) = refusal.retry_after {
        response.headers_mut().insert(
            hyper::header::RETRY_AFTER,
            hyper::header::HeaderValue::from(seconds),
        );
    }
    response
}

/// The answer to a request `http_access.rs` refused: JSON-RPC's shape, with no id.
fn refused_response(status: hyper::StatusCode, text: &str) -> HttpResponse {
    let body = serde_json::json!({
        "jsonrpc": "2.0",
        "id": null,
        "error": {"code": -32600, "message": text},
    });
    answer_response(status, Some(Bytes::from(body.to_string())))
}
