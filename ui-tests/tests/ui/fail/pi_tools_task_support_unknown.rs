use pi_tool::{pi_tools, ToolError};
use serde::Deserialize;

#[derive(Deserialize, pi_tool::JsonSchema)]
#[schemars(crate = "pi_tool::schemars")]
pub struct Params {
    pub city: String,
}

pub struct Weather {
    pub cache: std::sync::Mutex<Vec<String>>,
}

#[pi_tools]
impl Weather {
    /// Return the weather for a city.
    #[pi_tool(task_support = "mandatory")]
    pub async fn get_weather(&self, params: Params) -> Result<String, ToolError> {
        Ok(params.city)
    }
}

fn main() {}
