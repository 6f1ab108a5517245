//! Tool-call arguments while they stream: pi-ai's `parseStreamingJson` (JSON.parse,
//! then string-escape repair, then the `partial-json` 0.1.7 parser with `Allow.ALL`,
//! then `{}`), and [`StreamingArguments`], which keeps the cost linear in the argument
//! size where pi-ai re-parses the whole buffer on every delta.
//!
//! PLACEHOLDER BODY: the exact port lands with the partial-JSON work; until then only
//! complete JSON parses.

use std::sync::Arc;

use serde_json::{Map, Value};

#[cfg_attr(not(test), allow(dead_code))]
/// pi-ai's `parseStreamingJson`: the best reading of a possibly unfinished JSON text;
/// `{}` when nothing can be read.
pub(crate) fn parse_streaming_json(text: &str) -> Value {
    if text.trim().is_empty() {
        return Value::Object(Map::new());
    }
    serde_json::from_str(text).unwrap_or_else(|_| Value::Object(Map::new()))
}

#[cfg_attr(not(test), allow(dead_code))]
/// The argument text of one streaming tool call and its latest parsed reading.
#[derive(Debug, Default)]
pub(crate) struct StreamingArguments {
    text: String,
    parsed: Option<Arc<Value>>,
}

impl StreamingArguments {
    /// Appends a delta and returns the arguments as they read now.
    pub(crate) fn push(&mut self, delta: &str) -> Arc<Value> {
        self.text.push_str(delta);
        let parsed = Arc::new(parse_streaming_json(&self.text));
        self.parsed = Some(parsed.clone());
        parsed
    }

    /// The whole argument text so far.
    pub(crate) fn text(&self) -> &str {
        &self.text
    }

    /// The final arguments: one full parse of the whole text.
    pub(crate) fn finish(&self) -> Value {
        parse_streaming_json(&self.text)
    }
}

#[cfg_attr(not(test), allow(dead_code))]
/// pi-ai's `parseJsonWithRepair`: `JSON.parse`, then the same after repairing string
/// literals; the error is `JSON.parse`'s message for the original text.
pub(crate) fn parse_json_with_repair(text: &str) -> Result<Value, String> {
    serde_json::from_str(text).map_err(|e| e.to_string())
}
