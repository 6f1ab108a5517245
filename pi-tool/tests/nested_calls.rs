//! Nested calls (issue 30): a tool that calls tools through its context goes through
//! everything a direct call goes through. Each test runs one step on a nested call and
//! fails if the nested path skipped it; where the text matters it is compared with the
//! same call made directly by the model. The span test is in `tracing_spans.rs`, where
//! every test records spans.

use std::future::Future;
use std::pin::Pin;
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use pi_tool::agent::{
    AfterToolCall, AfterToolCallContext, AfterToolCallResult, Agent, AgentError, AgentEvent,
    AgentOptions, ApprovalPolicy, ApprovalRequest, BeforeToolCall, BeforeToolCallContext,
    BeforeToolCallResult, RunPolicy,
};
use pi_tool::context::ExtensionContext;
use pi_tool::model::{AssistantContent, Message};
use pi_tool::safety::{Redactor, ResultBudget};
use pi_tool::schema::ToolSchema;
use pi_tool::session::{AgentSession, FnExtension, ToolCallDecision, ToolCallEvent};
use pi_tool::testing::{FauxModel, FauxTurn};
use pi_tool::{
    AbortSignal, AgentTool, CallPolicy, JsonToolResult, ToolAnnotations, ToolError, ToolInvocation,
    ToolSpec, Value, async_trait, json, pi_tool,
};

type Body = dyn Fn(
        Value,
        AbortSignal,
        Option<ExtensionContext>,
    ) -> Pin<Box<dyn Future<Output = Result<JsonToolResult, ToolError>> + Send>>
    + Send
    + Sync;

/// A JSON-level tool whose body sees its params, signal and context.
struct FnTool {
    spec: ToolSpec,
    body: Box<Body>,
}

#[async_trait]
impl AgentTool for FnTool {
    fn spec(&self) -> &ToolSpec {
        &self.spec
    }
    async fn execute(&self, call: ToolInvocation<'_>) -> Result<JsonToolResult, ToolError> {
        let _ = call.id;
        (self.body)(call.params.clone(), call.signal, call.context).await
    }
}

fn spec(name: &str, schema: Value) -> ToolSpec {
    ToolSpec::new(
        name,
        format!("{name} tool"),
        Arc::new(ToolSchema::from_json(schema)),
    )
}

fn fn_tool<F, Fut>(spec: ToolSpec, body: F) -> Arc<dyn AgentTool>
where
    F: Fn(Value, AbortSignal, Option<ExtensionContext>) -> Fut + Send + Sync + 'static,
    Fut: Future<Output = Result<JsonToolResult, ToolError>> + Send + 'static,
{
    Arc::new(FnTool {
        spec,
        body: Box::new(move |params, signal, ctx| Box::pin(body(params, signal, ctx))),
    })
}

/// `relay` calls `{name, args}` through its context and reports what it got back:
/// `ok: <text>` or `err(<kind>): <text>`.
fn relay(reaches: &[&str]) -> Arc<dyn AgentTool> {
    relay_named("relay", reaches)
}

fn relay_named(name: &str, reaches: &[&str]) -> Arc<dyn AgentTool> {
    let spec = spec(
        name,
        json!({"type": "object", "properties": {"name": {"type": "string"}, "args": {}}, "required": ["name"]}),
    )
    .reaches(reaches.iter().copied());
    fn_tool(spec, |params, _signal, ctx| async move {
        let Some(ctx) = ctx else {
            return Err(ToolError::new("no context"));
        };
        let name = params["name"].as_str().unwrap_or_default().to_owned();
        let args = params.get("args").cloned().unwrap_or_else(|| json!({}));
        Ok(JsonToolResult::text(
            outcome(ctx.call_tool(&name, args).await),
            None,
        ))
    })
}

fn outcome(result: Result<JsonToolResult, ToolError>) -> String {
    match result {
        Ok(result) => format!("ok: {}", result.text_content()),
        Err(error) => format!("err({:?}): {}", error.kind(), error.message()),
    }
}

/// `echo {text}` answers the text.
fn echo() -> Arc<dyn AgentTool> {
    fn_tool(
        spec(
            "echo",
            json!({"type": "object", "properties": {"text": {"type": "string"}}, "required": ["text"]}),
        ),
        |params, _, _| async move {
            Ok(JsonToolResult::text(
                params["text"].as_str().unwrap_or_default().to_owned(),
                None,
            ))
        },
    )
}

fn relay_call(id: &str, name: &str, args: Value) -> AssistantContent {
    AssistantContent::tool_call(id, "relay", json!({"name": name, "args": args}))
}

fn agent(tools: Vec<Arc<dyn AgentTool>>, turns: Vec<FauxTurn>, policy: RunPolicy) -> Agent {
    Agent::new(
        AgentOptions::new(Arc::new(FauxModel::new(turns)))
            .model(FauxModel::model())
            .tools(tools)
            .policy(policy),
    )
}

/// The text and error flag of every tool result in the transcript, in order.
fn results(messages: &[Message]) -> Vec<(String, bool)> {
    messages
        .iter()
        .filter_map(Message::as_tool_result)
        .map(|r| {
            (
                r.content.iter().filter_map(|c| c.as_text()).collect(),
                r.is_error,
            )
        })
        .collect()
}

async fn run(
    tools: Vec<Arc<dyn AgentTool>>,
    calls: Vec<AssistantContent>,
    policy: RunPolicy,
) -> Vec<(String, bool)> {
    let agent = agent(
        tools,
        vec![FauxTurn::new(calls), FauxTurn::text("done")],
        policy,
    );
    agent.prompt("go").await.unwrap();
    results(&agent.messages())
}

#[tokio::test]
async fn a_nested_call_runs_and_its_result_goes_to_the_outer_tool() {
    let results = run(
        vec![relay(&["echo"]), echo()],
        vec![relay_call("call_1", "echo", json!({"text": "hi"}))],
        RunPolicy::new(),
    )
    .await;
    // One tool result in the transcript: the outer call's. The nested result went to it.
    assert_eq!(results, [("ok: hi".to_owned(), false)]);
}

#[tokio::test]
async fn events_carry_the_parent_call_id_and_the_transcript_is_unchanged() {
    let agent = agent(
        vec![relay(&["echo"]), echo()],
        vec![
            FauxTurn::new(vec![relay_call("call_1", "echo", json!({"text": "hi"}))]),
            FauxTurn::text("done"),
        ],
        RunPolicy::new(),
    );
    let events = Arc::new(Mutex::new(Vec::new()));
    let seen = events.clone();
    agent.subscribe(move |event, _| {
        let line = match event {
            AgentEvent::ToolExecutionStart {
                tool_call_id,
                parent_tool_call_id,
                ..
            } => format!("start {tool_call_id} {parent_tool_call_id:?}"),
            AgentEvent::ToolExecutionEnd {
                tool_call_id,
                parent_tool_call_id,
                ..
            } => format!("end {tool_call_id} {parent_tool_call_id:?}"),
            AgentEvent::MessageEnd {
                message: Message::ToolResult(r),
            } => format!("result {}", r.tool_call_id),
            _ => return Ok(()),
        };
        seen.lock().unwrap().push(line);
        Ok(())
    });
    agent.prompt("go").await.unwrap();
    assert_eq!(
        *events.lock().unwrap(),
        [
            "start call_1 None",
            "start call_1/1 Some(\"call_1\")",
            "end call_1/1 Some(\"call_1\")",
            "end call_1 None",
            "result call_1",
        ]
    );
}

/// Blocks every call of `echo`, direct or nested.
/// Each call the hook saw: its id and its parent's.
type Seen = Arc<Mutex<Vec<(String, Option<String>)>>>;

struct BlockEcho(Seen);

#[async_trait]
impl BeforeToolCall for BlockEcho {
    async fn before_tool_call(
        &self,
        ctx: BeforeToolCallContext<'_>,
        _signal: &AbortSignal,
    ) -> Result<BeforeToolCallResult, ToolError> {
        self.0.lock().unwrap().push((
            ctx.tool_call.id.to_string(),
            ctx.parent_tool_call_id.map(str::to_owned),
        ));
        Ok(if &*ctx.tool_call.name == "echo" {
            BeforeToolCallResult::block("echo is not allowed here")
        } else {
            BeforeToolCallResult::Allow
        })
    }
}

#[tokio::test]
async fn a_nested_call_goes_through_before_tool_call() {
    let seen = Arc::new(Mutex::new(Vec::new()));
    let results = run(
        vec![relay(&["echo"]), echo()],
        vec![relay_call("call_1", "echo", json!({"text": "hi"}))],
        RunPolicy::new().before_tool_call(Arc::new(BlockEcho(seen.clone()))),
    )
    .await;
    assert_eq!(
        results,
        [("err(Failed): echo is not allowed here".to_owned(), false)]
    );
    assert_eq!(
        *seen.lock().unwrap(),
        [
            ("call_1".to_owned(), None),
            ("call_1/1".to_owned(), Some("call_1".to_owned()))
        ]
    );
}

#[tokio::test]
async fn the_approval_policy_asks_for_a_nested_call() {
    // `echo` declares nothing, so the policy asks; with no UI it blocks. `relay` is
    // read-only, so it runs unasked: only the nested call is refused.
    let relay = {
        let mut spec = relay(&["echo"]).spec().clone();
        spec.annotations = ToolAnnotations::new().read_only(true);
        let inner = relay(&["echo"]);
        fn_tool(spec, move |params, signal, ctx| {
            let inner = inner.clone();
            async move {
                let mut call = ToolInvocation::new("x", &params, signal, pi_tool::OnUpdate::none());
                if let Some(ctx) = ctx {
                    call = call.with_context(ctx);
                }
                inner.execute(call).await
            }
        })
    };
    let results = run(
        vec![relay, echo()],
        vec![relay_call("call_1", "echo", json!({"text": "hi"}))],
        RunPolicy::new().before_tool_call(Arc::new(ApprovalPolicy::new())),
    )
    .await;
    assert_eq!(
        results,
        [(
            "err(Failed): echo requires interactive approval".to_owned(),
            false
        )]
    );
}

/// Answers "ask" for `echo`.
struct AskForEcho;

#[async_trait]
impl BeforeToolCall for AskForEcho {
    async fn before_tool_call(
        &self,
        ctx: BeforeToolCallContext<'_>,
        _signal: &AbortSignal,
    ) -> Result<BeforeToolCallResult, ToolError> {
        Ok(if &*ctx.tool_call.name == "echo" {
            BeforeToolCallResult::ask(ApprovalRequest::new("Run echo?", "It echoes."))
        } else {
            BeforeToolCallResult::Allow
        })
    }
}

#[tokio::test]
async fn a_nested_call_that_needs_a_decision_is_blocked_saying_so() {
    let results = run(
        vec![relay(&["echo"]), echo()],
        vec![relay_call("call_1", "echo", json!({"text": "hi"}))],
        RunPolicy::new().before_tool_call(Arc::new(AskForEcho)),
    )
    .await;
    let expected = ApprovalRequest::new("Run echo?", "It echoes.").unanswered("echo");
    assert_eq!(results, [(format!("err(Failed): {expected}"), false)]);
}

struct ReplaceEcho;

#[async_trait]
impl AfterToolCall for ReplaceEcho {
    async fn after_tool_call(
        &self,
        ctx: AfterToolCallContext<'_>,
        _signal: &AbortSignal,
    ) -> Result<AfterToolCallResult, ToolError> {
        let nested_echo =
            &*ctx.tool_call.name == "echo" && ctx.parent_tool_call_id == Some("call_1");
        Ok(AfterToolCallResult {
            content: nested_echo.then(|| vec![pi_tool::Content::text("replaced after the call")]),
            ..AfterToolCallResult::default()
        })
    }
}

#[tokio::test]
async fn a_nested_call_goes_through_after_tool_call() {
    let results = run(
        vec![relay(&["echo"]), echo()],
        vec![relay_call("call_1", "echo", json!({"text": "hi"}))],
        RunPolicy::new().after_tool_call(Arc::new(ReplaceEcho)),
    )
    .await;
    assert_eq!(results, [("ok: replaced after the call".to_owned(), false)]);
}

#[tokio::test]
async fn a_nested_call_is_validated_with_the_text_of_a_direct_one() {
    let results = run(
        vec![relay(&["echo"]), echo()],
        vec![
            relay_call("call_1", "echo", json!({"text": {"not": "a string"}})),
            AssistantContent::tool_call("call_2", "echo", json!({"text": {"not": "a string"}})),
        ],
        RunPolicy::new(),
    )
    .await;
    let direct = &results[1];
    assert!(direct.1, "the direct call is invalid: {direct:?}");
    assert!(direct.0.contains("Validation failed"), "{direct:?}");
    assert_eq!(results[0].0, format!("err(InvalidArguments): {}", direct.0));
}

#[tokio::test]
async fn argument_limits_apply_to_a_nested_call() {
    let limits = pi_tool::schema::ArgumentLimits::new().max_bytes(64);
    let long = "x".repeat(200);
    let results = run(
        vec![relay(&["echo"]), echo()],
        vec![relay_call("call_1", "echo", json!({"text": long}))],
        // The outer call's own arguments are over the limit too: give relay its own.
        RunPolicy::new().call(CallPolicy::new().argument_limits(limits)),
    )
    .await;
    assert!(
        results[0].1,
        "the outer call itself is refused: {results:?}"
    );
    let results = run(
        vec![relay_with_limits(&["echo"]), echo()],
        vec![relay_call(
            "call_1",
            "echo",
            json!({"text": "x".repeat(200)}),
        )],
        RunPolicy::new().call(CallPolicy::new().argument_limits(limits)),
    )
    .await;
    assert!(
        results[0].0.starts_with("err(InvalidArguments): ") && results[0].0.contains("64"),
        "{results:?}"
    );
}

fn relay_with_limits(reaches: &[&str]) -> Arc<dyn AgentTool> {
    let inner = relay(reaches);
    let mut spec = inner.spec().clone();
    spec.argument_limits = Some(pi_tool::schema::ArgumentLimits::new());
    fn_tool(spec, move |params, signal, ctx| {
        let inner = inner.clone();
        async move {
            let mut call = ToolInvocation::new("x", &params, signal, pi_tool::OnUpdate::none());
            if let Some(ctx) = ctx {
                call = call.with_context(ctx);
            }
            inner.execute(call).await
        }
    })
}

fn relay_with_timeout(reaches: &[&str], timeout: Duration) -> Arc<dyn AgentTool> {
    let inner = relay(reaches);
    let mut spec = inner.spec().clone();
    spec.timeout = Some(timeout);
    fn_tool(spec, move |params, signal, ctx| {
        let inner = inner.clone();
        async move {
            let mut call = ToolInvocation::new("x", &params, signal, pi_tool::OnUpdate::none());
            if let Some(ctx) = ctx {
                call = call.with_context(ctx);
            }
            inner.execute(call).await
        }
    })
}

fn stuck(aborted: Arc<AtomicBool>) -> Arc<dyn AgentTool> {
    fn_tool(
        spec("stuck", json!({"type": "object"})),
        move |_, signal, _| {
            let aborted = aborted.clone();
            async move {
                let outcome = signal.sleep(Duration::from_secs(3600)).await;
                if outcome.is_err() {
                    aborted.store(true, Ordering::SeqCst);
                }
                outcome?;
                Ok(JsonToolResult::text("never", None))
            }
        },
    )
}

#[tokio::test(start_paused = true)]
async fn a_nested_call_is_timed_out() {
    // The outer tool has a deadline of its own, later than the policy's.
    let results = run(
        vec![
            relay_with_timeout(&["stuck"], Duration::from_secs(1)),
            stuck(Arc::default()),
        ],
        vec![relay_call("call_1", "stuck", json!({}))],
        RunPolicy::new().call(CallPolicy::new().tool_timeout(Duration::from_millis(50))),
    )
    .await;
    // The nested call times out with the policy's timeout, and the outer tool reads the
    // timeout's text.
    assert_eq!(
        results,
        [(
            "err(Timeout): Tool stuck timed out after 50ms".to_owned(),
            false
        )]
    );
}

#[tokio::test(start_paused = true)]
async fn aborting_the_outer_call_aborts_its_nested_calls() {
    let aborted = Arc::new(AtomicBool::new(false));
    let results = run(
        vec![
            relay_with_timeout(&["stuck"], Duration::from_millis(10)),
            stuck(aborted.clone()),
        ],
        vec![relay_call("call_1", "stuck", json!({}))],
        RunPolicy::new(),
    )
    .await;
    assert_eq!(
        results,
        [("Tool relay timed out after 10ms".to_owned(), true)]
    );
    assert!(
        aborted.load(Ordering::SeqCst),
        "the nested call saw its signal aborted"
    );
}

#[tokio::test(start_paused = true)]
async fn aborting_the_run_aborts_nested_calls() {
    let aborted = Arc::new(AtomicBool::new(false));
    let agent = agent(
        vec![relay(&["stuck"]), stuck(aborted.clone())],
        vec![
            FauxTurn::new(vec![relay_call("call_1", "stuck", json!({}))]),
            FauxTurn::text("done"),
        ],
        RunPolicy::new(),
    );
    let handle = agent.abort_handle();
    agent.subscribe(move |event, _| {
        if let AgentEvent::ToolExecutionStart {
            parent_tool_call_id: Some(_),
            ..
        } = event
        {
            // Once the nested call is running.
            let handle = handle.clone();
            tokio::spawn(async move {
                tokio::time::sleep(Duration::from_millis(10)).await;
                handle.abort();
            });
        }
        Ok(())
    });
    agent.prompt("go").await.unwrap();
    assert!(aborted.load(Ordering::SeqCst));
    let results = results(&agent.messages());
    assert_eq!(results.len(), 1, "{results:?}");
    assert!(results[0].0.starts_with("err(Aborted)"), "{results:?}");
}

fn failing_with(text: &'static str) -> Arc<dyn AgentTool> {
    fn_tool(
        spec("fail", json!({"type": "object"})),
        move |_, _, _| async move { Err(ToolError::new(text)) },
    )
}

#[tokio::test]
async fn a_nested_call_s_error_is_redacted() {
    let redactor = Redactor::new(["sk-live-0123456789"]).unwrap();
    let results = run(
        vec![relay(&["fail"]), failing_with("bad key sk-live-0123456789")],
        vec![relay_call("call_1", "fail", json!({}))],
        RunPolicy::new().call(CallPolicy::new().redact_secrets(redactor)),
    )
    .await;
    assert_eq!(
        results,
        [("err(Failed): bad key [REDACTED]".to_owned(), false)]
    );
}

#[tokio::test]
async fn a_nested_call_s_result_is_budgeted() {
    let long = fn_tool(spec("long", json!({"type": "object"})), |_, _, _| async {
        Ok(JsonToolResult::text(
            (0..100).map(|i| format!("line {i}\n")).collect::<String>(),
            None,
        ))
    });
    let results = run(
        vec![relay(&["long"]), long],
        vec![relay_call("call_1", "long", json!({}))],
        RunPolicy::new().call(CallPolicy::new().result_budget(ResultBudget::new(10_000, 5))),
    )
    .await;
    let text = &results[0].0;
    assert!(text.starts_with("ok: line 0\n"), "{text}");
    assert!(
        !text.contains("line 50"),
        "the nested result was budgeted: {text}"
    );
}

#[tokio::test]
async fn a_call_outside_the_reach_is_refused() {
    let results = run(
        vec![relay(&["read"]), echo(), echo_named("read")],
        vec![relay_call("call_1", "echo", json!({"text": "hi"}))],
        RunPolicy::new(),
    )
    .await;
    assert_eq!(
        results,
        [(
            "err(Failed): Nested call to echo refused: relay reaches only `read`".to_owned(),
            false
        )]
    );
}

#[tokio::test]
async fn a_tool_without_a_reach_cannot_make_nested_calls() {
    let no_reach = fn_tool(
        spec("plain", json!({"type": "object"})),
        |_, _, ctx| async move {
            // A tool without a reach gets no scope (the agent gives it no context at all).
            let ctx = ctx.unwrap_or_else(ExtensionContext::detached);
            Ok(JsonToolResult::text(
                outcome(ctx.call_tool("echo", json!({"text": "hi"})).await),
                None,
            ))
        },
    );
    let results = run(
        vec![no_reach, echo()],
        vec![AssistantContent::tool_call("call_1", "plain", json!({}))],
        RunPolicy::new(),
    )
    .await;
    let text = &results[0].0;
    assert!(
        text.starts_with("err(Failed): Nested call to echo refused: this call has no reach"),
        "{text}"
    );
}

#[tokio::test]
async fn a_cycle_is_stopped_naming_the_chain() {
    // a -> b -> a: b's call of a is refused, and b hands the refusal up to a.
    let results = run(
        vec![relay_named("a", &["b"]), relay_named("b", &["a"])],
        vec![AssistantContent::tool_call(
            "call_1",
            "a",
            json!({"name": "b", "args": {"name": "a", "args": {}}}),
        )],
        RunPolicy::new(),
    )
    .await;
    assert_eq!(
        results,
        [(
            "ok: err(Failed): Nested call to a refused: it would call itself (a → b → a)"
                .to_owned(),
            false
        )]
    );
}

#[tokio::test]
async fn depth_is_limited() {
    // t0 -> t1 -> t2 -> t3 with a depth of 2: t2 (depth 2) cannot call t3.
    let tools = vec![
        relay_named("t0", &["t1"]),
        relay_named("t1", &["t2"]),
        relay_named("t2", &["t3"]),
        echo_named("t3"),
    ];
    let args = json!({"name": "t1", "args": {"name": "t2", "args": {"name": "t3", "args": {}}}});
    let results = run(
        tools,
        vec![AssistantContent::tool_call("call_1", "t0", args)],
        RunPolicy::new().max_call_depth(2),
    )
    .await;
    assert_eq!(
        results,
        [(
            "ok: ok: err(Failed): Nested call to t3 refused: calls nest 2 deep at most (t0 → t1 → t2 → t3)"
                .to_owned(),
            false
        )]
    );
}

fn echo_named(name: &str) -> Arc<dyn AgentTool> {
    fn_tool(spec(name, json!({"type": "object"})), |_, _, _| async {
        Ok(JsonToolResult::text("bottom", None))
    })
}

#[tokio::test]
async fn nested_calls_do_not_deadlock_a_bounded_sequential_batch() {
    let results = run(
        vec![relay(&["echo"]), echo()],
        vec![
            relay_call("call_1", "echo", json!({"text": "a"})),
            relay_call("call_2", "echo", json!({"text": "b"})),
        ],
        RunPolicy::new()
            .tool_execution(pi_tool::ToolExecutionMode::Sequential)
            .max_concurrency(std::num::NonZeroUsize::MIN),
    )
    .await;
    assert_eq!(
        results,
        [("ok: a".to_owned(), false), ("ok: b".to_owned(), false)]
    );
    let results = run(
        vec![relay(&["echo"]), echo()],
        vec![
            relay_call("call_1", "echo", json!({"text": "a"})),
            relay_call("call_2", "echo", json!({"text": "b"})),
        ],
        RunPolicy::new().max_concurrency(std::num::NonZeroUsize::MIN),
    )
    .await;
    assert_eq!(
        results,
        [("ok: a".to_owned(), false), ("ok: b".to_owned(), false)]
    );
}

// The typed form, in a #[pi_tool] tool with a declared reach.

#[pi_tool::params]
pub struct CityParams {
    /// The city.
    pub city: String,
}

/// Returns the weather for a city.
#[pi_tool]
async fn get_weather(params: CityParams) -> Result<String, ToolError> {
    Ok(format!("sunny in {}", params.city))
}

/// Plans a trip: reads the weather first.
#[pi_tool(reaches = ["get_weather"])]
async fn plan_trip(params: CityParams, ctx: ExtensionContext) -> Result<String, ToolError> {
    let weather = ctx
        .call(
            GetWeather,
            CityParams {
                city: params.city.clone(),
            },
        )
        .await?;
    Ok(format!("pack for: {}", weather.text_content()))
}

impl serde::Serialize for CityParams {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        json!({"city": self.city}).serialize(s)
    }
}

#[tokio::test]
async fn a_typed_tool_calls_a_typed_tool_through_its_context() {
    let pack = pi_tool::tool_pack![GetWeather, PlanTrip];
    assert_eq!(pack.tools()[1].spec().reaches, ["get_weather"]);
    let results = run(
        pack.tools(),
        vec![AssistantContent::tool_call(
            "call_1",
            "plan_trip",
            json!({"city": "Oslo"}),
        )],
        RunPolicy::new(),
    )
    .await;
    assert_eq!(results, [("pack for: sunny in Oslo".to_owned(), false)]);
}

#[tokio::test]
async fn a_session_runs_nested_calls_through_its_tool_call_handlers() {
    let seen = Arc::new(Mutex::new(Vec::new()));
    let seen_in = seen.clone();
    let session = AgentSession::builder(Arc::new(FauxModel::new(vec![
        FauxTurn::new(vec![relay_call("call_1", "echo", json!({"text": "hi"}))]),
        FauxTurn::text("done"),
    ])))
    .agent_tool(relay(&["echo"]))
    .agent_tool(echo())
    .extension(FnExtension::new("guard", move |api| {
        let seen = seen_in.clone();
        api.on_tool_call(move |e: &mut ToolCallEvent, _: &ExtensionContext| {
            seen.lock().unwrap().push(e.tool_call_id.clone());
            Ok(if e.tool_name == "echo" {
                ToolCallDecision::block("no echo in this session")
            } else {
                ToolCallDecision::Allow
            })
        })
    }))
    .build()
    .unwrap();
    session.prompt("go").await.unwrap();
    assert_eq!(*seen.lock().unwrap(), ["call_1", "call_1/1"]);
    assert_eq!(
        results(&session.agent().messages()),
        [("err(Failed): no echo in this session".to_owned(), false)]
    );
}

#[tokio::test]
async fn many_nested_calls_in_a_parallel_batch_all_come_back() {
    let count = Arc::new(AtomicUsize::new(0));
    let counted = count.clone();
    let many = fn_tool(
        spec("many", json!({"type": "object"})).reaches(["echo"]),
        move |_, _, ctx| {
            let counted = counted.clone();
            async move {
                let ctx = ctx.ok_or_else(|| ToolError::new("no context"))?;
                let calls = (0..20).map(|i| ctx.call_tool("echo", json!({"text": i.to_string()})));
                let all = futures::future::join_all(calls).await;
                let mut text = String::new();
                for result in all {
                    text.push_str(&result?.text_content());
                    counted.fetch_add(1, Ordering::SeqCst);
                }
                Ok(JsonToolResult::text(text, None))
            }
        },
    );
    let results = run(
        vec![many, echo()],
        (0..5)
            .map(|i| AssistantContent::tool_call(format!("call_{i}"), "many", json!({})))
            .collect(),
        RunPolicy::new(),
    )
    .await;
    let expected: String = (0..20).map(|i| i.to_string()).collect();
    assert_eq!(results.len(), 5);
    assert!(
        results.iter().all(|(text, e)| !e && *text == expected),
        "{results:?}"
    );
    assert_eq!(count.load(Ordering::SeqCst), 100);
}

#[test]
fn a_session_refuses_a_reach_to_a_tool_it_does_not_have() {
    let error = match AgentSession::builder(Arc::new(FauxModel::default()))
        .agent_tool(relay(&["echo", "grep"]))
        .agent_tool(echo())
        .build()
    {
        Ok(_) => panic!("the session mounted a reach to a missing tool"),
        Err(error) => error,
    };
    assert_eq!(
        error.to_string(),
        "the tool `relay` reaches `grep`, which this host does not have: add `grep` to the host's tools, or remove it from `relay`'s `reaches`"
    );
}

#[tokio::test]
async fn an_agent_refuses_to_run_a_reach_to_a_tool_it_does_not_have() {
    let agent = agent(
        vec![relay(&["echo", "grep"]), echo()],
        vec![
            FauxTurn::new(vec![relay_call("call_1", "grep", json!({}))]),
            FauxTurn::text("done"),
        ],
        RunPolicy::new(),
    );
    let events = Arc::new(AtomicUsize::new(0));
    let seen = events.clone();
    agent.subscribe(move |_, _| {
        seen.fetch_add(1, Ordering::SeqCst);
        Ok(())
    });
    let refusal = "the tool `relay` reaches `grep`, which this host does not have: add `grep` to the host's tools, or remove it from `relay`'s `reaches`";
    let attempts = [
        agent.prompt("go").await,
        agent
            .run("run_1", vec![Message::user_text("go")])
            .await
            .map(drop),
    ];
    for attempt in attempts {
        match attempt {
            Err(error @ AgentError::MissingReach(_)) => assert_eq!(error.to_string(), refusal),
            other => panic!("the run started with a reach to a missing tool: {other:?}"),
        }
    }
    // Refused before anything started: no event, no message, and the agent is idle.
    assert_eq!(events.load(Ordering::SeqCst), 0);
    assert!(agent.messages().is_empty());
    assert!(!agent.is_streaming());

    // Mounting the reached tool is all it takes.
    agent.set_tools(vec![relay(&["echo", "grep"]), echo(), echo_named("grep")]);
    agent.prompt("go").await.unwrap();
    assert_eq!(
        results(&agent.messages()),
        [("ok: bottom".to_owned(), false)]
    );
}
