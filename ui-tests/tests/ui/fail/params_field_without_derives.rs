use pi_tool::{pi_tool, ToolError};

pub struct Location {
    pub city: String,
}

#[pi_tool::params]
pub struct Params {
    /// Where to look.
    pub location: Location,
}

/// Return the weather at a location.
#[pi_tool]
pub async fn get_weather(params: Params) -> Result<String, ToolError> {
    Ok(params.location.city)
}

fn main() {}
