//! Pi's four-argument form: call id, params, signal, on_update.
use pi_tool::{AbortSignal, AgentToolResult, IntoAgentTool, OnUpdate, ToolError, pi_tool};
use serde::{Deserialize, Serialize};

#[derive(Deserialize, pi_tool::JsonSchema)]
#[schemars(crate = "pi_tool::schemars")]
pub struct WeatherParams {
    /// City name. This demo supports Paris and Tokyo.
    #[schemars(length(min = 1, max = 80))]
    pub city: String,
    pub unit: Option<Unit>,
}

#[derive(Debug, Clone, Copy, Serialize, Deserialize, pi_tool::JsonSchema)]
#[schemars(crate = "pi_tool::schemars")]
#[serde(rename_all = "lowercase")]
pub enum Unit {
    Celsius,
    Fahrenheit,
}

#[derive(Serialize)]
pub struct WeatherDetails {
    pub phase: &'static str,
    pub city: String,
}

/// Return the demo temperature for Paris or Tokyo. Use only for a weather or
/// temperature question about one of those cities.
#[pi_tool(name = "get_weather", label = "Get weather", execution_mode = "parallel")]
pub async fn get_weather(
    call_id: &str,
    params: WeatherParams,
    signal: AbortSignal,
    on_update: OnUpdate<WeatherDetails>,
) -> Result<AgentToolResult<WeatherDetails>, ToolError> {
    let _ = (call_id, signal, params.unit);
    on_update.send(AgentToolResult::text("Checking...", WeatherDetails { phase: "lookup", city: params.city.clone() }));
    Ok(AgentToolResult::text("18", WeatherDetails { phase: "done", city: params.city }))
}

fn main() {
    let tool = GetWeather.into_agent_tool();
    assert_eq!(tool.name(), "get_weather");
}
