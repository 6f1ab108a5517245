//! The session's tool wrapper: each registered tool as the agent sees it, with a fresh
//! extension context per call and Pi's `addedToolNames` rule.

use std::sync::{Arc, Weak};

use async_trait::async_trait;
use serde_json::Value;

use super::SessionError;
use crate::context::ExtensionContext;
use pi_tool_core::JsonToolResult;
use pi_tool_core::ToolError;
use pi_tool_core::{AbortSignal, AgentTool, ToolInvocation, ToolSpec};

/// What a session tool needs of its session for one call. The session's shared state
/// implements it; the tool holds it weakly, so a tool kept by a host does not keep a
/// disposed session alive.
pub(crate) trait ToolSession: Send + Sync {
    /// A fresh context for one call (Pi's `runner.createContext()`), `None` once the
    /// session is disposed.
    fn call_context(self: Arc<Self>, signal: AbortSignal) -> Option<ExtensionContext>;
    /// The active tool names now.
    fn active_snapshot(&self) -> Arc<Vec<String>>;
}

/// A registered definition as the agent sees it: a fresh context per execute (Pi's
/// `wrapToolDefinition(def, () => runner.createContext())`) and redacted errors.
pub(crate) struct SessionTool {
    pub(crate) definition: Arc<dyn AgentTool>,
    pub(crate) session: Weak<dyn ToolSession>,
}

#[async_trait]
impl AgentTool for SessionTool {
    fn spec(&self) -> &ToolSpec {
        self.definition.spec()
    }

    fn prepare_arguments<'a>(
        &self,
        arguments: &'a Value,
    ) -> Result<std::borrow::Cow<'a, Value>, ToolError> {
        self.definition.prepare_arguments(arguments)
    }

    async fn execute(&self, call: ToolInvocation<'_>) -> Result<JsonToolResult, ToolError> {
        let session = self.session.upgrade();
        let Some((session, ctx)) = session.and_then(|s| {
            let ctx = s.clone().call_context(call.signal.clone())?;
            Some((s, ctx))
        }) else {
            return Err(ToolError::new(SessionError::Disposed.to_string()));
        };
        // The session's context, with the scope of nested calls the batch gave this call.
        let ctx = match call.context.as_ref().and_then(ExtensionContext::call_scope) {
            Some(scope) => ctx.with_call_scope(scope.clone()),
            None => ctx,
        };
        let active_before = session.active_snapshot();
        let outcome = self.definition.execute(call.with_context(ctx)).await;
        match outcome {
            Ok(mut result) => {
                stamp_added_tools(&mut result, &active_before, &session.active_snapshot());
                Ok(result)
            }
            Err(error) => Err(error),
        }
    }
}

/// Pi's wrapper (`extensions/wrapper.js`): when a call left the active tools a strict
/// superset of what it started with, the tools it added are recorded on its result
/// (`addedToolNames`, after any the tool named itself, without repeats), so that providers
/// can treat the result as the point where those tools were loaded.
pub(crate) fn stamp_added_tools(
    result: &mut JsonToolResult,
    before: &Arc<Vec<String>>,
    after: &Arc<Vec<String>>,
) {
    if Arc::ptr_eq(before, after) || before.iter().any(|name| !after.contains(name)) {
        return;
    }
    let added: Vec<&String> = after.iter().filter(|name| !before.contains(name)).collect();
    if added.is_empty() {
        return;
    }
    let names = result.added_tool_names.get_or_insert_with(Vec::new);
    let mut unique: Vec<String> = Vec::with_capacity(names.len() + added.len());
    for name in names.drain(..).chain(added.into_iter().cloned()) {
        if !unique.contains(&name) {
            unique.push(name);
        }
    }
    *names = unique;
}
