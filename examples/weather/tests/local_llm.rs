//! `get_weather` from Pi's custom-tool page through an `Agent` against a real LLM, on each of pi-ai's three
//! wire APIs: SmolLM2-135M-Instruct under llama.cpp's `llama-server` on 127.0.0.1, which
//! speaks `/v1/chat/completions`, `/v1/responses` and `/v1/messages`. The same round trip
//! over MCP is `examples/weather-mcp/tests/local_llm_mcp.rs`; both share
//! `tests/support/local_llm.rs`.
//!
//! Set-up (once about 15 minutes on 2 cores, then cached):
//!
//! ```sh
//! export PI_TOOL_LOCAL_LLM=$(scripts/local-llm/local-llm start)
//! cargo test -p weather-example --test local_llm
//! ```
//!
//! Without `PI_TOOL_LOCAL_LLM` the tests skip loudly, except under CI (`CI` set), where
//! they fail: `.ci/run` starts the server. The assertions are about structure (a call to
//! `get_weather` with a city, the Rust tool's result, a text answer, an abort's stop
//! reason), never about the model's words.

#[path = "support/local_llm.rs"]
mod harness;

use std::sync::Arc;

use pi_tool::{AgentTool, IntoAgentTool};
use weather_example::GetWeather;

fn get_weather() -> Vec<Arc<dyn AgentTool>> {
    vec![GetWeather.into_agent_tool()]
}

fn round_trip(api: &str) {
    harness::weather_round_trip(api, || async { (get_weather(), ()) });
}

#[test]
fn get_weather_over_openai_completions() {
    round_trip("openai-completions");
}

#[test]
fn get_weather_over_openai_responses() {
    round_trip("openai-responses");
}

#[test]
fn get_weather_over_anthropic_messages() {
    round_trip("anthropic-messages");
}

#[test]
fn abort_mid_stream_over_openai_completions() {
    harness::abort_mid_stream("openai-completions", get_weather());
}

#[test]
fn abort_mid_stream_over_openai_responses() {
    harness::abort_mid_stream("openai-responses", get_weather());
}

#[test]
fn abort_mid_stream_over_anthropic_messages() {
    harness::abort_mid_stream("anthropic-messages", get_weather());
}
