//! pi-tool: define the tools LLM agents call, with the semantics of Pi 0.85.0.
//!
//! Write an `async fn`, put `#[pi_tool]` on it, and get a tool: a JSON Schema generated
//! from the params type, label and description metadata, and the adapters that let an
//! agent loop, a session, or an MCP client call it. `get_weather` from Pi's custom-tool page, end to
//! end on the offline faux model:
//!
//! ```
//! use std::sync::Arc;
//! use std::time::Duration;
//!
//! use pi_tool::agent::{Agent, AgentEvent, AgentOptions};
//! use pi_tool::model::AssistantContent;
//! use pi_tool::testing::{FauxModel, FauxTurn};
//! use pi_tool::{AbortSignal, AgentToolResult, IntoAgentTool, OnUpdate, ToolError, json, pi_tool};
//! use serde::Serialize;
//!
//! /// The model's arguments; field docs become property descriptions.
//! #[pi_tool::params] // derives Deserialize + JsonSchema through pi-tool
//! #[serde(deny_unknown_fields)]
//! struct WeatherParams {
//!     /// City name. This demo supports Paris and Tokyo.
//!     #[schemars(length(min = 1, max = 80))]
//!     city: String,
//!     unit: Option<Unit>,
//! }
//!
//! #[pi_tool::params]
//! #[derive(Clone, Copy)]
//! #[serde(rename_all = "lowercase")]
//! enum Unit { Celsius, Fahrenheit }
//!
//! /// What hosts and UIs see; never sent to the model.
//! #[derive(Serialize)]
//! struct WeatherDetails { city: String, temperature: Option<i64> }
//!
//! /// Return the demo temperature for Paris or Tokyo. Use only for a weather or
//! /// temperature question about one of those cities.
//! #[pi_tool(name = "get_weather", label = "Get weather", execution_mode = "parallel")]
//! async fn get_weather(
//!     _call_id: &str,
//!     params: WeatherParams,
//!     signal: AbortSignal,
//!     on_update: OnUpdate<WeatherDetails>,
//! ) -> Result<AgentToolResult<WeatherDetails>, ToolError> {
//!     signal.throw_if_aborted()?;
//!     let city = params.city.trim().to_owned();
//!     let celsius = match city.to_lowercase().as_str() {
//!         "paris" => 18,
//!         "tokyo" => 24,
//!         _ => return Err(ToolError::new(format!("Unsupported city: {city}"))),
//!     };
//!     on_update.call(AgentToolResult::text(
//!         format!("Checking {city}..."),
//!         WeatherDetails { city: city.clone(), temperature: None },
//!     ));
//!     signal.sleep(Duration::from_millis(200)).await?;
//!     let (temperature, unit) = match params.unit.unwrap_or(Unit::Celsius) {
//!         Unit::Celsius => (celsius, "celsius"),
//!         Unit::Fahrenheit => ((celsius as f64 * 9.0 / 5.0 + 32.0).round() as i64, "fahrenheit"),
//!     };
//!     Ok(AgentToolResult::text(
//!         format!("{city}: {temperature} degrees {unit}"),
//!         WeatherDetails { city, temperature: Some(temperature) },
//!     ))
//! }
//!
//! # #[tokio::main(flavor = "current_thread")]
//! # async fn main() {
//! // A scripted model asks for the tool, then answers.
//! let model = FauxModel::new(vec![
//!     FauxTurn::new(vec![AssistantContent::tool_call("call_1", "get_weather", json!({"city": "Tokyo"}))]),
//!     FauxTurn::text("It is 24 degrees in Tokyo."),
//! ]);
//! let agent = Agent::new(
//!     AgentOptions::new(Arc::new(model))
//!         .system_prompt("Use get_weather for supported weather questions.")
//!         .tools(vec![GetWeather.into_agent_tool()]),
//! );
//! let log = Arc::new(std::sync::Mutex::new(Vec::new()));
//! let sink = log.clone();
//! agent.subscribe(move |event, _signal| {
//!     match event {
//!         AgentEvent::ToolExecutionUpdate { partial_result, .. } => {
//!             sink.lock().unwrap().push(format!("[progress] {}", partial_result.text_content()));
//!         }
//!         AgentEvent::ToolExecutionEnd { tool_name, result, .. } => {
//!             sink.lock().unwrap().push(format!("[tool done] {tool_name}: {}", result.text_content()));
//!         }
//!         _ => {}
//!     }
//!     Ok(())
//! });
//! agent.prompt("What is the weather in Tokyo?").await.unwrap();
//! // `prompt` is `Ok` even when the model call failed, as in Pi; `ensure_ok` says so.
//! agent.ensure_ok().unwrap();
//! assert_eq!(
//!     *log.lock().unwrap(),
//!     ["[progress] Checking Tokyo...", "[tool done] get_weather: Tokyo: 24 degrees celsius"]
//! );
//! # }
//! ```
//!
//! # The model
//!
//! A tool call travels through three layers, each Pi's, each usable on its own:
//!
//! 1. **The tool contract.** Two traits: [`Tool`], typed, which `#[pi_tool]` implements,
//!    and [`AgentTool`], Pi's `execute` at JSON level, object safe: hosts hold
//!    `Arc<dyn AgentTool>`. Each call arrives as one [`ToolInvocation`] (Pi's
//!    `toolCallId, params, signal, onUpdate` and, where a session runs it, the fifth
//!    argument, the [`ExtensionContext`](context::ExtensionContext)); [`wrap_tool_definition`] is Pi's 5-to-4
//!    adapter, binding a fresh context per call. One generic adapter
//!    ([`IntoAgentTool`]) turns a typed tool into the JSON level, where a
//!    result's typed details become [`JsonDetails`]: JSON text made once, parsed into a
//!    `Value` only if someone reads it as one.
//! 2. **The argument pipeline.** Each tool's [`ToolSchema`](schema::ToolSchema) is generated once (schemars,
//!    normalised for every provider) and compiled once. The model's arguments are
//!    untrusted: they go through `prepare_arguments`, Pi's null normalisation and
//!    coercion, validation against exactly the schema the model saw, then serde. A
//!    failure is an error result with Pi's text, so the model can retry. Arguments are
//!    borrowed from the model's message all the way to `execute`, and copied only where a
//!    step changes them.
//! 3. **The runtime.** [`agent::Agent`] runs Pi's loop: batches of tool calls, parallel or
//!    sequential, `before_tool_call` / `after_tool_call` hooks, abort, events.
//!    [`session::AgentSession`] adds Pi's registry, extensions, active tools and system
//!    prompt. Nothing escapes a tool: an error, a panic, a timeout or an abort becomes an
//!    error tool result, and every call gets exactly one result.
//!
//! Around them: [`pack`] ships tools as crates with unique names, [`profiles`] lowers
//! schemas to each provider's dialect, [`safety`] has the helpers for paths, commands,
//! result budgets and secrets. Where pi-tool deliberately differs from Pi,
//! `docs/differences-from-pi.md` says so, each difference with its test.
#![warn(missing_docs)]
// docs.rs (`--cfg docsrs`, see Cargo.toml) badges each feature-gated item with its feature.
#![cfg_attr(docsrs, feature(doc_cfg))]

pub mod agent;
pub mod model;
#[cfg(any(
    feature = "anthropic-messages",
    feature = "openai-completions",
    feature = "openai-responses"
))]
#[cfg_attr(
    docsrs,
    doc(cfg(any(
        feature = "anthropic-messages",
        feature = "openai-completions",
        feature = "openai-responses"
    )))
)]
pub mod providers;
pub mod session;
pub mod testing;

// The tool contract, from the core crate that tool packs depend on, at the same paths.
pub use pi_tool_core::{
    ABORTED_MESSAGE, AbortController, AbortSignal, AgentTool, AgentToolResult, CallFailure,
    CallPolicy, CallSpan, Content, DynamicToolset, EmbeddedResource, IntoAgentTool, IntoToolResult,
    Json, JsonDetails, JsonToolResult, NoDetails, NoParams, OnUpdate, ResourceLink, TaskSupport,
    Tool, ToolAnnotations, ToolError, ToolErrorKind, ToolExecutionMode, ToolInvocation, ToolSpec,
    ToolsetListener, ToolsetSubscription, call_contained, check_contained, execute_contained,
    tool_pack, wrap_tool_definition,
};
pub use pi_tool_core::{bounds, context, pack, profiles, safety, schema};

#[doc(hidden)]
pub use pi_tool_core::__private;

// JavaScript semantics, one copy in the core; the providers (behind features) use it.
#[allow(unused_imports)]
pub(crate) use pi_tool_core::__runtime::js;

#[cfg(fuzzing)]
#[doc(hidden)]
pub mod __fuzz;

pub use pi_tool_macros::{output, params, pi_tool, pi_tools};

pub use pi_tool_core::JsonSchema;
/// Re-exported so that tool crates need no direct dependency on them.
pub use pi_tool_core::async_trait;
pub use pi_tool_core::{Value, json};

#[doc(hidden)]
pub use pi_tool_core::__tracing;

/// The schemars version pi-tool generates schemas with. A params type deriving
/// [`JsonSchema`] without its own schemars dependency names it:
/// `#[schemars(crate = "pi_tool::schemars")]`.
pub use pi_tool_core::schemars;
