//! The per-call overhead of an MCP tool against the same tool in-process: `get_weather`
//! (zero lookup delay) called through pi-tool-core's call path (`CallPolicy::call`:
//! argument checks, execute, the result), once as a local `#[pi_tool]` tool and once as
//! the tool of an `McpToolset` connected to `weather-mcp` over stdio (a child process;
//! the call is a `tools/call` round trip, its arguments validated on both sides).
//!
//! `cargo bench -p weather-mcp --bench mcp_overhead`; the figures are in
//! `bench/README.md` (MCP client).

use std::sync::Arc;
use std::time::Duration;

use criterion::{Criterion, criterion_group, criterion_main};
use pi_tool::{
    AbortSignal, AgentTool, AgentToolResult, CallPolicy, IntoAgentTool, OnUpdate, ToolError,
    ToolInvocation, Value, pi_tool,
};
use pi_tool_mcp::client::{McpServer, McpToolset};
use weather_example::{WeatherDetails, WeatherParams, lookup_weather};

/// Return the demo temperature for Paris or Tokyo, without the demo delay.
#[pi_tool(name = "get_weather")]
async fn get_weather_instant(
    params: WeatherParams,
    signal: AbortSignal,
    on_update: OnUpdate<WeatherDetails>,
) -> Result<AgentToolResult<WeatherDetails>, ToolError> {
    lookup_weather(params, signal, on_update, Duration::ZERO).await
}

/// One call through the call path; panics unless it answers Tokyo's temperature.
async fn call(policy: &CallPolicy, tool: &dyn AgentTool, args: &Value) {
    let invocation = ToolInvocation::new("call_1", args, AbortSignal::never(), OnUpdate::none());
    let result = policy
        .call(tool, invocation)
        .await
        .expect("the call succeeds");
    assert_eq!(result.text_content(), "Tokyo: 24 degrees celsius");
}

fn overhead(c: &mut Criterion) {
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(1)
        .enable_all()
        .build()
        .expect("a runtime");
    let toolset = runtime
        .block_on(McpToolset::connect(
            McpServer::stdio(
                "weather",
                env!("CARGO_BIN_EXE_weather-mcp"),
                [] as [&str; 0],
            )
            .env("WEATHER_MCP_LOOKUP_DELAY_MS", "0")
            .trusted(true),
        ))
        .expect("weather-mcp connects");
    let remote: Arc<dyn AgentTool> = toolset.tools()[0].clone();
    let local = GetWeatherInstant.into_agent_tool();
    let policy = CallPolicy::default();
    let args: Value = serde_json::json!({"city": "Tokyo", "unit": "celsius"});

    let mut group = c.benchmark_group("get_weather_call");
    group.bench_function("in_process", |b| {
        b.iter(|| runtime.block_on(call(&policy, local.as_ref(), &args)))
    });
    group.bench_function("mcp_stdio", |b| {
        b.iter(|| runtime.block_on(call(&policy, remote.as_ref(), &args)))
    });
    group.finish();
    runtime.block_on(toolset.close());
}

criterion_group!(benches, overhead);
criterion_main!(benches);
