//! `#[pi_tool::output]`: a structured result type in one line.
use pi_tool::{pi_tool, IntoAgentTool, Json, ToolError};

/// A forecast.
#[pi_tool::output]
pub struct Forecast {
    /// Degrees celsius.
    pub celsius: i32,
}

/// Return the forecast.
#[pi_tool(read_only)]
pub async fn get_forecast() -> Result<Json<Forecast>, ToolError> {
    Ok(Json(Forecast { celsius: 18 }))
}

fn main() {
    let tool = GetForecast.into_agent_tool();
    let schema = tool.spec().output_schema.clone().expect("an output schema");
    assert_eq!(schema.json()["properties"]["celsius"]["description"], "Degrees celsius.");
}
