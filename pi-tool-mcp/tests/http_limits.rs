//! The HTTP server under load and abuse (issue 33): a slow header and a stalled body are
//! cut off, an oversized body is refused before it is read, sessions are capped with 503
//! and `Retry-After` (exactly, when initializes arrive together), a `DELETE` of an
//! unknown session is 404, an unreadable session id is named, calls on a kept-alive
//! connection do not wait for delayed ACKs, and a shutdown lets a running call finish or
//! aborts it at the deadline.

use std::net::SocketAddr;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::{Duration, Instant};

use pi_tool::ToolInvocation;
use pi_tool::pack::{ToolOwner, ToolPack};
use pi_tool::schema::ToolSchema;
use pi_tool::{AgentTool, JsonToolResult, ToolError, ToolSpec, async_trait, json};
use pi_tool_mcp::{HttpLimits, PackServer};
use serde_json::Value;
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::{TcpListener, TcpStream};

/// Sleeps `ms` milliseconds (or until aborted, which it records), then says done.
struct Sleep(ToolSpec, Arc<AtomicBool>);

#[async_trait]
impl AgentTool for Sleep {
    fn spec(&self) -> &ToolSpec {
        &self.0
    }

    async fn execute(&self, call: ToolInvocation<'_>) -> Result<JsonToolResult, ToolError> {
        let ms = call.params["ms"].as_u64().unwrap_or(0);
        if let Err(error) = call.signal.sleep(Duration::from_millis(ms)).await {
            self.1.store(true, Ordering::SeqCst);
            return Err(error);
        }
        Ok(JsonToolResult::text("done", None))
    }
}

fn server(aborted: Arc<AtomicBool>) -> PackServer {
    let mut pack = ToolPack::new();
    let schema = ToolSchema::from_json(json!({
        "type": "object", "properties": {"ms": {"type": "integer"}}
    }));
    let spec = ToolSpec::new("sleep", "Sleeps.", Arc::new(schema));
    pack.push(
        ToolOwner::new("http-limits"),
        Arc::new(Sleep(spec, aborted)) as Arc<dyn AgentTool>,
    )
    .unwrap();
    PackServer::new(pack)
}

async fn start(server: PackServer) -> SocketAddr {
    let listener = TcpListener::bind("127.0.0.1:0").await.unwrap();
    let address = listener.local_addr().unwrap();
    tokio::spawn(server.serve_http(listener));
    address
}

/// One request on a connection of its own; the answer as text (what came in `wait`).
async fn raw(address: SocketAddr, request: &[u8], wait: Duration) -> String {
    let mut stream = TcpStream::connect(address).await.unwrap();
    stream.write_all(request).await.unwrap();
    let mut answer = Vec::new();
    let _ = tokio::time::timeout(wait, stream.read_to_end(&mut answer)).await;
    String::from_utf8_lossy(&answer).into_owned()
}

fn post_head(address: SocketAddr, extra: &str, length: usize) -> String {
    format!(
        "POST /mcp HTTP/1.1\r\nHost: 127.0.0.1:{}\r\nAccept: application/json, text/event-stream\r\n\
         Content-Type: application/json\r\nContent-Length: {length}\r\nConnection: close\r\n{extra}\r\n",
        address.port()
    )
}

async fn post(address: SocketAddr, extra: &str, body: &Value) -> String {
    let body = body.to_string();
    let request = post_head(address, extra, body.len()) + &body;
    raw(address, request.as_bytes(), Duration::from_secs(5)).await
}

fn initialize(id: i64) -> Value {
    json!({"jsonrpc": "2.0", "id": id, "method": "initialize", "params": {
        "protocolVersion": "2025-11-25", "capabilities": {},
        "clientInfo": {"name": "t", "version": "0"}}})
}

fn header<'a>(answer: &'a str, name: &str) -> Option<&'a str> {
    let (head, _) = answer.split_once("\r\n\r\n")?;
    head.lines().find_map(|line| {
        let (key, value) = line.split_once(':')?;
        key.eq_ignore_ascii_case(name).then(|| value.trim())
    })
}

fn json_body(answer: &str) -> Value {
    let (_, body) = answer.split_once("\r\n\r\n").unwrap_or(("", answer));
    // An event stream's first JSON event, or the body as JSON.
    body.lines()
        .filter_map(|line| line.strip_prefix("data: "))
        .find_map(|data| serde_json::from_str(data.trim()).ok())
        .or_else(|| serde_json::from_str(body.trim()).ok())
        .unwrap_or(Value::Null)
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_header_sent_a_byte_a_second_is_cut_off_at_the_deadline() {
    let mut limits = HttpLimits::default();
    limits.header_read_timeout = Duration::from_secs(1);
    let address = start(server(Arc::default()).with_http_limits(limits)).await;
    let mut stream = TcpStream::connect(address).await.unwrap();
    let started = Instant::now();
    let head = post_head(address, "", 2);
    let mut closed_after = None;
    for byte in head.as_bytes() {
        if stream.write_all(&[*byte]).await.is_err() {
            closed_after = Some(started.elapsed());
            break;
        }
        let mut buffer = [0u8; 256];
        match tokio::time::timeout(Duration::from_millis(250), stream.read(&mut buffer)).await {
            Ok(Ok(0) | Err(_)) | Ok(Ok(_)) => {
                closed_after = Some(started.elapsed());
                break;
            }
            Err(_) => {}
        }
        if started.elapsed() > Duration::from_secs(5) {
            break;
        }
    }
    let closed_after = closed_after.expect("the server closed the connection");
    assert!(
        closed_after < Duration::from_secs(3),
        "closed after {closed_after:?}"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_body_that_stalls_is_cut_off_at_the_deadline_with_408() {
    let mut limits = HttpLimits::default();
    limits.header_read_timeout = Duration::from_secs(1);
    let address = start(server(Arc::default()).with_http_limits(limits)).await;
    // The head promises 100 bytes; ten come, then nothing.
    let request = post_head(address, "", 100) + r#"{"jsonrpc""#;
    let started = Instant::now();
    let answer = raw(address, request.as_bytes(), Duration::from_secs(5)).await;
    assert!(answer.starts_with("HTTP/1.1 408"), "{answer:?}");
    assert_eq!(json_body(&answer)["error"]["code"], -32700, "{answer}");
    let elapsed = started.elapsed();
    assert!(
        (Duration::from_millis(900)..Duration::from_secs(3)).contains(&elapsed),
        "answered after {elapsed:?}"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_50_mb_content_length_gets_413_before_the_body_is_read() {
    let address = start(server(Arc::default())).await;
    let head = post_head(address, "", 50 * 1024 * 1024);
    let started = Instant::now();
    // Headers only: a server that reads the body first never answers.
    let answer = raw(address, head.as_bytes(), Duration::from_secs(3)).await;
    assert!(answer.starts_with("HTTP/1.1 413"), "{answer:?}");
    assert!(started.elapsed() < Duration::from_secs(2));
    let error = json_body(&answer);
    assert_eq!(error["error"]["code"], -32700, "{answer}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_chunked_body_is_refused_once_it_passes_the_limit() {
    let address = start(server(Arc::default()).with_max_message_bytes(1000)).await;
    let mut request = format!(
        "POST /mcp HTTP/1.1\r\nHost: 127.0.0.1:{}\r\nAccept: application/json, text/event-stream\r\n\
         Content-Type: application/json\r\nTransfer-Encoding: chunked\r\n\r\n",
        address.port()
    );
    let chunk = format!(
        r#"{{"jsonrpc":"2.0","id":7,"method":"ping","params":{{"x":"{}"#,
        "x".repeat(600)
    );
    request.push_str(&format!("{:x}\r\n{chunk}\r\n", chunk.len()));
    let more = "y".repeat(600);
    request.push_str(&format!("{:x}\r\n{more}\r\n", more.len()));
    // No last chunk: the body never ends, and a server that reads it all never answers.
    let answer = raw(address, request.as_bytes(), Duration::from_secs(3)).await;
    assert!(answer.starts_with("HTTP/1.1 413"), "{answer:?}");
    assert_eq!(json_body(&answer)["id"], 7, "{answer}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn delete_of_an_unknown_session_is_404_and_an_unreadable_id_is_named() {
    let address = start(server(Arc::default())).await;
    let delete = |id: &[u8]| {
        let mut request = format!(
            "DELETE /mcp HTTP/1.1\r\nHost: 127.0.0.1:{}\r\nConnection: close\r\nMcp-Session-Id: ",
            address.port()
        )
        .into_bytes();
        request.extend_from_slice(id);
        request.extend_from_slice(b"\r\n\r\n");
        request
    };
    let answer = raw(address, &delete(b"no-such-session"), Duration::from_secs(3)).await;
    assert!(answer.starts_with("HTTP/1.1 404"), "{answer:?}");

    let answer = post(address, "", &initialize(0)).await;
    let session = header(&answer, "mcp-session-id")
        .expect("a session")
        .to_owned();
    let answer = raw(address, &delete(session.as_bytes()), Duration::from_secs(3)).await;
    assert!(answer.starts_with("HTTP/1.1 20"), "{answer:?}");
    let again = raw(address, &delete(session.as_bytes()), Duration::from_secs(3)).await;
    assert!(
        again.starts_with("HTTP/1.1 404"),
        "deleted twice: {again:?}"
    );

    let answer = raw(
        address,
        &delete("sessión".as_bytes()),
        Duration::from_secs(3),
    )
    .await;
    assert!(answer.starts_with("HTTP/1.1 400"), "{answer:?}");
    let message = json_body(&answer)["error"]["message"]
        .as_str()
        .unwrap_or_default()
        .to_owned();
    assert!(message.contains("not readable"), "{answer:?}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_session_cap_refuses_new_sessions_with_503_and_retry_after() {
    let mut limits = HttpLimits::default();
    limits.max_sessions = 2;
    let address = start(server(Arc::default()).with_http_limits(limits)).await;
    let mut sessions = Vec::new();
    for id in 0..2 {
        let answer = post(address, "", &initialize(id)).await;
        sessions.push(
            header(&answer, "mcp-session-id")
                .expect("a session")
                .to_owned(),
        );
    }
    let refused = post(address, "", &initialize(9)).await;
    assert!(refused.starts_with("HTTP/1.1 503"), "{refused:?}");
    assert!(header(&refused, "retry-after").is_some(), "{refused:?}");
    let error = json_body(&refused);
    assert_eq!(error["id"], 9, "{refused}");
    assert_eq!(error["error"]["code"], -32000, "{refused}");

    // The sessions already open are served.
    let extra = format!(
        "Mcp-Session-Id: {}\r\nMCP-Protocol-Version: 2025-11-25\r\n",
        sessions[0]
    );
    let list = post(
        address,
        &extra,
        &json!({"jsonrpc": "2.0", "id": 1, "method": "tools/list"}),
    )
    .await;
    assert_eq!(
        json_body(&list)["result"]["tools"][0]["name"],
        "sleep",
        "{list}"
    );

    // A closed session frees its place.
    let delete = format!(
        "DELETE /mcp HTTP/1.1\r\nHost: 127.0.0.1:{}\r\nConnection: close\r\n{extra}\r\n",
        address.port()
    );
    raw(address, delete.as_bytes(), Duration::from_secs(3)).await;
    let answer = post(address, "", &initialize(10)).await;
    assert!(header(&answer, "mcp-session-id").is_some(), "{answer:?}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn concurrent_initializes_never_open_more_sessions_than_the_cap() {
    const CAP: usize = 3;
    const AT_ONCE: usize = 64;
    // A race shows only when two initializes meet in its window: many rounds, each on
    // a fresh server.
    const ROUNDS: usize = 30;
    for round in 0..ROUNDS {
        let mut limits = HttpLimits::default();
        limits.max_sessions = CAP;
        let address = start(server(Arc::default()).with_http_limits(limits)).await;
        // Every connection is open before any request is sent, and the requests are
        // sent together from tasks of their own: the initializes reach the server at once.
        let mut streams = Vec::new();
        for _ in 0..AT_ONCE {
            streams.push(TcpStream::connect(address).await.unwrap());
        }
        let body = initialize(1).to_string();
        let request = post_head(address, "", body.len()) + &body;
        let go = Arc::new(tokio::sync::Barrier::new(AT_ONCE));
        let mut answers = tokio::task::JoinSet::new();
        for mut stream in streams {
            let (go, request) = (go.clone(), request.clone());
            answers.spawn(async move {
                go.wait().await;
                stream.write_all(request.as_bytes()).await.unwrap();
                let mut answer = Vec::new();
                let read = stream.read_to_end(&mut answer);
                let _ = tokio::time::timeout(Duration::from_secs(10), read).await;
                String::from_utf8_lossy(&answer).into_owned()
            });
        }
        let (mut opened, mut refused) = (0, 0);
        while let Some(answer) = answers.join_next().await {
            let answer = answer.unwrap();
            if header(&answer, "mcp-session-id").is_some() {
                opened += 1;
            } else {
                assert!(answer.starts_with("HTTP/1.1 503"), "{answer:?}");
                refused += 1;
            }
        }
        assert_eq!((opened, refused), (CAP, AT_ONCE - CAP), "round {round}");
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn twenty_calls_on_one_kept_alive_connection_do_not_wait_for_delayed_acks() {
    let address = start(server(Arc::default())).await;
    let url = format!("http://{address}/mcp");
    let http = reqwest::Client::builder().no_proxy().build().unwrap();
    let answer = http
        .post(&url)
        .header("Accept", "application/json, text/event-stream")
        .header("Content-Type", "application/json")
        .body(initialize(0).to_string())
        .send()
        .await
        .unwrap();
    let session = answer.headers()["mcp-session-id"]
        .to_str()
        .unwrap()
        .to_owned();
    answer.bytes().await.unwrap();
    let mut times = Vec::new();
    for id in 1..=20 {
        let started = Instant::now();
        let answer = http
            .post(&url)
            .header("Accept", "application/json, text/event-stream")
            .header("Mcp-Session-Id", &session)
            .header("MCP-Protocol-Version", "2025-11-25")
            .header("Content-Type", "application/json")
            .body(
                json!({"jsonrpc": "2.0", "id": id, "method": "tools/call",
                       "params": {"name": "sleep", "arguments": {"ms": 0}}})
                .to_string(),
            )
            .send()
            .await
            .unwrap();
        let body = answer.text().await.unwrap();
        assert!(body.contains("done"), "{body}");
        times.push(started.elapsed());
    }
    times.sort();
    let median = times[times.len() / 2];
    assert!(
        median < Duration::from_millis(20),
        "median {median:?}, far from the 40 ms delayed-ACK floor? {times:?}"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_shutdown_lets_a_running_call_finish_within_the_grace() {
    let aborted = Arc::new(AtomicBool::new(false));
    let listener = TcpListener::bind("127.0.0.1:0").await.unwrap();
    let address = listener.local_addr().unwrap();
    let (stop, stopped) = tokio::sync::oneshot::channel::<()>();
    let serving = tokio::spawn(server(aborted.clone()).serve_http_until(listener, async {
        let _ = stopped.await;
    }));
    let answer = post(address, "", &initialize(0)).await;
    let session = header(&answer, "mcp-session-id").unwrap().to_owned();
    let extra = format!("Mcp-Session-Id: {session}\r\nMCP-Protocol-Version: 2025-11-25\r\n");
    let call = json!({"jsonrpc": "2.0", "id": 1, "method": "tools/call",
                      "params": {"name": "sleep", "arguments": {"ms": 500}}});
    let calling = tokio::spawn(async move { post(address, &extra, &call).await });
    tokio::time::sleep(Duration::from_millis(100)).await;
    let _ = stop.send(());
    let answer = calling.await.unwrap();
    assert!(answer.contains("done"), "{answer:?}");
    let served = tokio::time::timeout(Duration::from_secs(5), serving)
        .await
        .expect("the server stops");
    assert!(matches!(served, Ok(Ok(()))), "{served:?}");
    assert!(!aborted.load(Ordering::SeqCst));
    // No new connection is served.
    assert!(TcpStream::connect(address).await.is_err());
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_shutdown_aborts_a_call_still_running_at_the_deadline() {
    let aborted = Arc::new(AtomicBool::new(false));
    let listener = TcpListener::bind("127.0.0.1:0").await.unwrap();
    let address = listener.local_addr().unwrap();
    let (stop, stopped) = tokio::sync::oneshot::channel::<()>();
    let mut limits = HttpLimits::default();
    limits.shutdown_grace = Duration::from_millis(300);
    let server = server(aborted.clone()).with_http_limits(limits);
    let serving = tokio::spawn(server.serve_http_until(listener, async {
        let _ = stopped.await;
    }));
    let answer = post(address, "", &initialize(0)).await;
    let session = header(&answer, "mcp-session-id").unwrap().to_owned();
    let extra = format!("Mcp-Session-Id: {session}\r\nMCP-Protocol-Version: 2025-11-25\r\n");
    let call = json!({"jsonrpc": "2.0", "id": 1, "method": "tools/call",
                      "params": {"name": "sleep", "arguments": {"ms": 60000}}});
    let calling = tokio::spawn(async move { post(address, &extra, &call).await });
    tokio::time::sleep(Duration::from_millis(100)).await;
    let started = Instant::now();
    let _ = stop.send(());
    let served = tokio::time::timeout(Duration::from_secs(5), serving)
        .await
        .expect("the server stops after the grace");
    assert!(matches!(served, Ok(Ok(()))), "{served:?}");
    assert!(started.elapsed() < Duration::from_secs(3));
    let _ = calling.await;
    tokio::time::sleep(Duration::from_millis(100)).await;
    assert!(
        aborted.load(Ordering::SeqCst),
        "the tool saw its abort signal"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_session_past_its_calls_in_flight_gets_429() {
    let mut limits = HttpLimits::default();
    limits.max_calls_per_session = 1;
    let address = start(server(Arc::default()).with_http_limits(limits)).await;
    let answer = post(address, "", &initialize(0)).await;
    let session = header(&answer, "mcp-session-id").unwrap().to_owned();
    let extra = format!("Mcp-Session-Id: {session}\r\nMCP-Protocol-Version: 2025-11-25\r\n");
    let call = |id: i64, ms: u64| {
        json!({"jsonrpc": "2.0", "id": id, "method": "tools/call",
               "params": {"name": "sleep", "arguments": {"ms": ms}}})
    };
    let slow = {
        let extra = extra.clone();
        let call = call(1, 800);
        tokio::spawn(async move { post(address, &extra, &call).await })
    };
    tokio::time::sleep(Duration::from_millis(200)).await;
    let refused = post(address, &extra, &call(2, 0)).await;
    assert!(refused.starts_with("HTTP/1.1 429"), "{refused:?}");
    assert!(header(&refused, "retry-after").is_some(), "{refused:?}");
    assert_eq!(json_body(&refused)["id"], 2, "{refused}");
    // Other requests of the session are served meanwhile.
    let list = post(
        address,
        &extra,
        &json!({"jsonrpc": "2.0", "id": 3, "method": "tools/list"}),
    )
    .await;
    assert_eq!(
        json_body(&list)["result"]["tools"][0]["name"],
        "sleep",
        "{list}"
    );
    assert!(slow.await.unwrap().contains("done"));
    let again = post(address, &extra, &call(4, 0)).await;
    assert!(again.contains("done"), "the slot is free again: {again:?}");
}
