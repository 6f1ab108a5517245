use pi_tool::{pi_tool, ToolError};
use serde::Deserialize;

#[derive(Deserialize, pi_tool::JsonSchema)]
#[schemars(crate = "pi_tool::schemars")]
pub struct AppendParams<'a> {
    pub text: &'a str,
}

/// Append a line to the notes.
#[pi_tool]
pub async fn append(params: AppendParams<'_>) -> Result<String, ToolError> {
    Ok(format!("appended {} bytes", params.text.len()))
}

fn main() {}
