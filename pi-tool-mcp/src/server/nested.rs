//! Nested calls of a served tool: a tool with a reach calls the other tools of its pack
//! through its context (`ctx.call_tool`), and the server runs each nested call through
//! the same path as a `tools/call`: [`CallPolicy::call`] (argument limits,
//! `prepare_arguments`, validation with Pi's texts, the timeout, containment, redaction,
//! the result budget, and an `execute_tool` span, a child of the outer call's because the
//! nested call runs inside it). The calling client, its elicitation and its cancellation
//! reach nested calls as they reach the outer one (they run in its task).
//!
//! The server's own limits: nested calls per call tree
//! ([`PackServer::with_max_nested_calls`](super::PackServer::with_max_nested_calls)) and
//! depth ([`PackServer::with_max_call_depth`](super::PackServer::with_max_call_depth)).
//! A server has no hooks, so nothing asks for approval here; a host that needs approval
//! for nested calls runs the pack in an agent or a session.

use std::sync::Arc;
use std::sync::atomic::{AtomicU32, Ordering};

use pi_tool_core::context::ExtensionContext;
use pi_tool_core::{
    AbortSignal, AgentTool, CallPolicy, CallScope, JsonDetails, JsonToolResult, NestedCall,
    OnUpdate, ToolCaller, ToolError, ToolInvocation, async_trait,
};

use super::served::Served;

/// The server's limits on nested calls.
#[derive(Debug, Clone, Copy)]
pub(crate) struct NestedLimits {
    pub(crate) max_depth: usize,
    /// Nested calls per call tree (a `tools/call` and everything below it).
    pub(crate) max_calls: Option<u32>,
}

/// The [`ToolCaller`] of one call tree.
struct ServerCaller {
    served: Arc<Served>,
    policy: CallPolicy,
    limits: NestedLimits,
    /// Nested calls made so far in this tree.
    made: Arc<AtomicU32>,
}

#[async_trait]
impl ToolCaller for ServerCaller {
    async fn call_tool(&self, call: NestedCall) -> Result<JsonToolResult, ToolError> {
        let made = self.made.fetch_add(1, Ordering::Relaxed).saturating_add(1);
        if let Some(limit) = self.limits.max_calls
            && made > limit
        {
            return Err(ToolError::new(format!(
                "Tool call limit reached: a call may make at most {limit} nested tool calls on this server, so this call of {} was not run",
                call.name
            )));
        }
        let Some(tool) = self.served.find(&call.name) else {
            return Err(ToolError::new(format!("Tool {} not found", call.name)));
        };
        let scope = (!tool.spec().reaches.is_empty()).then(|| {
            Arc::new(call.scope(
                Arc::new(ServerCaller {
                    served: self.served.clone(),
                    policy: self.policy.clone(),
                    limits: self.limits,
                    made: self.made.clone(),
                }),
                &tool.spec().reaches,
            ))
        });
        invoke(
            &tool,
            &call.id,
            &call.arguments,
            &self.policy,
            (call.signal.clone(), OnUpdate::none()),
            scope,
        )
        .await
    }

    fn max_depth(&self) -> usize {
        self.limits.max_depth
    }
}

/// The scope of a served call `(id, tool)`: where its nested calls go, if its tool has a
/// reach.
pub(crate) fn scope(
    served: &Arc<Served>,
    policy: &CallPolicy,
    limits: NestedLimits,
    (call_id, tool): (&str, &Arc<dyn AgentTool>),
    signal: &AbortSignal,
) -> Option<Arc<CallScope>> {
    let reaches = &tool.spec().reaches;
    (!reaches.is_empty()).then(|| {
        let caller = Arc::new(ServerCaller {
            served: served.clone(),
            policy: policy.clone(),
            limits,
            made: Arc::default(),
        });
        Arc::new(CallScope::direct(
            caller,
            call_id,
            tool.name(),
            reaches,
            signal.clone(),
        ))
    })
}

/// One call through the policy, with the scope of its nested calls in its context (the
/// pack's context factory makes the context; the scope is carried over).
pub(crate) async fn invoke(
    tool: &Arc<dyn AgentTool>,
    call_id: &str,
    arguments: &serde_json::Value,
    policy: &CallPolicy,
    (signal, on_update): (AbortSignal, OnUpdate<Option<JsonDetails>>),
    scope: Option<Arc<CallScope>>,
) -> Result<JsonToolResult, ToolError> {
    let mut invocation = ToolInvocation::new(call_id, arguments, signal, on_update);
    if let Some(scope) = scope {
        invocation = invocation.with_context(ExtensionContext::detached().with_call_scope(scope));
    }
    policy.call(&**tool, invocation).await
}
