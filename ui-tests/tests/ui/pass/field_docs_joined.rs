//! Field docs of a `#[pi_tool::params]` type are joined as tool docs are.
use pi_tool::{pi_tool, IntoAgentTool, ToolError};

#[pi_tool::params]
pub struct Params {
    /// The city to look up. Soft-wrapped in the source,
    /// one line for the model.
    ///
    /// A second paragraph.
    pub city: String,
}

/// Looks up a city.
#[pi_tool]
pub async fn look_up(params: Params) -> Result<String, ToolError> {
    Ok(params.city)
}

fn main() {
    let tool = LookUp.into_agent_tool();
    let schema = tool.spec().parameters.json().clone();
    assert_eq!(
        schema["properties"]["city"]["description"],
        "The city to look up. Soft-wrapped in the source, one line for the model.\n\nA second paragraph."
    );
}
