//! A `PackServer`'s weighted concurrency classes and its per-session call limit (issue
//! 30), over MCP's stdio framing: the agent's scheduler (`pi_tool_core::concurrency`)
//! with the agent's rules. The peak weight of each class never exceeds its limit, calls of
//! a class start in the order they came, a cancelled call frees its room at once (and a
//! cancelled waiting call leaves the queue), nested calls never deadlock at limit 1, and a
//! call past the session's limit is an error result with the limit in its text.

use std::collections::HashMap;
use std::future::Future;
use std::num::NonZeroUsize;
use std::pin::Pin;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use pi_tool::concurrency::ConcurrencyLimits;
use pi_tool::context::ExtensionContext;
use pi_tool::pack::{ToolOwner, ToolPack};
use pi_tool::schema::ToolSchema;
use pi_tool::{
    AbortSignal, AgentTool, ConcurrencyClass, JsonToolResult, ToolError, ToolInvocation, ToolSpec,
    Value, async_trait, json,
};
use pi_tool_mcp::PackServer;
use tokio::io::{AsyncBufReadExt, AsyncWriteExt, BufReader, DuplexStream, WriteHalf};
use tokio::sync::mpsc;

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
        (self.body)(call.params.clone(), call.signal, call.context).await
    }
}

/// What the tools saw: the weight executing per class and in total, the peaks, and the
/// order calls started in.
#[derive(Default)]
struct Probe {
    state: Mutex<ProbeState>,
}

#[derive(Default)]
struct ProbeState {
    running: HashMap<String, u32>,
    total: u32,
    peaks: HashMap<String, u32>,
    peak_total: u32,
    started: Vec<u64>,
}

impl Probe {
    fn enter(&self, class: &str, weight: u32, n: u64) {
        let mut state = self.state.lock().unwrap();
        let running = state.running.entry(class.to_owned()).or_default();
        *running += weight;
        let now = *running;
        let peak = state.peaks.entry(class.to_owned()).or_default();
        *peak = (*peak).max(now);
        state.total += weight;
        state.peak_total = state.peak_total.max(state.total);
        state.started.push(n);
    }

    fn exit(&self, class: &str, weight: u32) {
        let mut state = self.state.lock().unwrap();
        *state.running.get_mut(class).unwrap() -= weight;
        state.total -= weight;
    }

    fn peak(&self, class: &str) -> u32 {
        self.state
            .lock()
            .unwrap()
            .peaks
            .get(class)
            .copied()
            .unwrap_or(0)
    }

    fn peak_total(&self) -> u32 {
        self.state.lock().unwrap().peak_total
    }

    fn started(&self) -> Vec<u64> {
        self.state.lock().unwrap().started.clone()
    }
}

fn spec(name: &str, class: &'static str, weight: u32) -> ToolSpec {
    let schema = json!({
        "type": "object",
        "properties": {"n": {"type": "integer"}, "ms": {"type": "integer"}},
        "required": ["n", "ms"]
    });
    ToolSpec::new(
        name,
        format!("{name} tool"),
        Arc::new(ToolSchema::from_json(schema)),
    )
    .concurrency(ConcurrencyClass::new(class, weight))
}

/// `{n, ms}`: records its start as `n`, holds `weight` of `class` for `ms` (or until
/// aborted), answers `done n`.
fn work(name: &str, class: &'static str, weight: u32, probe: &Arc<Probe>) -> Arc<dyn AgentTool> {
    let probe = probe.clone();
    Arc::new(FnTool {
        spec: spec(name, class, weight),
        body: Box::new(move |params, signal, _| {
            let probe = probe.clone();
            Box::pin(async move {
                let n = params["n"].as_u64().unwrap_or_default();
                let ms = params["ms"].as_u64().unwrap_or_default();
                probe.enter(class, weight, n);
                let slept = signal.sleep(Duration::from_millis(ms)).await;
                probe.exit(class, weight);
                slept?;
                Ok(JsonToolResult::text(format!("done {n}"), None))
            })
        }),
    })
}

/// `{n, ms}` in class `class`: calls `work` twice through its context and reports both.
fn relay(class: &'static str) -> Arc<dyn AgentTool> {
    Arc::new(FnTool {
        spec: spec("relay", class, 1).reaches(["work"]),
        body: Box::new(move |params, _, ctx| {
            Box::pin(async move {
                let ctx = ctx.ok_or_else(|| ToolError::new("no context"))?;
                let mut lines = Vec::new();
                for _ in 0..2 {
                    lines.push(match ctx.call_tool("work", params.clone()).await {
                        Ok(result) => format!("ok: {}", result.text_content()),
                        Err(error) => format!("err: {}", error.message()),
                    });
                }
                Ok(JsonToolResult::text(lines.join("\n"), None))
            })
        }),
    })
}

fn pack(tools: Vec<Arc<dyn AgentTool>>) -> ToolPack {
    let mut pack = ToolPack::new();
    for tool in tools {
        pack.push(ToolOwner::new("concurrency-test"), tool).unwrap();
    }
    pack
}

/// A client over the server's stdio framing whose answers are read by a task of their
/// own, so that many calls can be in flight.
struct Client {
    writer: WriteHalf<DuplexStream>,
    answers: mpsc::UnboundedReceiver<Value>,
    received: HashMap<u64, Value>,
}

impl Client {
    async fn start(server: PackServer) -> Client {
        let (client, server_end) = tokio::io::duplex(256 * 1024);
        let (read, write) = tokio::io::split(server_end);
        tokio::spawn(async move {
            let _ = server.serve_io(read, write).await;
        });
        let (read, writer) = tokio::io::split(client);
        let (sender, answers) = mpsc::unbounded_channel();
        tokio::spawn(async move {
            let mut lines = BufReader::new(read).lines();
            while let Ok(Some(line)) = lines.next_line().await {
                if sender.send(serde_json::from_str(&line).unwrap()).is_err() {
                    return;
                }
            }
        });
        let mut client = Client {
            writer,
            answers,
            received: HashMap::new(),
        };
        client
            .send(json!({
                "jsonrpc": "2.0", "id": 0, "method": "initialize",
                "params": {
                    "protocolVersion": "2025-06-18",
                    "capabilities": {},
                    "clientInfo": {"name": "concurrency-test", "version": "0"}
                }
            }))
            .await;
        client.answer(0).await;
        client
            .send(json!({"jsonrpc": "2.0", "method": "notifications/initialized"}))
            .await;
        client
    }

    async fn send(&mut self, message: Value) {
        let mut line = message.to_string().into_bytes();
        line.push(b'\n');
        self.writer.write_all(&line).await.unwrap();
    }

    async fn call(&mut self, id: u64, tool: &str, arguments: Value) {
        self.send(json!({
            "jsonrpc": "2.0", "id": id, "method": "tools/call",
            "params": {"name": tool, "arguments": arguments}
        }))
        .await;
    }

    async fn cancel(&mut self, id: u64) {
        self.send(json!({
            "jsonrpc": "2.0", "method": "notifications/cancelled",
            "params": {"requestId": id, "reason": "test"}
        }))
        .await;
    }

    /// The answer to request `id`, waiting up to `within`.
    async fn answer_within(&mut self, id: u64, within: Duration) -> Option<Value> {
        let deadline = tokio::time::Instant::now() + within;
        loop {
            if let Some(answer) = self.received.remove(&id) {
                return Some(answer);
            }
            let message = tokio::time::timeout_at(deadline, self.answers.recv())
                .await
                .ok()?
                .expect("the server keeps the pipe open");
            if let Some(answer_id) = message["id"].as_u64() {
                self.received.insert(answer_id, message);
            }
        }
    }

    async fn answer(&mut self, id: u64) -> Value {
        self.answer_within(id, Duration::from_secs(30))
            .await
            .unwrap_or_else(|| panic!("no answer to request {id} within 30 s"))
    }

    /// The text of the answer to call `id`, and whether it is an error result.
    async fn result(&mut self, id: u64) -> (String, bool) {
        let answer = self.answer(id).await;
        let result = &answer["result"];
        (
            result["content"][0]["text"]
                .as_str()
                .unwrap_or_else(|| panic!("not a tool result: {answer}"))
                .to_owned(),
            result["isError"].as_bool().unwrap_or(false),
        )
    }
}

/// Waits until `probe` has seen `count` starts.
async fn started(probe: &Probe, count: usize) {
    tokio::time::timeout(Duration::from_secs(30), async {
        while probe.started().len() < count {
            tokio::time::sleep(Duration::from_millis(5)).await;
        }
    })
    .await
    .expect("the calls start");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_weight_of_a_class_never_exceeds_its_limit() {
    let probe = Arc::new(Probe::default());
    let server = PackServer::new(pack(vec![
        work("browse", "browser", 1, &probe),
        work("render", "browser", 2, &probe),
        work("fetch", "network", 1, &probe),
        work("think", "cpu", 1, &probe),
    ]))
    .with_concurrency(
        ConcurrencyLimits::new()
            .class("browser", 2)
            .class("network", 3)
            .total(5),
    );
    let mut client = Client::start(server).await;
    // A fixed pseudo-random mix: the same calls every run.
    let mut seed: u64 = 0x9e37_79b9_7f4a_7c15;
    let tools = ["browse", "render", "fetch", "think"];
    for id in 1..=60u64 {
        seed ^= seed << 13;
        seed ^= seed >> 7;
        seed ^= seed << 17;
        let tool = tools[(seed % 4) as usize];
        let ms = 5 + seed % 30;
        client.call(id, tool, json!({"n": id, "ms": ms})).await;
    }
    for id in 1..=60u64 {
        assert_eq!(client.result(id).await, (format!("done {id}"), false));
    }
    assert!(
        probe.peak("browser") <= 2,
        "browser: {}",
        probe.peak("browser")
    );
    assert!(
        probe.peak("network") <= 3,
        "network: {}",
        probe.peak("network")
    );
    assert!(probe.peak_total() <= 5, "total: {}", probe.peak_total());
    // The limits bound, they do not serialise: calls did run side by side.
    assert!(probe.peak_total() >= 2, "total: {}", probe.peak_total());
    assert_eq!(probe.started().len(), 60);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn calls_of_a_class_start_in_the_order_they_came() {
    let probe = Arc::new(Probe::default());
    let server = PackServer::new(pack(vec![work("think", "cpu", 1, &probe)]))
        .with_concurrency(ConcurrencyLimits::new().class("cpu", 1));
    let mut client = Client::start(server).await;
    client.call(1, "think", json!({"n": 1, "ms": 400})).await;
    started(&probe, 1).await;
    // Each call is queued well before the next is sent, and none can start before the
    // first ends.
    for id in 2..=6u64 {
        client.call(id, "think", json!({"n": id, "ms": 20})).await;
        tokio::time::sleep(Duration::from_millis(40)).await;
    }
    for id in 1..=6u64 {
        assert_eq!(client.result(id).await, (format!("done {id}"), false));
    }
    assert_eq!(probe.started(), [1, 2, 3, 4, 5, 6]);
    assert_eq!(probe.peak("cpu"), 1);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_cancelled_call_frees_its_room_at_once() {
    let probe = Arc::new(Probe::default());
    let server = PackServer::new(pack(vec![work("think", "cpu", 1, &probe)]))
        .with_max_concurrency(NonZeroUsize::MIN);
    let mut client = Client::start(server).await;
    client
        .call(1, "think", json!({"n": 1, "ms": 600_000}))
        .await;
    started(&probe, 1).await;
    client
        .call(2, "think", json!({"n": 2, "ms": 600_000}))
        .await;
    client.call(3, "think", json!({"n": 3, "ms": 0})).await;
    assert!(
        client
            .answer_within(3, Duration::from_millis(200))
            .await
            .is_none(),
        "call 3 ran past the limit"
    );
    // 2 leaves the queue while it waits; then 1's room goes to 3 as soon as 1 is
    // cancelled, not after its ten minutes.
    client.cancel(2).await;
    tokio::time::sleep(Duration::from_millis(50)).await;
    client.cancel(1).await;
    assert_eq!(
        client
            .answer_within(3, Duration::from_secs(5))
            .await
            .map(|a| a["result"]["content"][0]["text"].clone()),
        Some(json!("done 3"))
    );
    assert_eq!(
        probe.started(),
        [1, 3],
        "the cancelled waiting call never started"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn nested_calls_do_not_deadlock_at_limit_1() {
    for (outer, inner, limits) in [
        // The same class, limit 1, and a total of 1.
        (
            "cpu",
            "cpu",
            ConcurrencyLimits::new().class("cpu", 1).total(1),
        ),
        // Two classes of limit 1 each.
        (
            "a",
            "b",
            ConcurrencyLimits::new().class("a", 1).class("b", 1),
        ),
    ] {
        let probe = Arc::new(Probe::default());
        let server = PackServer::new(pack(vec![relay(outer), work("work", inner, 1, &probe)]))
            .with_concurrency(limits);
        let mut client = Client::start(server).await;
        // Two outer calls at once, each making two nested calls.
        client.call(1, "relay", json!({"n": 1, "ms": 20})).await;
        client.call(2, "relay", json!({"n": 2, "ms": 20})).await;
        assert_eq!(
            client.result(1).await,
            ("ok: done 1\nok: done 1".to_owned(), false)
        );
        assert_eq!(
            client.result(2).await,
            ("ok: done 2\nok: done 2".to_owned(), false)
        );
        assert_eq!(probe.peak(inner), 1);
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_session_call_limit_counts_direct_and_nested_calls() {
    let probe = Arc::new(Probe::default());
    let server = PackServer::new(pack(vec![relay("cpu"), work("work", "cpu", 1, &probe)]))
        .with_session_call_limit(4);
    let mut client = Client::start(server.clone()).await;
    // relay and its two nested calls: three of four.
    client.call(1, "relay", json!({"n": 1, "ms": 0})).await;
    assert_eq!(
        client.result(1).await,
        ("ok: done 1\nok: done 1".to_owned(), false)
    );
    client.call(2, "work", json!({"n": 2, "ms": 0})).await;
    assert_eq!(client.result(2).await, ("done 2".to_owned(), false));
    client.call(3, "work", json!({"n": 3, "ms": 0})).await;
    assert_eq!(
        client.result(3).await,
        (
            "Tool call limit reached: a session may make at most 4 tool calls (direct and nested) on this server, so this call of work was not run".to_owned(),
            true
        )
    );
    assert_eq!(probe.started(), [1, 1, 2], "the refused call did not run");

    // Another session counts from zero; a nested call past the limit is the error the
    // outer tool reads.
    let server = server.with_session_call_limit(2);
    let mut client = Client::start(server).await;
    client.call(1, "relay", json!({"n": 4, "ms": 0})).await;
    assert_eq!(
        client.result(1).await,
        (
            "ok: done 4\nerr: Tool call limit reached: a session may make at most 2 tool calls (direct and nested) on this server, so this call of work was not run".to_owned(),
            false
        )
    );
}
