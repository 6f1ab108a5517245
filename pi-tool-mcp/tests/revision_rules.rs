//! What a session's revision changes on the wire, checked where the server got it wrong:
//! a batch in a 2025-03-26 session over stdio is served; a method of a capability the
//! server did not declare is -32601 (no empty list, no 2026-07-28 cache hints at
//! 2025-11-25); the standalone GET stream of a 2025-11-25 session starts with a priming
//! event, as the POST streams do.

use std::net::SocketAddr;
use std::sync::Arc;
use std::time::Duration;

use pi_tool::ToolInvocation;
use pi_tool::pack::{ToolOwner, ToolPack};
use pi_tool::schema::ToolSchema;
use pi_tool::{AgentTool, JsonToolResult, ToolError, ToolSpec, Value, async_trait, json};
use pi_tool_mcp::PackServer;
use tokio::io::{
    AsyncBufReadExt, AsyncReadExt, AsyncWriteExt, BufReader, DuplexStream, Lines, ReadHalf,
    WriteHalf,
};
use tokio::net::{TcpListener, TcpStream};

/// Echoes its `text` argument.
struct Echo(ToolSpec);

#[async_trait]
impl AgentTool for Echo {
    fn spec(&self) -> &ToolSpec {
        &self.0
    }

    async fn execute(&self, call: ToolInvocation<'_>) -> Result<JsonToolResult, ToolError> {
        let text = call.params["text"].as_str().unwrap_or_default().to_owned();
        Ok(JsonToolResult::text(text, None))
    }
}

fn server() -> PackServer {
    let mut pack = ToolPack::new();
    let schema = ToolSchema::from_json(json!({
        "type": "object", "properties": {"text": {"type": "string"}}
    }));
    let spec = ToolSpec::new("echo", "Echoes its text.", Arc::new(schema));
    pack.push(
        ToolOwner::new("revision-rules"),
        Arc::new(Echo(spec)) as Arc<dyn AgentTool>,
    )
    .unwrap();
    PackServer::new(pack)
}

struct Wire {
    lines: Lines<BufReader<ReadHalf<DuplexStream>>>,
    writer: WriteHalf<DuplexStream>,
}

impl Wire {
    async fn open(revision: &str) -> Wire {
        let (client, server_end) = tokio::io::duplex(64 * 1024);
        let (read, write) = tokio::io::split(server_end);
        tokio::spawn(async move {
            let _ = server().serve_io(read, write).await;
        });
        let (read, writer) = tokio::io::split(client);
        let mut wire = Wire {
            lines: BufReader::new(read).lines(),
            writer,
        };
        wire.send(json!({
            "jsonrpc": "2.0", "id": 0, "method": "initialize",
            "params": {"protocolVersion": revision, "capabilities": {},
                       "clientInfo": {"name": "revision-rules", "version": "0"}}
        }))
        .await;
        let init = wire.receive().await;
        assert_eq!(init["result"]["protocolVersion"], revision, "{init}");
        wire.send(json!({"jsonrpc": "2.0", "method": "notifications/initialized"}))
            .await;
        wire
    }

    async fn send(&mut self, message: Value) {
        self.writer
            .write_all(format!("{message}\n").as_bytes())
            .await
            .unwrap();
    }

    async fn receive(&mut self) -> Value {
        let line = tokio::time::timeout(Duration::from_secs(20), self.lines.next_line())
            .await
            .expect("the server answers within 20 s")
            .unwrap()
            .expect("the server keeps the pipe open");
        serde_json::from_str(&line).unwrap()
    }
}

fn call(id: i64, text: &str) -> Value {
    json!({"jsonrpc": "2.0", "id": id, "method": "tools/call",
           "params": {"name": "echo", "arguments": {"text": text}}})
}

#[tokio::test]
async fn a_batch_in_a_2025_03_26_session_is_answered_with_one_array_in_order() {
    let mut wire = Wire::open("2025-03-26").await;
    wire.send(json!([
        call(1, "one"),
        {"jsonrpc": "2.0", "method": "notifications/progress",
         "params": {"progressToken": "x", "progress": 1}},
        {"jsonrpc": "2.0", "id": 2, "method": "ping"},
        {"jsonrpc": "2.0", "id": 3, "method": "tools/call", "params": "not an object"},
        call(4, "four"),
    ]))
    .await;
    let answer = wire.receive().await;
    let answers = answer.as_array().expect("one JSON array");
    let ids: Vec<&Value> = answers.iter().map(|a| &a["id"]).collect();
    assert_eq!(
        ids,
        [&json!(1), &json!(2), &json!(3), &json!(4)],
        "{answer}"
    );
    assert_eq!(answers[0]["result"]["content"][0]["text"], "one");
    assert_eq!(answers[1]["result"], json!({}));
    assert_eq!(answers[2]["error"]["code"], -32602);
    assert_eq!(answers[3]["result"]["content"][0]["text"], "four");

    // Notifications only: nothing to answer; an empty batch is one error.
    wire.send(json!([{"jsonrpc": "2.0", "method": "notifications/initialized"}]))
        .await;
    wire.send(json!([])).await;
    let empty = wire.receive().await;
    assert_eq!(empty["id"], Value::Null, "{empty}");
    assert_eq!(empty["error"]["code"], -32600, "{empty}");
    wire.send(call(5, "after")).await;
    assert_eq!(wire.receive().await["id"], 5);
}

#[tokio::test]
async fn a_batch_in_a_later_session_is_still_refused() {
    let mut wire = Wire::open("2025-06-18").await;
    wire.send(json!([call(1, "one")])).await;
    let answer = wire.receive().await;
    assert_eq!(answer["error"]["code"], -32600, "{answer}");
}

#[tokio::test]
async fn methods_of_capabilities_not_declared_are_method_not_found() {
    let mut wire = Wire::open("2025-11-25").await;
    for (id, method, params) in [
        (1, "resources/list", json!({})),
        (2, "resources/templates/list", json!({})),
        (3, "resources/read", json!({"uri": "file:///x"})),
        (4, "prompts/list", json!({})),
        (5, "prompts/get", json!({"name": "x"})),
        (6, "resources/subscribe", json!({"uri": "file:///x"})),
    ] {
        wire.send(json!({"jsonrpc": "2.0", "id": id, "method": method, "params": params}))
            .await;
        let answer = wire.receive().await;
        assert_eq!(answer["id"], id, "{answer}");
        assert_eq!(answer["error"]["code"], -32601, "{method}: {answer}");
        assert!(answer.get("result").is_none(), "{method}: {answer}");
    }
    wire.send(json!({"jsonrpc": "2.0", "id": 7, "method": "tools/list"}))
        .await;
    let tools = wire.receive().await;
    assert_eq!(tools["result"]["tools"][0]["name"], "echo", "{tools}");
    for hint in ["ttlMs", "cacheScope"] {
        assert!(
            tools["result"].get(hint).is_none(),
            "a 2026-07-28 hint at 2025-11-25: {tools}"
        );
    }
}

async fn http_request(address: SocketAddr, head: &str, body: &str, wait: Duration) -> String {
    let mut stream = TcpStream::connect(address).await.unwrap();
    let request = format!(
        "{head}Host: 127.0.0.1:{}\r\nAccept: application/json, text/event-stream\r\n\
         Content-Type: application/json\r\nContent-Length: {}\r\nConnection: close\r\n\r\n{body}",
        address.port(),
        body.len()
    );
    stream.write_all(request.as_bytes()).await.unwrap();
    let mut answer = Vec::new();
    let _ = tokio::time::timeout(wait, stream.read_to_end(&mut answer)).await;
    String::from_utf8_lossy(&answer).into_owned()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_get_stream_of_a_2025_11_25_session_is_primed() {
    let listener = TcpListener::bind("127.0.0.1:0").await.unwrap();
    let address = listener.local_addr().unwrap();
    tokio::spawn(server().serve_http(listener));
    let init = json!({"jsonrpc": "2.0", "id": 0, "method": "initialize", "params": {
        "protocolVersion": "2025-11-25", "capabilities": {},
        "clientInfo": {"name": "t", "version": "0"}}});
    let answer = http_request(
        address,
        "POST /mcp HTTP/1.1\r\n",
        &init.to_string(),
        Duration::from_secs(5),
    )
    .await;
    let session = answer
        .lines()
        .find_map(|line| {
            let (name, value) = line.split_once(':')?;
            name.eq_ignore_ascii_case("mcp-session-id")
                .then(|| value.trim().to_owned())
        })
        .expect("a session id");
    let headers = format!("Mcp-Session-Id: {session}\r\nMCP-Protocol-Version: 2025-11-25\r\n");
    http_request(
        address,
        &format!("POST /mcp HTTP/1.1\r\n{headers}"),
        r#"{"jsonrpc":"2.0","method":"notifications/initialized"}"#,
        Duration::from_secs(5),
    )
    .await;
    let stream = http_request(
        address,
        &format!("GET /mcp HTTP/1.1\r\n{headers}"),
        "",
        Duration::from_millis(1000),
    )
    .await;
    assert!(stream.starts_with("HTTP/1.1 200"), "{stream}");
    assert!(
        stream.contains("data: \nid: 00\nretry: 3000\n\n"),
        "no priming event on the GET stream: {stream:?}"
    );
}
