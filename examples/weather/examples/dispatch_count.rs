//! The dispatch bench's call (`benches/dispatch.rs`) in a plain loop, for counting
//! instructions: `cargo build --release -p weather-example --example dispatch_count`, then
//! `valgrind --tool=callgrind target/release/examples/dispatch_count 10000` and the same
//! with `floor`. The difference over the loop count is the per-call cost; counts do not
//! depend on the machine's load, where criterion's times on two shared cores do.

use std::hint::black_box;
use std::pin::pin;
use std::task::{Context, Poll, Waker};
use std::time::Duration;

use pi_tool::ToolInvocation;
use pi_tool::{
    AbortSignal, AgentTool, AgentToolResult, IntoAgentTool, OnUpdate, ToolError, Value, pi_tool,
};
use weather_example::{WeatherDetails, WeatherParams, lookup_weather};

const ARGS: &str = r#"{"city":"Tokyo","unit":"celsius"}"#;

/// Return the demo temperature for Paris or Tokyo, without the demo delay.
#[pi_tool(name = "get_weather")]
async fn get_weather_instant(
    params: WeatherParams,
    signal: AbortSignal,
    on_update: OnUpdate<WeatherDetails>,
) -> Result<AgentToolResult<WeatherDetails>, ToolError> {
    lookup_weather(params, signal, on_update, Duration::ZERO).await
}

fn call(tool: &dyn AgentTool, args: &Value, signal: &AbortSignal) -> bool {
    let Ok(params) = tool.check_arguments(args) else {
        return false;
    };
    let future = pin!(tool.execute(ToolInvocation::new(
        "call_1",
        &params,
        signal.clone(),
        OnUpdate::none()
    )));
    match future.poll(&mut Context::from_waker(Waker::noop())) {
        Poll::Ready(Ok(result)) => result.details.is_some(),
        _ => false,
    }
}

fn main() {
    let mut args = std::env::args().skip(1);
    let n: usize = args.next().and_then(|n| n.parse().ok()).unwrap_or(10_000);
    let floor = args.next().as_deref() == Some("floor");
    let tool = GetWeatherInstant.into_agent_tool();
    let parsed: Value = serde_json::from_str(ARGS).unwrap_or_default();
    let signal = AbortSignal::never();
    let mut ok = 0usize;
    for _ in 0..n {
        let done = if floor {
            serde_json::from_str::<WeatherParams>(black_box(ARGS)).is_ok()
        } else {
            call(&*tool, black_box(&parsed), &signal)
        };
        ok += usize::from(done);
    }
    assert_eq!(ok, n, "every call succeeds");
    println!("{n} {}", if floor { "floor" } else { "dispatch" });
}
