//! Durable runs through the agent, on SQLite and PostgreSQL: a run suspends at a call
//! that needs approval and resumes in a fresh agent with the events and transcript of
//! the same run waiting in memory; an approval runs its call once, a wrong digest, a
//! second use and an expired approval are refused, a denial reaches the model, edited
//! stored arguments never run, two resumers give one execution, and a call interrupted
//! mid-execute is not run again.

mod common;

use std::collections::HashMap;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use common::Backend;
use pi_tool::agent::{
    Agent, AgentError, AgentEvent, AgentOptions, ApprovalPolicy, DurableRuns, RunLimits,
    RunOutcome, RunPolicy, Suspension,
};
use pi_tool::context::ExtensionUi;
use pi_tool::durable::{
    AuditKind, Decision, DurableStore, Refusal, StoreError, Verdict, verify_chain,
};
use pi_tool::model::{AssistantContent, Message};
use pi_tool::safety::Redactor;
use pi_tool::session::{AgentSession, FnExtension, SessionEvent};
use pi_tool::testing::{FauxModel, FauxTurn};
use pi_tool::{
    CallPolicy, IntoAgentTool, ToolError, ToolExecutionMode, async_trait, json, pi_tool,
};
use serde_json::Value;

/// How many times `transfer` started, by `to`.
static STARTED: Mutex<Option<HashMap<String, usize>>> = Mutex::new(None);

fn started(to: &str) -> usize {
    STARTED
        .lock()
        .unwrap()
        .as_ref()
        .and_then(|m| m.get(to).copied())
        .unwrap_or(0)
}

/// What `transfer` takes.
#[pi_tool::params]
struct TransferParams {
    /// Who receives.
    to: String,
    /// How much.
    amount: f64,
    /// How long the transfer holds before it returns (ms).
    hold_ms: Option<u64>,
}

/// Moves `amount` to `to`, then holds for `hold_ms`.
#[pi_tool(destructive, open_world = false)]
async fn transfer(params: TransferParams) -> Result<String, ToolError> {
    let TransferParams {
        to,
        amount,
        hold_ms,
    } = params;
    *STARTED
        .lock()
        .unwrap()
        .get_or_insert_with(HashMap::new)
        .entry(to.clone())
        .or_default() += 1;
    tokio::time::sleep(Duration::from_millis(hold_ms.unwrap_or(0))).await;
    Ok(format!("moved {amount} to {to}"))
}

/// Reads a balance.
#[pi_tool(read_only)]
async fn balance() -> Result<String, ToolError> {
    Ok("100".to_owned())
}

struct Yes;

#[async_trait]
impl ExtensionUi for Yes {
    async fn confirm(&self, _title: &str, _message: &str) -> bool {
        true
    }
}

fn calls(to: &str, extra: Value) -> FauxTurn {
    let mut args = json!({"to": to, "amount": "7"});
    if let (Some(map), Some(more)) = (args.as_object_mut(), extra.as_object()) {
        map.extend(more.clone());
    }
    FauxTurn::new(vec![
        AssistantContent::tool_call("call_0", "balance", json!({})),
        AssistantContent::tool_call("call_1", "transfer", args),
        AssistantContent::tool_call("call_2", "balance", json!({})),
    ])
}

fn options(turns: Vec<FauxTurn>, mode: ToolExecutionMode) -> AgentOptions {
    AgentOptions::new(Arc::new(FauxModel::new(turns)))
        .tools(vec![Transfer.into_agent_tool(), Balance.into_agent_tool()])
        .tool_execution(mode)
}

fn durable(store: Arc<dyn DurableStore>, turns: Vec<FauxTurn>, mode: ToolExecutionMode) -> Agent {
    Agent::new(
        options(turns, mode)
            .before_tool_call(Arc::new(ApprovalPolicy::new().defer()))
            .durable(DurableRuns::new(store).lease(Duration::from_millis(300))),
    )
}

/// Records every event as JSON without timestamps (two runs differ only there).
fn record(agent: &Agent) -> Arc<Mutex<Vec<Value>>> {
    let events = Arc::new(Mutex::new(Vec::new()));
    let sink = events.clone();
    agent.subscribe(move |event: &AgentEvent, _| {
        sink.lock()
            .unwrap()
            .push(normalized(serde_json::to_value(event).unwrap()));
        Ok(())
    });
    events
}

fn normalized(mut value: Value) -> Value {
    match &mut value {
        Value::Object(map) => {
            map.remove("timestamp");
            for v in map.values_mut() {
                *v = normalized(v.take());
            }
        }
        Value::Array(items) => {
            for v in items.iter_mut() {
                *v = normalized(v.take());
            }
        }
        _ => {}
    }
    value
}

fn sort_ends(events: &mut [Value]) {
    let is_end = |e: &Value| e["type"] == "tool_execution_end";
    let mut i = 0;
    while i < events.len() {
        let mut j = i;
        while j < events.len() && is_end(&events[j]) {
            j += 1;
        }
        events[i..j].sort_by_key(|e| e["toolCallId"].as_str().unwrap_or("").to_owned());
        i = j.max(i + 1);
    }
}

fn transcript(agent: &Agent) -> Vec<Value> {
    agent
        .messages()
        .iter()
        .map(|m| normalized(serde_json::to_value(m).unwrap()))
        .collect()
}

fn tool_texts(agent: &Agent) -> Vec<(String, String, bool)> {
    agent
        .messages()
        .iter()
        .filter_map(Message::as_tool_result)
        .map(|r| {
            let text = r.content.iter().filter_map(|c| c.as_text()).collect();
            (r.tool_name.to_string(), text, r.is_error)
        })
        .collect()
}

fn suspension(outcome: Result<RunOutcome, AgentError>) -> Suspension {
    match outcome {
        Ok(RunOutcome::Suspended(s)) => s,
        other => panic!("expected a suspension, got {other:?}"),
    }
}

fn unique(tag: &str) -> String {
    static NEXT: std::sync::atomic::AtomicU64 = std::sync::atomic::AtomicU64::new(0);
    let n = NEXT.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
    format!("{tag}-{}-{n}", pi_tool::durable::now_ms())
}

async fn suspend(store: Arc<dyn DurableStore>, run: &str, to: &str, extra: Value) -> Suspension {
    let agent = durable(store, vec![calls(to, extra)], ToolExecutionMode::Parallel);
    let s = suspension(agent.run(run, vec![Message::user_text("go")]).await);
    assert_eq!(s.pending.len(), 1);
    assert_eq!(s.pending[0].call_id, "call_1");
    assert_eq!(s.pending[0].tool, "transfer");
    s
}

async fn approve(store: &dyn DurableStore, s: &Suspension) {
    let d = Decision::new(&s.run_id, "call_1", &s.pending[0].digest, Verdict::Approve).by("ana");
    store.decide(&d, &d.audit_event()).await.unwrap();
}

async fn resumed(
    store: Arc<dyn DurableStore>,
    run: &str,
) -> (Agent, Result<RunOutcome, AgentError>) {
    let agent = durable(
        store,
        vec![FauxTurn::text("done")],
        ToolExecutionMode::Parallel,
    );
    let outcome = agent.resume_run(run).await;
    (agent, outcome)
}

async fn suspended_and_resumed_matches_waiting_in_memory(url: String) {
    let backend = Backend::open(&url).await;
    for mode in [ToolExecutionMode::Parallel, ToolExecutionMode::Sequential] {
        let to = unique(&format!("same-{mode:?}"));
        // The same run, waiting in memory for a UI that says yes.
        let memory = Agent::new(
            options(vec![calls(&to, json!({})), FauxTurn::text("done")], mode)
                .before_tool_call(Arc::new(ApprovalPolicy::new().ui(Arc::new(Yes)))),
        );
        let memory_events = record(&memory);
        memory
            .prompt_messages(vec![Message::user_text("go")])
            .await
            .unwrap();

        let run = unique("run");
        let first = durable(backend.store(), vec![calls(&to, json!({}))], mode);
        let first_events = record(&first);
        let s = suspension(first.run(&run, vec![Message::user_text("go")]).await);
        approve(&*backend.store(), &s).await;
        // A fresh agent on a fresh connection, as another process would be.
        let other = Backend::open(&url).await;
        let second = durable(other.store(), vec![FauxTurn::text("done")], mode);
        let second_events = record(&second);
        let outcome = second.resume_run(&run).await.unwrap();
        assert_eq!(
            outcome,
            RunOutcome::Finished {
                run_id: run.clone()
            }
        );

        let mut durable_events = first_events.lock().unwrap().clone();
        durable_events.extend(second_events.lock().unwrap().iter().cloned());
        let mut memory_events = memory_events.lock().unwrap().clone();
        if mode == ToolExecutionMode::Parallel {
            // A parallel batch's ends come in completion order, which any I/O changes
            // (the resumed calls write their markers): compare each run of ends as a set.
            sort_ends(&mut memory_events);
            sort_ends(&mut durable_events);
        }
        assert_eq!(memory_events.len(), durable_events.len(), "{mode:?}");
        for (i, (m, d)) in memory_events.iter().zip(&durable_events).enumerate() {
            assert_eq!(m, d, "{mode:?}: event {i} differs");
        }
        assert_eq!(transcript(&memory), transcript(&second), "{mode:?}");
        assert_eq!(started(&to), 2, "once in memory, once resumed");
    }
}

async fn an_approval_runs_its_call_once_and_bad_decisions_are_refused(url: String) {
    let backend = Backend::open(&url).await;
    let store = backend.store();
    let (run, to) = (unique("once"), unique("once-to"));
    let s = suspend(store.clone(), &run, &to, json!({})).await;
    assert_eq!(started(&to), 0);

    let wrong = Decision::new(&run, "call_1", "0".repeat(64), Verdict::Approve);
    let refused = store.decide(&wrong, &wrong.audit_event()).await;
    assert_eq!(refused, Err(StoreError::Refused(Refusal::WrongDigest)));
    // Without a decision, resuming leaves the run waiting.
    let (_, outcome) = resumed(store.clone(), &run).await;
    assert_eq!(suspension(outcome).pending, s.pending);

    approve(&*store, &s).await;
    let again = Decision::new(&run, "call_1", &s.pending[0].digest, Verdict::Approve);
    let refused = store.decide(&again, &again.audit_event()).await;
    assert_eq!(refused, Err(StoreError::Refused(Refusal::AlreadyDecided)));

    let (agent, outcome) = resumed(store.clone(), &run).await;
    assert_eq!(
        outcome.unwrap(),
        RunOutcome::Finished {
            run_id: run.clone()
        }
    );
    assert_eq!(started(&to), 1);
    assert!(
        tool_texts(&agent)
            .iter()
            .any(|(tool, text, error)| tool == "transfer"
                && text == &format!("moved 7 to {to}")
                && !error)
    );
    let (_, outcome) = resumed(store.clone(), &run).await;
    assert_eq!(
        outcome,
        Err(AgentError::Store(StoreError::RunFinished {
            run_id: run.clone()
        }))
    );
    assert_eq!(started(&to), 1);

    let log = store.audit_log().await.unwrap();
    assert!(verify_chain(&log).ok());
    let kinds: Vec<String> = log
        .iter()
        .map(|r| serde_json::from_str::<Value>(&r.body).unwrap())
        .filter(|b| b["run"] == json!(run))
        .map(|b| b["kind"].as_str().unwrap().to_owned())
        .collect();
    // Every call the resumed batch executes is marked: balance (prepared before the
    // suspension), transfer (approved), balance (prepared after); then the run. The
    // three calls run in parallel, so their markers interleave as they complete.
    use AuditKind::*;
    let head: Vec<&str> = [Requested, Suspended, Decided, Resumed]
        .iter()
        .map(|k| k.as_str())
        .collect();
    assert_eq!(&kinds[..4], head.as_slice(), "{kinds:?}");
    let mut markers = kinds[4..].to_vec();
    markers.sort();
    let expected = [
        "finished", "finished", "finished", "finished", "started", "started", "started",
    ];
    assert_eq!(markers, expected, "{kinds:?}");
    assert_eq!(kinds.last().map(String::as_str), Some(Finished.as_str()));
}

async fn a_denial_and_an_expiry_reach_the_model_and_nothing_runs(url: String) {
    let store = Backend::open(&url).await.store();
    let (run, to) = (unique("deny"), unique("deny-to"));
    let s = suspend(store.clone(), &run, &to, json!({})).await;
    let deny =
        Decision::new(&run, "call_1", &s.pending[0].digest, Verdict::Deny).reason("too much");
    store.decide(&deny, &deny.audit_event()).await.unwrap();
    let (agent, outcome) = resumed(store.clone(), &run).await;
    assert!(matches!(outcome, Ok(RunOutcome::Finished { .. })));
    assert!(tool_texts(&agent).contains(&(
        "transfer".into(),
        "User denied transfer: too much".into(),
        true
    )));
    assert_eq!(started(&to), 0);

    // A question that stands 1 ms.
    let (run, to) = (unique("expire"), unique("expire-to"));
    let agent = Agent::new(
        options(vec![calls(&to, json!({}))], ToolExecutionMode::Parallel)
            .before_tool_call(Arc::new(
                ApprovalPolicy::new()
                    .defer()
                    .approval_ttl(Duration::from_millis(1)),
            ))
            .durable(DurableRuns::new(store.clone())),
    );
    let s = suspension(agent.run(&run, vec![Message::user_text("go")]).await);
    tokio::time::sleep(Duration::from_millis(20)).await;
    let late = Decision::new(&run, "call_1", &s.pending[0].digest, Verdict::Approve);
    assert_eq!(
        store.decide(&late, &late.audit_event()).await,
        Err(StoreError::Refused(Refusal::Expired))
    );
    let (agent, _) = resumed(store.clone(), &run).await;
    assert!(tool_texts(&agent).contains(&(
        "transfer".into(),
        "The approval of transfer expired before anyone decided".into(),
        true
    )));
    assert_eq!(started(&to), 0);
}

async fn edited_stored_arguments_never_run(url: String) {
    let backend = Backend::open(&url).await;
    let store = backend.store();
    let (run, to) = (unique("edit"), unique("edit-to"));
    let s = suspend(store.clone(), &run, &to, json!({})).await;
    approve(&*store, &s).await;
    let edited = backend
        .raw(&format!(
            "UPDATE runs SET state = replace(state, '\"amount\":7}}', '\"amount\":7000}}') WHERE run_id = '{run}'"
        ))
        .await;
    assert_eq!(edited, 1);
    let (agent, _) = resumed(store.clone(), &run).await;
    let texts = tool_texts(&agent);
    let (_, text, error) = texts.iter().find(|(tool, ..)| tool == "transfer").unwrap();
    assert!(
        *error && text.contains("the approval digest does not match"),
        "{text}"
    );
    assert_eq!(started(&to), 0);

    // A state this build cannot read is refused and kept as it was.
    let (run, to) = (unique("corrupt"), unique("corrupt-to"));
    suspend(store.clone(), &run, &to, json!({})).await;
    backend
        .raw(&format!("UPDATE runs SET state = replace(state, '\"format\":1', '\"format\":2') WHERE run_id = '{run}'"))
        .await;
    let (_, outcome) = resumed(store.clone(), &run).await;
    match outcome {
        Err(AgentError::Store(StoreError::Corrupt(what))) => {
            assert!(what.contains("format"), "{what}")
        }
        other => panic!("{other:?}"),
    }
    let (_, outcome) = resumed(store.clone(), &run).await;
    assert!(
        matches!(outcome, Err(AgentError::Store(StoreError::Corrupt(_)))),
        "still there, still refused"
    );
}

async fn two_resumers_one_execution(url: String) {
    let backend = Backend::open(&url).await;
    let (run, to) = (unique("race"), unique("race-to"));
    let s = suspend(backend.store(), &run, &to, json!({"hold_ms": 100})).await;
    approve(&*backend.store(), &s).await;
    let a = Backend::open(&url).await.store();
    let b = Backend::open(&url).await.store();
    let ((_, x), (_, y)) = tokio::join!(resumed(a, &run), resumed(b, &run));
    let finished = [&x, &y]
        .iter()
        .filter(|o| matches!(o, Ok(RunOutcome::Finished { .. })))
        .count();
    let taken = [&x, &y]
        .iter()
        .filter(|o| matches!(o, Err(AgentError::Store(StoreError::RunTaken { .. }))))
        .count();
    assert_eq!((finished, taken), (1, 1), "{x:?} {y:?}");
    assert_eq!(started(&to), 1);
}

async fn an_interrupted_call_is_not_run_again(url: String) {
    let backend = Backend::open(&url).await;
    let (run, to) = (unique("crash"), unique("crash-to"));
    let s = suspend(backend.store(), &run, &to, json!({"hold_ms": 60000})).await;
    approve(&*backend.store(), &s).await;
    // The process that resumes dies while the call runs.
    let store = Backend::open(&url).await.store();
    let task = tokio::spawn({
        let run = run.clone();
        async move { resumed(store, &run).await.1 }
    });
    while started(&to) == 0 {
        tokio::time::sleep(Duration::from_millis(5)).await;
    }
    task.abort();
    let _ = task.await;
    // Its lease runs out; another process takes the run up.
    tokio::time::sleep(Duration::from_millis(400)).await;
    let (agent, outcome) = resumed(Backend::open(&url).await.store(), &run).await;
    assert!(
        matches!(outcome, Ok(RunOutcome::Finished { .. })),
        "{outcome:?}"
    );
    assert_eq!(started(&to), 1, "never run again");
    let texts = tool_texts(&agent);
    let (_, text, error) = texts.iter().find(|(tool, ..)| tool == "transfer").unwrap();
    assert!(
        *error && text.contains("was interrupted") && text.contains("may have run"),
        "{text}"
    );
    assert!(verify_chain(&backend.store().audit_log().await.unwrap()).ok());
}

async fn the_audit_log_and_the_question_hold_no_secret(url: String) {
    let store = Backend::open(&url).await.store();
    let (run, to) = (unique("secret"), unique("hunter2hunter2-secret-to"));
    let agent = Agent::new(
        options(vec![calls(&to, json!({}))], ToolExecutionMode::Parallel)
            .policy(
                pi_tool::agent::RunPolicy::new()
                    .call(
                        CallPolicy::new()
                            .redact_secrets(Redactor::new(["hunter2hunter2"]).unwrap()),
                    )
                    .before_tool_call(Arc::new(ApprovalPolicy::new().defer())),
            )
            .durable(DurableRuns::new(store.clone())),
    );
    let s = suspension(agent.run(&run, vec![Message::user_text("go")]).await);
    assert!(
        !s.pending[0].message.contains("hunter2hunter2"),
        "{}",
        s.pending[0].message
    );
    let log = store.audit_log().await.unwrap();
    let requested = log
        .iter()
        .find(|r| r.body.contains(&run) && r.body.contains("\"requested\""))
        .unwrap();
    assert!(
        !requested.body.contains("hunter2hunter2"),
        "{}",
        requested.body
    );
    assert!(
        requested.body.contains("secret-to"),
        "the rest of the arguments stays"
    );
}

/// A store that counts what reaches it.
struct Counting {
    inner: Arc<dyn DurableStore>,
    calls: std::sync::atomic::AtomicUsize,
}

impl Counting {
    fn hit(&self) {
        self.calls.fetch_add(1, std::sync::atomic::Ordering::SeqCst);
    }
}

#[async_trait]
impl DurableStore for Counting {
    async fn suspend(
        &self,
        run_id: &str,
        state: &Value,
        pending: &[pi_tool::durable::PendingApproval],
        audit: &[pi_tool::durable::AuditEvent],
    ) -> Result<(), StoreError> {
        self.hit();
        self.inner.suspend(run_id, state, pending, audit).await
    }
    async fn claim(
        &self,
        run_id: &str,
        lease: Duration,
    ) -> Result<pi_tool::durable::ClaimedRun, StoreError> {
        self.hit();
        self.inner.claim(run_id, lease).await
    }
    async fn checkpoint(
        &self,
        run_id: &str,
        state: &Value,
        lease: Duration,
    ) -> Result<(), StoreError> {
        self.hit();
        self.inner.checkpoint(run_id, state, lease).await
    }
    async fn finish(
        &self,
        run_id: &str,
        audit: &[pi_tool::durable::AuditEvent],
    ) -> Result<(), StoreError> {
        self.hit();
        self.inner.finish(run_id, audit).await
    }
    async fn pending(&self) -> Result<Vec<pi_tool::durable::PendingApproval>, StoreError> {
        self.hit();
        self.inner.pending().await
    }
    async fn decide(
        &self,
        decision: &Decision,
        audit: &pi_tool::durable::AuditEvent,
    ) -> Result<(), StoreError> {
        self.hit();
        self.inner.decide(decision, audit).await
    }
    async fn begin_call(
        &self,
        run_id: &str,
        call_id: &str,
        approval: Option<&str>,
        audit: &pi_tool::durable::AuditEvent,
    ) -> Result<(), StoreError> {
        self.hit();
        self.inner
            .begin_call(run_id, call_id, approval, audit)
            .await
    }
    async fn end_call(
        &self,
        run_id: &str,
        call_id: &str,
        message: &Value,
        audit: &pi_tool::durable::AuditEvent,
    ) -> Result<(), StoreError> {
        self.hit();
        self.inner.end_call(run_id, call_id, message, audit).await
    }
    async fn append_audit(
        &self,
        events: &[pi_tool::durable::AuditEvent],
    ) -> Result<(), StoreError> {
        self.hit();
        self.inner.append_audit(events).await
    }
    async fn audit_log(&self) -> Result<Vec<pi_tool::durable::AuditRecord>, StoreError> {
        self.hit();
        self.inner.audit_log().await
    }
}

async fn a_run_that_needs_no_approval_never_reaches_the_store(url: String) {
    let counting = Arc::new(Counting {
        inner: Backend::open(&url).await.store(),
        calls: Default::default(),
    });
    let reads = FauxTurn::new(vec![
        AssistantContent::tool_call("call_0", "balance", json!({})),
        AssistantContent::tool_call("call_1", "balance", json!({})),
    ]);
    for mode in [ToolExecutionMode::Parallel, ToolExecutionMode::Sequential] {
        let agent = durable(
            counting.clone(),
            vec![reads.clone(), FauxTurn::text("done")],
            mode,
        );
        let outcome = agent
            .run(&unique("reads"), vec![Message::user_text("go")])
            .await
            .unwrap();
        assert!(matches!(outcome, RunOutcome::Finished { .. }));
        assert_eq!(tool_texts(&agent).len(), 2);
    }
    assert_eq!(
        counting.calls.load(std::sync::atomic::Ordering::SeqCst),
        0,
        "no query"
    );
}

fn session(
    turns: Vec<FauxTurn>,
    policy: ApprovalPolicy,
    store: Option<Arc<dyn DurableStore>>,
) -> AgentSession {
    let tools = vec![Transfer.into_agent_tool(), Balance.into_agent_tool()];
    let policy = policy.tools(&tools);
    let mut builder = AgentSession::builder(Arc::new(FauxModel::new(turns)))
        .model(FauxModel::model())
        .ui(Arc::new(Yes))
        .extension(FnExtension::new("approval", move |api| {
            api.on_tool_call(policy.clone())
        }));
    for tool in tools {
        builder = builder.agent_tool(tool);
    }
    if let Some(store) = store {
        builder = builder.durable(DurableRuns::new(store));
    }
    builder.build().unwrap()
}

fn session_events(session: &AgentSession) -> Arc<Mutex<Vec<String>>> {
    let events = Arc::new(Mutex::new(Vec::new()));
    let sink = events.clone();
    session.subscribe(move |event| {
        if let SessionEvent::Agent(event) = event {
            let json = normalized(serde_json::to_value(event).unwrap());
            sink.lock().unwrap().push(json.to_string());
        }
    });
    events
}

async fn a_session_suspends_and_resumes_like_it_waits_in_memory(url: String) {
    let backend = Backend::open(&url).await;
    let to = unique("session");
    // The session's handler asks its UI in memory, and defers with a store.
    let script = |to: &str| calls(to, json!({}));
    let memory = session(
        vec![script(&to), FauxTurn::text("done")],
        ApprovalPolicy::new(),
        None,
    );
    let memory_events = session_events(&memory);
    memory.prompt("go").await.unwrap();

    let run = unique("session-run");
    let first = session(
        vec![script(&to)],
        ApprovalPolicy::new().defer(),
        Some(backend.store()),
    );
    let first_events = session_events(&first);
    let s = match first.run(&run, "go").await.unwrap() {
        RunOutcome::Suspended(s) => s,
        other => panic!("{other:?}"),
    };
    approve(&*backend.store(), &s).await;
    let other = Backend::open(&url).await;
    let second = session(
        vec![FauxTurn::text("done")],
        ApprovalPolicy::new().defer(),
        Some(other.store()),
    );
    let second_events = session_events(&second);
    let outcome = second.resume_run(&run).await.unwrap();
    assert_eq!(
        outcome,
        RunOutcome::Finished {
            run_id: run.clone()
        }
    );

    let mut resumed = first_events.lock().unwrap().clone();
    resumed.extend(second_events.lock().unwrap().iter().cloned());
    let mut memory_events: Vec<Value> = memory_events
        .lock()
        .unwrap()
        .iter()
        .map(|e| serde_json::from_str(e).unwrap())
        .collect();
    let mut resumed: Vec<Value> = resumed
        .iter()
        .map(|e| serde_json::from_str(e).unwrap())
        .collect();
    sort_ends(&mut memory_events);
    sort_ends(&mut resumed);
    assert_eq!(memory_events, resumed);
    let transcript = |s: &AgentSession| -> Vec<Value> {
        s.transcript()
            .messages()
            .iter()
            .map(|m| normalized(serde_json::to_value(m).unwrap()))
            .collect()
    };
    assert_eq!(transcript(&memory), transcript(&second));
    assert_eq!(started(&to), 2, "once in memory, once resumed");
}

/// A durable agent limited to 4 calls per run and 2 per turn.
fn limited(store: Arc<dyn DurableStore>, turns: Vec<FauxTurn>) -> Agent {
    Agent::new(
        options(turns, ToolExecutionMode::Parallel)
            .policy(RunPolicy::new().limits(RunLimits::new().calls_per_run(4).calls_per_turn(2)))
            .before_tool_call(Arc::new(ApprovalPolicy::new().defer()))
            .durable(DurableRuns::new(store).lease(Duration::from_millis(300))),
    )
}

async fn a_resumed_run_counts_on_from_its_calls_before_the_suspension(url: String) {
    let backend = Backend::open(&url).await;
    let store = backend.store();
    let (run, to) = (unique("limits"), unique("limits-to"));
    // balance (1 of the turn's 2), transfer (2; it asks): the run suspends.
    let first = limited(store.clone(), vec![calls(&to, json!({}))]);
    let s = suspension(first.run(&run, vec![Message::user_text("go")]).await);
    approve(&*store, &s).await;
    // Resumed elsewhere: the batch's last balance is the turn's third call, the next
    // turn's first balance the run's fourth, and its second the run's fifth.
    let second = limited(
        Backend::open(&url).await.store(),
        vec![
            FauxTurn::new(vec![
                AssistantContent::tool_call("call_3", "balance", json!({})),
                AssistantContent::tool_call("call_4", "balance", json!({})),
            ]),
            FauxTurn::text("done"),
        ],
    );
    assert_eq!(
        second.resume_run(&run).await.unwrap(),
        RunOutcome::Finished {
            run_id: run.clone()
        }
    );
    let turn_limit = "Tool call limit reached: one turn may make at most 2 tool calls (direct and nested), so this call of balance was not run. Make fewer calls at once.";
    let run_limit = "Tool call limit reached: a run may make at most 4 tool calls (direct and nested), so this call of balance was not run. Answer with what you have.";
    let texts: Vec<(String, bool)> = tool_texts(&second)
        .into_iter()
        .map(|(_, text, error)| (text, error))
        .collect();
    assert_eq!(
        texts,
        [
            ("100".to_owned(), false),
            (format!("moved 7 to {to}"), false),
            (turn_limit.to_owned(), true),
            ("100".to_owned(), false),
            (run_limit.to_owned(), true),
        ]
    );
    assert_eq!(started(&to), 1);
}

on_both_backends!(
    a_resumed_run_counts_on_from_its_calls_before_the_suspension,
    a_session_suspends_and_resumes_like_it_waits_in_memory,
    a_run_that_needs_no_approval_never_reaches_the_store,
    suspended_and_resumed_matches_waiting_in_memory,
    an_approval_runs_its_call_once_and_bad_decisions_are_refused,
    a_denial_and_an_expiry_reach_the_model_and_nothing_runs,
    edited_stored_arguments_never_run,
    two_resumers_one_execution,
    an_interrupted_call_is_not_run_again,
    the_audit_log_and_the_question_hold_no_secret,
);
