use pi_tool::{pi_tool, ToolError};
use serde::Deserialize;

#[derive(Deserialize, pi_tool::JsonSchema)]
#[schemars(crate = "pi_tool::schemars")]
pub struct Params {
    pub city: String,
}

/// Return the weather for a city.
#[pi_tool]
pub async fn get_the_current_weather_for_a_city_in_celsius_or_fahrenheit_please(params: Params) -> Result<String, ToolError> {
    Ok(params.city)
}

fn main() {}
