//! The server's calls are `execute_tool {tool name}` spans, the agent loop's span
//! (issue 12 §3): GenAI fields, a progress event per update inside the span,
//! `error.type` on failures, and with `trace_content` the arguments and result,
//! redacted. Over the stdio framing in process, recorded by a `Registry` layer.

#[path = "../../pi-tool/tests/tracing_support/mod.rs"]
mod tracing_support;

use std::time::Duration;

use pi_tool::CallPolicy;
use pi_tool::safety::Redactor;
use pi_tool::{AgentToolResult, OnUpdate, ToolError, Value, json, pi_tool};
use pi_tool_mcp::PackServer;
use tokio::io::{AsyncBufReadExt, AsyncWriteExt, BufReader, DuplexStream, Lines, WriteHalf};
use tracing_support::{Recorder, SpanRecord};

const SECRET: &str = "sk-mcp-0123456789abcdef";

#[pi_tool::params]
pub struct StepsParams {
    /// A note to repeat.
    pub note: String,
}

/// Reports three steps, then repeats the note.
#[pi_tool(name = "steps")]
async fn steps(
    params: StepsParams,
    on_update: OnUpdate<u32>,
) -> Result<AgentToolResult<u32>, ToolError> {
    for step in 1..=3 {
        on_update.send(AgentToolResult::text(format!("step {step}"), step));
    }
    Ok(AgentToolResult::text(format!("noted: {}", params.note), 3))
}

/// Always fails.
#[pi_tool(name = "broken")]
async fn broken(_params: pi_tool::NoParams) -> Result<String, ToolError> {
    Err(ToolError::new("the disk is full"))
}

struct Wire {
    lines: Lines<BufReader<tokio::io::ReadHalf<DuplexStream>>>,
    writer: WriteHalf<DuplexStream>,
}

impl Wire {
    async fn send(&mut self, message: Value) {
        let mut line = message.to_string().into_bytes();
        line.push(b'\n');
        self.writer.write_all(&line).await.unwrap();
    }

    async fn receive(&mut self) -> Value {
        let line = tokio::time::timeout(Duration::from_secs(20), self.lines.next_line())
            .await
            .expect("the server answers within 20 s")
            .unwrap()
            .expect("the server keeps the pipe open");
        serde_json::from_str(&line).unwrap()
    }

    async fn call(&mut self, id: u64, name: &str, arguments: Value) -> Value {
        self.send(json!({
            "jsonrpc": "2.0", "id": id, "method": "tools/call",
            "params": {"name": name, "arguments": arguments}
        }))
        .await;
        let answer = self.receive().await;
        assert_eq!(answer["id"], json!(id), "{answer}");
        answer
    }
}

async fn start(policy: CallPolicy) -> Wire {
    let server = PackServer::new(pi_tool::tool_pack![Steps, Broken]).with_policy(policy);
    let (client, server_end) = tokio::io::duplex(64 * 1024);
    let (read, write) = tokio::io::split(server_end);
    tokio::spawn(async move {
        let _ = server.serve_io(read, write).await;
    });
    let (read, writer) = tokio::io::split(client);
    let mut wire = Wire {
        lines: BufReader::new(read).lines(),
        writer,
    };
    wire.send(json!({
        "jsonrpc": "2.0", "id": 0, "method": "initialize",
        "params": {
            "protocolVersion": "2025-06-18",
            "capabilities": {},
            "clientInfo": {"name": "tracing-test", "version": "0"}
        }
    }))
    .await;
    let init = wire.receive().await;
    assert_eq!(init["id"], json!(0), "{init}");
    wire.send(json!({"jsonrpc": "2.0", "method": "notifications/initialized"}))
        .await;
    wire
}

fn tool_span(recorder: &Recorder, call_id: &str) -> SpanRecord {
    let spans: Vec<_> = recorder
        .named("execute_tool")
        .into_iter()
        .filter(|s| s.field("gen_ai.tool.call.id") == Some(call_id))
        .collect();
    assert_eq!(spans.len(), 1, "one span for {call_id}: {spans:#?}");
    spans.into_iter().next().unwrap()
}

#[tokio::test]
async fn each_call_is_an_execute_tool_span() {
    let recorder = Recorder::default();
    let _guard = recorder.install();
    let mut wire = start(CallPolicy::default()).await;

    let answer = wire.call(1, "steps", json!({"note": "hi"})).await;
    assert_eq!(answer["result"]["isError"], json!(false), "{answer}");
    wire.call(2, "broken", json!({})).await;
    wire.call(3, "missing", json!({})).await;
    wire.call(4, "steps", json!({"note": [5]})).await;

    let steps = tool_span(&recorder, "mcp-1");
    assert_eq!(steps.field("otel.name"), Some("execute_tool steps"));
    assert_eq!(steps.field("gen_ai.operation.name"), Some("execute_tool"));
    assert_eq!(steps.field("gen_ai.tool.name"), Some("steps"));
    assert_eq!(steps.field("error.type"), None);
    assert_eq!(steps.field("gen_ai.tool.call.arguments"), None);
    assert_eq!(steps.field("gen_ai.tool.call.result"), None);
    assert!(steps.closed.is_some());
    // The client sent no progress token; the trace still sees every update.
    let progress = recorder
        .events()
        .into_iter()
        .filter(|e| e.parent == Some(steps.index))
        .filter(|e| e.fields.get("message").map(String::as_str) == Some("tool progress"))
        .count();
    assert_eq!(progress, 3);

    for (id, tool, error_type) in [
        ("mcp-2", "broken", "tool_error"),
        ("mcp-3", "missing", "tool_not_found"),
        ("mcp-4", "steps", "invalid_arguments"),
    ] {
        let span = tool_span(&recorder, id);
        assert_eq!(span.field("gen_ai.tool.name"), Some(tool));
        assert_eq!(span.field("error.type"), Some(error_type), "{span:#?}");
        assert_eq!(span.field("otel.status_code"), Some("ERROR"));
    }
}

#[tokio::test]
async fn content_is_traced_on_request_and_redacted() {
    let recorder = Recorder::default();
    let _guard = recorder.install();
    let policy = CallPolicy::new()
        .trace_content(true)
        .redact_secrets(Redactor::new([SECRET]).unwrap());
    let mut wire = start(policy).await;
    let answer = wire
        .call(7, "steps", json!({"note": format!("key {SECRET}")}))
        .await;
    // The client gets what the tool returned: results are not redacted, traces are.
    assert!(answer.to_string().contains(SECRET), "{answer}");

    let span = tool_span(&recorder, "mcp-7");
    assert_eq!(
        span.field("gen_ai.tool.call.arguments"),
        Some(r#"{"note":"key [REDACTED]"}"#)
    );
    let result = span.field("gen_ai.tool.call.result").unwrap();
    assert!(result.contains("noted: key [REDACTED]"), "{result}");
    assert_eq!(span.target, "pi_tool_core::call::span");
    let updates: Vec<_> = recorder
        .events()
        .into_iter()
        .filter(|e| e.parent == Some(span.index))
        .filter_map(|e| e.fields.get("gen_ai.tool.call.update").cloned())
        .collect();
    assert_eq!(updates.len(), 3, "{updates:?}");
    // pi-tool's spans and events, that is: rmcp's own DEBUG and TRACE events carry the
    // whole request and response (README, "Tracing").
    let ours = |target: &str| target.starts_with("pi_tool");
    let leaks: Vec<_> = recorder
        .spans()
        .into_iter()
        .filter(|s| ours(s.target))
        .map(|s| format!("{s:?}"))
        .chain(
            recorder
                .events()
                .into_iter()
                .filter(|e| ours(e.target))
                .map(|e| format!("{e:?}")),
        )
        .filter(|text| text.contains(SECRET))
        .collect();
    assert!(leaks.is_empty(), "{leaks:#?}");
}
