//! MCP tasks shared by replica processes (issue 31): two server processes serving the
//! same pack over stateless streamable HTTP (the 2026-07-28 revision: every request
//! stands alone) with one PostgreSQL `SqlTaskStore`, behind the round-robin proxy of
//! pi-tool-mcp's scale-out test (`support/replicas.rs`, included by path).
//!
//! - A task created on one replica is polled on the other, which answers its state and
//!   its result (inlined in `tasks/get`: SEP-2663 has no `tasks/result` and no
//!   `tasks/list`, and both replicas say so alike).
//! - `tasks/cancel` on the replica that does not run the task: the task reads
//!   `cancelled` at once on both, and the tool on the other replica sees its abort
//!   within a few heartbeats.
//! - `tasks/update` on the replica that does not run the task: refused (-32603), the
//!   task still waits; on the replica that runs it, taken.
//! - A replica killed with SIGKILL while its task runs: the survivor reads the task
//!   `failed` with `ORPHANED_TASK_MESSAGE` once the dead replica's heartbeat is stale.
//! - SQLite: a finished task survives a restart (SIGKILL, a new process on the file).
//!
//! The replicas are this test binary run again (`replica_process`, which serves only
//! when `MCP_TASK_REPLICA` names a store).

// The fresh-database helper of pi-tool-store's tests.
#[path = "../../../pi-tool-store/tests/common/mod.rs"]
mod common;
#[path = "../../../pi-tool-mcp/tests/support/mod.rs"]
mod support;

use std::path::Path;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::{Duration, Instant};

use common::TempDir;
use pi_tool::context::ExtensionContext;
use pi_tool::{AbortSignal, AgentToolResult, OnUpdate, ToolError, pi_tool, tool_pack};
use pi_tool_mcp::{ORPHANED_TASK_MESSAGE, PackServer};
use pi_tool_store::{PostgresStore, SqlTaskStore, SqliteStore};
use serde_json::{Value, json};
use support::replicas::{Proxy, REPLICA_ADDR, round_robin, start_replica};
use support::{http_client, read_answer};
use tokio::process::Child;

/// The replicas' heartbeat: a task of a dead replica reads `failed` three beats later.
/// Short, so that the tests are; long enough that a loaded machine's late beat does not
/// make a live replica look dead.
const BEAT_MS: u64 = 300;

#[pi_tool::params]
struct SlowParams {
    /// Steps to work.
    steps: u64,
    /// Milliseconds per step.
    step_ms: u64,
}

/// Works `steps` steps of `step_ms`, then names the process that ran it. Writes
/// `aborted <pid>` to `$MCP_TASK_REPLICA_DIR/events` when its abort signal fires.
#[pi_tool(task_support = "required", read_only)]
async fn slow(
    _call_id: &str,
    params: SlowParams,
    signal: AbortSignal,
    on_update: OnUpdate<u64>,
) -> Result<AgentToolResult<u64>, ToolError> {
    for step in 1..=params.steps {
        if let Err(aborted) = signal.sleep(Duration::from_millis(params.step_ms)).await {
            record(&format!("aborted {}", std::process::id()));
            return Err(aborted);
        }
        on_update.send(AgentToolResult::text(format!("step {step}"), step));
    }
    Ok(AgentToolResult::text(
        format!("worked {} steps in {}", params.steps, std::process::id()),
        params.steps,
    ))
}

#[pi_tool::params]
struct ConfirmParams {
    /// Milliseconds to wait before asking.
    ms: u64,
}

/// Waits `ms`, then asks whether to go on (a task's question, `input_required`); says
/// what it was told and which process asked.
#[pi_tool(task_support = "required", read_only)]
async fn confirm_later(params: ConfirmParams, ctx: ExtensionContext) -> Result<String, ToolError> {
    tokio::time::sleep(Duration::from_millis(params.ms)).await;
    let yes = ctx.ui().confirm("Go on?", "The test answers.").await;
    Ok(format!("told {yes} in {}", std::process::id()))
}

fn record(line: &str) {
    use std::io::Write;
    let Some(dir) = std::env::var_os("MCP_TASK_REPLICA_DIR") else {
        return;
    };
    let mut file = std::fs::OpenOptions::new()
        .create(true)
        .append(true)
        .open(Path::new(&dir).join("events"))
        .unwrap();
    writeln!(file, "{line}").unwrap();
}

/// A replica's entry point: does nothing unless the parent test started this binary
/// with `MCP_TASK_REPLICA` set to a store (`sqlite:PATH` or a PostgreSQL URL); then
/// serves the pack with its tasks in that store until killed.
#[test]
fn replica_process() {
    let Some(store) = std::env::var_os("MCP_TASK_REPLICA") else {
        return;
    };
    let store = store.into_string().unwrap();
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
        .unwrap();
    runtime.block_on(async {
        let beat = Duration::from_millis(BEAT_MS);
        let tasks = match store.strip_prefix("sqlite:") {
            Some(path) => SqlTaskStore::sqlite(SqliteStore::open(path).await.unwrap(), beat).await,
            None => {
                SqlTaskStore::postgres(PostgresStore::connect(&store).await.unwrap(), beat).await
            }
        }
        .unwrap();
        let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
        println!("{REPLICA_ADDR}{}", listener.local_addr().unwrap());
        PackServer::new(tool_pack![Slow, ConfirmLater])
            .with_task_store(tasks)
            .with_stateless_http(true)
            .serve_http(listener)
            .await
            .unwrap();
    });
}

/// A client of the 2026-07-28 revision: no session, each request carries its
/// protocol version and capabilities (the tasks extension) and is its own connection.
struct Client {
    http: reqwest::Client,
    url: String,
    next: AtomicU64,
}

impl Client {
    fn new(url: &str) -> Client {
        Client {
            http: http_client(),
            url: url.to_owned(),
            next: AtomicU64::new(1),
        }
    }

    /// One request; the JSON-RPC response.
    async fn request(&self, method: &str, mut params: Value) -> Value {
        let id = self.next.fetch_add(1, Ordering::Relaxed);
        params["_meta"] = json!({
            "io.modelcontextprotocol/protocolVersion": "2026-07-28",
            "io.modelcontextprotocol/clientInfo": {"name": "mcp-replicas-test", "version": "0"},
            "io.modelcontextprotocol/clientCapabilities": {
                "elicitation": {},
                "extensions": {"io.modelcontextprotocol/tasks": {}}},
        });
        let mut request = self
            .http
            .post(&self.url)
            .header("content-type", "application/json")
            .header("accept", "application/json, text/event-stream")
            .header("mcp-protocol-version", "2026-07-28")
            .header("mcp-method", method);
        // The revision's routing header: the tool's name, or the task's id.
        if let Some(name) = params["name"].as_str().or(params["taskId"].as_str()) {
            request = request.header("mcp-name", name);
        }
        let message = json!({"jsonrpc": "2.0", "id": id, "method": method, "params": params});
        let response = tokio::time::timeout(
            Duration::from_secs(30),
            request.body(message.to_string()).send(),
        )
        .await
        .expect("an answer within 30 s")
        .expect("the proxy answers");
        let answer = read_answer(response).await;
        answer
            .messages
            .into_iter()
            .find(|m| m["id"] == json!(id))
            .unwrap_or_else(|| panic!("no response to {method} ({id})"))
    }

    /// Calls `tool` as a task; the task's id.
    async fn start(&self, tool: &str, arguments: Value) -> String {
        let answer = self
            .request("tools/call", json!({"name": tool, "arguments": arguments}))
            .await;
        assert_eq!(answer["result"]["resultType"], "task", "{answer}");
        answer["result"]["taskId"]
            .as_str()
            .unwrap_or_else(|| panic!("a task: {answer}"))
            .to_owned()
    }

    /// `tasks/get`: the task's state.
    async fn get(&self, task: &str) -> Value {
        let answer = self.request("tasks/get", json!({"taskId": task})).await;
        answer
            .get("result")
            .cloned()
            .unwrap_or_else(|| panic!("tasks/get {task}: {answer}"))
    }
}

/// The backends that served the requests with `method` naming `task` (any task: `""`),
/// in order.
fn served(proxy: &Proxy, method: &str, task: &str) -> Vec<usize> {
    let method = format!("\"method\":\"{method}\"");
    proxy
        .routed()
        .iter()
        .filter(|r| r.request.contains(&method) && r.request.contains(task))
        .map(|r| r.backend)
        .collect()
}

fn result_text(state: &Value) -> &str {
    state["result"]["content"][0]["text"]
        .as_str()
        .unwrap_or_default()
}

async fn replica(store: &str, dir: &Path) -> (Child, String) {
    let dir = dir.to_str().unwrap();
    start_replica(
        "replica_process",
        &[("MCP_TASK_REPLICA", store), ("MCP_TASK_REPLICA_DIR", dir)],
    )
    .await
}

/// Two replicas on one fresh PostgreSQL database behind a proxy, and a client of it.
struct Cluster {
    replicas: Vec<Child>,
    pids: Vec<u32>,
    proxy: Proxy,
    client: Client,
    /// Where the replicas' tools write `events`; removed at drop.
    dir: TempDir,
}

impl Cluster {
    /// `None` (skipped, said loudly) without a test server outside CI.
    async fn start(test: &str) -> Option<Cluster> {
        let url = common::postgres_url(test).await?;
        let dir = TempDir::new(test);
        let (a, address_a) = replica(&url, &dir.0).await;
        let (b, address_b) = replica(&url, &dir.0).await;
        let pids = vec![a.id().unwrap(), b.id().unwrap()];
        let proxy = round_robin(vec![address_a, address_b]).await;
        let client = Client::new(&proxy.url);
        Some(Cluster {
            replicas: vec![a, b],
            pids,
            proxy,
            client,
            dir,
        })
    }

    /// Calls `tool` as a task through the proxy; the task, the replica that runs it
    /// (the one its `tools/call` reached) and the other one.
    async fn task(&self, tool: &str, arguments: Value) -> (String, usize, usize) {
        let task = self.client.start(tool, arguments).await;
        let [owner] = served(&self.proxy, "tools/call", "")[..] else {
            panic!("one tools/call: {:?}", self.proxy.routed());
        };
        (task, owner, 1 - owner)
    }

    /// Sends `tasks/get` for `task` until the next connection goes to `backend`.
    async fn turn_to(&self, backend: usize, task: &str) {
        while self.proxy.next_backend() != backend {
            self.client.get(task).await;
        }
    }

    /// `tasks/get` on `backend`.
    async fn get_on(&self, backend: usize, task: &str) -> Value {
        self.turn_to(backend, task).await;
        self.client.get(task).await
    }
}

/// Polls `tasks/get` through the proxy while the task's status is one of `statuses`;
/// the first state with another.
async fn poll_while(client: &Client, task: &str, statuses: &[&str], within: Duration) -> Value {
    let started = Instant::now();
    loop {
        let state = client.get(task).await;
        if !statuses.iter().any(|status| state["status"] == *status) {
            return state;
        }
        assert!(
            started.elapsed() < within,
            "still {statuses:?} after {within:?}: {state}"
        );
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
}

/// Polls until the task has ended (neither working nor waiting for input).
async fn until_ended(client: &Client, task: &str, within: Duration) -> Value {
    poll_while(client, task, &["working", "input_required"], within).await
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_task_created_on_one_replica_is_polled_on_the_other() {
    let Some(cluster) = Cluster::start("polled").await else {
        return;
    };
    let (task, owner, other) = cluster
        .task("slow", json!({"steps": 4, "step_ms": 100}))
        .await;
    // The other replica knows the task at once, working.
    let working = cluster.get_on(other, &task).await;
    assert_eq!(working["status"], "working", "{working}");
    // Both replicas poll it to its end, alternately; each reads the same result.
    let done = until_ended(&cluster.client, &task, Duration::from_secs(10)).await;
    assert_eq!(done["status"], "completed", "{done}");
    let expected = format!("worked 4 steps in {}", cluster.pids[owner]);
    assert_eq!(result_text(&done), expected, "{done}");
    for backend in [owner, other] {
        let state = cluster.get_on(backend, &task).await;
        assert_eq!(
            state["status"], "completed",
            "on replica {backend}: {state}"
        );
        assert_eq!(state["result"], done["result"], "on replica {backend}");
        assert_eq!(state["taskId"], json!(task));
    }
    let gets = served(&cluster.proxy, "tasks/get", &task);
    assert!(
        gets.contains(&owner) && gets.contains(&other),
        "both replicas served tasks/get: {gets:?}"
    );
    // SEP-2663 inlines the result in tasks/get and lists no tasks: neither replica has
    // tasks/result or tasks/list, and both say so the same way.
    for backend in [0, 1] {
        for method in ["tasks/result", "tasks/list"] {
            cluster.turn_to(backend, &task).await;
            let answer = cluster
                .client
                .request(method, json!({"taskId": task}))
                .await;
            assert_eq!(
                answer["error"]["code"], -32601,
                "{method} on {backend}: {answer}"
            );
        }
    }
    // An unknown task is -32602 on either replica.
    for backend in [0, 1] {
        cluster.turn_to(backend, &task).await;
        let unknown = cluster
            .client
            .request("tasks/get", json!({"taskId": "nope"}))
            .await;
        assert_eq!(unknown["error"]["code"], -32602, "{unknown}");
    }
}

fn aborted_in(dir: &Path) -> Vec<String> {
    std::fs::read_to_string(dir.join("events"))
        .unwrap_or_default()
        .lines()
        .filter(|line| line.starts_with("aborted "))
        .map(str::to_owned)
        .collect()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_cancel_sent_to_the_other_replica_cancels_the_task_and_aborts_its_tool() {
    let Some(cluster) = Cluster::start("cancelled").await else {
        return;
    };
    let (task, owner, other) = cluster
        .task("slow", json!({"steps": 600, "step_ms": 100}))
        .await;
    cluster.turn_to(other, &task).await;
    let cancelled_at = Instant::now();
    let answer = cluster
        .client
        .request("tasks/cancel", json!({"taskId": task}))
        .await;
    assert!(answer.get("result").is_some(), "{answer}");
    assert_eq!(served(&cluster.proxy, "tasks/cancel", &task), [other]);
    // Cancelled at once, whichever replica answers.
    for backend in [owner, other] {
        let state = cluster.get_on(backend, &task).await;
        assert_eq!(
            state["status"], "cancelled",
            "on replica {backend}: {state}"
        );
    }
    // The tool on the owner sees its abort within a few beats.
    let expected = format!("aborted {}", cluster.pids[owner]);
    loop {
        if aborted_in(&cluster.dir.0) == [expected.clone()] {
            break;
        }
        assert!(
            cancelled_at.elapsed() < Duration::from_secs(5),
            "the tool on the owner was not aborted: {:?}",
            aborted_in(&cluster.dir.0)
        );
        tokio::time::sleep(Duration::from_millis(10)).await;
    }
    let aborted_after = cancelled_at.elapsed();
    // Its end does not overwrite the cancellation.
    tokio::time::sleep(Duration::from_millis(BEAT_MS * 2)).await;
    for backend in [owner, other] {
        let state = cluster.get_on(backend, &task).await;
        assert_eq!(
            state["status"], "cancelled",
            "on replica {backend}: {state}"
        );
    }
    println!(
        "replicas: a tasks/cancel sent to the other replica aborted the tool on its owner \
         after {:.3} s (heartbeat {BEAT_MS} ms)",
        aborted_after.as_secs_f64()
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn answers_sent_to_the_other_replica_are_refused_and_the_owner_takes_them() {
    let Some(cluster) = Cluster::start("answered").await else {
        return;
    };
    let (task, owner, other) = cluster.task("confirm_later", json!({"ms": 50})).await;
    let asked = poll_while(
        &cluster.client,
        &task,
        &["working"],
        Duration::from_secs(10),
    )
    .await;
    assert_eq!(asked["status"], "input_required", "{asked}");
    let key = asked["inputRequests"]
        .as_object()
        .and_then(|requests| requests.keys().next().cloned())
        .unwrap_or_else(|| panic!("a question: {asked}"));
    let update = json!({"taskId": task, "inputResponses": {
        key.clone(): {"action": "accept", "content": {"confirm": true}}}});
    // The replica that does not run the task cannot hand the answer over: refused, and
    // the task still waits for it.
    cluster.turn_to(other, &task).await;
    let refused = cluster.client.request("tasks/update", update.clone()).await;
    assert_eq!(refused["error"]["code"], -32603, "{refused}");
    let message = refused["error"]["message"].as_str().unwrap_or_default();
    assert!(message.contains("another server process"), "{refused}");
    assert!(message.contains("not delivered"), "{refused}");
    assert_eq!(cluster.client.get(&task).await["status"], "input_required");
    // The replica that runs it takes it, and the task ends there.
    cluster.turn_to(owner, &task).await;
    let taken = cluster.client.request("tasks/update", update).await;
    assert!(taken.get("result").is_some(), "{taken}");
    let done = until_ended(&cluster.client, &task, Duration::from_secs(10)).await;
    assert_eq!(done["status"], "completed", "{done}");
    assert_eq!(
        result_text(&done),
        format!("told true in {}", cluster.pids[owner])
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_task_whose_replica_was_killed_reads_failed_on_the_survivor() {
    let Some(mut cluster) = Cluster::start("killed").await else {
        return;
    };
    let (task, owner, other) = cluster
        .task("slow", json!({"steps": 600, "step_ms": 100}))
        .await;
    assert_eq!(cluster.get_on(other, &task).await["status"], "working");
    // SIGKILL: no destructor, no last write.
    cluster.replicas[owner].kill().await.unwrap();
    let killed_at = Instant::now();
    let before = cluster.proxy.routed().len();
    let failed = until_ended(&cluster.client, &task, Duration::from_secs(10)).await;
    let noticed_after = killed_at.elapsed();
    assert_eq!(failed["status"], "failed", "{failed}");
    assert_eq!(
        failed["error"]["message"], ORPHANED_TASK_MESSAGE,
        "{failed}"
    );
    assert_eq!(failed["statusMessage"], ORPHANED_TASK_MESSAGE, "{failed}");
    // Only the survivor answered since.
    let after: Vec<usize> = cluster.proxy.routed()[before..]
        .iter()
        .map(|r| r.backend)
        .collect();
    assert!(
        !after.is_empty() && after.iter().all(|&b| b == other),
        "{after:?}"
    );
    println!(
        "replicas: the survivor read the killed replica's task failed {:.3} s after the kill \
         (heartbeat {BEAT_MS} ms)",
        noticed_after.as_secs_f64()
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_finished_task_survives_a_restart_of_its_process_on_sqlite() {
    let dir = TempDir::new("restart");
    let store = format!("sqlite:{}", dir.0.join("tasks.db").display());
    let (mut first, address) = replica(&store, &dir.0).await;
    let first_pid = first.id().unwrap();
    let client = Client::new(&format!("http://{address}/mcp"));
    let task = client
        .start("slow", json!({"steps": 2, "step_ms": 50}))
        .await;
    let done = until_ended(&client, &task, Duration::from_secs(10)).await;
    assert_eq!(done["status"], "completed", "{done}");
    assert_eq!(result_text(&done), format!("worked 2 steps in {first_pid}"));
    first.kill().await.unwrap();
    // A new process on the same file.
    let (second, address) = replica(&store, &dir.0).await;
    assert_ne!(second.id(), Some(first_pid));
    let client = Client::new(&format!("http://{address}/mcp"));
    let state = client.get(&task).await;
    assert_eq!(state["status"], "completed", "{state}");
    assert_eq!(state["result"], done["result"]);
    assert_eq!(state["createdAt"], done["createdAt"]);
    drop(second);
}
