//! Exactly once in the turns after a resume (issue 31), on SQLite and PostgreSQL: a run
//! suspends for a wire, is approved and resumed in a child process; in the next turn the
//! model calls `post`, which appends a line to a file, and the child is killed (SIGKILL)
//! while the posting holds, or after it finished while the model is thinking. A new
//! process resumes: the posting did not run again (one line), and the model reads the
//! interrupted error, or the posting's stored result.
//!
//! A store that refuses the checkpoint runs nothing of the later batch: the model reads
//! that the call was not run.
//!
//! The model is scripted on the transcript (not on a count of requests), so a resume that
//! went back to the wire's suspension would ask it again and it would call `post` again.

mod common;

use std::path::Path;
use std::sync::Arc;
use std::time::{Duration, Instant};

use common::{Backend, TempDir, append, lines};
use pi_tool::agent::{Agent, AgentOptions, ApprovalPolicy, DurableRuns, RunOutcome, RunPolicy};
use pi_tool::durable::{
    AuditEvent, AuditRecord, ClaimedRun, Decision, DurableStore, PendingApproval, StoreError,
    Verdict, verify_chain,
};
use pi_tool::model::{AssistantContent, Context, Message, Model, StreamFn, StreamOptions};
use pi_tool::testing::{FauxModel, FauxTurn};
use pi_tool::{IntoAgentTool, ToolError, ToolExecutionMode, async_trait, json, pi_tool};
use serde_json::Value;

/// How long a resuming process holds its run (renewed at each checkpoint).
const LEASE: Duration = Duration::from_millis(1000);

/// Where the child process reads its task.
const CHILD_URL: &str = "LATER_TURNS_CHILD_URL";
const CHILD_RUN: &str = "LATER_TURNS_CHILD_RUN";
const CHILD_DIR: &str = "LATER_TURNS_CHILD_DIR";
const CHILD_MODE: &str = "LATER_TURNS_CHILD_MODE";

#[pi_tool::params]
struct WireParams {
    /// Where the wire is written.
    dir: String,
    /// Who receives.
    to: String,
}

/// Wires money out: destructive, so the approval policy asks.
#[pi_tool(destructive, open_world = false)]
async fn wire(params: WireParams) -> Result<String, ToolError> {
    append(&params.dir, "wires.txt", &params.to)?;
    Ok(format!("wired to {}", params.to))
}

#[pi_tool::params]
struct PostParams {
    /// Where the posting goes.
    dir: String,
    /// Who receives.
    to: String,
    /// How much.
    amount: f64,
}

/// Posts `amount` to `to`: one line in `posts.txt`, then holds while the file `hold`
/// exists in `dir` (the kill test's window).
#[pi_tool(destructive = false, open_world = false)]
async fn post(params: PostParams) -> Result<String, ToolError> {
    append(
        &params.dir,
        "posts.txt",
        &format!("{} {}", params.to, params.amount),
    )?;
    let hold = Path::new(&params.dir).join("hold");
    let start = Instant::now();
    while hold.exists() && start.elapsed() < Duration::from_secs(600) {
        tokio::time::sleep(Duration::from_millis(10)).await;
    }
    Ok(format!("posted {} to {}", params.amount, params.to))
}

fn text_of(message: &Message) -> String {
    match message {
        Message::ToolResult(result) => result.content.iter().filter_map(|c| c.as_text()).collect(),
        Message::Assistant(assistant) => assistant.text(),
        _ => String::new(),
    }
}

/// The model: asks for the wire, then once the wire's result is in calls `post`, then
/// answers with a text quoting the posting's result (after `think`, the window of the
/// "killed after the call" test).
fn model(dir: String, think: Duration) -> impl StreamFn {
    move |model: &Model, context: &Context, options: StreamOptions| {
        let last = context.messages.last();
        let answered = |id: &str| {
            last.and_then(Message::as_tool_result)
                .is_some_and(|r| &*r.tool_call_id == id)
        };
        let turn = if answered("call_1") {
            FauxTurn::new(vec![AssistantContent::tool_call(
                "call_2",
                "post",
                json!({"dir": dir, "to": "bob", "amount": 7}),
            )])
        } else if answered("call_2") {
            let said = last.map(text_of).unwrap_or_default();
            FauxTurn::text(format!("said: {said}")).with_delay(think)
        } else {
            FauxTurn::new(vec![AssistantContent::tool_call(
                "call_1",
                "wire",
                json!({"dir": dir, "to": "bob"}),
            )])
        };
        FauxModel::new(vec![turn]).stream(model, context, options)
    }
}

fn agent(store: Arc<dyn DurableStore>, dir: &str, think: Duration, sequential: bool) -> Agent {
    let mode = match sequential {
        true => ToolExecutionMode::Sequential,
        false => ToolExecutionMode::Parallel,
    };
    Agent::new(
        AgentOptions::new(Arc::new(model(dir.to_owned(), think)))
            .tools(vec![Wire.into_agent_tool(), Post.into_agent_tool()])
            .policy(
                RunPolicy::new()
                    .tool_execution(mode)
                    .before_tool_call(Arc::new(ApprovalPolicy::new().defer())),
            )
            .durable(DurableRuns::new(store).lease(LEASE)),
    )
}

fn unique(tag: &str) -> String {
    static NEXT: std::sync::atomic::AtomicU64 = std::sync::atomic::AtomicU64::new(0);
    let n = NEXT.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
    format!(
        "{tag}-{}-{}-{n}",
        std::process::id(),
        pi_tool::durable::now_ms()
    )
}

/// The resuming process the tests kill: does nothing unless a test started this binary
/// with the `LATER_TURNS_CHILD_*` variables set; then resumes that run, with a model that
/// thinks for minutes before its last answer.
#[test]
fn resume_process() {
    let vars = [CHILD_URL, CHILD_RUN, CHILD_DIR, CHILD_MODE].map(std::env::var);
    let [Ok(url), Ok(run), Ok(dir), Ok(mode)] = vars else {
        return;
    };
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
        .unwrap();
    runtime.block_on(async {
        let store = Backend::open(&url).await.store();
        let agent = agent(store, &dir, Duration::from_secs(600), mode == "sequential");
        let _ = agent.resume_run(&run).await;
    });
}

/// The records of `call` in `run`, by kind, in order.
async fn kinds(store: &dyn DurableStore, run: &str, call: &str) -> Vec<String> {
    store
        .audit_log()
        .await
        .unwrap()
        .into_iter()
        .map(|r| serde_json::from_str::<Value>(&r.body).unwrap())
        .filter(|body| body["run"] == run && body["call"] == call)
        .map(|body| body["kind"].as_str().unwrap().to_owned())
        .collect()
}

/// Suspends `run` at the wire and approves it.
async fn suspend_and_approve(store: Arc<dyn DurableStore>, run: &str, dir: &str, seq: bool) {
    let first = agent(store.clone(), dir, Duration::ZERO, seq);
    let outcome = first.run(run, vec![Message::user_text("pay bob")]).await;
    let Ok(RunOutcome::Suspended(s)) = outcome else {
        panic!("expected a suspension, got {outcome:?}");
    };
    assert_eq!(s.pending[0].tool, "wire");
    let d = Decision::new(run, "call_1", &s.pending[0].digest, Verdict::Approve).by("ana");
    store.decide(&d, &d.audit_event()).await.unwrap();
}

/// Resumes `run` in a child process and kills it (SIGKILL) once `ready` says so, then
/// waits until its lease has run out.
async fn resume_and_kill(url: &str, run: &str, dir: &Path, seq: bool, ready: impl AsyncReady) {
    let mut child = std::process::Command::new(std::env::current_exe().unwrap())
        .args([
            "--exact",
            "resume_process",
            "--nocapture",
            "--test-threads=1",
        ])
        .env(CHILD_URL, url)
        .env(CHILD_RUN, run)
        .env(CHILD_DIR, dir)
        .env(CHILD_MODE, if seq { "sequential" } else { "parallel" })
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::null())
        .spawn()
        .unwrap();
    let start = Instant::now();
    while !ready.ready().await {
        assert!(
            start.elapsed() < Duration::from_secs(60),
            "the child never reached the kill point"
        );
        tokio::time::sleep(Duration::from_millis(10)).await;
    }
    child.kill().unwrap();
    child.wait().unwrap();
    // The lease was last renewed before the kill point.
    tokio::time::sleep(LEASE + Duration::from_millis(300)).await;
}

/// When the child may be killed.
trait AsyncReady {
    async fn ready(&self) -> bool;
}

/// The posting started (its line is written) and holds.
struct PostStarted<'a>(&'a Path);

impl AsyncReady for PostStarted<'_> {
    async fn ready(&self) -> bool {
        lines(self.0, "posts.txt") > 0
    }
}

/// The posting finished and its marker says so; the model is thinking.
struct PostFinished<'a>(&'a dyn DurableStore, &'a str);

impl AsyncReady for PostFinished<'_> {
    async fn ready(&self) -> bool {
        kinds(self.0, self.1, "call_2")
            .await
            .contains(&"finished".to_owned())
    }
}

/// Resumes `run` in this process, with a model that answers at once.
async fn resume(url: &str, run: &str, dir: &str, seq: bool) -> (Agent, RunOutcome) {
    let store = Backend::open(url).await.store();
    let agent = agent(store, dir, Duration::ZERO, seq);
    let outcome = tokio::time::timeout(Duration::from_secs(20), agent.resume_run(run))
        .await
        .expect("the resumed run ends within 20 s")
        .unwrap();
    (agent, outcome)
}

async fn killed_during_a_later_call(url: String, seq: bool) {
    let backend = Backend::open(&url).await;
    let dir = TempDir::new("later-during");
    let d = dir.0.to_str().unwrap();
    let run = unique("later-during");
    suspend_and_approve(backend.store(), &run, d, seq).await;
    std::fs::write(dir.0.join("hold"), "").unwrap();
    resume_and_kill(&url, &run, &dir.0, seq, PostStarted(&dir.0)).await;
    std::fs::remove_file(dir.0.join("hold")).unwrap();

    let (agent, outcome) = resume(&url, &run, d, seq).await;
    assert!(
        matches!(outcome, RunOutcome::Finished { .. }),
        "{outcome:?}"
    );
    assert_eq!(lines(&dir.0, "posts.txt"), 1, "the posting ran once");
    assert_eq!(lines(&dir.0, "wires.txt"), 1, "the wire ran once");
    let messages = agent.messages();
    let last = messages.last().map(text_of).unwrap_or_default();
    assert!(
        last.starts_with("said: Tool post was interrupted") && last.contains("may have run"),
        "{last}"
    );
    // The transcript is the run's: one result per call, the final answer last.
    let results: Vec<&str> = messages
        .iter()
        .filter_map(Message::as_tool_result)
        .map(|r| &*r.tool_call_id)
        .collect();
    assert_eq!(results, ["call_1", "call_2"]);
    assert_eq!(
        kinds(&*backend.store(), &run, "call_2").await,
        ["started", "interrupted"]
    );
    assert!(verify_chain(&backend.store().audit_log().await.unwrap()).ok());
}

async fn killed_after_a_later_call(url: String, seq: bool) {
    let backend = Backend::open(&url).await;
    let dir = TempDir::new("later-after");
    let d = dir.0.to_str().unwrap();
    let run = unique("later-after");
    suspend_and_approve(backend.store(), &run, d, seq).await;
    let store = backend.store();
    resume_and_kill(&url, &run, &dir.0, seq, PostFinished(&*store, &run)).await;

    let (agent, outcome) = resume(&url, &run, d, seq).await;
    assert!(
        matches!(outcome, RunOutcome::Finished { .. }),
        "{outcome:?}"
    );
    assert_eq!(lines(&dir.0, "posts.txt"), 1, "the posting ran once");
    assert_eq!(lines(&dir.0, "wires.txt"), 1, "the wire ran once");
    let last = agent.messages().last().map(text_of).unwrap_or_default();
    assert_eq!(last, "said: posted 7 to bob", "the stored result, replayed");
    assert_eq!(
        kinds(&*backend.store(), &run, "call_2").await,
        ["started", "finished"]
    );
    assert!(verify_chain(&backend.store().audit_log().await.unwrap()).ok());
}

/// A store whose checkpoints fail (a full disk, a dropped connection), and nothing else.
struct NoCheckpoint(Arc<dyn DurableStore>);

#[async_trait]
impl DurableStore for NoCheckpoint {
    async fn suspend(
        &self,
        run_id: &str,
        state: &Value,
        pending: &[PendingApproval],
        audit: &[AuditEvent],
    ) -> Result<(), StoreError> {
        self.0.suspend(run_id, state, pending, audit).await
    }
    async fn claim(&self, run_id: &str, lease: Duration) -> Result<ClaimedRun, StoreError> {
        self.0.claim(run_id, lease).await
    }
    async fn checkpoint(&self, _: &str, _: &Value, _: Duration) -> Result<(), StoreError> {
        Err(StoreError::Backend("disk full".to_owned()))
    }
    async fn finish(&self, run_id: &str, audit: &[AuditEvent]) -> Result<(), StoreError> {
        self.0.finish(run_id, audit).await
    }
    async fn pending(&self) -> Result<Vec<PendingApproval>, StoreError> {
        self.0.pending().await
    }
    async fn decide(&self, decision: &Decision, audit: &AuditEvent) -> Result<(), StoreError> {
        self.0.decide(decision, audit).await
    }
    async fn begin_call(
        &self,
        run_id: &str,
        call_id: &str,
        approval: Option<&str>,
        audit: &AuditEvent,
    ) -> Result<(), StoreError> {
        self.0.begin_call(run_id, call_id, approval, audit).await
    }
    async fn end_call(
        &self,
        run_id: &str,
        call_id: &str,
        message: &Value,
        audit: &AuditEvent,
    ) -> Result<(), StoreError> {
        self.0.end_call(run_id, call_id, message, audit).await
    }
    async fn append_audit(&self, events: &[AuditEvent]) -> Result<(), StoreError> {
        self.0.append_audit(events).await
    }
    async fn audit_log(&self) -> Result<Vec<AuditRecord>, StoreError> {
        self.0.audit_log().await
    }
}

async fn a_later_batch_whose_checkpoint_is_refused_runs_nothing(url: String, seq: bool) {
    let backend = Backend::open(&url).await;
    let dir = TempDir::new("later-refused");
    let d = dir.0.to_str().unwrap();
    let run = unique("later-refused");
    suspend_and_approve(backend.store(), &run, d, seq).await;
    let store = Arc::new(NoCheckpoint(backend.store()));
    let agent = agent(store, d, Duration::ZERO, seq);
    let outcome = agent.resume_run(&run).await.unwrap();
    assert!(
        matches!(outcome, RunOutcome::Finished { .. }),
        "{outcome:?}"
    );
    assert_eq!(lines(&dir.0, "wires.txt"), 1, "the resumed batch ran");
    assert_eq!(lines(&dir.0, "posts.txt"), 0, "the later batch ran nothing");
    let last = agent.messages().last().map(text_of).unwrap_or_default();
    assert_eq!(
        last,
        "said: Tool post was not run: the store failed: disk full"
    );
    assert!(kinds(&*backend.store(), &run, "call_2").await.is_empty());
}

async fn a_refused_checkpoint_runs_nothing_in_a_parallel_batch(url: String) {
    a_later_batch_whose_checkpoint_is_refused_runs_nothing(url, false).await;
}

async fn a_refused_checkpoint_runs_nothing_in_a_sequential_batch(url: String) {
    a_later_batch_whose_checkpoint_is_refused_runs_nothing(url, true).await;
}

async fn killed_during_a_later_call_in_a_parallel_batch(url: String) {
    killed_during_a_later_call(url, false).await;
}

async fn killed_during_a_later_call_in_a_sequential_batch(url: String) {
    killed_during_a_later_call(url, true).await;
}

async fn killed_after_a_later_call_in_a_parallel_batch(url: String) {
    killed_after_a_later_call(url, false).await;
}

async fn killed_after_a_later_call_in_a_sequential_batch(url: String) {
    killed_after_a_later_call(url, true).await;
}

on_both_backends!(
    killed_during_a_later_call_in_a_parallel_batch,
    killed_during_a_later_call_in_a_sequential_batch,
    killed_after_a_later_call_in_a_parallel_batch,
    killed_after_a_later_call_in_a_sequential_batch,
    a_refused_checkpoint_runs_nothing_in_a_parallel_batch,
    a_refused_checkpoint_runs_nothing_in_a_sequential_batch,
);
