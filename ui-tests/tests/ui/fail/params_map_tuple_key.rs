use std::collections::HashMap;

use pi_tool::{pi_tool, ToolError};

#[pi_tool::params]
pub struct Params {
    /// Cell values by (row, column).
    pub cells: HashMap<(u32, u32), String>,
}

/// Fill cells of the sheet.
#[pi_tool]
pub async fn fill(params: Params) -> Result<String, ToolError> {
    Ok(params.cells.len().to_string())
}

fn main() {}
