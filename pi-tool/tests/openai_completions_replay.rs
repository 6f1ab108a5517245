//! The `openai-completions` provider against a real local HTTP server: the request it
//! sends, the events it streams, and each way a call fails (HTTP errors, a dropped
//! connection, an abort, no key, a refused connection, retries when asked). The
//! byte-for-byte comparison with pi-ai is the conformance harness's; these tests pin the
//! behaviour that harness cannot reach (aborts, retries, secrecy).
#![cfg(feature = "openai-completions")]

use std::sync::{Arc, Mutex};
use std::time::Duration;

use futures::StreamExt;
use pi_tool::AbortController;
use pi_tool::model::{
    AssistantContent, AssistantMessageEvent, Context, Message, Model, StopReason, StreamFn,
    StreamOptions,
};
use pi_tool::providers::{OpenAiCompletions, Providers};
use serde_json::{Value, json};
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::{TcpListener, TcpStream};

/// What the server does with one connection.
#[derive(Clone)]
enum Reply {
    /// A status, headers and body chunks (each one chunked-transfer frame); after the
    /// last, the body ends, or (with `drop`) the socket closes without ending it.
    Send {
        status: u16,
        headers: Vec<(&'static str, String)>,
        chunks: Vec<String>,
        drop: bool,
    },
    /// Sends the headers and first chunk, then waits (for an abort).
    Stall { chunk: String },
    /// Never answers.
    Silent,
}

fn sse(chunks: &[Value]) -> Vec<String> {
    let mut out: Vec<String> = chunks.iter().map(|c| format!("data: {c}\n\n")).collect();
    out.push("data: [DONE]\n\n".to_owned());
    out
}

fn ok(chunks: Vec<String>) -> Reply {
    Reply::Send {
        status: 200,
        headers: vec![("content-type", "text/event-stream".to_owned())],
        chunks,
        drop: false,
    }
}

/// A received request: its head (request line and headers) and body.
#[derive(Debug, Clone)]
struct Request {
    head: String,
    body: Value,
}

impl Request {
    fn header(&self, name: &str) -> Option<String> {
        self.head.lines().find_map(|line| {
            let (n, v) = line.split_once(':')?;
            n.eq_ignore_ascii_case(name).then(|| v.trim().to_owned())
        })
    }
}

/// Serves `replies` to successive connections; returns the base URL and the requests.
async fn serve(replies: Vec<Reply>) -> (String, Arc<Mutex<Vec<Request>>>) {
    let listener = TcpListener::bind("127.0.0.1:0").await.expect("bind");
    let base = format!("http://{}/v1", listener.local_addr().expect("addr"));
    let seen = Arc::new(Mutex::new(Vec::new()));
    let log = seen.clone();
    tokio::spawn(async move {
        for reply in replies {
            let Ok((mut socket, _)) = listener.accept().await else {
                return;
            };
            let request = read_request(&mut socket).await;
            log.lock().expect("log").push(request);
            tokio::spawn(async move { answer(socket, reply).await });
        }
    });
    (base, seen)
}

async fn read_request(socket: &mut TcpStream) -> Request {
    let mut data = Vec::new();
    let mut buf = [0u8; 4096];
    let head_end = loop {
        let n = socket.read(&mut buf).await.unwrap_or(0);
        if n == 0 {
            break data.len();
        }
        data.extend_from_slice(&buf[..n]);
        if let Some(i) = data.windows(4).position(|w| w == b"\r\n\r\n") {
            break i + 4;
        }
    };
    let head = String::from_utf8_lossy(&data[..head_end]).into_owned();
    let length: usize = head
        .lines()
        .find_map(|l| {
            let (n, v) = l.split_once(':')?;
            n.eq_ignore_ascii_case("content-length")
                .then(|| v.trim().parse().ok())?
        })
        .unwrap_or(0);
    while data.len() < head_end + length {
        let n = socket.read(&mut buf).await.unwrap_or(0);
        if n == 0 {
            break;
        }
        data.extend_from_slice(&buf[..n]);
    }
    let body = serde_json::from_slice(&data[head_end..]).unwrap_or(Value::Null);
    Request { head, body }
}

async fn answer(mut socket: TcpStream, reply: Reply) {
    let head = |status: u16, headers: &[(&str, String)]| {
        let mut head =
            format!("HTTP/1.1 {status} X\r\ntransfer-encoding: chunked\r\nconnection: close\r\n");
        for (n, v) in headers {
            head.push_str(&format!("{n}: {v}\r\n"));
        }
        head.push_str("\r\n");
        head
    };
    let frame = |chunk: &str| format!("{:x}\r\n{chunk}\r\n", chunk.len());
    match reply {
        Reply::Send {
            status,
            headers,
            chunks,
            drop,
        } => {
            let _ = socket.write_all(head(status, &headers).as_bytes()).await;
            for chunk in chunks {
                let _ = socket.write_all(frame(&chunk).as_bytes()).await;
                let _ = socket.flush().await;
                tokio::time::sleep(Duration::from_millis(5)).await;
            }
            if !drop {
                let _ = socket.write_all(b"0\r\n\r\n").await;
                let _ = socket.flush().await;
                tokio::time::sleep(Duration::from_millis(50)).await;
            }
        }
        Reply::Stall { chunk } => {
            let headers = [("content-type", "text/event-stream".to_owned())];
            let _ = socket.write_all(head(200, &headers).as_bytes()).await;
            let _ = socket.write_all(frame(&chunk).as_bytes()).await;
            let _ = socket.flush().await;
            tokio::time::sleep(Duration::from_secs(30)).await;
        }
        Reply::Silent => tokio::time::sleep(Duration::from_secs(30)).await,
    }
}

fn model(base_url: &str) -> Model {
    let mut model = Model::new("gpt-4o-mini", "openai-completions", "openai");
    model.base_url = base_url.to_owned();
    model.input = vec!["text".into(), "image".into()];
    model.context_window = 128_000;
    model.max_tokens = 16_384;
    model.cost.input = 0.15;
    model.cost.output = 0.6;
    model
}

fn context() -> Context {
    Context {
        system_prompt: "Be brief.".into(),
        messages: vec![Message::user_text("Hello")],
        ..Context::default()
    }
}

const KEY: &str = "sk-test-secret-0123456789";

fn options() -> StreamOptions {
    StreamOptions {
        api_key: Some(KEY.into()),
        ..StreamOptions::default()
    }
}

async fn collect(
    provider: &dyn StreamFn,
    model: &Model,
    options: StreamOptions,
) -> Vec<AssistantMessageEvent> {
    let stream = provider.stream(model, &context(), options);
    tokio::time::timeout(Duration::from_secs(20), stream.collect::<Vec<_>>())
        .await
        .expect("the stream ends")
}

fn kinds(events: &[AssistantMessageEvent]) -> Vec<&'static str> {
    events.iter().map(|e| e.name()).collect()
}

fn final_error(events: &[AssistantMessageEvent]) -> (StopReason, String) {
    match events.last() {
        Some(AssistantMessageEvent::Error { reason, error }) => {
            (*reason, error.error_message.clone().unwrap_or_default())
        }
        other => panic!("expected an error event, got {other:?}"),
    }
}

fn text_chunks() -> Vec<String> {
    sse(&[
        json!({"id": "c1", "model": "gpt-4o-mini-2024-07-18", "choices": [{"index": 0, "delta": {"role": "assistant", "content": "Hel"}, "finish_reason": null}]}),
        json!({"id": "c1", "model": "gpt-4o-mini-2024-07-18", "choices": [{"index": 0, "delta": {"content": "lo"}, "finish_reason": "stop"}]}),
        json!({"id": "c1", "choices": [], "usage": {"prompt_tokens": 10, "completion_tokens": 2, "prompt_tokens_details": {"cached_tokens": 4}}}),
    ])
}

#[tokio::test]
async fn streams_text_and_sends_pi_ais_request() {
    let (base, seen) = serve(vec![ok(text_chunks())]).await;
    let events = collect(&Providers::new(), &model(&base), options()).await;
    assert_eq!(
        kinds(&events),
        [
            "start",
            "text_start",
            "text_delta",
            "text_delta",
            "text_end",
            "done"
        ]
    );
    let Some(AssistantMessageEvent::Done { reason, message }) = events.last() else {
        panic!("no done");
    };
    assert_eq!(*reason, StopReason::Stop);
    assert!(
        matches!(&message.content[..], [AssistantContent::Text { text, .. }] if text == "Hello")
    );
    assert_eq!(message.response_id.as_deref(), Some("c1"));
    assert_eq!(
        message.response_model.as_deref(),
        Some("gpt-4o-mini-2024-07-18")
    );
    assert_eq!(
        (
            message.usage.input,
            message.usage.cache_read,
            message.usage.output
        ),
        (6, 4, 2)
    );
    assert_eq!(message.raw_stop_reason.as_deref(), Some("stop"));

    let request = seen.lock().expect("log")[0].clone();
    assert!(
        request
            .head
            .starts_with("POST /v1/chat/completions HTTP/1.1")
    );
    assert_eq!(
        request.header("authorization"),
        Some(format!("Bearer {KEY}"))
    );
    assert_eq!(
        request.header("content-type").as_deref(),
        Some("application/json")
    );
    assert!(
        request
            .header("user-agent")
            .is_some_and(|ua| ua.starts_with("pi ("))
    );
    assert_eq!(
        request.body,
        json!({
            "model": "gpt-4o-mini",
            "messages": [
                {"role": "system", "content": "Be brief."},
                {"role": "user", "content": [{"type": "text", "text": "Hello"}]}
            ],
            "stream": true,
            "stream_options": {"include_usage": true},
            "store": false,
            "max_completion_tokens": 16384
        })
    );
}

#[tokio::test]
async fn the_key_never_appears_in_errors_events_or_debug_output() {
    let body = json!({"error": {"message": format!("Incorrect API key provided: {KEY}"), "type": "invalid_request_error"}});
    let (base, _) = serve(vec![Reply::Send {
        status: 401,
        headers: vec![("content-type", "application/json".to_owned())],
        chunks: vec![body.to_string()],
        drop: false,
    }])
    .await;
    let provider = OpenAiCompletions::new();
    let options = options();
    let events = collect(&provider, &model(&base), options.clone()).await;
    let (reason, message) = final_error(&events);
    assert_eq!(reason, StopReason::Error);
    assert_eq!(
        message,
        "401: {\"message\":\"Incorrect API key provided: <redacted>\",\"type\":\"invalid_request_error\"}"
    );
    for text in [
        format!("{events:?}"),
        format!("{options:?}"),
        format!("{provider:?}"),
    ] {
        assert!(!text.contains(KEY), "the key leaked: {text}");
    }
}

#[tokio::test]
async fn http_errors_read_as_the_sdk_writes_them() {
    let (base, seen) = serve(vec![Reply::Send {
        status: 502,
        headers: vec![("content-type", "text/html".to_owned())],
        chunks: vec!["Bad Gateway".to_owned()],
        drop: false,
    }])
    .await;
    let events = collect(&Providers::new(), &model(&base), options()).await;
    assert_eq!(kinds(&events), ["error"]);
    assert_eq!(final_error(&events).1, "502 Bad Gateway");
    // pi-ai retries only when asked.
    assert_eq!(seen.lock().expect("log").len(), 1);
}

#[tokio::test]
async fn retries_a_429_only_when_asked() {
    let limited = Reply::Send {
        status: 429,
        headers: vec![
            ("content-type", "application/json".to_owned()),
            ("retry-after-ms", "10".to_owned()),
        ],
        chunks: vec![json!({"error": {"message": "slow down"}}).to_string()],
        drop: false,
    };
    let (base, seen) = serve(vec![limited, ok(text_chunks())]).await;
    let mut opts = options();
    opts.max_retries = Some(1);
    let events = collect(&Providers::new(), &model(&base), opts).await;
    assert_eq!(events.last().map(|e| e.name()), Some("done"));
    assert_eq!(seen.lock().expect("log").len(), 2);
}

#[tokio::test]
async fn a_dropped_connection_reads_terminated() {
    let mut chunks = text_chunks();
    chunks.truncate(1);
    let (base, _) = serve(vec![Reply::Send {
        status: 200,
        headers: vec![("content-type", "text/event-stream".to_owned())],
        chunks,
        drop: true,
    }])
    .await;
    let events = collect(&Providers::new(), &model(&base), options()).await;
    // No block is finished: pi-ai's catch skips the `*_end` events.
    assert_eq!(
        kinds(&events),
        ["start", "text_start", "text_delta", "error"]
    );
    assert_eq!(
        final_error(&events),
        (StopReason::Error, "terminated".to_owned())
    );
}

#[tokio::test]
async fn an_abort_mid_stream_finishes_the_blocks_then_reports_aborted() {
    let first = text_chunks().remove(0);
    let (base, _) = serve(vec![Reply::Stall { chunk: first }]).await;
    let controller = AbortController::new();
    let mut opts = options();
    opts.signal = controller.signal();
    let mut stream = Providers::new().stream(&model(&base), &context(), opts);
    let mut events = Vec::new();
    while let Some(event) = tokio::time::timeout(Duration::from_secs(20), stream.next())
        .await
        .expect("an event")
    {
        if event.name() == "text_delta" {
            controller.abort();
        }
        events.push(event);
    }
    assert_eq!(
        kinds(&events),
        ["start", "text_start", "text_delta", "text_end", "error"]
    );
    assert_eq!(
        final_error(&events),
        (StopReason::Aborted, "Request was aborted".to_owned())
    );
}

#[tokio::test]
async fn an_abort_before_the_response_reads_request_aborted() {
    let (base, _) = serve(vec![Reply::Silent]).await;
    let controller = AbortController::new();
    let mut opts = options();
    opts.signal = controller.signal();
    let stream = Providers::new().stream(&model(&base), &context(), opts);
    let abort = async {
        tokio::time::sleep(Duration::from_millis(100)).await;
        controller.abort();
    };
    let (events, ()) = tokio::join!(stream.collect::<Vec<_>>(), abort);
    assert_eq!(kinds(&events), ["error"]);
    assert_eq!(
        final_error(&events),
        (StopReason::Aborted, "Request aborted".to_owned())
    );
}

#[tokio::test]
async fn without_a_key_the_stream_names_the_variable_unless_a_header_authorises() {
    let mut m = model("http://127.0.0.1:9/v1");
    m.provider = "deepseek".into();
    let events = collect(&Providers::new(), &m, StreamOptions::default()).await;
    assert_eq!(kinds(&events), ["error"]);
    assert!(final_error(&events).1.contains("DEEPSEEK_API_KEY"));

    let (base, seen) = serve(vec![ok(text_chunks())]).await;
    m.base_url = base;
    let mut opts = StreamOptions::default();
    opts.headers
        .insert("Authorization".into(), Some("Bearer gateway-token".into()));
    let events = collect(&Providers::new(), &m, opts).await;
    assert_eq!(events.last().map(|e| e.name()), Some("done"));
    let request = seen.lock().expect("log")[0].clone();
    assert_eq!(
        request.header("authorization").as_deref(),
        Some("Bearer gateway-token")
    );
}

#[tokio::test]
async fn a_refused_connection_reads_connection_error() {
    let listener = TcpListener::bind("127.0.0.1:0").await.expect("bind");
    let base = format!("http://{}/v1", listener.local_addr().expect("addr"));
    drop(listener);
    let events = collect(&Providers::new(), &model(&base), options()).await;
    assert_eq!(
        final_error(&events),
        (StopReason::Error, "Connection error.".to_owned())
    );
}

/// Against a real llama.cpp `llama-server` (`/v1/chat/completions`, with its `timings`
/// and usage chunks), when `PI_TOOL_LOCAL_LLM` names one (the origin; `.ci/run` sets it)
/// (`scripts/local-llm/local-llm start` prints it).
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
    let base_url = format!("{}/v1", origin.trim_end_matches('/'));
    let mut model = Model::new("local", "openai-completions", "llama-cpp");
    model.base_url = base_url;
    model.max_tokens = 32;
    model.context_window = 4096;
    let options = StreamOptions {
        api_key: Some("none".into()),
        ..StreamOptions::default()
    };
    let events = collect(&OpenAiCompletions::new(), &model, options).await;
    let Some(AssistantMessageEvent::Done { reason, message }) = events.last() else {
        panic!("{events:?}");
    };
    assert_eq!(kinds(&events).first(), Some(&"start"));
    assert!(matches!(reason, StopReason::Stop | StopReason::Length));
    assert!(message.usage.output > 0, "{message:?}");
    assert!(message.response_id.is_some(), "{message:?}");
    assert!(
        message
            .content
            .iter()
            .any(|b| matches!(b, AssistantContent::Text { text, .. } if !text.is_empty())),
        "{message:?}"
    );
}

#[tokio::test]
async fn a_base_url_that_is_no_url_reads_invalid_url() {
    let events = collect(&Providers::new(), &model("not a url"), options()).await;
    assert_eq!(kinds(&events), ["error"]);
    assert_eq!(
        final_error(&events),
        (StopReason::Error, "Invalid URL".to_owned())
    );
}

#[tokio::test]
async fn no_response_within_the_timeout_reads_request_timed_out() {
    let (base, _) = serve(vec![Reply::Silent]).await;
    let mut opts = options();
    opts.timeout = Some(Duration::from_millis(200));
    let events = collect(&Providers::new(), &model(&base), opts).await;
    assert_eq!(
        final_error(&events),
        (StopReason::Error, "Request timed out.".to_owned())
    );
}
