use pi_tool::{pi_tool, AgentToolResult, OnUpdate, ToolError};
use serde::Deserialize;

#[derive(Deserialize, pi_tool::JsonSchema)]
#[schemars(crate = "pi_tool::schemars")]
pub struct Params {
    pub city: String,
}

#[derive(serde::Serialize)]
pub struct WeatherDetails {
    pub city: String,
}

/// Return the weather for a city.
#[pi_tool]
pub async fn get_weather(params: Params, on_update: OnUpdate<String>) -> Result<AgentToolResult<WeatherDetails>, ToolError> {
    let _ = on_update;
    Ok(AgentToolResult::text("ok", WeatherDetails { city: params.city }))
}

fn main() {}
