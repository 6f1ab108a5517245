//! A `#[pi_tools]` method with every role: call id, params, signal, updates, context.
use std::sync::Arc;

use pi_tool::{AbortSignal, AgentToolResult, OnUpdate, ToolError, pi_tools, wrap_tool_definition};
use pi_tool::context::ExtensionContext;
use serde::{Deserialize, Serialize};

pub struct Jobs {
    prefix: String,
}

#[derive(Deserialize, pi_tool::JsonSchema)]
#[schemars(crate = "pi_tool::schemars")]
pub struct RunParams {
    pub job: String,
}

#[derive(Serialize)]
pub struct Progress {
    pub done: u32,
}

#[pi_tools]
impl Jobs {
    /// Runs a job and reports progress.
    #[pi_tool(execution_mode = "sequential", timeout = "5m", task_support = "required")]
    pub async fn run_job(
        &self,
        call_id: &str,
        params: RunParams,
        signal: AbortSignal,
        on_update: OnUpdate<Progress>,
        ctx: ExtensionContext,
    ) -> Result<AgentToolResult<Progress>, ToolError> {
        signal.check()?;
        on_update.send(AgentToolResult::text("started", Progress { done: 0 }));
        Ok(AgentToolResult::text(
            format!("{}{call_id}: {} in {}", self.prefix, params.job, ctx.cwd().display()),
            Progress { done: 1 },
        ))
    }

    /// Returns untyped details (`AgentToolResult` defaults to `Value` details).
    #[pi_tool]
    pub async fn status(&self) -> Result<AgentToolResult, ToolError> {
        Ok(AgentToolResult::text("idle", pi_tool::json!({"running": 0})))
    }
}

fn main() {
    let jobs = Arc::new(Jobs { prefix: String::new() });
    // A context tool: no `tools()`, only definitions, which a host wraps.
    let definitions = jobs.tools();
    assert_eq!(definitions.len(), 2);
    let tool = wrap_tool_definition(definitions[0].clone(), ExtensionContext::detached);
    assert_eq!(tool.name(), "run_job");
    assert_eq!(tool.spec().task_support, Some(pi_tool::TaskSupport::Required));
    let _: RunJobTool = jobs.run_job_tool();
    let _: StatusTool = jobs.status_tool();
}
