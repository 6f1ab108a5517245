//! The `weather-mcp` binary over stdio with nothing but this test: newline-delimited
//! JSON-RPC written by hand, so the server is checked even where Node is absent (the
//! official-client test, `mcp_client.rs`, needs it). This is the process an MCP client
//! starts with `cargo run -q --release -p weather-mcp` or the built binary.

use std::io::{BufRead, BufReader, Write};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

#[test]
fn weather_mcp_answers_initialize_and_a_call_on_stdio() {
    let mut server = Command::new(env!("CARGO_BIN_EXE_weather-mcp"))
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::inherit())
        .spawn()
        .expect("weather-mcp starts");
    let mut stdin = server.stdin.take().expect("piped stdin");
    let mut stdout = BufReader::new(server.stdout.take().expect("piped stdout"));
    let started = Instant::now();
    for line in [
        r#"{"jsonrpc":"2.0","id":0,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"stdio-test","version":"0"}}}"#,
        r#"{"jsonrpc":"2.0","method":"notifications/initialized"}"#,
        r#"{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"get_weather","arguments":{"city":"Tokyo"}}}"#,
    ] {
        writeln!(stdin, "{line}").expect("the server reads stdin");
    }
    let mut lines = Vec::new();
    while lines.len() < 2 {
        let mut line = String::new();
        let read = stdout
            .read_line(&mut line)
            .expect("the server writes stdout");
        assert!(read > 0, "the server closed stdout early; got {lines:?}");
        lines.push(line);
    }
    drop(stdin);
    let status = server.wait().expect("the server exits when stdin closes");
    assert!(status.success(), "{status}");
    assert!(
        started.elapsed() < Duration::from_secs(30),
        "{:?}",
        started.elapsed()
    );
    assert!(
        lines[0].contains(r#""serverInfo":{"name":"weather-mcp""#),
        "{}",
        lines[0]
    );
    assert!(
        lines[1].contains(
            r#""content":[{"type":"text","text":"Tokyo: 24 degrees celsius"}],"isError":false"#
        ),
        "{}",
        lines[1]
    );
}
