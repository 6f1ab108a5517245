// One mistake in a #[pi_tools] block gives one error, even where its accessors are used.
use std::sync::Arc;

use pi_tool::{pi_tools, IntoAgentTool, ToolError};
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
    #[pi_tool]
    pub async fn get_weather(&self, params: Params) -> Result<String, ToolError> {
        Ok(params.city)
    }
}

fn main() {
    let weather = Arc::new(Weather { cache: Default::default() });
    let _one = weather.get_weather_tool().into_agent_tool();
    let _all = weather.tools();
    let _defs = weather.tools();
}
