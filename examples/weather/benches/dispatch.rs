//! The JSON-level dispatch of `get_weather` (zero delay) against its floor, typed
//! deserialisation alone.
//!
//! `dispatch_from_value` is the hot path of the agent loop: the model's arguments arrive
//! parsed and are borrowed from its message; the tool coerces, validates, deserialises,
//! executes and serialises its details (to JSON text, once: `JsonDetails`), and the
//! result is dropped, as the floor drops its params. `dispatch_from_str` adds parsing the
//! arguments into a `serde_json::Value`, which the floor never builds.
//!
//! `cargo bench -p weather-example --bench dispatch`; the figures, their history and
//! where a call's time goes are in `bench/README.md` (dispatch).

use std::hint::black_box;
use std::pin::pin;
use std::task::{Context, Poll, Waker};
use std::time::Duration;

use criterion::{Criterion, criterion_group, criterion_main};
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

/// Runs one call to completion; a zero-delay tool never suspends, so one poll suffices.
/// The result is dropped inside the measurement, as the floor drops its params.
fn call(tool: &dyn AgentTool, args: &Value, signal: &AbortSignal) -> bool {
    let params = tool.check_arguments(args).expect("valid arguments");
    let future = pin!(tool.execute(ToolInvocation::new(
        "call_1",
        &params,
        signal.clone(),
        OnUpdate::none()
    )));
    match future.poll(&mut Context::from_waker(Waker::noop())) {
        // The details are JSON text by now (serialised once, as the loop hands them on).
        Poll::Ready(result) => result.expect("tool succeeds").details.is_some(),
        Poll::Pending => panic!("a zero-delay call suspended"),
    }
}

fn dispatch(c: &mut Criterion) {
    let tool = GetWeatherInstant.into_agent_tool();
    let parsed: Value = serde_json::from_str(ARGS).unwrap();
    // The run's signal, shared by every call as in the agent loop.
    let signal = AbortSignal::never();
    let mut group = c.benchmark_group("get_weather");
    group.bench_function("floor_from_str_typed", |b| {
        b.iter(|| serde_json::from_str::<WeatherParams>(black_box(ARGS)).unwrap())
    });
    // The loop borrows each call's arguments from the assistant message.
    group.bench_function("dispatch_from_value", |b| {
        b.iter(|| call(&*tool, black_box(&parsed), &signal))
    });
    group.bench_function("dispatch_from_str", |b| {
        b.iter(|| {
            let args: Value = serde_json::from_str(black_box(ARGS)).unwrap();
            call(&*tool, &args, &signal)
        })
    });
    group.finish();
}

criterion_group!(benches, dispatch);
criterion_main!(benches);
