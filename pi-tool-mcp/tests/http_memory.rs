//! The HTTP server's memory under a flood of sessions (issue 33): sessions past the cap
//! are refused, what the open ones hold is bounded, the memory of the ones that end is
//! given back to the system (`malloc_trim`, glibc), whether they end by `DELETE` or by
//! idle expiry, and the server keeps serving. The tests of this binary run one at a
//! time (`SERIAL`) and no other test shares it, so the resident memory each reads is its
//! own server's alone. Where the allocator is glibc's: the trim, and
//! `/proc/self/status`, are that platform's.

#![cfg(all(target_os = "linux", target_env = "gnu"))]

use std::net::SocketAddr;
use std::sync::Arc;
use std::time::Duration;

use pi_tool::pack::{ToolOwner, ToolPack};
use pi_tool::schema::ToolSchema;
use pi_tool::{AgentTool, JsonToolResult, ToolError, ToolInvocation, ToolSpec, async_trait, json};
use pi_tool_mcp::{HttpLimits, PackServer};
use serde_json::Value;
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::{TcpListener, TcpStream};
use tokio::task::JoinSet;

/// The cap of the flood's server.
const CAP: usize = 1_000;
/// Sessions the flood tries to open: twice the cap.
const FLOOD: usize = 2 * CAP;

struct Echo(ToolSpec);

#[async_trait]
impl AgentTool for Echo {
    fn spec(&self) -> &ToolSpec {
        &self.0
    }

    async fn execute(&self, _call: ToolInvocation<'_>) -> Result<JsonToolResult, ToolError> {
        Ok(JsonToolResult::text("echo", None))
    }
}

/// One test at a time: each reads the process's resident memory as its server's.
static SERIAL: tokio::sync::Mutex<()> = tokio::sync::Mutex::const_new(());

async fn start() -> SocketAddr {
    start_with(HttpLimits::default()).await
}

async fn start_with(mut limits: HttpLimits) -> SocketAddr {
    let mut pack = ToolPack::new();
    let schema = ToolSchema::from_json(json!({"type": "object"}));
    let spec = ToolSpec::new("echo", "Echoes.", Arc::new(schema));
    pack.push(
        ToolOwner::new("http-memory"),
        Arc::new(Echo(spec)) as Arc<dyn AgentTool>,
    )
    .unwrap();
    limits.max_sessions = CAP;
    let listener = TcpListener::bind("127.0.0.1:0").await.unwrap();
    let address = listener.local_addr().unwrap();
    tokio::spawn(
        PackServer::new(pack)
            .with_http_limits(limits)
            .serve_http(listener),
    );
    address
}

/// One request on a connection of its own (`Connection: close`); the whole answer.
async fn request(address: SocketAddr, method: &str, session: Option<&str>, body: &str) -> String {
    let session = session
        .map(|id| format!("Mcp-Session-Id: {id}\r\nMCP-Protocol-Version: 2025-11-25\r\n"))
        .unwrap_or_default();
    let head = format!(
        "{method} /mcp HTTP/1.1\r\nHost: 127.0.0.1:{}\r\nAccept: application/json, text/event-stream\r\n\
         Content-Type: application/json\r\nContent-Length: {}\r\nConnection: close\r\n{session}\r\n",
        address.port(),
        body.len()
    );
    let mut stream = TcpStream::connect(address).await.unwrap();
    stream.write_all((head + body).as_bytes()).await.unwrap();
    let mut answer = Vec::new();
    let _ = tokio::time::timeout(Duration::from_secs(10), stream.read_to_end(&mut answer)).await;
    String::from_utf8_lossy(&answer).into_owned()
}

fn session_id(answer: &str) -> Option<String> {
    let (head, _) = answer.split_once("\r\n\r\n")?;
    head.lines().find_map(|line| {
        let (key, value) = line.split_once(':')?;
        key.eq_ignore_ascii_case("mcp-session-id")
            .then(|| value.trim().to_owned())
    })
}

/// Opens `count` sessions, 16 at a time: the ids of those opened, and how many were
/// refused with 503.
async fn flood(address: SocketAddr, count: usize) -> (Vec<String>, usize) {
    let init = json!({"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {
        "protocolVersion": "2025-11-25", "capabilities": {},
        "clientInfo": {"name": "flood", "version": "0"}}})
    .to_string();
    let (mut opened, mut refused) = (Vec::new(), 0);
    for start in (0..count).step_by(16) {
        let mut batch = JoinSet::new();
        for _ in start..(start + 16).min(count) {
            let init = init.clone();
            batch.spawn(async move { request(address, "POST", None, &init).await });
        }
        while let Some(answer) = batch.join_next().await {
            let answer = answer.unwrap();
            match session_id(&answer) {
                Some(id) => opened.push(id),
                None if answer.starts_with("HTTP/1.1 503") => refused += 1,
                None => panic!("neither a session nor a refusal: {answer:?}"),
            }
        }
    }
    (opened, refused)
}

fn rss_kib() -> u64 {
    let status = std::fs::read_to_string("/proc/self/status").unwrap_or_default();
    status
        .lines()
        .find_map(|line| line.strip_prefix("VmRSS:"))
        .and_then(|value| value.trim().trim_end_matches("kB").trim().parse().ok())
        .unwrap_or(0)
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_session_flood_stays_within_the_cap_and_its_memory_is_given_back() {
    let _alone = SERIAL.lock().await;
    let address = start().await;
    // Warm up: one session opened and closed, so one-time allocations are not counted.
    let (warm, _) = flood(address, 1).await;
    request(address, "DELETE", Some(&warm[0]), "").await;
    tokio::time::sleep(Duration::from_millis(1_500)).await;
    let before = rss_kib();

    let (opened, refused) = flood(address, FLOOD).await;
    assert_eq!(opened.len(), CAP, "the cap holds");
    assert_eq!(
        refused,
        FLOOD - opened.len(),
        "every session past the cap is refused"
    );
    let flooded = rss_kib();
    let per_session = flooded.saturating_sub(before) / opened.len() as u64;
    // What one session holds, with the debug build's larger frames: far under this.
    assert!(per_session < 256, "{per_session} KiB per session");

    for chunk in opened.chunks(16) {
        let mut batch = JoinSet::new();
        for id in chunk {
            let id = id.clone();
            batch.spawn(async move { request(address, "DELETE", Some(&id), "").await });
        }
        while let Some(answer) = batch.join_next().await {
            let answer = answer.unwrap();
            assert!(answer.starts_with("HTTP/1.1 2"), "{answer:?}");
        }
    }
    // The trim runs within a second or two of the sessions ending.
    let mut closed = rss_kib();
    for _ in 0..50 {
        if closed <= before + (flooded - before) / 2 {
            break;
        }
        tokio::time::sleep(Duration::from_millis(100)).await;
        closed = rss_kib();
    }
    assert!(
        closed <= before + (flooded.saturating_sub(before)) / 2,
        "RSS {before} KiB before, {flooded} KiB with {} sessions, {closed} KiB after \
         they were all closed: the memory was not given back",
        opened.len()
    );

    // The server keeps serving: a new session opens and lists its tool.
    let (again, refused) = flood(address, 1).await;
    assert_eq!((again.len(), refused), (1, 0));
    let list = request(
        address,
        "POST",
        Some(&again[0]),
        &json!({"jsonrpc": "2.0", "id": 2, "method": "tools/list"}).to_string(),
    )
    .await;
    let (_, body) = list.split_once("\r\n\r\n").unwrap_or(("", &list));
    let listed: Option<Value> = body
        .lines()
        .filter_map(|line| line.strip_prefix("data: "))
        .find_map(|data| serde_json::from_str(data.trim()).ok())
        .or_else(|| serde_json::from_str(body.trim()).ok());
    assert_eq!(
        listed
            .as_ref()
            .map(|answer| &answer["result"]["tools"][0]["name"]),
        Some(&json!("echo")),
        "{list}"
    );
}

/// Waits up to five seconds for resident memory to come down to `target` KiB; the last
/// reading.
async fn rss_down_to(target: u64) -> u64 {
    let mut rss = rss_kib();
    for _ in 0..50 {
        if rss <= target {
            break;
        }
        tokio::time::sleep(Duration::from_millis(100)).await;
        rss = rss_kib();
    }
    rss
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn sessions_never_closed_expire_and_give_their_memory_and_places_back() {
    /// The idle timeout of this server: longer than the flood takes.
    const IDLE: Duration = Duration::from_secs(6);
    let _alone = SERIAL.lock().await;
    let mut limits = HttpLimits::default();
    limits.session_idle_timeout = IDLE;
    let address = start_with(limits).await;
    // Warm up: one session opened and left to expire.
    flood(address, 1).await;
    tokio::time::sleep(IDLE + Duration::from_millis(1_500)).await;
    let before = rss_kib();

    let started = std::time::Instant::now();
    let (opened, refused) = flood(address, CAP).await;
    let flooded = rss_kib();
    assert_eq!((opened.len(), refused), (CAP, 0));
    assert!(
        started.elapsed() < IDLE,
        "the flood took {:?}, past the idle timeout: the test measures nothing",
        started.elapsed()
    );
    // At the cap while they are open.
    let (_, refused) = flood(address, 1).await;
    assert_eq!(
        refused, 1,
        "the cap holds while the flood's sessions are open"
    );

    // Nobody closes them: they expire by the idle timeout, and the trim follows.
    tokio::time::sleep(IDLE.saturating_sub(started.elapsed())).await;
    let expired = rss_down_to(before + flooded.saturating_sub(before) / 2).await;
    assert!(
        expired <= before + flooded.saturating_sub(before) / 2,
        "RSS {before} KiB before, {flooded} KiB with {CAP} sessions, {expired} KiB after \
         they expired: the memory was not given back"
    );

    // Their places are free again: a whole new flood opens.
    let (again, refused) = flood(address, CAP).await;
    assert_eq!(
        (again.len(), refused),
        (CAP, 0),
        "the expired sessions' places"
    );
}
