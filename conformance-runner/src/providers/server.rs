//! The mock server of a provider fixture (`conformance/providers/FORMAT.md` §1.4): raw
//! HTTP/1.1 on 127.0.0.1 that records each request and replays the fixture's response,
//! one chunked-transfer chunk per fixture chunk, as Node's `http` server does in
//! `record.mjs`.

use std::sync::{Arc, Mutex};
use std::time::Duration;

use serde_json::Value;
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::{TcpListener, TcpStream};
use tokio::task::JoinHandle;

/// The recorder's minimum pause before each chunk (`MIN_CHUNK_GAP_MS`).
const MIN_CHUNK_GAP_MS: u64 = 3;
/// A request head larger than this is refused (no client of ours sends one).
const MAX_HEAD: usize = 1 << 20;
/// A request body larger than this is refused.
const MAX_BODY: usize = 64 << 20;

/// What the server answers (a fixture's `response`).
#[derive(Debug, Clone)]
pub struct ResponseSpec {
    /// The HTTP status.
    pub status: u16,
    /// The headers, in the fixture's order, written as given.
    pub headers: Vec<(String, String)>,
    /// The body, one element per chunk.
    pub chunks: Vec<Vec<u8>>,
    /// The pause before each chunk, in milliseconds (at least 3).
    pub gap_ms: u64,
    /// Destroy the socket after this chunk (0-based), without the terminating chunk.
    pub disconnect_after: Option<usize>,
}

impl ResponseSpec {
    /// Reads a fixture's `response` object.
    pub fn from_json(response: &Value) -> Result<ResponseSpec, String> {
        let status = match response.get("status") {
            None | Some(Value::Null) => 200,
            Some(s) => s
                .as_u64()
                .and_then(|s| u16::try_from(s).ok())
                .filter(|s| (100..1000).contains(s))
                .ok_or_else(|| format!("response.status: {s}"))?,
        };
        let headers = match response.get("headers") {
            None | Some(Value::Null) => {
                vec![("content-type".to_owned(), "text/event-stream".to_owned())]
            }
            Some(Value::Object(map)) => map
                .iter()
                .map(|(k, v)| match v {
                    Value::String(s) => Ok((k.clone(), s.clone())),
                    // Node writes a number or boolean header value as its string.
                    Value::Number(_) | Value::Bool(_) => Ok((k.clone(), v.to_string())),
                    _ => Err(format!("response.headers.{k}: {v}")),
                })
                .collect::<Result<_, _>>()?,
            Some(other) => return Err(format!("response.headers: {other}")),
        };
        let chunks = match response.get("chunks") {
            None | Some(Value::Null) => Vec::new(),
            Some(Value::Array(items)) => items.iter().map(chunk_bytes).collect::<Result<_, _>>()?,
            Some(other) => return Err(format!("response.chunks: {other}")),
        };
        let delay = match response.get("delayMs") {
            None | Some(Value::Null) => 0.0,
            Some(d) => d.as_f64().ok_or_else(|| format!("response.delayMs: {d}"))?,
        };
        let disconnect_after = match response.get("disconnectAfterChunk") {
            None | Some(Value::Null) => None,
            Some(k) => Some(
                k.as_u64()
                    .and_then(|k| usize::try_from(k).ok())
                    .ok_or_else(|| format!("response.disconnectAfterChunk: {k}"))?,
            ),
        };
        Ok(ResponseSpec {
            status,
            headers,
            chunks,
            gap_ms: (delay.max(0.0) as u64).max(MIN_CHUNK_GAP_MS),
            disconnect_after,
        })
    }
}

fn chunk_bytes(chunk: &Value) -> Result<Vec<u8>, String> {
    match chunk {
        Value::String(s) => Ok(s.as_bytes().to_vec()),
        Value::Object(o) => match o.get("base64") {
            Some(Value::String(b)) => Ok(base64_decode(b)),
            _ => Err(format!("bad chunk: {chunk}")),
        },
        _ => Err(format!("bad chunk: {chunk}")),
    }
}

/// Node's `Buffer.from(text, "base64")`: both alphabets, padding and anything outside
/// the alphabet skipped.
fn base64_decode(text: &str) -> Vec<u8> {
    let mut out = Vec::with_capacity(text.len() * 3 / 4);
    let (mut acc, mut bits) = (0u32, 0u32);
    for c in text.bytes() {
        let v = match c {
            b'A'..=b'Z' => c - b'A',
            b'a'..=b'z' => c - b'a' + 26,
            b'0'..=b'9' => c - b'0' + 52,
            b'+' | b'-' => 62,
            b'/' | b'_' => 63,
            b'=' => break,
            _ => continue,
        };
        acc = (acc << 6) | u32::from(v);
        bits += 6;
        if bits >= 8 {
            bits -= 8;
            out.push((acc >> bits) as u8);
            acc &= (1 << bits) - 1;
        }
    }
    out
}

/// One request as the server received it.
#[derive(Debug, Clone)]
pub struct RecordedRequest {
    /// `POST`.
    pub method: String,
    /// The request target: path and query.
    pub target: String,
    /// The header lines in wire order, names as sent.
    pub headers: Vec<(String, String)>,
    /// The body bytes (chunked bodies de-chunked).
    pub body: Vec<u8>,
}

/// A running mock server; dropping it stops it and closes its connections.
pub struct MockServer {
    port: u16,
    requests: Arc<Mutex<Vec<RecordedRequest>>>,
    acceptor: JoinHandle<()>,
    connections: Arc<Mutex<Vec<JoinHandle<()>>>>,
}

impl MockServer {
    /// Listens on `127.0.0.1:0` and serves `response` to every request.
    pub async fn start(response: ResponseSpec) -> std::io::Result<MockServer> {
        let listener = TcpListener::bind("127.0.0.1:0").await?;
        let port = listener.local_addr()?.port();
        let requests = Arc::new(Mutex::new(Vec::new()));
        let connections: Arc<Mutex<Vec<JoinHandle<()>>>> = Arc::default();
        let response = Arc::new(response);
        let acceptor = {
            let (requests, connections) = (requests.clone(), connections.clone());
            tokio::spawn(async move {
                while let Ok((socket, _)) = listener.accept().await {
                    let _ = socket.set_nodelay(true);
                    let task = tokio::spawn(serve(socket, response.clone(), requests.clone()));
                    lock(&connections).push(task);
                }
            })
        };
        Ok(MockServer {
            port,
            requests,
            acceptor,
            connections,
        })
    }

    /// The port it listens on.
    pub fn port(&self) -> u16 {
        self.port
    }

    /// The requests received so far, in order.
    pub fn requests(&self) -> Vec<RecordedRequest> {
        lock(&self.requests).clone()
    }
}

impl Drop for MockServer {
    fn drop(&mut self) {
        self.acceptor.abort();
        for task in lock(&self.connections).drain(..) {
            task.abort();
        }
    }
}

fn lock<T>(m: &Mutex<T>) -> std::sync::MutexGuard<'_, T> {
    m.lock().unwrap_or_else(|p| p.into_inner())
}

/// One connection: requests one after another (keep-alive), each answered in full.
async fn serve(
    mut socket: TcpStream,
    response: Arc<ResponseSpec>,
    requests: Arc<Mutex<Vec<RecordedRequest>>>,
) {
    let mut buffer = Vec::new();
    loop {
        let request = match read_request(&mut socket, &mut buffer).await {
            Ok(Some(request)) => request,
            Ok(None) | Err(_) => return,
        };
        lock(&requests).push(request);
        match respond(&mut socket, &response).await {
            Ok(Continue::KeepAlive) => {}
            Ok(Continue::Close) | Err(_) => return,
        }
    }
}

enum Continue {
    KeepAlive,
    Close,
}

/// Reads one request; `None` when the client closed the connection between requests.
async fn read_request(
    socket: &mut TcpStream,
    buffer: &mut Vec<u8>,
) -> std::io::Result<Option<RecordedRequest>> {
    let head_end = loop {
        if let Some(i) = find(buffer, b"\r\n\r\n") {
            break i;
        }
        if buffer.len() > MAX_HEAD {
            return Err(invalid("request head too large"));
        }
        if fill(socket, buffer).await? == 0 {
            return if buffer.is_empty() {
                Ok(None)
            } else {
                Err(invalid("connection closed inside a request head"))
            };
        }
    };
    let head = String::from_utf8_lossy(&buffer[..head_end]).into_owned();
    buffer.drain(..head_end + 4);
    let mut lines = head.split("\r\n");
    let request_line = lines.next().unwrap_or_default();
    let mut parts = request_line.split(' ');
    let method = parts.next().unwrap_or_default().to_owned();
    let target = parts.next().unwrap_or_default().to_owned();
    let headers: Vec<(String, String)> = lines
        .filter_map(|line| line.split_once(':'))
        .map(|(name, value)| (name.trim().to_owned(), value.trim().to_owned()))
        .collect();
    let header = |name: &str| {
        headers
            .iter()
            .find(|(n, _)| n.eq_ignore_ascii_case(name))
            .map(|(_, v)| v.as_str())
    };
    let chunked =
        header("transfer-encoding").is_some_and(|te| te.to_ascii_lowercase().contains("chunked"));
    let body = if chunked {
        read_chunked_body(socket, buffer).await?
    } else {
        let length: usize = match header("content-length") {
            Some(v) => v.parse().map_err(|_| invalid("bad content-length"))?,
            None => 0,
        };
        if length > MAX_BODY {
            return Err(invalid("request body too large"));
        }
        while buffer.len() < length {
            if fill(socket, buffer).await? == 0 {
                return Err(invalid("connection closed inside a request body"));
            }
        }
        buffer.drain(..length).collect()
    };
    Ok(Some(RecordedRequest {
        method,
        target,
        headers,
        body,
    }))
}

async fn read_chunked_body(
    socket: &mut TcpStream,
    buffer: &mut Vec<u8>,
) -> std::io::Result<Vec<u8>> {
    let mut body = Vec::new();
    loop {
        let line = read_line(socket, buffer).await?;
        let size_text = line.split(';').next().unwrap_or_default().trim();
        let size =
            usize::from_str_radix(size_text, 16).map_err(|_| invalid("bad chunk size line"))?;
        if size == 0 {
            // Trailers, up to the empty line.
            while !read_line(socket, buffer).await?.is_empty() {}
            return Ok(body);
        }
        if body.len() + size > MAX_BODY {
            return Err(invalid("request body too large"));
        }
        while buffer.len() < size + 2 {
            if fill(socket, buffer).await? == 0 {
                return Err(invalid("connection closed inside a request chunk"));
            }
        }
        body.extend(buffer.drain(..size));
        buffer.drain(..2);
    }
}

async fn read_line(socket: &mut TcpStream, buffer: &mut Vec<u8>) -> std::io::Result<String> {
    loop {
        if let Some(i) = find(buffer, b"\r\n") {
            let line = String::from_utf8_lossy(&buffer[..i]).into_owned();
            buffer.drain(..i + 2);
            return Ok(line);
        }
        if buffer.len() > MAX_HEAD {
            return Err(invalid("line too long"));
        }
        if fill(socket, buffer).await? == 0 {
            return Err(invalid("connection closed inside a line"));
        }
    }
}

async fn fill(socket: &mut TcpStream, buffer: &mut Vec<u8>) -> std::io::Result<usize> {
    let mut chunk = [0u8; 16 * 1024];
    let n = socket.read(&mut chunk).await?;
    buffer.extend_from_slice(&chunk[..n]);
    Ok(n)
}

fn find(haystack: &[u8], needle: &[u8]) -> Option<usize> {
    haystack.windows(needle.len()).position(|w| w == needle)
}

fn invalid(message: &str) -> std::io::Error {
    std::io::Error::new(std::io::ErrorKind::InvalidData, message.to_owned())
}

/// Writes the response as `record.mjs`'s Node server does: status line, the fixture's
/// headers, Node's own `Connection`, `Keep-Alive` and `Transfer-Encoding` (no `Date`),
/// then each chunk after its pause as one chunk, flushed; then the terminating chunk
/// after one more pause, or a destroyed socket after chunk `k`.
async fn respond(socket: &mut TcpStream, response: &ResponseSpec) -> std::io::Result<Continue> {
    let has = |name: &str| {
        response
            .headers
            .iter()
            .any(|(n, _)| n.eq_ignore_ascii_case(name))
    };
    // Node frames the body itself unless the fixture fixes its length.
    let chunked = !has("content-length");
    let mut head = format!(
        "HTTP/1.1 {} {}\r\n",
        response.status,
        reason_phrase(response.status)
    );
    for (name, value) in &response.headers {
        head.push_str(&format!("{name}: {value}\r\n"));
    }
    if !has("connection") {
        head.push_str("Connection: keep-alive\r\n");
    }
    if !has("keep-alive") {
        head.push_str("Keep-Alive: timeout=5\r\n");
    }
    if chunked && !has("transfer-encoding") {
        head.push_str("Transfer-Encoding: chunked\r\n");
    }
    head.push_str("\r\n");
    socket.write_all(head.as_bytes()).await?;
    socket.flush().await?;
    let gap = Duration::from_millis(response.gap_ms);
    for (i, chunk) in response.chunks.iter().enumerate() {
        tokio::time::sleep(gap).await;
        // Node writes nothing for an empty chunk (a zero-size frame would end the body).
        if !chunk.is_empty() {
            let mut frame = Vec::with_capacity(chunk.len() + 16);
            if chunked {
                frame.extend_from_slice(format!("{:x}\r\n", chunk.len()).as_bytes());
                frame.extend_from_slice(chunk);
                frame.extend_from_slice(b"\r\n");
            } else {
                frame.extend_from_slice(chunk);
            }
            socket.write_all(&frame).await?;
            socket.flush().await?;
        }
        if response.disconnect_after == Some(i) {
            tokio::time::sleep(gap).await;
            return Ok(Continue::Close);
        }
    }
    tokio::time::sleep(gap).await;
    if chunked {
        socket.write_all(b"0\r\n\r\n").await?;
        socket.flush().await?;
    }
    Ok(Continue::KeepAlive)
}

/// Node's `http.STATUS_CODES` for the statuses a fixture may use.
fn reason_phrase(status: u16) -> &'static str {
    match status {
        200 => "OK",
        201 => "Created",
        204 => "No Content",
        400 => "Bad Request",
        401 => "Unauthorized",
        402 => "Payment Required",
        403 => "Forbidden",
        404 => "Not Found",
        405 => "Method Not Allowed",
        408 => "Request Timeout",
        409 => "Conflict",
        413 => "Payload Too Large",
        422 => "Unprocessable Entity",
        429 => "Too Many Requests",
        500 => "Internal Server Error",
        501 => "Not Implemented",
        502 => "Bad Gateway",
        503 => "Service Unavailable",
        504 => "Gateway Timeout",
        // Node's fallback for a status it has no name for.
        _ => "unknown",
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn base64_is_nodes() {
        assert_eq!(
            base64_decode("4pyTIMOgIGxhIG1vZGU="),
            "✓ à la mode".as_bytes()
        );
        assert_eq!(base64_decode("8J+Y"), [0xf0, 0x9f, 0x98]);
        assert_eq!(base64_decode("-_8"), [0xfb, 0xff]);
    }

    /// A raw client: writes `request`, reads until the server closes or ends the body.
    async fn exchange(port: u16, request: &[u8]) -> (Vec<u8>, Vec<std::time::Instant>) {
        let mut socket = TcpStream::connect(("127.0.0.1", port)).await.unwrap();
        socket.write_all(request).await.unwrap();
        let (mut all, mut times) = (Vec::new(), Vec::new());
        let mut chunk = [0u8; 4096];
        loop {
            let n = tokio::time::timeout(Duration::from_secs(5), socket.read(&mut chunk))
                .await
                .unwrap()
                .unwrap_or(0);
            if n == 0 {
                break;
            }
            all.extend_from_slice(&chunk[..n]);
            times.push(std::time::Instant::now());
            if all.ends_with(b"0\r\n\r\n") {
                break;
            }
        }
        (all, times)
    }

    #[tokio::test]
    async fn replays_chunks_as_separate_frames_and_records_the_request() {
        let spec = ResponseSpec::from_json(&json!({
            "status": 429,
            "headers": {"content-type": "application/json", "retry-after": "1"},
            "chunks": ["ab", {"base64": "4pyT"}, ""],
            "delayMs": 0,
            "disconnectAfterChunk": null,
        }))
        .unwrap();
        let server = MockServer::start(spec).await.unwrap();
        let (bytes, _) = exchange(
            server.port(),
            b"POST /v1/x?beta=true HTTP/1.1\r\nHost: h\r\nX-Api-Key: k\r\nContent-Length: 2\r\n\r\n{}",
        )
        .await;
        let text = String::from_utf8(bytes).unwrap();
        assert_eq!(
            text,
            "HTTP/1.1 429 Too Many Requests\r\ncontent-type: application/json\r\nretry-after: 1\r\n\
             Connection: keep-alive\r\nKeep-Alive: timeout=5\r\nTransfer-Encoding: chunked\r\n\r\n\
             2\r\nab\r\n3\r\n✓\r\n0\r\n\r\n"
        );
        let requests = server.requests();
        assert_eq!(requests.len(), 1);
        assert_eq!(requests[0].method, "POST");
        assert_eq!(requests[0].target, "/v1/x?beta=true");
        assert_eq!(requests[0].headers[1], ("X-Api-Key".into(), "k".into()));
        assert_eq!(requests[0].body, b"{}");
    }

    #[tokio::test]
    async fn disconnects_after_chunk_k_without_the_last_chunk() {
        let spec = ResponseSpec::from_json(&json!({
            "chunks": ["a", "b", "c"], "delayMs": 20, "disconnectAfterChunk": 1,
        }))
        .unwrap();
        let server = MockServer::start(spec).await.unwrap();
        let started = std::time::Instant::now();
        let (bytes, times) = exchange(
            server.port(),
            b"POST / HTTP/1.1\r\nTransfer-Encoding: chunked\r\n\r\n3\r\nabc\r\n0\r\n\r\n",
        )
        .await;
        let text = String::from_utf8(bytes).unwrap();
        assert!(text.ends_with("\r\n\r\n1\r\na\r\n1\r\nb\r\n"), "{text:?}");
        assert!(text.contains("content-type: text/event-stream\r\n"));
        // Paused before each chunk and before closing.
        assert!(started.elapsed() >= Duration::from_millis(60));
        assert!(times.len() >= 2);
        assert_eq!(server.requests()[0].body, b"abc");
    }
}
