//! Nested calls of served tools (issue 30): a served tool with a reach calls the other
//! tools of its pack through its context, through the server's call policy, in a span
//! under its own; its reach is listed in `_meta`; the server's limits refuse past them.

#[path = "../../pi-tool/tests/tracing_support/mod.rs"]
mod tracing_support;

use std::time::Duration;

use pi_tool::context::ExtensionContext;
use pi_tool::safety::Redactor;
use pi_tool::{CallPolicy, IntoAgentTool, ToolError, Value, json, pi_tool};
use pi_tool_mcp::{PackServer, REACHES_META_KEY, ServeError};
use tokio::io::{AsyncBufReadExt, AsyncWriteExt, BufReader, DuplexStream, Lines, WriteHalf};
use tracing_support::Recorder;

#[pi_tool::params]
pub struct NoteParams {
    /// A note.
    pub note: String,
}

/// Repeats the note, or fails when it holds the secret.
#[pi_tool(name = "echo_note")]
async fn echo_note(params: NoteParams) -> Result<String, ToolError> {
    if params.note.contains("sk-") {
        return Err(ToolError::new(format!("refusing {}", params.note)));
    }
    Ok(format!("noted: {}", params.note))
}

/// Passes the note on to `echo_note`, and reports what came back.
#[pi_tool(name = "relay_note", reaches = ["echo_note"])]
async fn relay_note(params: NoteParams, ctx: ExtensionContext) -> Result<String, ToolError> {
    let first = ctx
        .call_tool("echo_note", json!({ "note": params.note }))
        .await;
    let second = ctx
        .call_tool("echo_note", json!({ "note": { "not": "a string" } }))
        .await;
    let third = ctx.call_tool("relay_note", json!({ "note": "x" })).await;
    Ok([first, second, third]
        .into_iter()
        .map(|r| match r {
            Ok(result) => format!("ok: {}", result.text_content()),
            Err(error) => format!("err: {}", error.message()),
        })
        .collect::<Vec<_>>()
        .join("\n@@\n"))
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

async fn start(server: PackServer) -> Wire {
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
            "clientInfo": {"name": "nested-test", "version": "0"}
        }
    }))
    .await;
    let init = wire.receive().await;
    assert_eq!(init["id"], json!(0), "{init}");
    wire.send(json!({"jsonrpc": "2.0", "method": "notifications/initialized"}))
        .await;
    wire
}

fn text(answer: &Value) -> String {
    answer["result"]["content"][0]["text"]
        .as_str()
        .unwrap_or_default()
        .to_owned()
}

#[tokio::test(flavor = "current_thread")]
async fn a_served_tool_calls_its_pack_through_the_server_s_policy() {
    let recorder = Recorder::default();
    let _guard = recorder.install();
    let secret = "sk-live-0123456789abcdef";
    let server = PackServer::new(pi_tool::tool_pack![EchoNote, RelayNote])
        .with_policy(CallPolicy::new().redact_secrets(Redactor::new([secret]).unwrap()));
    let mut wire = start(server).await;
    let answer = wire.call(1, "relay_note", json!({ "note": secret })).await;
    let lines = text(&answer);
    let lines: Vec<&str> = lines.split("\n@@\n").collect();
    // Redacted as a direct call's error is; validated with Pi's text; a cycle refused.
    assert_eq!(lines[0], "err: refusing [REDACTED]", "{answer}");
    assert!(
        lines[1].starts_with("err: Validation failed for tool \"echo_note\""),
        "{answer}"
    );
    assert_eq!(
        lines[2],
        "err: Nested call to relay_note refused: relay_note reaches only `echo_note`"
    );
    let spans = recorder.named("execute_tool");
    let outer = spans
        .iter()
        .find(|s| s.field("gen_ai.tool.name") == Some("relay_note"))
        .expect("the outer span");
    let nested: Vec<_> = spans
        .iter()
        .filter(|s| s.field("gen_ai.tool.name") == Some("echo_note"))
        .collect();
    assert_eq!(nested.len(), 2);
    assert!(nested.iter().all(|s| s.parent == Some(outer.index)));
    assert_eq!(nested[0].field("gen_ai.tool.call.id"), Some("mcp-1/1"));
}

#[tokio::test(flavor = "current_thread")]
async fn the_reach_is_listed_and_the_server_s_limits_refuse_past_them() {
    // Every test of this binary records spans: a test without a subscriber running beside
    // one with it can leave the shared callsites switched off for it.
    let recorder = Recorder::default();
    let _guard = recorder.install();
    let server = PackServer::new(pi_tool::tool_pack![EchoNote, RelayNote]).with_max_nested_calls(1);
    let mut wire = start(server).await;
    wire.send(json!({"jsonrpc": "2.0", "id": 1, "method": "tools/list"}))
        .await;
    let list = wire.receive().await;
    let relay = list["result"]["tools"]
        .as_array()
        .unwrap()
        .iter()
        .find(|t| t["name"] == "relay_note")
        .unwrap()
        .clone();
    assert_eq!(relay["_meta"][REACHES_META_KEY], json!(["echo_note"]));
    let answer = wire.call(2, "relay_note", json!({ "note": "hi" })).await;
    let lines = text(&answer);
    let lines: Vec<&str> = lines.split("\n@@\n").collect();
    assert_eq!(lines[0], "ok: noted: hi");
    assert!(lines[1].contains("at most 1 nested tool calls"), "{answer}");
}

/// A tool of its own, for a pack without `echo_note`.
#[pi_tool(name = "other")]
async fn other() -> Result<String, ToolError> {
    Ok("other".to_owned())
}

const MISSING: &str = "the tool `relay_note` reaches `echo_note`, which this host does not have: add `echo_note` to the host's tools, or remove it from `relay_note`'s `reaches`";

#[tokio::test(flavor = "current_thread")]
async fn a_reach_to_a_tool_the_server_does_not_serve_refuses_to_serve() {
    let recorder = Recorder::default();
    let _guard = recorder.install();
    let server = PackServer::new(pi_tool::tool_pack![RelayNote, Other]);
    let refused = |result: Result<(), ServeError>| match result {
        Err(error @ ServeError::MissingReach(_)) => assert_eq!(error.to_string(), MISSING),
        other => panic!("served a reach to a missing tool: {other:?}"),
    };
    refused(server.check_reaches());
    // Before anything is read: the client's end stays open and silent, and serving
    // still returns at once.
    let (_client, server_end) = tokio::io::duplex(1024);
    let (read, write) = tokio::io::split(server_end);
    let served = tokio::time::timeout(Duration::from_secs(5), server.clone().serve_io(read, write))
        .await
        .expect("serve_io refuses without waiting for the client");
    refused(served);
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let served = tokio::time::timeout(Duration::from_secs(5), server.serve_http(listener))
        .await
        .expect("serve_http refuses without accepting");
    refused(served);
}

#[tokio::test(flavor = "current_thread")]
async fn served_tools_refuse_a_reach_to_a_tool_that_is_not_served() {
    let recorder = Recorder::default();
    let _guard = recorder.install();
    let server = PackServer::new(pi_tool::tool_pack![Other]);
    let served = server.served_tools();
    match served.add(RelayNote.into_agent_tool()) {
        Err(error @ ServeError::MissingReach(_)) => assert_eq!(error.to_string(), MISSING),
        other => panic!("added a reach to a missing tool: {other:?}"),
    }
    assert_eq!(served.names(), ["other"], "a refused add changes nothing");
    served.add(EchoNote.into_agent_tool()).unwrap();
    served.add(RelayNote.into_agent_tool()).unwrap();
    server.check_reaches().unwrap();
    let mut wire = start(server).await;
    let answer = wire.call(1, "relay_note", json!({ "note": "hi" })).await;
    assert!(text(&answer).starts_with("ok: noted: hi"), "{answer}");
}
