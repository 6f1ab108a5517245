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
//!     signal.check()?;
//!     let city = params.city.trim().to_owned();
//!     let celsius = match city.to_lowercase().as_str() {
//!         "paris" => 18,
//!         "tokyo" => 24,
//!         _ => return Err(ToolError::new(format!("Unsupported city: {city}"))),
//!     };
//!     on_update.send(AgentToolResult::text(
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
//! pi-tool is the runtime around the tool contract. The contract itself (the [`Tool`] and
//! [`AgentTool`] traits, what crosses a call, the argument pipeline, packs, the safety
//! helpers and the one call path, [`CallPolicy`]) is [`pi_tool_core`]'s, and its crate docs
//! explain it; pi-tool re-exports all of it at the same paths, so a host needs one
//! dependency. What pi-tool adds, each Pi's or pi-ai's:
//!
//! - [`model`]: pi-ai's layer, messages, the [`StreamFn`](model::StreamFn) a model is, and
//!   its events; [`providers`] (cargo features) speak pi-ai 0.85.0's three wire APIs.
//! - [`agent`]: Pi's loop. [`agent::Agent`] runs batches of tool calls, parallel or
//!   sequential, with `before_tool_call` / `after_tool_call` hooks between the call path's
//!   steps, abort and events. Nothing escapes a tool: an error, a panic, a timeout or an
//!   abort becomes an error tool result, and every call gets exactly one result.
//! - [`session`]: [`session::AgentSession`] adds Pi's registry, extensions, active tools
//!   and system prompt.
//! - [`testing`]: the faux model, one tool through the real call path in two lines, and
//!   the check that every tool accepts what its own schema allows.
//!
//! Where pi-tool deliberately differs from Pi, `docs/differences-from-pi.md` says so, each
//! difference with its test.
#![warn(missing_docs)]
// docs.rs (`--cfg docsrs`, see Cargo.toml) badges each feature-gated item with its feature.
#![cfg_attr(docsrs, feature(doc_cfg))]

pub mod agent;
pub mod durable;
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
#[cfg(feature = "testing")]
#[cfg_attr(docsrs, doc(cfg(feature = "testing")))]
pub mod testing;

// The tool contract: everything the core exports, at the same paths, in one line so that
// the list cannot drift. The items below shadow the glob where pi-tool adds to the core:
// the macros name `::pi_tool` in their generated code, and `model` adds pi-ai's layer to
// the core's `Model` descriptor.
pub use pi_tool_core::*;

// JavaScript semantics, one copy in the core; the providers (behind features) use it.
#[allow(unused_imports)]
pub(crate) use pi_tool_core::__runtime::js;

#[cfg(fuzzing)]
#[doc(hidden)]
pub mod __fuzz;

pub use pi_tool_macros::{output, params, pi_tool, pi_tools};
