//! `weather-mcp --http` as an operator runs it (issue 33): it survives running out of
//! file descriptors and serves afterwards, and SIGTERM during a call lets the call
//! finish and exits 0.
#![cfg(unix)]

use std::io::{BufRead, BufReader};
use std::net::SocketAddr;
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use serde_json::{Value, json};
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::TcpStream;

/// The server, killed when the test ends however it ends.
struct Server(Child);

impl Drop for Server {
    fn drop(&mut self) {
        let _ = self.0.kill();
        let _ = self.0.wait();
    }
}

/// `weather-mcp --http 127.0.0.1:0` under `sh -c "<prelude> exec ..."`, and its address.
fn start(prelude: &str, envs: &[(&str, &str)]) -> (Server, SocketAddr) {
    let mut command = Command::new("sh");
    command
        .arg("-c")
        .arg(format!("{prelude} exec \"$0\" --http 127.0.0.1:0"))
        .arg(env!("CARGO_BIN_EXE_weather-mcp"))
        .stdout(Stdio::null())
        .stderr(Stdio::piped());
    for (key, value) in envs {
        command.env(key, value);
    }
    let mut server = Server(command.spawn().expect("weather-mcp starts"));
    let mut stderr = BufReader::new(server.0.stderr.take().expect("stderr"));
    let mut line = String::new();
    stderr
        .read_line(&mut line)
        .expect("the server prints its address");
    // The rest of the log is drained so the server never blocks on a full pipe.
    std::thread::spawn(move || {
        let mut sink = String::new();
        while stderr.read_line(&mut sink).is_ok_and(|n| n > 0) {
            sink.clear();
        }
    });
    let address = line
        .trim()
        .rsplit("http://")
        .next()
        .and_then(|rest| rest.strip_suffix("/mcp"))
        .and_then(|address| address.parse().ok())
        .unwrap_or_else(|| panic!("an address in {line:?}"));
    (server, address)
}

async fn post(address: SocketAddr, session: Option<&str>, body: &Value) -> String {
    let body = body.to_string();
    let mut head = format!(
        "POST /mcp HTTP/1.1\r\nHost: 127.0.0.1:{}\r\nAccept: application/json, text/event-stream\r\n\
         Content-Type: application/json\r\nContent-Length: {}\r\nConnection: close\r\n",
        address.port(),
        body.len()
    );
    if let Some(session) = session {
        head.push_str(&format!(
            "Mcp-Session-Id: {session}\r\nMCP-Protocol-Version: 2025-11-25\r\n"
        ));
    }
    let mut stream = TcpStream::connect(address).await.expect("connects");
    stream
        .write_all(format!("{head}\r\n{body}").as_bytes())
        .await
        .unwrap();
    let mut answer = Vec::new();
    let _ = tokio::time::timeout(Duration::from_secs(10), stream.read_to_end(&mut answer)).await;
    String::from_utf8_lossy(&answer).into_owned()
}

async fn open_session(address: SocketAddr) -> String {
    let answer = post(
        address,
        None,
        &json!({"jsonrpc": "2.0", "id": 0, "method": "initialize", "params": {
            "protocolVersion": "2025-11-25", "capabilities": {},
            "clientInfo": {"name": "t", "version": "0"}}}),
    )
    .await;
    let session = answer
        .lines()
        .find_map(|line| {
            let (name, value) = line.split_once(':')?;
            name.eq_ignore_ascii_case("mcp-session-id")
                .then(|| value.trim().to_owned())
        })
        .unwrap_or_else(|| panic!("a session: {answer:?}"));
    post(
        address,
        Some(&session),
        &json!({"jsonrpc": "2.0", "method": "notifications/initialized"}),
    )
    .await;
    session
}

fn weather_call(id: i64) -> Value {
    json!({"jsonrpc": "2.0", "id": id, "method": "tools/call",
           "params": {"name": "get_weather", "arguments": {"city": "Paris"}}})
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn running_out_of_file_descriptors_does_not_end_the_server() {
    let (mut server, address) = start("ulimit -n 48 &&", &[]);
    // More connections than the server has descriptors for: the kernel queues them,
    // and each accept() past the limit fails with EMFILE.
    let mut held = Vec::new();
    for _ in 0..80 {
        if let Ok(stream) = TcpStream::connect(address).await {
            held.push(stream);
        }
    }
    tokio::time::sleep(Duration::from_millis(1500)).await;
    assert!(
        server.0.try_wait().unwrap().is_none(),
        "the server exited when it ran out of descriptors"
    );
    drop(held);
    tokio::time::sleep(Duration::from_millis(1500)).await;
    let session = open_session(address).await;
    let answer = post(address, Some(&session), &weather_call(1)).await;
    assert!(answer.contains("Paris"), "{answer:?}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn sigterm_during_a_call_lets_it_finish_and_exits_0() {
    let (mut server, address) = start("", &[("WEATHER_MCP_LOOKUP_DELAY_MS", "1000")]);
    let session = open_session(address).await;
    let calling =
        tokio::spawn(async move { post(address, Some(&session), &weather_call(1)).await });
    tokio::time::sleep(Duration::from_millis(300)).await;
    let pid = i32::try_from(server.0.id()).unwrap();
    // SAFETY: kill(2) on our own child's pid with SIGTERM; no memory is involved.
    assert_eq!(unsafe { libc::kill(pid, libc::SIGTERM) }, 0);
    let answer = calling.await.unwrap();
    assert!(answer.contains("Paris"), "the call finished: {answer:?}");
    let started = Instant::now();
    let status = loop {
        if let Some(status) = server.0.try_wait().unwrap() {
            break status;
        }
        assert!(started.elapsed() < Duration::from_secs(10), "still running");
        tokio::time::sleep(Duration::from_millis(50)).await;
    };
    assert!(status.success(), "{status:?}");
}
