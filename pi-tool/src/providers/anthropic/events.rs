//! The Anthropic event stream turned into pi-ai's events: `iterateAnthropicEvents`
//! (which SSE events count, how their JSON is read, how an early end is detected) and the
//! `for await` body of pi-ai's `stream` (message_start, content_block_start/delta/stop,
//! message_delta), then the checks after the last event.
//!
//! Property reads follow JavaScript: reading through a missing object fails with V8's
//! `TypeError` text, a missing leaf is `undefined`.

use std::sync::Arc;

use serde_json::{Map, Value, json};

use super::compat::AnthropicCompat;
use super::sse::SseEvent;
use super::tools::from_claude_code_name;
use crate::js::format_number;
use crate::model::now_millis;
use crate::model::{AssistantContent, Model, StopReason, ToolCall};
use crate::providers::cost::calculate_cost;
use crate::providers::partial_json::{StreamingArguments, parse_json_with_repair};
use crate::providers::stream::Output;

/// The SSE event names pi-ai reads (`ANTHROPIC_MESSAGE_EVENTS`); others are skipped.
const MESSAGE_EVENTS: [&str; 6] = [
    "message_start",
    "message_delta",
    "message_stop",
    "content_block_start",
    "content_block_delta",
    "content_block_stop",
];

/// `obj.key` where reading through `undefined`/`null` throws V8's TypeError.
fn get<'v>(obj: Option<&'v Value>, key: &str) -> Result<Option<&'v Value>, String> {
    match obj {
        None => Err(format!(
            "Cannot read properties of undefined (reading '{key}')"
        )),
        Some(Value::Null) => Err(format!("Cannot read properties of null (reading '{key}')")),
        Some(Value::Object(map)) => Ok(map.get(key)),
        Some(_) => Ok(None),
    }
}

/// `obj?.key`.
fn opt<'v>(obj: Option<&'v Value>, key: &str) -> Option<&'v Value> {
    obj.and_then(|v| v.get(key))
}

fn truthy(value: Option<&Value>) -> bool {
    match value {
        None | Some(Value::Null) => false,
        Some(Value::Bool(b)) => *b,
        Some(Value::Number(n)) => n.as_f64().is_some_and(|f| f != 0.0),
        Some(Value::String(s)) => !s.is_empty(),
        Some(_) => true,
    }
}

/// JavaScript's `String(value)` for what a server may put where text belongs.
fn js_string(value: Option<&Value>) -> String {
    match value {
        None => "undefined".to_owned(),
        Some(Value::Null) => "null".to_owned(),
        Some(Value::String(s)) => s.clone(),
        Some(Value::Bool(b)) => b.to_string(),
        Some(Value::Number(n)) => format_number(n),
        Some(Value::Array(items)) => items
            .iter()
            .map(|v| match v {
                Value::Null => String::new(),
                other => js_string(Some(other)),
            })
            .collect::<Vec<_>>()
            .join(","),
        Some(Value::Object(_)) => "[object Object]".to_owned(),
    }
}

/// A token count (`value || 0` / a non-null number).
fn tokens(value: Option<&Value>) -> u64 {
    match value {
        Some(Value::Number(n)) => n
            .as_u64()
            .or_else(|| n.as_f64().filter(|f| *f > 0.0).map(|f| f as u64))
            .unwrap_or(0),
        _ => 0,
    }
}

/// Anthropic sends no total: input + output + cache reads + cache writes (saturating: the
/// counts are the server's).
fn total(input: u64, output: u64, cache_read: u64, cache_write: u64) -> u64 {
    input
        .saturating_add(output)
        .saturating_add(cache_read)
        .saturating_add(cache_write)
}

/// `a === b` for two block indices (`None` is `undefined`): objects never match.
fn same_index(a: Option<&Value>, b: Option<&Value>) -> bool {
    match (a, b) {
        (None, None) => true,
        (Some(Value::Null), Some(Value::Null)) => true,
        (Some(Value::Bool(x)), Some(Value::Bool(y))) => x == y,
        (Some(Value::String(x)), Some(Value::String(y))) => x == y,
        (Some(Value::Number(x)), Some(Value::Number(y))) => x.as_f64() == y.as_f64(),
        _ => false,
    }
}

/// pi-ai's `mapStopReason`: the stop reason and an error message, or the throw for an
/// unknown reason.
fn map_stop_reason(
    reason: &str,
    details: Option<&Value>,
) -> Result<(StopReason, Option<String>), String> {
    Ok(match reason {
        "end_turn" | "pause_turn" | "stop_sequence" => (StopReason::Stop, None),
        "max_tokens" => (StopReason::Length, None),
        "tool_use" => (StopReason::ToolUse, None),
        "refusal" => {
            let explanation = opt(details, "explanation");
            let message = if truthy(explanation) {
                js_string(explanation)
            } else {
                "The model refused to complete the request".to_owned()
            };
            (StopReason::Error, Some(message))
        }
        "sensitive" => (
            StopReason::Error,
            Some("Provider stopped with: sensitive".to_owned()),
        ),
        other => return Err(format!("Unhandled stop reason: {other}")),
    })
}

/// What streams into a block besides the message itself (pi-ai keeps these on the block:
/// `index`, `partialJson`).
struct Scratch {
    /// The block's stream index; `None` once the block stopped (pi deletes it).
    index: Option<Value>,
    /// A tool call's argument text.
    arguments: Option<StreamingArguments>,
}

/// A block's `*_end` payload.
enum Finished {
    Text(String),
    Thinking(String),
    ToolCall(ToolCall),
}

/// The state of one response.
pub(super) struct Events<'a> {
    model: &'a Model,
    compat: &'a AnthropicCompat,
    oauth: bool,
    tool_names: &'a [String],
    scratch: Vec<Scratch>,
    usage_model: Option<Model>,
    input_transformations: Option<Vec<Value>>,
    saw_message_start: bool,
    saw_message_stop: bool,
}

impl<'a> Events<'a> {
    pub(super) fn new(
        model: &'a Model,
        compat: &'a AnthropicCompat,
        oauth: bool,
        tool_names: &'a [String],
    ) -> Self {
        Events {
            model,
            compat,
            oauth,
            tool_names,
            scratch: Vec::new(),
            usage_model: None,
            input_transformations: None,
            saw_message_start: false,
            saw_message_stop: false,
        }
    }

    /// One SSE event: an `error` event fails with its raw data (or, when it has none, a
    /// text that says so); events outside pi-ai's
    /// set are skipped; the rest are parsed (a parse failure names the event, the data
    /// and its raw lines) and handled.
    pub(super) fn on_sse(&mut self, sse: &SseEvent, out: &mut Output) -> Result<(), String> {
        let name = sse.event.as_deref().unwrap_or("");
        if name == "error" {
            // pi-ai throws the data as it is, so an error event without data fails with
            // an empty message; we say what happened instead.
            if sse.data.trim().is_empty() {
                return Err("Anthropic stream sent an error event without data".to_owned());
            }
            return Err(sse.data.clone());
        }
        if !MESSAGE_EVENTS.contains(&name) {
            return Ok(());
        }
        let parsed = parse_json_with_repair(&sse.data).and_then(|event| {
            match get(Some(&event), "type")?.and_then(Value::as_str) {
                Some("message_start") => self.saw_message_start = true,
                Some("message_stop") => self.saw_message_stop = true,
                _ => {}
            }
            Ok(event)
        });
        let event = parsed.map_err(|message| {
            format!(
                "Could not parse Anthropic SSE event {name}: {message}; data={}; raw={}",
                sse.data,
                sse.raw.join("\\n")
            )
        })?;
        self.on_event(&event, out)
    }

    fn find(&self, index: Option<&Value>) -> Option<usize> {
        self.scratch
            .iter()
            .position(|s| same_index(s.index.as_ref(), index))
    }

    fn usage_model(&self) -> &Model {
        self.usage_model.as_ref().unwrap_or(self.model)
    }

    fn on_event(&mut self, event: &Value, out: &mut Output) -> Result<(), String> {
        match event.get("type").and_then(Value::as_str) {
            Some("message_start") => self.message_start(event, out),
            Some("content_block_start") => self.block_start(event, out),
            Some("content_block_delta") => self.block_delta(event, out),
            Some("content_block_stop") => {
                self.block_stop(event, out);
                Ok(())
            }
            Some("message_delta") => self.message_delta(event, out),
            _ => Ok(()),
        }
    }

    fn message_start(&mut self, event: &Value, out: &mut Output) -> Result<(), String> {
        let message = event.get("message");
        let id = get(message, "id")?;
        out.message.response_id = id.and_then(Value::as_str).map(str::to_owned);
        if let Some(Value::Array(list)) = get(message, "input_transformations")? {
            self.input_transformations = Some(list.clone());
        }
        if let Some(Value::String(response_model)) = get(message, "model")? {
            out.message.model = response_model.clone();
        }
        // A server-side fallback bills at the fallback model's prices.
        self.usage_model = None;
        if out.message.model != self.model.id
            && let Some(cost) = self
                .compat
                .allowed_fallback_models
                .iter()
                .find(|f| {
                    f.provider.as_deref() == Some(self.model.provider.as_str())
                        && f.model == out.message.model
                })
                .and_then(|f| f.cost.clone())
        {
            let mut fallback = self.model.clone();
            fallback.id = out.message.model.clone();
            fallback.cost = cost;
            self.usage_model = Some(fallback);
        }
        let usage = get(message, "usage")?;
        let input = tokens(get(usage, "input_tokens")?);
        let output = tokens(get(usage, "output_tokens")?);
        let cache_read = tokens(get(usage, "cache_read_input_tokens")?);
        let cache_write = tokens(get(usage, "cache_creation_input_tokens")?);
        let cache_write_1h = tokens(opt(
            get(usage, "cache_creation")?,
            "ephemeral_1h_input_tokens",
        ));
        let u = &mut out.message.usage;
        u.input = input;
        u.output = output;
        u.cache_read = cache_read;
        u.cache_write = cache_write;
        u.cache_write_1h = Some(cache_write_1h);
        u.total_tokens = total(input, output, cache_read, cache_write);
        let model = self.usage_model().clone();
        calculate_cost(&model, &mut out.message.usage);
        Ok(())
    }

    fn push_block(&mut self, block: AssistantContent, index: Option<&Value>, out: &mut Output) {
        let is_tool = matches!(block, AssistantContent::ToolCall(_));
        out.add_block(block);
        self.scratch.push(Scratch {
            index: index.cloned(),
            arguments: is_tool.then(StreamingArguments::default),
        });
    }

    fn block_start(&mut self, event: &Value, out: &mut Output) -> Result<(), String> {
        let block = event.get("content_block");
        let kind = get(block, "type")?.and_then(Value::as_str);
        let index = event.get("index");
        let text_of = |key: &str| match opt(block, key) {
            None | Some(Value::Null) => String::new(),
            other => js_string(other),
        };
        match kind {
            Some("fallback") if !out.message.content.is_empty() => {
                return Err(
                    "Anthropic performed an unsupported mid-output model fallback".to_owned(),
                );
            }
            Some("text") => {
                self.push_block(AssistantContent::text(text_of("text")), index, out);
                out.text_start(out.message.content.len() - 1);
            }
            Some("thinking") => {
                let block = AssistantContent::Thinking {
                    thinking: text_of("thinking"),
                    thinking_signature: Some(text_of("signature")),
                    redacted: None,
                };
                self.push_block(block, index, out);
                out.thinking_start(out.message.content.len() - 1);
            }
            Some("redacted_thinking") => {
                let data = opt(block, "data");
                let block = AssistantContent::Thinking {
                    thinking: "[Reasoning redacted]".to_owned(),
                    thinking_signature: data.map(|d| js_string(Some(d))),
                    redacted: Some(true),
                };
                self.push_block(block, index, out);
                out.thinking_start(out.message.content.len() - 1);
            }
            Some("tool_use") => {
                let id = opt(block, "id")
                    .map(|v| js_string(Some(v)))
                    .unwrap_or_default();
                let name = opt(block, "name")
                    .map(|v| js_string(Some(v)))
                    .unwrap_or_default();
                let name = if self.oauth {
                    from_claude_code_name(&name, self.tool_names)
                } else {
                    name
                };
                let arguments = match opt(block, "input") {
                    None | Some(Value::Null) => Value::Object(Map::new()),
                    Some(input) => input.clone(),
                };
                self.push_block(
                    AssistantContent::ToolCall(ToolCall::new(id, name, arguments)),
                    index,
                    out,
                );
                out.toolcall_start(out.message.content.len() - 1);
            }
            _ => {}
        }
        Ok(())
    }

    fn block_delta(&mut self, event: &Value, out: &mut Output) -> Result<(), String> {
        let delta = event.get("delta");
        let kind = get(delta, "type")?.and_then(Value::as_str);
        let Some(at) = self.find(event.get("index")) else {
            return Ok(());
        };
        match (kind, &mut out.message.content[at]) {
            (Some("text_delta"), AssistantContent::Text { text, .. }) => {
                let piece = js_string(opt(delta, "text"));
                text.push_str(&piece);
                out.text_delta(at, piece);
            }
            (Some("thinking_delta"), AssistantContent::Thinking { thinking, .. }) => {
                let piece = js_string(opt(delta, "thinking"));
                thinking.push_str(&piece);
                out.thinking_delta(at, piece);
            }
            (Some("input_json_delta"), AssistantContent::ToolCall(call)) => {
                let piece = js_string(opt(delta, "partial_json"));
                if let Some(arguments) = self.scratch[at].arguments.as_mut() {
                    call.arguments = arguments.push(&piece);
                }
                out.toolcall_delta(at, piece);
            }
            (
                Some("signature_delta"),
                AssistantContent::Thinking {
                    thinking_signature, ..
                },
            ) => {
                let piece = js_string(opt(delta, "signature"));
                thinking_signature
                    .get_or_insert_with(String::new)
                    .push_str(&piece);
            }
            _ => {}
        }
        Ok(())
    }

    fn block_stop(&mut self, event: &Value, out: &mut Output) {
        let Some(at) = self.find(event.get("index")) else {
            return;
        };
        self.scratch[at].index = None;
        let arguments = self.scratch[at].arguments.take();
        let finished = match &mut out.message.content[at] {
            AssistantContent::Text { text, .. } => Finished::Text(text.clone()),
            AssistantContent::Thinking { thinking, .. } => Finished::Thinking(thinking.clone()),
            AssistantContent::ToolCall(call) => {
                // pi-ai re-parses the whole argument text here (so a tool_use whose
                // input came in content_block_start and no delta ends with `{}`).
                let value = arguments.map_or_else(|| Value::Object(Map::new()), |a| a.finish());
                call.arguments = Arc::new(value);
                Finished::ToolCall(call.clone())
            }
        };
        match finished {
            Finished::Text(content) => out.text_end(at, content),
            Finished::Thinking(content) => out.thinking_end(at, content),
            Finished::ToolCall(call) => out.toolcall_end(at, call),
        }
    }

    fn message_delta(&mut self, event: &Value, out: &mut Output) -> Result<(), String> {
        if let Some(Value::Array(list)) = event.get("input_transformations") {
            self.input_transformations = Some(list.clone());
        }
        let delta = event.get("delta");
        let stop_reason = get(delta, "stop_reason")?;
        if truthy(stop_reason) {
            let raw = js_string(stop_reason);
            out.message.raw_stop_reason = Some(raw.clone());
            let (reason, message) = map_stop_reason(&raw, opt(delta, "stop_details"))?;
            out.message.stop_reason = reason;
            // The text goes with the stop reason it came with (as for OpenAI's
            // finish_reason: docs/differences-from-pi.md §21).
            out.message.error_message = message;
        }
        let usage = event.get("usage");
        if truthy(usage) {
            let set = |key: &str, slot: &mut u64| {
                if let Some(value) = opt(usage, key).filter(|v| !v.is_null()) {
                    *slot = tokens(Some(value));
                }
            };
            let u = &mut out.message.usage;
            set("input_tokens", &mut u.input);
            set("output_tokens", &mut u.output);
            set("cache_read_input_tokens", &mut u.cache_read);
            set("cache_creation_input_tokens", &mut u.cache_write);
            if let Some(thinking) =
                opt(opt(usage, "output_tokens_details"), "thinking_tokens").filter(|v| !v.is_null())
            {
                u.reasoning = Some(tokens(Some(thinking)));
            }
        }
        let u = &mut out.message.usage;
        u.total_tokens = total(u.input, u.output, u.cache_read, u.cache_write);
        let model = self.usage_model().clone();
        calculate_cost(&model, &mut out.message.usage);
        Ok(())
    }

    /// The end of the body: an unfinished message fails, then the checks pi-ai makes
    /// after its loop. `aborted` is the signal's state.
    pub(super) fn finish(&mut self, out: &mut Output, aborted: bool) -> Result<(), String> {
        if self.saw_message_start && !self.saw_message_stop {
            return Err("Anthropic stream ended before message_stop".to_owned());
        }
        if aborted {
            return Err("Request was aborted".to_owned());
        }
        match out.message.stop_reason {
            StopReason::Pending => {
                return Err("Anthropic stream ended without a stop reason".to_owned());
            }
            StopReason::Aborted | StopReason::Error => {
                let message = out
                    .message
                    .error_message
                    .clone()
                    .filter(|m| !m.is_empty())
                    .unwrap_or_else(|| "An unknown error occurred".to_owned());
                return Err(message);
            }
            _ => {}
        }
        if let Some(list) = self.input_transformations.take()
            && !list.is_empty()
        {
            let mut transformations = Vec::with_capacity(list.len());
            for item in &list {
                let mut entry = Map::new();
                for key in ["type", "path", "reason"] {
                    if let Some(value) = get(Some(item), key)?.filter(|v| !v.is_null()) {
                        entry.insert(key.to_owned(), value.clone());
                    }
                }
                transformations.push(Value::Object(entry));
            }
            out.message
                .diagnostics
                .get_or_insert_with(Vec::new)
                .push(json!({
                    "type": "anthropic_input_transformations",
                    "timestamp": now_millis(),
                    "details": {"transformations": transformations},
                }));
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn property_reads_fail_like_v8() {
        assert_eq!(
            get(None, "id").unwrap_err(),
            "Cannot read properties of undefined (reading 'id')"
        );
        assert_eq!(
            get(Some(&Value::Null), "type").unwrap_err(),
            "Cannot read properties of null (reading 'type')"
        );
        assert_eq!(get(Some(&json!(5)), "type").unwrap(), None);
    }

    #[test]
    fn stop_reasons_map_as_pi_ai_maps_them() {
        assert_eq!(
            map_stop_reason("pause_turn", None).unwrap().0,
            StopReason::Stop
        );
        assert_eq!(
            map_stop_reason("refusal", Some(&json!({"explanation": "no"}))).unwrap(),
            (StopReason::Error, Some("no".to_owned()))
        );
        assert_eq!(
            map_stop_reason("refusal", None).unwrap().1.as_deref(),
            Some("The model refused to complete the request")
        );
        assert_eq!(
            map_stop_reason("weird", None).unwrap_err(),
            "Unhandled stop reason: weird"
        );
    }

    #[test]
    fn odd_server_values_become_errors_or_are_ignored_never_panics() {
        use crate::providers::stream::Emitter;
        let model = Model::new("m", "anthropic-messages", "anthropic");
        let compat = AnthropicCompat::of(&model);
        let odd = [
            json!({"type": "message_start", "message": {"id": 5, "model": [], "usage": {"input_tokens": -3, "output_tokens": 1e300, "cache_creation": null}}}),
            json!({"type": "content_block_start", "index": 0, "content_block": {"type": "tool_use", "input": [1, 2], "name": {}}}),
            json!({"type": "content_block_delta", "index": 0, "delta": {"type": "text_delta", "text": 7}}),
            json!({"type": "content_block_delta", "index": 0, "delta": {"type": "input_json_delta", "partial_json": null}}),
            json!({"type": "content_block_start", "index": 0, "content_block": {"type": "text", "text": {"a": 1}}}),
            json!({"type": "content_block_delta", "index": 0, "delta": {"type": "signature_delta"}}),
            json!({"type": "content_block_stop", "index": {"x": 1}}),
            json!({"type": "content_block_stop"}),
            json!({"type": "content_block_delta", "index": 0}),
            json!({"type": "message_delta", "delta": {"stop_reason": 3}, "usage": {"output_tokens": "9"}}),
            json!({"type": "message_delta", "usage": 1}),
            json!({"type": "content_block_start", "index": 1}),
            json!({"type": "message_start"}),
            json!([1, 2]),
            json!("text"),
        ];
        let names = ["message_start", "content_block_delta", "message_delta"];
        for value in odd {
            let mut out = Output::new(&model, Emitter::default());
            let mut events = Events::new(&model, &compat, true, &[]);
            for name in names {
                let sse = SseEvent {
                    event: Some(name.to_owned()),
                    data: value.to_string(),
                    raw: Vec::new(),
                };
                let _ = events.on_sse(&sse, &mut out);
                let _ = events.on_event(&value, &mut out);
            }
            let _ = events.finish(&mut out, false);
        }
    }

    #[test]
    fn indices_compare_strictly() {
        assert!(same_index(Some(&json!(1)), Some(&json!(1.0))));
        assert!(same_index(None, None));
        assert!(!same_index(Some(&Value::Null), None));
        assert!(!same_index(Some(&json!({})), Some(&json!({}))));
    }
}
