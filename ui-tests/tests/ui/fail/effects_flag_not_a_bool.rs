use pi_tool::{pi_tool, ToolError};

/// Return the weather for a city.
#[pi_tool(open_world = "yes")]
pub async fn get_weather() -> Result<String, ToolError> {
    Ok(String::new())
}

fn main() {}
