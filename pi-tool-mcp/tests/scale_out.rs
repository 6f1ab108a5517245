//! Scale-out (issue 11 §4): two server processes in stateless streamable-HTTP mode
//! (`PackServer::with_stateless_http`) behind a round-robin TCP proxy on 127.0.0.1.
//!
//! - Every call through the proxy is answered, once, with its progress, and both
//!   replicas serve.
//! - A `notifications/cancelled` reaches a replica that is not running the call: it is
//!   accepted there and ignored, the call completes on its own replica, and the client
//!   gets its result.
//! - Closing the call's response is the cancellation that works: the replica running it
//!   aborts it.
//!
//! The replicas are this test binary run again (`replica_process`, which serves only
//! when `SCALE_OUT_REPLICA` is set), so no extra binary is built; the proxy and the
//! replica start are `support/replicas.rs`.

mod support;

use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::{Duration, Instant};

use pi_tool::pack::{ToolOwner, ToolPack};
use pi_tool::{AbortSignal, AgentToolResult, OnUpdate, ToolError, pi_tool};
use pi_tool_mcp::PackServer;
use serde_json::json;
use support::replicas::{REPLICA_ADDR, round_robin, start_replica};
use support::{Session, SseEvents, http_client, read_answer, read_until, result_text};
use tokio::net::TcpListener;
use tokio::process::Child;

/// Calls of `work` running in this process.
static LIVE: AtomicUsize = AtomicUsize::new(0);

struct Live;

impl Live {
    fn enter() -> Live {
        LIVE.fetch_add(1, Ordering::SeqCst);
        Live
    }
}

impl Drop for Live {
    fn drop(&mut self) {
        LIVE.fetch_sub(1, Ordering::SeqCst);
    }
}

#[pi_tool::params]
struct WorkParams {
    /// Progress updates to send.
    steps: u64,
    /// Milliseconds to wait before each update.
    step_ms: u64,
}

/// Sends `steps` progress updates, `step_ms` apart, then names the process that ran it.
#[pi_tool(execution_mode = "parallel")]
async fn work(
    _call_id: &str,
    params: WorkParams,
    signal: AbortSignal,
    on_update: OnUpdate<u64>,
) -> Result<AgentToolResult<u64>, ToolError> {
    let _live = Live::enter();
    for step in 1..=params.steps {
        signal.sleep(Duration::from_millis(params.step_ms)).await?;
        on_update.send(AgentToolResult::text(format!("step {step}"), step));
    }
    Ok(AgentToolResult::text(
        format!("done by {}", std::process::id()),
        params.steps,
    ))
}

#[pi_tool::params]
struct NoParams {}

/// How many calls of `work` this process is running, and its pid.
#[pi_tool]
async fn live_calls(_params: NoParams) -> Result<String, ToolError> {
    Ok(format!(
        "{} live in {}",
        LIVE.load(Ordering::SeqCst),
        std::process::id()
    ))
}

/// A replica's entry point: does nothing unless the parent test started this binary
/// with `SCALE_OUT_REPLICA` set; then serves until killed.
#[test]
fn replica_process() {
    if std::env::var_os("SCALE_OUT_REPLICA").is_none() {
        return;
    }
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
        .unwrap();
    runtime.block_on(async {
        let mut pack = ToolPack::new();
        let owner = ToolOwner::new("scale-out-test");
        pack.push(owner.clone(), Work).unwrap();
        pack.push(owner, LiveCalls).unwrap();
        let listener = TcpListener::bind("127.0.0.1:0").await.unwrap();
        println!("{REPLICA_ADDR}{}", listener.local_addr().unwrap());
        PackServer::new(pack)
            .with_stateless_http(true)
            .serve_http(listener)
            .await
            .unwrap();
    });
}

async fn cluster() -> (Vec<Child>, String) {
    let replica = [("SCALE_OUT_REPLICA", "1")];
    let (a, address_a) = start_replica("replica_process", &replica).await;
    let (b, address_b) = start_replica("replica_process", &replica).await;
    let proxy = round_robin(vec![address_a, address_b]).await;
    (vec![a, b], proxy.url)
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn every_call_through_the_balancer_is_answered_with_its_progress() {
    let (_replicas, url) = cluster().await;
    let http = http_client();
    // A stateless server hands out no session: `initialize` is answered, and nothing
    // needs to stick to the replica that answered it.
    let session = Session::open(&http, &url).await;
    assert_eq!(session.id, None);
    // No standalone event stream and no session to end.
    for method in [reqwest::Method::GET, reqwest::Method::DELETE] {
        let response = http
            .request(method.clone(), &url)
            .header("accept", "text/event-stream")
            .send()
            .await
            .unwrap();
        assert_eq!(response.status().as_u16(), 405, "{method}");
    }
    let calls: u64 = 200;
    let started = Instant::now();
    let mut running = tokio::task::JoinSet::new();
    for id in 1..=calls {
        let session = session.clone();
        running.spawn(async move {
            let arguments = json!({"steps": 3, "step_ms": 20});
            (id, session.call(id, "work", arguments, true).await)
        });
    }
    let answers = tokio::time::timeout(Duration::from_secs(120), running.join_all())
        .await
        .expect("every call ends within 120 s");
    let mut by_replica = std::collections::BTreeMap::<String, usize>::new();
    for (id, answer) in &answers {
        let responses = answer.responses();
        assert_eq!(responses.len(), 1, "one response: {answer:?}");
        assert_eq!(responses[0]["id"], json!(id));
        assert_eq!(
            responses[0]["result"]["isError"],
            json!(false),
            "{answer:?}"
        );
        let progress = answer.progress();
        assert_eq!(
            progress.len(),
            3,
            "three progress notifications: {answer:?}"
        );
        for (n, note) in progress.iter().enumerate() {
            assert_eq!(note["params"]["progressToken"], json!(format!("p{id}")));
            assert_eq!(note["params"]["progress"].as_f64(), Some((n + 1) as f64));
            assert_eq!(note["params"]["message"], json!(format!("step {}", n + 1)));
        }
        *by_replica
            .entry(result_text(responses[0]).to_owned())
            .or_default() += 1;
    }
    println!(
        "scale-out: {calls} calls through a round-robin proxy to 2 replica processes in \
         {:.2} s, each with its 3 progress notifications: {by_replica:?}",
        started.elapsed().as_secs_f64()
    );
    assert_eq!(by_replica.len(), 2, "both replicas served: {by_replica:?}");
}

/// `live_calls` on the replica the next connection goes to.
async fn live_calls_on_next(session: &Session, id: u64) -> String {
    let answer = session.call(id, "live_calls", json!({}), false).await;
    result_text(answer.responses()[0]).to_owned()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_cancellation_that_reaches_another_replica_is_ignored_and_the_call_completes() {
    let (_replicas, url) = cluster().await;
    let http = http_client();
    // Connections alternate between the replicas, and each POST is its own connection:
    // initialize (A), initialized (B), then the call goes to A.
    let session = Session::open(&http, &url).await;
    let started = Instant::now();
    let message = Session::call_message(1, "work", json!({"steps": 4, "step_ms": 250}), true);
    let mut response = session.send(&message).await;
    let mut events = SseEvents::default();
    // The call is running on A once its first progress arrives.
    let mut seen = read_until(&mut response, &mut events, |m| {
        m["method"] == "notifications/progress"
    })
    .await;
    // The cancellation goes to B, which does not run the call: accepted and ignored.
    assert_eq!(session.cancel(1).await, 202);
    // Next connection: A. The call is still running there.
    let on_a = live_calls_on_next(&session, 2).await;
    assert!(on_a.starts_with("1 live in "), "{on_a}");
    let rest = read_answer(response).await;
    seen.extend(rest.messages);
    let responses: Vec<_> = seen.iter().filter(|m| m.get("id").is_some()).collect();
    assert_eq!(responses.len(), 1, "{seen:?}");
    assert_eq!(responses[0]["result"]["isError"], json!(false), "{seen:?}");
    let pid_a = on_a.rsplit(' ').next().unwrap();
    assert_eq!(result_text(responses[0]), format!("done by {pid_a}"));
    let progress = seen
        .iter()
        .filter(|m| m["method"] == "notifications/progress")
        .count();
    assert_eq!(progress, 4, "{seen:?}");
    assert!(started.elapsed() >= Duration::from_millis(1000));
    println!(
        "scale-out: a cancellation routed to the other replica was ignored; the call \
         completed on {pid_a} after {:.2} s",
        started.elapsed().as_secs_f64()
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn closing_the_response_cancels_the_call_on_its_replica() {
    let (_replicas, url) = cluster().await;
    let http = http_client();
    // initialize (A), initialized (B), the call (A).
    let session = Session::open(&http, &url).await;
    let message = Session::call_message(1, "work", json!({"steps": 1, "step_ms": 60_000}), false);
    let response = session.send(&message).await;
    // B, then A: the call is running on A.
    let on_b = live_calls_on_next(&session, 2).await;
    assert!(on_b.starts_with("0 live in "), "{on_b}");
    let on_a = live_calls_on_next(&session, 3).await;
    assert!(on_a.starts_with("1 live in "), "{on_a}");
    drop(response);
    let started = Instant::now();
    loop {
        // B, then A again.
        let _ = live_calls_on_next(&session, 4).await;
        let on_a = live_calls_on_next(&session, 5).await;
        if on_a.starts_with("0 live in ") {
            break;
        }
        assert!(
            started.elapsed() < Duration::from_secs(10),
            "the call still runs on its replica: {on_a}"
        );
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
    println!(
        "scale-out: closing the response ended the call on its replica within {:.3} s",
        started.elapsed().as_secs_f64()
    );
}
