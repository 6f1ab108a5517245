//! Pi's five-argument form: with an `ExtensionContext` the tool is a definition.
use pi_tool::{AbortSignal, AgentToolResult, IntoAgentTool, NoDetails, OnUpdate, ToolError, pi_tool, wrap_tool_definition};
use pi_tool::context::ExtensionContext;
use serde::Deserialize;

#[derive(Deserialize, pi_tool::JsonSchema)]
#[schemars(crate = "pi_tool::schemars")]
pub struct Params {
    pub path: String,
}

/// Reads a file relative to the session's working directory.
#[pi_tool(execution_mode = "sequential")]
pub async fn read_file(
    _call_id: &str,
    params: Params,
    _signal: AbortSignal,
    _on_update: OnUpdate<NoDetails>,
    ctx: ExtensionContext,
) -> Result<AgentToolResult<NoDetails>, ToolError> {
    Ok(AgentToolResult::text(
        format!("{}/{}", ctx.cwd().display(), params.path),
        NoDetails,
    ))
}

fn main() {
    let definition = ReadFile.into_agent_tool();
    let tool = wrap_tool_definition(definition, ExtensionContext::detached);
    assert_eq!(tool.name(), "read_file");
}
