//! Nested calls of a served tool: a tool with a reach calls the other tools of its pack
//! through its context (`ctx.call_tool`), and the server runs each nested call through
//! the same path as a `tools/call`: [`CallPolicy::call`] (argument limits,
//! `prepare_arguments`, validation with Pi's texts, the timeout, containment, redaction,
//! the result budget, and an `execute_tool` span, a child of the outer call's because the
//! nested call runs inside it). The calling client, its elicitation and its cancellation
//! reach nested calls as they reach the outer one (they run in its task).
//!
//! The server's own limits: nested calls per call tree
//! ([`PackServer::with_max_nested_calls`](super::PackServer::with_max_nested_calls)),
//! depth ([`PackServer::with_max_call_depth`](super::PackServer::with_max_call_depth)),
//! and the session's calls
//! ([`PackServer::with_session_call_limit`](super::PackServer::with_session_call_limit)),
//! which count nested calls as they count direct ones. A nested call takes room in its own
//! concurrency class
//! ([`PackServer::with_concurrency`](super::PackServer::with_concurrency)) while its
//! outer call lends its room back, so a call waiting for its nested calls never holds
//! room and nested calls cannot deadlock, at any limit.
//! A server has no hooks, so nothing asks for approval here; a host that needs approval
//! for nested calls runs the pack in an agent or a session.

use std::sync::Arc;
use std::sync::atomic::{AtomicU32, Ordering};

use pi_tool_core::concurrency::{Lease, Scheduler};
use pi_tool_core::context::ExtensionContext;
use pi_tool_core::{
    AbortSignal, AgentTool, CallPolicy, CallScope, JsonDetails, JsonToolResult, NestedCall,
    OnUpdate, ToolCaller, ToolError, ToolInvocation, async_trait,
};

use super::admission::{SessionCalls, trace_refused};
use super::served::Served;

/// The server's limits on nested calls.
#[derive(Debug, Clone, Copy)]
pub(crate) struct NestedLimits {
    pub(crate) max_depth: usize,
    /// Nested calls per call tree (a `tools/call` and everything below it).
    pub(crate) max_calls: Option<u32>,
}

/// What the calls of one session share: the tools, the policy and limits, the
/// concurrency scheduler, and the session's count of calls.
#[derive(Clone)]
pub(crate) struct Session {
    pub(crate) served: Arc<Served>,
    pub(crate) policy: CallPolicy,
    pub(crate) limits: NestedLimits,
    pub(crate) max_session_calls: Option<u32>,
    pub(crate) scheduler: Option<Arc<Scheduler>>,
    pub(crate) calls: Arc<SessionCalls>,
}

impl Session {
    /// The room a call of `tool` takes, when classes are limited.
    pub(crate) fn lease(&self, tool: &Arc<dyn AgentTool>) -> Option<Arc<Lease>> {
        self.scheduler
            .as_ref()
            .map(|scheduler| Lease::new(scheduler, tool.spec()))
    }

    /// The scope of a call `(id, tool)` holding `lease`: where its nested calls go, if its
    /// tool has a reach.
    pub(crate) fn scope(
        &self,
        (call_id, tool): (&str, &Arc<dyn AgentTool>),
        lease: Option<Arc<Lease>>,
        signal: &AbortSignal,
    ) -> Option<Arc<CallScope>> {
        let reaches = &tool.spec().reaches;
        (!reaches.is_empty()).then(|| {
            Arc::new(CallScope::direct(
                Arc::new(self.caller(Arc::default(), lease)),
                call_id,
                tool.name(),
                reaches,
                signal.clone(),
            ))
        })
    }

    fn caller(&self, made: Arc<AtomicU32>, lease: Option<Arc<Lease>>) -> ServerCaller {
        ServerCaller {
            session: self.clone(),
            made,
            lease,
        }
    }
}

/// The [`ToolCaller`] of one call in a call tree.
struct ServerCaller {
    session: Session,
    /// Nested calls made so far in this tree.
    made: Arc<AtomicU32>,
    /// The room of the call whose nested calls this caller runs, lent while they run.
    lease: Option<Arc<Lease>>,
}

#[async_trait]
impl ToolCaller for ServerCaller {
    async fn call_tool(&self, call: NestedCall) -> Result<JsonToolResult, ToolError> {
        let session = &self.session;
        let made = self.made.fetch_add(1, Ordering::Relaxed).saturating_add(1);
        let refused = match session.limits.max_calls {
            Some(limit) if made > limit => Err(ToolError::new(format!(
                "Tool call limit reached: a call may make at most {limit} nested tool calls on this server, so this call of {} was not run",
                call.name
            ))),
            _ => session.calls.admit(session.max_session_calls, &call.name),
        };
        if let Err(error) = refused {
            trace_refused(&call.name, &call.id, &error, &session.policy);
            return Err(error);
        }
        let Some(tool) = session.served.find(&call.name) else {
            return Err(ToolError::new(format!("Tool {} not found", call.name)));
        };
        let lease = session.lease(&tool);
        let scope = (!tool.spec().reaches.is_empty()).then(|| {
            Arc::new(call.scope(
                Arc::new(session.caller(self.made.clone(), lease.clone())),
                &tool.spec().reaches,
            ))
        });
        // The outer call lends its room while it waits: a call that waits never holds
        // room, so no two calls can wait on each other.
        if let Some(outer) = &self.lease {
            outer.lend();
        }
        let result = invoke(
            &tool,
            &call.id,
            &call.arguments,
            &session.policy,
            (call.signal.clone(), OnUpdate::none()),
            (scope, lease),
        )
        .await;
        if let Some(outer) = &self.lease {
            outer.restore(&call.signal).await;
        }
        result
    }

    fn max_depth(&self) -> usize {
        self.session.limits.max_depth
    }
}

/// One call through the policy, in its room when classes are limited (taken first, given
/// back when the call ends; an abort while it waits ends the call as aborted), with the
/// scope of its nested calls in its context (the pack's context factory makes the
/// context; the scope is carried over).
pub(crate) async fn invoke(
    tool: &Arc<dyn AgentTool>,
    call_id: &str,
    arguments: &serde_json::Value,
    policy: &CallPolicy,
    (signal, on_update): (AbortSignal, OnUpdate<Option<JsonDetails>>),
    (scope, lease): (Option<Arc<CallScope>>, Option<Arc<Lease>>),
) -> Result<JsonToolResult, ToolError> {
    if let Some(lease) = &lease
        && lease.take(&signal).await.is_err()
    {
        return Err(ToolError::aborted());
    }
    let mut invocation = ToolInvocation::new(call_id, arguments, signal, on_update);
    if let Some(scope) = scope {
        invocation = invocation.with_context(ExtensionContext::detached().with_call_scope(scope));
    }
    let result = policy.call(&**tool, invocation).await;
    if let Some(lease) = &lease {
        lease.give_back();
    }
    result
}
