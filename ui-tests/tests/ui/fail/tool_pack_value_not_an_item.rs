// A type with a value that is neither a #[pi_tool] tool nor a #[pi_tools] block is one
// error, on it.
use pi_tool::{pi_tool, tool_pack, ToolError};

/// Say hello.
#[pi_tool]
pub async fn hello() -> Result<String, ToolError> {
    Ok("hello".to_owned())
}

pub struct Settings;

fn main() {
    let _pack = tool_pack![Hello, Settings = Settings];
}
