//! The provider targets' harness: the real provider (`pi_tool::providers`, the same
//! `StreamFn` an agent calls) against a loopback HTTP/1.1 server that answers every
//! request with the fuzzed response, chunk by chunk; then the checks every event stream
//! must pass, whatever the server sent.
//!
//! A real socket rather than a hook into the parser: the bytes take the path they take in
//! production (reqwest's chunked decoding, the transport's chunk loop, the provider's SSE
//! reader, its event handling, the event stream), and no provider file needs a seam.

use std::sync::{Arc, Mutex, OnceLock};
use std::time::Duration;

use futures::StreamExt;
use pi_tool::model::{AssistantMessage, AssistantMessageEvent, Context, Message, Model, StopReason, StreamFn, StreamOptions};
use pi_tool::providers::Providers;
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::{TcpListener, TcpStream};
use tokio::runtime::Runtime;

/// A stream must end this soon after its response was sent (it is all in memory).
const STREAM_DEADLINE: Duration = Duration::from_secs(10);

/// The key every request carries; no error text may show it.
pub const API_KEY: &str = "sk-fuzz-0123456789abcdef";
/// An Anthropic OAuth token (switches pi-ai's Claude Code identity and tool names).
pub const OAUTH_TOKEN: &str = "sk-ant-oat01-fuzz-0123456789abcdef";

/// A wire API.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Api {
    /// `anthropic-messages`.
    Anthropic,
    /// `openai-completions`.
    Completions,
    /// `openai-responses`.
    Responses,
}

impl Api {
    fn name(self) -> &'static str {
        match self {
            Api::Anthropic => "anthropic-messages",
            Api::Completions => "openai-completions",
            Api::Responses => "openai-responses",
        }
    }

    /// Providers whose names switch this API's behaviour (compat flags, thinking
    /// formats, Copilot's headers).
    fn providers(self) -> &'static [&'static str] {
        match self {
            Api::Anthropic => &["anthropic", "github-copilot", "anthropic"],
            Api::Completions => &[
                "openai",
                "openrouter",
                "deepseek",
                "zai",
                "llama-cpp",
                "xai",
            ],
            Api::Responses => &["openai", "github-copilot", "openrouter", "xai"],
        }
    }
}

/// The statuses a fuzzed response may have (the body is then the error body).
const STATUSES: [u16; 8] = [200, 200, 200, 200, 400, 429, 500, 529];

/// The fuzzed response: `data[0]` picks the provider, the status, the key and
/// reasoning; the rest is [`crate::input::chunks`]' format (the body and its cuts).
/// Returns the events, which passed [`check_events`].
pub fn run(api: Api, data: &[u8]) -> Vec<AssistantMessageEvent> {
    let Some((&pick, rest)) = data.split_first() else {
        return Vec::new();
    };
    let (_, chunks) = crate::input::chunks(rest);
    let providers = api.providers();
    let provider = providers[(pick & 7) as usize % providers.len()];
    let status = STATUSES[(pick >> 3 & 7) as usize];
    let oauth = api == Api::Anthropic && pick & 0x40 != 0;
    let reasoning = pick & 0x80 != 0;
    let response = Arc::new(http_response(status, &chunks));
    let harness = harness();
    // One response slot: callers on other threads (tests) wait their turn.
    let _turn = harness
        .turn
        .lock()
        .unwrap_or_else(|poisoned| poisoned.into_inner());
    if let Ok(mut slot) = harness.response.lock() {
        *slot = response;
    }
    let mut model = Model::new("fuzz-model", api.name(), provider);
    model.base_url = match api {
        Api::Anthropic => format!("http://127.0.0.1:{}", harness.port),
        _ => format!("http://127.0.0.1:{}/v1", harness.port),
    };
    model.reasoning = reasoning;
    model.max_tokens = 4096;
    model.context_window = 32768;
    let key = if oauth { OAUTH_TOKEN } else { API_KEY };
    let options = StreamOptions {
        api_key: Some(key.into()),
        ..StreamOptions::default()
    };
    let context = Context {
        system_prompt: "You are terse.".into(),
        messages: vec![Message::user_text("What is the weather in Tokyo?")],
        tools: crate::catalogue::tools().to_vec(),
    };
    let events = harness.runtime.block_on(async {
        let mut stream = harness.providers.stream(&model, &context, options);
        let mut events = Vec::new();
        let collect = async {
            while let Some(event) = stream.next().await {
                events.push(event);
            }
        };
        if tokio::time::timeout(STREAM_DEADLINE, collect)
            .await
            .is_err()
        {
            panic!(
                "{}: the stream did not end within {STREAM_DEADLINE:?} ({} events)",
                api.name(),
                events.len()
            );
        }
        events
    });
    check_events(api, key, &events);
    events
}

/// What every event stream must satisfy: it ends with exactly one `done` or `error`,
/// which is the last event; `start` comes first when anything else came; block events
/// name blocks the message has; a `done` message has a final stop reason and no error;
/// an `error` message has a reason of error or aborted and a non-empty text without the
/// key.
pub fn check_events(api: Api, key: &str, events: &[AssistantMessageEvent]) {
    let api = api.name();
    let names: Vec<&str> = events.iter().map(|e| e.name()).collect();
    let Some(last) = events.last() else {
        panic!("{api}: the stream ended without any event");
    };
    let terminals = names
        .iter()
        .filter(|n| matches!(**n, "done" | "error"))
        .count();
    assert_eq!(terminals, 1, "{api}: {terminals} final events in {names:?}");
    if events.len() > 1 {
        assert_eq!(names[0], "start", "{api}: first event of {names:?}");
    }
    for event in &events[..events.len() - 1] {
        let Some(partial) = event.partial() else {
            panic!("{api}: a final event before the last one: {names:?}");
        };
        if let Some(index) = content_index(event) {
            assert!(
                index < partial.content.len(),
                "{api}: {} names block {index} of {}",
                event.name(),
                partial.content.len()
            );
        }
    }
    match last {
        AssistantMessageEvent::Done { reason, message } => {
            assert!(
                matches!(
                    reason,
                    StopReason::Stop | StopReason::Length | StopReason::ToolUse
                ),
                "{api}: done with {reason:?}"
            );
            assert_eq!(message.stop_reason, *reason, "{api}: done's message");
            assert!(
                message.error_message.is_none(),
                "{api}: done with an error: {:?}",
                message.error_message
            );
            check_message(api, message);
        }
        AssistantMessageEvent::Error { reason, error } => {
            assert!(
                matches!(reason, StopReason::Error | StopReason::Aborted),
                "{api}: error with {reason:?}"
            );
            assert_eq!(error.stop_reason, *reason, "{api}: error's message");
            let text = error.error_message.as_deref().unwrap_or("");
            assert!(!text.is_empty(), "{api}: an error without a message {names:?} {error:?}");
            assert!(!text.contains(key), "{api}: the key in an error: {text}");
            check_message(api, error);
        }
        other => panic!("{api}: the last event is {}", other.name()),
    }
}

/// The final message is one a host can use: it serialises (hosts log and persist it).
fn check_message(api: &str, message: &AssistantMessage) {
    if let Err(error) = serde_json::to_string(message) {
        panic!("{api}: the final message does not serialise: {error}");
    }
}

fn content_index(event: &AssistantMessageEvent) -> Option<usize> {
    match event {
        AssistantMessageEvent::TextStart { content_index, .. }
        | AssistantMessageEvent::TextDelta { content_index, .. }
        | AssistantMessageEvent::TextEnd { content_index, .. }
        | AssistantMessageEvent::ThinkingStart { content_index, .. }
        | AssistantMessageEvent::ThinkingDelta { content_index, .. }
        | AssistantMessageEvent::ThinkingEnd { content_index, .. }
        | AssistantMessageEvent::ToolcallStart { content_index, .. }
        | AssistantMessageEvent::ToolcallDelta { content_index, .. }
        | AssistantMessageEvent::ToolcallEnd { content_index, .. } => Some(*content_index),
        _ => None,
    }
}

/// The whole response: status line, an event-stream content type, the body in
/// chunked transfer coding, one HTTP chunk per body chunk.
fn http_response(status: u16, chunks: &[&[u8]]) -> Vec<u8> {
    let content_type = if status == 200 {
        "text/event-stream"
    } else {
        "application/json"
    };
    let mut out =
        format!("HTTP/1.1 {status} Fuzz\r\ncontent-type: {content_type}\r\ntransfer-encoding: chunked\r\n\r\n")
            .into_bytes();
    for chunk in chunks.iter().filter(|c| !c.is_empty()) {
        out.extend_from_slice(format!("{:x}\r\n", chunk.len()).as_bytes());
        out.extend_from_slice(chunk);
        out.extend_from_slice(b"\r\n");
    }
    out.extend_from_slice(b"0\r\n\r\n");
    out
}

/// One runtime, one server and one client for the whole fuzzing process.
struct Harness {
    runtime: Runtime,
    providers: Providers,
    port: u16,
    response: Arc<Mutex<Arc<Vec<u8>>>>,
    turn: Mutex<()>,
}

fn harness() -> &'static Harness {
    static HARNESS: OnceLock<Harness> = OnceLock::new();
    HARNESS.get_or_init(|| {
        let runtime = tokio::runtime::Builder::new_current_thread()
            .enable_all()
            .build()
            .expect("a tokio runtime");
        let listener = runtime
            .block_on(TcpListener::bind("127.0.0.1:0"))
            .expect("a loopback port");
        let port = listener.local_addr().expect("the port").port();
        let response = Arc::new(Mutex::new(Arc::new(Vec::new())));
        let served = response.clone();
        // Tasks of a current-thread runtime run while a `block_on` runs: during each
        // fuzz input's stream.
        runtime.spawn(async move {
            while let Ok((socket, _)) = listener.accept().await {
                tokio::spawn(serve(socket, served.clone()));
            }
        });
        let providers = runtime.block_on(async { Providers::new() });
        Harness {
            runtime,
            providers,
            port,
            response,
            turn: Mutex::new(()),
        }
    })
}

/// Answers every request on one (keep-alive) connection with the current response.
async fn serve(mut socket: TcpStream, response: Arc<Mutex<Arc<Vec<u8>>>>) {
    let mut buffer = Vec::new();
    loop {
        if read_request(&mut socket, &mut buffer).await.is_none() {
            return;
        }
        let bytes = match response.lock() {
            Ok(current) => current.clone(),
            Err(_) => return,
        };
        if socket.write_all(&bytes).await.is_err() {
            return;
        }
    }
}

/// Reads one request (head, then a `content-length` body) from `socket`; bytes of the
/// next request stay in `buffer`.
async fn read_request(socket: &mut TcpStream, buffer: &mut Vec<u8>) -> Option<()> {
    let mut chunk = [0u8; 16 * 1024];
    let head_end = loop {
        if let Some(at) = buffer.windows(4).position(|w| w == b"\r\n\r\n") {
            break at + 4;
        }
        let n = socket.read(&mut chunk).await.ok()?;
        if n == 0 {
            return None;
        }
        buffer.extend_from_slice(&chunk[..n]);
    };
    let head = String::from_utf8_lossy(&buffer[..head_end]).to_ascii_lowercase();
    let length: usize = head
        .split("\r\n")
        .find_map(|line| line.strip_prefix("content-length:"))
        .and_then(|value| value.trim().parse().ok())
        .unwrap_or(0);
    while buffer.len() < head_end + length {
        let n = socket.read(&mut chunk).await.ok()?;
        if n == 0 {
            return None;
        }
        buffer.extend_from_slice(&chunk[..n]);
    }
    buffer.drain(..head_end + length);
    Some(())
}
