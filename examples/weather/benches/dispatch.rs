//! The JSON-level dispatch of `get_weather` (zero delay) against its floor, typed
//! deserialisation alone.
//!
//! `dispatch_from_value` is the hot path of the agent loop: the model's arguments arrive
//! parsed and are borrowed from its message; the tool coerces, validates, deserialises,
//! executes and serialises its details (to JSON text, once: `JsonDetails`), and the
//! result is dropped, as the floor drops its params. `dispatch_from_str` adds parsing the
//! arguments into a `serde_json::Value`, which the floor never builds.
//!
//! Measured on the 2-core CI machine (`cargo bench -p weather-example --bench dispatch`,
//! ratios within one run, three runs; instructions by callgrind over 10 000 calls; the
//! last two rows back to back on a quiet machine, load average 1-3):
//!
//! | | criterion, dispatch_from_value / floor | instructions per call / floor |
//! |---|---|---|
//! | 3d3028e (details built as a `Value`) | 10.5× | 10 742 / 1 110, 9.7× |
//! | 8df9927 (previous session's end) | 9.6× | 8 600 / 1 110, 7.7× |
//! | 8df9927+ (the session of 2026-11) | 4.5×, 5.0×, 4.5× (359 / 403 / 361 ns against 80 ns) | 4 839 / 1 157, 4.2× |
//! | 519feb1 (before issue 10), quiet machine, one run with the next row | 5.2× (388 ns against 75 ns) | |
//! | d5bea44 (two traits, limits on the call path, the build-time adapter) | 5.8× (437 ns against 75 ns) | |
//! | 519feb1 again, callgrind only (the same harness as the next rows) | | 4 954 / 1 160, 4.27× |
//! | cb4778e (three boxes a call: the adapter's two and the tool future's) | | 5 326 / 1 160, 4.59× |
//! | 8588f46 (two boxes again, the params' error boxed) | | 5 149 / 1 160, 4.44× |
//! | 402e05e, quiet machine, five runs back to back with the next row | 5.45×, 5.39× (412 / 405 ns against 75 ns) | 5 153 / 1 160, 4.44× |
//! | ec28a78 (one box a call, flat details' field names written whole) | 4.89×, 4.88×, 4.90×, 4.93×, 4.88× (367 ns against 75 ns) | 4 496 / 1 160, 3.88× |
//! | 72855a9 (`map_output` instead of `futures`' `Map`) | 4.91×, 4.88×, 4.96×, 4.97×, 4.87× (360 ns against 73 ns) | 4 423 / 1 160, 3.81× |
//! | 82462f6 (`ToolFuture`: the `Send` check and both conversions in one small future) | 4.79×, 4.84×, 4.83×, 4.79×, 4.80× (345 ns against 72 ns) | 4 296 / 1 160, 3.70× |
//!
//! What took it there: details cross as JSON text written once into a reused buffer
//! instead of a `Value` (an `IndexMap` with SipHash per object: 42 % of a call before);
//! arguments are borrowed instead of copied and freed per call (the copy and its seven
//! frees were a sixth of a call); the validator checks a derived struct's object in one
//! pass over its keys, skips nodes' in-place keywords when they have none and measures
//! ASCII strings without decoding them; the abort signal is shared behind an `Arc` (a
//! `CancellationToken` clone or drop takes its tree's lock); the call allocates once (the
//! tool's future is checked for `Send` without a box, and mapped instead of wrapped in
//! async blocks, which held it twice over); a flat struct's field names are written
//! whole instead of through serde_json's per-byte escaper. Where a call goes now:
//! serialising the details ≈ 1 180 instructions (its values still through serde_json),
//! validation ≈ 990, the tool body ≈ 800, deserialisation ≈ 270, the boxed future, the
//! moves of the 176-byte result and dropping it the rest.

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
