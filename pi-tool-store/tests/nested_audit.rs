//! Nested calls in durable runs (issues 30 and 31), on SQLite and PostgreSQL: the nested
//! calls of a resumed call leave `requested`, `decided`, `started` and `finished` records
//! naming their parent, hash-chained with the rest (an edited one is found by `verify`);
//! a process killed while a nested call runs (SIGKILL, this test binary run again as
//! `resume_process`) leaves neither the outer call nor the nested one to run again; an
//! outer call declared idempotent runs again, and the nested call that had finished
//! inside it is replayed, not run again.
//!
//! Every tool appends a line to a file in the test's directory when it runs, so the
//! files count executions across processes.

mod common;

use std::path::Path;
use std::sync::Arc;
use std::time::{Duration, Instant};

use common::{Backend, TempDir, append, lines};
use pi_tool::agent::{
    Agent, AgentOptions, ApprovalPolicy, BeforeToolCall, BeforeToolCallContext,
    BeforeToolCallResult, DurableRuns, RunOutcome, RunPolicy,
};
use pi_tool::context::ExtensionContext;
use pi_tool::durable::{Decision, DurableStore, Verdict, verify_chain};
use pi_tool::model::{AssistantContent, Message};
use pi_tool::safety::Redactor;
use pi_tool::testing::{FauxModel, FauxTurn};
use pi_tool::{AbortSignal, CallPolicy, IntoAgentTool, ToolError, async_trait, json, pi_tool};
use serde_json::Value;

/// The secret the call policy redacts; `settle` hands it on to `post` in a memo.
const SECRET: &str = "hunter2hunter2";

/// How long a resuming process holds its run: the killed one's ends this long after
/// its claim.
const LEASE: Duration = Duration::from_millis(1000);

#[pi_tool::params]
struct StampParams {
    /// Where the count goes.
    dir: String,
}

/// Stamps the run: one line in `stamps.txt`.
#[pi_tool(destructive = false, open_world = false)]
async fn stamp(params: StampParams) -> Result<String, ToolError> {
    append(&params.dir, "stamps.txt", "stamp")?;
    Ok("stamped".to_owned())
}

#[pi_tool::params]
struct PostParams {
    /// Where the posting goes.
    dir: String,
    /// Who receives.
    to: String,
    /// How much.
    amount: f64,
    /// How long the posting holds before it returns (ms).
    hold_ms: Option<u64>,
    /// A note kept with it.
    memo: Option<String>,
}

/// Posts `amount` to `to`: one line in `posts.txt`, then holds.
#[pi_tool(destructive = false, open_world = false)]
async fn post(params: PostParams) -> Result<String, ToolError> {
    append(
        &params.dir,
        "posts.txt",
        &format!(
            "{} {} {}",
            params.to,
            params.amount,
            params.memo.unwrap_or_default()
        ),
    )?;
    tokio::time::sleep(Duration::from_millis(params.hold_ms.unwrap_or(0))).await;
    Ok(format!("posted {} to {}", params.amount, params.to))
}

#[pi_tool::params]
struct WireParams {
    /// Who receives.
    to: String,
}

/// Wires money out: destructive, so the approval policy asks.
#[pi_tool(destructive, open_world = false)]
async fn wire(params: WireParams) -> Result<String, ToolError> {
    Ok(format!("wired to {}", params.to))
}

#[pi_tool::params]
struct SettleParams {
    /// Where the tools write.
    dir: String,
    /// Who receives.
    to: String,
    /// How much.
    amount: f64,
    /// How long the posting holds (ms).
    hold_ms: Option<u64>,
}

/// Five nested calls: a stamp, a posting (with the secret in its memo), a posting the
/// hook blocks, a wire the policy asks about, a posting with invalid arguments.
async fn settle_steps(tool: &str, p: SettleParams, ctx: ExtensionContext) -> String {
    if let Err(error) = append(&p.dir, "outer.txt", tool) {
        return error.message().to_owned();
    }
    let calls = [
        ("stamp", json!({"dir": p.dir})),
        (
            "post",
            json!({"dir": p.dir, "to": p.to, "amount": p.amount, "hold_ms": p.hold_ms,
                   "memo": format!("key {SECRET}")}),
        ),
        (
            "post",
            json!({"dir": p.dir, "to": "mallory", "amount": p.amount}),
        ),
        ("wire", json!({"to": p.to})),
        ("post", json!({"dir": p.dir, "to": p.to, "amount": "lots"})),
    ];
    let mut out = Vec::new();
    for (name, args) in calls {
        out.push(match ctx.call_tool(name, args).await {
            Ok(result) => format!("ok: {}", result.text_content()),
            Err(error) => format!("err: {}", error.message()),
        });
    }
    out.join("\n")
}

/// Settles with `to` through five nested calls.
#[pi_tool(destructive, open_world = false, reaches = ["stamp", "post", "wire"])]
async fn settle(params: SettleParams, ctx: ExtensionContext) -> Result<String, ToolError> {
    Ok(settle_steps("settle", params, ctx).await)
}

/// `settle`, declared idempotent: a resume runs it again after a crash.
#[pi_tool(destructive, idempotent, open_world = false, reaches = ["stamp", "post", "wire"])]
async fn resettle(params: SettleParams, ctx: ExtensionContext) -> Result<String, ToolError> {
    Ok(settle_steps("resettle", params, ctx).await)
}

/// The approval policy, deferred, behind a gate that blocks payments to mallory.
struct Gate(ApprovalPolicy);

#[async_trait]
impl BeforeToolCall for Gate {
    async fn before_tool_call(
        &self,
        ctx: BeforeToolCallContext<'_>,
        signal: &AbortSignal,
    ) -> Result<BeforeToolCallResult, ToolError> {
        if ctx.args.get("to").and_then(Value::as_str) == Some("mallory") {
            return Ok(BeforeToolCallResult::block("payee mallory is blocked"));
        }
        self.0.before_tool_call(ctx, signal).await
    }
}

fn agent(store: Arc<dyn DurableStore>, turns: Vec<FauxTurn>) -> Agent {
    Agent::new(
        AgentOptions::new(Arc::new(FauxModel::new(turns)))
            .tools(vec![
                Settle.into_agent_tool(),
                Resettle.into_agent_tool(),
                Stamp.into_agent_tool(),
                Post.into_agent_tool(),
                Wire.into_agent_tool(),
            ])
            .policy(
                RunPolicy::new()
                    .call(CallPolicy::new().redact_secrets(Redactor::new([SECRET]).unwrap()))
                    .before_tool_call(Arc::new(Gate(ApprovalPolicy::new().defer()))),
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

/// Runs `tool` until it suspends for its approval, and approves it.
async fn suspend_and_approve(store: Arc<dyn DurableStore>, run: &str, tool: &str, args: Value) {
    let call = AssistantContent::tool_call("call_1", tool, args);
    let first = agent(store.clone(), vec![FauxTurn::new(vec![call])]);
    let outcome = first.run(run, vec![Message::user_text("settle")]).await;
    let Ok(RunOutcome::Suspended(s)) = outcome else {
        panic!("expected a suspension, got {outcome:?}");
    };
    assert_eq!(s.pending.len(), 1);
    assert_eq!(s.pending[0].tool, tool);
    let d = Decision::new(run, "call_1", &s.pending[0].digest, Verdict::Approve).by("ana");
    store.decide(&d, &d.audit_event()).await.unwrap();
}

/// Resumes `run` in this process; the model answers once the batch is done. A posting
/// that holds (the kill tests') running again would hold for minutes: 20 s fails.
async fn resume(store: Arc<dyn DurableStore>, run: &str) -> (Agent, RunOutcome) {
    let agent = agent(store, vec![FauxTurn::text("done")]);
    let outcome = tokio::time::timeout(Duration::from_secs(20), agent.resume_run(run))
        .await
        .expect("the resumed run ends within 20 s (a holding call ran again?)")
        .unwrap();
    (agent, outcome)
}

/// The text of the outer tool's result.
fn outer_result(agent: &Agent) -> String {
    let result = agent
        .messages()
        .iter()
        .filter_map(Message::as_tool_result)
        .find(|r| &*r.tool_call_id == "call_1")
        .expect("the outer call's result")
        .clone();
    result.content.iter().filter_map(|c| c.as_text()).collect()
}

/// The bodies of this run's audit records, in order, with their `seq`.
async fn records(store: &dyn DurableStore, run: &str) -> Vec<(i64, Value)> {
    store
        .audit_log()
        .await
        .unwrap()
        .into_iter()
        .map(|r| (r.seq, serde_json::from_str::<Value>(&r.body).unwrap()))
        .filter(|(_, body)| body["run"] == run)
        .collect()
}

/// The kinds of the records of `call`, in order.
fn kinds(records: &[(i64, Value)], call: &str) -> Vec<String> {
    records
        .iter()
        .filter(|(_, b)| b["call"] == call)
        .map(|(_, b)| b["kind"].as_str().unwrap().to_owned())
        .collect()
}

fn record<'r>(records: &'r [(i64, Value)], call: &str, kind: &str) -> &'r (i64, Value) {
    records
        .iter()
        .find(|(_, b)| b["call"] == call && b["kind"] == kind)
        .unwrap_or_else(|| panic!("no {kind} record of {call}: {records:#?}"))
}

async fn nested_calls_leave_records_naming_their_parent(url: String) {
    let backend = Backend::open(&url).await;
    let dir = TempDir::new("nested-records");
    let d = dir.0.to_str().unwrap();
    let run = unique("nested");
    let args = json!({"dir": d, "to": "bob", "amount": 7});
    suspend_and_approve(backend.store(), &run, "settle", args).await;
    let (agent, outcome) = resume(backend.store(), &run).await;
    assert!(
        matches!(outcome, RunOutcome::Finished { .. }),
        "{outcome:?}"
    );
    let text = outer_result(&agent);
    let said: Vec<&str> = text.lines().collect();
    assert_eq!(said[0], "ok: stamped");
    assert_eq!(said[1], "ok: posted 7 to bob");
    assert_eq!(said[2], "err: payee mallory is blocked");
    assert!(said[3].starts_with("err: wire needs approval"), "{text}");
    assert!(said[4].starts_with("err: Validation failed"), "{text}");
    assert_eq!(
        (lines(&dir.0, "stamps.txt"), lines(&dir.0, "posts.txt")),
        (1, 1)
    );

    let log = records(&*backend.store(), &run).await;
    // The outer call's marks enclose every record of its nested calls.
    let (outer_started, _) = record(&log, "call_1", "started");
    let (outer_finished, _) = record(&log, "call_1", "finished");
    let nested: Vec<&(i64, Value)> = log
        .iter()
        .filter(|(_, b)| b["call"].as_str().unwrap_or("").starts_with("call_1/"))
        .collect();
    assert_eq!(nested.len(), 2 * 4 + 3 * 2, "{log:#?}");
    for (seq, body) in &nested {
        assert_eq!(body["parent"], "call_1", "{body}");
        assert!(outer_started < seq && seq < outer_finished, "{body}");
    }
    let ran = ["requested", "decided", "started", "finished"];
    assert_eq!(kinds(&log, "call_1/1"), ran);
    assert_eq!(kinds(&log, "call_1/2"), ran);
    for refused in ["call_1/3", "call_1/4", "call_1/5"] {
        assert_eq!(kinds(&log, refused), ["requested", "decided"]);
    }

    // Allowed: one digest from request to finish; the secret never reaches the log.
    let (_, requested) = record(&log, "call_1/2", "requested");
    assert_eq!(requested["tool"], "post");
    let digest = requested["digest"].as_str().unwrap();
    assert_eq!(digest.len(), 64);
    assert_eq!(requested["arguments"]["to"], "bob");
    assert!(
        !requested.to_string().contains(SECRET),
        "redacted: {requested}"
    );
    let (_, decided) = record(&log, "call_1/2", "decided");
    assert_eq!(
        (&decided["verdict"], &decided["by"], &decided["digest"]),
        (&json!("approve"), &json!("policy"), &json!(digest))
    );
    assert_eq!(record(&log, "call_1/2", "started").1["digest"], digest);
    let (_, finished) = record(&log, "call_1/2", "finished");
    assert_eq!(finished["outcome"], "ok");
    assert_eq!(finished["resultDigest"].as_str().unwrap().len(), 64);

    // Refused: by the hook, by a question nobody can wait for, by validation.
    let (_, blocked) = record(&log, "call_1/3", "decided");
    assert_eq!(
        (&blocked["verdict"], &blocked["reason"]),
        (&json!("deny"), &json!("payee mallory is blocked"))
    );
    let (_, asked) = record(&log, "call_1/4", "decided");
    assert_eq!(
        (&asked["verdict"], &asked["asked"]),
        (&json!("deny"), &json!(true))
    );
    assert!(
        asked["reason"].as_str().unwrap().contains("needs approval"),
        "{asked}"
    );
    let (_, invalid) = record(&log, "call_1/5", "requested");
    assert_eq!(invalid["arguments"]["amount"], "lots");
    assert!(invalid.get("digest").is_none(), "not validated: {invalid}");

    let report = verify_chain(&backend.store().audit_log().await.unwrap());
    assert!(report.ok(), "{report:?}");
}

async fn an_edited_nested_record_is_found(url: String) {
    let backend = Backend::open(&url).await;
    let dir = TempDir::new("nested-edit");
    let run = unique("nested-edit");
    let args = json!({"dir": dir.0.to_str().unwrap(), "to": "bob", "amount": 7});
    suspend_and_approve(backend.store(), &run, "settle", args).await;
    resume(backend.store(), &run).await;
    let log = records(&*backend.store(), &run).await;
    let (seq, _) = record(&log, "call_1/2", "finished");
    assert!(verify_chain(&backend.store().audit_log().await.unwrap()).ok());
    // The nested posting's outcome rewritten, as someone hiding a failure would.
    let edited = backend
        .raw(&format!(
            "UPDATE audit SET body = replace(body, '\"outcome\":\"ok\"', '\"outcome\":\"error\"') WHERE seq = {seq}"
        ))
        .await;
    assert_eq!(edited, 1);
    let report = verify_chain(&backend.store().audit_log().await.unwrap());
    let bad = report.first_bad.expect("the edit is found");
    assert_eq!(bad.seq, *seq, "{}", bad.reason);
    assert!(bad.reason.contains("edited"), "{}", bad.reason);
}

/// Where the child process reads its task.
const CHILD_URL: &str = "NESTED_AUDIT_CHILD_URL";
const CHILD_RUN: &str = "NESTED_AUDIT_CHILD_RUN";

/// The resuming process the kill tests kill: does nothing unless a test started this
/// binary with `NESTED_AUDIT_CHILD_URL` and `NESTED_AUDIT_CHILD_RUN` set; then resumes
/// that run.
#[test]
fn resume_process() {
    let (Some(url), Some(run)) = (std::env::var_os(CHILD_URL), std::env::var_os(CHILD_RUN)) else {
        return;
    };
    let (url, run) = (url.into_string().unwrap(), run.into_string().unwrap());
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
        .unwrap();
    runtime.block_on(async {
        let store = Backend::open(&url).await.store();
        resume(store, &run).await;
    });
}

/// Resumes `run` in a child process and kills it (SIGKILL) once the nested posting
/// started; returns when the child's lease has run out.
fn resume_and_kill(url: &str, run: &str, dir: &Path) {
    let mut child = std::process::Command::new(std::env::current_exe().unwrap())
        .args([
            "--exact",
            "resume_process",
            "--nocapture",
            "--test-threads=1",
        ])
        .env(CHILD_URL, url)
        .env(CHILD_RUN, run)
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::null())
        .spawn()
        .unwrap();
    let start = Instant::now();
    while lines(dir, "posts.txt") == 0 {
        assert!(
            start.elapsed() < Duration::from_secs(60),
            "the nested posting never started"
        );
        std::thread::sleep(Duration::from_millis(10));
    }
    // The claim came before the posting: the lease ends within LEASE of now.
    let seen = start.elapsed();
    child.kill().unwrap();
    child.wait().unwrap();
    while start.elapsed() < seen + LEASE + Duration::from_millis(200) {
        std::thread::sleep(Duration::from_millis(20));
    }
}

async fn killed_while_a_nested_call_runs_neither_call_runs_again(url: String) {
    let backend = Backend::open(&url).await;
    let dir = TempDir::new("nested-kill");
    let run = unique("nested-kill");
    let args = json!({"dir": dir.0.to_str().unwrap(), "to": "carol", "amount": 5,
                      "hold_ms": 600_000});
    suspend_and_approve(backend.store(), &run, "settle", args).await;
    let (url2, run2, dir2) = (url.clone(), run.clone(), dir.0.clone());
    tokio::task::spawn_blocking(move || resume_and_kill(&url2, &run2, &dir2))
        .await
        .unwrap();

    // Marked started: the outer call and the posting inside it; neither finished.
    let log = records(&*backend.store(), &run).await;
    let asked = ["requested", "decided"];
    assert_eq!(kinds(&log, "call_1"), [&asked[..], &["started"]].concat());
    assert_eq!(kinds(&log, "call_1/2"), ["requested", "decided", "started"]);

    let (agent, outcome) = resume(Backend::open(&url).await.store(), &run).await;
    assert!(
        matches!(outcome, RunOutcome::Finished { .. }),
        "{outcome:?}"
    );
    let text = outer_result(&agent);
    assert!(
        text.contains("Tool settle was interrupted") && text.contains("may have run"),
        "{text}"
    );
    assert_eq!(lines(&dir.0, "outer.txt"), 1, "the outer call ran once");
    assert_eq!(lines(&dir.0, "posts.txt"), 1, "the nested posting ran once");
    assert_eq!(lines(&dir.0, "stamps.txt"), 1);

    let log = records(&*backend.store(), &run).await;
    assert_eq!(
        kinds(&log, "call_1"),
        ["requested", "decided", "started", "interrupted"]
    );
    assert_eq!(
        kinds(&log, "call_1/2"),
        ["requested", "decided", "started", "interrupted"]
    );
    assert_eq!(
        record(&log, "call_1/2", "interrupted").1["parent"],
        "call_1"
    );
    assert!(verify_chain(&backend.store().audit_log().await.unwrap()).ok());
}

async fn an_idempotent_outer_call_runs_again_and_replays_its_finished_nested_calls(url: String) {
    let backend = Backend::open(&url).await;
    let dir = TempDir::new("nested-idempotent");
    let run = unique("nested-idem");
    let args = json!({"dir": dir.0.to_str().unwrap(), "to": "dave", "amount": 3,
                      "hold_ms": 600_000});
    suspend_and_approve(backend.store(), &run, "resettle", args).await;
    let (url2, run2, dir2) = (url.clone(), run.clone(), dir.0.clone());
    tokio::task::spawn_blocking(move || resume_and_kill(&url2, &run2, &dir2))
        .await
        .unwrap();

    let (agent, outcome) = resume(Backend::open(&url).await.store(), &run).await;
    assert!(
        matches!(outcome, RunOutcome::Finished { .. }),
        "{outcome:?}"
    );
    let text = outer_result(&agent);
    let said: Vec<&str> = text.lines().collect();
    // The stamp had finished: replayed. The posting had started: interrupted, not run.
    assert_eq!(said[0], "ok: stamped", "{text}");
    assert!(
        said[1].starts_with("err: Tool post was interrupted"),
        "{text}"
    );
    assert_eq!(said[2], "err: payee mallory is blocked");
    assert_eq!(lines(&dir.0, "outer.txt"), 2, "the outer call ran again");
    assert_eq!(
        lines(&dir.0, "stamps.txt"),
        1,
        "the finished stamp was replayed"
    );
    assert_eq!(lines(&dir.0, "posts.txt"), 1, "the posting ran once");

    let log = records(&*backend.store(), &run).await;
    assert_eq!(
        kinds(&log, "call_1"),
        ["requested", "decided", "started", "started", "finished"],
        "{log:#?}"
    );
    assert_eq!(record(&log, "call_1", "started").1.get("again"), None);
    // Asked for again (the hook decided again); its result replayed, so no new marks.
    assert_eq!(
        kinds(&log, "call_1/1"),
        [
            "requested",
            "decided",
            "started",
            "finished",
            "requested",
            "decided"
        ]
    );
    assert_eq!(
        kinds(&log, "call_1/2"),
        [
            "requested",
            "decided",
            "started",
            "requested",
            "decided",
            "interrupted"
        ]
    );
    assert!(verify_chain(&backend.store().audit_log().await.unwrap()).ok());
}

on_both_backends!(
    nested_calls_leave_records_naming_their_parent,
    an_edited_nested_record_is_found,
    killed_while_a_nested_call_runs_neither_call_runs_again,
    an_idempotent_outer_call_runs_again_and_replays_its_finished_nested_calls,
);
