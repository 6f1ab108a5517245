//! Malformed input over streamable HTTP (`PackServer::serve_http`), with hand-written
//! HTTP/1.1 on a real socket: the same JSON-RPC answers as on stdio (issue 11), where
//! rmcp answered HTTP 415 with serde's text, or -32601.

use std::sync::Arc;
use std::time::Duration;

use pi_tool::ToolInvocation;
use pi_tool::pack::{ToolOwner, ToolPack};
use pi_tool::schema::ToolSchema;
use pi_tool::{AgentTool, JsonToolResult, ToolError, ToolSpec, Value, async_trait, json};
use pi_tool_mcp::PackServer;
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::{TcpListener, TcpStream};

struct Ok(ToolSpec);

#[async_trait]
impl AgentTool for Ok {
    fn spec(&self) -> &ToolSpec {
        &self.0
    }

    async fn execute(&self, call: ToolInvocation<'_>) -> Result<JsonToolResult, ToolError> {
        let _id = call.id;
        let _params = call.params;
        let _signal = call.signal;
        let _on_update = call.on_update;
        Result::Ok(JsonToolResult::text("ok", None))
    }
}

async fn start() -> std::net::SocketAddr {
    let mut pack = ToolPack::new();
    let schema = ToolSchema::from_json(json!({"type": "object", "properties": {}}));
    let spec = ToolSpec::new("ok", "Says ok.", Arc::new(schema));
    pack.push(
        ToolOwner::new("malformed-http-test"),
        Arc::new(Ok(spec)) as Arc<dyn AgentTool>,
    )
    .unwrap();
    let listener = TcpListener::bind("127.0.0.1:0").await.unwrap();
    let address = listener.local_addr().unwrap();
    tokio::spawn(PackServer::new(pack).serve_http(listener));
    address
}

/// POSTs `body` and returns the status and the body of the answer.
async fn post(address: std::net::SocketAddr, body: &[u8]) -> (u16, String) {
    let mut stream = TcpStream::connect(address).await.unwrap();
    let head = format!(
        "POST /mcp HTTP/1.1\r\nHost: 127.0.0.1:{}\r\nContent-Type: application/json\r\n\
         Accept: application/json, text/event-stream\r\nContent-Length: {}\r\n\
         Connection: close\r\n\r\n",
        address.port(),
        body.len()
    );
    let (mut read, mut write) = stream.split();
    // A body over the limit is refused before it is all sent: the server stops reading
    // and closes, so the rest of the write may fail; the answer is what counts.
    let send = async {
        write.write_all(head.as_bytes()).await.unwrap();
        let _ = write.write_all(body).await;
    };
    let mut answer = Vec::new();
    let receive = read.read_to_end(&mut answer);
    let ((), received) = tokio::time::timeout(Duration::from_secs(20), async {
        tokio::join!(send, receive)
    })
    .await
    .expect("the server answers within 20 s");
    received.unwrap();
    let answer = String::from_utf8(answer).unwrap();
    let (head, body) = answer.split_once("\r\n\r\n").unwrap();
    let status = head.split(' ').nth(1).unwrap().parse().unwrap();
    (status, body.to_owned())
}

fn assert_error(answer: &(u16, String), status: u16, id: Value, code: i64, names: &str) {
    assert_eq!(answer.0, status, "{answer:?}");
    let body: Value = serde_json::from_str(&answer.1).unwrap();
    assert_eq!(body["jsonrpc"], json!("2.0"), "{body}");
    assert_eq!(body["id"], id, "{body}");
    assert_eq!(body["error"]["code"], json!(code), "{body}");
    let message = body["error"]["message"].as_str().unwrap();
    assert!(message.contains(names), "{message:?} should name {names:?}");
}

#[tokio::test]
async fn malformed_posts_get_json_rpc_answers_with_their_id() {
    let address = start().await;
    let answer = post(
        address,
        br#"{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"ok","arguments":{"n":1e400}}}"#,
    )
    .await;
    assert_error(&answer, 200, json!(1), -32700, "number out of range");
    let answer = post(address, br#"{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"ok","arguments":{"s":"\ud800"}}}"#).await;
    assert_error(&answer, 200, json!(2), -32700, "escape");
    let deep = format!("{}{}", "[".repeat(100_000), "]".repeat(100_000));
    let answer = post(address, deep.as_bytes()).await;
    assert_error(&answer, 400, Value::Null, -32700, "recursion limit");
    let answer = post(address, b"{not json").await;
    assert_error(&answer, 400, Value::Null, -32700, "Parse error");

    let big = format!(
        r#"{{"jsonrpc":"2.0","id":3,"method":"tools/call","params":{{"name":"ok","arguments":{{"b":"{}"}}}}}}"#,
        "x".repeat(20 * 1024 * 1024)
    );
    // Refused from its Content-Length, before a byte of it is read: no id to answer with.
    let answer = post(address, big.as_bytes()).await;
    assert_error(
        &answer,
        413,
        Value::Null,
        -32700,
        "over the limit of 16777216 bytes",
    );

    let answer = post(
        address,
        br#"{"jsonrpc":"2.0","id":4,"method":"tools/call","params":{"name":"ok","arguments":[1]}}"#,
    )
    .await;
    assert_error(
        &answer,
        200,
        json!(4),
        -32602,
        "\"arguments\" must be an object, got an array",
    );
    let answer = post(
        address,
        br#"{"jsonrpc":"2.0","id":5,"method":"tools/call","params":{"name":5}}"#,
    )
    .await;
    assert_error(
        &answer,
        200,
        json!(5),
        -32602,
        "\"name\" must be a string, got a number",
    );
    let answer = post(
        address,
        br#"{"jsonrpc":"2.0","id":"six","method":"tools/call","params":"ok"}"#,
    )
    .await;
    assert_error(
        &answer,
        200,
        json!("six"),
        -32602,
        "\"params\" must be an object, got a string",
    );

    // A broken notification is accepted and not answered.
    let answer = post(
        address,
        br#"{"jsonrpc":"2.0","method":"notifications/cancelled","params":[]}"#,
    )
    .await;
    assert_eq!(answer, (202, String::new()));

    // A well-formed message still reaches rmcp.
    let answer = post(address, br#"{"jsonrpc":"2.0","id":0,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"t","version":"0"}}}"#).await;
    assert_eq!(answer.0, 200, "{answer:?}");
    assert!(answer.1.contains(r#""serverInfo""#), "{answer:?}");
}
