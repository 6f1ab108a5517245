//! Tool-call hooks: `before_tool_call`, `after_tool_call` and `prepare_next_turn`, with
//! Pi's contexts and merge rules (conformance/SEMANTICS.md §1.4, §1.6).
//!
//! * [`BeforeToolCall`] runs after the arguments were prepared and validated, before
//!   execute. It sees the raw call and the validated arguments, which it may change in
//!   place (no re-validation). It answers [`BeforeToolCallResult::Allow`] or
//!   [`BeforeToolCallResult::Block`], which turns the call into an error result
//!   (`reason`, or `Tool execution was blocked`) that may also end the run after this
//!   batch, or [`BeforeToolCallResult::Ask`]: the call needs a decision that is not
//!   there yet ([`ApprovalRequest`]). A hook error becomes the call's error result.
//! * [`AfterToolCall`] runs for every executed call (also when execute failed). Its
//!   [`AfterToolCallResult`] replaces fields one by one (`content`, `details`, `usage`,
//!   `terminate`, `is_error`); `None` keeps the field (so does a `null` details, as
//!   Pi's `??` does). A hook error replaces the result with its error text.
//! * [`PrepareNextTurn`] runs between turns and may swap the context (for example the
//!   tools), the model or the thinking level.

use async_trait::async_trait;
use serde_json::Value;

use crate::model::{AssistantMessage, Message, ToolCall, ToolResultMessage};
use crate::model::{Context, Model, ThinkingLevel};
use pi_tool_core::AbortSignal;
use pi_tool_core::Content;
use pi_tool_core::JsonToolResult;
use pi_tool_core::ToolError;

/// The text of a blocked call without a reason.
pub const BLOCKED_MESSAGE: &str = "Tool execution was blocked";

/// What `before_tool_call` sees (Pi's `BeforeToolCallContext`).
#[non_exhaustive]
pub struct BeforeToolCallContext<'a> {
    /// The assistant message that made the call.
    pub assistant_message: &'a AssistantMessage,
    /// The raw call (original arguments, before prepare and validation).
    pub tool_call: &'a ToolCall,
    /// The validated arguments execute will receive; changes reach execute unvalidated.
    pub args: &'a mut Value,
    /// The run's context.
    pub context: &'a Context,
    /// The call that made this one through its context (`ctx.call_tool`); `None` for a
    /// call the model made.
    pub parent_tool_call_id: Option<&'a str>,
}

/// What `before_tool_call` decides (Pi's `BeforeToolCallResult`, plus
/// [`Ask`](Self::Ask)).
///
/// Pi's `{block, reason, terminate}` object can state nonsense (a reason or `terminate`
/// without `block`, which Pi ignores); here there is one spelling of "no objection",
/// [`Allow`](Self::Allow), and a block carries its reason and whether the run ends.
///
/// [`Ask`](Self::Ask) is the one shape of a pending decision, whoever makes it (the
/// [`ApprovalPolicy`](super::ApprovalPolicy), a hook, a session `tool_call` handler) and
/// wherever the call runs (a direct call or a nested one). A run that has somewhere to
/// wait for the decision waits there; one that has not blocks the call with
/// [`ApprovalRequest::unanswered`], which names the tool and the question, so the model
/// reads why nothing ran.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
#[non_exhaustive]
pub enum BeforeToolCallResult {
    /// Execute the call.
    #[default]
    Allow,
    /// Do not execute; the call becomes an error result.
    Block {
        /// The error text (`None` or empty: `Tool execution was blocked`).
        reason: Option<String>,
        /// The blocked result asks the loop to stop after this batch (Pi's
        /// `terminate: true`).
        terminate: bool,
    },
    /// Do not execute yet: the call needs a decision that is not there.
    Ask(ApprovalRequest),
}

/// A decision a call waits for: what to ask, and for how long the question stands.
///
/// It names no call: the run that holds it knows the call (its id, tool and validated
/// arguments), and binds the answer to exactly those.
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub struct ApprovalRequest {
    /// The question's title (`Run delete_file?`).
    pub title: String,
    /// What the person deciding reads: why the call needs approval, and what it does.
    pub message: String,
    /// How long the question stands before it expires (`None`: the default of whoever
    /// keeps it).
    pub expires_in: Option<std::time::Duration>,
}

impl ApprovalRequest {
    /// A question with this title and message, expiring when its keeper's default says.
    pub fn new(title: impl Into<String>, message: impl Into<String>) -> Self {
        ApprovalRequest {
            title: title.into(),
            message: message.into(),
            expires_in: None,
        }
    }

    /// The question expires after `ttl`.
    #[must_use]
    pub fn expires_in(mut self, ttl: std::time::Duration) -> Self {
        self.expires_in = Some(ttl);
        self
    }

    /// The error text of a call whose question nobody can wait for (a run without an
    /// approval store): `<tool> needs approval (<title>), and nothing here can wait for
    /// the decision`.
    pub fn unanswered(&self, tool_name: &str) -> String {
        format!(
            "{tool_name} needs approval ({}), and nothing here can wait for the decision",
            self.title
        )
    }
}

impl BeforeToolCallResult {
    /// Blocks the call with this reason; the run goes on.
    pub fn block(reason: impl Into<String>) -> Self {
        BeforeToolCallResult::Block {
            reason: Some(reason.into()),
            terminate: false,
        }
    }

    /// Blocks the call with this reason and ends the run after this batch.
    pub fn block_and_terminate(reason: impl Into<String>) -> Self {
        BeforeToolCallResult::Block {
            reason: Some(reason.into()),
            terminate: true,
        }
    }

    /// Waits for this decision before the call runs.
    pub fn ask(request: ApprovalRequest) -> Self {
        BeforeToolCallResult::Ask(request)
    }

    /// Whether the call is blocked.
    pub fn is_block(&self) -> bool {
        matches!(self, BeforeToolCallResult::Block { .. })
    }

    /// Whether the call may not run now: blocked, or waiting for a decision (a chain
    /// of handlers stops at the first such answer).
    pub fn is_stop(&self) -> bool {
        !matches!(self, BeforeToolCallResult::Allow)
    }

    /// Reads Pi's object form (`{block, reason, terminate}`), with Pi's rules: without
    /// `block`, the reason and `terminate` mean nothing.
    pub fn from_pi(block: bool, reason: Option<String>, terminate: bool) -> Self {
        if block {
            BeforeToolCallResult::Block { reason, terminate }
        } else {
            BeforeToolCallResult::Allow
        }
    }
}

/// A hook run before each call's execution (Pi's `beforeToolCall`).
#[async_trait]
pub trait BeforeToolCall: Send + Sync + 'static {
    /// Inspects (and may change or block) one call.
    async fn before_tool_call(
        &self,
        ctx: BeforeToolCallContext<'_>,
        signal: &AbortSignal,
    ) -> Result<BeforeToolCallResult, ToolError>;
}

/// What `after_tool_call` sees (Pi's `AfterToolCallContext`).
#[non_exhaustive]
pub struct AfterToolCallContext<'a> {
    /// The assistant message that made the call.
    pub assistant_message: &'a AssistantMessage,
    /// The raw call.
    pub tool_call: &'a ToolCall,
    /// The arguments execute received.
    pub args: &'a Value,
    /// What execute produced (or the error result if it failed).
    pub result: &'a JsonToolResult,
    /// Whether execute failed.
    pub is_error: bool,
    /// The run's context.
    pub context: &'a Context,
    /// The call that made this one through its context (`ctx.call_tool`); `None` for a
    /// call the model made.
    pub parent_tool_call_id: Option<&'a str>,
}

/// Field-by-field replacements of an executed call's result (Pi's
/// `AfterToolCallResult`). `None` keeps the field, so the default keeps the result as
/// it is.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct AfterToolCallResult {
    /// New content.
    pub content: Option<Vec<Content>>,
    /// New details (`Some(Null)` keeps the old details, like Pi's `??`).
    pub details: Option<Value>,
    /// New usage (`Some(Null)` keeps the old usage).
    pub usage: Option<Value>,
    /// New terminate flag.
    pub terminate: Option<bool>,
    /// New error flag.
    pub is_error: Option<bool>,
}

/// A hook run after each executed call (Pi's `afterToolCall`).
#[async_trait]
pub trait AfterToolCall: Send + Sync + 'static {
    /// Inspects (and may rewrite) one executed call's result;
    /// `AfterToolCallResult::default()` keeps it.
    async fn after_tool_call(
        &self,
        ctx: AfterToolCallContext<'_>,
        signal: &AbortSignal,
    ) -> Result<AfterToolCallResult, ToolError>;
}

/// Applies Pi's `finalizeExecutedToolCall` merge.
pub(crate) fn merge_after(
    mut result: JsonToolResult,
    is_error: bool,
    after: AfterToolCallResult,
) -> (JsonToolResult, bool) {
    if let Some(content) = after.content {
        result.content = content;
    }
    if let Some(details) = after.details.filter(|v| !v.is_null()) {
        result.details = Some(details.into());
    }
    if let Some(usage) = after.usage.filter(|v| !v.is_null()) {
        result.usage = Some(usage);
    }
    if let Some(terminate) = after.terminate {
        result.terminate = Some(terminate);
    }
    (result, after.is_error.unwrap_or(is_error))
}

/// The turn that just completed, handed to [`PrepareNextTurn`].
#[non_exhaustive]
pub struct CompletedTurn<'a> {
    /// The turn's assistant message.
    pub message: &'a AssistantMessage,
    /// Its tool results.
    pub tool_results: &'a [std::sync::Arc<ToolResultMessage>],
    /// The context the next turn would use.
    pub context: &'a Context,
    /// The messages this run added so far.
    pub new_messages: &'a [Message],
}

/// Replacements for the next turn (Pi's `prepareNextTurn` snapshot). `None` keeps.
#[derive(Default)]
pub struct NextTurn {
    /// A new context (system prompt, transcript, tools).
    pub context: Option<Context>,
    /// A new model.
    pub model: Option<Model>,
    /// A new thinking level.
    pub thinking_level: Option<ThinkingLevel>,
}

/// A hook run between turns, for hosts that change tools or models mid-run (Pi's
/// `prepareNextTurn`).
#[async_trait]
pub trait PrepareNextTurn: Send + Sync + 'static {
    /// Returns replacements for the next turn, or `None` to keep everything.
    async fn prepare_next_turn(
        &self,
        turn: CompletedTurn<'_>,
        signal: &AbortSignal,
    ) -> Option<NextTurn>;
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn after_merge_replaces_field_by_field_and_null_keeps() {
        let result = JsonToolResult::from_json(
            json!({"content": [{"type": "text", "text": "a"}], "details": {"x": 1}}),
        )
        .unwrap();
        let (merged, is_error) = merge_after(
            result.clone(),
            false,
            AfterToolCallResult {
                details: Some(Value::Null),
                is_error: Some(true),
                ..Default::default()
            },
        );
        assert_eq!(merged, result);
        assert!(is_error);
        let (merged, is_error) = merge_after(
            result,
            true,
            AfterToolCallResult {
                content: Some(vec![Content::text("b")]),
                terminate: Some(true),
                ..Default::default()
            },
        );
        assert_eq!(
            merged.to_json(),
            json!({"content": [{"type": "text", "text": "b"}], "details": {"x": 1}, "terminate": true})
        );
        assert!(is_error);
    }
}
