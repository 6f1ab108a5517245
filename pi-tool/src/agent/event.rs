//! `AgentEvent`: what the agent tells its listeners, in Pi's JSON shape.
//!
//! The grammar of a run (conformance/SEMANTICS.md §1.1):
//!
//! ```text
//! agent_start
//! turn_start, (message_start, message_end) per prompt message
//!   message_start (assistant, partial) message_update* message_end (final)
//!   [tool batch: tool_execution_start, tool_execution_update*, tool_execution_end,
//!                toolResult message_start/message_end]
//!   turn_end {message, toolResults}
//! (turn_start ... turn_end)*
//! agent_end {messages: the messages this run added}
//! ```
//!
//! Listeners are awaited one after another, in subscription order, before the loop
//! moves on: a listener that aborts the run does so before the next step.

use std::sync::Arc;

use serde::Serialize;
use serde_json::Value;

use crate::model::AssistantMessageEvent;
use crate::model::{AssistantMessage, Message, ToolResultMessage, serialize_assistant};
use pi_tool_core::JsonToolResult;

/// One agent lifecycle event (Pi's `AgentEvent`).
#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(
    tag = "type",
    rename_all = "snake_case",
    rename_all_fields = "camelCase"
)]
#[non_exhaustive]
pub enum AgentEvent {
    /// A run began.
    AgentStart,
    /// A run ended.
    AgentEnd {
        /// The messages this run added (prompts, assistant messages, tool results).
        messages: Vec<Message>,
    },
    /// A turn began.
    TurnStart,
    /// A turn ended.
    TurnEnd {
        /// The turn's assistant message.
        message: Message,
        /// Its tool results, in source order.
        tool_results: Vec<Arc<ToolResultMessage>>,
    },
    /// A message began (assistant: the partial at the stream's `start`).
    MessageStart {
        /// The message.
        message: Message,
    },
    /// An assistant message is streaming.
    MessageUpdate {
        /// The partial message.
        #[serde(serialize_with = "serialize_assistant")]
        message: Arc<AssistantMessage>,
        /// The streaming event.
        assistant_message_event: AssistantMessageEvent,
    },
    /// A message is complete (and now part of the transcript).
    MessageEnd {
        /// The message.
        message: Message,
    },
    /// A tool call began.
    ToolExecutionStart {
        /// The call id, shared with the call.
        tool_call_id: Arc<str>,
        /// The tool name the call used, shared with the call.
        tool_name: Arc<str>,
        /// The raw arguments (not prepared, not validated), shared with the tool call.
        args: Arc<Value>,
        /// The call that made this one through its context (`ctx.call_tool`); `None` for
        /// a call the model made. Not in Pi's events (Pi 0.85.0 has no nested calls), and
        /// left out of the JSON when `None`.
        #[serde(skip_serializing_if = "Option::is_none")]
        parent_tool_call_id: Option<Arc<str>>,
    },
    /// A running tool reported progress.
    ToolExecutionUpdate {
        /// The call id, shared with the call.
        tool_call_id: Arc<str>,
        /// The tool name the call used, shared with the call.
        tool_name: Arc<str>,
        /// The raw arguments, shared with the tool call.
        args: Arc<Value>,
        /// The partial result, as the tool gave it.
        partial_result: JsonToolResult,
        /// The call that made this one through its context (`ctx.call_tool`); `None` for
        /// a call the model made. Not in Pi's events (Pi 0.85.0 has no nested calls), and
        /// left out of the JSON when `None`.
        #[serde(skip_serializing_if = "Option::is_none")]
        parent_tool_call_id: Option<Arc<str>>,
    },
    /// A tool call ended.
    ToolExecutionEnd {
        /// The call id, shared with the call.
        tool_call_id: Arc<str>,
        /// The tool name the call used, shared with the call.
        tool_name: Arc<str>,
        /// The finalized result.
        result: JsonToolResult,
        /// Whether it failed.
        is_error: bool,
        /// The call that made this one through its context (`ctx.call_tool`); `None` for
        /// a call the model made. Not in Pi's events (Pi 0.85.0 has no nested calls), and
        /// left out of the JSON when `None`.
        #[serde(skip_serializing_if = "Option::is_none")]
        parent_tool_call_id: Option<Arc<str>>,
    },
}

impl AgentEvent {
    /// The event's name, Pi's `type` field (`tool_execution_start`, ...).
    #[doc(alias = "type")]
    pub fn name(&self) -> &'static str {
        match self {
            AgentEvent::AgentStart => "agent_start",
            AgentEvent::AgentEnd { .. } => "agent_end",
            AgentEvent::TurnStart => "turn_start",
            AgentEvent::TurnEnd { .. } => "turn_end",
            AgentEvent::MessageStart { .. } => "message_start",
            AgentEvent::MessageUpdate { .. } => "message_update",
            AgentEvent::MessageEnd { .. } => "message_end",
            AgentEvent::ToolExecutionStart { .. } => "tool_execution_start",
            AgentEvent::ToolExecutionUpdate { .. } => "tool_execution_update",
            AgentEvent::ToolExecutionEnd { .. } => "tool_execution_end",
        }
    }

    /// The tool call id of a `tool_execution_*` event.
    pub fn tool_call_id(&self) -> Option<&str> {
        match self {
            AgentEvent::ToolExecutionStart { tool_call_id, .. }
            | AgentEvent::ToolExecutionUpdate { tool_call_id, .. }
            | AgentEvent::ToolExecutionEnd { tool_call_id, .. } => Some(tool_call_id),
            _ => None,
        }
    }

    /// The role of the message of a `message_*` or `turn_end` event.
    pub fn message_role(&self) -> Option<&'static str> {
        match self {
            AgentEvent::MessageStart { message }
            | AgentEvent::MessageEnd { message }
            | AgentEvent::TurnEnd { message, .. } => Some(message.role()),
            AgentEvent::MessageUpdate { .. } => Some("assistant"),
            _ => None,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn tool_events_serialise_like_pi() {
        let start = AgentEvent::ToolExecutionStart {
            tool_call_id: "c1".into(),
            tool_name: "get_weather".into(),
            args: Arc::new(json!({"city": "Paris"})),
            parent_tool_call_id: None,
        };
        assert_eq!(
            serde_json::to_value(&start).unwrap(),
            json!({"type": "tool_execution_start", "toolCallId": "c1", "toolName": "get_weather", "args": {"city": "Paris"}})
        );
        let end = AgentEvent::ToolExecutionEnd {
            tool_call_id: "c1".into(),
            tool_name: "get_weather".into(),
            result: JsonToolResult::error("boom"),
            is_error: true,
            parent_tool_call_id: None,
        };
        assert_eq!(
            serde_json::to_value(&end).unwrap(),
            json!({"type": "tool_execution_end", "toolCallId": "c1", "toolName": "get_weather",
                   "result": {"content": [{"type": "text", "text": "boom"}], "details": {}}, "isError": true})
        );
        let update = AgentEvent::ToolExecutionUpdate {
            tool_call_id: "c1".into(),
            tool_name: "t".into(),
            args: Arc::new(json!({})),
            partial_result: JsonToolResult::from_json(json!({"content": []})).unwrap(),
            parent_tool_call_id: Some("c0".into()),
        };
        assert_eq!(
            serde_json::to_value(&update).unwrap()["partialResult"],
            json!({"content": []})
        );
        assert_eq!(
            serde_json::to_value(&update).unwrap()["parentToolCallId"],
            json!("c0")
        );
        assert_eq!(
            serde_json::to_value(AgentEvent::TurnStart).unwrap(),
            json!({"type": "turn_start"})
        );
    }
}
