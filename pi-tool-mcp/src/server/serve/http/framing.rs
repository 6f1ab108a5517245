//! The same answers as the stdio framing (`framing.rs`) for MCP's streamable HTTP: a
//! POSTed JSON-RPC message is read (at most the message limit) and checked before rmcp
//! sees it. rmcp answers a body serde_json rejects with HTTP 415 and serde's text (no
//! JSON-RPC, no id), and malformed `tools/call` params with -32601.
//!
//! Only a POST with a JSON content type is read here, after its `Host` and `Origin`
//! passed `http_access.rs`. Everything else, and every message that passes, goes to rmcp
//! with the bytes read; batches and the methods 2026-07-28 removed are answered as
//! `http_revision.rs` says.

use std::convert::Infallible;
use std::pin::Pin;
use std::task::{Context, Poll};
use std::time::Duration;

use hyper::body::{Body, Bytes, Frame, Incoming, SizeHint};
use hyper::{Method, Request, Response, StatusCode, header};
use tower_http::BoxError;
use tower_http::timeout::{TimeoutBody, TimeoutError};

use super::revision::{accepts_batches, removed_method};
use crate::server::serve::io::framing::{
    ID_SCAN_PREFIX, Parsed, Verdict, check_parsed, oversized_answer, parse,
};

/// The client's body as read: a stall between two of its frames longer than the
/// deadline ends it with a [`TimeoutError`] (tower-http's body timeout).
pub(crate) type ClientBody = Pin<Box<TimeoutBody<Incoming>>>;

/// A request body for rmcp: the client's, untouched, or the bytes this layer read.
pub(crate) enum RequestBody {
    Streamed(ClientBody),
    Read(Option<Bytes>),
}

impl RequestBody {
    /// The client's body, cut off when it stalls for `deadline`.
    pub(crate) fn streamed(body: Incoming, deadline: Duration) -> Self {
        RequestBody::Streamed(Box::pin(TimeoutBody::new(deadline, body)))
    }
}

impl Body for RequestBody {
    type Data = Bytes;
    type Error = BoxError;

    fn poll_frame(
        self: Pin<&mut Self>,
        cx: &mut Context<'_>,
    ) -> Poll<Option<Result<Frame<Bytes>, BoxError>>> {
        match self.get_mut() {
            RequestBody::Streamed(body) => body.as_mut().poll_frame(cx),
            RequestBody::Read(bytes) => Poll::Ready(bytes.take().map(|b| Ok(Frame::data(b)))),
        }
    }

    fn is_end_stream(&self) -> bool {
        match self {
            RequestBody::Streamed(body) => body.is_end_stream(),
            RequestBody::Read(bytes) => bytes.is_none(),
        }
    }

    fn size_hint(&self) -> SizeHint {
        match self {
            RequestBody::Streamed(body) => body.size_hint(),
            RequestBody::Read(bytes) => {
                SizeHint::with_exact(bytes.as_ref().map_or(0, |b| b.len() as u64))
            }
        }
    }
}

/// A response: rmcp's (after a priming event of this layer's, `revision.rs`), or one of
/// this layer's answers.
pub(crate) enum ResponseBody<B> {
    Rmcp(B),
    Primed(Option<Bytes>, B),
    Answer(Option<Bytes>),
}

impl<B> Body for ResponseBody<B>
where
    B: Body<Data = Bytes, Error = Infallible> + Unpin,
{
    type Data = Bytes;
    type Error = Infallible;

    fn poll_frame(
        self: Pin<&mut Self>,
        cx: &mut Context<'_>,
    ) -> Poll<Option<Result<Frame<Bytes>, Infallible>>> {
        match self.get_mut() {
            ResponseBody::Rmcp(body) => Pin::new(body).poll_frame(cx),
            ResponseBody::Primed(first, body) => match first.take() {
                Some(first) => Poll::Ready(Some(Ok(Frame::data(first)))),
                None => Pin::new(body).poll_frame(cx),
            },
            ResponseBody::Answer(bytes) => Poll::Ready(bytes.take().map(|b| Ok(Frame::data(b)))),
        }
    }

    fn is_end_stream(&self) -> bool {
        match self {
            ResponseBody::Rmcp(body) => body.is_end_stream(),
            ResponseBody::Primed(first, body) => first.is_none() && body.is_end_stream(),
            ResponseBody::Answer(bytes) => bytes.is_none(),
        }
    }

    fn size_hint(&self) -> SizeHint {
        match self {
            ResponseBody::Rmcp(body) => body.size_hint(),
            ResponseBody::Primed(first, body) => {
                let mut hint = body.size_hint();
                let first = first.as_ref().map_or(0, |b| b.len() as u64);
                hint.set_lower(hint.lower() + first);
                if let Some(upper) = hint.upper() {
                    hint.set_upper(upper + first);
                }
                hint
            }
            ResponseBody::Answer(bytes) => {
                SizeHint::with_exact(bytes.as_ref().map_or(0, |b| b.len() as u64))
            }
        }
    }
}

/// What to do with one HTTP request before rmcp.
pub(crate) enum Checked {
    /// Give rmcp this request.
    Forward(Box<Request<RequestBody>>),
    /// Answer with this status and (JSON) body; rmcp never sees the request.
    Answer(StatusCode, Option<Bytes>),
    /// A 2025-03-26 batch: these messages, each to be served as a POST of its own with
    /// these headers.
    Batch(Box<hyper::http::request::Parts>, Vec<serde_json::Value>),
}

/// Reads and checks a POSTed message; see the module docs. `batches`: whether a batch
/// may be answered (not inside one).
pub(crate) async fn check_request(
    request: Request<RequestBody>,
    limit: usize,
    batches: bool,
) -> Checked {
    if !ours_to_check(&request) {
        return Checked::Forward(Box::new(request));
    }
    let declared = request
        .headers()
        .get(header::CONTENT_LENGTH)
        .and_then(|value| value.to_str().ok())
        .and_then(|value| value.trim().parse::<u64>().ok());
    // By hand rather than tower-http's `RequestBodyLimitLayer`: its 413 is plain text,
    // and a JSON-RPC client is owed -32700 with the request's id when the part read
    // shows it, which only a reader of the body (this one) can give.
    if let Some(length) = declared.filter(|length| *length > limit as u64) {
        // Refused before a byte of the body is read.
        let length = usize::try_from(length).unwrap_or(usize::MAX);
        return too_large(oversized_answer(&[], limit, length));
    }
    let (parts, mut body) = request.into_parts();
    let mut read = Vec::new();
    let mut length = 0usize;
    loop {
        match std::future::poll_fn(|cx| Pin::new(&mut body).poll_frame(cx)).await {
            None => break,
            Some(Ok(frame)) => {
                let Ok(data) = frame.into_data() else {
                    continue;
                };
                length = length.saturating_add(data.len());
                if length > limit {
                    // The rest is not read: hyper closes the connection after the answer.
                    let room = ID_SCAN_PREFIX.saturating_sub(read.len());
                    read.extend_from_slice(&data[..room.min(data.len())]);
                    return too_large(oversized_answer(&read, limit, length));
                }
                read.extend_from_slice(&data);
            }
            // The client stopped sending its body: 408, and the connection closes.
            Some(Err(error)) if error.is::<TimeoutError>() => {
                let answer = serde_json::json!({"jsonrpc": "2.0", "id": null, "error": {
                    "code": -32700,
                    "message": "Parse error: the request body stalled past the server's \
                                read deadline",
                }});
                return Checked::Answer(
                    StatusCode::REQUEST_TIMEOUT,
                    Some(Bytes::from(answer.to_string())),
                );
            }
            // The body broke off: there is no message to answer; rmcp reports the error
            // as it would.
            Some(Err(_)) => {
                return Checked::Forward(forward(
                    parts,
                    RequestBody::Read(Some(Bytes::from(read))),
                ));
            }
        }
    }
    let verdict = match parse(&read) {
        Parsed::Done(verdict) => verdict,
        Parsed::Message(_, serde_json::Value::Array(items))
            if batches && accepts_batches(&parts.headers) =>
        {
            return Checked::Batch(Box::new(parts), items);
        }
        Parsed::Message(text, message) => match removed_method(&parts.headers, &message) {
            Some(answer) => {
                return Checked::Answer(
                    StatusCode::NOT_FOUND,
                    Some(Bytes::from(answer.to_string())),
                );
            }
            None => check_parsed(text, &message),
        },
    };
    match verdict {
        Verdict::Forward => {
            Checked::Forward(forward(parts, RequestBody::Read(Some(Bytes::from(read)))))
        }
        // A notification rmcp cannot read: accepted, no answer, as for any notification.
        Verdict::Skip if !read.iter().all(u8::is_ascii_whitespace) => {
            Checked::Answer(StatusCode::ACCEPTED, None)
        }
        // An empty body is rmcp's to reject.
        Verdict::Skip => {
            Checked::Forward(forward(parts, RequestBody::Read(Some(Bytes::from(read)))))
        }
        Verdict::Answer(response) => answer(response),
    }
}

fn forward(parts: hyper::http::request::Parts, body: RequestBody) -> Box<Request<RequestBody>> {
    Box::new(Request::from_parts(parts, body))
}

/// An error with the request's id goes out as a JSON-RPC response (200), so the client
/// matches it to its request; without an id, as 400 with the same JSON-RPC body.
fn answer(response: serde_json::Value) -> Checked {
    let status = if response["id"].is_null() {
        StatusCode::BAD_REQUEST
    } else {
        StatusCode::OK
    };
    Checked::Answer(status, Some(Bytes::from(response.to_string())))
}

/// A body over the limit: 413, with the JSON-RPC error (and the id, when the part read
/// shows it).
fn too_large(response: serde_json::Value) -> Checked {
    Checked::Answer(
        StatusCode::PAYLOAD_TOO_LARGE,
        Some(Bytes::from(response.to_string())),
    )
}

/// The HTTP response for [`Checked::Answer`].
pub(crate) fn answer_response<B>(
    status: StatusCode,
    body: Option<Bytes>,
) -> Response<ResponseBody<B>> {
    let mut response = Response::new(ResponseBody::Answer(body.clone()));
    *response.status_mut() = status;
    if body.is_some() {
        response.headers_mut().insert(
            header::CONTENT_TYPE,
            header::HeaderValue::from_static("application/json"),
        );
    }
    response
}

/// A POST of JSON: what rmcp parses.
fn ours_to_check(request: &Request<RequestBody>) -> bool {
    request.method() == Method::POST
        && request
            .headers()
            .get(header::CONTENT_TYPE)
            .and_then(|value| value.to_str().ok())
            .and_then(|value| value.split(';').next())
            .is_some_and(|essence| essence.trim().eq_ignore_ascii_case("application/json"))
}
