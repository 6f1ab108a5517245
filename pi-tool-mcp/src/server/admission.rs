//! What a server's call must pass before it runs, beyond the call policy's checks: the
//! session's call limit (`with_session_call_limit`). Counted over direct and nested
//! calls, as the agent's `RunLimits` count a run's; the call tree's own limit is
//! `nested.rs`'s, the concurrency classes are `pi_tool_core::concurrency`'s.

use std::sync::atomic::{AtomicU32, Ordering};

use pi_tool_core::{CallFailure, CallPolicy, CallSpan, ToolError};

/// The calls one client session has made, direct and nested.
#[derive(Debug, Default)]
pub(crate) struct SessionCalls(AtomicU32);

impl SessionCalls {
    /// Counts one call of `tool`; the error the client (or the outer tool) reads when
    /// that goes past `limit`.
    pub(crate) fn admit(&self, limit: Option<u32>, tool: &str) -> Result<(), ToolError> {
        let Some(limit) = limit else {
            return Ok(());
        };
        let made = self.0.fetch_add(1, Ordering::Relaxed).saturating_add(1);
        if made > limit {
            return Err(ToolError::new(format!(
                "Tool call limit reached: a session may make at most {limit} tool calls (direct and nested) on this server, so this call of {tool} was not run"
            )));
        }
        Ok(())
    }
}

/// The span of a call refused by a limit: it was not run, and says why.
pub(crate) fn trace_refused(tool: &str, call_id: &str, error: &ToolError, policy: &CallPolicy) {
    CallSpan::new(tool, call_id).record_failure(CallFailure::LIMIT, error.message(), policy);
}
