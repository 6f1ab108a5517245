//! Registration path 1 (agent core): an `Agent` with `get_weather` as an `AgentTool`,
//! on the faux model. Run: `cargo run -p weather-example --example agent_core`.

use std::sync::Arc;

use pi_tool::IntoAgentTool;
use pi_tool::agent::{Agent, AgentOptions};
use pi_tool::json;
use pi_tool::model::{AssistantContent, Message};
use pi_tool::testing::{FauxModel, FauxTurn};
use weather_example::GetWeather;

#[tokio::main]
async fn main() {
    let model = FauxModel::new(vec![
        FauxTurn::new(vec![AssistantContent::tool_call(
            "call-1",
            "get_weather",
            json!({"city": "Paris"}),
        )]),
        FauxTurn::text("It is 18 degrees in Paris."),
    ]);
    let agent = Agent::new(
        AgentOptions::new(Arc::new(model))
            .model(FauxModel::model())
            .system_prompt("You answer weather questions.")
            .tools(vec![GetWeather.into_agent_tool()]),
    );
    agent.subscribe(|event, _signal| {
        println!("event: {}", event.name());
        Ok(())
    });
    if let Err(error) = agent.prompt("What's the weather in Paris?").await {
        eprintln!("prompt failed: {error}");
        return;
    }
    // `prompt` is `Ok` once the run ended, even after a failed model call (Pi's semantics).
    if let Err(failed) = agent.ensure_ok() {
        eprintln!("{failed}");
        return;
    }
    print_transcript(&agent.messages());
}

fn print_transcript(messages: &[Message]) {
    for message in messages {
        match message {
            Message::ToolResult(r) => {
                let text: String = r.content.iter().filter_map(|c| c.as_text()).collect();
                println!("toolResult {} (error: {}): {text}", r.tool_name, r.is_error);
            }
            Message::Assistant(a) => println!("assistant: {}", a.text()),
            Message::User(_) => println!("user: (prompt)"),
        }
    }
}
