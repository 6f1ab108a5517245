//! Malformed input over the stdio framing (`PackServer::serve_io`, what `serve_stdio`
//! runs on stdin and stdout), at the wire: every request gets exactly one answer, with
//! its own id when the id is readable (issue 11).

use std::sync::Arc;
use std::time::Duration;

use pi_tool::ToolInvocation;
use pi_tool::pack::{ToolOwner, ToolPack};
use pi_tool::schema::ToolSchema;
use pi_tool::{AgentTool, JsonToolResult, ToolError, ToolSpec, Value, async_trait, json};
use pi_tool_mcp::PackServer;
use tokio::io::{AsyncBufReadExt, AsyncWriteExt, BufReader, DuplexStream, Lines, WriteHalf};

/// Answers with the number of arguments it got.
struct Count(ToolSpec);

#[async_trait]
impl AgentTool for Count {
    fn spec(&self) -> &ToolSpec {
        &self.0
    }

    async fn execute(&self, call: ToolInvocation<'_>) -> Result<JsonToolResult, ToolError> {
        let _id = call.id;
        let params = call.params;
        let _signal = call.signal;
        let _on_update = call.on_update;
        let count = params.as_object().map_or(0, |object| object.len());
        Ok(JsonToolResult::text(format!("{count} arguments"), None))
    }
}

struct Wire {
    lines: Lines<BufReader<tokio::io::ReadHalf<DuplexStream>>>,
    writer: WriteHalf<DuplexStream>,
}

impl Wire {
    async fn send_raw(&mut self, line: &[u8]) {
        self.writer.write_all(line).await.unwrap();
        self.writer.write_all(b"\n").await.unwrap();
    }

    async fn send(&mut self, message: Value) {
        self.send_raw(message.to_string().as_bytes()).await;
    }

    async fn receive(&mut self) -> Value {
        let line = tokio::time::timeout(Duration::from_secs(20), self.lines.next_line())
            .await
            .expect("the server answers within 20 s")
            .unwrap()
            .expect("the server keeps the pipe open");
        serde_json::from_str(&line).unwrap()
    }

    /// Sends a raw line and returns the one answer it gets, checking that nothing else
    /// comes before a `ping` sent after it is answered.
    async fn answer_to(&mut self, line: &[u8]) -> Value {
        self.send_raw(line).await;
        let answer = self.receive().await;
        self.assert_alive().await;
        answer
    }

    /// The server still answers, and had nothing else to say before.
    async fn assert_alive(&mut self) {
        self.send(json!({"jsonrpc": "2.0", "id": "alive", "method": "ping"}))
            .await;
        let pong = self.receive().await;
        assert_eq!(pong, json!({"jsonrpc": "2.0", "id": "alive", "result": {}}));
    }
}

async fn start_with(server: impl FnOnce(PackServer) -> PackServer) -> Wire {
    let mut pack = ToolPack::new();
    let schema = ToolSchema::from_json(json!({"type": "object", "properties": {}}));
    let spec = ToolSpec::new("count", "Counts its arguments.", Arc::new(schema));
    pack.push(
        ToolOwner::new("malformed-test"),
        Arc::new(Count(spec)) as Arc<dyn AgentTool>,
    )
    .unwrap();
    let (client, server_end) = tokio::io::duplex(64 * 1024);
    let (read, write) = tokio::io::split(server_end);
    let server = server(PackServer::new(pack));
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
            "clientInfo": {"name": "malformed-test", "version": "0"}
        }
    }))
    .await;
    let init = wire.receive().await;
    assert_eq!(init["id"], json!(0), "{init}");
    wire.send(json!({"jsonrpc": "2.0", "method": "notifications/initialized"}))
        .await;
    wire
}

async fn start() -> Wire {
    start_with(|server| server).await
}

fn assert_error(answer: &Value, id: Value, code: i64, names: &str) {
    assert_eq!(answer["jsonrpc"], json!("2.0"), "{answer}");
    assert_eq!(answer["id"], id, "{answer}");
    assert_eq!(answer["error"]["code"], json!(code), "{answer}");
    let message = answer["error"]["message"].as_str().unwrap();
    assert!(message.contains(names), "{message:?} should name {names:?}");
    for leak in ["::", "struct ", "enum ", "/src/", ".rs"] {
        assert!(!message.contains(leak), "{message:?} leaks {leak:?}");
    }
}

fn call(id: u64, arguments: &str) -> Vec<u8> {
    format!(
        r#"{{"jsonrpc":"2.0","id":{id},"method":"tools/call","params":{{"name":"count","arguments":{arguments}}}}}"#
    )
    .into_bytes()
}

/// Lines serde_json rejects were dropped by rmcp: now each gets -32700, with the id
/// when the line's top level shows one.
#[tokio::test]
async fn lines_that_do_not_parse_get_a_parse_error_with_their_id() {
    let mut wire = start().await;
    let answer = wire.answer_to(&call(1, r#"{"n":1e400}"#)).await;
    assert_error(&answer, json!(1), -32700, "number out of range");
    let answer = wire.answer_to(&call(2, r#"{"s":"\ud800"}"#)).await;
    assert_error(&answer, json!(2), -32700, "hex escape");
    let answer = wire
        .answer_to(&call(22, r#"{"s":"\udc00 and \ud800x"}"#))
        .await;
    assert_error(&answer, json!(22), -32700, "escape");
    let deep = format!("{}1{}", "[".repeat(129), "]".repeat(129));
    let answer = wire
        .answer_to(&call(3, &format!(r#"{{"d":{deep}}}"#)))
        .await;
    assert_error(&answer, json!(3), -32700, "recursion limit");
    // The id after the bad part is found too, by a scan that skips values.
    let answer = wire
        .answer_to(br#"{"jsonrpc":"2.0","method":"tools/call","params":{"name":"count","arguments":{"n":-1e999}},"id":"late"}"#)
        .await;
    assert_error(&answer, json!("late"), -32700, "number out of range");
    // Invalid UTF-8.
    let mut line = call(4, r#"{"s":"?"}"#);
    let at = line.iter().position(|b| *b == b'?').unwrap();
    line[at] = 0xff;
    let answer = wire.answer_to(&line).await;
    assert_error(&answer, json!(4), -32700, "Parse error");
    // No readable id: null.
    let answer = wire.answer_to(b"{not json").await;
    assert_error(&answer, Value::Null, -32700, "Parse error");
    let answer = wire
        .answer_to(br#"{"jsonrpc":"2.0","id":1.5,"x":1e400}"#)
        .await;
    assert_error(&answer, Value::Null, -32700, "number out of range");
    // 100 000 levels: answered, and neither serde_json nor the id scan overflows.
    let deep = format!("{}{}", "[".repeat(100_000), "]".repeat(100_000));
    let answer = wire.answer_to(deep.as_bytes()).await;
    assert_error(&answer, Value::Null, -32700, "recursion limit");
    let deep = format!(r#"{{"a":{},"id":5}}"#, "{\"a\":".repeat(100_000));
    let answer = wire.answer_to(deep.as_bytes()).await;
    assert_error(&answer, Value::Null, -32700, "Parse error");
    let deep = format!(
        r#"{{"a":{}{},"id":6,"x":1e400}}"#,
        "[".repeat(100_000),
        "]".repeat(100_000)
    );
    let answer = wire.answer_to(deep.as_bytes()).await;
    assert_error(&answer, json!(6), -32700, "recursion limit");
}

/// A line over the limit is not buffered and gets -32700 with its id; the next request
/// is read as usual.
#[tokio::test]
async fn a_line_over_the_limit_gets_an_answer_and_the_server_reads_on() {
    let mut wire = start().await;
    let big = format!(r#"{{"blob":"{}"}}"#, "x".repeat(20 * 1024 * 1024));
    let answer = wire.answer_to(&call(1, &big)).await;
    assert_error(
        &answer,
        json!(1),
        -32700,
        "over the limit of 16777216 bytes",
    );
    // Just under the limit is a message like any other: it reaches the call path, whose
    // argument limits (4 MiB by default) refuse it with a result naming the limit.
    let fits = format!(r#"{{"blob":"{}"}}"#, "x".repeat(15 * 1024 * 1024));
    wire.send_raw(&call(2, &fits)).await;
    let answer = wire.receive().await;
    assert_eq!(answer["id"], json!(2), "{answer}");
    assert_eq!(answer["result"]["isError"], json!(true), "{answer}");
    let text = answer["result"]["content"][0]["text"]
        .as_str()
        .unwrap_or("");
    assert!(text.contains("the limit is 4194304 (max_bytes)"), "{text}");

    let mut wire = start_with(|server| server.with_max_message_bytes(1000)).await;
    let answer = wire
        .answer_to(&call(3, &format!(r#"{{"blob":"{}"}}"#, "x".repeat(1000))))
        .await;
    assert_error(&answer, json!(3), -32700, "over the limit of 1000 bytes");
}

/// `tools/call` with params of the wrong shape was -32601 "method not found".
#[tokio::test]
async fn tools_call_with_params_of_the_wrong_shape_is_invalid_params() {
    let mut wire = start().await;
    let cases = [
        (
            r#""arguments":[1,2]"#,
            "\"arguments\" must be an object, got an array",
        ),
        (
            r#""arguments":"{}""#,
            "\"arguments\" must be an object, got a string",
        ),
        (
            r#""arguments":42"#,
            "\"arguments\" must be an object, got a number",
        ),
        (
            r#""arguments":true"#,
            "\"arguments\" must be an object, got a boolean",
        ),
        (
            r#""_meta":"x""#,
            "\"_meta\" must be an object, got a string",
        ),
    ];
    for (id, (field, names)) in (10..).zip(cases) {
        let line = format!(
            r#"{{"jsonrpc":"2.0","id":{id},"method":"tools/call","params":{{"name":"count",{field}}}}}"#
        );
        let answer = wire.answer_to(line.as_bytes()).await;
        assert_error(&answer, json!(id), -32602, names);
    }
    let answer = wire
        .answer_to(br#"{"jsonrpc":"2.0","id":20,"method":"tools/call"}"#)
        .await;
    assert_error(&answer, json!(20), -32602, "needs params");
    let answer = wire
        .answer_to(br#"{"jsonrpc":"2.0","id":21,"method":"tools/call","params":{"arguments":{}}}"#)
        .await;
    assert_error(&answer, json!(21), -32602, "needs the tool's \"name\"");
    let answer = wire
        .answer_to(br#"{"jsonrpc":"2.0","id":"n","method":"tools/call","params":{"name":7}}"#)
        .await;
    assert_error(
        &answer,
        json!("n"),
        -32602,
        "\"name\" must be a string, got a number",
    );
    // What rmcp's own type rejects, with nothing simpler to name.
    let answer = wire
        .answer_to(br#"{"jsonrpc":"2.0","id":22,"method":"tools/call","params":{"name":"count","requestState":5}}"#)
        .await;
    assert_error(&answer, json!(22), -32602, "the shape tools/call takes");
    let answer = wire
        .answer_to(br#"{"jsonrpc":"2.0","id":23,"method":"prompts/get","params":{"arguments":{}}}"#)
        .await;
    assert_error(&answer, json!(23), -32602, "the shape prompts/get takes");
    // An unknown method is still rmcp's "method not found".
    let answer = wire
        .answer_to(br#"{"jsonrpc":"2.0","id":24,"method":"tools/frobnicate","params":{}}"#)
        .await;
    assert_eq!(answer["id"], json!(24), "{answer}");
    assert_eq!(answer["error"]["code"], json!(-32601), "{answer}");
    // A well-formed call still works, and `arguments: null` is no arguments.
    for (id, arguments) in [(30, r#"{"a":1,"b":2}"#), (31, "null")] {
        wire.send_raw(&call(id, arguments)).await;
        let answer = wire.receive().await;
        assert_eq!(answer["id"], json!(id), "{answer}");
        assert_eq!(answer["result"]["isError"], json!(false), "{answer}");
    }
}

/// With params a string or an array, rmcp answered with id `null`.
#[tokio::test]
async fn params_that_are_not_an_object_keep_the_id() {
    let mut wire = start().await;
    for (id, method, params, kind) in [
        (json!(1), "tools/call", json!("name=count"), "a string"),
        (json!("two"), "tools/call", json!(["count", {}]), "an array"),
        (json!(3), "tools/list", json!([]), "an array"),
        (json!(4), "ping", json!(5), "a number"),
    ] {
        let line = json!({"jsonrpc": "2.0", "id": id, "method": method, "params": params});
        let answer = wire.answer_to(line.to_string().as_bytes()).await;
        assert_error(
            &answer,
            id,
            -32602,
            &format!("\"params\" must be an object, got {kind}"),
        );
    }
    // A request that is not JSON-RPC 2.0, or has no method, keeps its id too.
    let answer = wire
        .answer_to(br#"{"jsonrpc":"1.0","id":5,"method":"ping"}"#)
        .await;
    assert_error(&answer, json!(5), -32600, "\"jsonrpc\" must be \"2.0\"");
    let answer = wire
        .answer_to(br#"{"jsonrpc":"2.0","id":6,"method":7}"#)
        .await;
    assert_error(&answer, json!(6), -32600, "\"method\" must be a string");
}

/// A notification gets no answer, even a malformed one; blank lines are skipped.
#[tokio::test]
async fn malformed_notifications_and_blank_lines_get_no_answer() {
    let mut wire = start().await;
    wire.send_raw(br#"{"jsonrpc":"2.0","method":"notifications/cancelled","params":"x"}"#)
        .await;
    wire.send_raw(
        br#"{"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":[]}}"#,
    )
    .await;
    wire.send_raw(br#"{"jsonrpc":"2.0","method":"notifications/whatever","params":7}"#)
        .await;
    wire.send_raw(b"").await;
    wire.send_raw(b"   \r").await;
    wire.assert_alive().await;
}

/// rmcp answered these with no `id` member; JSON-RPC asks for `"id": null`.
#[tokio::test]
async fn invalid_requests_without_a_usable_id_are_answered_with_id_null() {
    let mut wire = start().await;
    for (line, names) in [
        (&b"[]"[..], "batches are not supported"),
        (br#"[{"jsonrpc":"2.0","id":1,"method":"ping"}]"#, "batches"),
        (b"5", "must be an object, got a number"),
        (br#""ping""#, "must be an object, got a string"),
        (br#"{"foo":1}"#, "no \"method\""),
        (
            br#"{"jsonrpc":"2.0","id":1.5,"method":"ping"}"#,
            "\"id\" must be a string or an integer",
        ),
        (br#"{"jsonrpc":"2.0","id":null,"method":"ping"}"#, "\"id\""),
        (br#"{"jsonrpc":"2.0","id":[1],"method":"ping"}"#, "\"id\""),
    ] {
        let answer = wire.answer_to(line).await;
        assert_error(&answer, Value::Null, -32600, names);
    }
}
