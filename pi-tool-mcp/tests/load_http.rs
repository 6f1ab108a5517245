//! `PackServer::serve_http` under load (issue 11 §4), over real HTTP on 127.0.0.1:
//!
//! - 1 000 concurrent `tools/call`s across 100 sessions (and from 100 clients of a
//!   stateless server): every response arrives exactly once, with its own id and its
//!   own result; the wall time and the process's peak RSS are printed and bounded;
//! - a cancel storm: of 200 running calls, half get `notifications/cancelled` and the
//!   other half's clients close their connections; every call's task ends (a live-call
//!   counter with a `Drop` guard in the tool, and `on_call_end`), within a bound.

mod support;

use std::collections::HashSet;
use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::{Duration, Instant};

use pi_tool::pack::{ToolOwner, ToolPack};
use pi_tool::{AbortSignal, AgentToolResult, OnUpdate, ToolError, ToolErrorKind, pi_tool};
use pi_tool_mcp::{CallOutcome, PackServer};
use serde_json::json;
use support::{Session, SseEvents, http_client, read_answer, read_until, result_text, rss_mib};

/// Calls of `echo` running now, and the most seen at once.
static ECHO_LIVE: AtomicUsize = AtomicUsize::new(0);
static ECHO_PEAK: AtomicUsize = AtomicUsize::new(0);
/// Calls of `hold` running now.
static HOLD_LIVE: AtomicUsize = AtomicUsize::new(0);

/// Decrements its counter when the call's future ends, however it ends (returned,
/// aborted, or dropped by the server).
struct Live(&'static AtomicUsize);

impl Live {
    fn enter(counter: &'static AtomicUsize) -> Live {
        counter.fetch_add(1, Ordering::SeqCst);
        Live(counter)
    }
}

impl Drop for Live {
    fn drop(&mut self) {
        self.0.fetch_sub(1, Ordering::SeqCst);
    }
}

#[pi_tool::params]
struct EchoParams {
    /// The client session's number.
    session: u64,
    /// The call's number within its session.
    n: u64,
}

/// Answers `echo <session>/<n>` after 50 ms, so that the calls overlap.
#[pi_tool(execution_mode = "parallel")]
async fn echo(
    _call_id: &str,
    params: EchoParams,
    signal: AbortSignal,
    _on_update: OnUpdate<u64>,
) -> Result<AgentToolResult<u64>, ToolError> {
    let _live = Live::enter(&ECHO_LIVE);
    ECHO_PEAK.fetch_max(ECHO_LIVE.load(Ordering::SeqCst), Ordering::SeqCst);
    signal.sleep(Duration::from_millis(50)).await?;
    Ok(AgentToolResult::text(
        format!("echo {}/{}", params.session, params.n),
        params.n,
    ))
}

#[pi_tool::params]
struct HoldParams {
    /// How long to hold, in milliseconds.
    ms: u64,
}

/// Reports progress once, then holds for `ms` unless aborted.
#[pi_tool(execution_mode = "parallel")]
async fn hold(
    _call_id: &str,
    params: HoldParams,
    signal: AbortSignal,
    on_update: OnUpdate<u64>,
) -> Result<AgentToolResult<u64>, ToolError> {
    let _live = Live::enter(&HOLD_LIVE);
    on_update.send(AgentToolResult::text("holding", 0));
    signal.sleep(Duration::from_millis(params.ms)).await?;
    Ok(AgentToolResult::text("held", params.ms))
}

fn pack() -> ToolPack {
    let mut pack = ToolPack::new();
    let owner = ToolOwner::new("load-test");
    pack.push(owner.clone(), Echo).unwrap();
    pack.push(owner, Hold).unwrap();
    pack
}

/// Serves `server` on a free loopback port; returns the MCP URL.
async fn start(server: PackServer) -> String {
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let url = format!("http://{}/mcp", listener.local_addr().unwrap());
    tokio::spawn(server.serve_http(listener));
    url
}

const SESSIONS: u64 = 100;
const CALLS_PER_SESSION: u64 = 10;

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_thousand_concurrent_calls_across_a_hundred_sessions_each_answered_once() {
    // With sessions, then the same load on a stateless server (100 clients without
    // sessions), one after the other so that the live-call counters are each run's own.
    load(false).await;
    load(true).await;
}

async fn load(stateless: bool) {
    ECHO_PEAK.store(0, Ordering::SeqCst);
    let mode = if stateless { "stateless" } else { "sessions" };
    let ended = Arc::new(AtomicUsize::new(0));
    let counted = ended.clone();
    let server = PackServer::new(pack())
        .with_stateless_http(stateless)
        .on_call_end(move |end| {
            if end.tool == "echo" {
                counted.fetch_add(1, Ordering::SeqCst);
            }
        });
    let url = start(server).await;
    let http = http_client();
    let started = Instant::now();
    let mut opening = tokio::task::JoinSet::new();
    for _ in 0..SESSIONS {
        let (http, url) = (http.clone(), url.clone());
        opening.spawn(async move { Session::open(&http, &url).await });
    }
    let sessions = opening.join_all().await;
    let ids: HashSet<_> = sessions.iter().filter_map(|s| s.id.clone()).collect();
    let expected = if stateless { 0 } else { SESSIONS as usize };
    assert_eq!(
        ids.len(),
        expected,
        "one session id per client with sessions"
    );

    // Every call of every session at once; request ids are unique per session only, as
    // they would be from 100 independent clients.
    let calls_started = Instant::now();
    let mut calls = tokio::task::JoinSet::new();
    for (s, session) in sessions.iter().enumerate() {
        for n in 0..CALLS_PER_SESSION {
            let session = session.clone();
            calls.spawn(async move {
                let id = n + 1;
                let answer = session
                    .call(id, "echo", json!({"session": s, "n": n}), false)
                    .await;
                (s as u64, n, id, answer)
            });
        }
    }
    let answers = tokio::time::timeout(Duration::from_secs(120), calls.join_all())
        .await
        .expect("1 000 calls end within 120 s");
    let call_time = calls_started.elapsed();
    let total_time = started.elapsed();
    let mut seen = HashSet::new();
    for (s, n, id, answer) in &answers {
        assert_eq!(answer.status, 200, "{answer:?}");
        let responses = answer.responses();
        assert_eq!(responses.len(), 1, "exactly one response: {answer:?}");
        assert_eq!(responses[0]["id"], json!(id), "{answer:?}");
        assert_eq!(
            responses[0]["result"]["isError"],
            json!(false),
            "{answer:?}"
        );
        assert_eq!(result_text(responses[0]), format!("echo {s}/{n}"));
        assert!(
            seen.insert((*s, *id)),
            "session {s} call {id} answered twice"
        );
    }
    assert_eq!(seen.len(), (SESSIONS * CALLS_PER_SESSION) as usize);
    let (peak, now) = rss_mib(None);
    let overlap = ECHO_PEAK.load(Ordering::SeqCst);
    println!(
        "load ({mode}): {} calls from {SESSIONS} clients: {:.2} s for the calls ({:.2} s \
         with the handshakes), at most {overlap} running at once; peak RSS {peak} MiB, now \
         {now} MiB",
        answers.len(),
        call_time.as_secs_f64(),
        total_time.as_secs_f64(),
    );
    assert!(
        overlap >= 100,
        "the calls really ran concurrently ({overlap} at most)"
    );
    assert!(peak < 512, "peak RSS {peak} MiB");
    assert!(call_time < Duration::from_secs(60), "{call_time:?}");
    assert_eq!(ECHO_LIVE.load(Ordering::SeqCst), 0);
    assert_eq!(ended.load(Ordering::SeqCst), answers.len());
}

/// Waits until `counter` reads `want`, for at most `bound`.
async fn settle(counter: &AtomicUsize, want: usize, bound: Duration) {
    let started = Instant::now();
    while counter.load(Ordering::SeqCst) != want {
        assert!(
            started.elapsed() < bound,
            "the counter reads {} after {bound:?}, not {want}",
            counter.load(Ordering::SeqCst)
        );
        tokio::time::sleep(Duration::from_millis(10)).await;
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_cancel_storm_and_dropped_connections_leave_no_call_running() {
    const STORM_SESSIONS: u64 = 20;
    const PER_SESSION: u64 = 10;
    // Long enough that only a cancellation or a closed stream can end the call in time.
    const HOLD_MS: u64 = 60_000;
    let ended = Arc::new(std::sync::Mutex::new(Vec::new()));
    let log = ended.clone();
    let url = start(PackServer::new(pack()).on_call_end(move |end| {
        if end.tool == "hold" {
            log.lock().unwrap().push(end.outcome);
        }
    }))
    .await;
    let http = http_client();
    let mut sessions = Vec::new();
    for _ in 0..STORM_SESSIONS {
        sessions.push(Session::open(&http, &url).await);
    }
    // Start every call and read its stream up to the tool's first progress: the call is
    // running then.
    let mut starting = tokio::task::JoinSet::new();
    for (s, session) in sessions.iter().enumerate() {
        for n in 0..PER_SESSION {
            let session = session.clone();
            starting.spawn(async move {
                let id = n + 1;
                let message = Session::call_message(id, "hold", json!({"ms": HOLD_MS}), true);
                let mut response = session.send(&message).await;
                let mut events = SseEvents::default();
                read_until(&mut response, &mut events, |m| {
                    m["method"] == "notifications/progress"
                })
                .await;
                (s, id, response)
            });
        }
    }
    let running = starting.join_all().await;
    let total = (STORM_SESSIONS * PER_SESSION) as usize;
    assert_eq!(HOLD_LIVE.load(Ordering::SeqCst), total);

    let storm = Instant::now();
    let mut kept = Vec::new();
    for (s, id, response) in running {
        if id % 2 == 0 {
            // Cancelled: the server aborts the call and sends no response; the stream
            // ends.
            assert_eq!(sessions[s].cancel(id).await, 202);
            kept.push(response);
        } else {
            // The client goes away mid-call: its connection closes.
            drop(response);
        }
    }
    settle(&HOLD_LIVE, 0, Duration::from_secs(10)).await;
    println!(
        "cancel storm: {total} running calls, {} cancelled and {} disconnected: none \
         running {:.3} s after the storm began",
        total / 2,
        total / 2,
        storm.elapsed().as_secs_f64()
    );
    // The cancelled calls' streams end without a response for them.
    for response in kept {
        let answer = read_answer(response).await;
        assert!(answer.responses().is_empty(), "{answer:?}");
    }
    // Every call ended through the server's call path, as an abort.
    let deadline = Instant::now() + Duration::from_secs(10);
    while ended.lock().unwrap().len() < total && Instant::now() < deadline {
        tokio::time::sleep(Duration::from_millis(10)).await;
    }
    let outcomes = ended.lock().unwrap().clone();
    assert_eq!(outcomes.len(), total);
    assert!(
        outcomes
            .iter()
            .all(|o| matches!(o, CallOutcome::Error(ToolErrorKind::Aborted))),
        "{outcomes:?}"
    );
    // The server still serves.
    let answer = sessions[0]
        .call(99, "echo", json!({"session": 0, "n": 99}), false)
        .await;
    assert_eq!(result_text(answer.responses()[0]), "echo 0/99");
}
