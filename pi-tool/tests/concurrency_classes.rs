//! Weighted concurrency classes and run limits (issue 30), on tokio's paused clock: the
//! peak per class never exceeds its limit, calls of a class start in the model's order,
//! nobody starves, an ended call frees its room at once, nested calls never deadlock, and
//! run limits count nested calls.

use std::collections::HashMap;
use std::future::Future;
use std::pin::Pin;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use pi_tool::agent::{Agent, AgentOptions, ConcurrencyLimits, RunLimits, RunPolicy};
use pi_tool::context::ExtensionContext;
use pi_tool::model::{AssistantContent, Message};
use pi_tool::schema::ToolSchema;
use pi_tool::testing::{FauxModel, FauxTurn};
use pi_tool::{
    AgentTool, ConcurrencyClass, JsonToolResult, ToolError, ToolInvocation, ToolSpec, Value,
    async_trait, json,
};

type Body = dyn Fn(
        Value,
        Option<ExtensionContext>,
    ) -> Pin<Box<dyn Future<Output = Result<JsonToolResult, ToolError>> + Send>>
    + Send
    + Sync;

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
        (self.body)(call.params.clone(), call.context).await
    }
}

fn fn_tool<F, Fut>(spec: ToolSpec, body: F) -> Arc<dyn AgentTool>
where
    F: Fn(Value, Option<ExtensionContext>) -> Fut + Send + Sync + 'static,
    Fut: Future<Output = Result<JsonToolResult, ToolError>> + Send + 'static,
{
    Arc::new(FnTool {
        spec,
        body: Box::new(move |params, ctx| Box::pin(body(params, ctx))),
    })
}

fn spec(name: &str) -> ToolSpec {
    ToolSpec::new(
        name,
        format!("{name} tool"),
        Arc::new(ToolSchema::from_json(json!({"type": "object"}))),
    )
}

/// What ran when: the weight executing now and its peak per class (`"*"`: all), and the
/// order in which calls of each class started.
#[derive(Default)]
struct Tracker {
    now: HashMap<String, u32>,
    peak: HashMap<String, u32>,
    started: HashMap<String, Vec<u64>>,
}

impl Tracker {
    fn enter(&mut self, class: &str, weight: u32, seq: u64) {
        for key in [class, "*"] {
            let now = self.now.entry(key.to_owned()).or_insert(0);
            *now += weight;
            let now = *now;
            let peak = self.peak.entry(key.to_owned()).or_insert(0);
            *peak = (*peak).max(now);
        }
        self.started.entry(class.to_owned()).or_default().push(seq);
    }

    fn leave(&mut self, class: &str, weight: u32) {
        for key in [class, "*"] {
            if let Some(now) = self.now.get_mut(key) {
                *now -= weight;
            }
        }
    }
}

/// A tool of `class` (weight `weight`) that sleeps `{"ms"}` and answers `{"seq"}`.
fn worker(
    name: &str,
    class: Option<(&'static str, u32)>,
    tracker: Arc<Mutex<Tracker>>,
) -> Arc<dyn AgentTool> {
    let mut spec = spec(name);
    let (label, weight) = class.unwrap_or(("none", 1));
    if let Some((class, weight)) = class {
        spec = spec.concurrency(ConcurrencyClass::new(class, weight));
    }
    fn_tool(spec, move |params, _| {
        let tracker = tracker.clone();
        async move {
            let seq = params["seq"].as_u64().unwrap_or_default();
            let ms = params["ms"].as_u64().unwrap_or_default();
            tracker.lock().unwrap().enter(label, weight, seq);
            tokio::time::sleep(Duration::from_millis(ms)).await;
            tracker.lock().unwrap().leave(label, weight);
            Ok(JsonToolResult::text(seq.to_string(), None))
        }
    })
}

/// xorshift64: a fixed, dependency-free stream of pseudo-random numbers.
struct Rng(u64);

impl Rng {
    fn next(&mut self) -> u64 {
        self.0 ^= self.0 << 13;
        self.0 ^= self.0 >> 7;
        self.0 ^= self.0 << 17;
        self.0
    }
}

fn tool_results(messages: &[Message]) -> Vec<(String, bool)> {
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

#[tokio::test(start_paused = true)]
async fn ten_thousand_random_calls_never_exceed_a_limit_and_start_in_order_per_class() {
    let tracker = Arc::new(Mutex::new(Tracker::default()));
    // name, class and weight; limits: browser 2, network 8, cpu 1, everything 10.
    let kinds: [(&str, Option<(&'static str, u32)>); 5] = [
        ("browse", Some(("browser", 1))),
        ("download", Some(("network", 3))),
        ("fetch", Some(("network", 1))),
        ("crunch", Some(("cpu", 1))),
        ("plain", None),
    ];
    let tools: Vec<_> = kinds
        .iter()
        .map(|(name, class)| worker(name, *class, tracker.clone()))
        .collect();
    let mut rng = Rng(0x9e37_79b9_7f4a_7c15);
    let mut turns = Vec::new();
    let mut seq = 0u64;
    for _ in 0..100 {
        let calls = (0..100)
            .map(|_| {
                let (name, _) = kinds[(rng.next() % kinds.len() as u64) as usize];
                seq += 1;
                let ms = rng.next() % 50;
                AssistantContent::tool_call(format!("c{seq}"), name, json!({"seq": seq, "ms": ms}))
            })
            .collect();
        turns.push(FauxTurn::new(calls));
    }
    turns.push(FauxTurn::text("done"));
    let limits = ConcurrencyLimits::new()
        .class("browser", 2)
        .class("network", 8)
        .class("cpu", 1)
        .total(10);
    let agent = Agent::new(
        AgentOptions::new(Arc::new(FauxModel::new(turns).without_recording()))
            .model(FauxModel::model())
            .tools(tools)
            .policy(RunPolicy::new().concurrency(limits)),
    );
    agent.prompt("go").await.unwrap();

    // Every call ran (nobody starved) and the results are in the model's order.
    let results = tool_results(&agent.messages());
    assert_eq!(results.len(), 10_000);
    for (index, (text, is_error)) in results.iter().enumerate() {
        assert!(!is_error);
        assert_eq!(*text, (index + 1).to_string());
    }
    let tracker = tracker.lock().unwrap();
    assert_eq!(tracker.peak["browser"], 2);
    assert_eq!(tracker.peak["network"], 8);
    assert_eq!(tracker.peak["cpu"], 1);
    assert!(tracker.peak["*"] <= 10, "{:?}", tracker.peak);
    assert!(
        tracker.peak["*"] >= 9,
        "the total was used: {:?}",
        tracker.peak
    );
    // FIFO within each class: calls started in the order the model made them.
    for (class, started) in &tracker.started {
        assert!(
            started.windows(2).all(|w| w[0] < w[1]),
            "{class} started out of order"
        );
    }
}

#[tokio::test(start_paused = true)]
async fn without_limits_every_call_of_a_batch_runs_at_once_as_in_pi() {
    let tracker = Arc::new(Mutex::new(Tracker::default()));
    let tool = worker("browse", Some(("browser", 1)), tracker.clone());
    let calls = (1..=20)
        .map(|seq| {
            AssistantContent::tool_call(format!("c{seq}"), "browse", json!({"seq": seq, "ms": 10}))
        })
        .collect();
    let agent = Agent::new(
        AgentOptions::new(Arc::new(FauxModel::new(vec![
            FauxTurn::new(calls),
            FauxTurn::text("done"),
        ])))
        .model(FauxModel::model())
        .tools(vec![tool]),
    );
    agent.prompt("go").await.unwrap();
    assert_eq!(tracker.lock().unwrap().peak["browser"], 20);
}

#[tokio::test(start_paused = true)]
async fn a_call_that_ends_frees_its_room_at_once() {
    // Limit 1: `slow` times out after 10 ms; `quick`, waiting behind it, starts then.
    let start = tokio::time::Instant::now();
    let started_at = Arc::new(Mutex::new(None));
    let seen = started_at.clone();
    let mut slow_spec = spec("slow").concurrency(ConcurrencyClass::new("x", 1));
    slow_spec.timeout = Some(Duration::from_millis(10));
    let slow = fn_tool(slow_spec, |_, _| async {
        tokio::time::sleep(Duration::from_secs(3600)).await;
        Ok(JsonToolResult::text("never", None))
    });
    let quick = fn_tool(
        spec("quick").concurrency(ConcurrencyClass::new("x", 1)),
        move |_, _| {
            let seen = seen.clone();
            async move {
                *seen.lock().unwrap() = Some(start.elapsed());
                Ok(JsonToolResult::text("quick", None))
            }
        },
    );
    let agent = Agent::new(
        AgentOptions::new(Arc::new(FauxModel::new(vec![
            FauxTurn::new(vec![
                AssistantContent::tool_call("c1", "slow", json!({})),
                AssistantContent::tool_call("c2", "quick", json!({})),
            ]),
            FauxTurn::text("done"),
        ])))
        .model(FauxModel::model())
        .tools(vec![slow, quick])
        .policy(RunPolicy::new().concurrency(ConcurrencyLimits::new().class("x", 1))),
    );
    agent.prompt("go").await.unwrap();
    assert_eq!(*started_at.lock().unwrap(), Some(Duration::from_millis(10)));
    assert_eq!(
        tool_results(&agent.messages()),
        [
            ("Tool slow timed out after 10ms".to_owned(), true),
            ("quick".to_owned(), false)
        ]
    );
}

/// `name` (class `class`) calls `inner` through its context and answers what it got.
fn outer(name: &str, class: &'static str, inner: &str) -> Arc<dyn AgentTool> {
    let inner = inner.to_owned();
    fn_tool(
        spec(name)
            .concurrency(ConcurrencyClass::new(class, 1))
            .reaches([inner.clone()]),
        move |_, ctx| {
            let inner = inner.clone();
            async move {
                let ctx = ctx.ok_or_else(|| ToolError::new("no context"))?;
                tokio::time::sleep(Duration::from_millis(5)).await;
                let result = ctx.call_tool(&inner, json!({})).await?;
                tokio::time::sleep(Duration::from_millis(5)).await;
                Ok(JsonToolResult::text(
                    format!("via {}", result.text_content()),
                    None,
                ))
            }
        },
    )
}

fn leaf(name: &str, class: &'static str) -> Arc<dyn AgentTool> {
    let answer = name.to_owned();
    fn_tool(
        spec(name).concurrency(ConcurrencyClass::new(class, 1)),
        move |_, _| {
            let answer = answer.clone();
            async move {
                tokio::time::sleep(Duration::from_millis(5)).await;
                Ok(JsonToolResult::text(answer, None))
            }
        },
    )
}

#[tokio::test(start_paused = true)]
async fn nested_calls_do_not_deadlock_at_limit_one() {
    // a (x) -> y_leaf (y) and c (y) -> x_leaf (x), in parallel, every class limited to 1
    // and the total to 1: each outer call holds the room the other's nested call needs,
    // unless it lends it while it waits. And same_x (x) -> x_leaf (x): its own class.
    let tools = vec![
        outer("a", "x", "y_leaf"),
        outer("c", "y", "x_leaf"),
        outer("same_x", "x", "x_leaf"),
        leaf("x_leaf", "x"),
        leaf("y_leaf", "y"),
    ];
    let agent = Agent::new(
        AgentOptions::new(Arc::new(FauxModel::new(vec![
            FauxTurn::new(vec![
                AssistantContent::tool_call("c1", "a", json!({})),
                AssistantContent::tool_call("c2", "c", json!({})),
                AssistantContent::tool_call("c3", "same_x", json!({})),
            ]),
            FauxTurn::text("done"),
        ])))
        .model(FauxModel::model())
        .tools(tools)
        .policy(
            RunPolicy::new().concurrency(
                ConcurrencyLimits::new()
                    .class("x", 1)
                    .class("y", 1)
                    .total(1),
            ),
        ),
    );
    tokio::time::timeout(Duration::from_secs(60), agent.prompt("go"))
        .await
        .expect("no deadlock")
        .unwrap();
    assert_eq!(
        tool_results(&agent.messages()),
        [
            ("via y_leaf".to_owned(), false),
            ("via x_leaf".to_owned(), false),
            ("via x_leaf".to_owned(), false)
        ]
    );
}

#[tokio::test]
async fn the_run_limit_counts_nested_calls() {
    // Two outer calls, each with one nested call: the fourth call of the run is refused.
    let tools = vec![outer("relay", "x", "x_leaf"), leaf("x_leaf", "x")];
    let agent = Agent::new(
        AgentOptions::new(Arc::new(FauxModel::new(vec![
            FauxTurn::new(vec![
                AssistantContent::tool_call("c1", "relay", json!({})),
                AssistantContent::tool_call("c2", "relay", json!({})),
            ]),
            FauxTurn::text("done"),
        ])))
        .model(FauxModel::model())
        .tools(tools)
        .policy(RunPolicy::new().limits(RunLimits::new().calls_per_run(3))),
    );
    agent.prompt("go").await.unwrap();
    let results = tool_results(&agent.messages());
    assert_eq!(results[0], ("via x_leaf".to_owned(), false));
    assert_eq!(
        results[1],
        (
            "Tool call limit reached: a run may make at most 3 tool calls (direct and nested), so this call of x_leaf was not run. Answer with what you have."
                .to_owned(),
            true
        )
    );
}

#[tokio::test]
async fn the_run_limit_holds_across_turns_and_the_turn_limit_per_turn() {
    let tools = vec![leaf("x_leaf", "x")];
    let turn = || {
        FauxTurn::new(vec![
            AssistantContent::tool_call("a", "x_leaf", json!({})),
            AssistantContent::tool_call("b", "x_leaf", json!({})),
        ])
    };
    let agent = Agent::new(
        AgentOptions::new(Arc::new(FauxModel::new(vec![
            turn(),
            turn(),
            FauxTurn::text("done"),
        ])))
        .model(FauxModel::model())
        .tools(tools.clone())
        .policy(RunPolicy::new().limits(RunLimits::new().calls_per_run(3))),
    );
    agent.prompt("go").await.unwrap();
    let errors: Vec<bool> = tool_results(&agent.messages())
        .iter()
        .map(|r| r.1)
        .collect();
    assert_eq!(errors, [false, false, false, true]);

    let agent = Agent::new(
        AgentOptions::new(Arc::new(FauxModel::new(vec![
            turn(),
            turn(),
            FauxTurn::text("done"),
        ])))
        .model(FauxModel::model())
        .tools(tools)
        .policy(RunPolicy::new().limits(RunLimits::new().calls_per_turn(1))),
    );
    agent.prompt("go").await.unwrap();
    let results = tool_results(&agent.messages());
    let errors: Vec<bool> = results.iter().map(|r| r.1).collect();
    assert_eq!(errors, [false, true, false, true]);
    assert!(
        results[1]
            .0
            .contains("one turn may make at most 1 tool calls")
    );
}
