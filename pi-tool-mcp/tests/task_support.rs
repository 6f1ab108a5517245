//! A tool's declared task support (`#[pi_tool(task_support = "...")]`) is what the server
//! applies unless `with_task_support` overrides it: the tasks extension is declared, a
//! `required` tool refuses a client without the extension (-32021), an `optional` one
//! answers it as a plain call, and `Forbidden` turns a declaration off.

use std::time::Duration;

use pi_tool::TaskSupport;
use pi_tool::pack::ToolPack;
use pi_tool::{ToolError, pi_tool, tool_pack};
use pi_tool_mcp::PackServer;
use serde_json::{Value, json};
use tokio::io::{AsyncBufReadExt, AsyncWriteExt, BufReader};

/// Runs as a task only.
#[pi_tool(task_support = "required")]
async fn long_job() -> Result<String, ToolError> {
    Ok("done".to_owned())
}

/// May run as a task.
#[pi_tool(task_support = "optional")]
async fn maybe_long() -> Result<String, ToolError> {
    Ok("maybe".to_owned())
}

/// Never runs as a task (declared, as a reader's note).
#[pi_tool(task_support = "forbidden")]
async fn quick() -> Result<String, ToolError> {
    Ok("quick".to_owned())
}

fn pack() -> ToolPack {
    tool_pack![LongJob, MaybeLong, Quick]
}

/// Initialises `server` at 2025-11-25 without the tasks extension, then calls each tool;
/// returns the initialize result and each call's response.
async fn exchange(server: PackServer, tools: &[&str]) -> (Value, Vec<Value>) {
    let (client, server_side) = tokio::io::duplex(64 * 1024);
    tokio::spawn(async move {
        let (read, write) = tokio::io::split(server_side);
        let _ = server.serve_io(read, write).await;
    });
    let (read, mut write) = tokio::io::split(client);
    let mut lines = BufReader::new(read).lines();
    let mut messages = vec![
        json!({"jsonrpc": "2.0", "id": 0, "method": "initialize", "params": {
            "protocolVersion": "2025-11-25", "capabilities": {},
            "clientInfo": {"name": "task-support-test", "version": "0"}}}),
        json!({"jsonrpc": "2.0", "method": "notifications/initialized"}),
    ];
    for (i, tool) in tools.iter().enumerate() {
        messages.push(
            json!({"jsonrpc": "2.0", "id": i + 1, "method": "tools/call",
                             "params": {"name": tool, "arguments": {}}}),
        );
    }
    let mut answers = vec![Value::Null; tools.len() + 1];
    for message in messages {
        let mut line = serde_json::to_vec(&message).unwrap();
        line.push(b'\n');
        write.write_all(&line).await.unwrap();
        let Some(id) = message.get("id").and_then(Value::as_u64) else {
            continue;
        };
        loop {
            let line = tokio::time::timeout(Duration::from_secs(10), lines.next_line())
                .await
                .expect("an answer within 10 s")
                .unwrap()
                .expect("the pipe stays open");
            let answer: Value = serde_json::from_str(&line).unwrap();
            if answer.get("id").and_then(Value::as_u64) == Some(id) {
                answers[id as usize] = answer;
                break;
            }
        }
    }
    let init = answers.remove(0);
    (init, answers)
}

fn declares_tasks(init: &Value) -> bool {
    init["result"]["capabilities"]["extensions"]
        .get("io.modelcontextprotocol/tasks")
        .is_some()
}

#[tokio::test]
async fn declared_task_support_is_applied_by_default() {
    let (init, answers) = exchange(
        PackServer::new(pack()),
        &["long_job", "maybe_long", "quick"],
    )
    .await;
    assert!(declares_tasks(&init), "{init}");
    assert_eq!(answers[0]["error"]["code"], json!(-32021), "{}", answers[0]);
    assert_eq!(
        answers[1]["result"]["content"],
        json!([{"type": "text", "text": "maybe"}]),
        "{}",
        answers[1]
    );
    assert_eq!(
        answers[2]["result"]["content"],
        json!([{"type": "text", "text": "quick"}]),
        "{}",
        answers[2]
    );
}

#[tokio::test]
async fn with_task_support_overrides_the_declaration() {
    let server = PackServer::new(pack())
        .with_task_support("long_job", TaskSupport::Forbidden)
        .unwrap()
        .with_task_support("maybe_long", TaskSupport::Forbidden)
        .unwrap();
    let (init, answers) = exchange(server, &["long_job"]).await;
    assert!(!declares_tasks(&init), "{init}");
    assert_eq!(
        answers[0]["result"]["content"],
        json!([{"type": "text", "text": "done"}]),
        "{}",
        answers[0]
    );

    let server = PackServer::new(pack())
        .with_task_support("maybe_long", TaskSupport::Required)
        .unwrap();
    let (_, answers) = exchange(server, &["maybe_long"]).await;
    assert_eq!(answers[0]["error"]["code"], json!(-32021), "{}", answers[0]);
}
