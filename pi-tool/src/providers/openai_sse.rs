//! The `openai` SDK 6.40.0's streaming layer as pi-ai experiences it: the SSE framing of
//! `core/streaming.js` (`iterSSEChunks`, `SSEDecoder`, the `[DONE]` rule, `JSON.parse`
//! of each message, `data.error` thrown as an `APIError`), the line splitting of
//! `internal/decoders/line.js`, and `APIError.makeMessage` for HTTP status errors.
//!
//! The SDK's framing has quirks a textbook SSE parser lacks, and they decide what pi-ai
//! sees: lines are split on `\n`, `\r\n` and a lone `\r` with the state carried across
//! network chunks, each line is decoded as UTF-8 on its own (a character split across
//! chunks is whole again by then; invalid bytes become U+FFFD and a leading BOM is
//! dropped, as `TextDecoder` does), and an event the body ends without a blank line after
//! is never dispatched.

use serde_json::Value;

use crate::js::stringify as js_stringify;

/// One server-sent event: its `event:` name and its `data:` lines joined by `\n`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct SseMessage {
    /// The last `event:` field, if any.
    pub(crate) event: Option<String>,
    /// The `data:` fields, joined by `\n`.
    pub(crate) data: String,
}

/// The SDK's SSE decoder: feed it the body's chunks as they arrive, then [`finish`].
///
/// [`finish`]: OpenAiSse::finish
#[derive(Debug, Default)]
pub(crate) struct OpenAiSse {
    /// Bytes not yet ended by a blank line (`iterSSEChunks`'s buffer).
    pending: Vec<u8>,
    /// How much of `pending` is known to hold no blank line, so a long event that
    /// arrives in many chunks is scanned once (the SDK rescans it on every chunk).
    scanned: usize,
    lines: LineDecoder,
    event: EventDecoder,
}

impl OpenAiSse {
    /// A decoder at the start of a body.
    pub(crate) fn new() -> Self {
        OpenAiSse::default()
    }

    /// Takes the next network chunk; returns the events it completed.
    pub(crate) fn push(&mut self, chunk: &[u8]) -> Vec<SseMessage> {
        self.pending.extend_from_slice(chunk);
        let mut out = Vec::new();
        // The SDK hands the line decoder only text ended by a blank line; a trailing
        // partial event waits for more bytes (or for the end of the body).
        let mut start = 0;
        loop {
            // A pattern is at most 4 bytes: resume 3 bytes before the scanned end.
            let from = start + self.scanned.saturating_sub(3);
            let Some(end) = double_newline_end(&self.pending[from..]).map(|end| from + end) else {
                self.scanned = self.pending.len() - start;
                break;
            };
            self.scanned = 0;
            for line in self.lines.decode(&self.pending[start..end]) {
                if let Some(message) = self.event.decode(line) {
                    out.push(message);
                }
            }
            start = end;
        }
        self.pending.drain(..start);
        out
    }

    /// The body ended: decodes what is left, as the SDK does after its loop.
    pub(crate) fn finish(&mut self) -> Vec<SseMessage> {
        let mut out = Vec::new();
        let rest = std::mem::take(&mut self.pending);
        self.scanned = 0;
        let mut lines = if rest.is_empty() {
            Vec::new()
        } else {
            self.lines.decode(&rest)
        };
        lines.extend(self.lines.flush());
        for line in lines {
            if let Some(message) = self.event.decode(line) {
                out.push(message);
            }
        }
        out
    }
}

/// `findDoubleNewlineIndex`: the index just past the first `\n\n`, `\r\r` or `\r\n\r\n`.
fn double_newline_end(buf: &[u8]) -> Option<usize> {
    let n = buf.len();
    for i in 0..n.saturating_sub(1) {
        if buf[i] == b'\n' && buf[i + 1] == b'\n' {
            return Some(i + 2);
        }
        if buf[i] == b'\r' && buf[i + 1] == b'\r' {
            return Some(i + 2);
        }
        if buf[i] == b'\r'
            && buf[i + 1] == b'\n'
            && i + 3 < n
            && buf[i + 2] == b'\r'
            && buf[i + 3] == b'\n'
        {
            return Some(i + 4);
        }
    }
    None
}

/// The SDK's `LineDecoder` (a port of httpx's): a `\r` waits to see whether a `\n`
/// follows before the line is cut.
#[derive(Debug, Default)]
struct LineDecoder {
    buffer: Vec<u8>,
    /// Set after a `\r`: the index just past it.
    carriage_return: Option<usize>,
}

impl LineDecoder {
    fn decode(&mut self, chunk: &[u8]) -> Vec<String> {
        self.buffer.extend_from_slice(chunk);
        let mut lines = Vec::new();
        // `consumed` stands for the SDK's `buffer.subarray(...)`: indices below are
        // relative to it, and the bytes before it are dropped once at the end.
        let mut consumed = 0;
        loop {
            let rest = &self.buffer[consumed..];
            let Some((preceding, index, carriage)) =
                find_newline(rest, self.carriage_return.unwrap_or(0))
            else {
                break;
            };
            match self.carriage_return {
                None if carriage => {
                    self.carriage_return = Some(index);
                }
                Some(cr) if index != cr + 1 || carriage => {
                    // A lone `\r` (or `\r\r`): the line ends before it.
                    lines.push(decode_utf8(&rest[..cr - 1]));
                    consumed += cr;
                    self.carriage_return = None;
                }
                cr => {
                    let end = if cr.is_some() {
                        preceding - 1
                    } else {
                        preceding
                    };
                    lines.push(decode_utf8(&rest[..end]));
                    consumed += index;
                    self.carriage_return = None;
                }
            }
        }
        self.buffer.drain(..consumed);
        lines
    }

    fn flush(&mut self) -> Vec<String> {
        if self.buffer.is_empty() {
            return Vec::new();
        }
        self.decode(b"\n")
    }
}

/// `findNewlineIndex`: (index of the newline, index past it, whether it is `\r`).
fn find_newline(buf: &[u8], from: usize) -> Option<(usize, usize, bool)> {
    buf.iter()
        .enumerate()
        .skip(from)
        .find(|(_, b)| **b == b'\n' || **b == b'\r')
        .map(|(i, b)| (i, i + 1, *b == b'\r'))
}

/// `new TextDecoder().decode(bytes)`: lossy, and a leading BOM is not part of the text.
fn decode_utf8(bytes: &[u8]) -> String {
    let bytes = bytes.strip_prefix(b"\xEF\xBB\xBF").unwrap_or(bytes);
    String::from_utf8_lossy(bytes).into_owned()
}

/// The SDK's `SSEDecoder`: fields accumulate until a blank line ends the event.
#[derive(Debug, Default)]
struct EventDecoder {
    event: Option<String>,
    data: Vec<String>,
}

impl EventDecoder {
    fn decode(&mut self, mut line: String) -> Option<SseMessage> {
        if line.ends_with('\r') {
            line.pop();
        }
        if line.is_empty() {
            // `!this.event && !this.data.length`: an empty event name counts as none.
            if self.event.as_deref().is_none_or(str::is_empty) && self.data.is_empty() {
                return None;
            }
            return Some(SseMessage {
                event: self.event.take(),
                data: std::mem::take(&mut self.data).join("\n"),
            });
        }
        if line.starts_with(':') {
            return None;
        }
        let (field, value) = line.split_once(':').unwrap_or((line.as_str(), ""));
        let value = value.strip_prefix(' ').unwrap_or(value);
        match field {
            "event" => self.event = Some(value.to_owned()),
            "data" => self.data.push(value.to_owned()),
            _ => {}
        }
        None
    }
}

/// What one SSE message means to the SDK's `Stream` iterator (`fromSSEResponse`).
#[derive(Debug, Clone, PartialEq)]
pub(crate) enum SseItem {
    /// A parsed JSON value to hand to the provider.
    Data(Value),
    /// Nothing to yield (a message after `[DONE]`, or the `[DONE]` itself).
    Skip,
}

/// The SDK's per-message rule: after `[DONE]` everything is skipped; otherwise the data
/// is `JSON.parse`d (a failure is thrown with V8's message) and a truthy `error` member
/// is thrown as an [`ApiError`] without a status. `thread.*` events (Assistants) skip
/// the `error` check unless the event is `error`, which never has that prefix.
#[derive(Debug, Default)]
pub(crate) struct SseStream {
    done: bool,
}

/// A failure the SDK throws while iterating a stream.
#[derive(Debug, Clone, PartialEq)]
pub(crate) enum SseError {
    /// `JSON.parse` threw this `SyntaxError` message.
    Json(String),
    /// The stream carried an error object.
    Api(ApiError),
}

impl SseStream {
    /// A stream before its first message.
    pub(crate) fn new() -> Self {
        SseStream::default()
    }

    /// Applies the SDK's rule to one message.
    pub(crate) fn item(&mut self, message: &SseMessage) -> Result<SseItem, SseError> {
        if self.done {
            return Ok(SseItem::Skip);
        }
        if message.data.starts_with("[DONE]") {
            self.done = true;
            return Ok(SseItem::Skip);
        }
        let data = super::partial_json::json_parse(&message.data).map_err(SseError::Json)?;
        let thread_event = message
            .event
            .as_deref()
            .is_some_and(|event| event.starts_with("thread."));
        if !thread_event && let Some(error) = data.get("error").filter(|error| js_truthy(error)) {
            return Err(SseError::Api(ApiError::new(
                None,
                Some(error.clone()),
                None,
            )));
        }
        Ok(SseItem::Data(data))
    }
}

/// JavaScript truthiness of a JSON value.
pub(crate) fn js_truthy(value: &Value) -> bool {
    match value {
        Value::Null => false,
        Value::Bool(b) => *b,
        Value::Number(n) => n.as_f64().is_some_and(|f| f != 0.0 && !f.is_nan()),
        Value::String(s) => !s.is_empty(),
        Value::Array(_) | Value::Object(_) => true,
    }
}

/// The SDK's `APIError`: an HTTP status (absent for errors inside a stream), the parsed
/// `error` member of the body, and the message `APIError.makeMessage` composes.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct ApiError {
    /// The HTTP status, when the error is a response's.
    pub(crate) status: Option<u16>,
    /// The body's `error` member (the SDK's `error.error`).
    pub(crate) error: Option<Value>,
    /// `APIError.makeMessage(status, error, message)`.
    pub(crate) message: String,
}

impl ApiError {
    /// `new APIError(status, error, message)`.
    pub(crate) fn new(status: Option<u16>, error: Option<Value>, message: Option<&str>) -> Self {
        let message = make_message(status, error.as_ref(), message);
        ApiError {
            status,
            error,
            message,
        }
    }

    /// What the SDK throws for a non-2xx response whose body read as `body_text`:
    /// `safeJSON(text)`, the parsed body's `error` member, and the raw text as the
    /// message only when the body did not parse to a truthy value.
    pub(crate) fn from_response(status: u16, body_text: &str) -> Self {
        let parsed = super::partial_json::json_parse(body_text).ok();
        let parsed = parsed.filter(js_truthy);
        let message = if parsed.is_some() {
            None
        } else {
            Some(body_text)
        };
        let error = parsed.as_ref().and_then(|body| body.get("error")).cloned();
        ApiError::new(Some(status), error, message)
    }
}

/// `APIError.makeMessage`.
fn make_message(status: Option<u16>, error: Option<&Value>, message: Option<&str>) -> String {
    let from_error = error.and_then(|error| {
        let inner = error.get("message").filter(|m| js_truthy(m));
        match inner {
            Some(Value::String(text)) => Some(text.clone()),
            Some(other) => Some(js_stringify(other)),
            None if js_truthy(error) => Some(js_stringify(error)),
            None => None,
        }
    });
    let msg = from_error.or_else(|| message.map(str::to_owned));
    let msg = msg.filter(|m| !m.is_empty());
    // `status &&`: a zero status counts as none.
    let status = status.filter(|s| *s != 0);
    match (status, msg) {
        (Some(status), Some(msg)) => format!("{status} {msg}"),
        (Some(status), None) => format!("{status} status code (no body)"),
        (None, Some(msg)) => msg,
        (None, None) => "(no status code or body)".to_owned(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn all(chunks: &[&[u8]]) -> Vec<SseMessage> {
        let mut sse = OpenAiSse::new();
        let mut out = Vec::new();
        for chunk in chunks {
            out.extend(sse.push(chunk));
        }
        out.extend(sse.finish());
        out
    }

    fn data(messages: &[SseMessage]) -> Vec<&str> {
        messages.iter().map(|m| m.data.as_str()).collect()
    }

    #[test]
    fn events_split_at_every_byte_read_the_same() {
        let body = b"data: {\"a\":1}\n\ndata: {\"b\":\"\xC3\xA9\xF0\x9F\x98\x80\"}\r\n\r\nevent: x\ndata: 2\n\n";
        let whole = all(&[body]);
        assert_eq!(
            data(&whole),
            ["{\"a\":1}", "{\"b\":\"\u{e9}\u{1F600}\"}", "2"]
        );
        assert_eq!(whole[2].event.as_deref(), Some("x"));
        for split in 1..body.len() {
            let (a, b) = body.split_at(split);
            assert_eq!(all(&[a, b]), whole, "split at {split}");
        }
        let bytes: Vec<&[u8]> = body.chunks(1).collect();
        assert_eq!(all(&bytes), whole);
    }

    /// Standard base64 (the corpus stores raw chunk bytes that way).
    fn base64(text: &str) -> Vec<u8> {
        let value = |c: u8| match c {
            b'A'..=b'Z' => c - b'A',
            b'a'..=b'z' => c - b'a' + 26,
            b'0'..=b'9' => c - b'0' + 52,
            b'+' => 62,
            _ => 63,
        };
        let digits: Vec<u8> = text.bytes().filter(|c| *c != b'=').map(value).collect();
        digits
            .chunks(4)
            .flat_map(|group| {
                let n = group
                    .iter()
                    .enumerate()
                    .fold(0u32, |n, (i, d)| n | u32::from(*d) << (18 - 6 * i));
                let bytes = [(n >> 16) as u8, (n >> 8) as u8, n as u8];
                bytes.into_iter().take(group.len().saturating_sub(1))
            })
            .collect()
    }

    /// 300 random bodies (every CR/LF mix, comments, fields, BOMs, characters split
    /// across chunks) and what the SDK's `_iterSSEMessages` yielded for each
    /// (`scripts/gen-openai-sse-corpus.mjs`).
    #[test]
    fn the_sdk_corpus_replays_exactly() {
        let corpus: Value =
            serde_json::from_str(include_str!("../../tests/data/openai_sse/corpus.json"))
                .unwrap_or(Value::Null);
        let cases = corpus.as_array().map(Vec::as_slice).unwrap_or_default();
        assert_eq!(cases.len(), 300);
        for (i, case) in cases.iter().enumerate() {
            let chunks: Vec<Vec<u8>> = case["chunks"]
                .as_array()
                .into_iter()
                .flatten()
                .map(|c| base64(c.as_str().unwrap_or_default()))
                .collect();
            let refs: Vec<&[u8]> = chunks.iter().map(Vec::as_slice).collect();
            let got: Vec<Value> = all(&refs)
                .into_iter()
                .map(|m| json!({"event": m.event, "data": m.data}))
                .collect();
            assert_eq!(Value::Array(got), case["messages"], "case {i}");
        }
    }

    #[test]
    fn a_long_event_in_many_chunks_is_scanned_once() {
        let line = format!("data: \"{}\"\r\n\r\n", "x".repeat(4 << 20));
        let mut sse = OpenAiSse::new();
        let started = std::time::Instant::now();
        let mut out = Vec::new();
        for chunk in line.as_bytes().chunks(4096) {
            out.extend(sse.push(chunk));
        }
        assert_eq!(out.len(), 1);
        assert_eq!(out[0].data.len(), (4 << 20) + 2);
        // Rescanning 4 MiB on each of its 1024 chunks would take seconds.
        assert!(started.elapsed() < std::time::Duration::from_secs(2));
    }

    #[test]
    fn lone_carriage_returns_end_lines() {
        let out = all(&[b"data: a\rdata: b\r\rdata: c\r\n\r\n"]);
        assert_eq!(data(&out), ["a\nb", "c"]);
    }

    #[test]
    fn a_trailing_event_without_blank_line_is_dropped() {
        // The SDK flushes the last line into its event decoder, but only a blank line
        // dispatches an event.
        let out = all(&[b"data: {\"x\":1}\n\ndata: last"]);
        assert_eq!(data(&out), ["{\"x\":1}"]);
        let out = all(&[b"\xEF\xBB\xBFdata: bom\n\nevent:\ndata: q\n\n"]);
        assert_eq!(data(&out), ["bom", "q"]);
        assert_eq!(out[1].event.as_deref(), Some(""));
    }

    #[test]
    fn comments_and_unknown_fields_are_ignored() {
        let out = all(&[b": ping\n\nid: 3\nretry: 10\ndata:no-space\n\n"]);
        assert_eq!(data(&out), ["no-space"]);
    }

    #[test]
    fn invalid_utf8_becomes_replacement_characters() {
        let out = all(&[b"data: \xFFok\n\n"]);
        assert_eq!(data(&out), ["\u{FFFD}ok"]);
    }

    #[test]
    fn done_ends_the_stream_and_later_messages_are_skipped() {
        let mut stream = SseStream::new();
        let msg = |d: &str| SseMessage {
            event: None,
            data: d.to_owned(),
        };
        assert_eq!(
            stream.item(&msg("{\"a\":1}")),
            Ok(SseItem::Data(json!({"a": 1})))
        );
        assert_eq!(stream.item(&msg("[DONE]")), Ok(SseItem::Skip));
        assert_eq!(stream.item(&msg("not json")), Ok(SseItem::Skip));
    }

    #[test]
    fn error_members_are_thrown_with_the_sdk_message() {
        let mut stream = SseStream::new();
        let msg = SseMessage {
            event: None,
            data: r#"{"error":{"message":"overloaded","code":529}}"#.to_owned(),
        };
        let Err(SseError::Api(error)) = stream.item(&msg) else {
            panic!("expected an API error");
        };
        assert_eq!(error.message, "overloaded");
        assert_eq!(error.status, None);
        let falsy = SseMessage {
            event: None,
            data: r#"{"error":null,"x":1}"#.to_owned(),
        };
        assert!(matches!(stream.item(&falsy), Ok(SseItem::Data(_))));
        let bad = SseMessage {
            event: None,
            data: "{oops".to_owned(),
        };
        assert!(matches!(stream.item(&bad), Err(SseError::Json(_))));
    }

    #[test]
    fn deeply_nested_data_is_no_crash() {
        let depth = 200_000;
        let data = format!("{}{}", "[".repeat(depth), "]".repeat(depth));
        let mut stream = SseStream::new();
        let message = SseMessage { event: None, data };
        assert!(matches!(stream.item(&message), Err(SseError::Json(_))));
    }

    #[test]
    fn http_error_messages_follow_make_message() {
        let e = ApiError::from_response(401, r#"{"error":{"message":"bad key","type":"x"}}"#);
        assert_eq!(e.message, "401 bad key");
        assert_eq!(e.error, Some(json!({"message": "bad key", "type": "x"})));
        let e = ApiError::from_response(500, "");
        assert_eq!(e.message, "500 status code (no body)");
        let e = ApiError::from_response(502, "Bad Gateway");
        assert_eq!(e.message, "502 Bad Gateway");
        assert_eq!(e.error, None);
        let e = ApiError::from_response(400, r#"{"error":"plain"}"#);
        assert_eq!(e.message, "400 \"plain\"");
        let e = ApiError::from_response(400, r#"{"error":{"message":{"nested":1.0}}}"#);
        assert_eq!(e.message, "400 {\"nested\":1}");
        let e = ApiError::from_response(404, r#"{"detail":"nope"}"#);
        assert_eq!(e.message, "404 status code (no body)");
        let e = ApiError::from_response(400, "null");
        assert_eq!(e.message, "400 null");
    }
}
