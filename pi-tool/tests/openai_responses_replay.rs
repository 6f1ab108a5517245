//! The `openai-responses` provider against a local HTTP server, for what the recorded
//! fixtures cannot show: aborts at each stage, retries, connection failures, a missing
//! key, and that the API key appears in no error, event or `Debug` output. The texts
//! are the ones pi-ai 0.85.0 gives in the same situations (checked by running pi-ai's
//! `streamSimple` against the same server behaviour).

#![cfg(feature = "openai-responses")]

use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::Duration;

use futures::StreamExt;
use pi_tool::AbortController;
use pi_tool::model::{
    ApiKey, AssistantContent, AssistantMessage, AssistantMessageEvent, Context, Message, Model,
    StopReason, StreamFn, StreamOptions,
};
use pi_tool::providers::OpenAiResponses;
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::{TcpListener, TcpStream};

const KEY: &str = "sk-secret-0123456789abcdef";

/// What the server does with one request.
#[derive(Clone)]
struct Reply {
    status: u16,
    headers: Vec<(&'static str, &'static str)>,
    /// Body pieces, each written as one chunk.
    chunks: Vec<String>,
    /// Wait this long before the status line.
    delay_headers: Duration,
    /// After the chunks: keep the connection open (a stream that stalls), or end it.
    hang: bool,
    /// After the chunks: drop the connection without ending the chunked body.
    drop: bool,
}

impl Reply {
    fn sse(events: &[&str]) -> Self {
        Reply {
            status: 200,
            headers: vec![("content-type", "text/event-stream")],
            chunks: events.iter().map(|e| format!("data: {e}\n\n")).collect(),
            delay_headers: Duration::ZERO,
            hang: false,
            drop: false,
        }
    }

    fn json(status: u16, body: &str) -> Self {
        Reply {
            status,
            headers: vec![("content-type", "application/json")],
            chunks: vec![body.to_owned()],
            ..Reply::sse(&[])
        }
    }
}

struct Server {
    port: u16,
    hits: Arc<AtomicUsize>,
    requests: Arc<std::sync::Mutex<Vec<String>>>,
}

/// Answers the n-th request with `replies[n]` (the last one repeats).
async fn serve(replies: Vec<Reply>) -> Server {
    let listener = TcpListener::bind("127.0.0.1:0").await.unwrap();
    let port = listener.local_addr().unwrap().port();
    let hits = Arc::new(AtomicUsize::new(0));
    let requests = Arc::new(std::sync::Mutex::new(Vec::new()));
    let (h, r) = (hits.clone(), requests.clone());
    tokio::spawn(async move {
        while let Ok((mut socket, _)) = listener.accept().await {
            let Some(head) = read_request(&mut socket).await else {
                continue;
            };
            let n = h.fetch_add(1, Ordering::SeqCst);
            r.lock().unwrap().push(head);
            let reply = replies[n.min(replies.len() - 1)].clone();
            tokio::spawn(async move { write_reply(socket, reply).await });
        }
    });
    Server {
        port,
        hits,
        requests,
    }
}

/// Reads one request; returns its head (request line and headers).
async fn read_request(socket: &mut TcpStream) -> Option<String> {
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
    let head = String::from_utf8_lossy(&buf[..head_end]).into_owned();
    let length: usize = head
        .lines()
        .filter_map(|l| l.split_once(':'))
        .find(|(n, _)| n.eq_ignore_ascii_case("content-length"))
        .and_then(|(_, v)| v.trim().parse().ok())
        .unwrap_or(0);
    let mut body = buf.len() - head_end - 4;
    while body < length {
        let n = socket.read(&mut chunk).await.ok()?;
        if n == 0 {
            break;
        }
        body += n;
    }
    Some(head)
}

async fn write_reply(mut socket: TcpStream, reply: Reply) {
    tokio::time::sleep(reply.delay_headers).await;
    let mut head = format!(
        "HTTP/1.1 {} X\r\ntransfer-encoding: chunked\r\n",
        reply.status
    );
    for (name, value) in &reply.headers {
        head.push_str(&format!("{name}: {value}\r\n"));
    }
    head.push_str("\r\n");
    if socket.write_all(head.as_bytes()).await.is_err() {
        return;
    }
    for chunk in &reply.chunks {
        let frame = format!("{:x}\r\n{chunk}\r\n", chunk.len());
        if socket.write_all(frame.as_bytes()).await.is_err() {
            return;
        }
        let _ = socket.flush().await;
        tokio::time::sleep(Duration::from_millis(5)).await;
    }
    if reply.drop {
        return;
    }
    if reply.hang {
        tokio::time::sleep(Duration::from_secs(30)).await;
        return;
    }
    let _ = socket.write_all(b"0\r\n\r\n").await;
}

fn model(port: u16) -> Model {
    let mut model = Model::new("gpt-5-mini", "openai-responses", "openai");
    model.base_url = format!("http://127.0.0.1:{port}/v1");
    model.reasoning = true;
    model.context_window = 400_000;
    model.max_tokens = 1000;
    model
}

fn context() -> Context {
    Context {
        system_prompt: "Be brief.".into(),
        messages: vec![Message::user_text("hi")],
        tools: Vec::new(),
    }
}

fn options() -> StreamOptions {
    StreamOptions {
        api_key: Some(ApiKey::from(KEY)),
        ..StreamOptions::default()
    }
}

const CREATED: &str = r#"{"type":"response.created","response":{"id":"resp_1"}}"#;
const ADDED: &str =
    r#"{"type":"response.output_item.added","output_index":0,"item":{"type":"message","id":"m"}}"#;
const DELTA: &str = r#"{"type":"response.output_text.delta","output_index":0,"delta":"hi"}"#;
const COMPLETED: &str = r#"{"type":"response.completed","response":{"status":"completed"}}"#;

/// Runs one call; `abort_on` aborts the signal when an event of that type arrives,
/// `abort_after` after that long.
async fn call(
    model: &Model,
    mut options: StreamOptions,
    abort_on: Option<&str>,
    abort_after: Option<Duration>,
) -> (Vec<AssistantMessageEvent>, Arc<AssistantMessage>) {
    let controller = AbortController::new();
    options.signal = controller.signal();
    if let Some(after) = abort_after {
        let controller = controller.clone();
        tokio::spawn(async move {
            tokio::time::sleep(after).await;
            controller.abort();
        });
    }
    let mut stream = OpenAiResponses::new().stream(model, &context(), options);
    let mut events = Vec::new();
    let run = async {
        while let Some(event) = stream.next().await {
            if abort_on == Some(event.name()) {
                controller.abort();
            }
            events.push(event);
        }
    };
    tokio::time::timeout(Duration::from_secs(20), run)
        .await
        .expect("the stream ends");
    let last = match events.last() {
        Some(AssistantMessageEvent::Done { message, .. }) => message.clone(),
        Some(AssistantMessageEvent::Error { error, .. }) => error.clone(),
        other => panic!("no final event: {other:?}"),
    };
    (events, last)
}

fn kinds(events: &[AssistantMessageEvent]) -> Vec<&'static str> {
    events.iter().map(|e| e.name()).collect()
}

fn text_of(message: &AssistantMessage) -> Vec<&str> {
    message
        .content
        .iter()
        .filter_map(|b| match b {
            AssistantContent::Text { text, .. } => Some(text.as_str()),
            _ => None,
        })
        .collect()
}

#[tokio::test]
async fn abort_mid_stream_before_the_terminal_event() {
    let server = serve(vec![Reply {
        hang: true,
        ..Reply::sse(&[CREATED, ADDED, DELTA])
    }])
    .await;
    let (events, last) = call(&model(server.port), options(), Some("text_delta"), None).await;
    assert_eq!(
        kinds(&events),
        ["start", "text_start", "text_delta", "error"]
    );
    assert_eq!(last.stop_reason, StopReason::Aborted);
    assert_eq!(
        last.error_message.as_deref(),
        Some("OpenAI Responses stream ended before a terminal response event")
    );
    assert_eq!(text_of(&last), ["hi"]);
}

#[tokio::test]
async fn abort_after_the_terminal_event() {
    let server = serve(vec![Reply {
        hang: true,
        ..Reply::sse(&[CREATED, ADDED, DELTA, COMPLETED])
    }])
    .await;
    let (events, last) = call(
        &model(server.port),
        options(),
        None,
        Some(Duration::from_millis(300)),
    )
    .await;
    assert_eq!(kinds(&events).last(), Some(&"error"));
    assert_eq!(last.stop_reason, StopReason::Aborted);
    assert_eq!(last.error_message.as_deref(), Some("Request was aborted"));
}

#[tokio::test]
async fn abort_before_the_call_and_before_the_headers() {
    let server = serve(vec![Reply {
        delay_headers: Duration::from_secs(5),
        ..Reply::sse(&[CREATED])
    }])
    .await;
    let controller = AbortController::new();
    controller.abort();
    let opts = StreamOptions {
        signal: controller.signal(),
        ..options()
    };
    let events: Vec<_> = OpenAiResponses::new()
        .stream(&model(server.port), &context(), opts)
        .collect()
        .await;
    assert_eq!(kinds(&events), ["error"]);
    let AssistantMessageEvent::Error { reason, error } = &events[0] else {
        unreachable!()
    };
    assert_eq!(*reason, StopReason::Aborted);
    assert_eq!(error.error_message.as_deref(), Some("Request aborted"));
    assert_eq!(server.hits.load(Ordering::SeqCst), 0);

    let (events, last) = call(
        &model(server.port),
        options(),
        None,
        Some(Duration::from_millis(200)),
    )
    .await;
    assert_eq!(kinds(&events), ["error"]);
    assert_eq!(last.stop_reason, StopReason::Aborted);
    assert_eq!(last.error_message.as_deref(), Some("Request aborted"));
}

#[tokio::test]
async fn a_refused_connection_is_a_connection_error() {
    let port = {
        let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
        listener.local_addr().unwrap().port()
    };
    let (events, last) = call(&model(port), options(), None, None).await;
    assert_eq!(kinds(&events), ["error"]);
    assert_eq!(last.stop_reason, StopReason::Error);
    assert_eq!(last.error_message.as_deref(), Some("Connection error."));
}

#[tokio::test]
async fn a_dropped_connection_is_terminated() {
    let server = serve(vec![Reply {
        drop: true,
        ..Reply::sse(&[CREATED, ADDED, DELTA])
    }])
    .await;
    let (_, last) = call(&model(server.port), options(), None, None).await;
    assert_eq!(last.stop_reason, StopReason::Error);
    assert_eq!(last.error_message.as_deref(), Some("terminated"));
    assert_eq!(text_of(&last), ["hi"]);
}

#[tokio::test]
async fn retries_only_when_asked_and_allowed() {
    let rate_limited = Reply {
        headers: vec![
            ("content-type", "application/json"),
            ("retry-after-ms", "10"),
        ],
        ..Reply::json(
            429,
            r#"{"error":{"message":"slow","type":"x","code":"rate"}}"#,
        )
    };
    let ok = Reply::sse(&[CREATED, ADDED, DELTA, COMPLETED]);

    // Default: no retry, pi-ai's HTTP error text.
    let server = serve(vec![rate_limited.clone(), ok.clone()]).await;
    let (_, last) = call(&model(server.port), options(), None, None).await;
    assert_eq!(
        last.error_message.as_deref(),
        Some(r#"OpenAI API error (429): {"message":"slow","type":"x","code":"rate"}"#)
    );
    assert_eq!(server.hits.load(Ordering::SeqCst), 1);

    let server = serve(vec![rate_limited, ok]).await;
    let opts = StreamOptions {
        max_retries: Some(2),
        ..options()
    };
    let (_, last) = call(&model(server.port), opts.clone(), None, None).await;
    assert_eq!(last.stop_reason, StopReason::Stop);
    assert_eq!(text_of(&last), ["hi"]);
    assert_eq!(server.hits.load(Ordering::SeqCst), 2);

    let refused = Reply {
        headers: vec![
            ("content-type", "application/json"),
            ("x-should-retry", "false"),
        ],
        ..Reply::json(500, r#"{"error":{"message":"nope"}}"#)
    };
    let server = serve(vec![refused]).await;
    let (_, last) = call(&model(server.port), opts, None, None).await;
    assert_eq!(
        last.error_message.as_deref(),
        Some(r#"OpenAI API error (500): {"message":"nope"}"#)
    );
    assert_eq!(server.hits.load(Ordering::SeqCst), 1);
}

#[tokio::test]
async fn the_key_is_sent_but_never_shown() {
    let echo = format!(
        r#"{{"error":{{"message":"Incorrect API key provided: {KEY}","code":"invalid_api_key"}}}}"#
    );
    let server = serve(vec![Reply::json(401, &echo)]).await;
    let opts = options();
    let provider = OpenAiResponses::new();
    assert!(!format!("{opts:?}{provider:?}").contains(KEY));
    let (events, last) = call(&model(server.port), opts, None, None).await;
    let requests = server.requests.lock().unwrap().clone();
    assert!(requests[0].to_ascii_lowercase().contains(&format!(
        "authorization: bearer {}",
        KEY.to_ascii_lowercase()
    )));
    let message = last.error_message.as_deref().unwrap();
    assert!(message.starts_with("OpenAI API error (401): "), "{message}");
    assert!(message.contains("<redacted>"), "{message}");
    for event in &events {
        let shown = format!("{event:?}{}", serde_json::to_string(event).unwrap());
        assert!(!shown.contains(KEY), "{shown}");
    }
}

#[tokio::test]
async fn a_missing_key_is_one_error_naming_the_variable() {
    if std::env::var_os("XAI_API_KEY").is_some() {
        return;
    }
    let mut model = model(9);
    model.provider = "xai".into();
    let events: Vec<_> = OpenAiResponses::new()
        .stream(&model, &context(), StreamOptions::default())
        .collect()
        .await;
    assert_eq!(kinds(&events), ["error"]);
    let AssistantMessageEvent::Error { error, .. } = &events[0] else {
        unreachable!()
    };
    let message = error.error_message.as_deref().unwrap();
    assert!(message.contains("XAI_API_KEY"), "{message}");
}

#[tokio::test]
async fn the_router_reaches_the_provider() {
    let server = serve(vec![Reply::sse(&[CREATED, ADDED, DELTA, COMPLETED])]).await;
    let events: Vec<_> = pi_tool::providers::Providers::new()
        .stream(&model(server.port), &context(), options())
        .collect()
        .await;
    assert_eq!(
        kinds(&events),
        ["start", "text_start", "text_delta", "done"]
    );
    let requests = server.requests.lock().unwrap().clone();
    assert!(
        requests[0].starts_with("POST /v1/responses HTTP/1.1"),
        "{}",
        requests[0]
    );
}

/// Against a real llama.cpp `llama-server` (its `/v1/responses` endpoint, the shape
/// without `output_index`), when `PI_TOOL_LOCAL_LLM` names one (the origin; `.ci/run` sets it)
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
    let mut model = Model::new("local", "openai-responses", "llama-cpp");
    model.base_url = base_url;
    model.max_tokens = 32;
    model.context_window = 4096;
    let options = StreamOptions {
        api_key: Some("none".into()),
        ..StreamOptions::default()
    };
    let events: Vec<AssistantMessageEvent> = OpenAiResponses::new()
        .stream(&model, &context(), options)
        .collect()
        .await;
    let kinds = kinds(&events);
    let Some(AssistantMessageEvent::Done { message, .. }) = events.last() else {
        panic!("{events:?}");
    };
    assert_eq!(kinds.first(), Some(&"start"));
    assert!(message.usage.output > 0, "{message:?}");
    assert!(message.response_id.is_some(), "{message:?}");
    assert!(!text_of(message).concat().is_empty(), "{kinds:?}");
}
