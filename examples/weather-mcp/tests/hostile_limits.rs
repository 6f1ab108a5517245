//! The argument limits come from the host's `CallPolicy` (issue 11 §1) and read the same on
//! every host: the agent loop and the MCP server (`PackServer::with_policy`) refuse the
//! same call with the same text, before the tool runs; without the policy's limits the
//! defaults apply, and they take what a real call sends.

mod hostile;

use std::sync::Arc;

use pi_tool::agent::{Agent, AgentOptions};
use pi_tool::model::AssistantContent;
use pi_tool::pack::{ToolOwner, ToolPack};
use pi_tool::schema::ArgumentLimits;
use pi_tool::testing::{FauxModel, FauxTurn};
use pi_tool::{CallPolicy, IntoAgentTool, Value, json};
use pi_tool_mcp::PackServer;
use tokio::io::{AsyncBufReadExt, AsyncWriteExt, BufReader};
use weather_example::GetWeather;

/// What the agent loop answers to one `get_weather` call with `arguments`.
async fn through_the_loop(arguments: Value, policy: CallPolicy) -> hostile::Answer {
    let model = Arc::new(FauxModel::new(vec![
        FauxTurn::new(vec![AssistantContent::tool_call(
            "call_1",
            "get_weather",
            arguments,
        )]),
        FauxTurn::text("done"),
    ]));
    let agent = Agent::new(
        AgentOptions::new(model)
            .model(FauxModel::model())
            .tools(vec![GetWeather.into_agent_tool()])
            .policy(policy.into()),
    );
    agent.prompt("Weather?").await.expect("the run ends");
    hostile::provider::answer_of(&agent.messages())
}

/// What `PackServer::with_policy(policy)` answers to the same call, over its framing.
async fn through_mcp(arguments: Value, policy: CallPolicy) -> hostile::Answer {
    let mut pack = ToolPack::new();
    pack.push(ToolOwner::new("hostile-limits"), GetWeather)
        .expect("one tool");
    let server = PackServer::new(pack).with_policy(policy);
    let (client, server_end) = tokio::io::duplex(1 << 20);
    let (read, write) = tokio::io::split(server_end);
    tokio::spawn(async move {
        let _ = server.serve_io(read, write).await;
    });
    let (read, mut write) = tokio::io::split(client);
    let mut lines = BufReader::new(read).lines();
    let call = json!({"jsonrpc": "2.0", "id": 1, "method": "tools/call",
        "params": {"name": "get_weather", "arguments": arguments}});
    for message in [
        json!({"jsonrpc": "2.0", "id": 0, "method": "initialize", "params": {
            "protocolVersion": "2025-06-18", "capabilities": {},
            "clientInfo": {"name": "hostile-limits", "version": "0"}}}),
        json!({"jsonrpc": "2.0", "method": "notifications/initialized"}),
        call,
    ] {
        write
            .write_all(format!("{message}\n").as_bytes())
            .await
            .expect("the server reads");
    }
    loop {
        let line = tokio::time::timeout(hostile::ANSWER_BOUND, lines.next_line())
            .await
            .expect("an answer in time")
            .expect("readable")
            .expect("the server keeps the pipe open");
        let message: Value = line.parse().expect("JSON");
        if message["id"] == json!(1) {
            return hostile::mcp::answer_of(&message);
        }
    }
}

#[tokio::test]
async fn the_run_policy_sets_the_limits_and_every_host_reads_them_alike() {
    let arguments = json!({"city": "Tokyo", "unit": "celsius"});
    let tight = || CallPolicy::new().argument_limits(ArgumentLimits::new().max_bytes(16));
    let expected =
        "Tool get_weather: arguments take at least 33 bytes as JSON; the limit is 16 (max_bytes)";
    let in_loop = through_the_loop(arguments.clone(), tight()).await;
    let over_mcp = through_mcp(arguments.clone(), tight()).await;
    for answer in [&in_loop, &over_mcp] {
        assert!(answer.is_error, "{answer:?}");
        assert_eq!(answer.text, expected);
    }
    // The defaults take the same call.
    for answer in [
        through_the_loop(arguments.clone(), CallPolicy::new()).await,
        through_mcp(arguments, CallPolicy::new()).await,
    ] {
        assert!(!answer.is_error, "{answer:?}");
        assert_eq!(answer.text, "Tokyo: 24 degrees celsius");
    }
}

#[tokio::test]
async fn depth_and_string_limits_name_what_they_saw_on_every_host() {
    let deep = json!({"city": "Tokyo", "x": [[[[1]]]]});
    let shallow = || CallPolicy::new().argument_limits(ArgumentLimits::new().max_depth(3));
    let long = json!({"city": "Tokyo!"});
    let short = || CallPolicy::new().argument_limits(ArgumentLimits::new().max_string_chars(5));
    for (arguments, policy, expected) in [
        (
            deep,
            shallow(),
            "Tool get_weather: arguments nest 5 levels deep; the limit is 3 (max_depth)",
        ),
        (
            long,
            short(),
            "Tool get_weather: the string at city is 6 characters long; the limit is 5 (max_string_chars)",
        ),
    ] {
        let in_loop = through_the_loop(arguments.clone(), policy.clone()).await;
        let over_mcp = through_mcp(arguments, policy).await;
        assert_eq!((in_loop.is_error, in_loop.text.as_str()), (true, expected));
        assert_eq!(
            (over_mcp.is_error, over_mcp.text.as_str()),
            (true, expected)
        );
    }
}
