//! `weather-mcp` through pi-tool-mcp's own MCP client: the seed's `get_weather`, served
//! over stdio and consumed as an `McpToolset` tool by an `Agent` on the faux model. The
//! schema, the prompt snippet and the progress of the `#[pi_tool]` tool survive the
//! round trip; a trusted server's annotations and `_meta` are used.

use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use pi_tool::agent::{Agent, AgentEvent, AgentOptions};
use pi_tool::model::{AssistantContent, Message};
use pi_tool::testing::{FauxModel, FauxTurn, call_tool};
use pi_tool::{AbortController, Tool, json};
use pi_tool_mcp::client::{McpServer, McpToolset};
use weather_example::GetWeather;

fn weather(delay_ms: Option<u64>) -> McpServer {
    let server = McpServer::stdio(
        "weather",
        env!("CARGO_BIN_EXE_weather-mcp"),
        [] as [&str; 0],
    )
    .trusted(true);
    match delay_ms {
        Some(ms) => server.env("WEATHER_MCP_LOOKUP_DELAY_MS", ms.to_string()),
        None => server,
    }
}

#[tokio::test]
async fn an_agent_calls_get_weather_over_mcp() {
    let toolset = McpToolset::connect(weather(None))
        .await
        .expect("weather-mcp connects");
    let tools = toolset.tools();
    assert_eq!(tools.len(), 1);
    let tool = &tools[0];
    assert_eq!(tool.name(), "mcp__weather__get_weather");
    assert_eq!(tool.spec().description, GetWeather::DESCRIPTION);
    assert_eq!(tool.spec().label, GetWeather::LABEL);
    assert_eq!(
        tool.spec().prompt_snippet.as_deref(),
        GetWeather::PROMPT_SNIPPET
    );

    let model = Arc::new(FauxModel::new(vec![
        FauxTurn::new(vec![AssistantContent::tool_call(
            "call-1",
            "mcp__weather__get_weather",
            json!({"city": "Tokyo"}),
        )]),
        FauxTurn::text("It is 24 degrees in Tokyo."),
    ]));
    let agent = Agent::new(
        AgentOptions::new(model)
            .model(FauxModel::model())
            .tools(tools.clone()),
    );
    let progress = Arc::new(Mutex::new(Vec::new()));
    let seen = progress.clone();
    agent.subscribe(move |event, _signal| {
        if let AgentEvent::ToolExecutionUpdate { partial_result, .. } = event {
            seen.lock()
                .expect("not poisoned")
                .push(partial_result.text_content());
        }
        Ok(())
    });
    agent
        .prompt("Weather in Tokyo?")
        .await
        .expect("the run ends");
    agent.ensure_ok().expect("no failure");
    let result = agent
        .messages()
        .into_iter()
        .find_map(|m| match m {
            Message::ToolResult(r) => Some(r),
            _ => None,
        })
        .expect("a tool result");
    assert!(!result.is_error);
    let text: String = result.content.iter().filter_map(|c| c.as_text()).collect();
    assert_eq!(text, "Tokyo: 24 degrees celsius");
    // The server's progress update ("Looking up ...") arrived as a progress update.
    let progress = progress.lock().expect("not poisoned").clone();
    assert!(progress.iter().any(|p| p.contains("Tokyo")), "{progress:?}");
    toolset.close().await;
}

#[tokio::test]
async fn an_abort_cancels_the_lookup_on_the_server() {
    let toolset = McpToolset::connect(weather(Some(10_000)))
        .await
        .expect("weather-mcp connects");
    let tool = toolset.tools()[0].clone();
    let controller = AbortController::new();
    let signal = controller.signal();
    tokio::spawn(async move {
        tokio::time::sleep(Duration::from_millis(300)).await;
        controller.abort();
    });
    let started = Instant::now();
    let run = call_tool(tool.clone(), json!({"city": "Tokyo"}))
        .signal(signal)
        .await;
    assert!(run.error().is_abort());
    assert!(started.elapsed() < Duration::from_secs(2));
    // Pi's validation text for arguments the model got wrong, without a round trip.
    let bad = call_tool(tool, json!({"town": "Tokyo"})).await;
    assert!(
        bad.error_text()
            .starts_with("Validation failed for tool \"mcp__weather__get_weather\":"),
        "{}",
        bad.error_text()
    );
    toolset.close().await;
}

/// `weather-mcp --http 127.0.0.1:0`, killed when dropped, and the URL it serves.
struct HttpServer(std::process::Child);

impl Drop for HttpServer {
    fn drop(&mut self) {
        let _ = self.0.kill();
        let _ = self.0.wait();
    }
}

fn start_http() -> (HttpServer, String) {
    use std::io::{BufRead, BufReader};
    let mut child = std::process::Command::new(env!("CARGO_BIN_EXE_weather-mcp"))
        .args(["--http", "127.0.0.1:0"])
        .stderr(std::process::Stdio::piped())
        .spawn()
        .expect("weather-mcp starts");
    let stderr = child.stderr.take().expect("piped stderr");
    let server = HttpServer(child);
    let mut lines = BufReader::new(stderr).lines();
    let url = loop {
        let line = lines
            .next()
            .expect("weather-mcp prints its address")
            .expect("readable stderr");
        if let Some(url) = line.split(" at ").nth(1) {
            break url.trim().to_owned();
        }
    };
    // Keep draining stderr so the server never blocks on it.
    std::thread::spawn(move || for _ in lines {});
    (server, url)
}

#[tokio::test]
async fn get_weather_over_streamable_http_at_both_revisions() {
    let (_server, url) = start_http();
    for (revision, expected) in [
        (pi_tool_mcp::client::Revision::Auto, None),
        (
            pi_tool_mcp::client::Revision::Initialize,
            Some("2025-11-25"),
        ),
    ] {
        let toolset = McpToolset::connect(
            McpServer::http("weather", url.as_str())
                .bearer_token("not-checked-by-this-server")
                .header("x-tenant", "tests")
                .revision(revision)
                .trusted(true),
        )
        .await
        .expect("weather-mcp over HTTP connects");
        if let Some(expected) = expected {
            assert_eq!(toolset.protocol_version(), expected);
        } else {
            assert!(
                ["2026-07-28", "2025-11-25"].contains(&toolset.protocol_version()),
                "{}",
                toolset.protocol_version()
            );
        }
        let tool = toolset.tools()[0].clone();
        let run = call_tool(tool, json!({"city": "Tokyo"})).await;
        assert_eq!(run.text(), "Tokyo: 24 degrees celsius", "{revision:?}");
        assert!(
            !run.json_updates().is_empty(),
            "progress over HTTP at {revision:?}"
        );
        toolset.close().await;
    }
}

#[tokio::test]
async fn an_http_server_that_is_not_there_is_a_clear_connect_error() {
    let error = McpToolset::connect(
        McpServer::http("nowhere", "http://127.0.0.1:9/mcp")
            .bearer_token("secret-token-value")
            .connect_timeout(Duration::from_secs(10)),
    )
    .await
    .expect_err("nothing listens on port 9");
    let text = error.to_string();
    assert!(
        text.starts_with("MCP server `nowhere`: the handshake failed:"),
        "{text}"
    );
    assert!(!text.contains("secret-token-value"), "{text}");
    // Nor does the server's Debug show the token.
    let debug = format!(
        "{:?}",
        McpServer::http("x", "http://h/mcp")
            .bearer_token("secret-token-value")
            .header("x-key", "secret-header-value")
    );
    assert!(
        !debug.contains("secret-token-value") && !debug.contains("secret-header-value"),
        "{debug}"
    );
}
