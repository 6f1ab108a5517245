//! The tools of the policy bench and its callgrind count (`benches/policy.rs`,
//! `examples/policy_count.rs`): one that answers at once, and one that relays to it
//! through a nested call, so both measure the same work.

use std::sync::Arc;

use pi_tool::schema::ToolSchema;
use pi_tool::{AgentTool, JsonToolResult, ToolError, ToolInvocation, ToolSpec, async_trait, json};

pub struct Echo(pub ToolSpec);

#[async_trait]
impl AgentTool for Echo {
    fn spec(&self) -> &ToolSpec {
        &self.0
    }

    async fn execute(&self, call: ToolInvocation<'_>) -> Result<JsonToolResult, ToolError> {
        let _ = (call.id, call.params);
        Ok(JsonToolResult::text("ok", None))
    }
}

pub struct Relay(pub ToolSpec);

#[async_trait]
impl AgentTool for Relay {
    fn spec(&self) -> &ToolSpec {
        &self.0
    }

    async fn execute(&self, call: ToolInvocation<'_>) -> Result<JsonToolResult, ToolError> {
        let ctx = call
            .context
            .ok_or_else(|| ToolError::new("relay runs with a context"))?;
        ctx.call_tool("echo", json!({"i": 0})).await
    }
}

pub fn spec(name: &str) -> ToolSpec {
    ToolSpec::new(
        name,
        name,
        Arc::new(ToolSchema::from_json(
            json!({"type": "object", "properties": {"i": {"type": "number"}}}),
        )),
    )
}
