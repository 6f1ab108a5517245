//! Pi's custom-tool page's `get_weather`, served by `weather-mcp` over stdio and consumed
//! through pi-tool-mcp's client (`McpToolset`), called by a real LLM through an `Agent` on
//! each of pi-ai's three wire APIs: the local-LLM end-to-end test of
//! `examples/weather/tests/local_llm.rs`, with MCP between the agent and the tool.
//!
//! ```sh
//! export PI_TOOL_LOCAL_LLM=$(scripts/local-llm/local-llm start)
//! cargo test -p weather-mcp --test local_llm_mcp
//! ```
//!
//! Without `PI_TOOL_LOCAL_LLM` the tests skip loudly, except under CI (`CI` set), where
//! they fail. The toolset has no name prefix, so the model sees `get_weather` exactly as
//! in process: the 135M model's recipe (`examples/weather/src/small_model.rs`) names it.

#[path = "../../weather/tests/support/local_llm.rs"]
mod harness;

use pi_tool_mcp::client::{McpServer, McpToolset};

fn round_trip(api: &str) {
    harness::weather_round_trip(api, || async {
        let server = McpServer::stdio(
            "weather",
            env!("CARGO_BIN_EXE_weather-mcp"),
            [] as [&str; 0],
        )
        .prefix("");
        let toolset = McpToolset::connect(server)
            .await
            .unwrap_or_else(|e| panic!("weather-mcp connects: {e}"));
        assert!(toolset.server_pid().is_some(), "a weather-mcp child runs");
        let tools = toolset.tools();
        assert_eq!(
            tools
                .iter()
                .map(|t| t.name().to_owned())
                .collect::<Vec<_>>(),
            ["get_weather"],
            "weather-mcp serves get_weather, unprefixed"
        );
        // The toolset lives as long as the run: dropping it ends the server.
        (tools, toolset)
    });
}

#[test]
fn get_weather_over_mcp_over_openai_completions() {
    round_trip("openai-completions");
}

#[test]
fn get_weather_over_mcp_over_openai_responses() {
    round_trip("openai-responses");
}

#[test]
fn get_weather_over_mcp_over_anthropic_messages() {
    round_trip("anthropic-messages");
}
