//! The agent runtime: Pi's behaviour where the conformance suite does not reach, and
//! the places where pi-tool deliberately does better (docs/differences-from-pi.md).

use std::future::Future;
use std::num::NonZeroUsize;
use std::pin::Pin;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use pi_tool::ToolInvocation;
use pi_tool::agent::{Agent, AgentEvent, AgentOptions};
use pi_tool::model::{AssistantContent, Message, StopReason};
use pi_tool::schema::ToolSchema;
use pi_tool::testing::{FauxModel, FauxTurn};
use pi_tool::{
    AbortSignal, AgentTool, JsonToolResult, ToolError, ToolExecutionMode, ToolSpec, Value,
    async_trait, json,
};

type Body = dyn Fn(
        String,
        Value,
        AbortSignal,
    ) -> Pin<Box<dyn Future<Output = Result<JsonToolResult, ToolError>> + Send>>
    + Send
    + Sync;

/// A tool whose execute is a closure.
struct FnTool {
    spec: ToolSpec,
    body: Box<Body>,
}

fn tool<F, Fut>(name: &str, body: F) -> FnTool
where
    F: Fn(String, Value, AbortSignal) -> Fut + Send + Sync + 'static,
    Fut: Future<Output = Result<JsonToolResult, ToolError>> + Send + 'static,
{
    FnTool {
        spec: ToolSpec::new(
            name,
            "test tool",
            Arc::new(ToolSchema::from_json(
                json!({"type": "object", "properties": {}}),
            )),
        ),
        body: Box::new(move |id, params, signal| Box::pin(body(id, params, signal))),
    }
}

#[async_trait]
impl AgentTool for FnTool {
    fn spec(&self) -> &ToolSpec {
        &self.spec
    }

    async fn execute(&self, call: ToolInvocation<'_>) -> Result<JsonToolResult, ToolError> {
        let tool_call_id = call.id;
        let params = call.params;
        let signal = call.signal;
        let _on_update = call.on_update;
        (self.body)(tool_call_id.to_owned(), params.clone(), signal).await
    }
}

fn calls(name: &str, n: usize) -> FauxTurn {
    FauxTurn::new(
        (0..n)
            .map(|i| AssistantContent::tool_call(format!("call_{i}"), name, json!({})))
            .collect(),
    )
}

fn tool_results(agent: &Agent) -> Vec<(String, bool, String)> {
    agent
        .messages()
        .iter()
        .filter_map(Message::as_tool_result)
        .map(|m| {
            let text = m
                .content
                .iter()
                .filter_map(|c| c.as_text())
                .collect::<String>();
            (m.tool_call_id.to_string(), m.is_error, text)
        })
        .collect()
}

fn record(agent: &Agent) -> Arc<Mutex<Vec<AgentEvent>>> {
    let events = Arc::new(Mutex::new(Vec::new()));
    let sink = events.clone();
    agent.subscribe(move |event, _| {
        sink.lock().unwrap().push(event.clone());
        Ok(())
    });
    events
}

fn ok(text: &str) -> Result<JsonToolResult, ToolError> {
    Ok(JsonToolResult::text(text, None))
}

/// Difference 1 (sequential): Pi leaves the calls after an aborted one without a
/// result; pi-tool gives each `Operation aborted`, and the next request sees them.
#[tokio::test]
async fn no_orphaned_tool_calls_after_an_abort_in_a_sequential_batch() {
    let faux = FauxModel::new(vec![calls("step", 3)]);
    let agent_slot: Arc<Mutex<Option<pi_tool::agent::AbortHandle>>> = Arc::default();
    let slot = agent_slot.clone();
    let step = tool("step", move |_, _, _| {
        let handle = slot.lock().unwrap().clone();
        async move {
            if let Some(h) = handle {
                h.abort();
            }
            ok("stepped")
        }
    });
    let agent = Agent::new(
        AgentOptions::new(Arc::new(faux.clone()))
            .tools(vec![Arc::new(step)])
            .tool_execution(ToolExecutionMode::Sequential),
    );
    *agent_slot.lock().unwrap() = Some(agent.abort_handle());
    let events = record(&agent);
    agent.prompt("go").await.unwrap();
    assert_eq!(
        tool_results(&agent),
        vec![
            ("call_0".into(), false, "stepped".into()),
            ("call_1".into(), true, "Operation aborted".into()),
            ("call_2".into(), true, "Operation aborted".into()),
        ]
    );
    let events = events.lock().unwrap();
    let ends = events
        .iter()
        .filter(|e| e.name() == "tool_execution_end")
        .count();
    assert_eq!(ends, 3, "every call gets start and end");
    // The follow-up request (with the aborted signal) carries all three results.
    let request = &faux.requests()[1];
    assert!(request.aborted);
    assert_eq!(
        request
            .messages
            .iter()
            .filter(|m| m.role() == "toolResult")
            .count(),
        3
    );
    assert_eq!(
        agent.error_message().as_deref(),
        Some("Request was aborted")
    );
}

/// Difference 2: a listener that fails or panics does not fail the run.
#[tokio::test]
async fn a_failing_or_panicking_listener_does_not_fail_the_run() {
    let faux = FauxModel::new(vec![calls("echo", 2)]);
    let agent = Agent::new(
        AgentOptions::new(Arc::new(faux))
            .tools(vec![Arc::new(tool("echo", |id, _, _| async move {
                ok(&format!("echo {id}"))
            }))]),
    );
    agent.subscribe(|event, _| {
        if event.name() == "tool_execution_end" {
            return Err("listener failed".into());
        }
        Ok(())
    });
    agent.subscribe(|event, _| {
        if event.name() == "tool_execution_start" {
            panic!("listener panicked");
        }
        Ok(())
    });
    let events = record(&agent);
    agent.prompt("go").await.unwrap();
    assert_eq!(
        tool_results(&agent),
        vec![
            ("call_0".into(), false, "echo call_0".into()),
            ("call_1".into(), false, "echo call_1".into()),
        ]
    );
    let events = events.lock().unwrap();
    assert_eq!(events.last().map(AgentEvent::name), Some("agent_end"));
    assert_eq!(agent.error_message(), None);
    assert!(!agent.is_streaming());
}

/// Difference 3: a tool that panics becomes an error result; the batch goes on.
#[tokio::test]
async fn a_panicking_tool_becomes_an_error_result_and_the_batch_goes_on() {
    let faux = FauxModel::new(vec![FauxTurn::new(vec![
        AssistantContent::tool_call("a", "boom", json!({})),
        AssistantContent::tool_call("b", "fine", json!({})),
    ])]);
    let boom = tool("boom", |_, _, _| async move {
        if true {
            panic!("index out of bounds");
        }
        ok("unreachable")
    });
    let fine = tool("fine", |_, _, _| async move {
        tokio::time::sleep(Duration::from_millis(5)).await;
        ok("fine")
    });
    let agent =
        Agent::new(AgentOptions::new(Arc::new(faux)).tools(vec![Arc::new(boom), Arc::new(fine)]));
    agent.prompt("go").await.unwrap();
    assert_eq!(
        tool_results(&agent),
        vec![
            (
                "a".into(),
                true,
                "Tool boom panicked: index out of bounds".into()
            ),
            ("b".into(), false, "fine".into()),
        ]
    );
}

/// Difference 4a: a concurrency limit bounds a parallel batch; results stay in source
/// order.
#[tokio::test]
async fn a_concurrency_limit_bounds_a_parallel_batch() {
    let running = Arc::new(AtomicUsize::new(0));
    let peak = Arc::new(AtomicUsize::new(0));
    let (r, p) = (running.clone(), peak.clone());
    let work = tool("work", move |id, _, _| {
        let (r, p) = (r.clone(), p.clone());
        async move {
            let now = r.fetch_add(1, Ordering::SeqCst) + 1;
            p.fetch_max(now, Ordering::SeqCst);
            tokio::time::sleep(Duration::from_millis(20)).await;
            r.fetch_sub(1, Ordering::SeqCst);
            ok(&id)
        }
    });
    let faux = FauxModel::new(vec![calls("work", 7)]);
    let agent = Agent::new(
        AgentOptions::new(Arc::new(faux))
            .tools(vec![Arc::new(work)])
            .max_concurrency(NonZeroUsize::new(2).unwrap()),
    );
    agent.prompt("go").await.unwrap();
    assert_eq!(peak.load(Ordering::SeqCst), 2);
    let ids: Vec<String> = tool_results(&agent)
        .into_iter()
        .map(|(id, _, _)| id)
        .collect();
    assert_eq!(ids, (0..7).map(|i| format!("call_{i}")).collect::<Vec<_>>());
}

/// Difference 4b: a per-tool timeout (ToolSpec.timeout) and the runtime default end a
/// stuck call with an error result.
#[tokio::test]
async fn timeouts_end_stuck_calls() {
    let mut stuck = tool("stuck", |_, _, _| async move {
        tokio::time::sleep(Duration::from_secs(60)).await;
        ok("never")
    });
    stuck.spec.timeout = Some(Duration::from_millis(30));
    let other = tool("other", |_, _, _| async move {
        tokio::time::sleep(Duration::from_secs(60)).await;
        ok("never")
    });
    let faux = FauxModel::new(vec![FauxTurn::new(vec![
        AssistantContent::tool_call("a", "stuck", json!({})),
        AssistantContent::tool_call("b", "other", json!({})),
    ])]);
    let agent = Agent::new(
        AgentOptions::new(Arc::new(faux))
            .tools(vec![Arc::new(stuck), Arc::new(other)])
            .tool_timeout(Duration::from_millis(60)),
    );
    let started = Instant::now();
    agent.prompt("go").await.unwrap();
    assert!(started.elapsed() < Duration::from_secs(5));
    assert_eq!(
        tool_results(&agent),
        vec![
            ("a".into(), true, "Tool stuck timed out after 30ms".into()),
            ("b".into(), true, "Tool other timed out after 60ms".into()),
        ]
    );
}

/// Pi: the first tool with a matching name handles the call (pi-tool also warns).
#[tokio::test]
async fn duplicate_tool_names_first_match_wins() {
    let faux = FauxModel::new(vec![calls("twin", 1)]);
    let agent = Agent::new(AgentOptions::new(Arc::new(faux)).tools(vec![
        Arc::new(tool("twin", |_, _, _| async move { ok("first") })),
        Arc::new(tool("twin", |_, _, _| async move { ok("second") })),
    ]));
    agent.prompt("go").await.unwrap();
    assert_eq!(
        tool_results(&agent),
        vec![("call_0".into(), false, "first".into())]
    );
}

/// A parallel batch of 100 tools each sleeping 100 ms takes about 100 ms, not 10 s.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_parallel_batch_of_100_sleeping_tools_takes_one_sleep() {
    let mut best = Duration::MAX;
    for _ in 0..3 {
        let sleeper = tool("sleep", |_, _, _| async move {
            tokio::time::sleep(Duration::from_millis(100)).await;
            ok("slept")
        });
        let faux = FauxModel::new(vec![calls("sleep", 100)]).without_recording();
        let agent = Agent::new(AgentOptions::new(Arc::new(faux)).tools(vec![Arc::new(sleeper)]));
        let started = Instant::now();
        agent.prompt("go").await.unwrap();
        best = best.min(started.elapsed());
        assert_eq!(tool_results(&agent).len(), 100);
        if best <= Duration::from_millis(110) {
            break;
        }
    }
    assert!(best <= Duration::from_millis(110), "took {best:?}");
}

/// Steering messages are injected before the next model call; follow-ups restart the
/// loop when it would stop.
#[tokio::test]
async fn steering_and_follow_up_messages() {
    let faux = FauxModel::new(vec![
        calls("echo", 1),
        FauxTurn::text("after steer"),
        FauxTurn::text("after follow-up"),
    ]);
    let agent = Agent::new(
        AgentOptions::new(Arc::new(faux.clone())).tools(vec![Arc::new(tool(
            "echo",
            |_, _, _| async move { ok("e") },
        ))]),
    );
    agent.steer(Message::user_text("steered"));
    agent.follow_up(Message::user_text("followed"));
    agent.prompt("go").await.unwrap();
    let roles: Vec<&str> = agent.messages().iter().map(Message::role).collect();
    assert_eq!(
        roles,
        [
            "user",
            "user",
            "assistant",
            "toolResult",
            "assistant",
            "user",
            "assistant"
        ]
    );
    assert_eq!(faux.calls(), 3);
    assert!(!agent.has_queued_messages());
}

/// `prompt` during a run fails with Pi's text; `resume` (Pi's `continue`) resumes from a tool result.
#[tokio::test]
async fn prompt_while_running_and_continue() {
    let faux = FauxModel::new(vec![
        FauxTurn::text("slow").with_delay(Duration::from_millis(50)),
    ]);
    let agent = Agent::new(AgentOptions::new(Arc::new(faux)));
    let other = agent.clone();
    let run = tokio::spawn(async move { other.prompt("first").await });
    tokio::time::sleep(Duration::from_millis(10)).await;
    let err = agent.prompt("second").await.unwrap_err();
    assert!(
        err.to_string()
            .starts_with("Agent is already processing a prompt.")
    );
    run.await.unwrap().unwrap();
    assert!(
        agent.resume().await.is_err(),
        "last message is the assistant's"
    );
    agent.set_messages(vec![Message::user_text("again")]);
    agent.resume().await.unwrap();
    let last = agent.messages().last().cloned().unwrap();
    assert_eq!(last.as_assistant().unwrap().text(), "Done.");
}

/// An `error` stop reason ends the run without executing anything and sets the
/// agent's error message.
#[tokio::test]
async fn an_error_stop_executes_nothing() {
    let executed = Arc::new(AtomicUsize::new(0));
    let e = executed.clone();
    let faux = FauxModel::new(vec![
        calls("t", 1)
            .with_stop_reason(StopReason::Error)
            .with_error_message("boom"),
    ]);
    let agent = Agent::new(AgentOptions::new(Arc::new(faux)).tools(vec![Arc::new(tool(
        "t",
        move |_, _, _| {
            e.fetch_add(1, Ordering::SeqCst);
            async move { ok("x") }
        },
    ))]));
    agent.prompt("go").await.unwrap();
    assert_eq!(executed.load(Ordering::SeqCst), 0);
    assert_eq!(agent.error_message().as_deref(), Some("boom"));
}

/// A prompt future that is dropped mid-run leaves the agent idle, not "already
/// processing" forever.
#[tokio::test]
async fn a_cancelled_prompt_leaves_the_agent_idle() {
    let faux = FauxModel::new(vec![
        FauxTurn::text("slow").with_delay(Duration::from_secs(30)),
    ]);
    let agent = Agent::new(AgentOptions::new(Arc::new(faux)));
    let cancelled = tokio::time::timeout(Duration::from_millis(20), agent.prompt("first")).await;
    assert!(cancelled.is_err());
    assert!(!agent.is_streaming());
    agent.prompt("second").await.unwrap();
}

struct AddToolAfterFirstTurn(Arc<dyn AgentTool>);

#[async_trait]
impl pi_tool::agent::PrepareNextTurn for AddToolAfterFirstTurn {
    async fn prepare_next_turn(
        &self,
        turn: pi_tool::agent::CompletedTurn<'_>,
        _signal: &AbortSignal,
    ) -> Option<pi_tool::agent::NextTurn> {
        let mut context = turn.context.clone();
        context.tools.push(self.0.clone());
        Some(pi_tool::agent::NextTurn {
            context: Some(context),
            ..Default::default()
        })
    }
}

/// `prepare_next_turn` lets a host change the tools between turns (Pi's
/// `prepareNextTurn`); without it, tools changed mid-run have no effect.
#[tokio::test]
async fn prepare_next_turn_changes_tools_between_turns() {
    let faux = FauxModel::new(vec![calls("late", 1), calls("late", 1)]);
    let late: Arc<dyn AgentTool> = Arc::new(tool("late", |_, _, _| async move { ok("late ran") }));
    let agent = Agent::new(
        AgentOptions::new(Arc::new(faux.clone()))
            .prepare_next_turn(Arc::new(AddToolAfterFirstTurn(late))),
    );
    agent.prompt("go").await.unwrap();
    assert_eq!(
        tool_results(&agent),
        vec![
            ("call_0".into(), true, "Tool late not found".into()),
            ("call_0".into(), false, "late ran".into()),
        ]
    );
    assert_eq!(faux.requests()[1].tools, vec!["late".to_owned()]);
}

#[derive(serde::Deserialize, pi_tool::JsonSchema)]
struct NoParams {}

/// Waits far longer than its timeout.
#[pi_tool::pi_tool(name = "stuck_typed", timeout = "30ms")]
async fn stuck_typed(_params: NoParams) -> Result<String, ToolError> {
    tokio::time::sleep(Duration::from_secs(60)).await;
    Ok("never".to_owned())
}

/// The `#[pi_tool(timeout = "30ms")]` attribute reaches the runtime through
/// `Tool::TIMEOUT` and `ToolSpec.timeout`.
#[tokio::test]
async fn the_timeout_attribute_ends_a_typed_tool() {
    use pi_tool::IntoAgentTool;
    let faux = FauxModel::new(vec![calls("stuck_typed", 1)]);
    let agent =
        Agent::new(AgentOptions::new(Arc::new(faux)).tools(vec![StuckTyped.into_agent_tool()]));
    let started = Instant::now();
    agent.prompt("go").await.unwrap();
    assert!(started.elapsed() < Duration::from_secs(5));
    assert_eq!(
        tool_results(&agent),
        vec![(
            "call_0".into(),
            true,
            "Tool stuck_typed timed out after 30ms".into()
        )]
    );
}

/// With secrets configured, every error text the loop builds is redacted before the
/// events, the transcript and the next model request see it: a tool's own error, a panic
/// message, and a validation failure echoing the model's arguments.
#[tokio::test]
async fn configured_secrets_are_redacted_from_every_error_result() {
    const SECRET: &str = "hunter2-secret-value";
    let model = Arc::new(FauxModel::new(vec![FauxTurn::new(vec![
        AssistantContent::tool_call("c1", "fails", json!({})),
        AssistantContent::tool_call("c2", "panics", json!({})),
        AssistantContent::tool_call("c3", "strict", json!({"token": SECRET})),
    ])]));
    let fails = tool("fails", |_, _, _| async {
        Err(ToolError::new(format!(
            "login failed with password {SECRET}"
        )))
    });
    let panics = tool("panics", |_, _, _| async {
        if SECRET.len() > 1 {
            panic!("header Authorization: Bearer {SECRET}");
        }
        Ok(JsonToolResult::error("unreachable"))
    });
    let mut strict = tool("strict", |_, _, _| async {
        Ok(JsonToolResult::error("unreachable"))
    });
    strict.spec.parameters = Arc::new(ToolSchema::from_json(
        json!({"type": "object", "properties": {}, "additionalProperties": false}),
    ));
    let redactor = pi_tool::safety::Redactor::new([SECRET]).unwrap();
    let agent = Agent::new(
        AgentOptions::new(model.clone())
            .redact_secrets(redactor)
            .tools(vec![Arc::new(fails), Arc::new(panics), Arc::new(strict)]),
    );
    let ends = Arc::new(Mutex::new(Vec::new()));
    let sink = ends.clone();
    agent.subscribe(move |event, _| {
        if let AgentEvent::ToolExecutionEnd {
            result, is_error, ..
        } = event
        {
            sink.lock()
                .unwrap()
                .push((result.text_content(), *is_error));
        }
        Ok(())
    });
    agent.prompt("go").await.unwrap();

    let ends = ends.lock().unwrap().clone();
    assert_eq!(ends.len(), 3);
    assert!(ends.iter().all(|(_, is_error)| *is_error));
    // End events come in completion order (the validation failure ends first).
    let texts: Vec<&str> = ends.iter().map(|(t, _)| t.as_str()).collect();
    assert!(
        texts.contains(&"login failed with password [REDACTED]"),
        "{texts:?}"
    );
    assert!(
        texts
            .iter()
            .any(|t| t.contains("panicked") && t.contains("[REDACTED]")),
        "{texts:?}"
    );
    assert!(
        texts
            .iter()
            .any(|t| t.starts_with("Validation failed for tool \"strict\"")
                && t.contains("\"token\": \"[REDACTED]\"")),
        "{texts:?}"
    );
    for (text, _) in &ends {
        assert!(!text.contains(SECRET), "{text}");
    }
    let next_request = serde_json::to_string(&model.requests()[1].messages).unwrap();
    let results_only: Vec<&str> = next_request.matches(SECRET).collect();
    // The assistant message keeps the model's own arguments (it wrote them); no tool
    // result repeats the secret.
    assert_eq!(results_only.len(), 1, "{next_request}");
}

/// Pi walks its live listener `Set` for every event: a listener subscribed by another
/// listener is called for that same event, and one unsubscribed before its turn is not.
#[tokio::test]
async fn listeners_subscribed_or_removed_by_a_listener_take_effect_within_the_event() {
    let faux = FauxModel::new(vec![calls("echo", 1)]);
    let agent = Agent::new(
        AgentOptions::new(Arc::new(faux))
            .tools(vec![Arc::new(tool("echo", |_, _, _| async { ok("hi") }))]),
    );
    let late: Arc<Mutex<Vec<&'static str>>> = Arc::default();
    let early: Arc<Mutex<Vec<&'static str>>> = Arc::default();
    let early_id: Arc<Mutex<Option<pi_tool::agent::ListenerId>>> = Arc::default();
    let (handle, late_sink, early_slot) = (agent.clone(), late.clone(), early_id.clone());
    agent.subscribe(move |event, _| {
        if event.name() == "tool_execution_start" {
            let sink = late_sink.clone();
            handle.subscribe(move |event, _| {
                sink.lock().unwrap().push(event.name());
                Ok(())
            });
            if let Some(id) = early_slot.lock().unwrap().take() {
                handle.unsubscribe(id);
            }
        }
        Ok(())
    });
    let early_sink = early.clone();
    *early_id.lock().unwrap() = Some(agent.subscribe(move |event, _| {
        early_sink.lock().unwrap().push(event.name());
        Ok(())
    }));
    agent.prompt("go").await.unwrap();
    let late = late.lock().unwrap().clone();
    assert_eq!(late.first(), Some(&"tool_execution_start"), "{late:?}");
    assert!(late.contains(&"tool_execution_end"), "{late:?}");
    assert_eq!(late.last(), Some(&"agent_end"), "{late:?}");
    let early = early.lock().unwrap().clone();
    assert_eq!(early.last(), Some(&"message_end"), "{early:?}");
    assert!(!early.contains(&"tool_execution_start"), "{early:?}");
}
