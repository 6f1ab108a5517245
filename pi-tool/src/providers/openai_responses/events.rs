//! pi-ai's `processResponsesStream`: Responses stream events in, pi's message events out.
//!
//! Each output item (reasoning, message, function call, custom tool call) gets a *slot*
//! when it is added, keyed by its `output_index` as a JavaScript `Map` keys it (llama.cpp
//! sends no `output_index`, so every item shares the key `undefined` and still works:
//! items arrive one after another). Deltas go to the slot of their index when its type
//! matches; `output_item.done` replaces the streamed text with the item's own and closes
//! the slot. `response.completed` / `response.incomplete` set usage and the stop reason;
//! `response.failed` and `error` end the stream with pi-ai's messages.

use std::collections::HashMap;
use std::sync::Arc;

use serde_json::{Map, Value};

use super::value::{MapKey, display, join_element, member, optional, string, truthy};
use crate::js;
use crate::model::{AssistantContent, Model, StopReason, ToolCall};
use crate::providers::cost::calculate_cost;
use crate::providers::partial_json::json_parse;
use crate::providers::partial_json::{StreamingArguments, parse_streaming_json};
use crate::providers::stream::Output;

/// The state of one stream: open slots, reasoning blocks by item id, whether a terminal
/// response event arrived.
#[derive(Default)]
pub(super) struct ResponsesEvents {
    slots: HashMap<MapKey, Slot>,
    reasoning_by_id: HashMap<MapKey, usize>,
    saw_terminal: bool,
    unique: u64,
}

struct Slot {
    index: usize,
    kind: SlotKind,
}

enum SlotKind {
    Thinking,
    Text,
    /// A function call and its argument text (pi-ai's `partialJson`).
    Function(StreamingArguments),
    /// A custom (grammar) tool call and its JSON rendering (pi-ai's `customInput`).
    Custom(CustomInput),
}

impl SlotKind {
    fn name(&self) -> &'static str {
        match self {
            SlotKind::Thinking => "thinking",
            SlotKind::Text => "text",
            SlotKind::Function(_) | SlotKind::Custom(_) => "toolCall",
        }
    }
}

/// A custom tool call's raw input streamed as the JSON text `{"<property>":"<input>"}`.
struct CustomInput {
    property: String,
    input: String,
    started: bool,
    closed: bool,
}

impl CustomInput {
    /// `appendGrammarToolInputJsonDelta`: the JSON text that extends what was sent so far
    /// to `next` (and closes the object when `close`), `None` when there is nothing new.
    fn append(&mut self, next: &str, close: bool) -> Result<Option<String>, String> {
        if self.closed {
            if close && next == self.input {
                return Ok(None);
            }
            return Err(format!(
                "grammar tool input for property \"{}\" changed after it was closed",
                self.property
            ));
        }
        let Some(added) = next.strip_prefix(self.input.as_str()) else {
            return Err(format!(
                "grammar tool input for property \"{}\" changed non-monotonically",
                self.property
            ));
        };
        if !close && added.is_empty() {
            return Ok(None);
        }
        let mut delta = String::new();
        if !self.started {
            delta.push('{');
            delta.push_str(&js::stringify(&Value::String(self.property.clone())));
            delta.push_str(":\"");
            self.started = true;
        }
        let quoted = js::stringify(&Value::String(added.to_owned()));
        delta.push_str(&quoted[1..quoted.len() - 1]);
        self.input = next.to_owned();
        if close {
            delta.push_str("\"}");
            self.closed = true;
        }
        Ok(Some(delta))
    }
}

impl ResponsesEvents {
    /// A stream before its first event.
    pub(super) fn new() -> Self {
        ResponsesEvents::default()
    }

    /// Whether `response.completed`, `response.incomplete` or `response.failed` arrived.
    pub(super) fn saw_terminal(&self) -> bool {
        self.saw_terminal
    }

    fn key(&mut self, value: Option<&Value>) -> MapKey {
        MapKey::of(value, &mut self.unique)
    }

    /// Applies one event. Err is the message pi-ai throws (the stream then ends).
    pub(super) fn handle(
        &mut self,
        out: &mut Output,
        model: &Model,
        event: &Value,
    ) -> Result<(), String> {
        let kind = member(Some(event), "type")?;
        let Some(kind) = string(kind) else {
            return Ok(());
        };
        let output_index = optional(Some(event), "output_index");
        match kind {
            "response.created" => {
                let response = member(Some(event), "response")?;
                let id = member(response, "id")?;
                out.message.response_id = string(id).map(str::to_owned);
            }
            "response.output_item.added" => {
                let key = self.key(output_index);
                let item = member(Some(event), "item")?;
                self.create_slot(out, key, item)?;
            }
            "response.reasoning_summary_text.delta" | "response.reasoning_text.delta" => {
                let delta = display(optional(Some(event), "delta"));
                self.thinking_delta(out, output_index, delta);
            }
            "response.reasoning_summary_part.done" => {
                self.thinking_delta(out, output_index, "\n\n".to_owned());
            }
            "response.output_text.delta" | "response.refusal.delta" => {
                let key = self.key(output_index);
                let Some(slot) = self
                    .slots
                    .get(&key)
                    .filter(|s| matches!(s.kind, SlotKind::Text))
                else {
                    return Ok(());
                };
                let delta = display(optional(Some(event), "delta"));
                if let Some(AssistantContent::Text { text, .. }) =
                    out.message.content.get_mut(slot.index)
                {
                    text.push_str(&delta);
                }
                out.text_delta(slot.index, delta);
            }
            "response.function_call_arguments.delta" => {
                let key = self.key(output_index);
                let Some(slot) = self.slots.get_mut(&key) else {
                    return Ok(());
                };
                let SlotKind::Function(arguments) = &mut slot.kind else {
                    return Ok(());
                };
                let delta = display(optional(Some(event), "delta"));
                let parsed = arguments.push(&delta);
                set_arguments(out, slot.index, parsed);
                out.toolcall_delta(slot.index, delta);
            }
            "response.function_call_arguments.done" => {
                let key = self.key(output_index);
                let Some(slot) = self.slots.get_mut(&key) else {
                    return Ok(());
                };
                let SlotKind::Function(arguments) = &mut slot.kind else {
                    return Ok(());
                };
                let Some(full) = string(optional(Some(event), "arguments")) else {
                    set_arguments(out, slot.index, Arc::new(Value::Object(Map::new())));
                    return Err("Cannot read properties of undefined (reading 'startsWith')".into());
                };
                // The final text replaces the streamed one; only an extension of what
                // streamed is announced as a delta.
                let extension = full.strip_prefix(arguments.text()).map(str::to_owned);
                if extension.is_none() {
                    *arguments = StreamingArguments::default();
                }
                arguments.push(extension.as_deref().unwrap_or(full));
                set_arguments(out, slot.index, Arc::new(arguments.finish()));
                if let Some(delta) = extension.filter(|d| !d.is_empty()) {
                    out.toolcall_delta(slot.index, delta);
                }
            }
            "response.custom_tool_call_input.delta" | "response.custom_tool_call_input.done" => {
                let key = self.key(output_index);
                let Some(slot) = self.slots.get_mut(&key) else {
                    return Ok(());
                };
                let SlotKind::Custom(custom) = &mut slot.kind else {
                    return Ok(());
                };
                let (next, close) = if kind.ends_with(".delta") {
                    let current = custom_input(out, slot.index, &custom.property);
                    (current + &display(optional(Some(event), "delta")), false)
                } else {
                    (display(optional(Some(event), "input")), true)
                };
                let delta = custom.append(&next, close)?;
                set_custom_arguments(out, slot.index, &custom.property, next);
                if let Some(delta) = delta {
                    out.toolcall_delta(slot.index, delta);
                }
            }
            "response.output_item.done" => {
                let key = self.key(output_index);
                let item = member(Some(event), "item")?;
                self.item_done(out, key, item)?;
            }
            "response.completed" | "response.incomplete" => {
                let response = optional(Some(event), "response");
                self.finalize(out, model, response)?;
            }
            "error" => {
                return Err(format!(
                    "Error Code {}: {}",
                    display(optional(Some(event), "code")),
                    display(optional(Some(event), "message"))
                ));
            }
            "response.failed" => {
                self.saw_terminal = true;
                let response = optional(Some(event), "response");
                out.message.raw_stop_reason =
                    optional(response, "status").map(|s| display(Some(s)));
                let error = optional(response, "error");
                let reason = optional(optional(response, "incomplete_details"), "reason");
                let message = if truthy(error) {
                    let code = optional(error, "code").filter(|c| truthy(Some(c)));
                    let text = optional(error, "message").filter(|m| truthy(Some(m)));
                    format!(
                        "{}: {}",
                        code.map_or("unknown".to_owned(), |c| display(Some(c))),
                        text.map_or("no message".to_owned(), |m| display(Some(m)))
                    )
                } else if truthy(reason) {
                    format!("incomplete: {}", display(reason))
                } else {
                    "Unknown error (no error details in response)".to_owned()
                };
                return Err(message);
            }
            _ => {}
        }
        Ok(())
    }

    fn thinking_delta(&mut self, out: &mut Output, output_index: Option<&Value>, delta: String) {
        let key = self.key(output_index);
        let Some(slot) = self
            .slots
            .get(&key)
            .filter(|s| matches!(s.kind, SlotKind::Thinking))
        else {
            return;
        };
        if let Some(AssistantContent::Thinking { thinking, .. }) =
            out.message.content.get_mut(slot.index)
        {
            thinking.push_str(&delta);
        }
        out.thinking_delta(slot.index, delta);
    }

    /// `createSlot`: a block and its `*_start` event for a reasoning, message, function
    /// call or custom tool call item; other items get no slot (false).
    fn create_slot(
        &mut self,
        out: &mut Output,
        key: MapKey,
        item: Option<&Value>,
    ) -> Result<bool, String> {
        let item_type = string(member(item, "type")?);
        let (kind, block) = match item_type {
            Some("reasoning") => (
                SlotKind::Thinking,
                AssistantContent::Thinking {
                    thinking: String::new(),
                    thinking_signature: None,
                    redacted: None,
                },
            ),
            Some("message") => {
                apply_message_phase(out, item);
                (SlotKind::Text, AssistantContent::text(""))
            }
            Some("function_call") => {
                let mut arguments = StreamingArguments::default();
                let initial = optional(item, "arguments").filter(|a| truthy(Some(a)));
                if let Some(initial) = initial {
                    // The initial text is kept unparsed: pi-ai starts from `{}`.
                    arguments.push(&display(Some(initial)));
                }
                (
                    SlotKind::Function(arguments),
                    AssistantContent::ToolCall(tool_call(item, Value::Object(Map::new()))),
                )
            }
            Some("custom_tool_call") => {
                // No pi-tool tool is a grammar tool, so the input property is pi-ai's
                // default.
                let property = "input".to_owned();
                let input = optional(item, "input")
                    .filter(|i| truthy(Some(i)))
                    .map_or(String::new(), |i| display(Some(i)));
                let mut arguments = Map::new();
                arguments.insert(property.clone(), Value::String(input));
                (
                    SlotKind::Custom(CustomInput {
                        property,
                        input: String::new(),
                        started: false,
                        closed: false,
                    }),
                    AssistantContent::ToolCall(tool_call(item, Value::Object(arguments))),
                )
            }
            _ => return Ok(false),
        };
        let name = kind.name();
        let index = out.add_block(block);
        self.slots.insert(key, Slot { index, kind });
        match name {
            "thinking" => out.thinking_start(index),
            "text" => out.text_start(index),
            _ => out.toolcall_start(index),
        }
        Ok(true)
    }

    /// `response.output_item.done`: the item's final form replaces the streamed block,
    /// and the slot closes with its `*_end` event.
    fn item_done(
        &mut self,
        out: &mut Output,
        key: MapKey,
        item: Option<&Value>,
    ) -> Result<(), String> {
        let item_type = string(member(item, "type")?);
        apply_message_phase(out, item);
        if !self.slots.contains_key(&key) && !self.create_slot(out, key.clone(), item)? {
            return Ok(());
        }
        let id_key = (item_type == Some("reasoning")).then(|| self.key(optional(item, "id")));
        let Some(slot) = self.slots.get_mut(&key) else {
            return Ok(());
        };
        let index = slot.index;
        match (item_type, &mut slot.kind) {
            (Some("reasoning"), SlotKind::Thinking) => {
                let summary = joined(optional(item, "summary"), "text", "\n\n")?;
                let content = joined(optional(item, "content"), "text", "\n\n")?;
                let signature = item.map(js::stringify);
                let Some(AssistantContent::Thinking {
                    thinking,
                    thinking_signature,
                    ..
                }) = out.message.content.get_mut(index)
                else {
                    return Ok(());
                };
                if !summary.is_empty() {
                    *thinking = summary;
                } else if !content.is_empty() {
                    *thinking = content;
                }
                *thinking_signature = signature;
                let text = thinking.clone();
                if let Some(id_key) = id_key {
                    self.reasoning_by_id.insert(id_key, index);
                }
                out.thinking_end(index, text);
            }
            (Some("message"), SlotKind::Text) => {
                let text = message_text(optional(item, "content"))?;
                let signature = text_signature(optional(item, "id"), optional(item, "phase"));
                let Some(AssistantContent::Text {
                    text: block_text,
                    text_signature,
                }) = out.message.content.get_mut(index)
                else {
                    return Ok(());
                };
                *block_text = text.clone();
                *text_signature = Some(signature);
                out.text_end(index, text);
            }
            (Some("function_call"), SlotKind::Function(arguments)) => {
                let final_text = optional(item, "arguments").filter(|a| truthy(Some(a)));
                let parsed = match final_text {
                    Some(text) => parse_streaming_json(&display(Some(text))),
                    None if !arguments.text().is_empty() => arguments.finish(),
                    None => parse_streaming_json("{}"),
                };
                set_arguments(out, index, Arc::new(parsed));
                set_namespace(out, index, item);
                end_tool_call(out, index);
            }
            (Some("custom_tool_call"), SlotKind::Custom(custom)) => {
                let next = match optional(item, "input") {
                    Some(Value::Null) | None => custom_input(out, index, &custom.property),
                    Some(input) => display(Some(input)),
                };
                let delta = custom.append(&next, true)?;
                let property = custom.property.clone();
                set_custom_arguments(out, index, &property, next);
                if let Some(delta) = delta {
                    out.toolcall_delta(index, delta);
                }
                set_namespace(out, index, item);
                end_tool_call(out, index);
            }
            _ => return Ok(()),
        }
        self.slots.remove(&key);
        Ok(())
    }

    /// `finalizeResponse`: the response id, usage and cost, and the stop reason.
    fn finalize(
        &mut self,
        out: &mut Output,
        model: &Model,
        response: Option<&Value>,
    ) -> Result<(), String> {
        self.saw_terminal = true;
        let output = member(response, "output")?;
        self.backfill_reasoning_signatures(out, output)?;
        if let Some(id) = string(optional(response, "id")).filter(|id| !id.is_empty()) {
            out.message.response_id = Some(id.to_owned());
        }
        let usage = optional(response, "usage");
        if truthy(usage) {
            let details = optional(usage, "input_tokens_details");
            let cached = tokens(optional(details, "cached_tokens"));
            let cache_write = tokens(optional(details, "cache_write_tokens"));
            let input = tokens(optional(usage, "input_tokens"));
            let message_usage = &mut out.message.usage;
            // OpenAI counts cached and cache-write tokens inside input_tokens.
            message_usage.input = to_count((input - cached - cache_write).max(0.0));
            message_usage.output = to_count(tokens(optional(usage, "output_tokens")));
            message_usage.cache_read = to_count(cached);
            message_usage.cache_write = to_count(cache_write);
            message_usage.cache_write_1h = None;
            message_usage.reasoning = Some(to_count(tokens(optional(
                optional(usage, "output_tokens_details"),
                "reasoning_tokens",
            ))));
            message_usage.total_tokens = to_count(tokens(optional(usage, "total_tokens")));
            message_usage.cost = Default::default();
        }
        calculate_cost(model, &mut out.message.usage);
        apply_service_tier_pricing(out, model, string(optional(response, "service_tier")));

        let status = optional(response, "status");
        let reason = string(optional(optional(response, "incomplete_details"), "reason"));
        out.message.raw_stop_reason = match (reason.filter(|r| !r.is_empty()), status) {
            (Some(reason), status) => Some(format!("{}.{reason}", display(status))),
            (None, None) => None,
            (None, Some(status)) => Some(display(Some(status))),
        };
        let (stop_reason, error_message) = map_stop_reason(status, reason)?;
        out.message.stop_reason = stop_reason;
        out.message.error_message = error_message;
        if stop_reason == StopReason::Stop && out.message.tool_calls().next().is_some() {
            out.message.stop_reason = StopReason::ToolUse;
        }
        Ok(())
    }

    /// Azure may leave `encrypted_content` out of `output_item.done` and send it only in
    /// the terminal response; the stored reasoning item gets it back from there.
    fn backfill_reasoning_signatures(
        &mut self,
        out: &mut Output,
        output: Option<&Value>,
    ) -> Result<(), String> {
        let Some(Value::Array(items)) = output else {
            return Ok(());
        };
        for item in items {
            if string(member(Some(item), "type")?) != Some("reasoning") {
                continue;
            }
            let Some(encrypted) =
                optional(Some(item), "encrypted_content").filter(|e| truthy(Some(e)))
            else {
                continue;
            };
            let key = self.key(optional(Some(item), "id"));
            let Some(&index) = self.reasoning_by_id.get(&key) else {
                continue;
            };
            let Some(AssistantContent::Thinking {
                thinking_signature: Some(signature),
                ..
            }) = out.message.content.get_mut(index)
            else {
                continue;
            };
            if signature.is_empty() {
                continue;
            }
            let Ok(Value::Object(mut stored)) = json_parse(signature) else {
                continue;
            };
            if truthy(stored.get("encrypted_content")) {
                continue;
            }
            stored.insert("encrypted_content".into(), encrypted.clone());
            *signature = js::stringify(&Value::Object(stored));
        }
        Ok(())
    }
}

fn end_tool_call(out: &mut Output, index: usize) {
    if let Some(AssistantContent::ToolCall(call)) = out.message.content.get(index) {
        let call = call.clone();
        out.toolcall_end(index, call);
    }
}

/// `if (item.type === "message" && item.phase === "final_answer") output.stopReason = "stop"`.
fn apply_message_phase(out: &mut Output, item: Option<&Value>) {
    if string(optional(item, "type")) == Some("message")
        && string(optional(item, "phase")) == Some("final_answer")
    {
        out.message.stop_reason = StopReason::Stop;
    }
}

/// The tool-call block of a function or custom call item: id `call_id|id`.
fn tool_call(item: Option<&Value>, arguments: Value) -> ToolCall {
    let id = format!(
        "{}|{}",
        display(optional(item, "call_id")),
        display(optional(item, "id"))
    );
    let name = string(optional(item, "name")).unwrap_or_default();
    let mut call = ToolCall::new(id, name, arguments);
    call.namespace = string(optional(item, "namespace")).map(str::to_owned);
    call
}

fn set_arguments(out: &mut Output, index: usize, arguments: Arc<Value>) {
    if let Some(AssistantContent::ToolCall(call)) = out.message.content.get_mut(index) {
        call.arguments = arguments;
    }
}

fn set_namespace(out: &mut Output, index: usize, item: Option<&Value>) {
    if let Some(namespace) = optional(item, "namespace")
        && let Some(AssistantContent::ToolCall(call)) = out.message.content.get_mut(index)
    {
        call.namespace = namespace.as_str().map(str::to_owned);
    }
}

/// `getCustomToolCallInput`: the input property of the block's arguments when a string.
fn custom_input(out: &Output, index: usize, property: &str) -> String {
    match out.message.content.get(index) {
        Some(AssistantContent::ToolCall(call)) => string(call.arguments.get(property))
            .unwrap_or_default()
            .to_owned(),
        _ => String::new(),
    }
}

fn set_custom_arguments(out: &mut Output, index: usize, property: &str, input: String) {
    let mut arguments = Map::new();
    arguments.insert(property.to_owned(), Value::String(input));
    set_arguments(out, index, Arc::new(Value::Object(arguments)));
}

/// `list?.map((x) => x[field]).join(separator) || ""`.
fn joined(list: Option<&Value>, field: &str, separator: &str) -> Result<String, String> {
    let Some(Value::Array(items)) = list else {
        return Ok(String::new());
    };
    let mut parts = Vec::with_capacity(items.len());
    for item in items {
        parts.push(member(Some(item), field)?.map_or(String::new(), join_element));
    }
    Ok(parts.join(separator))
}

/// A message item's text: `output_text` parts' text, other parts' `refusal`, joined.
fn message_text(content: Option<&Value>) -> Result<String, String> {
    let Some(Value::Array(parts)) = content else {
        return Ok(String::new());
    };
    let mut text = String::new();
    for part in parts {
        let field = if string(member(Some(part), "type")?) == Some("output_text") {
            "text"
        } else {
            "refusal"
        };
        if let Some(value) = optional(Some(part), field) {
            text.push_str(&join_element(value));
        }
    }
    Ok(text)
}

/// `encodeTextSignatureV1(id, phase)`: `{"v":1,"id":...}` plus a truthy `phase`.
fn text_signature(id: Option<&Value>, phase: Option<&Value>) -> String {
    let mut payload = Map::new();
    payload.insert("v".into(), Value::from(1));
    if let Some(id) = id {
        payload.insert("id".into(), id.clone());
    }
    if let Some(phase) = phase.filter(|p| truthy(Some(p))) {
        payload.insert("phase".into(), phase.clone());
    }
    js::stringify(&Value::Object(payload))
}

/// A token count as `x || 0` reads it.
fn tokens(value: Option<&Value>) -> f64 {
    value
        .and_then(Value::as_f64)
        .filter(|f| f.is_finite())
        .unwrap_or(0.0)
}

fn to_count(tokens: f64) -> u64 {
    // Saturating: a negative or fractional count from a broken server cannot be stored.
    tokens.max(0.0) as u64
}

/// `mapStopReason(status, incompleteReason)`.
fn map_stop_reason(
    status: Option<&Value>,
    incomplete_reason: Option<&str>,
) -> Result<(StopReason, Option<String>), String> {
    if !truthy(status) {
        return Ok((StopReason::Stop, None));
    }
    match string(status) {
        Some("completed" | "in_progress" | "queued") => Ok((StopReason::Stop, None)),
        Some("incomplete") => match incomplete_reason {
            Some("max_output_tokens") => Ok((StopReason::Length, None)),
            Some(reason) if !reason.is_empty() => Ok((
                StopReason::Error,
                Some(format!("Response incomplete: {reason}")),
            )),
            _ => Ok((
                StopReason::Error,
                Some("Response incomplete without a provider reason".to_owned()),
            )),
        },
        Some("failed" | "cancelled") => Ok((StopReason::Error, None)),
        _ => Err(format!("Unhandled stop reason: {}", display(status))),
    }
}

/// `applyServiceTierPricing`: flex costs half, priority twice (2.5 times for gpt-5.5).
fn apply_service_tier_pricing(out: &mut Output, model: &Model, service_tier: Option<&str>) {
    let multiplier = match service_tier {
        Some("flex") => 0.5,
        Some("priority") if model.id == "gpt-5.5" => 2.5,
        Some("priority") => 2.0,
        _ => return,
    };
    let cost = &mut out.message.usage.cost;
    cost.input *= multiplier;
    cost.output *= multiplier;
    cost.cache_read *= multiplier;
    cost.cache_write *= multiplier;
    cost.total = cost.input + cost.output + cost.cache_read + cost.cache_write;
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::{AssistantMessage, AssistantMessageEvent};
    use crate::providers::stream::event_stream;
    use futures::StreamExt;
    use serde_json::json;
    use std::sync::Mutex;

    type Outcome = (Result<(), String>, AssistantMessage);

    async fn run(
        events: Vec<Value>,
    ) -> (
        Vec<AssistantMessageEvent>,
        Result<(), String>,
        AssistantMessage,
    ) {
        let model = Model::new("gpt-5-mini", "openai-responses", "openai");
        let shared: Arc<Mutex<Option<Outcome>>> = Arc::new(Mutex::new(None));
        let sink = shared.clone();
        let stream = event_stream(move |emitter| async move {
            let mut out = Output::new(&model, emitter);
            let mut state = ResponsesEvents::new();
            let mut result = Ok(());
            for event in &events {
                result = state.handle(&mut out, &model, event);
                if result.is_err() {
                    break;
                }
            }
            *sink.lock().unwrap() = Some((result, out.message.clone()));
        });
        let seen: Vec<_> = stream.collect().await;
        let (result, message) = shared.lock().unwrap().take().unwrap();
        (seen, result, message)
    }

    #[test]
    fn custom_input_renders_json_deltas() {
        let mut c = CustomInput {
            property: "input".into(),
            input: String::new(),
            started: false,
            closed: false,
        };
        assert_eq!(
            c.append("a\"", false),
            Ok(Some("{\"input\":\"a\\\"".into()))
        );
        assert_eq!(c.append("a\"", false), Ok(None));
        assert_eq!(c.append("a\"b", true), Ok(Some("b\"}".into())));
        assert_eq!(c.append("a\"b", true), Ok(None));
        assert!(
            c.append("zz", true)
                .unwrap_err()
                .contains("after it was closed")
        );
        let mut d = CustomInput {
            property: "input".into(),
            input: "abc".into(),
            started: true,
            closed: false,
        };
        assert!(
            d.append("x", false)
                .unwrap_err()
                .contains("non-monotonically")
        );
    }

    #[tokio::test]
    async fn arguments_done_that_rewrites_the_text_sends_no_delta() {
        let (events, result, message) = run(vec![
            json!({"type": "response.output_item.added", "output_index": 0,
                   "item": {"type": "function_call", "id": "fc_1", "call_id": "call_1", "name": "f", "arguments": ""}}),
            json!({"type": "response.function_call_arguments.delta", "output_index": 0, "delta": "{\"a\":"}),
            json!({"type": "response.function_call_arguments.done", "output_index": 0, "arguments": "{\"b\":2}"}),
        ])
        .await;
        assert_eq!(result, Ok(()));
        let kinds: Vec<_> = events.iter().map(|e| e.name()).collect();
        assert_eq!(kinds, ["toolcall_start", "toolcall_delta"]);
        let call = message.tool_calls().next().unwrap();
        assert_eq!(*call.arguments, json!({"b": 2}));
        assert_eq!(&*call.id, "call_1|fc_1");
    }

    #[tokio::test]
    async fn custom_tool_calls_stream_their_input_as_json() {
        let (events, result, message) = run(vec![
            json!({"type": "response.output_item.added", "output_index": 1,
                   "item": {"type": "custom_tool_call", "id": "ctc_1", "call_id": "call_1", "name": "g"}}),
            json!({"type": "response.custom_tool_call_input.delta", "output_index": 1, "delta": "ab"}),
            json!({"type": "response.output_item.done", "output_index": 1,
                   "item": {"type": "custom_tool_call", "id": "ctc_1", "call_id": "call_1", "name": "g", "input": "abc"}}),
        ])
        .await;
        assert_eq!(result, Ok(()));
        let deltas: Vec<_> = events
            .iter()
            .filter_map(|e| match e {
                AssistantMessageEvent::ToolcallDelta { delta, .. } => Some(delta.as_str()),
                _ => None,
            })
            .collect();
        assert_eq!(deltas, ["{\"input\":\"ab", "c\"}"]);
        assert_eq!(
            *message.tool_calls().next().unwrap().arguments,
            json!({"input": "abc"})
        );
        assert_eq!(events.last().unwrap().name(), "toolcall_end");
    }

    #[tokio::test]
    async fn failures_read_like_pi_ai() {
        let (_, result, _) = run(vec![
            json!({"type": "error", "code": "server_error", "message": "boom"}),
        ])
        .await;
        assert_eq!(result, Err("Error Code server_error: boom".into()));
        let (_, result, _) = run(vec![json!({"type": "error"})]).await;
        assert_eq!(result, Err("Error Code undefined: undefined".into()));
        let (_, result, message) = run(vec![json!({"type": "response.failed",
            "response": {"status": "failed", "incomplete_details": {"reason": "x"}}})])
        .await;
        assert_eq!(result, Err("incomplete: x".into()));
        assert_eq!(message.raw_stop_reason.as_deref(), Some("failed"));
        let (_, result, _) = run(vec![json!({"type": "response.completed",
            "response": {"status": "weird", "output": []}})])
        .await;
        assert_eq!(result, Err("Unhandled stop reason: weird".into()));
        let (_, result, _) = run(vec![json!({"type": "response.output_item.added"})]).await;
        assert_eq!(
            result,
            Err("Cannot read properties of undefined (reading 'type')".into())
        );
        let (_, result, _) = run(vec![json!(null)]).await;
        assert_eq!(
            result,
            Err("Cannot read properties of null (reading 'type')".into())
        );
    }

    #[tokio::test]
    async fn terminal_response_backfills_encrypted_reasoning_and_prices_the_tier() {
        let (_, result, message) = run(vec![
            json!({"type": "response.output_item.added", "output_index": 0, "item": {"type": "reasoning", "id": "rs_1"}}),
            json!({"type": "response.output_item.done", "output_index": 0,
                   "item": {"type": "reasoning", "id": "rs_1", "summary": []}}),
            json!({"type": "response.completed", "response": {"status": "completed",
                   "service_tier": "priority",
                   "usage": {"input_tokens": 10, "output_tokens": 5, "total_tokens": 15},
                   "output": [{"type": "reasoning", "id": "rs_1", "encrypted_content": "enc"}]}}),
        ])
        .await;
        assert_eq!(result, Ok(()));
        let AssistantContent::Thinking {
            thinking_signature, ..
        } = &message.content[0]
        else {
            panic!("thinking block expected");
        };
        assert_eq!(
            thinking_signature.as_deref(),
            Some(r#"{"type":"reasoning","id":"rs_1","summary":[],"encrypted_content":"enc"}"#)
        );
        assert_eq!(message.usage.reasoning, Some(0));
        assert_eq!(message.raw_stop_reason.as_deref(), Some("completed"));
        assert_eq!(message.stop_reason, StopReason::Stop);
    }

    #[tokio::test]
    async fn incomplete_maps_max_output_tokens_to_length_and_the_rest_to_errors() {
        let incomplete = |reason: Value| {
            json!({"type": "response.incomplete", "response": {"status": "incomplete",
                   "incomplete_details": {"reason": reason}, "output": []}})
        };
        let (_, _, message) = run(vec![incomplete(json!("max_output_tokens"))]).await;
        assert_eq!(message.stop_reason, StopReason::Length);
        assert_eq!(
            message.raw_stop_reason.as_deref(),
            Some("incomplete.max_output_tokens")
        );
        let (_, _, message) = run(vec![incomplete(json!("content_filter"))]).await;
        assert_eq!(message.stop_reason, StopReason::Error);
        assert_eq!(
            message.error_message.as_deref(),
            Some("Response incomplete: content_filter")
        );
        let (_, _, message) = run(vec![incomplete(Value::Null)]).await;
        assert_eq!(
            message.error_message.as_deref(),
            Some("Response incomplete without a provider reason")
        );
    }
}
