// The one error of an `Instant` field holds where the params type is used as a tool's
// params and the field is read.
use pi_tool::{pi_tool, tool_pack, ToolError};

#[pi_tool::params]
pub struct Params {
    /// When the reminder fires.
    pub at: tokio::time::Instant,
}

/// Set a reminder.
#[pi_tool]
pub async fn remind(params: Params) -> Result<String, ToolError> {
    Ok(format!("{:?}", params.at.elapsed()))
}

fn main() {
    let _pack = tool_pack![Remind];
}
