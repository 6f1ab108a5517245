//! The agent hooks a session installs (`before_tool_call` runs the extensions'
//! `tool_call` chain, `after_tool_call` their `tool_result` chain, `prepare_next_turn`
//! hands each later turn the current tools and prompt) and the listener that feeds the
//! store, the `tool_execution_*` handlers and the session's subscribers.

use std::panic::AssertUnwindSafe;
use std::sync::{Arc, Weak};

use async_trait::async_trait;
use futures::FutureExt;

use super::handlers::{
    ToolCallEvent, ToolCallHandler, ToolResultEvent, ToolResultHandler, panic_text,
    run_tool_call_chain, run_tool_result_chain,
};
use crate::agent::{
    AfterToolCall, AfterToolCallContext, AfterToolCallResult, AgentEvent, AgentListener,
    BeforeToolCall, BeforeToolCallContext, BeforeToolCallResult, CompletedTurn, ListenerResult,
    NextTurn, PrepareNextTurn,
};
use crate::model::Context;
use pi_tool_core::AbortSignal;
use pi_tool_core::ToolError;

use super::event::{ExtensionErrorEvent, SessionEvent};
use super::shared::{Shared, lock};

pub(crate) struct SessionHooks(pub(crate) Weak<Shared>);

#[async_trait]
impl BeforeToolCall for SessionHooks {
    async fn before_tool_call(
        &self,
        ctx: BeforeToolCallContext<'_>,
        signal: &AbortSignal,
    ) -> Result<BeforeToolCallResult, ToolError> {
        let Some(shared) = self.0.upgrade() else {
            return Ok(BeforeToolCallResult::Allow);
        };
        let handlers: Vec<Arc<dyn ToolCallHandler>> = shared
            .handlers(|s| &s.tool_call)
            .into_iter()
            .map(|(_, h)| h)
            .collect();
        if handlers.is_empty() {
            return Ok(BeforeToolCallResult::Allow);
        }
        let mut event = ToolCallEvent {
            tool_name: ctx.tool_call.name.to_string(),
            tool_call_id: ctx.tool_call.id.to_string(),
            input: std::mem::take(ctx.args),
        };
        let ext_ctx = shared.context(Some(signal.clone()));
        let outcome = run_tool_call_chain(&handlers, &mut event, &ext_ctx).await;
        *ctx.args = event.input;
        // The agent's call policy redacts what reaches the model (block reasons and
        // errors become error results).
        outcome
    }
}

#[async_trait]
impl AfterToolCall for SessionHooks {
    async fn after_tool_call(
        &self,
        ctx: AfterToolCallContext<'_>,
        signal: &AbortSignal,
    ) -> Result<AfterToolCallResult, ToolError> {
        let Some(shared) = self.0.upgrade() else {
            return Ok(AfterToolCallResult::default());
        };
        let handlers = shared.handlers(|s| &s.tool_result);
        let mut after = None;
        if !handlers.is_empty() {
            let mut event = ToolResultEvent {
                tool_name: ctx.tool_call.name.to_string(),
                tool_call_id: ctx.tool_call.id.to_string(),
                input: ctx.args.clone(),
                content: ctx.result.content.clone(),
                details: ctx.result.details.clone(),
                is_error: ctx.is_error,
                usage: ctx.result.usage.clone(),
            };
            let ext_ctx = shared.context(Some(signal.clone()));
            let list: Vec<Arc<dyn ToolResultHandler>> =
                handlers.iter().map(|(_, h)| h.clone()).collect();
            let (result, failures) = run_tool_result_chain(&list, &mut event, &ext_ctx).await;
            for failure in failures {
                let owner = handlers
                    .get(failure.index)
                    .map(|(o, _)| o.to_string())
                    .unwrap_or_default();
                shared.emit(SessionEvent::ExtensionError(ExtensionErrorEvent {
                    extension_path: owner,
                    event: "tool_result".to_owned(),
                    error: failure.message,
                }));
            }
            after = result;
        }
        Ok(after.unwrap_or_default())
    }
}

#[async_trait]
impl PrepareNextTurn for SessionHooks {
    async fn prepare_next_turn(
        &self,
        turn: CompletedTurn<'_>,
        _signal: &AbortSignal,
    ) -> Option<NextTurn> {
        let shared = self.0.upgrade()?;
        let (system_prompt, tools) = {
            let state = lock(&shared.state);
            (state.system_prompt.clone(), state.active_tools.clone())
        };
        Some(NextTurn {
            context: Some(Context {
                system_prompt,
                messages: turn.context.messages.clone(),
                tools,
            }),
            model: None,
            thinking_level: None,
        })
    }
}

pub(crate) struct SessionForwarder(pub(crate) Weak<Shared>);

#[async_trait]
impl AgentListener for SessionForwarder {
    async fn on_event(&self, event: &AgentEvent, signal: &AbortSignal) -> ListenerResult {
        let Some(shared) = self.0.upgrade() else {
            return Ok(());
        };
        match event {
            AgentEvent::MessageEnd { message } => shared.store.push(message.clone()),
            AgentEvent::ToolExecutionStart { .. }
            | AgentEvent::ToolExecutionUpdate { .. }
            | AgentEvent::ToolExecutionEnd { .. } => {
                let handlers = shared.handlers(|s| &s.tool_execution);
                if !handlers.is_empty() {
                    let ctx = shared.context(Some(signal.clone()));
                    for (owner, handler) in handlers {
                        let outcome = AssertUnwindSafe(handler.on_tool_execution(event, &ctx))
                            .catch_unwind()
                            .await;
                        let error = match outcome {
                            Ok(Ok(())) => continue,
                            Ok(Err(e)) => e.message().to_owned(),
                            Err(panic) => panic_text(&*panic),
                        };
                        // Pi swallows these; we at least log them.
                        tracing::warn!(extension = %owner, event = event.name(), %error, "extension handler failed");
                    }
                }
            }
            _ => {}
        }
        shared.emit_with(|| SessionEvent::Agent(event.clone()));
        Ok(())
    }
}
