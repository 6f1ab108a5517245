//! Streamable HTTP's security and revision rules (issue 19 §6 and §8), with
//! hand-written HTTP/1.1 on a real socket: `Origin` and `Host` validated by default,
//! batches on a 2025-03-26 session, event ids unique per session, the methods 2026-07-28
//! removed answered 404/-32601, and an unknown tool as a -32602 JSON-RPC error at both
//! revisions.

use std::collections::HashSet;
use std::net::SocketAddr;
use std::sync::Arc;
use std::time::Duration;

use pi_tool::ToolInvocation;
use pi_tool::pack::{ToolOwner, ToolPack};
use pi_tool::schema::ToolSchema;
use pi_tool::{AgentTool, JsonToolResult, ToolError, ToolSpec, Value, async_trait, json};
use pi_tool_mcp::{PackServer, ServeError};
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::{TcpListener, TcpStream};

/// Says ok after one progress update.
struct Ok(ToolSpec);

#[async_trait]
impl AgentTool for Ok {
    fn spec(&self) -> &ToolSpec {
        &self.0
    }

    async fn execute(&self, call: ToolInvocation<'_>) -> Result<JsonToolResult, ToolError> {
        call.on_update.send(JsonToolResult::text("working", None));
        Result::Ok(JsonToolResult::text("ok", None))
    }
}

fn server() -> PackServer {
    let mut pack = ToolPack::new();
    let schema = ToolSchema::from_json(json!({"type": "object", "properties": {}}));
    let spec = ToolSpec::new("ok", "Says ok.", Arc::new(schema));
    pack.push(
        ToolOwner::new("http-security-test"),
        Arc::new(Ok(spec)) as Arc<dyn AgentTool>,
    )
    .unwrap();
    PackServer::new(pack)
}

async fn start(server: PackServer, bind: &str) -> SocketAddr {
    let listener = TcpListener::bind(bind).await.unwrap();
    let address = listener.local_addr().unwrap();
    tokio::spawn(server.serve_http(listener));
    address
}

struct Answer {
    status: u16,
    headers: String,
    body: String,
}

impl Answer {
    fn header(&self, name: &str) -> Option<&str> {
        self.headers.lines().find_map(|line| {
            let (key, value) = line.split_once(':')?;
            key.eq_ignore_ascii_case(name).then(|| value.trim())
        })
    }

    /// The JSON-RPC messages of the body: the JSON itself, or each event's data.
    fn messages(&self) -> Vec<Value> {
        if self
            .header("content-type")
            .is_some_and(|t| t.starts_with("text/event-stream"))
        {
            self.body
                .lines()
                .filter_map(|line| line.strip_prefix("data:"))
                .filter_map(|data| serde_json::from_str(data.trim()).ok())
                .collect()
        } else {
            vec![serde_json::from_str(&self.body).unwrap_or(Value::Null)]
        }
    }

    fn event_ids(&self) -> Vec<String> {
        self.body
            .lines()
            .filter_map(|line| line.strip_prefix("id:"))
            .map(|id| id.trim().to_owned())
            .collect()
    }
}

/// Sends one request (`Connection: close`) and reads the answer, for at most `wait`
/// (a standalone event stream never ends by itself).
async fn send(
    address: SocketAddr,
    method: &str,
    headers: &[(&str, &str)],
    body: &str,
    wait: Duration,
) -> Answer {
    let mut stream = TcpStream::connect(address).await.unwrap();
    let mut head = format!(
        "{method} /mcp HTTP/1.1\r\nAccept: application/json, text/event-stream\r\n\
         Content-Length: {}\r\nConnection: close\r\n",
        body.len()
    );
    if !headers
        .iter()
        .any(|(name, _)| name.eq_ignore_ascii_case("host"))
    {
        head.push_str(&format!("Host: 127.0.0.1:{}\r\n", address.port()));
    }
    if method == "POST" {
        head.push_str("Content-Type: application/json\r\n");
    }
    for (name, value) in headers {
        head.push_str(&format!("{name}: {value}\r\n"));
    }
    head.push_str("\r\n");
    stream.write_all(head.as_bytes()).await.unwrap();
    stream.write_all(body.as_bytes()).await.unwrap();
    let mut answer = Vec::new();
    let _ = tokio::time::timeout(wait, stream.read_to_end(&mut answer)).await;
    let answer = String::from_utf8_lossy(&answer).into_owned();
    let (head, body) = answer.split_once("\r\n\r\n").unwrap_or((&answer, ""));
    let status = head
        .split(' ')
        .nth(1)
        .and_then(|s| s.parse().ok())
        .unwrap_or(0);
    let (_, headers) = head.split_once("\r\n").unwrap_or((head, ""));
    let body = if headers
        .to_ascii_lowercase()
        .contains("transfer-encoding: chunked")
    {
        dechunk(body)
    } else {
        body.to_owned()
    };
    Answer {
        status,
        headers: headers.to_owned(),
        body,
    }
}

fn dechunk(mut body: &str) -> String {
    let mut out = String::new();
    while let Some((size, rest)) = body.split_once("\r\n") {
        let Result::Ok(size) = usize::from_str_radix(size.trim(), 16) else {
            break;
        };
        if size == 0 || rest.len() < size {
            out.push_str(&rest[..size.min(rest.len())]);
            break;
        }
        out.push_str(&rest[..size]);
        body = rest[size..].trim_start_matches("\r\n");
    }
    out
}

const WAIT: Duration = Duration::from_secs(10);

async fn post(address: SocketAddr, headers: &[(&str, &str)], body: Value) -> Answer {
    send(address, "POST", headers, &body.to_string(), WAIT).await
}

/// Opens a session at `version`; returns its id.
async fn initialize(address: SocketAddr, version: &str) -> String {
    let answer = post(
        address,
        &[],
        json!({"jsonrpc": "2.0", "id": 0, "method": "initialize", "params": {
            "protocolVersion": version, "capabilities": {},
            "clientInfo": {"name": "http-security-test", "version": "0"}}}),
    )
    .await;
    assert_eq!(answer.status, 200, "{}", answer.body);
    let session = answer
        .header("mcp-session-id")
        .expect("a session id")
        .to_owned();
    let initialized = post(
        address,
        &[("Mcp-Session-Id", &session)],
        json!({"jsonrpc": "2.0", "method": "notifications/initialized"}),
    )
    .await;
    assert_eq!(initialized.status, 202);
    session
}

fn stateless_meta() -> Value {
    json!({
        "io.modelcontextprotocol/protocolVersion": "2026-07-28",
        "io.modelcontextprotocol/clientCapabilities": {},
    })
}

/// A 2026-07-28 request, with the headers that revision requires.
async fn post_stateless(address: SocketAddr, id: i64, method: &str, mut params: Value) -> Answer {
    params["_meta"] = stateless_meta();
    let name = params["name"].as_str().unwrap_or_default().to_owned();
    let mut headers = vec![
        ("MCP-Protocol-Version", "2026-07-28"),
        ("Mcp-Method", method),
    ];
    if !name.is_empty() {
        headers.push(("Mcp-Name", &name));
    }
    post(
        address,
        &headers,
        json!({"jsonrpc": "2.0", "id": id, "method": method, "params": params}),
    )
    .await
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_foreign_origin_or_host_is_refused_with_403() {
    let address = start(server(), "127.0.0.1:0").await;
    let init = json!({"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {
        "protocolVersion": "2025-11-25", "capabilities": {},
        "clientInfo": {"name": "t", "version": "0"}}});
    for origin in [
        "http://evil.example.com",
        "https://localhost.evil.example.com",
        "null",
        "not an origin",
    ] {
        let answer = post(address, &[("Origin", origin)], init.clone()).await;
        assert_eq!(answer.status, 403, "Origin {origin}: {}", answer.body);
        assert!(answer.header("mcp-session-id").is_none());
    }
    // Also for GET and DELETE, which rmcp would answer.
    for method in ["GET", "DELETE"] {
        let answer = send(
            address,
            method,
            &[("Origin", "http://evil.example.com")],
            "",
            WAIT,
        )
        .await;
        assert_eq!(answer.status, 403, "{method}");
    }
    for origin in [
        "http://localhost:6274",
        "http://127.0.0.1",
        "https://[::1]:8443",
    ] {
        let answer = post(address, &[("Origin", origin)], init.clone()).await;
        assert_eq!(answer.status, 200, "Origin {origin}: {}", answer.body);
    }
    let host = post(address, &[("Host", "evil.example.com")], init.clone()).await;
    assert_eq!(host.status, 403, "{}", host.body);
    let host = post(address, &[("Host", "localhost:1")], init).await;
    assert_eq!(host.status, 200, "{}", host.body);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_allow_lists_add_hosts_and_origins() {
    let listed = server()
        .with_allowed_hosts(["mcp.example.com"])
        .with_allowed_origins(["https://app.example.com"]);
    // Not a loopback bind: loopback origins are allowed only when listed.
    let address = start(listed, "0.0.0.0:0").await;
    let init = json!({"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {
        "protocolVersion": "2025-11-25", "capabilities": {},
        "clientInfo": {"name": "t", "version": "0"}}});
    let headers = |origin| [("Host", "mcp.example.com"), ("Origin", origin)];
    let ok = post(address, &headers("https://app.example.com"), init.clone()).await;
    assert_eq!(ok.status, 200, "{}", ok.body);
    for origin in ["http://app.example.com", "http://localhost:3000"] {
        let answer = post(address, &headers(origin), init.clone()).await;
        assert_eq!(answer.status, 403, "{origin}");
    }

    let listener = TcpListener::bind("127.0.0.1:0").await.unwrap();
    let error = server()
        .with_allowed_origins(["app.example.com"])
        .serve_http(listener)
        .await
        .unwrap_err();
    assert!(matches!(&error, ServeError::Config(text) if text.contains("app.example.com")));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn batches_are_served_on_a_2025_03_26_session_only() {
    let address = start(server(), "127.0.0.1:0").await;
    let session = initialize(address, "2025-03-26").await;
    let batch = json!([
        {"jsonrpc": "2.0", "id": "a", "method": "tools/list"},
        {"jsonrpc": "2.0", "method": "notifications/progress",
         "params": {"progressToken": "x", "progress": 1}},
        {"jsonrpc": "2.0", "id": 2, "method": "tools/call",
         "params": {"name": "ok", "arguments": {}}},
        {"jsonrpc": "2.0", "id": 3, "method": "tools/call", "params": {"name": 7}},
        {"jsonrpc": "2.0", "id": 4, "method": "initialize", "params": {}},
    ]);
    let answer = post(address, &[("Mcp-Session-Id", &session)], batch.clone()).await;
    assert_eq!(answer.status, 200, "{}", answer.body);
    let answers: Value = serde_json::from_str(&answer.body).unwrap();
    let answers = answers.as_array().expect("an array of answers");
    let ids: Vec<&Value> = answers.iter().map(|a| &a["id"]).collect();
    assert_eq!(ids, [&json!("a"), &json!(2), &json!(3), &json!(4)]);
    assert_eq!(answers[0]["result"]["tools"][0]["name"], "ok");
    assert_eq!(answers[1]["result"]["content"][0]["text"], "ok");
    assert_eq!(answers[2]["error"]["code"], -32602);
    assert_eq!(answers[3]["error"]["code"], -32600);

    // Notifications only: accepted, nothing to answer.
    let only = json!([{"jsonrpc": "2.0", "method": "notifications/progress",
        "params": {"progressToken": "x", "progress": 1}}]);
    let answer = post(address, &[("Mcp-Session-Id", &session)], only).await;
    assert_eq!(answer.status, 202, "{}", answer.body);
    let empty = post(address, &[("Mcp-Session-Id", &session)], json!([])).await;
    assert_eq!(empty.status, 400);
    assert_eq!(empty.messages()[0]["error"]["code"], -32600);

    // A later revision has no batches.
    let session = initialize(address, "2025-11-25").await;
    let answer = post(
        address,
        &[
            ("Mcp-Session-Id", &session),
            ("MCP-Protocol-Version", "2025-11-25"),
        ],
        batch,
    )
    .await;
    assert_eq!(answer.status, 400, "{}", answer.body);
    assert_eq!(answer.messages()[0]["error"]["code"], -32600);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn event_ids_are_unique_within_a_session() {
    let address = start(server(), "127.0.0.1:0").await;
    let init = post(
        address,
        &[],
        json!({"jsonrpc": "2.0", "id": 0, "method": "initialize", "params": {
            "protocolVersion": "2025-11-25", "capabilities": {},
            "clientInfo": {"name": "t", "version": "0"}}}),
    )
    .await;
    let session = init.header("mcp-session-id").unwrap().to_owned();
    let mut ids = init.event_ids();
    let headers = [
        ("Mcp-Session-Id", session.as_str()),
        ("MCP-Protocol-Version", "2025-11-25"),
    ];
    let initialized = post(
        address,
        &headers,
        json!({"jsonrpc": "2.0", "method": "notifications/initialized"}),
    )
    .await;
    assert_eq!(initialized.status, 202);
    let get_headers = [
        ("Mcp-Session-Id", session.as_str()),
        ("MCP-Protocol-Version", "2025-11-25"),
    ];
    let standalone = send(
        address,
        "GET",
        &get_headers,
        "",
        Duration::from_millis(1500),
    );
    let calls = async {
        let mut ids = Vec::new();
        for id in 1..=3 {
            let answer = post(
                address,
                &headers,
                json!({"jsonrpc": "2.0", "id": id, "method": "tools/call", "params": {
                    "name": "ok", "arguments": {}, "_meta": {"progressToken": id}}}),
            )
            .await;
            let messages = answer.messages();
            assert_eq!(
                messages.len(),
                2,
                "progress, then the result: {}",
                answer.body
            );
            assert_eq!(messages[1]["result"]["content"][0]["text"], "ok");
            ids.extend(answer.event_ids());
        }
        ids
    };
    let (standalone, call_ids) = tokio::join!(standalone, calls);
    ids.extend(call_ids);
    assert_eq!(standalone.status, 200);
    ids.extend(standalone.event_ids());
    assert!(ids.len() >= 6, "{ids:?}");
    let unique: HashSet<&String> = ids.iter().collect();
    assert_eq!(unique.len(), ids.len(), "an event id repeats: {ids:?}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn removed_methods_get_404_at_2026_07_28() {
    let address = start(server(), "127.0.0.1:0").await;
    for (id, method) in [
        "initialize",
        "ping",
        "logging/setLevel",
        "resources/subscribe",
        "resources/unsubscribe",
    ]
    .into_iter()
    .enumerate()
    {
        let id = id as i64 + 10;
        let answer = post_stateless(address, id, method, json!({"uri": "test://x"})).await;
        assert_eq!(answer.status, 404, "{method}: {}", answer.body);
        let message = &answer.messages()[0];
        assert_eq!(message["id"], id, "{method}");
        assert_eq!(message["error"]["code"], -32601, "{method}");
    }
    // What the revision keeps passes through to rmcp.
    let list = post_stateless(address, 1, "tools/list", json!({})).await;
    assert_eq!(list.status, 200, "{}", list.body);
    assert_eq!(list.messages()[0]["result"]["tools"][0]["name"], "ok");
    // The older revision keeps `ping`.
    let session = initialize(address, "2025-11-25").await;
    let ping = post(
        address,
        &[
            ("Mcp-Session-Id", &session),
            ("MCP-Protocol-Version", "2025-11-25"),
        ],
        json!({"jsonrpc": "2.0", "id": 5, "method": "ping"}),
    )
    .await;
    assert_eq!(ping.status, 200);
    assert_eq!(ping.messages()[0]["result"], json!({}));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_unknown_tool_is_a_32602_error_naming_it_at_both_revisions() {
    let address = start(server(), "127.0.0.1:0").await;
    let check = |message: &Value, id: i64| {
        assert_eq!(message["id"], id, "{message}");
        assert_eq!(message["error"]["code"], -32602, "{message}");
        assert_eq!(
            message["error"]["message"], "Tool nope not found",
            "{message}"
        );
        assert_eq!(message["error"]["data"]["tool"], "nope", "{message}");
    };
    let answer = post_stateless(
        address,
        1,
        "tools/call",
        json!({"name": "nope", "arguments": {}}),
    )
    .await;
    check(&answer.messages()[0], 1);
    let session = initialize(address, "2025-11-25").await;
    let answer = post(
        address,
        &[
            ("Mcp-Session-Id", &session),
            ("MCP-Protocol-Version", "2025-11-25"),
        ],
        json!({"jsonrpc": "2.0", "id": 2, "method": "tools/call",
            "params": {"name": "nope", "arguments": {}}}),
    )
    .await;
    check(answer.messages().last().unwrap(), 2);
}

/// A server whose `ok` tool takes a `region` declared `x-mcp-header: "Region"`.
fn header_server(header: &str) -> PackServer {
    let mut pack = ToolPack::new();
    let schema = ToolSchema::from_json(json!({
        "type": "object",
        "properties": {"region": {"type": "string", "x-mcp-header": header}},
        "required": ["region"]
    }));
    let spec = ToolSpec::new("ok", "Says ok.", Arc::new(schema));
    pack.push(
        ToolOwner::new("http-security-test"),
        Arc::new(Ok(spec)) as Arc<dyn AgentTool>,
    )
    .unwrap();
    PackServer::new(pack)
}

/// A 2026-07-28 `tools/call` of `ok` with `region` in the body and `param` (if any) as
/// its `Mcp-Param-Region` header.
async fn call_with_param(
    address: SocketAddr,
    id: i64,
    region: &str,
    param: Option<&str>,
) -> Answer {
    let mut headers = vec![
        ("MCP-Protocol-Version", "2026-07-28"),
        ("Mcp-Method", "tools/call"),
        ("Mcp-Name", "ok"),
    ];
    if let Some(param) = param {
        headers.push(("Mcp-Param-Region", param));
    }
    post(
        address,
        &headers,
        json!({"jsonrpc": "2.0", "id": id, "method": "tools/call", "params": {
            "name": "ok", "arguments": {"region": region}, "_meta": stateless_meta()}}),
    )
    .await
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn x_mcp_header_parameters_are_listed_and_checked_against_the_body() {
    let server = header_server("Region");
    assert!(
        server.schema_report().is_empty(),
        "{:?}",
        server.schema_report()
    );
    assert_eq!(
        server.listed_tools()[0].input_schema["properties"]["region"]["x-mcp-header"],
        json!("Region")
    );
    let address = start(server, "127.0.0.1:0").await;

    let accepted = [
        ("us-west1", "us-west1"),
        // Base64 in the `=?base64?...?=` wrapper is decoded first.
        ("us-west1", "=?base64?dXMtd2VzdDE=?="),
        // Without the exact wrapper the value is literal.
        ("=?base64?SGVsbG8=", "=?base64?SGVsbG8="),
    ];
    for (i, (region, param)) in accepted.into_iter().enumerate() {
        let answer = call_with_param(address, i as i64, region, Some(param)).await;
        assert_eq!(answer.status, 200, "{param}: {}", answer.body);
        let message = &answer.messages()[answer.messages().len() - 1];
        assert_eq!(message["result"]["isError"], json!(false), "{message}");
    }

    let refused = [
        ("us-west1", Some("eu-central1")),
        // The value is in the body but the header is missing.
        ("us-west1", None),
        // Bad Base64 padding, and characters outside the alphabet.
        ("Hello", Some("=?base64?SGVsbG8?=")),
        ("Hello", Some("=?base64?SGVs!!!bG8=?=")),
    ];
    for (i, (region, param)) in refused.into_iter().enumerate() {
        let answer = call_with_param(address, 10 + i as i64, region, param).await;
        assert_eq!(answer.status, 400, "{param:?}: {}", answer.body);
        assert_eq!(
            answer.messages()[0]["error"]["code"],
            json!(-32020),
            "{param:?}: {}",
            answer.body
        );
    }
}

#[test]
fn a_bad_x_mcp_header_is_reported_and_not_listed() {
    let server = header_server("Re gion");
    let report = server.schema_report();
    assert_eq!(report.len(), 1, "{report:?}");
    assert!(
        report[0].starts_with("tool \"ok\": error: `region`")
            && report[0].contains("not an HTTP header name"),
        "{report:?}"
    );
    assert!(
        server.listed_tools()[0].input_schema["properties"]["region"]
            .get("x-mcp-header")
            .is_none()
    );
}
