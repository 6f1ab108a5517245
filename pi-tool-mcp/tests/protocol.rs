//! The server at the wire level, in process: newline-delimited JSON-RPC over an
//! in-memory pipe, with tools the weather pack does not have (one panics, one reports
//! progress). The official-client test (`mcp_client.rs`) covers the weather binary.

use std::sync::Arc;
use std::time::Duration;

use pi_tool::CallPolicy;
use pi_tool::ToolInvocation;
use pi_tool::pack::{ToolOwner, ToolPack};
use pi_tool::safety::{Redactor, ResultBudget};
use pi_tool::schema::ToolSchema;
use pi_tool::{AgentTool, JsonToolResult, ToolError, ToolSpec, Value, async_trait, json};
use pi_tool_mcp::PackServer;
use pi_tool_mcp::rmcp::ServiceExt;
use tokio::io::{AsyncBufReadExt, AsyncWriteExt, BufReader, DuplexStream, Lines, WriteHalf};

struct Explode(ToolSpec);

#[async_trait]
impl AgentTool for Explode {
    fn spec(&self) -> &ToolSpec {
        &self.0
    }

    async fn execute(&self, call: ToolInvocation<'_>) -> Result<JsonToolResult, ToolError> {
        let _id = call.id;
        let _params = call.params;
        let _signal = call.signal;
        let _on_update = call.on_update;
        panic!("the tool exploded")
    }
}

struct Steps(ToolSpec);

#[async_trait]
impl AgentTool for Steps {
    fn spec(&self) -> &ToolSpec {
        &self.0
    }

    async fn execute(&self, call: ToolInvocation<'_>) -> Result<JsonToolResult, ToolError> {
        let id = call.id;
        let _params = call.params;
        let _signal = call.signal;
        let on_update = call.on_update;
        for step in 1..=3 {
            on_update.send(JsonToolResult::text(
                format!("step {step}"),
                Some(json!(step).into()),
            ));
        }
        Ok(JsonToolResult::text(format!("done {id}"), None))
    }
}

fn spec(name: &str) -> ToolSpec {
    let schema = ToolSchema::from_json(json!({"type": "object", "properties": {}}));
    ToolSpec::new(name, format!("The {name} test tool."), Arc::new(schema))
}

struct Wire {
    lines: Lines<BufReader<tokio::io::ReadHalf<DuplexStream>>>,
    writer: WriteHalf<DuplexStream>,
}

impl Wire {
    async fn send(&mut self, message: Value) {
        let mut line = serde_json::to_vec(&message).unwrap();
        line.push(b'\n');
        self.writer.write_all(&line).await.unwrap();
    }

    async fn receive(&mut self) -> Value {
        let line = tokio::time::timeout(Duration::from_secs(10), self.lines.next_line())
            .await
            .expect("the server answers within 10 s")
            .unwrap()
            .expect("the server keeps the pipe open");
        serde_json::from_str(&line).unwrap()
    }

    /// Sends a request and returns what the server sent until its response.
    async fn request(&mut self, id: u64, method: &str, params: Value) -> (Vec<Value>, Value) {
        self.send(json!({"jsonrpc": "2.0", "id": id, "method": method, "params": params}))
            .await;
        let mut notifications = Vec::new();
        loop {
            let message = self.receive().await;
            if message.get("id") == Some(&json!(id)) {
                return (notifications, message);
            }
            notifications.push(message);
        }
    }
}

async fn start() -> Wire {
    start_with(CallPolicy::default()).await
}

/// Sleeps for a minute (a call the timeout must end), or prints 500 lines, or fails
/// naming a secret: the tools the run-policy tests call.
struct PolicyTool(ToolSpec);

#[async_trait]
impl AgentTool for PolicyTool {
    fn spec(&self) -> &ToolSpec {
        &self.0
    }

    async fn execute(&self, call: ToolInvocation<'_>) -> Result<JsonToolResult, ToolError> {
        let _id = call.id;
        let _params = call.params;
        let signal = call.signal;
        let _on_update = call.on_update;
        match self.0.name.as_str() {
            "slow" => {
                signal.sleep(Duration::from_secs(60)).await?;
                Ok(JsonToolResult::text("late", None))
            }
            "logs" => {
                let lines: Vec<String> = (1..=500).map(|i| format!("line {i}")).collect();
                Ok(JsonToolResult::text(lines.join("\n"), None))
            }
            _ => Err(ToolError::new("login failed with sk-live-0123456789abcdef")),
        }
    }
}

async fn start_with(policy: CallPolicy) -> Wire {
    let mut pack = ToolPack::new();
    let owner = ToolOwner::new("protocol-test");
    pack.push(
        owner.clone(),
        Arc::new(Explode(spec("explode"))) as Arc<dyn AgentTool>,
    )
    .unwrap();
    pack.push(
        owner.clone(),
        Arc::new(Steps(spec("steps"))) as Arc<dyn AgentTool>,
    )
    .unwrap();
    for name in ["slow", "logs", "leak"] {
        pack.push(
            owner.clone(),
            Arc::new(PolicyTool(spec(name))) as Arc<dyn AgentTool>,
        )
        .unwrap();
    }
    let (client, server) = tokio::io::duplex(64 * 1024);
    let (server_read, server_write) = tokio::io::split(server);
    tokio::spawn(async move {
        let running = PackServer::new(pack)
            .with_policy(policy)
            .serve((server_read, server_write))
            .await
            .unwrap();
        let _ = running.waiting().await;
    });
    let (read, writer) = tokio::io::split(client);
    let mut wire = Wire {
        lines: BufReader::new(read).lines(),
        writer,
    };
    let (_, init) = wire
        .request(
            0,
            "initialize",
            json!({
                "protocolVersion": "2025-06-18",
                "capabilities": {},
                "clientInfo": {"name": "wire-test", "version": "0"}
            }),
        )
        .await;
    assert!(
        init["result"]["capabilities"]["tools"].is_object(),
        "{init}"
    );
    wire.send(json!({"jsonrpc": "2.0", "method": "notifications/initialized"}))
        .await;
    wire
}

#[tokio::test]
async fn a_panicking_tool_gives_an_error_result_and_the_server_lives_on() {
    let mut wire = start().await;
    let (_, response) = wire
        .request(1, "tools/call", json!({"name": "explode", "arguments": {}}))
        .await;
    assert_eq!(
        response["result"],
        json!({
            "content": [{"type": "text", "text": "Tool explode panicked: the tool exploded"}],
            "isError": true
        }),
        "{response}"
    );
    let (_, response) = wire
        .request(2, "tools/call", json!({"name": "steps", "arguments": {}}))
        .await;
    assert_eq!(
        response["result"]["content"][0]["text"],
        json!("done mcp-2")
    );
}

#[tokio::test]
async fn progress_goes_out_in_order_before_the_result_only_with_a_token() {
    let mut wire = start().await;
    let (notifications, response) = wire
        .request(
            1,
            "tools/call",
            json!({"name": "steps", "arguments": {}, "_meta": {"progressToken": "p1"}}),
        )
        .await;
    assert_eq!(response["result"]["isError"], json!(false), "{response}");
    let progress: Vec<_> = notifications
        .iter()
        .map(|n| {
            assert_eq!(n["method"], json!("notifications/progress"));
            assert_eq!(n["params"]["progressToken"], json!("p1"));
            (
                n["params"]["progress"].as_f64().unwrap(),
                n["params"]["message"].clone(),
            )
        })
        .collect();
    assert_eq!(
        progress,
        [
            (1.0, json!("step 1")),
            (2.0, json!("step 2")),
            (3.0, json!("step 3"))
        ]
    );

    let (notifications, _) = wire
        .request(2, "tools/call", json!({"name": "steps", "arguments": {}}))
        .await;
    assert!(
        notifications.is_empty(),
        "no token, no progress: {notifications:?}"
    );
}

#[tokio::test]
async fn arguments_of_the_wrong_shape_and_missing_arguments_are_handled() {
    let mut wire = start().await;
    // No `arguments` at all: the tool gets `{}`.
    let (_, response) = wire
        .request(1, "tools/call", json!({"name": "steps"}))
        .await;
    assert_eq!(response["result"]["isError"], json!(false), "{response}");
    // Deeply nested arguments are data, not a crash: the argument limits refuse them.
    let mut nested = json!("leaf");
    for _ in 0..100 {
        nested = json!({ "n": nested });
    }
    let (_, response) = wire
        .request(
            2,
            "tools/call",
            json!({"name": "steps", "arguments": {"deep": nested}}),
        )
        .await;
    assert_eq!(response["result"]["isError"], json!(true), "{response}");
    assert_eq!(
        response["result"]["content"][0]["text"],
        json!("Tool steps: arguments nest 101 levels deep; the limit is 64 (max_depth)")
    );
    let (_, listed) = wire.request(3, "tools/list", json!({})).await;
    let names: Vec<_> = listed["result"]["tools"]
        .as_array()
        .unwrap()
        .iter()
        .map(|t| t["name"].clone())
        .collect();
    assert_eq!(
        names,
        ["explode", "steps", "slow", "logs", "leak"].map(|n| json!(n))
    );
}

/// The run policy reaches the MCP server as it reaches the agent loop and the session:
/// the default timeout, redaction of error texts and the result budget.
#[tokio::test]
async fn the_run_policy_applies_to_mcp_calls() {
    let policy = CallPolicy::new()
        .tool_timeout(Duration::from_millis(50))
        .redact_secrets(Redactor::new(["sk-live-0123456789abcdef"]).unwrap())
        .result_budget(ResultBudget::new(64 * 1024, 10));
    let mut wire = start_with(policy).await;
    let (_, response) = wire
        .request(1, "tools/call", json!({"name": "slow", "arguments": {}}))
        .await;
    assert_eq!(
        response["result"]["content"][0]["text"], "Tool slow timed out after 50ms",
        "{response}"
    );
    assert_eq!(response["result"]["isError"], true);
    let (_, response) = wire
        .request(2, "tools/call", json!({"name": "leak", "arguments": {}}))
        .await;
    let text = response["result"]["content"][0]["text"].as_str().unwrap();
    assert!(!text.contains("sk-live"), "{text}");
    assert!(text.starts_with("login failed with "), "{text}");
    let (_, response) = wire
        .request(3, "tools/call", json!({"name": "logs", "arguments": {}}))
        .await;
    let text = response["result"]["content"][0]["text"].as_str().unwrap();
    assert!(text.starts_with("line 1\n"), "{text}");
    assert!(text.contains("[Output truncated"), "{text}");
    assert!(text.lines().count() <= 11, "{text}");
}
