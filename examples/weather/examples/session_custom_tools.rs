//! Registration path 2: an `AgentSession` with `get_weather` as a custom tool and an
//! allowlist, on the faux model. Prints the generated system prompt and the transcript.
//! Run: `cargo run -p weather-example --example session_custom_tools`.

use std::sync::Arc;

use pi_tool::json;
use pi_tool::model::AssistantContent;
use pi_tool::session::AgentSession;
use pi_tool::testing::{FauxModel, FauxTurn};
use weather_example::GetWeather;

#[tokio::main]
async fn main() {
    let model = FauxModel::new(vec![
        FauxTurn::new(vec![AssistantContent::tool_call(
            "call-1",
            "get_weather",
            json!({"city": "Tokyo", "unit": "fahrenheit"}),
        )]),
        FauxTurn::text("It is 75 degrees in Tokyo."),
    ]);
    let session = match AgentSession::builder(Arc::new(model))
        .model(FauxModel::model())
        .custom_tool(GetWeather)
        .tools(["get_weather"])
        .build()
    {
        Ok(session) => session,
        Err(error) => {
            eprintln!("session refused to build: {error}");
            return;
        }
    };
    println!("active tools: {:?}", session.active_tool_names());
    println!("--- system prompt ---\n{}\n---", session.system_prompt());
    if let Err(error) = session.prompt("What's the weather in Tokyo?").await {
        eprintln!("prompt failed: {error}");
        return;
    }
    // `prompt` is `Ok` once the run ended, even after a failed model call (Pi's semantics).
    if let Err(failed) = session.ensure_ok() {
        eprintln!("{failed}");
        return;
    }
    for message in session.transcript().messages() {
        if let Some(r) = message.as_tool_result() {
            let text: String = r.content.iter().filter_map(|c| c.as_text()).collect();
            println!("toolResult {}: {text}", r.tool_name);
        } else if let Some(a) = message.as_assistant() {
            println!("assistant: {}", a.text());
        }
    }
}
