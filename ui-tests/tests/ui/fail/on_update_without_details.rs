use pi_tool::{pi_tool, ToolError};
use serde::Deserialize;

#[derive(Deserialize, pi_tool::JsonSchema)]
#[schemars(crate = "pi_tool::schemars")]
pub struct Params {
    pub city: String,
}

/// Return the weather for a city.
#[pi_tool]
pub async fn get_weather(params: Params, on_update: pi_tool::OnUpdate) -> Result<String, ToolError> {
    let _ = on_update;
    Ok(params.city)
}

fn main() {}
