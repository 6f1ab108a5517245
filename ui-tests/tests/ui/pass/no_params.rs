//! No params at all: the schema is an empty object.
use pi_tool::{IntoAgentTool, ToolError, pi_tool};

/// Returns the current server time.
#[pi_tool]
async fn server_time() -> Result<&'static str, ToolError> {
    Ok("12:00")
}

fn main() {
    let tool = ServerTime.into_agent_tool();
    assert_eq!(
        tool.spec().parameters.json(),
        &pi_tool::json!({"type": "object", "properties": {}})
    );
}
