//! Nested calls in the agent: the [`ToolCaller`] a batch gives the context of each call
//! whose tool has a reach (pi-tool's addition; Pi 0.85.0 has no nested calls).
//!
//! A nested call is a call of the batch, not a shortcut beside it. The tool's context
//! sends the call to the batch's driver (`driver::Inbox`), and the batch runs it
//! through the same steps as the model's calls (`batch.rs`): the lookup, the call
//! policy's `check` (argument limits, `prepare_arguments`, validation with Pi's texts),
//! `before_tool_call` (so an [`ApprovalPolicy`](super::ApprovalPolicy) and a session's
//! `tool_call` handlers decide on it), `execute` (timeout, containment), `after_tool_call`
//! (a session's `tool_result` handlers), and `finish` (redaction, result budget, the
//! span's outcome), in an `execute_tool` span that is a child of the outer call's. Its
//! `tool_execution_*` events carry `parent_tool_call_id`; its result goes back to the
//! outer tool, never into the transcript.
//!
//! Rules of its own:
//! * **Abort.** Its signal is a child of the outer call's: aborting the run, or the outer
//!   call ending first (a timeout, a dropped future), aborts it.
//! * **A pending decision.** A hook answering [`Ask`](super::BeforeToolCallResult::Ask)
//!   blocks a nested call with the request's
//!   [`unanswered`](super::ApprovalRequest::unanswered) text: the outer call is in the
//!   middle of its execution and cannot be suspended.
//! * **Concurrency.** A nested call never waits for the batch's `max_concurrency`: its
//!   outer call already holds a place, and waiting for another would deadlock a batch
//!   whose places are all held by calls waiting on their nested calls.

use std::sync::Arc;

use async_trait::async_trait;
use futures::channel::oneshot;

use super::driver::Inbox;
use super::event::AgentEvent;
use crate::model::ToolCall;
use pi_tool_core::concurrency::Lease;
use pi_tool_core::{
    CallFailure, CallScope, JsonToolResult, NestedCall, ToolCaller, ToolError, ToolErrorKind,
};

/// What a nested call's outcome is sent back as.
pub(crate) type Reply = Result<JsonToolResult, ToolError>;

/// A nested call on its way to the batch: the call, the slot of the outer call (for its
/// span), and where the outcome goes.
pub(crate) struct NestedRequest {
    pub(crate) call: NestedCall,
    pub(crate) parent_slot: usize,
    pub(crate) reply: oneshot::Sender<Reply>,
}

/// The agent's [`ToolCaller`] for one outer call.
pub(crate) struct AgentCaller {
    pub(crate) inbox: Inbox<NestedRequest>,
    pub(crate) parent_slot: usize,
    pub(crate) max_depth: usize,
    /// The outer call's room in its concurrency class, lent while its nested calls run.
    pub(crate) lease: Option<Arc<Lease>>,
}

#[async_trait]
impl ToolCaller for AgentCaller {
    async fn call_tool(&self, call: NestedCall) -> Reply {
        let (reply, answer) = oneshot::channel();
        let signal = call.signal.clone();
        let request = NestedRequest {
            call,
            parent_slot: self.parent_slot,
            reply,
        };
        // The outer call lends its room while it waits: a call that waits never holds
        // room, so no two calls can wait on each other (concurrency classes, no deadlock).
        if let Some(lease) = &self.lease {
            lease.lend();
        }
        let outcome = match self.inbox.send(request) {
            Err(request) => Err(batch_over(&request.call.name)),
            Ok(()) => match answer.await {
                Ok(reply) => reply,
                // The batch went away with the call unanswered (the run ended).
                Err(oneshot::Canceled) => Err(ToolError::aborted()),
            },
        };
        if let Some(lease) = &self.lease {
            lease.restore(&signal).await;
        }
        outcome
    }

    fn max_depth(&self) -> usize {
        self.max_depth
    }
}

fn batch_over(name: &str) -> ToolError {
    ToolError::new(format!(
        "Nested call to {name} refused: the call that made it has ended (a context kept past its call cannot call tools)"
    ))
}

/// The scope of a call of `tool` in `slot`: where its nested calls go.
pub(crate) fn scope(
    (inbox, slot): (Inbox<NestedRequest>, usize),
    max_depth: usize,
    reaches: &[String],
    (call, nested): (&ToolCall, Option<&NestedCall>),
    lease: Option<Arc<Lease>>,
    signal: &pi_tool_core::AbortSignal,
) -> Arc<CallScope> {
    let caller = Arc::new(AgentCaller {
        inbox,
        parent_slot: slot,
        max_depth,
        lease,
    });
    Arc::new(match nested {
        Some(nested) => nested.scope(caller, reaches),
        None => CallScope::direct(caller, &call.id, &call.name, reaches, signal.clone()),
    })
}

/// The outcome the outer tool reads: the result, or an error with the text the model
/// would have read and its failure's kind.
pub(crate) fn reply(result: JsonToolResult, failure: Option<CallFailure>) -> Reply {
    let Some(failure) = failure else {
        return Ok(result);
    };
    let kind = [
        ToolErrorKind::Aborted,
        ToolErrorKind::InvalidArguments,
        ToolErrorKind::Timeout,
        ToolErrorKind::Panicked,
    ]
    .into_iter()
    .find(|kind| CallFailure::of(*kind) == failure)
    .unwrap_or(ToolErrorKind::Failed);
    Err(pi_tool_core::error_of_result(&result, kind))
}

/// The model-facing shape of a nested call: its own id and name, its arguments.
pub(crate) fn tool_call(call: &NestedCall) -> ToolCall {
    ToolCall::new(call.id.as_str(), call.name.as_str(), call.arguments.clone())
}

pub(crate) fn start_event(call: &ToolCall, parent: &Arc<str>) -> AgentEvent {
    AgentEvent::ToolExecutionStart {
        tool_call_id: call.id.clone(),
        tool_name: call.name.clone(),
        args: call.arguments.clone(),
        parent_tool_call_id: Some(parent.clone()),
    }
}
