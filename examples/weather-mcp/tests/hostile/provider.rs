//! A local OpenAI-compatible server that makes the model call a tool with raw argument
//! bytes, so the agent loop and the session read them exactly as they read a real
//! model's: streamed in `function.arguments` deltas of chat-completion chunks, parsed by
//! pi-tool's `openai-completions` provider (pi-ai's partial-JSON reading and all).
//!
//! The first request of a prompt gets the tool call; a request that carries the tool's
//! result gets a short text, which ends the run.

use std::io::{BufRead, BufReader, Read, Write};
use std::net::{TcpListener, TcpStream};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use pi_tool::Content;
use pi_tool::model::{ApiKey, Message, Model, StreamOptions};

use super::Answer;

/// The call the model makes next: the tool's name and the raw arguments.
type NextCall = Arc<Mutex<(String, Vec<u8>)>>;

/// The server; it runs until the test process ends.
pub struct FakeModel {
    pub base_url: String,
    next: NextCall,
}

/// Raw argument bytes are streamed in deltas of about this size.
const DELTA: usize = 256 << 10;

impl FakeModel {
    pub fn start() -> FakeModel {
        let listener = TcpListener::bind("127.0.0.1:0").expect("bind 127.0.0.1");
        let base_url = format!("http://{}/v1", listener.local_addr().expect("address"));
        let next: NextCall = Arc::new(Mutex::new((String::new(), Vec::new())));
        let shared = next.clone();
        std::thread::spawn(move || {
            for socket in listener.incoming().flatten() {
                let next = shared.clone();
                std::thread::spawn(move || answer(socket, &next));
            }
        });
        FakeModel { base_url, next }
    }

    /// The next prompt's model calls `tool` with `raw`.
    pub fn will_call(&self, tool: &str, raw: &[u8]) {
        let mut next = self.next.lock().expect("not poisoned");
        next.0 = tool.to_owned();
        next.1 = raw.to_vec();
    }

    pub fn model(&self) -> Model {
        Model::openai_compatible(self.base_url.as_str(), "hostile")
    }

    pub fn stream_options() -> StreamOptions {
        StreamOptions {
            api_key: Some(ApiKey::new("none")),
            ..StreamOptions::default()
        }
    }
}

/// The answer the model read: the tool's result, or why there was none (the stream's
/// error, when the provider could not read the call).
pub fn answer_of(messages: &[Message]) -> Answer {
    for message in messages {
        if let Message::ToolResult(result) = message {
            let text = result
                .content
                .iter()
                .filter_map(|c| match c {
                    Content::Text { text } => Some(text.as_str()),
                    _ => None,
                })
                .collect::<Vec<_>>()
                .join("\n");
            return Answer {
                is_error: result.is_error,
                text,
            };
        }
    }
    let error = messages.iter().rev().find_map(|m| match m {
        Message::Assistant(a) => Some(format!(
            "no tool call: stop reason {:?}, {}",
            a.stop_reason,
            a.error_message.clone().unwrap_or_default()
        )),
        _ => None,
    });
    Answer {
        is_error: true,
        text: error.unwrap_or_else(|| "no answer".to_owned()),
    }
}

fn answer(mut socket: TcpStream, next: &NextCall) {
    let _ = socket.set_read_timeout(Some(Duration::from_secs(30)));
    let Some(body) = read_body(&socket) else {
        return;
    };
    let head = "HTTP/1.1 200 OK\r\ncontent-type: text/event-stream\r\nconnection: close\r\n\r\n";
    let _ = socket.write_all(head.as_bytes());
    // A request carrying a tool result is the turn after the call: end the run.
    let answered = find(&body, br#""role":"tool""#);
    let mut out = Vec::new();
    if answered {
        event(
            &mut out,
            br#"{"role":"assistant","content":"done"}"#,
            "null",
        );
        event(&mut out, b"{}", "\"stop\"");
    } else {
        let (tool, raw) = next.lock().map(|n| n.clone()).unwrap_or_default();
        let mut first = br#"{"role":"assistant","tool_calls":[{"index":0,"id":"call_1","type":"function","function":{"name":"#.to_vec();
        first.extend_from_slice(pi_tool::Value::String(tool).to_string().as_bytes());
        first.extend_from_slice(br#","arguments":""}}]}"#);
        event(&mut out, &first, "null");
        let mut start = 0;
        while start < raw.len() {
            let mut end = (start + DELTA).min(raw.len());
            // Deltas split between characters, as a real server's do.
            while end < raw.len() && (raw[end] & 0xC0) == 0x80 && end - start < DELTA + 4 {
                end += 1;
            }
            let mut delta = br#"{"tool_calls":[{"index":0,"function":{"arguments":""#.to_vec();
            escape(&raw[start..end], &mut delta);
            delta.extend_from_slice(br#""}}]}"#);
            event(&mut out, &delta, "null");
            start = end;
            if out.len() > 1 << 20 {
                let _ = socket.write_all(&out);
                out.clear();
            }
        }
        event(&mut out, b"{}", "\"tool_calls\"");
    }
    out.extend_from_slice(b"data: [DONE]\n\n");
    let _ = socket.write_all(&out);
    let _ = socket.flush();
}

fn event(out: &mut Vec<u8>, delta: &[u8], finish: &str) {
    out.extend_from_slice(
        br#"data: {"id":"c1","object":"chat.completion.chunk","created":0,"model":"hostile","choices":[{"index":0,"delta":"#,
    );
    out.extend_from_slice(delta);
    out.extend_from_slice(format!(r#","finish_reason":{finish}}}]}}"#).as_bytes());
    out.extend_from_slice(b"\n\n");
}

/// The bytes as the inside of a JSON string: quotes, backslashes and control characters
/// escaped, everything else (bytes that are not UTF-8 included) as it is.
fn escape(raw: &[u8], out: &mut Vec<u8>) {
    for &b in raw {
        match b {
            b'"' => out.extend_from_slice(b"\\\""),
            b'\\' => out.extend_from_slice(b"\\\\"),
            0..=0x1f => out.extend_from_slice(format!("\\u{b:04x}").as_bytes()),
            _ => out.push(b),
        }
    }
}

fn read_body(socket: &TcpStream) -> Option<Vec<u8>> {
    let mut reader = BufReader::new(socket);
    let mut length = 0usize;
    loop {
        let mut line = String::new();
        if reader.read_line(&mut line).ok()? == 0 {
            return None;
        }
        let line = line.trim_end();
        if line.is_empty() {
            break;
        }
        if let Some((name, value)) = line.split_once(':')
            && name.eq_ignore_ascii_case("content-length")
        {
            length = value.trim().parse().ok()?;
        }
    }
    let mut body = vec![0; length];
    reader.read_exact(&mut body).ok()?;
    Some(body)
}

fn find(haystack: &[u8], needle: &[u8]) -> bool {
    haystack.windows(needle.len()).any(|w| w == needle)
}
