//! What depends on the protocol revision a POST speaks, answered before rmcp.
//!
//! - **Batches** (a JSON array of messages) exist only in MCP 2025-03-26, which says a
//!   server MUST receive them; 2025-06-18 removed them. A POST with no
//!   `MCP-Protocol-Version` header is 2025-03-26 (the spec's rule for clients of that
//!   revision, which do not send it), and so is one that names it. rmcp 3.11 refuses
//!   every batch, so [`answer_batch`] splits one into single POSTs for rmcp and gathers
//!   their answers into one JSON array, in the batch's order. Progress and other
//!   notifications a call sends while it runs have no place in a JSON answer and are
//!   not delivered (the spec lets a server answer a batch with JSON); a batch of
//!   notifications and responses only is answered 202.
//! - **The GET stream's priming event** (SEP-1699, 2025-11-25): rmcp primes each POST's
//!   event stream (its session layer, ids `0/N`) but not a session's standalone GET
//!   stream, whose own priming would carry the id `0` of its first real event. So a GET
//!   of 2025-11-25 or later without `Last-Event-ID` gets [`priming_event`] first: empty
//!   data, the id `00` and the same `retry` as the POST streams. `00` is no other event's
//!   id (the standalone stream counts `0`, `1`, …), and rmcp reads it as index 0 of that
//!   stream, so a client that resumes with it is sent every event from the first.
//! - **Removed methods**: revision 2026-07-28 removed `initialize`, `ping`,
//!   `logging/setLevel`, `resources/subscribe` and `resources/unsubscribe`. A request
//!   for one of them at that revision (its `MCP-Protocol-Version` header or its
//!   `_meta`'s `io.modelcontextprotocol/protocolVersion`) is answered HTTP 404 with
//!   -32601, as the revision asks, instead of going to the handshake or failing the
//!   params check of the older method.

use std::future::Future;
use std::pin::Pin;

use hyper::body::{Body, Bytes};
use hyper::{HeaderMap, Response, StatusCode, header};
use serde_json::{Value, json};

/// The first revision without sessions, batches or the removed methods.
const STATELESS_REVISION: &str = "2026-07-28";

/// The first revision with priming events.
const PRIMING_REVISION: &str = "2025-11-25";

/// The priming event of a standalone stream: as rmcp's POST streams', with an id of its
/// own (see the module docs).
const PRIMING_EVENT: &[u8] = b"data: \nid: 00\nretry: 3000\n\n";

/// The one revision with batches.
const BATCH_REVISION: &str = "2025-03-26";

/// The methods 2026-07-28 removed.
const REMOVED_METHODS: [&str; 5] = [
    "initialize",
    "ping",
    "logging/setLevel",
    "resources/subscribe",
    "resources/unsubscribe",
];

const METHOD_NOT_FOUND: i64 = -32601;
const INVALID_REQUEST: i64 = -32600;

fn header_revision(headers: &HeaderMap) -> Option<&str> {
    headers
        .get("mcp-protocol-version")
        .and_then(|value| value.to_str().ok())
        .map(str::trim)
}

/// Whether a POST with these headers may carry a batch.
pub(crate) fn accepts_batches(headers: &HeaderMap) -> bool {
    header_revision(headers).is_none_or(|revision| revision == BATCH_REVISION)
}

/// The event to send first on the answer to `request`, if it opens a session's
/// standalone stream (a GET, not a resumption) at 2025-11-25 or later.
pub(crate) fn priming_event<B>(request: &hyper::Request<B>) -> Option<Bytes> {
    let opens_stream =
        request.method() == hyper::Method::GET && !request.headers().contains_key("last-event-id");
    let primes = header_revision(request.headers())
        .is_some_and(|revision| (PRIMING_REVISION..STATELESS_REVISION).contains(&revision));
    (opens_stream && primes).then(|| Bytes::from_static(PRIMING_EVENT))
}

/// Whether `response` is an event stream (rmcp opened the stream).
pub(crate) fn is_event_stream<B>(response: &Response<B>) -> bool {
    response.status() == StatusCode::OK
        && response
            .headers()
            .get(header::CONTENT_TYPE)
            .and_then(|value| value.to_str().ok())
            .is_some_and(|value| value.starts_with("text/event-stream"))
}

/// The answer to a request for a method its revision removed, if `message` is one.
pub(crate) fn removed_method(headers: &HeaderMap, message: &Value) -> Option<Value> {
    let method = message.get("method")?.as_str()?;
    let id = message.get("id")?;
    if !REMOVED_METHODS.contains(&method) {
        return None;
    }
    let meta_revision = message
        .get("params")
        .and_then(|params| params.get("_meta"))
        .and_then(|meta| meta.get("io.modelcontextprotocol/protocolVersion"))
        .and_then(Value::as_str);
    let stateless = meta_revision
        .into_iter()
        .chain(header_revision(headers))
        .any(|revision| revision >= STATELESS_REVISION);
    stateless.then(|| {
        error(
            id.clone(),
            METHOD_NOT_FOUND,
            &format!("Method not found: {method} was removed in MCP {STATELESS_REVISION}"),
        )
    })
}

fn error(id: Value, code: i64, message: &str) -> Value {
    json!({"jsonrpc": "2.0", "id": id, "error": {"code": code, "message": message}})
}

/// A boxed future of one batch item's HTTP answer.
pub(crate) type ItemAnswer<B> = Pin<Box<dyn Future<Output = Response<B>> + Send>>;

/// Answers a batch: `items` are its messages, `one` serves one of them as a POST of its
/// own (the framing checks, then rmcp). Returns the status and the JSON body.
pub(crate) async fn answer_batch<B, F>(items: Vec<Value>, one: F) -> (StatusCode, Option<Bytes>)
where
    B: Body<Data = Bytes> + Send + Unpin + 'static,
    F: Fn(Bytes) -> ItemAnswer<B>,
{
    if items.is_empty() {
        let answer = error(
            Value::Null,
            INVALID_REQUEST,
            "Invalid request: an empty batch",
        );
        return (
            StatusCode::BAD_REQUEST,
            Some(Bytes::from(answer.to_string())),
        );
    }
    // Every item runs at once, as separate POSTs would; the answers keep the batch's order.
    let mut running = Vec::with_capacity(items.len());
    for item in items {
        let id = item
            .get("method")
            .and(item.get("id"))
            .filter(|id| !id.is_null())
            .cloned();
        if item.get("method").and_then(Value::as_str) == Some("initialize")
            && let Some(id) = id
        {
            let answer = error(
                id,
                INVALID_REQUEST,
                "Invalid request: initialize must not be part of a batch",
            );
            running.push(tokio::spawn(async move { Some(answer) }));
            continue;
        }
        let response = one(Bytes::from(item.to_string()));
        running.push(tokio::spawn(async move {
            read_answer(response.await, id.as_ref()).await
        }));
    }
    let mut answers = Vec::new();
    for task in running {
        // A task that panicked leaves its item unanswered rather than the batch.
        if let Ok(Some(answer)) = task.await {
            answers.push(answer);
        }
    }
    if answers.is_empty() {
        return (StatusCode::ACCEPTED, None);
    }
    (
        StatusCode::OK,
        Some(Bytes::from(Value::Array(answers).to_string())),
    )
}

/// The JSON-RPC answer in one item's HTTP answer: its JSON body, or the response with
/// `id` in its event stream; `None` for a notification's 202.
async fn read_answer<B>(response: Response<B>, id: Option<&Value>) -> Option<Value>
where
    B: Body<Data = Bytes> + Unpin,
{
    let status = response.status();
    if status == StatusCode::ACCEPTED {
        return None;
    }
    let event_stream = response
        .headers()
        .get(header::CONTENT_TYPE)
        .and_then(|value| value.to_str().ok())
        .is_some_and(|value| value.starts_with("text/event-stream"));
    let mut body = response.into_body();
    let mut read = Vec::new();
    let mut events = SseEvents::default();
    while let Some(Ok(frame)) = std::future::poll_fn(|cx| Pin::new(&mut body).poll_frame(cx)).await
    {
        let Ok(data) = frame.into_data() else {
            continue;
        };
        if !event_stream {
            read.extend_from_slice(&data);
            continue;
        }
        for event in events.push(&data) {
            if let Ok(message) = serde_json::from_str::<Value>(&event)
                && (message.get("result").is_some() || message.get("error").is_some())
                && message.get("id") == id
            {
                return Some(message);
            }
        }
    }
    if !event_stream && let Ok(message) = serde_json::from_slice::<Value>(&read) {
        return Some(message);
    }
    // An answer that is not JSON-RPC (rmcp's plain-text 4xx): the item's id, and the text.
    id.map(|id| {
        let text = String::from_utf8_lossy(&read);
        error(
            id.clone(),
            INVALID_REQUEST,
            &format!("Invalid request: HTTP {status}: {}", text.trim()),
        )
    })
}

/// The `data` of server-sent events, from chunks of a stream.
#[derive(Default)]
struct SseEvents {
    pending: Vec<u8>,
}

impl SseEvents {
    /// The events that `chunk` completes, each one's `data` lines joined.
    fn push(&mut self, chunk: &[u8]) -> Vec<String> {
        // JSON escapes carriage returns, so every raw one is a line ending's.
        self.pending
            .extend(chunk.iter().copied().filter(|byte| *byte != b'\r'));
        let mut events = Vec::new();
        while let Some(end) = self.pending.windows(2).position(|pair| pair == b"\n\n") {
            let event: Vec<u8> = self.pending.drain(..end + 2).collect();
            let text = String::from_utf8_lossy(&event[..end]);
            let data: Vec<&str> = text
                .lines()
                .filter_map(|line| line.strip_prefix("data:"))
                .map(|data| data.strip_prefix(' ').unwrap_or(data))
                .collect();
            if !data.is_empty() {
                events.push(data.join("\n"));
            }
        }
        events
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sse_events_across_chunks() {
        let mut events = SseEvents::default();
        assert!(events.push(b"id: 0/1\ndata: {\"a\"").is_empty());
        assert_eq!(
            events.push(b":1}\n\n: ping\n\ndata: x\r\ndata: y\r\n\r\n"),
            ["{\"a\":1}", "x\ny"]
        );
    }

    #[test]
    fn removed_methods_only_at_the_stateless_revision() {
        let mut headers = HeaderMap::new();
        let ping = json!({"jsonrpc": "2.0", "id": 7, "method": "ping"});
        assert_eq!(removed_method(&headers, &ping), None);
        let meta = json!({"jsonrpc": "2.0", "id": 7, "method": "logging/setLevel",
            "params": {"_meta": {"io.modelcontextprotocol/protocolVersion": "2026-07-28"}}});
        assert_eq!(
            removed_method(&headers, &meta).unwrap()["error"]["code"],
            -32601
        );
        headers.insert("mcp-protocol-version", "2026-07-28".parse().unwrap());
        let answer = removed_method(&headers, &ping).unwrap();
        assert_eq!(answer["id"], 7);
        assert_eq!(answer["error"]["code"], -32601);
        let list = json!({"jsonrpc": "2.0", "id": 7, "method": "tools/list"});
        assert_eq!(removed_method(&headers, &list), None);
        assert!(!accepts_batches(&headers));
        headers.insert("mcp-protocol-version", "2025-03-26".parse().unwrap());
        assert!(accepts_batches(&headers));
    }
}
