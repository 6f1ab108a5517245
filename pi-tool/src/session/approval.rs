//! The session side of the approval policy: [`ApprovalPolicy`] as a `tool_call` handler,
//! asking the session's UI. The policy itself (its rule, its questions) is the agent's
//! (`agent::ApprovalPolicy`); the session depends on the agent, never the reverse.

use async_trait::async_trait;

use super::{ToolCallDecision, ToolCallEvent, ToolCallHandler};
use crate::agent::ApprovalPolicy;
use crate::context::ExtensionContext;
use pi_tool_core::ToolError;

#[async_trait]
impl ToolCallHandler for ApprovalPolicy {
    async fn on_tool_call(
        &self,
        event: &mut ToolCallEvent,
        ctx: &ExtensionContext,
    ) -> Result<ToolCallDecision, ToolError> {
        let annotations = self
            .known
            .get(&event.tool_name)
            .cloned()
            .unwrap_or_default();
        let ui = ctx.has_ui().then(|| ctx.ui());
        Ok(self
            .decide(
                &event.tool_name,
                &annotations,
                &event.input,
                ui,
                ctx.live_signal().ok().flatten().as_ref(),
            )
            .await)
    }
}
