//! The seed guide's agent-core program: `get_weather` through an `Agent`, on the faux
//! model (no network, no API key). Ctrl-C aborts the run cleanly.
//!
//! Run from the repository root: `cargo run -p weather-example` (optionally with a city:
//! `cargo run -p weather-example -- Paris`).

use std::io::Write;
use std::sync::Arc;

use pi_tool::agent::{
    Agent, AgentEvent, AgentOptions, AssistantContent, AssistantMessageEvent, FauxModel, FauxTurn,
};
use pi_tool::{IntoAgentTool, json};
use weather_example::GetWeather;

#[tokio::main]
async fn main() {
    let city = std::env::args()
        .nth(1)
        .unwrap_or_else(|| "Tokyo".to_owned());

    // The faux model plays the part of an LLM: it asks for `get_weather`, and once the
    // tool has answered it phrases the answer (pushed by the listener below).
    let model = Arc::new(FauxModel::new(vec![FauxTurn::new(vec![
        AssistantContent::text(format!("Let me check the weather in {city}.")),
        AssistantContent::tool_call("call_1", "get_weather", json!({ "city": city })),
    ])]));

    let agent = Agent::new(
        AgentOptions::new(model.clone())
            .model(FauxModel::model())
            .system_prompt("Use get_weather for supported weather questions.")
            .tools(vec![GetWeather.into_agent_tool()]),
    );

    let answers = model.clone();
    agent.subscribe(move |event, _signal| {
        match event {
            AgentEvent::MessageUpdate {
                assistant_message_event: AssistantMessageEvent::TextDelta { delta, .. },
                ..
            } => {
                print!("{delta}");
                let _ = std::io::stdout().flush();
            }
            AgentEvent::ToolExecutionUpdate { partial_result, .. } => {
                if let Some(text) = partial_result.content.first().and_then(|c| c.as_text()) {
                    eprintln!("\n[progress] {text}");
                }
            }
            AgentEvent::ToolExecutionEnd {
                tool_name,
                is_error,
                result,
                ..
            } => {
                eprintln!(
                    "\n[tool {}] {tool_name}",
                    if *is_error { "error" } else { "done" }
                );
                let answer = if *is_error {
                    format!("Sorry, I could not look that up: {}", result.text_content())
                } else {
                    format!(
                        "According to the demo weather service: {}.",
                        result.text_content()
                    )
                };
                answers.push_turns([FauxTurn::text(answer)]);
            }
            AgentEvent::AgentEnd { .. } => println!(),
            _ => {}
        }
        Ok(())
    });

    let abort = agent.abort_handle();
    let ctrl_c = tokio::spawn(async move {
        if tokio::signal::ctrl_c().await.is_ok() {
            eprintln!("\n[aborting]");
            abort.abort();
        }
    });

    let outcome = agent
        .prompt(format!("What is the weather in {city}?"))
        .await;
    ctrl_c.abort();
    if let Err(error) = outcome {
        eprintln!("prompt failed: {error}");
        std::process::exit(1);
    }
    if let Some(error) = agent.error_message() {
        eprintln!("run ended with an error: {error}");
    }
}
