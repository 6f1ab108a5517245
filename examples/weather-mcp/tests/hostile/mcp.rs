//! Clients of the `weather-mcp` binary that send a payload's raw argument text as the
//! `arguments` member of a `tools/call` line, byte for byte: over stdio, and over
//! streamable HTTP (one POST per call, in an initialised session).

use std::io::{BufRead, BufReader, Read, Write};
use std::net::TcpStream;
use std::process::{Child, ChildStdin, Command, Stdio as Piped};
use std::sync::mpsc::{Receiver, channel};
use std::time::Duration;

use pi_tool::{Value, json};

use super::Answer;

/// The JSON-RPC line of a `tools/call` with `raw` as its arguments. Stdio frames
/// messages by newlines, so a raw line break (JSON whitespace, outside strings) becomes
/// a space there; over HTTP the bytes go as they are.
pub fn call_line(id: u64, tool: &str, raw: &[u8], one_line: bool) -> Vec<u8> {
    let mut line = format!(
        r#"{{"jsonrpc":"2.0","id":{id},"method":"tools/call","params":{{"name":{},"arguments":"#,
        Value::String(tool.to_owned())
    )
    .into_bytes();
    if one_line {
        line.extend(
            raw.iter()
                .map(|&b| if b == b'\n' || b == b'\r' { b' ' } else { b }),
        );
    } else {
        line.extend_from_slice(raw);
    }
    line.extend_from_slice(b"}}");
    line
}

/// What the client reads from one JSON-RPC answer.
pub fn answer_of(message: &Value) -> Answer {
    if let Some(error) = message.get("error") {
        return Answer {
            is_error: true,
            text: format!(
                "JSON-RPC error {}: {}",
                error["code"],
                error["message"].as_str().unwrap_or("")
            ),
        };
    }
    let result = &message["result"];
    let text = result["content"]
        .as_array()
        .map(|blocks| {
            blocks
                .iter()
                .filter_map(|b| b["text"].as_str())
                .collect::<Vec<_>>()
                .join("\n")
        })
        .unwrap_or_default();
    Answer {
        is_error: result["isError"] == json!(true),
        text,
    }
}

const INITIALIZE: &str = r#"{"jsonrpc":"2.0","id":0,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"hostile-corpus","version":"0"}}}"#;
const INITIALIZED: &str = r#"{"jsonrpc":"2.0","method":"notifications/initialized"}"#;

/// `weather-mcp` on stdio.
pub struct StdioServer {
    child: Child,
    stdin: ChildStdin,
    lines: Receiver<String>,
}

impl StdioServer {
    pub fn start() -> StdioServer {
        let mut child = Command::new(env!("CARGO_BIN_EXE_weather-mcp"))
            .stdin(Piped::piped())
            .stdout(Piped::piped())
            .stderr(Piped::null())
            .spawn()
            .expect("weather-mcp starts");
        let stdin = child.stdin.take().expect("piped stdin");
        let stdout = child.stdout.take().expect("piped stdout");
        let (send, lines) = channel();
        std::thread::spawn(move || {
            for line in BufReader::new(stdout).lines() {
                let Ok(line) = line else { return };
                if send.send(line).is_err() {
                    return;
                }
            }
        });
        let mut server = StdioServer {
            child,
            stdin,
            lines,
        };
        server.send(INITIALIZE.as_bytes());
        server.send(INITIALIZED.as_bytes());
        let initialized = server.receive(0, Duration::from_secs(20));
        assert!(initialized.is_some(), "weather-mcp answers initialize");
        server
    }

    pub fn pid(&self) -> String {
        self.child.id().to_string()
    }

    fn send(&mut self, line: &[u8]) {
        // A server that stopped reading shows as a missing answer, not a panic here.
        let _ = self.stdin.write_all(line);
        let _ = self.stdin.write_all(b"\n");
        let _ = self.stdin.flush();
    }

    /// The answer with this id (other messages are skipped), or `None` after `wait`.
    fn receive(&mut self, id: u64, wait: Duration) -> Option<Value> {
        let deadline = std::time::Instant::now() + wait;
        loop {
            let left = deadline.saturating_duration_since(std::time::Instant::now());
            let line = self.lines.recv_timeout(left).ok()?;
            let message: Value = line.parse().ok()?;
            if message["id"] == json!(id)
                || message["id"].is_null() && message.get("method").is_none()
            {
                return Some(message);
            }
        }
    }

    pub fn call(&mut self, id: u64, tool: &str, raw: &[u8], wait: Duration) -> Answer {
        self.send(&call_line(id, tool, raw, true));
        match self.receive(id, wait) {
            Some(message) => answer_of(&message),
            None => Answer {
                is_error: true,
                text: format!("no answer within {wait:?}"),
            },
        }
    }
}

impl Drop for StdioServer {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// `weather-mcp --http 127.0.0.1:0`, and an initialised session on it.
pub struct HttpServer {
    child: Child,
    address: String,
    session: Option<String>,
}

impl HttpServer {
    pub fn start() -> HttpServer {
        let mut child = Command::new(env!("CARGO_BIN_EXE_weather-mcp"))
            .args(["--http", "127.0.0.1:0"])
            .stdin(Piped::null())
            .stdout(Piped::null())
            .stderr(Piped::piped())
            .spawn()
            .expect("weather-mcp starts");
        let stderr = child.stderr.take().expect("piped stderr");
        let (send, lines) = channel();
        std::thread::spawn(move || {
            for line in BufReader::new(stderr).lines() {
                let Ok(line) = line else { return };
                let _ = send.send(line);
            }
        });
        let address = loop {
            let line = lines
                .recv_timeout(Duration::from_secs(20))
                .expect("weather-mcp prints its address");
            if let Some(url) = line.split("at http://").nth(1) {
                break url.trim_end_matches("/mcp").to_owned();
            }
        };
        let mut server = HttpServer {
            child,
            address,
            session: None,
        };
        let (headers, body) = server.post(INITIALIZE.as_bytes(), Duration::from_secs(20));
        assert!(body.contains("\"result\""), "initialize: {headers} {body}");
        server.session = header(&headers, "mcp-session-id");
        server.post(INITIALIZED.as_bytes(), Duration::from_secs(20));
        server
    }

    pub fn pid(&self) -> String {
        self.child.id().to_string()
    }

    pub fn call(&mut self, id: u64, tool: &str, raw: &[u8], wait: Duration) -> Answer {
        let (head, body) = self.post(&call_line(id, tool, raw, false), wait);
        let status = head.split(' ').nth(1).unwrap_or("?").to_owned();
        // An SSE body holds the answer in a `data:` line; a JSON body is the answer.
        let message = body
            .lines()
            .filter_map(|l| l.strip_prefix("data:"))
            .chain(std::iter::once(body.as_str()))
            .find_map(|l| {
                l.trim()
                    .parse::<Value>()
                    .ok()
                    .filter(|m| m.get("jsonrpc").is_some())
            });
        match message {
            Some(message) => answer_of(&message),
            None => Answer {
                is_error: true,
                text: format!(
                    "HTTP {status} without a JSON-RPC answer: {}",
                    body.chars().take(200).collect::<String>()
                ),
            },
        }
    }

    /// POSTs `body` and returns the response's head and (de-chunked) body.
    fn post(&self, body: &[u8], wait: Duration) -> (String, String) {
        let Ok(mut stream) = TcpStream::connect(&self.address) else {
            return ("HTTP/1.1 000 no connection".into(), String::new());
        };
        let _ = stream.set_read_timeout(Some(wait));
        let session = self
            .session
            .as_ref()
            .map(|id| format!("Mcp-Session-Id: {id}\r\n"))
            .unwrap_or_default();
        let head = format!(
            "POST /mcp HTTP/1.1\r\nHost: {}\r\nContent-Type: application/json\r\n\
             Accept: application/json, text/event-stream\r\n{session}Content-Length: {}\r\n\
             Connection: close\r\n\r\n",
            self.address,
            body.len()
        );
        // The server may answer (an oversized body) before reading it all.
        let writer = stream.try_clone().ok().map(|mut w| {
            let mut request = head.into_bytes();
            request.extend_from_slice(body);
            std::thread::spawn(move || {
                let _ = w.write_all(&request);
            })
        });
        let mut answer = Vec::new();
        let _ = stream.read_to_end(&mut answer);
        drop(writer);
        let Some(split) = answer.windows(4).position(|w| w == b"\r\n\r\n") else {
            return (String::from_utf8_lossy(&answer).into_owned(), String::new());
        };
        let head = String::from_utf8_lossy(&answer[..split]).into_owned();
        let body = &answer[split + 4..];
        let chunked =
            header(&head, "transfer-encoding").is_some_and(|v| v.eq_ignore_ascii_case("chunked"));
        let body = if chunked {
            dechunk(body)
        } else {
            body.to_vec()
        };
        (head, String::from_utf8_lossy(&body).into_owned())
    }
}

impl Drop for HttpServer {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

fn header(head: &str, name: &str) -> Option<String> {
    head.lines().find_map(|line| {
        let (n, v) = line.split_once(':')?;
        n.trim()
            .eq_ignore_ascii_case(name)
            .then(|| v.trim().to_owned())
    })
}

fn dechunk(mut body: &[u8]) -> Vec<u8> {
    let mut out = Vec::new();
    while let Some(end) = body.windows(2).position(|w| w == b"\r\n") {
        let size = std::str::from_utf8(&body[..end])
            .ok()
            .and_then(|s| usize::from_str_radix(s.trim(), 16).ok());
        let rest = &body[end + 2..];
        let Some(size) = size.filter(|&s| s > 0) else {
            break;
        };
        let size = size.min(rest.len());
        out.extend_from_slice(&rest[..size]);
        body = rest[size..].strip_prefix(b"\r\n").unwrap_or(&rest[size..]);
    }
    out
}
