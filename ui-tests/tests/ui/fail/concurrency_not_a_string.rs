use pi_tool::{pi_tool, ToolError};
use serde::Deserialize;

#[derive(Deserialize, pi_tool::JsonSchema)]
#[schemars(crate = "pi_tool::schemars")]
pub struct Params {
    pub city: String,
}

/// Return the weather for a city.
#[pi_tool(concurrency = browser)]
pub async fn get_weather(params: Params) -> Result<String, ToolError> {
    Ok(params.city)
}

fn main() {}
