use pi_tool::{pi_tool, ToolError};

#[pi_tool::params]
pub struct Params {
    /// When the reminder fires.
    pub at: std::time::Instant,
}

/// Set a reminder.
#[pi_tool]
pub async fn remind(params: Params) -> Result<String, ToolError> {
    Ok(format!("{:?}", params.at))
}

fn main() {}
