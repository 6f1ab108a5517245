//! The spans of one agent run, printed by `tracing-subscriber`'s `fmt` layer: offline, on
//! the faux model, which asks for the weather of two cities at once and then answers.
//!
//! ```text
//! cargo run -p pi-tool --example tracing
//! ```
//!
//! Each span is printed when it closes, inside its parents (`invoke_agent:turn:chat`,
//! `invoke_agent:turn:execute_tool`), with its OpenTelemetry GenAI fields; the progress
//! updates are DEBUG events inside their call's span. The policy turns on
//! `trace_content`, so the arguments and results are in the spans too, with the
//! configured secret redacted.
//!
//! To export the same spans to an OpenTelemetry collector, put `tracing-opentelemetry`'s
//! layer into the subscriber instead of (or beside) `fmt`; it reads `otel.name`,
//! `otel.kind` and `otel.status_code` and names the exported spans `chat fake-1`,
//! `execute_tool get_weather`:
//!
//! ```ignore
//! use tracing_subscriber::layer::SubscriberExt;
//! let tracer = /* an opentelemetry_sdk tracer, e.g. with an OTLP exporter */;
//! let subscriber = tracing_subscriber::registry()
//!     .with(tracing_opentelemetry::layer().with_tracer(tracer));
//! tracing::subscriber::set_global_default(subscriber)?;
//! ```

use std::sync::Arc;
use std::time::Duration;

use pi_tool::agent::{Agent, AgentOptions, RunPolicy};
use pi_tool::model::AssistantContent;
use pi_tool::safety::Redactor;
use pi_tool::testing::{FauxModel, FauxTurn};
use pi_tool::{AbortSignal, AgentToolResult, CallPolicy, OnUpdate, ToolError, json, pi_tool};
use tracing_subscriber::fmt::format::FmtSpan;

/// The demo's API key: it must never appear in a trace.
const API_KEY: &str = "sk-demo-0123456789abcdef";

#[pi_tool::params]
pub struct WeatherParams {
    /// Paris or Tokyo.
    pub city: String,
    /// The key of the (imaginary) weather service.
    pub api_key: String,
}

/// The demo temperature of Paris or Tokyo.
#[pi_tool(name = "get_weather")]
async fn get_weather(
    params: WeatherParams,
    signal: AbortSignal,
    on_update: OnUpdate<()>,
) -> Result<AgentToolResult<()>, ToolError> {
    on_update.send(AgentToolResult::text(
        format!("Checking {}...", params.city),
        (),
    ));
    signal.sleep(Duration::from_millis(50)).await?;
    let celsius = match params.city.as_str() {
        "Paris" => 18,
        "Tokyo" => 24,
        other => return Err(ToolError::new(format!("Unsupported city: {other}"))),
    };
    Ok(AgentToolResult::text(
        format!("{}: {celsius}°C", params.city),
        (),
    ))
}

fn weather_call(id: &str, city: &str) -> AssistantContent {
    AssistantContent::tool_call(id, "get_weather", json!({"city": city, "api_key": API_KEY}))
}

#[tokio::main(flavor = "current_thread")]
async fn main() -> Result<(), Box<dyn std::error::Error + Send + Sync>> {
    tracing_subscriber::fmt()
        .with_max_level(tracing::Level::DEBUG)
        .with_span_events(FmtSpan::CLOSE)
        .with_target(false)
        .without_time()
        .try_init()?;

    let model = FauxModel::new(vec![
        FauxTurn::new(vec![
            weather_call("call_paris", "Paris"),
            weather_call("call_tokyo", "Tokyo"),
        ]),
        FauxTurn::text("Paris is at 18°C and Tokyo at 24°C."),
    ]);
    let policy = RunPolicy::new().call(
        CallPolicy::new()
            .trace_content(true)
            .redact_secrets(Redactor::new([API_KEY])?),
    );
    let agent = Agent::new(
        AgentOptions::new(Arc::new(model))
            .model(FauxModel::model())
            .tools(pi_tool::tool_pack![GetWeather].tools())
            .policy(policy),
    );
    agent
        .prompt("What is the weather in Paris and Tokyo?")
        .await?;
    Ok(())
}
