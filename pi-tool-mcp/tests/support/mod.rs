//! A small MCP client over streamable HTTP for the load and scale-out tests (and, by
//! path, examples/durable-approvals' replica tests), with the replicas and the
//! round-robin proxy of `replicas.rs`: reqwest for
//! the HTTP, and server-sent events read by hand, so that every message the server
//! sends on a POST's response is seen (rmcp's own client would hide duplicates).
#![allow(dead_code)]

pub mod replicas;

use std::time::Duration;

use serde_json::{Value, json};

pub const PROTOCOL_VERSION: &str = "2025-06-18";

/// One client session (or, against a stateless server, one client without a session).
#[derive(Clone)]
pub struct Session {
    http: reqwest::Client,
    url: String,
    pub id: Option<String>,
}

/// What one POST's response carried: every JSON-RPC message, in order.
#[derive(Debug)]
pub struct Answer {
    pub status: u16,
    pub messages: Vec<Value>,
}

impl Answer {
    /// The responses (messages with an `id`) among the messages.
    pub fn responses(&self) -> Vec<&Value> {
        self.messages
            .iter()
            .filter(|m| m.get("id").is_some() && m.get("method").is_none())
            .collect()
    }

    /// The `notifications/progress` among the messages.
    pub fn progress(&self) -> Vec<&Value> {
        self.messages
            .iter()
            .filter(|m| m["method"] == "notifications/progress")
            .collect()
    }
}

/// A client whose connections are not pooled: each POST is its own connection, as 1 000
/// concurrent calls need anyway, and closing a response closes its connection.
pub fn http_client() -> reqwest::Client {
    reqwest::Client::builder()
        .no_proxy()
        .pool_max_idle_per_host(0)
        .build()
        .expect("a plain HTTP client builds")
}

impl Session {
    /// `initialize` and `notifications/initialized` against `url`; keeps the
    /// `Mcp-Session-Id` the server hands out, if any.
    pub async fn open(http: &reqwest::Client, url: &str) -> Session {
        let mut session = Session {
            http: http.clone(),
            url: url.to_owned(),
            id: None,
        };
        let response = session
            .send(
                &json!({"jsonrpc": "2.0", "id": 0, "method": "initialize", "params": {
                "protocolVersion": PROTOCOL_VERSION, "capabilities": {},
                "clientInfo": {"name": "load-test", "version": "0"}}}),
            )
            .await;
        session.id = response
            .headers()
            .get("mcp-session-id")
            .and_then(|v| v.to_str().ok())
            .map(str::to_owned);
        let answer = read_answer(response).await;
        assert_eq!(answer.status, 200, "{answer:?}");
        assert!(
            answer.responses()[0]["result"]["serverInfo"].is_object(),
            "{answer:?}"
        );
        let done = session
            .send(&json!({"jsonrpc": "2.0", "method": "notifications/initialized"}))
            .await;
        assert_eq!(done.status().as_u16(), 202);
        session
    }

    /// POSTs one JSON-RPC message and returns the response once its headers arrived.
    pub async fn send(&self, message: &Value) -> reqwest::Response {
        let mut request = self
            .http
            .post(&self.url)
            .header("content-type", "application/json")
            .header("accept", "application/json, text/event-stream")
            .header("mcp-protocol-version", PROTOCOL_VERSION)
            .body(message.to_string());
        if let Some(id) = &self.id {
            request = request.header("mcp-session-id", id);
        }
        tokio::time::timeout(Duration::from_secs(60), request.send())
            .await
            .expect("the server answers within 60 s")
            .expect("the server accepts the request")
    }

    /// A `tools/call` request (with a progress token when `progress` is set).
    pub fn call_message(id: u64, tool: &str, arguments: Value, progress: bool) -> Value {
        let mut params = json!({"name": tool, "arguments": arguments});
        if progress {
            params["_meta"] = json!({"progressToken": format!("p{id}")});
        }
        json!({"jsonrpc": "2.0", "id": id, "method": "tools/call", "params": params})
    }

    /// Calls `tool` and reads everything the server sends on the response.
    pub async fn call(&self, id: u64, tool: &str, arguments: Value, progress: bool) -> Answer {
        let response = self
            .send(&Self::call_message(id, tool, arguments, progress))
            .await;
        read_answer(response).await
    }

    /// Sends `notifications/cancelled` for request `id`.
    pub async fn cancel(&self, id: u64) -> u16 {
        let message = json!({"jsonrpc": "2.0", "method": "notifications/cancelled",
            "params": {"requestId": id, "reason": "load test"}});
        self.send(&message).await.status().as_u16()
    }
}

/// Reads a response to its end: one JSON body, or every SSE event's data as JSON.
pub async fn read_answer(mut response: reqwest::Response) -> Answer {
    let status = response.status().as_u16();
    let sse = response
        .headers()
        .get("content-type")
        .and_then(|v| v.to_str().ok())
        .is_some_and(|v| v.starts_with("text/event-stream"));
    let mut body = Vec::new();
    let mut messages = Vec::new();
    let mut events = SseEvents::default();
    loop {
        let chunk = tokio::time::timeout(Duration::from_secs(60), response.chunk())
            .await
            .expect("the body makes progress within 60 s")
            .expect("the body arrives whole");
        let Some(chunk) = chunk else { break };
        if sse {
            messages.extend(events.push(&chunk));
        } else {
            body.extend_from_slice(&chunk);
        }
    }
    if !sse && !body.is_empty() {
        messages.push(serde_json::from_slice(&body).expect("a JSON body"));
    }
    Answer { status, messages }
}

/// Reads SSE events up to the first message that satisfies `until` (keeping the
/// response open), for a test that must know a call has started.
pub async fn read_until(
    response: &mut reqwest::Response,
    events: &mut SseEvents,
    until: impl Fn(&Value) -> bool,
) -> Vec<Value> {
    let mut seen = Vec::new();
    loop {
        let chunk = tokio::time::timeout(Duration::from_secs(60), response.chunk())
            .await
            .expect("the stream makes progress within 60 s")
            .expect("the stream stays whole")
            .expect("the stream stays open");
        for message in events.push(&chunk) {
            let done = until(&message);
            seen.push(message);
            if done {
                return seen;
            }
        }
    }
}

/// A server-sent-events reader: `data:` lines of each event, parsed as JSON (events
/// without data, such as rmcp's priming event and keep-alive comments, are skipped).
#[derive(Default)]
pub struct SseEvents {
    buffer: String,
}

impl SseEvents {
    pub fn push(&mut self, chunk: &[u8]) -> Vec<Value> {
        self.buffer.push_str(&String::from_utf8_lossy(chunk));
        let mut out = Vec::new();
        while let Some(end) = self.buffer.find("\n\n") {
            let event: String = self.buffer.drain(..end + 2).collect();
            let data: Vec<&str> = event
                .lines()
                .filter_map(|line| line.strip_prefix("data:"))
                .map(|d| d.strip_prefix(' ').unwrap_or(d))
                .collect();
            let data = data.join("\n");
            if !data.trim().is_empty() {
                out.push(serde_json::from_str(&data).expect("SSE data is JSON"));
            }
        }
        out
    }
}

/// This process's peak resident memory (VmHWM) and current (VmRSS), in MiB.
pub fn rss_mib(pid: Option<u32>) -> (u64, u64) {
    let path = match pid {
        Some(pid) => format!("/proc/{pid}/status"),
        None => "/proc/self/status".to_owned(),
    };
    let status = std::fs::read_to_string(path).unwrap_or_default();
    let field = |name: &str| {
        status
            .lines()
            .find_map(|line| line.strip_prefix(name))
            .and_then(|rest| {
                rest.trim()
                    .trim_end_matches("kB")
                    .trim()
                    .parse::<u64>()
                    .ok()
            })
            .map_or(0, |kib| kib / 1024)
    };
    (field("VmHWM:"), field("VmRSS:"))
}

/// The text of a `tools/call` result.
pub fn result_text(response: &Value) -> &str {
    response["result"]["content"][0]["text"]
        .as_str()
        .unwrap_or_default()
}
