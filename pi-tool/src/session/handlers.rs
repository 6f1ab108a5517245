//! Extension handlers for tool calls, and the chains that run them (conformance/SEMANTICS.md §5).
//!
//! * `tool_call` ([`ToolCallHandler`]) runs before a call executes, for every resolved,
//!   valid call (never for unknown tools, validation failures or truncated messages).
//!   Handlers run in load order; the **first block wins** and stops the chain;
//!   non-blocking results have no effect. A handler may change [`ToolCallEvent::input`]
//!   in place: later handlers and the tool see the change, and, as in Pi, it is **not**
//!   validated again (a typed tool still deserialises its params from it, so a change
//!   that breaks the params type becomes an error result). A handler that fails (or
//!   panics) blocks the call with its message.
//! * `tool_result` ([`ToolResultHandler`]) runs after every executed call (also a failed
//!   one). All handlers run; each sees the event as earlier handlers left it and may
//!   replace `content`, `details`, `is_error` and `usage` ([`ToolResultPatch`]). A
//!   handler that fails is reported and skipped. `details` cannot be cleared (Pi's `??`).
//! * `tool_execution_*` ([`ToolExecutionHandler`]) observe the start, progress and end
//!   events, before the session's own listeners; their failures are logged and ignored.

use std::panic::AssertUnwindSafe;
use std::sync::Arc;

use async_trait::async_trait;
use futures::FutureExt;
use serde::de::DeserializeOwned;
use serde_json::Value;

use crate::agent::{AfterToolCallResult, AgentEvent, BeforeToolCallResult};
use crate::context::ExtensionContext;
use crate::schema::deserialize_params;
use pi_tool_core::Content;
use pi_tool_core::JsonDetails;
use pi_tool_core::Tool;
use pi_tool_core::ToolError;

/// A `tool_call` handler's decision (Pi's `{block, reason, terminate}`): the agent's
/// [`BeforeToolCallResult`], under the session's name.
#[doc(alias = "ToolCallEventResult")]
pub type ToolCallDecision = BeforeToolCallResult;

/// What a `tool_call` handler sees (Pi's `ToolCallEvent`).
#[derive(Debug, Clone, PartialEq)]
#[non_exhaustive]
pub struct ToolCallEvent {
    /// The called tool.
    pub tool_name: String,
    /// The call id.
    pub tool_call_id: String,
    /// The validated arguments; changes reach later handlers and the tool unvalidated.
    pub input: Value,
}

impl ToolCallEvent {
    /// Whether this call is to the typed tool `T` (by name).
    pub fn is<T: Tool>(&self) -> bool {
        self.tool_name == T::NAME
    }

    /// The input as `T`'s own params type, when this call is to `T` (Pi's
    /// `isToolCallEventType<"get_weather", P>`): `None` for another tool, `Some(Err)` when
    /// the input (changed by an earlier handler) no longer fits the params type.
    pub fn input_for<T: Tool>(&self) -> Option<Result<T::Params, ToolError>> {
        (self.tool_name == T::NAME).then(|| {
            <T::Params as pi_tool_core::bounds::ToolParams>::__from_arguments(
                &self.tool_name,
                &self.input,
            )
        })
    }

    /// The input as `P`, when this call is to the tool named `tool_name`.
    pub fn input_as<P: DeserializeOwned>(&self, tool_name: &str) -> Option<Result<P, ToolError>> {
        (self.tool_name == tool_name).then(|| deserialize_params::<P>(&self.tool_name, &self.input))
    }
}

/// A `tool_call` handler. Sync closures
/// `Fn(&mut ToolCallEvent, &ExtensionContext) -> Result<ToolCallDecision, ToolError>`
/// are handlers too.
#[async_trait]
pub trait ToolCallHandler: Send + Sync + 'static {
    /// Inspects (and may change or block) one call;
    /// [`ToolCallDecision::Allow`](crate::agent::BeforeToolCallResult::Allow) is no
    /// objection.
    async fn on_tool_call(
        &self,
        event: &mut ToolCallEvent,
        ctx: &ExtensionContext,
    ) -> Result<ToolCallDecision, ToolError>;
}

#[async_trait]
impl<F> ToolCallHandler for F
where
    F: Fn(&mut ToolCallEvent, &ExtensionContext) -> Result<ToolCallDecision, ToolError>
        + Send
        + Sync
        + 'static,
{
    async fn on_tool_call(
        &self,
        event: &mut ToolCallEvent,
        ctx: &ExtensionContext,
    ) -> Result<ToolCallDecision, ToolError> {
        self(event, ctx)
    }
}

/// What a `tool_result` handler sees (Pi's `ToolResultEvent`), after earlier handlers'
/// replacements.
#[derive(Debug, Clone, PartialEq)]
#[non_exhaustive]
pub struct ToolResultEvent {
    /// The called tool.
    pub tool_name: String,
    /// The call id.
    pub tool_call_id: String,
    /// The arguments the tool received.
    pub input: Value,
    /// The result content.
    pub content: Vec<Content>,
    /// The result details.
    pub details: Option<JsonDetails>,
    /// Whether the result is an error.
    pub is_error: bool,
    /// The result's usage, if the tool reported one.
    pub usage: Option<Value>,
}

/// Field-by-field replacements from a `tool_result` handler; `None` keeps the field, so
/// the default keeps the result as it is.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct ToolResultPatch {
    /// New content.
    pub content: Option<Vec<Content>>,
    /// New details (`null` cannot clear them, as in Pi).
    pub details: Option<Value>,
    /// New error flag.
    pub is_error: Option<bool>,
    /// New usage.
    pub usage: Option<Value>,
}

impl ToolResultPatch {
    /// Whether the patch changes nothing.
    pub fn is_keep(&self) -> bool {
        self.content.is_none()
            && self.details.is_none()
            && self.is_error.is_none()
            && self.usage.is_none()
    }
}

/// A `tool_result` handler. Sync closures
/// `Fn(&ToolResultEvent, &ExtensionContext) -> Result<ToolResultPatch, ToolError>`
/// are handlers too.
#[async_trait]
pub trait ToolResultHandler: Send + Sync + 'static {
    /// Inspects (and may rewrite) one executed call's result;
    /// `ToolResultPatch::default()` keeps it.
    async fn on_tool_result(
        &self,
        event: &ToolResultEvent,
        ctx: &ExtensionContext,
    ) -> Result<ToolResultPatch, ToolError>;
}

#[async_trait]
impl<F> ToolResultHandler for F
where
    F: Fn(&ToolResultEvent, &ExtensionContext) -> Result<ToolResultPatch, ToolError>
        + Send
        + Sync
        + 'static,
{
    async fn on_tool_result(
        &self,
        event: &ToolResultEvent,
        ctx: &ExtensionContext,
    ) -> Result<ToolResultPatch, ToolError> {
        self(event, ctx)
    }
}

/// A handler of the `tool_execution_start` / `_update` / `_end` events.
#[async_trait]
pub trait ToolExecutionHandler: Send + Sync + 'static {
    /// Observes one event (only `AgentEvent::ToolExecution*` are delivered).
    async fn on_tool_execution(
        &self,
        event: &AgentEvent,
        ctx: &ExtensionContext,
    ) -> Result<(), ToolError>;
}

#[async_trait]
impl<F> ToolExecutionHandler for F
where
    F: Fn(&AgentEvent, &ExtensionContext) -> Result<(), ToolError> + Send + Sync + 'static,
{
    async fn on_tool_execution(
        &self,
        event: &AgentEvent,
        ctx: &ExtensionContext,
    ) -> Result<(), ToolError> {
        self(event, ctx)
    }
}

pub(crate) fn panic_text(panic: &(dyn std::any::Any + Send)) -> String {
    pi_tool_core::__runtime::panic_text(panic, "the handler panicked")
}

/// Runs the `tool_call` chain: the first block or question wins; an error (or panic)
/// blocks.
pub(crate) async fn run_tool_call_chain(
    handlers: &[Arc<dyn ToolCallHandler>],
    event: &mut ToolCallEvent,
    ctx: &ExtensionContext,
) -> Result<ToolCallDecision, ToolError> {
    for handler in handlers {
        let outcome = AssertUnwindSafe(handler.on_tool_call(event, ctx))
            .catch_unwind()
            .await;
        match outcome {
            Ok(Ok(decision)) if decision.is_stop() => return Ok(decision),
            Ok(Ok(_)) => {}
            Ok(Err(error)) => return Err(error),
            Err(panic) => {
                return Err(ToolError::new(format!(
                    "Extension failed, blocking execution: {}",
                    panic_text(&*panic)
                )));
            }
        }
    }
    Ok(ToolCallDecision::Allow)
}

/// A `tool_result` handler that failed: reported, then skipped.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct HandlerFailure {
    pub(crate) index: usize,
    pub(crate) message: String,
}

/// Runs the `tool_result` chain over `event`; returns the session's merged replacement
/// (Pi's AgentSession afterToolCall: `None` when no handler changed anything) and the
/// failures to report.
pub(crate) async fn run_tool_result_chain(
    handlers: &[Arc<dyn ToolResultHandler>],
    event: &mut ToolResultEvent,
    ctx: &ExtensionContext,
) -> (Option<AfterToolCallResult>, Vec<HandlerFailure>) {
    let mut changed = ToolResultPatch::default();
    let mut any = false;
    let mut failures = Vec::new();
    for (index, handler) in handlers.iter().enumerate() {
        let outcome = AssertUnwindSafe(handler.on_tool_result(event, ctx))
            .catch_unwind()
            .await;
        let patch = match outcome {
            Ok(Ok(patch)) if patch.is_keep() => continue,
            Ok(Ok(patch)) => patch,
            Ok(Err(error)) => {
                failures.push(HandlerFailure {
                    index,
                    message: error.message().to_owned(),
                });
                continue;
            }
            Err(panic) => {
                failures.push(HandlerFailure {
                    index,
                    message: panic_text(&*panic),
                });
                continue;
            }
        };
        any = true;
        if let Some(content) = patch.content {
            event.content = content.clone();
            changed.content = Some(content);
        }
        if let Some(details) = patch.details {
            event.details = Some(JsonDetails::from(details.clone()));
            changed.details = Some(details);
        }
        if let Some(is_error) = patch.is_error {
            event.is_error = is_error;
            changed.is_error = Some(is_error);
        }
        if let Some(usage) = patch.usage {
            event.usage = Some(usage.clone());
            changed.usage = Some(usage);
        }
    }
    if !any {
        return (None, failures);
    }
    let result = AfterToolCallResult {
        // Pi: `content: hook?.content ?? result.content` — always present once anything changed.
        content: Some(changed.content.unwrap_or_else(|| event.content.clone())),
        details: changed.details,
        usage: changed.usage,
        terminate: None,
        is_error: changed.is_error,
    };
    (Some(result), failures)
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn ctx() -> ExtensionContext {
        ExtensionContext::builder("/tmp").build()
    }

    fn call_event() -> ToolCallEvent {
        ToolCallEvent {
            tool_name: "t".into(),
            tool_call_id: "c".into(),
            input: json!({"city": "Paris"}),
        }
    }

    #[tokio::test]
    async fn the_first_block_wins_and_later_handlers_are_not_called() {
        let called = Arc::new(std::sync::atomic::AtomicBool::new(false));
        let flag = called.clone();
        let handlers: Vec<Arc<dyn ToolCallHandler>> = vec![
            Arc::new(|e: &mut ToolCallEvent, _: &ExtensionContext| {
                e.input["city"] = json!("PARIS");
                Ok(ToolCallDecision::Allow)
            }),
            Arc::new(|_: &mut ToolCallEvent, _: &ExtensionContext| {
                Ok(ToolCallDecision::block("no"))
            }),
            Arc::new(move |_: &mut ToolCallEvent, _: &ExtensionContext| {
                flag.store(true, std::sync::atomic::Ordering::SeqCst);
                Ok(ToolCallDecision::Allow)
            }),
        ];
        let mut event = call_event();
        let decision = run_tool_call_chain(&handlers, &mut event, &ctx())
            .await
            .unwrap();
        assert_eq!(decision, ToolCallDecision::block("no"));
        assert_eq!(event.input["city"], "PARIS");
        assert!(!called.load(std::sync::atomic::Ordering::SeqCst));
    }

    #[tokio::test]
    async fn pi_s_non_blocking_object_allows_and_a_failing_handler_blocks() {
        // Pi's `{block: false, reason: "r"}` has no effect: it reads as Allow.
        assert_eq!(
            ToolCallDecision::from_pi(false, Some("r".into()), true),
            ToolCallDecision::Allow
        );
        let handlers: Vec<Arc<dyn ToolCallHandler>> =
            vec![Arc::new(|_: &mut ToolCallEvent, _: &ExtensionContext| {
                Ok(ToolCallDecision::from_pi(false, Some("r".into()), false))
            })];
        let decision = run_tool_call_chain(&handlers, &mut call_event(), &ctx())
            .await
            .unwrap();
        assert_eq!(decision, ToolCallDecision::Allow);
        let handlers: Vec<Arc<dyn ToolCallHandler>> =
            vec![Arc::new(|_: &mut ToolCallEvent, _: &ExtensionContext| {
                Err(ToolError::new("boom"))
            })];
        let error = run_tool_call_chain(&handlers, &mut call_event(), &ctx())
            .await
            .unwrap_err();
        assert_eq!(error.message(), "boom");
    }

    #[tokio::test]
    async fn result_handlers_see_earlier_replacements_and_failures_are_skipped() {
        let handlers: Vec<Arc<dyn ToolResultHandler>> = vec![
            Arc::new(|_: &ToolResultEvent, _: &ExtensionContext| {
                Ok(ToolResultPatch {
                    content: Some(vec![Content::text("new")]),
                    ..Default::default()
                })
            }),
            Arc::new(|_: &ToolResultEvent, _: &ExtensionContext| Err(ToolError::new("bad"))),
            Arc::new(|e: &ToolResultEvent, _: &ExtensionContext| {
                assert_eq!(e.content, vec![Content::text("new")]);
                Ok(ToolResultPatch {
                    is_error: Some(true),
                    details: Some(json!({"x": 1})),
                    ..Default::default()
                })
            }),
        ];
        let mut event = ToolResultEvent {
            tool_name: "t".into(),
            tool_call_id: "c".into(),
            input: json!({}),
            content: vec![Content::text("old")],
            details: None,
            is_error: false,
            usage: None,
        };
        let (result, failures) = run_tool_result_chain(&handlers, &mut event, &ctx()).await;
        let result = result.unwrap();
        assert_eq!(result.content, Some(vec![Content::text("new")]));
        assert_eq!(result.is_error, Some(true));
        assert_eq!(result.details, Some(json!({"x": 1})));
        assert_eq!(
            failures,
            vec![HandlerFailure {
                index: 1,
                message: "bad".into()
            }]
        );
    }
}
