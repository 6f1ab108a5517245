// One mistake (no description) gives one error, even where the tool is used: the
// fallback still defines `GetWeather` as a tool.
use pi_tool::{pi_tool, IntoAgentTool, ToolError, Tool};
use serde::Deserialize;

#[derive(Deserialize, pi_tool::JsonSchema)]
#[schemars(crate = "pi_tool::schemars")]
pub struct Params {
    pub city: String,
}

#[pi_tool]
pub async fn get_weather(params: Params) -> Result<String, ToolError> {
    Ok(params.city)
}

fn main() {
    let tool = GetWeather.into_agent_tool();
    println!("{} {}", tool.name(), GetWeather::NAME);
    let _pack = pi_tool::tool_pack![GetWeather];
}
