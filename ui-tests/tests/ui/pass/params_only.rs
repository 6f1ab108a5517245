//! Only the params: every other argument left out.
use pi_tool::{IntoAgentTool, ToolError, Tool, pi_tool};
use serde::Deserialize;

#[derive(Deserialize, pi_tool::JsonSchema)]
#[schemars(crate = "pi_tool::schemars")]
pub struct Params {
    pub a: i64,
    pub b: i64,
}

/// Adds two integers.
#[pi_tool]
pub async fn add(params: Params) -> Result<String, ToolError> {
    Ok((params.a + params.b).to_string())
}

fn main() {
    assert_eq!(Add::NAME, "add");
    assert_eq!(Add::LABEL, "Add");
    assert_eq!(Add::DESCRIPTION, "Adds two integers.");
    let _ = Add.into_agent_tool();
}
