//! The `anthropic-messages` provider where no recording shows it: the key stays secret,
//! aborts read as pi-ai reports them, retries happen only where pi-ai retries, a missing
//! key is one error event, a real llama-server answers, and large tool arguments stream
//! in linear time. (Byte-for-byte parity with pi-ai's recordings is the conformance
//! harness's: `cargo test -p pi-tool-conformance --test providers` runs every fixture in
//! `conformance/providers/fixtures/anthropic-messages/`.)
#![cfg(feature = "anthropic-messages")]

use std::sync::Arc;
use std::time::Duration;

use futures::StreamExt;
use pi_tool::AbortController;
use pi_tool::model::{AssistantMessageEvent, Context, Message, Model, StreamFn, StreamOptions};
use pi_tool::providers::AnthropicMessages;
use serde_json::{Value, json};
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::TcpListener;

/// Reads one request (headers and a content-length body); `None` at EOF.
async fn read_request(socket: &mut tokio::net::TcpStream) -> Option<()> {
    let mut buf = Vec::new();
    let mut chunk = [0u8; 8192];
    let head_end = loop {
        let n = socket.read(&mut chunk).await.ok()?;
        if n == 0 {
            return None;
        }
        buf.extend_from_slice(&chunk[..n]);
        if let Some(at) = buf.windows(4).position(|w| w == b"\r\n\r\n") {
            break at;
        }
    };
    let head = String::from_utf8_lossy(&buf[..head_end]).to_ascii_lowercase();
    let length: usize = head
        .split("\r\n")
        .find_map(|l| l.strip_prefix("content-length:"))
        .and_then(|v| v.trim().parse().ok())
        .unwrap_or(0);
    let mut have = buf.len() - head_end - 4;
    while have < length {
        let n = socket.read(&mut chunk).await.ok()?;
        if n == 0 {
            break;
        }
        have += n;
    }
    Some(())
}

async fn write_response(socket: &mut tokio::net::TcpStream, response: &Value) {
    let status = response["status"].as_u64().unwrap_or(200);
    let mut head = format!("HTTP/1.1 {status} X\r\n");
    let headers = response
        .get("headers")
        .cloned()
        .unwrap_or_else(|| json!({"content-type": "text/event-stream"}));
    for (name, value) in headers.as_object().unwrap() {
        head.push_str(&format!("{name}: {}\r\n", value.as_str().unwrap()));
    }
    head.push_str("transfer-encoding: chunked\r\nconnection: close\r\n\r\n");
    if socket.write_all(head.as_bytes()).await.is_err() {
        return;
    }
    let delay = Duration::from_millis(response["delayMs"].as_u64().unwrap_or(0).max(3));
    let disconnect = response["disconnectAfterChunk"].as_u64();
    for (i, chunk) in response["chunks"]
        .as_array()
        .cloned()
        .unwrap_or_default()
        .iter()
        .enumerate()
    {
        tokio::time::sleep(delay).await;
        let bytes = match chunk {
            Value::String(s) => s.as_bytes().to_vec(),
            other => base64_decode(other["base64"].as_str().unwrap()),
        };
        let mut framed = format!("{:x}\r\n", bytes.len()).into_bytes();
        framed.extend_from_slice(&bytes);
        framed.extend_from_slice(b"\r\n");
        if socket.write_all(&framed).await.is_err() {
            return;
        }
        let _ = socket.flush().await;
        if disconnect == Some(i as u64) {
            tokio::time::sleep(delay).await;
            return;
        }
    }
    tokio::time::sleep(delay).await;
    let _ = socket.write_all(b"0\r\n\r\n").await;
    let _ = socket.flush().await;
}

fn base64_decode(text: &str) -> Vec<u8> {
    let alphabet = b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
    let mut out = Vec::new();
    let mut acc = 0u32;
    let mut bits = 0;
    for c in text.bytes().filter(|c| *c != b'=') {
        let v = alphabet.iter().position(|a| *a == c).unwrap() as u32;
        acc = (acc << 6) | v;
        bits += 6;
        if bits >= 8 {
            bits -= 8;
            out.push((acc >> bits) as u8);
            acc &= (1 << bits) - 1;
        }
    }
    out
}

fn default_model() -> Value {
    json!({
        "id": "claude-sonnet-4-5", "name": "Claude Sonnet 4.5", "api": "anthropic-messages",
        "provider": "anthropic", "baseUrl": "{{origin}}", "reasoning": true,
        "input": ["text", "image"],
        "cost": {"input": 3, "output": 15, "cacheRead": 0.3, "cacheWrite": 3.75},
        "contextWindow": 200000, "maxTokens": 64000
    })
}

/// A server answering request `i` with `responses[i]` (the last one repeats), and how
/// many requests came.
async fn serve_each(responses: Vec<Value>) -> (u16, Arc<std::sync::atomic::AtomicUsize>) {
    use std::sync::atomic::{AtomicUsize, Ordering};
    let listener = TcpListener::bind("127.0.0.1:0").await.unwrap();
    let port = listener.local_addr().unwrap().port();
    let count = Arc::new(AtomicUsize::new(0));
    let seen = count.clone();
    tokio::spawn(async move {
        while let Ok((mut socket, _)) = listener.accept().await {
            let responses = responses.clone();
            let seen = seen.clone();
            tokio::spawn(async move {
                if read_request(&mut socket).await.is_none() {
                    return;
                }
                let i = seen.fetch_add(1, Ordering::SeqCst);
                let response = &responses[i.min(responses.len() - 1)];
                write_response(&mut socket, response).await;
            });
        }
    });
    (port, count)
}

fn test_model(port: u16) -> Model {
    let mut model = default_model();
    model["baseUrl"] = json!(format!("http://127.0.0.1:{port}"));
    serde_json::from_value(model).unwrap()
}

fn hello() -> Context {
    Context {
        messages: vec![Message::user_text("hi")],
        ..Context::default()
    }
}

fn sse_ok() -> Value {
    let chunks = [
        r#"event: message_start
data: {"type":"message_start","message":{"id":"m1","model":"claude-x","usage":{"input_tokens":3,"output_tokens":1}}}

"#,
        r#"event: content_block_start
data: {"type":"content_block_start","index":0,"content_block":{"type":"text","text":""}}

"#,
        r#"event: content_block_delta
data: {"type":"content_block_delta","index":0,"delta":{"type":"text_delta","text":"ok"}}

"#,
        r#"event: content_block_stop
data: {"type":"content_block_stop","index":0}

event: message_delta
data: {"type":"message_delta","delta":{"stop_reason":"end_turn"},"usage":{"output_tokens":2}}

event: message_stop
data: {"type":"message_stop"}

"#,
    ];
    json!({"status": 200, "chunks": chunks})
}

async fn last_event(
    model: &Model,
    options: StreamOptions,
) -> (Vec<&'static str>, Arc<pi_tool::model::AssistantMessage>) {
    let events: Vec<AssistantMessageEvent> = AnthropicMessages::new()
        .stream(model, &hello(), options)
        .collect()
        .await;
    let kinds = events.iter().map(|e| e.name()).collect();
    match events.last() {
        Some(AssistantMessageEvent::Done { message, .. }) => (kinds, message.clone()),
        Some(AssistantMessageEvent::Error { error, .. }) => (kinds, error.clone()),
        other => panic!("no final event: {other:?}"),
    }
}

#[tokio::test]
async fn the_key_never_shows_in_errors_events_or_debug() {
    let key = "sk-ant-api03-very-secret-key-0001";
    // A server that echoes the key it refused, in the HTTP error and in an SSE error.
    let refused = json!({"status": 401, "headers": {"content-type": "application/json"},
        "chunks": [format!(r#"{{"type":"error","error":{{"message":"bad key {key}"}}}}"#)]});
    let echoed = json!({"status": 200, "chunks": [format!("event: error\ndata: key {key}\n\n")]});
    for response in [refused, echoed] {
        let (port, _) = serve_each(vec![response]).await;
        let model = test_model(port);
        let options = StreamOptions {
            api_key: Some(key.into()),
            ..StreamOptions::default()
        };
        let provider = AnthropicMessages::new();
        assert!(!format!("{provider:?} {options:?}").contains(key));
        let events: Vec<AssistantMessageEvent> =
            provider.stream(&model, &hello(), options).collect().await;
        let text = format!("{events:?} {}", serde_json::to_string(&events).unwrap());
        assert!(!text.contains(key), "{text}");
        assert!(text.contains("<redacted>"), "{text}");
    }
}

#[tokio::test]
async fn a_missing_key_is_one_error_event_naming_what_to_set() {
    let mut model = test_model(9);
    model.provider = "no-such-provider".into();
    let (kinds, message) = last_event(&model, StreamOptions::default()).await;
    assert_eq!(kinds, ["error"]);
    assert_eq!(
        message.error_message.as_deref(),
        Some("No API key for provider: no-such-provider")
    );
    if std::env::var_os("ANTHROPIC_API_KEY").is_none()
        && std::env::var_os("ANTHROPIC_OAUTH_TOKEN").is_none()
    {
        model.provider = "anthropic".into();
        let (_, message) = last_event(&model, StreamOptions::default()).await;
        let text = message.error_message.clone().unwrap();
        assert!(text.contains("ANTHROPIC_API_KEY"), "{text}");
    }
    // A caller header that authenticates is enough (pi-ai's assertRequestAuth).
    let (port, count) = serve_each(vec![sse_ok()]).await;
    let mut model = test_model(port);
    model.provider = "no-such-provider".into();
    let mut options = StreamOptions::default();
    options
        .headers
        .insert("Authorization".into(), Some("Bearer proxy".into()));
    let (_, message) = last_event(&model, options).await;
    assert_eq!(message.stop_reason, pi_tool::model::StopReason::Stop);
    assert_eq!(count.load(std::sync::atomic::Ordering::SeqCst), 1);
}

#[tokio::test]
async fn aborts_read_as_pi_ai_reports_them() {
    // Aborted before the request: the retry wrapper's text.
    let controller = AbortController::new();
    controller.abort();
    let (port, _) = serve_each(vec![sse_ok()]).await;
    let options = StreamOptions {
        api_key: Some("k".into()),
        signal: controller.signal(),
        ..StreamOptions::default()
    };
    let (kinds, message) = last_event(&test_model(port), options).await;
    assert_eq!(kinds, ["error"]);
    assert_eq!(message.stop_reason, pi_tool::model::StopReason::Aborted);
    assert_eq!(message.error_message.as_deref(), Some("Request aborted"));

    // Aborted while a body read waits: undici's text, and what arrived is kept.
    let mut slow = sse_ok();
    slow["delayMs"] = json!(400);
    let (port, _) = serve_each(vec![slow]).await;
    let controller = AbortController::new();
    let options = StreamOptions {
        api_key: Some("k".into()),
        signal: controller.signal(),
        ..StreamOptions::default()
    };
    let model = test_model(port);
    let mut stream = AnthropicMessages::new().stream(&model, &hello(), options);
    let mut kinds = Vec::new();
    let mut last = None;
    while let Some(event) = stream.next().await {
        kinds.push(event.name());
        if event.name() == "text_start" {
            controller.abort();
        }
        last = Some(event);
    }
    assert_eq!(kinds, ["start", "text_start", "error"]);
    let Some(AssistantMessageEvent::Error { reason, error }) = last else {
        panic!("{last:?}");
    };
    assert_eq!(reason, pi_tool::model::StopReason::Aborted);
    assert_eq!(
        error.error_message.as_deref(),
        Some("This operation was aborted")
    );
    assert_eq!(error.content.len(), 1);
}

#[tokio::test]
async fn retries_only_when_asked_and_only_what_pi_ai_retries() {
    let busy = json!({"status": 429, "headers": {"retry-after-ms": "10"},
        "chunks": [r#"{"message":"slow","type":"rate_limit_error"}"#]});
    let bad = json!({"status": 400, "chunks": ["{}"]});

    // Default: no retry.
    let (port, count) = serve_each(vec![busy.clone(), sse_ok()]).await;
    let options = StreamOptions {
        api_key: Some("k".into()),
        ..StreamOptions::default()
    };
    let (_, message) = last_event(&test_model(port), options.clone()).await;
    assert_eq!(message.error_message.as_deref(), Some("429 slow"));
    assert_eq!(count.load(std::sync::atomic::Ordering::SeqCst), 1);

    // max_retries: a 429 is retried, then the stream succeeds.
    let (port, count) = serve_each(vec![busy.clone(), sse_ok()]).await;
    let retrying = StreamOptions {
        max_retries: Some(2),
        ..options.clone()
    };
    let (kinds, message) = last_event(&test_model(port), retrying.clone()).await;
    assert_eq!(kinds.last(), Some(&"done"));
    assert_eq!(message.text(), "ok");
    assert_eq!(message.model, "claude-x");
    assert_eq!(count.load(std::sync::atomic::Ordering::SeqCst), 2);

    // A 400 is final, and retries stop after max_retries.
    let (port, count) = serve_each(vec![bad]).await;
    let (_, message) = last_event(&test_model(port), retrying.clone()).await;
    assert_eq!(message.error_message.as_deref(), Some("400 {}"));
    assert_eq!(count.load(std::sync::atomic::Ordering::SeqCst), 1);
    let (port, count) = serve_each(vec![busy]).await;
    let (_, message) = last_event(&test_model(port), retrying).await;
    assert_eq!(message.error_message.as_deref(), Some("429 slow"));
    assert_eq!(count.load(std::sync::atomic::Ordering::SeqCst), 3);

    // No server: the SDK's connection error.
    let port = {
        let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
        listener.local_addr().unwrap().port()
    };
    let (_, message) = last_event(&test_model(port), options).await;
    assert_eq!(message.error_message.as_deref(), Some("Connection error."));
}

/// Against a real llama.cpp `llama-server` (its `/v1/messages` endpoint), when
/// `PI_TOOL_LOCAL_LLM` names one (the origin; `scripts/local-llm/local-llm start` prints it,
/// `.ci/run` sets it).
#[tokio::test]
async fn a_local_llama_server_answers() {
    let Ok(origin) = std::env::var("PI_TOOL_LOCAL_LLM") else {
        assert!(
            std::env::var_os("CI").is_none(),
            "PI_TOOL_LOCAL_LLM is not set under CI: .ci/run starts scripts/local-llm/local-llm"
        );
        eprintln!(
            "PI_TOOL_LOCAL_LLM not set: skipped (scripts/local-llm/local-llm start prints it)"
        );
        return;
    };
    let base_url = origin.trim_end_matches('/').to_owned();
    let mut model = Model::new("local", "anthropic-messages", "llama-cpp");
    model.base_url = base_url;
    model.max_tokens = 32;
    model.context_window = 4096;
    let options = StreamOptions {
        api_key: Some("none".into()),
        ..StreamOptions::default()
    };
    let events: Vec<AssistantMessageEvent> = AnthropicMessages::new()
        .stream(&model, &hello(), options)
        .collect()
        .await;
    let kinds: Vec<_> = events.iter().map(|e| e.name()).collect();
    let Some(AssistantMessageEvent::Done { message, .. }) = events.last() else {
        panic!("{events:?}");
    };
    assert_eq!(kinds.first(), Some(&"start"));
    assert!(message.usage.output > 0, "{message:?}");
    assert!(!message.content.is_empty(), "{kinds:?}");
}

/// A tool call whose arguments stream in 4 KB `input_json_delta`s costs a flat time per
/// byte from 100 KB to 10 MB (pi-ai re-parses the whole text on every delta). Timing
/// depends on the machine, so it runs on request: `cargo test ... -- --ignored`.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
#[ignore = "timing; run with --ignored on a quiet machine"]
async fn large_tool_arguments_stream_in_linear_time() {
    async fn run(size: usize) -> Duration {
        let mut chunks = vec![
            r#"event: message_start
data: {"type":"message_start","message":{"id":"m","model":"x","usage":{"input_tokens":1,"output_tokens":1}}}

event: content_block_start
data: {"type":"content_block_start","index":0,"content_block":{"type":"tool_use","id":"t","name":"write","input":{}}}

"#
            .to_owned(),
        ];
        let mut body = String::from(r#"{"path": "a.txt", "content": ""#);
        body.push_str(&"x".repeat(size));
        body.push_str(r#""}"#);
        let mut batch = String::new();
        for piece in body.as_bytes().chunks(4096) {
            let piece = std::str::from_utf8(piece).unwrap();
            let delta = json!({"type": "content_block_delta", "index": 0,
                "delta": {"type": "input_json_delta", "partial_json": piece}});
            batch.push_str(&format!("event: content_block_delta\ndata: {delta}\n\n"));
            if batch.len() > 256 * 1024 {
                chunks.push(std::mem::take(&mut batch));
            }
        }
        batch.push_str("event: content_block_stop\ndata: {\"type\":\"content_block_stop\",\"index\":0}\n\nevent: message_delta\ndata: {\"type\":\"message_delta\",\"delta\":{\"stop_reason\":\"tool_use\"},\"usage\":{\"output_tokens\":5}}\n\nevent: message_stop\ndata: {\"type\":\"message_stop\"}\n\n");
        chunks.push(batch);
        let (port, _) =
            serve_each(vec![json!({"status": 200, "chunks": chunks, "delayMs": 0})]).await;
        let model = test_model(port);
        let options = StreamOptions {
            api_key: Some("k".into()),
            ..StreamOptions::default()
        };
        let started = std::time::Instant::now();
        let (_, message) = last_event(&model, options).await;
        let elapsed = started.elapsed();
        let call = message.tool_calls().next().unwrap();
        assert_eq!(call.arguments["content"].as_str().unwrap().len(), size);
        elapsed
    }
    let mut per_byte = Vec::new();
    for size in [100_000usize, 1_000_000, 10_000_000] {
        let elapsed = run(size).await;
        let ns = elapsed.as_nanos() as f64 / size as f64;
        eprintln!("{size} bytes: {elapsed:?} ({ns:.1} ns/byte)");
        per_byte.push(ns);
    }
    assert!(per_byte[2] < per_byte[1] * 3.0, "{per_byte:?}");
}
