//! MCP tasks on pi-tool-store's stores (`SqlTaskStore`): a task created on one replica is
//! polled on another (PostgreSQL, two `PackServer`s on their own connections), a finished
//! task survives a restart (SQLite, a new server on the same file), a task whose
//! process died reads `failed` with a clear message (both), and a task that ended keeps
//! that state whoever saves after (both). `mcp_replicas.rs` does the same across
//! processes.

// The fresh-database helper of pi-tool-store's tests.
#[path = "../../../pi-tool-store/tests/common/mod.rs"]
mod common;

use std::sync::atomic::{AtomicU64, Ordering};
use std::time::Duration;

use pi_tool::{ToolError, pi_tool, tool_pack};
use pi_tool_mcp::{ORPHANED_TASK_MESSAGE, PackServer};
use pi_tool_store::{PostgresStore, SqlTaskStore, SqliteStore};
use serde_json::{Value, json};
use tokio::io::{AsyncBufReadExt, AsyncWriteExt, BufReader};
use tokio::sync::Mutex;

#[pi_tool::params]
struct SlowParams {
    /// How long to work (ms).
    ms: u64,
}

/// Works `ms` milliseconds, then says so.
#[pi_tool(task_support = "required", read_only)]
async fn slow(params: SlowParams) -> Result<String, ToolError> {
    tokio::time::sleep(Duration::from_millis(params.ms)).await;
    Ok(format!("worked {} ms", params.ms))
}

/// One MCP session over an in-process pipe.
struct Session {
    write: Mutex<tokio::io::WriteHalf<tokio::io::DuplexStream>>,
    lines: Mutex<tokio::io::Lines<BufReader<tokio::io::ReadHalf<tokio::io::DuplexStream>>>>,
    next: AtomicU64,
    server: tokio::task::JoinHandle<()>,
}

impl Session {
    async fn open(server: PackServer) -> Session {
        let (client, server_side) = tokio::io::duplex(64 * 1024);
        let server = tokio::spawn(async move {
            let (read, write) = tokio::io::split(server_side);
            let _ = server.serve_io(read, write).await;
        });
        let (read, write) = tokio::io::split(client);
        let session = Session {
            write: Mutex::new(write),
            lines: Mutex::new(BufReader::new(read).lines()),
            next: AtomicU64::new(1),
            server,
        };
        let init = session
            .request(
                "initialize",
                json!({
                "protocolVersion": "2025-11-25",
                "capabilities": {"extensions": {"io.modelcontextprotocol/tasks": {}}},
                "clientInfo": {"name": "durable-tasks-test", "version": "0"}}),
            )
            .await;
        assert!(init.get("result").is_some(), "{init}");
        session
            .send(json!({"jsonrpc": "2.0", "method": "notifications/initialized"}))
            .await;
        session
    }

    async fn send(&self, message: Value) {
        let mut line = serde_json::to_vec(&message).unwrap();
        line.push(b'\n');
        self.write.lock().await.write_all(&line).await.unwrap();
    }

    async fn request(&self, method: &str, params: Value) -> Value {
        let id = self.next.fetch_add(1, Ordering::Relaxed);
        self.send(json!({"jsonrpc": "2.0", "id": id, "method": method, "params": params}))
            .await;
        let mut lines = self.lines.lock().await;
        loop {
            let line = tokio::time::timeout(Duration::from_secs(10), lines.next_line())
                .await
                .expect("an answer within 10 s")
                .unwrap()
                .expect("the pipe stays open");
            let answer: Value = serde_json::from_str(&line).unwrap();
            if answer.get("id").and_then(Value::as_u64) == Some(id) {
                return answer;
            }
        }
    }

    /// Calls `slow` as a task; its id.
    async fn start(&self, ms: u64) -> String {
        let answer = self
            .request(
                "tools/call",
                json!({"name": "slow", "arguments": {"ms": ms}}),
            )
            .await;
        answer["result"]["taskId"]
            .as_str()
            .unwrap_or_else(|| panic!("a task: {answer}"))
            .to_owned()
    }

    async fn get(&self, task: &str) -> Value {
        let answer = self.request("tasks/get", json!({"taskId": task})).await;
        answer
            .get("result")
            .cloned()
            .unwrap_or_else(|| panic!("{answer}"))
    }

    async fn until_done(&self, task: &str) -> Value {
        for _ in 0..200 {
            let state = self.get(task).await;
            if state["status"] != "working" {
                return state;
            }
            tokio::time::sleep(Duration::from_millis(25)).await;
        }
        panic!("task {task} never finished");
    }
}

impl Drop for Session {
    fn drop(&mut self) {
        self.server.abort();
    }
}

fn server(store: SqlTaskStore) -> PackServer {
    PackServer::new(tool_pack![Slow]).with_task_store(store)
}

fn text(state: &Value) -> String {
    state["result"]["content"][0]["text"]
        .as_str()
        .unwrap_or("")
        .to_owned()
}

fn sqlite_path(tag: &str) -> std::path::PathBuf {
    let dir = std::env::temp_dir().join(format!("durable-tasks-{tag}-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    dir.join("tasks.db")
}

const BEAT: Duration = Duration::from_millis(50);

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn two_replicas_share_tasks_on_postgres() {
    let Some(url) = common::postgres_url("two_replicas_share_tasks").await else {
        return;
    };
    let a = Session::open(server(
        SqlTaskStore::postgres(PostgresStore::connect(&url).await.unwrap(), BEAT)
            .await
            .unwrap(),
    ))
    .await;
    let b = Session::open(server(
        SqlTaskStore::postgres(PostgresStore::connect(&url).await.unwrap(), BEAT)
            .await
            .unwrap(),
    ))
    .await;
    let task = a.start(400).await;
    // The other replica sees it working (its owner is alive), then done.
    assert_eq!(b.get(&task).await["status"], "working");
    tokio::time::sleep(BEAT * 4).await;
    assert_eq!(
        b.get(&task).await["status"],
        "working",
        "alive, so not failed"
    );
    let done = b.until_done(&task).await;
    assert_eq!(done["status"], "completed", "{done}");
    assert_eq!(text(&done), "worked 400 ms");
    // An unknown task is -32602 on either replica.
    let unknown = b.request("tasks/get", json!({"taskId": "nope"})).await;
    assert_eq!(unknown["error"]["code"], -32602, "{unknown}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_finished_task_survives_a_restart_on_sqlite() {
    let path = sqlite_path("restart");
    let task = {
        let store = SqliteStore::open(&path).await.unwrap();
        let a = Session::open(server(SqlTaskStore::sqlite(store, BEAT).await.unwrap())).await;
        let task = a.start(50).await;
        assert_eq!(a.until_done(&task).await["status"], "completed");
        task
    };
    // A new process on the same file.
    let store = SqliteStore::open(&path).await.unwrap();
    let b = Session::open(server(SqlTaskStore::sqlite(store, BEAT).await.unwrap())).await;
    let state = b.get(&task).await;
    assert_eq!(state["status"], "completed", "{state}");
    assert_eq!(text(&state), "worked 50 ms");
    let _ = std::fs::remove_dir_all(path.parent().unwrap());
}

/// Where a test's task stores live.
#[derive(Clone)]
enum Kind {
    Sqlite(std::path::PathBuf),
    Postgres(String),
}

async fn open(kind: &Kind) -> SqlTaskStore {
    match kind {
        Kind::Sqlite(path) => SqlTaskStore::sqlite(SqliteStore::open(path).await.unwrap(), BEAT)
            .await
            .unwrap(),
        Kind::Postgres(url) => {
            SqlTaskStore::postgres(PostgresStore::connect(url).await.unwrap(), BEAT)
                .await
                .unwrap()
        }
    }
}

/// The replica that runs the task dies: it runs on its own runtime, which is shut down
/// with everything on it (its session, its running tool, its heartbeat, its
/// connection), as a killed process would be. Another replica reads the task `failed`.
async fn a_task_whose_process_died_reads_failed(kind: Kind) {
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(1)
        .enable_all()
        .build()
        .unwrap();
    let first = kind.clone();
    let (task, session) = std::thread::spawn(move || {
        let started = runtime.block_on(async move {
            let a = Session::open(server(open(&first).await)).await;
            let task = a.start(60_000).await;
            (task, a)
        });
        (started, runtime)
    })
    .join()
    .map(|((task, a), runtime)| (task, (a, runtime)))
    .unwrap();
    let b = Session::open(server(open(&kind).await)).await;
    assert_eq!(b.get(&task).await["status"], "working");
    let (a, runtime) = session;
    std::mem::forget(a); // its pipe and tasks go down with the runtime
    runtime.shutdown_background();
    tokio::time::sleep(BEAT * 5).await;
    let state = b.get(&task).await;
    assert_eq!(state["status"], "failed", "{state}");
    assert_eq!(state["error"]["message"], ORPHANED_TASK_MESSAGE, "{state}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_task_whose_process_died_reads_failed_on_sqlite() {
    let path = sqlite_path("died");
    a_task_whose_process_died_reads_failed(Kind::Sqlite(path.clone())).await;
    let _ = std::fs::remove_dir_all(path.parent().unwrap());
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_task_whose_process_died_reads_failed_on_postgres() {
    let Some(url) = common::postgres_url("a_task_whose_process_died_reads_failed").await else {
        return;
    };
    a_task_whose_process_died_reads_failed(Kind::Postgres(url)).await;
}

/// A task that ended keeps that state, whichever store (replica) saves after: the
/// cancellation one replica records is not overwritten by the end its owner reaches.
async fn an_ended_task_keeps_its_state(kind: Kind) {
    use pi_tool_mcp::TaskStore;
    let ttl = Duration::from_secs(60);
    let (owner, other) = (open(&kind).await, open(&kind).await);
    assert_eq!(owner.cancel_check_interval(), Some(BEAT));
    let working = json!({"taskId": "t", "status": "working"});
    let cancelled = json!({"taskId": "t", "status": "cancelled"});
    owner.save("t", working.clone(), ttl).await.unwrap();
    other.save("t", cancelled.clone(), ttl).await.unwrap();
    let completed = json!({"taskId": "t", "status": "completed", "result": {}});
    owner.save("t", completed, ttl).await.unwrap();
    owner.save("t", working, ttl).await.unwrap();
    assert_eq!(other.load("t").await.unwrap(), Some(cancelled.clone()));
    assert_eq!(owner.load("t").await.unwrap(), Some(cancelled));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_ended_task_keeps_its_state_on_sqlite() {
    let path = sqlite_path("ended");
    an_ended_task_keeps_its_state(Kind::Sqlite(path.clone())).await;
    let _ = std::fs::remove_dir_all(path.parent().unwrap());
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_ended_task_keeps_its_state_on_postgres() {
    let Some(url) = common::postgres_url("an_ended_task_keeps_its_state").await else {
        return;
    };
    an_ended_task_keeps_its_state(Kind::Postgres(url)).await;
}
