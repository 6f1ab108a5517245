//! The ordered record of one run: normalised agent events (FORMAT.md §5.4) and harness
//! entries (§5.5), interleaved at the moment they happen.

use std::sync::{Arc, Mutex, MutexGuard};

use pi_tool::agent::AgentEvent;
use pi_tool::model::Message;
use serde_json::{Map, Value, json};

/// The shared, ordered list of entries of one run.
#[derive(Clone, Default)]
pub struct Recorder {
    entries: Arc<Mutex<Vec<Value>>>,
}

impl Recorder {
    fn lock(&self) -> MutexGuard<'_, Vec<Value>> {
        self.entries.lock().unwrap_or_else(|p| p.into_inner())
    }

    /// Records an agent event.
    pub fn event(&self, event: &AgentEvent) {
        let value = normalise_event(event);
        self.lock().push(value);
    }

    /// Records a harness entry `harness:<kind>` with these fields.
    pub fn harness(&self, kind: &str, fields: Value) {
        let mut entry = Map::new();
        entry.insert("type".to_owned(), Value::String(format!("harness:{kind}")));
        if let Value::Object(fields) = fields {
            entry.extend(fields);
        }
        self.lock().push(Value::Object(entry));
    }

    /// Every entry so far.
    pub fn entries(&self) -> Vec<Value> {
        self.lock().clone()
    }
}

fn to_value<T: serde::Serialize>(v: &T) -> Value {
    serde_json::to_value(v).unwrap_or(Value::Null)
}

/// FORMAT.md §5.3.
pub fn normalise_message(message: &Message) -> Value {
    let mut value = to_value(message);
    let Some(map) = value.as_object_mut() else {
        return value;
    };
    match message {
        Message::User(_) => {
            map.retain(|k, _| k == "role" || k == "content");
        }
        Message::Assistant(_) => {
            map.retain(|k, _| {
                matches!(
                    k.as_str(),
                    "role" | "content" | "stopReason" | "errorMessage"
                )
            });
        }
        Message::ToolResult(_) => {
            map.shift_remove("timestamp");
        }
    }
    value
}

/// FORMAT.md §5.5 message summary.
pub fn summarise_message(message: &Message) -> Value {
    match message {
        Message::Assistant(m) => json!({"role": "assistant", "stopReason": m.stop_reason}),
        Message::ToolResult(m) => json!({
            "role": "toolResult",
            "toolCallId": m.tool_call_id,
            "toolName": m.tool_name,
            "isError": m.is_error,
        }),
        other => json!({"role": other.role()}),
    }
}

/// FORMAT.md §5.4.
pub fn normalise_event(event: &AgentEvent) -> Value {
    let kind = event.name();
    match event {
        AgentEvent::AgentStart | AgentEvent::TurnStart => json!({"type": kind}),
        AgentEvent::AgentEnd { messages } => json!({
            "type": kind,
            "messages": messages.iter().map(normalise_message).collect::<Vec<_>>(),
        }),
        AgentEvent::TurnEnd {
            message,
            tool_results,
        } => json!({
            "type": kind,
            "message": normalise_message(message),
            "toolResults": tool_results
                .iter()
                .map(|m| normalise_message(&Message::ToolResult(m.clone())))
                .collect::<Vec<_>>(),
        }),
        AgentEvent::MessageStart { message } | AgentEvent::MessageEnd { message } => {
            json!({"type": kind, "message": normalise_message(message)})
        }
        AgentEvent::MessageUpdate {
            assistant_message_event,
            ..
        } => {
            let mut ame = to_value(assistant_message_event);
            if let Some(map) = ame.as_object_mut() {
                map.shift_remove("partial");
            }
            json!({"type": kind, "assistantMessageEvent": ame})
        }
        AgentEvent::ToolExecutionStart {
            tool_call_id,
            tool_name,
            args,
            ..
        } => json!({"type": kind, "toolCallId": tool_call_id, "toolName": tool_name, "args": args}),
        AgentEvent::ToolExecutionUpdate {
            tool_call_id,
            tool_name,
            args,
            partial_result,
            ..
        } => json!({
            "type": kind,
            "toolCallId": tool_call_id,
            "toolName": tool_name,
            "args": args,
            "partialResult": partial_result.to_json(),
        }),
        AgentEvent::ToolExecutionEnd {
            tool_call_id,
            tool_name,
            result,
            is_error,
            ..
        } => json!({
            "type": kind,
            "toolCallId": tool_call_id,
            "toolName": tool_name,
            "result": result.to_json(),
            "isError": is_error,
        }),
        // An event Pi 0.85.0 does not have: the traces cannot contain it.
        _ => json!({"type": kind}),
    }
}
