//! The line framing in front of rmcp's newline-delimited transport (stdio, or any byte
//! stream through [`PackServer::serve_io`](crate::PackServer::serve_io)), for any rmcp
//! server service.
//!
//! JSON-RPC 2.0 gives every request exactly one response. rmcp's stdio transport drops
//! lines serde_json rejects (a number out of range such as `1e400`, a lone surrogate
//! escape, nesting deeper than 128, a line over its 16 MiB cap) without a word, answers
//! `tools/call` params of the wrong shape with -32601 "method not found", and answers
//! params that are a string or an array with id `null`. A client then waits forever or
//! cannot match the answer. So this layer reads the lines itself, with a size limit,
//! parses each (serde_json's recursion limit bounds the depth, so nothing here
//! recurses on input), answers the lines it can tell are broken, and hands every other
//! line to rmcp as rmcp's own reading of it (`transport.rs`):
//!
//! - a line that does not parse, or is over the limit: -32700 with the request's id
//!   when a scan of the line's top level can read it, else id `null`;
//! - a request (readable id, no `result`/`error`) whose `jsonrpc` is not `"2.0"` or
//!   whose `method` is not a string: -32600 with its id;
//! - a batch (except in a session of MCP 2025-03-26, which has them: `batch.rs`), a
//!   message that is not an object, one with neither `method` nor
//!   `result`/`error`, and a request whose id is not a string or an integer: -32600 with
//!   id `null` (rmcp answers these with no `id` member at all);
//! - a request whose `params` is neither an object nor absent: -32602 with its id;
//! - `tools/call` without params, without a string `name`, or with `arguments` or
//!   `_meta` that are not objects: -32602 naming the field;
//! - a request of a method rmcp knows (`tools/list`, `initialize`…) whose params do not
//!   fit rmcp's type: -32602 (rmcp would answer -32601 "method not found").
//!
//! A notification gets no answer, even a broken one, as JSON-RPC says: one rmcp cannot
//! read is dropped here (rmcp would answer it with an id-less -32600). Responses from
//! the client and well-formed notifications are passed on as they are.

use rmcp::model::{
    ClientJsonRpcMessage, ClientRequest, ErrorData, JsonRpcMessage, ServerJsonRpcMessage,
};
use serde_json::{Map, Value, json};
use tokio::io::{AsyncBufRead, AsyncBufReadExt};

/// The default limit on one incoming message (one line, without its newline): 16 MiB,
/// rmcp's own cap for stdio and for server-sent events, so a message acceptable over one
/// transport is acceptable over the other.
pub const DEFAULT_MAX_MESSAGE_BYTES: usize = 16 * 1024 * 1024;

/// How much of an oversized line is kept to look for its id (`id` usually comes before
/// `params`, which is where the bulk of a big request is).
pub(crate) const ID_SCAN_PREFIX: usize = 64 * 1024;

/// JSON-RPC's error codes this layer answers with.
const PARSE_ERROR: i64 = -32700;
const INVALID_REQUEST: i64 = -32600;
const INVALID_PARAMS: i64 = -32602;

/// The verdict on a message that passed the checks above.
pub(crate) enum Checked {
    /// Answered by the framing (rmcp never sees it).
    Answer(Value),
    /// rmcp's message.
    Message(Box<ClientJsonRpcMessage>),
    /// rmcp's type does not read it: what rmcp answered then (`None`: nothing).
    Unread(Option<Value>),
}

/// What rmcp's own stdio transport does with a line its type does not read
/// (`try_parse_with_compatibility` and `receive` in rmcp's `async_rw.rs`): a
/// notification of a method it does not know, or a non-standard `notifications/…`
/// method, is ignored, and so is a syntax error; any other message is answered -32600
/// without an id.
pub(crate) fn rmcp_reading(message: &Value, error: &serde_json::Error) -> Option<Value> {
    if let Some(method) = message.get("method").and_then(Value::as_str) {
        let notification = message.get("id").is_none();
        let ignored = (notification && !is_standard_method(method))
            || (method.starts_with("notifications/") && !is_standard_notification(method));
        if ignored {
            return None;
        }
    }
    if matches!(
        error.classify(),
        serde_json::error::Category::Syntax | serde_json::error::Category::Eof
    ) {
        return None;
    }
    let answer =
        ServerJsonRpcMessage::error(ErrorData::invalid_request("Invalid request", None), None);
    serde_json::to_value(answer).ok()
}

/// rmcp's list of standard methods (rmcp 3.11's `is_standard_method`).
fn is_standard_method(method: &str) -> bool {
    matches!(
        method,
        "initialize"
            | "ping"
            | "server/discover"
            | "prompts/get"
            | "prompts/list"
            | "resources/list"
            | "resources/read"
            | "resources/subscribe"
            | "resources/unsubscribe"
            | "resources/templates/list"
            | "subscriptions/listen"
            | "tools/call"
            | "tools/list"
            | "completion/complete"
            | "elicitation/create"
            | "logging/setLevel"
            | "roots/list"
            | "sampling/createMessage"
    ) || is_standard_notification(method)
}

/// rmcp's list of standard notifications (rmcp 3.11's `is_standard_notification`).
fn is_standard_notification(method: &str) -> bool {
    matches!(
        method,
        "notifications/cancelled"
            | "notifications/initialized"
            | "notifications/message"
            | "notifications/progress"
            | "notifications/prompts/list_changed"
            | "notifications/resources/list_changed"
            | "notifications/resources/updated"
            | "notifications/roots/list_changed"
            | "notifications/subscriptions/acknowledged"
            | "notifications/tools/list_changed"
    )
}

/// The answer to an empty batch.
pub(crate) fn empty_batch_answer() -> Value {
    error_response(None, INVALID_REQUEST, "Invalid request: an empty batch")
}

pub(crate) enum Line {
    /// A whole line (without `\n` or `\r\n`) is in the reader's buffer.
    Complete,
    /// The line was longer than the limit; the buffer holds its first bytes.
    Oversized {
        length: usize,
    },
    Eof,
}

/// Reads `\n`-terminated lines without ever buffering more than the limit.
///
/// Cancel safe: a line read halfway (the future dropped at an await, as rmcp's service
/// loop drops a transport's `receive`) stays in the reader, with what was seen of it,
/// and the next call goes on with it.
pub(crate) struct LineReader {
    limit: usize,
    buffer: Vec<u8>,
    /// The bytes of the current line seen so far, kept or not.
    length: usize,
    oversized: bool,
    /// A line is being read: the buffer holds its start, not the last line returned.
    reading: bool,
}

impl LineReader {
    pub(crate) fn new(limit: usize) -> Self {
        LineReader {
            limit,
            buffer: Vec::new(),
            length: 0,
            oversized: false,
            reading: false,
        }
    }

    pub(crate) fn line(&self) -> &[u8] {
        &self.buffer
    }

    pub(crate) async fn next<R: AsyncBufRead + Unpin>(
        &mut self,
        read: &mut R,
    ) -> std::io::Result<Line> {
        if !self.reading {
            self.buffer.clear();
            self.length = 0;
            self.oversized = false;
            self.reading = true;
        }
        let line = self.read(read).await;
        // Ended (also by an error): the next call starts a new line.
        self.reading = false;
        line
    }

    async fn read<R: AsyncBufRead + Unpin>(&mut self, read: &mut R) -> std::io::Result<Line> {
        loop {
            let available = read.fill_buf().await?;
            if available.is_empty() {
                // A last line without a newline is still a message.
                return Ok(match (self.oversized, self.buffer.is_empty()) {
                    (true, _) => Line::Oversized {
                        length: self.length,
                    },
                    (false, true) => Line::Eof,
                    (false, false) => {
                        self.trim_carriage_return();
                        if self.buffer.len() > self.limit {
                            Line::Oversized {
                                length: self.length,
                            }
                        } else {
                            Line::Complete
                        }
                    }
                });
            }
            let newline = available.iter().position(|byte| *byte == b'\n');
            let chunk = &available[..newline.unwrap_or(available.len())];
            self.length = self.length.saturating_add(chunk.len());
            if !self.oversized && self.length > self.limit.saturating_add(1) {
                // One byte of slack for a `\r` before the newline.
                self.oversized = true;
                self.buffer.truncate(ID_SCAN_PREFIX);
            }
            let room = if self.oversized {
                ID_SCAN_PREFIX.saturating_sub(self.buffer.len())
            } else {
                chunk.len()
            };
            self.buffer
                .extend_from_slice(&chunk[..room.min(chunk.len())]);
            let consumed = newline.map_or(available.len(), |at| at + 1);
            read.consume(consumed);
            if newline.is_some() {
                if self.oversized {
                    return Ok(Line::Oversized {
                        length: self.length,
                    });
                }
                self.trim_carriage_return();
                if self.buffer.len() > self.limit {
                    return Ok(Line::Oversized {
                        length: self.length,
                    });
                }
                return Ok(Line::Complete);
            }
        }
    }

    fn trim_carriage_return(&mut self) {
        if self.buffer.last() == Some(&b'\r') {
            self.buffer.pop();
        }
    }
}

/// The answer to a message over `limit` bytes, of which `prefix` is the start and
/// `length` bytes were seen.
pub(crate) fn oversized_answer(prefix: &[u8], limit: usize, length: usize) -> Value {
    error_response(
        read_id(prefix),
        PARSE_ERROR,
        &format!(
            "Parse error: the message is over the limit of {limit} bytes \
             ({length} bytes); it was not read"
        ),
    )
}

/// What to do with one complete line.
#[derive(Debug)]
pub(crate) enum Verdict {
    /// Nothing to do (a blank line).
    Skip,
    /// rmcp handles it.
    Forward,
    /// Write this response; rmcp never sees the line.
    Answer(Value),
}

const UTF8_BOM: &[u8] = b"\xEF\xBB\xBF";

/// Decides what to do with one complete line.
#[cfg(any(test, fuzzing))]
pub(crate) fn check(line: &[u8]) -> Verdict {
    match parse(line) {
        Parsed::Done(verdict) => verdict,
        Parsed::Message(text, message) => check_parsed(text, &message),
    }
}

/// A line parsed once, for callers that look at the message before [`check_parsed`].
pub(crate) enum Parsed<'a> {
    /// Decided without a message (blank, unparseable, or an unreadable notification).
    Done(Verdict),
    /// The line's text (without a byte-order mark) and its JSON.
    Message(&'a [u8], Value),
}

/// Parses one complete line; see [`check`].
pub(crate) fn parse(line: &[u8]) -> Parsed<'_> {
    let text = line.strip_prefix(UTF8_BOM).unwrap_or(line);
    if text.iter().all(u8::is_ascii_whitespace) {
        return Parsed::Done(Verdict::Skip);
    }
    // serde_json stops at 128 levels of nesting with an error, so this parse is bounded.
    let message = match serde_json::from_slice::<Value>(text) {
        Ok(message) => message,
        Err(error) => {
            return Parsed::Done(Verdict::Answer(error_response(
                read_id(text),
                PARSE_ERROR,
                &format!("Parse error: {error}"),
            )));
        }
    };
    if is_unreadable_notification(&message) {
        return Parsed::Done(Verdict::Skip);
    }
    Parsed::Message(text, message)
}

/// The verdict on a parsed message whose text is `text`.
pub(crate) fn check_parsed(text: &[u8], message: &Value) -> Verdict {
    match check_message(message).or_else(|| check_shape(message, text)) {
        Some((id, code, text)) => Verdict::Answer(error_response(Some(id), code, &text)),
        None => Verdict::Forward,
    }
}

/// A notification (a `method`, no `id`) rmcp cannot read. rmcp would answer it with an
/// id-less -32600; JSON-RPC says a notification gets no answer, even a broken one.
pub(crate) fn is_unreadable_notification(message: &Value) -> bool {
    let Some(object) = message.as_object() else {
        return false;
    };
    if object.contains_key("id") || !object.contains_key("method") {
        return false;
    }
    // Notifications are small; a copy to try rmcp's own type is cheap.
    serde_json::from_value::<ClientJsonRpcMessage>(message.clone()).is_err()
}

/// The error to answer a parsed message with, and the id to answer it with; `None`
/// passes it on to rmcp.
fn check_message(message: &Value) -> Option<(Value, i64, String)> {
    // rmcp answers the invalid requests below with no `id` member at all; JSON-RPC asks
    // for `"id": null` when the id cannot be read.
    let null_id = |text: &str| Some((Value::Null, INVALID_REQUEST, text.to_owned()));
    let Some(object) = message.as_object() else {
        return match message {
            Value::Array(_) => null_id("Invalid request: batches are not supported"),
            other => null_id(&format!(
                "Invalid request: a message must be an object, got {}",
                kind(Some(other))
            )),
        };
    };
    if object.contains_key("result") || object.contains_key("error") {
        // A response from the client to a request of ours.
        return None;
    }
    let id = match object.get("id") {
        // A notification (one rmcp cannot read was dropped before).
        None if object.contains_key("method") => return None,
        None => return null_id("Invalid request: no \"method\""),
        Some(id) if usable_id(id) => id,
        Some(_) => return null_id("Invalid request: \"id\" must be a string or an integer"),
    };
    let invalid = |code, text: String| Some((id.clone(), code, text));
    if object.get("jsonrpc").and_then(Value::as_str) != Some("2.0") {
        return invalid(
            INVALID_REQUEST,
            "Invalid request: \"jsonrpc\" must be \"2.0\"".to_owned(),
        );
    }
    let Some(method) = object.get("method").and_then(Value::as_str) else {
        return invalid(
            INVALID_REQUEST,
            format!(
                "Invalid request: \"method\" must be a string, got {}",
                kind(object.get("method"))
            ),
        );
    };
    let params = match object.get("params") {
        None | Some(Value::Null) => None,
        Some(Value::Object(params)) => Some(params),
        Some(other) => {
            return invalid(
                INVALID_PARAMS,
                format!(
                    "Invalid params: \"params\" must be an object, got {}",
                    kind(Some(other))
                ),
            );
        }
    };
    if method == "tools/call"
        && let Err(problem) = check_call_params(params)
    {
        return invalid(INVALID_PARAMS, format!("Invalid params: {problem}"));
    }
    None
}

/// What is wrong with `tools/call`'s params, if anything. Arguments that are not an
/// object are a JSON-RPC error rather than an `isError` result (MCP 2025-11-25 allows
/// either): the request is malformed before any tool is chosen.
fn check_call_params(params: Option<&Map<String, Value>>) -> Result<(), String> {
    let Some(params) = params else {
        return Err("tools/call needs params with the tool's \"name\"".to_owned());
    };
    match params.get("name") {
        Some(Value::String(_)) => {}
        None => return Err("tools/call needs the tool's \"name\"".to_owned()),
        Some(other) => {
            return Err(format!(
                "\"name\" must be a string, got {}",
                kind(Some(other))
            ));
        }
    }
    for field in ["arguments", "_meta"] {
        match params.get(field) {
            None | Some(Value::Null) | Some(Value::Object(_)) => {}
            Some(other) => {
                return Err(format!(
                    "\"{field}\" must be an object, got {}",
                    kind(Some(other))
                ));
            }
        }
    }
    Ok(())
}

/// The requests rmcp's model knows by method. When the params of one of these do not fit
/// rmcp's type, rmcp reads the request as a custom one and answers "method not found".
const KNOWN_REQUESTS: &[&str] = &[
    "initialize",
    "ping",
    "tools/call",
    "tools/list",
    "prompts/get",
    "prompts/list",
    "resources/list",
    "resources/read",
    "resources/templates/list",
    "resources/subscribe",
    "resources/unsubscribe",
    "completion/complete",
    "logging/setLevel",
];

/// The id and method of a request whose method rmcp's model knows, if `message` is one.
fn known_request(message: &Value) -> Option<(&Value, &str)> {
    let object = message.as_object()?;
    let id = object.get("id").filter(|id| usable_id(id))?;
    let method = object.get("method").and_then(Value::as_str)?;
    KNOWN_REQUESTS.contains(&method).then_some((id, method))
}

/// Whether rmcp's reading of a known request is the request (not a custom one).
fn fits(typed: &Result<ClientJsonRpcMessage, serde_json::Error>) -> bool {
    match typed {
        Ok(JsonRpcMessage::Request(request)) => {
            !matches!(request.request, ClientRequest::CustomRequest(_))
        }
        Ok(_) => true,
        Err(_) => false,
    }
}

fn shape_error(id: &Value, method: &str) -> (Value, i64, String) {
    (
        id.clone(),
        INVALID_PARAMS,
        format!("Invalid params: the params do not have the shape {method} takes"),
    )
}

/// -32602 for a known request whose params rmcp's own type rejects (after
/// [`check_message`] found nothing to name); serde's text names Rust types, so it is not
/// repeated.
fn check_shape(message: &Value, text: &[u8]) -> Option<(Value, i64, String)> {
    let (id, method) = known_request(message)?;
    let typed = serde_json::from_slice::<ClientJsonRpcMessage>(text);
    (!fits(&typed)).then(|| shape_error(id, method))
}

/// The verdict on a parsed line for the stdio transport: the checks of
/// [`check_parsed`], with rmcp's own reading of the line (one parse serves as the shape
/// check and as the message rmcp gets); a line rmcp's type does not read gets what
/// rmcp's stdio transport gave it.
pub(crate) fn check_line(text: &[u8], message: &Value) -> Checked {
    if let Some((id, code, text)) = check_message(message) {
        return Checked::Answer(error_response(Some(id), code, &text));
    }
    let typed = serde_json::from_slice::<ClientJsonRpcMessage>(text);
    if let Some((id, method)) = known_request(message)
        && !fits(&typed)
    {
        let (id, code, text) = shape_error(id, method);
        return Checked::Answer(error_response(Some(id), code, &text));
    }
    match typed {
        Ok(parsed) => Checked::Message(Box::new(parsed)),
        Err(error) => Checked::Unread(rmcp_reading(message, &error)),
    }
}

/// JSON-RPC ids rmcp can answer with: a string or an integer.
fn usable_id(id: &Value) -> bool {
    match id {
        Value::String(_) => true,
        Value::Number(number) => number.is_i64() || number.is_u64(),
        _ => false,
    }
}

/// "a string", "an array"…, for error texts.
fn kind(value: Option<&Value>) -> &'static str {
    match value {
        None => "nothing",
        Some(Value::Null) => "null",
        Some(Value::Bool(_)) => "a boolean",
        Some(Value::Number(_)) => "a number",
        Some(Value::String(_)) => "a string",
        Some(Value::Array(_)) => "an array",
        Some(Value::Object(_)) => "an object",
    }
}

fn error_response(id: Option<Value>, code: i64, message: &str) -> Value {
    json!({
        "jsonrpc": "2.0",
        "id": id.unwrap_or(Value::Null),
        "error": {"code": code, "message": message},
    })
}

/// The top-level `id` of a line that did not parse (or was cut short), when it is
/// readable: scans the top-level object's members, skipping values without recursing,
/// and stops at the first `"id"` key. `None` when the line is not an object, the id is
/// not a string or an integer, or the scan hits something it cannot read first.
fn read_id(line: &[u8]) -> Option<Value> {
    let mut scan = Scanner {
        bytes: line.strip_prefix(UTF8_BOM).unwrap_or(line),
        at: 0,
    };
    scan.expect(b'{')?;
    loop {
        scan.whitespace();
        let key = scan.string()?;
        scan.expect(b':')?;
        scan.whitespace();
        if decode_string(key).as_deref() == Some("id") {
            return scan.id();
        }
        scan.skip_value()?;
        scan.expect(b',')?;
    }
}

fn decode_string(raw: &[u8]) -> Option<String> {
    serde_json::from_slice(raw).ok()
}

struct Scanner<'a> {
    bytes: &'a [u8],
    at: usize,
}

impl<'a> Scanner<'a> {
    fn peek(&self) -> Option<u8> {
        self.bytes.get(self.at).copied()
    }

    fn whitespace(&mut self) {
        while matches!(self.peek(), Some(b' ' | b'\t' | b'\n' | b'\r')) {
            self.at += 1;
        }
    }

    /// Skips whitespace, then consumes `byte` or fails.
    fn expect(&mut self, byte: u8) -> Option<()> {
        self.whitespace();
        (self.peek()? == byte).then(|| self.at += 1)
    }

    /// A string token, quotes included, undecoded.
    fn string(&mut self) -> Option<&'a [u8]> {
        let start = self.at;
        if self.peek()? != b'"' {
            return None;
        }
        self.at += 1;
        loop {
            match self.peek()? {
                b'"' => {
                    self.at += 1;
                    return Some(&self.bytes[start..self.at]);
                }
                b'\\' => self.at += 2,
                _ => self.at += 1,
            }
        }
    }

    /// The bytes of a scalar token (number, `true`, `false`, `null`).
    fn scalar(&mut self) -> &'a [u8] {
        let start = self.at;
        while let Some(byte) = self.peek() {
            if matches!(
                byte,
                b',' | b':' | b'{' | b'}' | b'[' | b']' | b'"' | b' ' | b'\t' | b'\n' | b'\r'
            ) {
                break;
            }
            self.at += 1;
        }
        &self.bytes[start..self.at]
    }

    /// Skips one value of any depth with a counter, never recursing.
    fn skip_value(&mut self) -> Option<()> {
        let mut depth = 0usize;
        loop {
            self.whitespace();
            match self.peek()? {
                b'"' => {
                    self.string()?;
                }
                b'{' | b'[' => {
                    depth += 1;
                    self.at += 1;
                    continue;
                }
                b'}' | b']' => {
                    depth = depth.checked_sub(1)?;
                    self.at += 1;
                }
                b',' | b':' if depth > 0 => {
                    self.at += 1;
                    continue;
                }
                b',' | b':' => return None,
                _ => {
                    if self.scalar().is_empty() {
                        return None;
                    }
                }
            }
            if depth == 0 {
                return Some(());
            }
        }
    }

    /// The value of `id` if it is a string or an integer.
    fn id(&mut self) -> Option<Value> {
        let token = if self.peek()? == b'"' {
            self.string()?
        } else {
            self.scalar()
        };
        let id: Value = serde_json::from_slice(token).ok()?;
        usable_id(&id).then_some(id)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_id_is_read_from_lines_that_do_not_parse() {
        let cases: [(&[u8], Option<Value>); 9] = [
            (
                br#"{"jsonrpc":"2.0","id":7,"params":{"x":1e400}}"#,
                Some(json!(7)),
            ),
            (br#"{"a":[1,{"b":"}"}],"id":"s\"1"}"#, Some(json!("s\"1"))),
            (br#" {"\u0069d" : -3 , "x": 1e400}"#, Some(json!(-3))),
            (br#"{"params":{"x":"\ud800"},"id":1.5}"#, None),
            (br#"{"id":null,"x":1e400}"#, None),
            (br#"[{"id":1}]"#, None),
            (br#"{"x":1e400}"#, None),
            (br#"{"x":[[[[[[[[[["#, None),
            (br#"{"x" 1, "id": 2}"#, None),
        ];
        for (line, id) in cases {
            assert_eq!(read_id(line), id, "{}", String::from_utf8_lossy(line));
        }
    }

    #[test]
    fn a_deep_line_is_scanned_without_recursion() {
        let mut line = b"{\"x\":".to_vec();
        line.extend(std::iter::repeat_n(b'[', 1_000_000));
        line.extend(std::iter::repeat_n(b']', 1_000_000));
        line.extend(b",\"id\":9}");
        assert_eq!(read_id(&line), Some(json!(9)));
        match check(&line) {
            Verdict::Answer(response) => {
                assert_eq!(response["id"], json!(9));
                assert_eq!(response["error"]["code"], json!(PARSE_ERROR));
            }
            other => panic!("{other:?}"),
        }
    }
}
