//! Over MCP the client is the tool's user interface (issue 19 §4): before 2026-07-28
//! `ctx.ui().confirm/select/input` become `elicitation/create` requests to the calling
//! client; at 2026-07-28 they become input-required results whose sealed `requestState`
//! any replica with the same key can resume, and a tampered state is refused. A client
//! without the `elicitation` capability gives a context without UI
//! (`has_ui() == false`), so a tool that must ask refuses.

use std::time::Duration;

use pi_tool::context::ExtensionContext;
use pi_tool::{ToolError, Value, json, pi_tool, tool_pack};
use pi_tool_mcp::PackServer;
use tokio::io::{AsyncBufReadExt, AsyncWriteExt, BufReader, DuplexStream, Lines};

/// Deletes everything, after asking.
#[pi_tool(destructive)]
async fn wipe(ctx: ExtensionContext) -> Result<String, ToolError> {
    if !ctx.has_ui() {
        return Err(ToolError::new("wipe requires interactive approval"));
    }
    if !ctx.ui().confirm("Wipe?", "Everything goes.").await {
        return Err(ToolError::new("Blocked by user"));
    }
    let how = ctx
        .ui()
        .select("How?", &["fast".to_owned(), "slow".to_owned()])
        .await;
    let why = ctx.ui().input("Why?", Some("a reason")).await;
    Ok(format!("wiped {how:?} because {why:?}"))
}

struct Client {
    write: tokio::io::WriteHalf<DuplexStream>,
    lines: Lines<BufReader<tokio::io::ReadHalf<DuplexStream>>>,
}

impl Client {
    async fn send(&mut self, message: Value) {
        let line = format!("{message}\n");
        self.write.write_all(line.as_bytes()).await.unwrap();
    }

    async fn next(&mut self) -> Value {
        let line = tokio::time::timeout(Duration::from_secs(10), self.lines.next_line())
            .await
            .expect("a message within 10 s")
            .unwrap()
            .expect("an open stream");
        serde_json::from_str(&line).unwrap()
    }
}

/// A client of `server` over an in-memory stdio pipe.
fn client_of(server: PackServer) -> Client {
    let (ours, theirs) = tokio::io::duplex(1 << 20);
    let (read, write) = tokio::io::split(theirs);
    tokio::spawn(server.serve_io(read, write));
    let (read, write) = tokio::io::split(ours);
    Client {
        write,
        lines: BufReader::new(read).lines(),
    }
}

async fn connect(capabilities: Value) -> Client {
    let mut client = client_of(PackServer::new(tool_pack![Wipe]));
    client
        .send(
            json!({"jsonrpc": "2.0", "id": 0, "method": "initialize", "params": {
            "protocolVersion": "2025-11-25", "capabilities": capabilities,
            "clientInfo": {"name": "t", "version": "0"}}}),
        )
        .await;
    assert!(client.next().await["result"].is_object());
    client
        .send(json!({"jsonrpc": "2.0", "method": "notifications/initialized"}))
        .await;
    client
        .send(json!({"jsonrpc": "2.0", "id": 1, "method": "tools/call",
            "params": {"name": "wipe", "arguments": {}}}))
        .await;
    client
}

#[tokio::test]
async fn the_client_answers_the_tools_questions() {
    let mut client = connect(json!({"elicitation": {"form": {}}})).await;
    let answers = [
        ("confirm", json!(true)),
        ("selection", json!("slow")),
        ("value", json!("tidy up")),
    ];
    for (field, answer) in answers {
        let request = client.next().await;
        assert_eq!(request["method"], "elicitation/create", "{request}");
        let schema = &request["params"]["requestedSchema"];
        assert!(schema["properties"][field].is_object(), "{request}");
        client
            .send(json!({"jsonrpc": "2.0", "id": request["id"],
                "result": {"action": "accept", "content": {field: answer}}}))
            .await;
    }
    let result = client.next().await;
    assert_eq!(result["id"], 1, "{result}");
    assert_eq!(
        result["result"]["content"][0]["text"], "wiped Some(\"slow\") because Some(\"tidy up\")",
        "{result}"
    );
}

#[tokio::test]
async fn a_declined_question_is_a_no() {
    let mut client = connect(json!({"elicitation": {}})).await;
    let request = client.next().await;
    assert_eq!(request["method"], "elicitation/create", "{request}");
    client
        .send(json!({"jsonrpc": "2.0", "id": request["id"], "result": {"action": "decline"}}))
        .await;
    let result = client.next().await;
    assert_eq!(result["result"]["isError"], true, "{result}");
    assert_eq!(result["result"]["content"][0]["text"], "Blocked by user");
}

#[tokio::test]
async fn a_client_without_elicitation_is_no_ui() {
    let mut client = connect(json!({})).await;
    let result = client.next().await;
    assert_eq!(result["id"], 1, "{result}");
    assert_eq!(result["result"]["isError"], true, "{result}");
    assert_eq!(
        result["result"]["content"][0]["text"],
        "wipe requires interactive approval"
    );
}

const KEY: &[u8] = b"a key of thirty-two bytes or more, for tests";

fn replica(key: &[u8]) -> PackServer {
    PackServer::new(tool_pack![Wipe])
        .with_request_state_key(key)
        .unwrap()
}

/// One stateless (2026-07-28) `tools/call` of `wipe` with these `_meta` capabilities,
/// answers and state; its response.
async fn call_2026(
    client: &mut Client,
    id: u64,
    arguments: Value,
    responses: Option<Value>,
    state: Option<&Value>,
) -> Value {
    let mut params = json!({"name": "wipe", "arguments": arguments, "_meta": {
        "io.modelcontextprotocol/protocolVersion": "2026-07-28",
        "io.modelcontextprotocol/clientInfo": {"name": "t", "version": "0"},
        "io.modelcontextprotocol/clientCapabilities": {"elicitation": {}},
    }});
    if let Some(responses) = responses {
        params["inputResponses"] = responses;
    }
    if let Some(state) = state {
        params["requestState"] = state.clone();
    }
    client
        .send(json!({"jsonrpc": "2.0", "id": id, "method": "tools/call", "params": params}))
        .await;
    client.next().await
}

fn accept(field: &str, answer: Value) -> Value {
    json!({"action": "accept", "content": {field: answer}})
}

#[tokio::test]
async fn at_2026_07_28_each_question_is_an_input_required_result_any_replica_resumes() {
    // Two replicas with one key: each round may reach either.
    let mut a = client_of(replica(KEY));
    let mut b = client_of(replica(KEY));
    let first = call_2026(&mut a, 1, json!({}), None, None).await;
    let result = &first["result"];
    assert_eq!(result["resultType"], "input_required", "{first}");
    let question = &result["inputRequests"]["pi-tool/ui/0"];
    assert_eq!(question["method"], "elicitation/create", "{first}");
    assert!(question["params"]["requestedSchema"]["properties"]["confirm"].is_object());
    let state = result["requestState"].clone();
    assert!(state.is_string(), "{first}");

    let answers = [
        ("pi-tool/ui/0", "confirm", json!(true)),
        ("pi-tool/ui/1", "selection", json!("slow")),
    ];
    let mut state = state;
    for (round, (key, field, answer)) in answers.into_iter().enumerate() {
        let client = if round % 2 == 0 { &mut b } else { &mut a };
        let next = call_2026(
            client,
            2 + round as u64,
            json!({}),
            Some(json!({key: accept(field, answer)})),
            Some(&state),
        )
        .await;
        assert_eq!(next["result"]["resultType"], "input_required", "{next}");
        assert!(
            next["result"]["inputRequests"][format!("pi-tool/ui/{}", round + 1)].is_object(),
            "{next}"
        );
        assert_ne!(next["result"]["requestState"], state);
        state = next["result"]["requestState"].clone();
    }
    let last = call_2026(
        &mut b,
        9,
        json!({}),
        Some(json!({"pi-tool/ui/2": accept("value", json!("tidy up"))})),
        Some(&state),
    )
    .await;
    assert_eq!(
        last["result"]["content"][0]["text"], "wiped Some(\"slow\") because Some(\"tidy up\")",
        "{last}"
    );
}

#[tokio::test]
async fn at_2026_07_28_a_tampered_or_foreign_state_is_refused() {
    let mut a = client_of(replica(KEY));
    let first = call_2026(&mut a, 1, json!({}), None, None).await;
    let state = first["result"]["requestState"].as_str().unwrap().to_owned();
    let answer = Some(json!({"pi-tool/ui/0": accept("confirm", json!(true))}));

    let tampered = json!(format!("{state}-TAMPERED"));
    let refused = call_2026(&mut a, 2, json!({}), answer.clone(), Some(&tampered)).await;
    assert_eq!(refused["error"]["code"], -32602, "{refused}");

    // The state of a call without arguments does not resume one with other arguments.
    let bound = call_2026(
        &mut a,
        3,
        json!({"x": 1}),
        answer.clone(),
        Some(&json!(state)),
    )
    .await;
    assert!(bound["error"]["code"] == -32602, "{bound}");

    // A replica with another key cannot open it.
    let mut other = client_of(replica(b"another key of thirty-two bytes or more"));
    let foreign = call_2026(&mut other, 4, json!({}), answer, Some(&json!(state))).await;
    assert_eq!(foreign["error"]["code"], -32602, "{foreign}");
}

#[tokio::test]
async fn a_short_request_state_key_is_refused() {
    let error = PackServer::new(tool_pack![Wipe])
        .with_request_state_key(b"short".to_vec())
        .unwrap_err();
    assert!(error.to_string().contains("request state key"), "{error}");
}

/// Logs one message at each of `info` and `error`.
#[pi_tool(read_only)]
async fn chatty() -> Result<String, ToolError> {
    let client = pi_tool_mcp::CallingClient::current().expect("called over MCP");
    #[allow(deprecated)] // SEP-2577 deprecates logging; the revisions still have it.
    for level in [
        pi_tool_mcp::rmcp::model::LoggingLevel::Info,
        pi_tool_mcp::rmcp::model::LoggingLevel::Error,
    ] {
        client.log(level, Some("chatty"), json!("a message")).await;
    }
    Ok("done".to_owned())
}

/// The log messages a `chatty` call with this id sends before its result.
async fn logs_of_call(client: &mut Client, id: u64, meta: Value) -> Vec<Value> {
    client
        .send(json!({"jsonrpc": "2.0", "id": id, "method": "tools/call",
            "params": {"name": "chatty", "arguments": {}, "_meta": meta}}))
        .await;
    let mut logs = Vec::new();
    loop {
        let message = client.next().await;
        if message["id"] == id {
            assert_eq!(message["result"]["content"][0]["text"], "done", "{message}");
            return logs;
        }
        assert_eq!(message["method"], "notifications/message", "{message}");
        logs.push(message["params"]["level"].clone());
    }
}

#[tokio::test]
async fn a_tool_logs_only_what_the_client_asked_for() {
    let mut client = client_of(PackServer::new(tool_pack![Chatty]));
    client
        .send(
            json!({"jsonrpc": "2.0", "id": 0, "method": "initialize", "params": {
            "protocolVersion": "2025-11-25", "capabilities": {},
            "clientInfo": {"name": "t", "version": "0"}}}),
        )
        .await;
    let init = client.next().await;
    assert!(
        init["result"]["capabilities"]["logging"].is_object(),
        "{init}"
    );
    client
        .send(json!({"jsonrpc": "2.0", "method": "notifications/initialized"}))
        .await;
    // Nothing before the client sets a level.
    assert!(logs_of_call(&mut client, 1, json!({})).await.is_empty());
    client
        .send(
            json!({"jsonrpc": "2.0", "id": 2, "method": "logging/setLevel",
            "params": {"level": "warning"}}),
        )
        .await;
    assert_eq!(client.next().await["result"], json!({}));
    assert_eq!(
        logs_of_call(&mut client, 3, json!({})).await,
        [json!("error")]
    );

    // 2026-07-28: each request says its own level in `_meta`.
    let meta = |level: Option<&str>| {
        let mut meta = json!({
            "io.modelcontextprotocol/protocolVersion": "2026-07-28",
            "io.modelcontextprotocol/clientInfo": {"name": "t", "version": "0"},
            "io.modelcontextprotocol/clientCapabilities": {},
        });
        if let Some(level) = level {
            meta["io.modelcontextprotocol/logLevel"] = json!(level);
        }
        meta
    };
    let mut stateless = client_of(PackServer::new(tool_pack![Chatty]));
    assert!(logs_of_call(&mut stateless, 1, meta(None)).await.is_empty());
    assert_eq!(
        logs_of_call(&mut stateless, 2, meta(Some("debug"))).await,
        [json!("info"), json!("error")]
    );
}
