//! Shared by the `provider_stream` bench and the `provider_throughput` example: the
//! streamed openai-completions body (a short text, then one tool call whose arguments are
//! `size` bytes in 4 KB deltas; the same bytes as `bench/compare-providers-with-pi.mjs`),
//! a local HTTP server that serves it, the provider run and the floor (a bare SSE decode
//! of the same bytes over the same connection).

#![allow(dead_code)]

use std::sync::Arc;
use std::time::{Duration, Instant};

use futures::StreamExt;
use pi_tool::model::{AssistantMessageEvent, Context, Message, Model, StreamFn, StreamOptions};
use pi_tool::providers::Providers;
use serde_json::json;
use tokio::io::{AsyncReadExt, AsyncWriteExt};

/// Argument bytes per delta.
pub const DELTA: usize = 4096;
/// `{"path":"notes.txt","content":"` (31 bytes) + `"}`.
pub const ARGUMENT_OVERHEAD: usize = 33;

/// The SSE events of one response whose tool-call arguments are `size` bytes.
pub fn body(size: usize) -> Vec<String> {
    let chunk = |delta: serde_json::Value, finish: Option<&str>| {
        let event = json!({
            "id": "chatcmpl-bench", "object": "chat.completion.chunk", "created": 0,
            "model": "gpt-4o-mini",
            "choices": [{"index": 0, "delta": delta, "finish_reason": finish}],
        });
        format!("data: {event}\n\n")
    };
    let mut events = vec![chunk(
        json!({"role": "assistant", "content": "Writing the file now."}),
        None,
    )];
    let prefix = r#"{"path":"notes.txt","content":""#;
    let args = format!(
        "{prefix}{}\"}}",
        "x".repeat(size.saturating_sub(ARGUMENT_OVERHEAD))
    );
    events.push(chunk(
        json!({"tool_calls": [{"index": 0, "id": "call_1", "type": "function",
                "function": {"name": "write", "arguments": ""}}]}),
        None,
    ));
    for piece in args.as_bytes().chunks(DELTA) {
        let piece = std::str::from_utf8(piece).unwrap_or_default();
        events.push(chunk(
            json!({"tool_calls": [{"index": 0, "function": {"arguments": piece}}]}),
            None,
        ));
    }
    events.push(chunk(json!({}), Some("tool_calls")));
    let usage = json!({
        "id": "chatcmpl-bench", "object": "chat.completion.chunk", "created": 0,
        "model": "gpt-4o-mini", "choices": [],
        "usage": {"prompt_tokens": 10, "completion_tokens": 10, "total_tokens": 20},
    });
    events.push(format!("data: {usage}\n\n"));
    events.push("data: [DONE]\n\n".to_owned());
    events
}

/// Serves `events` (each its own write, chunked) to every request on 127.0.0.1; returns
/// the origin.
pub async fn serve(events: Vec<String>) -> String {
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let origin = format!("http://{}", listener.local_addr().unwrap());
    let events = Arc::new(events);
    tokio::spawn(async move {
        loop {
            let Ok((mut socket, _)) = listener.accept().await else {
                return;
            };
            // One write per event: without this, Nagle's algorithm and delayed ACKs add
            // 40 ms stalls that would be measured as the provider's time.
            let _ = socket.set_nodelay(true);
            let events = events.clone();
            tokio::spawn(async move {
                loop {
                    if read_request(&mut socket).await.is_none() {
                        return;
                    }
                    let head = "HTTP/1.1 200 OK\r\ncontent-type: text/event-stream\r\ntransfer-encoding: chunked\r\n\r\n";
                    if socket.write_all(head.as_bytes()).await.is_err() {
                        return;
                    }
                    for event in events.iter() {
                        let frame = format!("{:x}\r\n{event}\r\n", event.len());
                        if socket.write_all(frame.as_bytes()).await.is_err() {
                            return;
                        }
                    }
                    if socket.write_all(b"0\r\n\r\n").await.is_err() {
                        return;
                    }
                }
            });
        }
    });
    origin
}

/// Reads one request (headers and a content-length body); `None` at EOF.
async fn read_request(socket: &mut tokio::net::TcpStream) -> Option<()> {
    let mut buf = Vec::new();
    let mut byte = [0u8; 4096];
    let header_end = loop {
        if let Some(i) = buf.windows(4).position(|w| w == b"\r\n\r\n") {
            break i + 4;
        }
        let n = socket.read(&mut byte).await.ok()?;
        if n == 0 {
            return None;
        }
        buf.extend_from_slice(&byte[..n]);
    };
    let head = String::from_utf8_lossy(&buf[..header_end]).to_ascii_lowercase();
    let length: usize = head
        .lines()
        .find_map(|l| l.strip_prefix("content-length:"))
        .and_then(|v| v.trim().parse().ok())
        .unwrap_or(0);
    let mut have = buf.len() - header_end;
    while have < length {
        let n = socket.read(&mut byte).await.ok()?;
        if n == 0 {
            return None;
        }
        have += n;
    }
    Some(())
}

/// The model the provider calls: openai-completions at `origin`.
pub fn model(origin: &str) -> Model {
    let mut model = Model::new("gpt-4o-mini", "openai-completions", "openai");
    model.base_url = format!("{origin}/v1");
    model.context_window = 128_000;
    model.max_tokens = 16_384;
    model
}

/// One provider run to `done`; checks the arguments arrived whole.
pub async fn provider_run(providers: &Providers, model: &Model, size: usize) -> Duration {
    let context = Context {
        messages: vec![Message::user_text("Write notes.txt.")],
        ..Context::default()
    };
    let options = StreamOptions {
        api_key: Some("bench".into()),
        ..StreamOptions::default()
    };
    let start = Instant::now();
    let mut stream = providers.stream(model, &context, options);
    let mut last = None;
    while let Some(event) = stream.next().await {
        last = Some(event);
    }
    let elapsed = start.elapsed();
    match last {
        Some(AssistantMessageEvent::Done { message, .. }) => {
            let call = message.tool_calls().next().expect("a tool call");
            let content = call.arguments["content"].as_str().map_or(0, str::len);
            assert_eq!(content, size.saturating_sub(ARGUMENT_OVERHEAD));
        }
        other => panic!("the provider run did not end with done: {other:?}"),
    }
    elapsed
}

/// The floor: the same request and bytes, split into SSE events (lines, `data:` fields,
/// blank-line dispatch) without reading their JSON.
pub async fn floor_run(client: &reqwest::Client, model: &Model) -> Duration {
    let start = Instant::now();
    let mut response = client
        .post(format!("{}/chat/completions", model.base_url))
        .header("content-type", "application/json")
        .body("{}")
        .send()
        .await
        .unwrap();
    let mut pending = Vec::new();
    let mut data = Vec::new();
    let mut events = 0usize;
    while let Some(chunk) = response.chunk().await.unwrap() {
        pending.extend_from_slice(&chunk);
        let mut start = 0;
        while let Some(i) = pending[start..].iter().position(|&b| b == b'\n') {
            let line = &pending[start..start + i];
            if line.is_empty() {
                events += 1;
                data.clear();
            } else if let Some(rest) = line.strip_prefix(b"data: ") {
                data.extend_from_slice(rest);
            }
            start += i + 1;
        }
        pending.drain(..start);
    }
    assert!(events > 3);
    start.elapsed()
}
