//! The streaming half of pi-ai's `openai-completions` `stream`: each parsed chunk updates
//! the message and pushes events; the stream's end finishes every block at once.

use std::collections::HashMap;
use std::sync::Arc;

use serde_json::{Value, json};

use super::compat::Compat;
use super::details::{StreamedDetail, append_reasoning_detail, is_reasoning_detail};
use super::usage::parse_usage;
use crate::js::stringify;
use crate::model::{AssistantContent, Model, StopReason, ToolCall};
use crate::providers::openai_sse::js_truthy;
use crate::providers::partial_json::StreamingArguments;
use crate::providers::stream::Output;

/// A streaming tool call: where its block is and how its arguments accumulate.
struct ToolBlock {
    content_index: usize,
    stream_index: Option<u64>,
    input: ToolInput,
}

enum ToolInput {
    /// `function.arguments` text, parsed as it grows.
    Json(StreamingArguments),
    /// A `custom` tool call's raw input, kept as `{"input": text}` (pi-ai's grammar
    /// tools; this build sends none, but a server may still answer with one).
    Custom(CustomInput),
}

#[derive(Default)]
struct CustomInput {
    input: String,
    started: bool,
    closed: bool,
}

/// The property a custom tool call's text is stored under (no grammar tools are sent,
/// so pi-ai's fallback name applies).
const CUSTOM_INPUT_PROPERTY: &str = "input";

/// The stream's state (the locals of pi-ai's `stream`).
pub(super) struct Events<'a> {
    model: &'a Model,
    text: Option<usize>,
    thinking: Option<usize>,
    tools: Vec<ToolBlock>,
    by_index: HashMap<u64, usize>,
    by_id: HashMap<String, usize>,
    reasoning_details: Option<Vec<StreamedDetail>>,
    has_finish_reason: bool,
}

impl<'a> Events<'a> {
    pub(super) fn new(model: &'a Model) -> Self {
        Events {
            model,
            text: None,
            thinking: None,
            tools: Vec::new(),
            by_index: HashMap::new(),
            by_id: HashMap::new(),
            reasoning_details: None,
            has_finish_reason: false,
        }
    }

    /// One `ChatCompletionChunk` (anything the SDK yielded).
    pub(super) fn on_chunk(&mut self, chunk: &Value, out: &mut Output) -> Result<(), String> {
        let Value::Object(chunk) = chunk else {
            // pi-ai skips falsy and non-object chunks (an array is an object there,
            // but it has none of the fields read below).
            return Ok(());
        };
        // `responseId ||= chunk.id`: an empty id is kept until a later chunk brings one.
        if out.message.response_id.as_deref().is_none_or(str::is_empty) {
            out.message.response_id = chunk.get("id").and_then(Value::as_str).map(str::to_owned);
        }
        if let Some(name) = chunk.get("model").and_then(Value::as_str)
            && !name.is_empty()
            && name != self.model.id
            && out
                .message
                .response_model
                .as_deref()
                .is_none_or(str::is_empty)
        {
            out.message.response_model = Some(name.to_owned());
        }
        let chunk_usage = chunk.get("usage").filter(|u| js_truthy(u));
        if let Some(usage) = chunk_usage {
            out.message.usage = parse_usage(usage, self.model);
        }
        let Some(choice) = chunk
            .get("choices")
            .and_then(Value::as_array)
            .and_then(|c| c.first())
            .filter(|c| js_truthy(c))
        else {
            return Ok(());
        };
        // Moonshot puts usage on the choice.
        if chunk_usage.is_none()
            && let Some(usage) = choice.get("usage").filter(|u| js_truthy(u))
        {
            out.message.usage = parse_usage(usage, self.model);
        }
        if let Some(reason) = choice.get("finish_reason").filter(|r| js_truthy(r)) {
            let raw = match reason {
                Value::String(s) => s.clone(),
                other => stringify(other),
            };
            let (stop, error) = map_stop_reason(&raw);
            out.message.raw_stop_reason = Some(raw);
            out.message.stop_reason = stop;
            // The text goes with the stop reason it came with. pi-ai keeps an earlier
            // finish_reason's text when a later one succeeds, so its `done` message
            // carries an error (docs/differences-from-pi.md §21).
            out.message.error_message = error;
            self.has_finish_reason = true;
        }
        let Some(delta) = choice.get("delta").filter(|d| js_truthy(d)) else {
            return Ok(());
        };
        if let Some(text) = delta.get("content").and_then(Value::as_str)
            && !text.is_empty()
        {
            let index = self.text_block(out);
            if let Some(AssistantContent::Text { text: t, .. }) = out.message.content.get_mut(index)
            {
                t.push_str(text);
            }
            out.text_delta(index, text.to_owned());
        }
        // The first non-empty of the fields servers use (chutes.ai sends two with the
        // same text).
        let reasoning = ["reasoning_content", "reasoning", "reasoning_text"]
            .into_iter()
            .find_map(|field| {
                delta
                    .get(field)
                    .and_then(Value::as_str)
                    .filter(|s| !s.is_empty())
                    .map(|text| (field, text))
            });
        if let Some((field, text)) = reasoning {
            let signature = if self.model.provider == "opencode-go" && field == "reasoning" {
                "reasoning_content"
            } else {
                field
            };
            let index = self.thinking_block(out, signature);
            if let Some(AssistantContent::Thinking { thinking, .. }) =
                out.message.content.get_mut(index)
            {
                thinking.push_str(text);
            }
            out.thinking_delta(index, text.to_owned());
        }
        if let Some(calls) = delta.get("tool_calls").filter(|c| js_truthy(c)) {
            let Value::Array(calls) = calls else {
                return Err("choice.delta.tool_calls is not iterable".to_owned());
            };
            for call in calls {
                self.on_tool_call(call, out)?;
            }
        }
        if let Some(Value::Array(details)) = delta.get("reasoning_details") {
            for detail in details.iter().filter(|d| is_reasoning_detail(d)) {
                self.thinking_block(out, "");
                append_reasoning_detail(
                    self.reasoning_details.get_or_insert_with(Vec::new),
                    detail,
                );
            }
        }
        Ok(())
    }

    fn text_block(&mut self, out: &mut Output) -> usize {
        if let Some(index) = self.text {
            return index;
        }
        let index = out.add_block(AssistantContent::Text {
            text: String::new(),
            text_signature: None,
        });
        self.text = Some(index);
        out.text_start(index);
        index
    }

    fn thinking_block(&mut self, out: &mut Output, signature: &str) -> usize {
        if let Some(index) = self.thinking {
            return index;
        }
        let index = out.add_block(AssistantContent::Thinking {
            thinking: String::new(),
            thinking_signature: Some(signature.to_owned()),
            redacted: None,
        });
        self.thinking = Some(index);
        out.thinking_start(index);
        index
    }

    fn call_mut(out: &mut Output, index: usize) -> Option<&mut ToolCall> {
        match out.message.content.get_mut(index) {
            Some(AssistantContent::ToolCall(call)) => Some(call),
            _ => None,
        }
    }

    /// `ensureToolCallBlock` and the delta that follows it.
    fn on_tool_call(&mut self, call: &Value, out: &mut Output) -> Result<(), String> {
        let Value::Object(call) = call else {
            return Err(format!(
                "Cannot read properties of {} (reading 'index')",
                if call.is_null() { "null" } else { "undefined" }
            ));
        };
        let stream_index = call
            .get("index")
            .and_then(Value::as_f64)
            .map(|f| if f == 0.0 { 0 } else { f.to_bits() });
        let function = call.get("function").filter(|f| !f.is_null());
        let custom = call.get("custom").filter(|c| !c.is_null());
        let name_of = |v: Option<&Value>| {
            v.and_then(|v| v.get("name"))
                .filter(|n| !n.is_null())
                .map(|n| n.as_str().unwrap_or_default().to_owned())
        };
        let name = name_of(function)
            .or_else(|| name_of(custom))
            .unwrap_or_default();
        let id = call
            .get("id")
            .and_then(Value::as_str)
            .filter(|s| !s.is_empty());
        let is_custom = custom.is_some_and(js_truthy) && !function.is_some_and(js_truthy);
        let mut slot = stream_index.and_then(|i| self.by_index.get(&i).copied());
        if slot.is_none() {
            slot = id.and_then(|id| self.by_id.get(id).copied());
        }
        let slot = match slot {
            Some(slot) => slot,
            None => {
                let input = if is_custom {
                    ToolInput::Custom(CustomInput::default())
                } else {
                    ToolInput::Json(StreamingArguments::default())
                };
                let arguments = if is_custom {
                    json!({CUSTOM_INPUT_PROPERTY: ""})
                } else {
                    json!({})
                };
                let content_index = out.add_block(AssistantContent::ToolCall(ToolCall::new(
                    id.unwrap_or_default(),
                    name.as_str(),
                    arguments,
                )));
                self.tools.push(ToolBlock {
                    content_index,
                    stream_index,
                    input,
                });
                let slot = self.tools.len() - 1;
                if let Some(i) = stream_index {
                    self.by_index.insert(i, slot);
                }
                if let Some(id) = id {
                    self.by_id.insert(id.to_owned(), slot);
                }
                out.toolcall_start(content_index);
                slot
            }
        };
        let block = &mut self.tools[slot];
        if let Some(i) = stream_index
            && block.stream_index.is_none()
        {
            block.stream_index = Some(i);
            self.by_index.insert(i, slot);
        }
        if let Some(id) = id {
            self.by_id.insert(id.to_owned(), slot);
        }
        if is_custom && !matches!(block.input, ToolInput::Custom(_)) {
            block.input = ToolInput::Custom(CustomInput::default());
            if let Some(tool) = Self::call_mut(out, block.content_index) {
                tool.arguments = Arc::new(json!({CUSTOM_INPUT_PROPERTY: ""}));
            }
        }
        let content_index = block.content_index;
        if let Some(tool) = Self::call_mut(out, content_index) {
            if tool.id.is_empty()
                && let Some(id) = id
            {
                tool.id = id.into();
            }
            if tool.name.is_empty() && !name.is_empty() {
                tool.name = name.as_str().into();
            }
        }
        let arguments = function
            .and_then(|f| f.get("arguments"))
            .and_then(Value::as_str)
            .filter(|s| !s.is_empty());
        let custom_input = custom
            .and_then(|c| c.get("input"))
            .and_then(Value::as_str)
            .filter(|s| !s.is_empty());
        let mut delta = String::new();
        if let Some(arguments) = arguments {
            delta = arguments.to_owned();
            let parsed = match &mut block.input {
                ToolInput::Json(args) => args.push(arguments),
                // pi-ai starts a fresh argument text here (the custom buffer stays).
                ToolInput::Custom(_) => {
                    let mut args = StreamingArguments::default();
                    let parsed = args.push(arguments);
                    block.input = ToolInput::Json(args);
                    parsed
                }
            };
            if let Some(tool) = Self::call_mut(out, content_index) {
                tool.arguments = parsed;
            }
        } else if let Some(more) = custom_input
            && let ToolInput::Custom(buffer) = &mut block.input
        {
            let next = format!("{}{more}", buffer.input);
            delta = custom_delta(buffer, &next, false)?.unwrap_or_default();
            if let Some(tool) = Self::call_mut(out, content_index) {
                tool.arguments = Arc::new(json!({CUSTOM_INPUT_PROPERTY: next}));
            }
        }
        out.toolcall_delta(content_index, delta);
        Ok(())
    }

    /// The stream ended: every block gets its `*_end`, in content order.
    pub(super) fn finish_blocks(&mut self, out: &mut Output) -> Result<(), String> {
        for index in 0..out.message.content.len() {
            match &out.message.content[index] {
                AssistantContent::Text { text, .. } => {
                    let text = text.clone();
                    out.text_end(index, text);
                }
                AssistantContent::Thinking { .. } => {
                    self.apply_reasoning_details(out);
                    if let Some(AssistantContent::Thinking { thinking, .. }) =
                        out.message.content.get(index)
                    {
                        let thinking = thinking.clone();
                        out.thinking_end(index, thinking);
                    }
                }
                AssistantContent::ToolCall(_) => {
                    let Some(block) = self.tools.iter_mut().find(|b| b.content_index == index)
                    else {
                        continue;
                    };
                    match &mut block.input {
                        ToolInput::Json(args) => {
                            let parsed = Arc::new(args.finish());
                            if let Some(tool) = Self::call_mut(out, index) {
                                tool.arguments = parsed;
                            }
                        }
                        ToolInput::Custom(buffer) => {
                            let current = buffer.input.clone();
                            if let Some(delta) = custom_delta(buffer, &current, true)? {
                                if let Some(tool) = Self::call_mut(out, index) {
                                    tool.arguments =
                                        Arc::new(json!({CUSTOM_INPUT_PROPERTY: current}));
                                }
                                out.toolcall_delta(index, delta);
                            }
                        }
                    }
                    if let Some(AssistantContent::ToolCall(call)) = out.message.content.get(index) {
                        let call = call.clone();
                        out.toolcall_end(index, call);
                    }
                }
            }
        }
        Ok(())
    }

    /// `applyStreamedReasoningDetails`: the details become the thinking block's signature.
    pub(super) fn apply_reasoning_details(&self, out: &mut Output) {
        let Some(details) = &self.reasoning_details else {
            return;
        };
        let signature = stringify(&Value::Array(
            details.iter().map(StreamedDetail::to_json).collect(),
        ));
        for block in &mut out.message.content {
            if let AssistantContent::Thinking {
                thinking_signature, ..
            } = block
            {
                *thinking_signature = Some(signature.clone());
            }
        }
    }

    /// What pi-ai checks after the blocks are finished; `Err` is the error message.
    pub(super) fn finish(&self, out: &mut Output, compat: &Compat) -> Result<(), String> {
        if !self.has_finish_reason && !compat.supports_finish_reason {
            let tool_use = out
                .message
                .content
                .iter()
                .any(|b| matches!(b, AssistantContent::ToolCall(_)));
            out.message.stop_reason = if tool_use {
                StopReason::ToolUse
            } else {
                StopReason::Stop
            };
        }
        if out.message.stop_reason == StopReason::Error {
            return Err(out
                .message
                .error_message
                .clone()
                .filter(|m| !m.is_empty())
                .unwrap_or_else(|| "Provider returned an error stop reason".to_owned()));
        }
        if (compat.supports_finish_reason && !self.has_finish_reason)
            || out.message.stop_reason == StopReason::Pending
        {
            return Err("Stream ended without finish_reason".to_owned());
        }
        Ok(())
    }
}

/// `appendGrammarToolInputJsonDelta`: the JSON text that extends `{"input":"...` to hold
/// `next`; `None` when there is nothing to add.
fn custom_delta(
    buffer: &mut CustomInput,
    next: &str,
    close: bool,
) -> Result<Option<String>, String> {
    if buffer.closed {
        if close && next == buffer.input {
            return Ok(None);
        }
        return Err(format!(
            "grammar tool input for property \"{CUSTOM_INPUT_PROPERTY}\" changed after it was closed"
        ));
    }
    let Some(added) = next.strip_prefix(buffer.input.as_str()) else {
        return Err(format!(
            "grammar tool input for property \"{CUSTOM_INPUT_PROPERTY}\" changed non-monotonically"
        ));
    };
    if !close && added.is_empty() {
        return Ok(None);
    }
    let mut delta = String::new();
    if !buffer.started {
        delta.push_str(&format!("{{\"{CUSTOM_INPUT_PROPERTY}\":\""));
        buffer.started = true;
    }
    let quoted = stringify(&Value::String(added.to_owned()));
    delta.push_str(&quoted[1..quoted.len() - 1]);
    buffer.input = next.to_owned();
    if close {
        delta.push_str("\"}");
        buffer.closed = true;
    }
    Ok(Some(delta))
}

/// `mapStopReason`.
fn map_stop_reason(reason: &str) -> (StopReason, Option<String>) {
    match reason {
        "stop" | "end" => (StopReason::Stop, None),
        "length" => (StopReason::Length, None),
        "function_call" | "tool_calls" => (StopReason::ToolUse, None),
        other => (
            StopReason::Error,
            Some(format!("Provider finish_reason: {other}")),
        ),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn custom_input_becomes_a_json_object_text() {
        let mut buffer = CustomInput::default();
        assert_eq!(
            custom_delta(&mut buffer, "a\"b", false),
            Ok(Some("{\"input\":\"a\\\"b".to_owned()))
        );
        assert_eq!(custom_delta(&mut buffer, "a\"b", false), Ok(None));
        assert_eq!(
            custom_delta(&mut buffer, "a\"b", true),
            Ok(Some("\"}".to_owned()))
        );
        assert_eq!(custom_delta(&mut buffer, "a\"b", true), Ok(None));
    }
}
