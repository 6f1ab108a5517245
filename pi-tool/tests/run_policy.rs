//! One run policy on every host: the concurrency limit, the default timeout and the
//! result budget reach a session exactly as they reach an `Agent`.

use std::future::Future;
use std::num::NonZeroUsize;
use std::pin::Pin;
use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::Duration;

use pi_tool::ToolInvocation;
use pi_tool::agent::{Agent, AgentOptions, RunPolicy};
use pi_tool::model::{AssistantContent, Message};
use pi_tool::safety::ResultBudget;
use pi_tool::schema::ToolSchema;
use pi_tool::session::AgentSession;
use pi_tool::testing::{FauxModel, FauxTurn};
use pi_tool::{
    AbortSignal, AgentTool, CallPolicy, JsonToolResult, OnUpdate, ToolError, ToolSpec, Value,
    async_trait, json,
};

type Body = dyn Fn() -> Pin<Box<dyn Future<Output = Result<JsonToolResult, ToolError>> + Send>>
    + Send
    + Sync;

struct AsyncTool {
    spec: ToolSpec,
    body: Box<Body>,
}

#[async_trait]
impl AgentTool for AsyncTool {
    fn spec(&self) -> &ToolSpec {
        &self.spec
    }
    async fn execute(&self, call: ToolInvocation<'_>) -> Result<JsonToolResult, ToolError> {
        let _id = call.id;
        let _params = call.params;
        let _signal = call.signal;
        let _on_update = call.on_update;
        (self.body)().await
    }
}

fn tool<F, Fut>(name: &str, body: F) -> Arc<dyn AgentTool>
where
    F: Fn() -> Fut + Send + Sync + 'static,
    Fut: Future<Output = Result<JsonToolResult, ToolError>> + Send + 'static,
{
    let schema = Arc::new(ToolSchema::from_json(
        json!({"type": "object", "properties": {}}),
    ));
    Arc::new(AsyncTool {
        spec: ToolSpec::new(name, format!("{name} tool"), schema),
        body: Box::new(move || Box::pin(body())),
    })
}

fn calls(name: &str, n: usize) -> FauxTurn {
    FauxTurn::new(
        (0..n)
            .map(|i| AssistantContent::tool_call(format!("call_{i}"), name, json!({})))
            .collect(),
    )
}

/// A tool that records how many of its calls ran at once.
fn counting_tool(peak: Arc<AtomicUsize>) -> Arc<dyn AgentTool> {
    let running = Arc::new(AtomicUsize::new(0));
    tool("work", move || {
        let (running, peak) = (running.clone(), peak.clone());
        async move {
            let now = running.fetch_add(1, Ordering::SeqCst) + 1;
            peak.fetch_max(now, Ordering::SeqCst);
            tokio::time::sleep(Duration::from_millis(20)).await;
            running.fetch_sub(1, Ordering::SeqCst);
            Ok(JsonToolResult::text("done", None))
        }
    })
}

fn results(messages: &[Message]) -> Vec<(String, bool, Option<Value>)> {
    messages
        .iter()
        .filter_map(Message::as_tool_result)
        .map(|r| {
            let text = r.content.iter().filter_map(|c| c.as_text()).collect();
            let details = r.details.as_ref().map(|d| d.as_value().clone());
            (text, r.is_error, details)
        })
        .collect()
}

#[tokio::test]
async fn a_session_bounds_a_parallel_batch_with_max_concurrency() {
    let peak = Arc::new(AtomicUsize::new(0));
    let session = AgentSession::builder(Arc::new(FauxModel::new(vec![calls("work", 6)])))
        .agent_tool(counting_tool(peak.clone()))
        .policy(RunPolicy::new().max_concurrency(NonZeroUsize::new(2).unwrap()))
        .build()
        .unwrap();
    session.prompt("go").await.unwrap();
    assert_eq!(peak.load(Ordering::SeqCst), 2);
    assert_eq!(results(&session.agent().messages()).len(), 6);
}

#[tokio::test]
async fn a_session_ends_a_stuck_call_with_its_default_timeout() {
    let stuck = tool("stuck", || async {
        tokio::time::sleep(Duration::from_secs(60)).await;
        Ok(JsonToolResult::text("never", None))
    });
    let session = AgentSession::builder(Arc::new(FauxModel::new(vec![calls("stuck", 1)])))
        .agent_tool(stuck)
        .policy(
            CallPolicy::new()
                .tool_timeout(Duration::from_millis(50))
                .into(),
        )
        .build()
        .unwrap();
    let started = std::time::Instant::now();
    session.prompt("go").await.unwrap();
    assert!(started.elapsed() < Duration::from_secs(5));
    let results = results(&session.agent().messages());
    assert_eq!(results.len(), 1);
    assert_eq!(results[0].0, "Tool stuck timed out after 50ms");
    assert!(results[0].1);
}

fn long_output() -> Arc<dyn AgentTool> {
    tool("logs", || async {
        let text: Vec<String> = (1..=500).map(|i| format!("line {i}")).collect();
        Ok(JsonToolResult::text(text.join("\n"), None))
    })
}

/// What a budgeted result looks like: the head and Pi-style note for the model, the
/// full text in the details.
fn assert_budgeted(results: &[(String, bool, Option<Value>)]) {
    assert_eq!(results.len(), 1);
    let (text, is_error, details) = &results[0];
    assert!(!is_error);
    assert!(text.starts_with("line 1\nline 2\n"), "{text}");
    assert!(text.lines().count() <= 11, "{text}");
    assert!(text.contains("[Output truncated"), "{text}");
    let details = details.as_ref().expect("details");
    let full = details["fullText"].as_str().expect("fullText");
    assert_eq!(full.lines().count(), 500);
    assert!(full.ends_with("line 500"));
}

#[tokio::test]
async fn a_session_and_an_agent_apply_the_result_budget_alike() {
    let budget = ResultBudget::new(64 * 1024, 10);
    let session = AgentSession::builder(Arc::new(FauxModel::new(vec![calls("logs", 1)])))
        .agent_tool(long_output())
        .policy(CallPolicy::new().result_budget(budget.clone()).into())
        .build()
        .unwrap();
    session.prompt("go").await.unwrap();
    assert_budgeted(&results(&session.agent().messages()));

    let agent = Agent::new(
        AgentOptions::new(Arc::new(FauxModel::new(vec![calls("logs", 1)])))
            .tools(vec![long_output()])
            .result_budget(budget),
    );
    agent.prompt("go").await.unwrap();
    assert_budgeted(&results(&agent.messages()));
}

#[tokio::test]
async fn without_a_budget_the_result_is_whole_as_in_pi() {
    let agent = Agent::new(
        AgentOptions::new(Arc::new(FauxModel::new(vec![calls("logs", 1)])))
            .tools(vec![long_output()]),
    );
    agent.prompt("go").await.unwrap();
    let results = results(&agent.messages());
    assert_eq!(results[0].0.lines().count(), 500);
    assert_eq!(results[0].2, None);
}

/// A tool whose `prepare_arguments` panics.
struct PanickyPrepare(ToolSpec);

#[async_trait]
impl AgentTool for PanickyPrepare {
    fn spec(&self) -> &ToolSpec {
        &self.0
    }
    fn prepare_arguments<'a>(
        &self,
        _arguments: &'a Value,
    ) -> Result<std::borrow::Cow<'a, Value>, ToolError> {
        panic!("bad shim")
    }
    async fn execute(&self, call: ToolInvocation<'_>) -> Result<JsonToolResult, ToolError> {
        let _id = call.id;
        let _params = call.params;
        let _signal = call.signal;
        let _on_update = call.on_update;
        Ok(JsonToolResult::text("never", None))
    }
}

/// One call path: a panic in `prepare_arguments` reads the same in the agent loop and
/// through `call_contained` (what the MCP server runs).
#[tokio::test]
async fn a_panicking_prepare_reads_the_same_on_every_host() {
    let schema = Arc::new(ToolSchema::from_json(
        json!({"type": "object", "properties": {}}),
    ));
    let tool: Arc<dyn AgentTool> = Arc::new(PanickyPrepare(ToolSpec::new("shim", "d", schema)));
    let agent = Agent::new(
        AgentOptions::new(Arc::new(FauxModel::new(vec![calls("shim", 1)])))
            .tools(vec![tool.clone()]),
    );
    agent.prompt("go").await.unwrap();
    let in_loop = results(&agent.messages());
    assert_eq!(in_loop[0].0, "Tool shim panicked: bad shim");
    assert!(in_loop[0].1);
    let direct = pi_tool::call_contained(
        &*tool,
        ToolInvocation::new("c", &json!({}), AbortSignal::never(), OnUpdate::none()),
        &pi_tool::schema::ArgumentLimits::default(),
        None,
    )
    .await
    .unwrap_err();
    assert_eq!(direct.message(), in_loop[0].0);
    assert_eq!(direct.kind(), pi_tool::ToolErrorKind::Panicked);
}
