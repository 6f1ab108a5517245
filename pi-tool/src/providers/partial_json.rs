//! Tool-call arguments while they stream, as pi-ai reads them (`utils/json-parse.js`),
//! and [`StreamingArguments`], which keeps the cost of reading them linear.
//!
//! [`parse_streaming_json`] is pi-ai's `parseStreamingJson`: `JSON.parse`, then
//! `JSON.parse` after repairing string literals (raw control characters escaped,
//! invalid escapes' backslashes doubled), then the `partial-json` 0.1.7 parser with
//! `Allow.ALL` (see [`partial`]) on the text and then on the repaired text, and `{}`
//! when nothing reads.
//!
//! Values are JavaScript's (see [`v8`]): numbers are doubles (`12345678901234567890`
//! reads as the double `12345678901234567168`; `1e400` overflows to Infinity), object
//! keys come in JavaScript's order. JSON has no Infinity or NaN (which `partial-json`
//! also reads from `Infinity`/`NaN` words): they are `null` here, which is what
//! `JSON.stringify` writes for them, so a request that replays the arguments carries
//! what pi-ai's carries. (Pi validates the Infinity itself; a schema that takes a
//! number refuses both, with its message for `null` here.)

mod partial;
mod v8;

use std::borrow::Cow;
use std::sync::Arc;

use serde_json::{Map, Value};

use crate::js::js_trim;

/// `JSON.parse(text)` under Node 22: JavaScript's value (see the module doc for
/// numbers, key order and surrogates), or V8's `SyntaxError` message. (The OpenAI SDK's
/// SSE reader parses each event with it.)
#[cfg_attr(
    not(any(feature = "openai-completions", feature = "openai-responses")),
    allow(dead_code)
)]
pub(crate) fn json_parse(text: &str) -> Result<Value, String> {
    v8::json_parse(text)
}

/// pi-ai's `parseStreamingJson`: the best reading of a possibly unfinished JSON text;
/// `{}` when nothing can be read (also for an empty or blank text, and for a partial
/// reading that is `null`).
pub(crate) fn parse_streaming_json(text: &str) -> Value {
    if js_trim(text).is_empty() {
        return empty_object();
    }
    let repaired = repair(text);
    // A text that ends inside a string or with brackets open fails JSON.parse, and so
    // does its repair (which changes only string contents): while arguments stream,
    // that is nearly every text, and both parses are skipped.
    if repaired.complete {
        if let Some(value) = v8::parse_value(text) {
            return value;
        }
        if let Cow::Owned(fixed) = &repaired.text
            && let Some(value) = v8::parse_value(fixed)
        {
            return value;
        }
    }
    let partial = partial::parse(text).or_else(|_| match &repaired.text {
        // The same text fails the same way again.
        Cow::Borrowed(_) => Err(partial::Thrown),
        Cow::Owned(fixed) => partial::parse(fixed),
    });
    match partial {
        Ok(Some(value)) => value,
        Ok(None) | Err(_) => empty_object(),
    }
}

/// pi-ai's `parseJsonWithRepair` (which only its Anthropic provider uses, to read SSE
/// events): `JSON.parse(text)`, else `JSON.parse` of the repaired
/// text when the repair changed something. The error is V8's `JSON.parse` message, for
/// the repaired text when there is one (pi-ai throws the second parse's error), else for
/// the text itself.
#[cfg_attr(not(feature = "anthropic-messages"), allow(dead_code))]
pub(crate) fn parse_json_with_repair(text: &str) -> Result<Value, String> {
    match v8::json_parse(text) {
        Ok(value) => Ok(value),
        Err(error) => match repair_json(text) {
            Cow::Borrowed(_) => Err(error),
            Cow::Owned(repaired) => v8::json_parse(&repaired),
        },
    }
}

fn empty_object() -> Value {
    Value::Object(Map::new())
}

/// pi-ai's `repairJson`: inside string literals, raw control characters become escapes
/// and a backslash that starts no valid escape (or ends the text) is doubled. Outside
/// strings nothing changes. Borrowed when nothing needed repair.
pub(crate) fn repair_json(text: &str) -> Cow<'_, str> {
    repair(text).text
}

/// A repaired text, and whether its scan ended outside any string with as many brackets
/// closed as opened (else neither it nor the original can be JSON).
struct Repaired<'a> {
    text: Cow<'a, str>,
    complete: bool,
}

/// [`repair_json`], also telling whether the text could be complete JSON.
fn repair(text: &str) -> Repaired<'_> {
    let bytes = text.as_bytes();
    let mut out: Option<String> = None;
    // Bytes before this index are in `out` (or unchanged, while `out` is None).
    let mut copied = 0;
    let mut replace = |out: &mut Option<String>, at: usize, skip: usize, with: &str| {
        let out = out.get_or_insert_with(|| String::with_capacity(text.len() + 16));
        out.push_str(&text[copied..at]);
        out.push_str(with);
        copied = at + skip;
    };
    let mut in_string = false;
    // Brackets opened minus closed, outside strings.
    let mut depth: i64 = 0;
    let mut i = 0;
    while i < bytes.len() {
        let b = bytes[i];
        if !in_string {
            match b {
                b'"' => in_string = true,
                b'{' | b'[' => depth += 1,
                b'}' | b']' => depth -= 1,
                _ => {}
            }
            i += 1;
            continue;
        }
        match b {
            b'"' => {
                in_string = false;
                i += 1;
            }
            b'\\' => match bytes.get(i + 1) {
                None => {
                    replace(&mut out, i, 1, "\\\\");
                    i += 1;
                }
                Some(b'u')
                    if bytes.len() >= i + 6
                        && bytes[i + 2..i + 6].iter().all(u8::is_ascii_hexdigit) =>
                {
                    i += 6;
                }
                Some(b'"' | b'\\' | b'/' | b'b' | b'f' | b'n' | b'r' | b't' | b'u') => {
                    // A `\u` without four hex digits is valid only to this check, as in
                    // pi-ai's: it stays, and JSON.parse refuses it later.
                    i += 2;
                }
                Some(_) => {
                    replace(&mut out, i, 1, "\\\\");
                    i += 1;
                }
            },
            0x00..=0x1f => {
                let escaped = match b {
                    0x08 => Cow::Borrowed("\\b"),
                    0x0c => Cow::Borrowed("\\f"),
                    b'\n' => Cow::Borrowed("\\n"),
                    b'\r' => Cow::Borrowed("\\r"),
                    b'\t' => Cow::Borrowed("\\t"),
                    other => Cow::Owned(format!("\\u{other:04x}")),
                };
                replace(&mut out, i, 1, &escaped);
                i += 1;
            }
            _ => i += 1,
        }
    }
    let text = match out {
        None => Cow::Borrowed(text),
        Some(mut out) => {
            out.push_str(&text[copied..]);
            Cow::Owned(out)
        }
    };
    Repaired {
        text,
        complete: !in_string && depth == 0,
    }
}

/// Texts up to this size are re-read on every delta, exactly as pi-ai does.
pub(crate) const REPARSE_EVERY_DELTA_UP_TO: usize = 8 * 1024;
/// Beyond that, a delta re-reads the text only once it has grown by this fraction
/// (1/2) of its size at the last reading: the readings then cost about twice the final
/// size in all. A smaller fraction gives readings closer to pi-ai's, at a cost that
/// `bench/README.md` (providers) records.
const GROWTH_DIVISOR: usize = 2;

/// The argument text of one streaming tool call and its latest reading.
///
/// pi-ai re-reads the whole argument text on every delta (quadratic in its size).
/// This does so while the text is at most [`REPARSE_EVERY_DELTA_UP_TO`] (8 KiB) bytes,
/// so every such call shows exactly pi-ai's partial arguments after every delta. Beyond
/// that, a delta re-reads the text only when it has grown by at least 1/2 since the last
/// reading, and otherwise returns that reading again (the same `Arc`): the readings
/// happen at sizes growing geometrically, so their total cost is a constant times the
/// final size. Streamed partial arguments of a call larger than 8 KiB therefore lag
/// pi-ai's by up to 1/2 of their size (a deliberate difference); the final arguments
/// ([`finish`](Self::finish)) read the whole text once and are always pi-ai's.
#[derive(Debug, Default)]
pub(crate) struct StreamingArguments {
    text: String,
    parsed: Option<Arc<Value>>,
    /// The text's length at the last reading.
    parsed_len: usize,
    /// Bytes read so far, over all readings (what the linearity test counts).
    #[cfg(test)]
    work: usize,
}

impl StreamingArguments {
    /// Appends a delta and returns the arguments as they read now.
    pub(crate) fn push(&mut self, delta: &str) -> Arc<Value> {
        self.text.push_str(delta);
        let len = self.text.len();
        if let Some(parsed) = &self.parsed {
            let unchanged = len == self.parsed_len;
            let small = len <= REPARSE_EVERY_DELTA_UP_TO;
            let grown = len - self.parsed_len >= self.parsed_len / GROWTH_DIVISOR;
            if unchanged || !(small || grown) {
                return parsed.clone();
            }
        }
        let parsed = Arc::new(self.read());
        self.parsed = Some(parsed.clone());
        self.parsed_len = len;
        parsed
    }

    /// The whole argument text so far (OpenAI Responses compares it with the final
    /// `arguments` of its `done` event).
    #[cfg_attr(not(feature = "openai-responses"), allow(dead_code))]
    pub(crate) fn text(&self) -> &str {
        &self.text
    }

    /// The final arguments: pi-ai's last `parseStreamingJson`, of the whole text (the
    /// last reading when it was of the whole text already, else one reading now).
    pub(crate) fn finish(&self) -> Value {
        match &self.parsed {
            Some(parsed) if self.parsed_len == self.text.len() => Value::clone(parsed),
            _ => parse_streaming_json(&self.text),
        }
    }

    fn read(&mut self) -> Value {
        #[cfg(test)]
        {
            self.work += self.text.len();
        }
        parse_streaming_json(&self.text)
    }
}

#[cfg(test)]
mod tests;
