use pi_tool::{pi_tool, ToolError};

pub struct Params {
    pub city: String,
}

/// Return the weather for a city.
#[pi_tool]
pub async fn get_weather(params: Params) -> Result<String, ToolError> {
    Ok(params.city)
}

fn main() {}
