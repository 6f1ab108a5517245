// Arguments written out one by one, as some frameworks take them: one error, showing the
// params struct to write.
use pi_tool::{pi_tool, ToolError};

/// Add two numbers.
#[pi_tool]
pub async fn add(a: i64, b: i64) -> Result<String, ToolError> {
    Ok((a + b).to_string())
}

fn main() {}
