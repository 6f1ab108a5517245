//! A tool key on the params type: one error, on the key, and the type still works.
use pi_tool::{ToolError, pi_tool};

/// The arguments.
#[pi_tool::params(name = "weather")]
pub struct WeatherParams {
    /// City name.
    pub city: String,
}

/// Returns the city.
#[pi_tool]
pub async fn get_weather(params: WeatherParams) -> Result<String, ToolError> {
    Ok(params.city)
}

fn main() {}
