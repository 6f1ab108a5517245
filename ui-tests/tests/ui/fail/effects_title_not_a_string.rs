use pi_tool::{pi_tool, ToolError};

/// Return the weather for a city.
#[pi_tool(title = 3)]
pub async fn get_weather() -> Result<String, ToolError> {
    Ok(String::new())
}

fn main() {}
