//! Real models: pi-ai 0.85.0's three wire APIs as [`StreamFn`]s, and its model registry.
//!
//! A provider turns one model call into an HTTP request (the one pi-ai builds for the
//! same model, context and options), streams the SSE response, and emits pi-ai's
//! [`AssistantMessageEvent`](crate::model::AssistantMessageEvent)s, ending with `done` or
//! `error`. Every failure (an HTTP error, a broken stream, a dropped connection, an abort)
//! ends the stream with an `error` event carrying pi-ai's text; nothing panics and nothing
//! is thrown. The run's abort signal cancels the request at once.
//!
//! | API (`model.api`) | type | cargo feature |
//! | --- | --- | --- |
//! | `anthropic-messages` | [`AnthropicMessages`] | `anthropic-messages` |
//! | `openai-completions` (also llama.cpp, Ollama, vLLM, LM Studio, OpenRouter) | [`OpenAiCompletions`] | `openai-completions` |
//! | `openai-responses` | [`OpenAiResponses`] | `openai-responses` |
//!
//! [`Providers`] routes each call by `model.api` to the enabled provider; the feature
//! `providers` enables all three. API keys come from
//! [`StreamOptions::api_key`](crate::model::StreamOptions) or the provider's environment
//! variable ([`env_api_key`]), and never appear in an error, an event or `Debug` output.
//!
//! `get_weather` from Pi's custom-tool page on a registry model (with `ANTHROPIC_API_KEY` set), or on any
//! OpenAI-compatible server such as a local llama.cpp, Ollama or vLLM:
//!
//! ```no_run
//! # #[cfg(feature = "providers")]
//! # async fn run() -> Result<(), Box<dyn std::error::Error>> {
//! use pi_tool::agent::{Agent, AgentOptions};
//! use pi_tool::model::{Model, StreamOptions};
//! use pi_tool::providers::{self, builtin_models};
//! use pi_tool::{IntoAgentTool, ToolError, pi_tool};
//!
//! #[pi_tool::params]
//! struct WeatherParams {
//!     /// City name.
//!     city: String,
//! }
//!
//! /// Return the demo temperature for Paris or Tokyo.
//! #[pi_tool(name = "get_weather")]
//! async fn get_weather(params: WeatherParams) -> Result<String, ToolError> {
//!     Ok(format!("{}: 24 degrees celsius", params.city))
//! }
//!
//! // pi-ai 0.85.0's own data for the model; the key comes from the environment.
//! let model = builtin_models()
//!     .get_model("anthropic", "claude-sonnet-4-5")
//!     .expect("in pi-ai's registry");
//! let agent = Agent::new(
//!     AgentOptions::new(providers::router())
//!         .model(model)
//!         .tools(vec![GetWeather.into_agent_tool()]),
//! );
//! agent.prompt("What is the weather in Tokyo?").await?; // Err only when the run cannot start
//! agent.ensure_ok()?; // Err when the model call failed ("Connection error.", a 401, ...)
//!
//! // A model on any OpenAI-compatible server, with the key in the options.
//! let local = Agent::new(
//!     AgentOptions::new(providers::router())
//!         .model(Model::openai_compatible("http://127.0.0.1:11434/v1", "llama3.2"))
//!         .stream_options(StreamOptions {
//!             api_key: Some("ollama".into()),
//!             ..StreamOptions::default()
//!         })
//!         .tools(vec![GetWeather.into_agent_tool()]),
//! );
//! local.prompt("What is the weather in Paris?").await?;
//! local.ensure_ok()?;
//! # Ok(())
//! # }
//! ```

#[cfg(feature = "anthropic-messages")]
mod anthropic;
mod cost;
mod env;
#[cfg(any(feature = "openai-completions", feature = "openai-responses"))]
mod error_body;
#[cfg(any(feature = "openai-completions", feature = "openai-responses"))]
pub(crate) mod hash;
mod http;

#[cfg(any(feature = "openai-completions", feature = "openai-responses"))]
mod models;
#[cfg(feature = "openai-completions")]
mod openai_completions;
#[cfg(feature = "openai-responses")]
mod openai_responses;
#[cfg(any(feature = "openai-completions", feature = "openai-responses"))]
pub(crate) mod openai_sse;
pub(crate) mod options;
pub(crate) mod partial_json;
mod retry;
mod stream;
pub(crate) mod transform;

use std::sync::Arc;

use crate::model::{AssistantMessageStream, Context, Model, StreamFn, StreamOptions};

#[cfg(feature = "anthropic-messages")]
pub use anthropic::AnthropicMessages;
pub use env::env_api_key;
pub use http::user_agent;
pub use models::{ModelRegistry, builtin_models};
#[cfg(feature = "openai-completions")]
pub use openai_completions::{OpenAiCompletions, OpenAiCompletionsCompat};
#[cfg(feature = "openai-responses")]
pub use openai_responses::{OpenAiResponses, OpenAiResponsesCompat};

/// Routes each model call to the provider of its `model.api` (pi-ai's API registry),
/// among the providers this build enables.
#[derive(Clone, Debug, Default)]
pub struct Providers {
    http: http::Http,
}

impl Providers {
    /// A router with one pooled HTTP client shared by every provider.
    pub fn new() -> Self {
        Providers::default()
    }

    /// The wire APIs this build can call.
    pub fn apis() -> &'static [&'static str] {
        &[
            #[cfg(feature = "anthropic-messages")]
            "anthropic-messages",
            #[cfg(feature = "openai-completions")]
            "openai-completions",
            #[cfg(feature = "openai-responses")]
            "openai-responses",
        ]
    }
}

impl StreamFn for Providers {
    fn stream(
        &self,
        model: &Model,
        context: &Context,
        options: StreamOptions,
    ) -> AssistantMessageStream {
        match model.api.as_str() {
            #[cfg(feature = "anthropic-messages")]
            "anthropic-messages" => {
                return AnthropicMessages::with_http(self.http.clone())
                    .stream(model, context, options);
            }
            #[cfg(feature = "openai-completions")]
            "openai-completions" => {
                return OpenAiCompletions::with_http(self.http.clone())
                    .stream(model, context, options);
            }
            #[cfg(feature = "openai-responses")]
            "openai-responses" => {
                return OpenAiResponses::with_http(self.http.clone())
                    .stream(model, context, options);
            }
            _ => {}
        }
        let _ = (&self.http, context, &options);
        stream::failed(
            model,
            format!(
                "No provider for API: {} (this build has: {})",
                model.api,
                Providers::apis().join(", ")
            ),
        )
    }
}

/// Every provider of this build behind one [`StreamFn`] that routes each request by
/// `model.api`, shareable, for `AgentOptions::new` (a [`Providers`] in an `Arc`).
pub fn router() -> Arc<dyn StreamFn> {
    Arc::new(Providers::new())
}
