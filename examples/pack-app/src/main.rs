//! Mounts two tool packs from other crates into one agent, on the faux model.
//!
//! Run: `cargo run -p pack-app`.

use std::sync::Arc;

use pi_tool::agent::{Agent, AgentEvent, AgentOptions};
use pi_tool::model::AssistantContent;
use pi_tool::pack::ToolPack;
use pi_tool::testing::{FauxModel, FauxTurn};
use pi_tool::{json, tool_pack};
use weather_example::GetWeather;

/// The application's tools: the weather example's `get_weather` and the forecast pack.
fn tools() -> Result<ToolPack, pi_tool::pack::PackError> {
    let weather: ToolPack = tool_pack![GetWeather];
    weather.merge(forecast_pack::pack())
}

#[tokio::main]
async fn main() {
    let pack = match tools() {
        Ok(pack) => pack,
        Err(error) => {
            eprintln!("cannot mount the tools: {error}");
            std::process::exit(1);
        }
    };
    for entry in pack.entries() {
        println!("mounted {} (from {})", entry.tool.spec().name, entry.owner);
    }
    let model = FauxModel::new(vec![
        FauxTurn::new(vec![
            AssistantContent::tool_call("c1", "get_forecast", json!({"city": "Paris", "days": 2})),
            AssistantContent::tool_call(
                "c2",
                "convert_temperature",
                json!({"value": 20, "from": "celsius"}),
            ),
        ]),
        FauxTurn::text("Paris: 18 and 20 °C, that is up to 68 °F."),
    ]);
    let agent = Agent::new(AgentOptions::new(Arc::new(model)).tools(pack.tools()));
    agent.subscribe(|event, _| {
        if let AgentEvent::ToolExecutionEnd {
            tool_name, result, ..
        } = event
        {
            println!("[tool done] {tool_name}: {}", result.text_content());
        }
        Ok(())
    });
    if let Err(error) = agent.prompt("Forecast for Paris, in Fahrenheit too?").await {
        eprintln!("prompt failed: {error}");
        std::process::exit(1);
    }
    // `prompt` is `Ok` once the run ended, even after a failed model call (Pi's semantics).
    if let Err(failed) = agent.ensure_ok() {
        eprintln!("{failed}");
        std::process::exit(1);
    }
    if let Some(answer) = agent.messages().last().and_then(|m| m.as_assistant()) {
        println!("{}", answer.text());
    }
}
