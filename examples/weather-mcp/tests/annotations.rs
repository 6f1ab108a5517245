//! `get_weather` from Pi's custom-tool page changes nothing, and says so: the real `weather-mcp` binary
//! lists it with `annotations.readOnlyHint: true` (from `#[pi_tool(read_only, ...)]`).

use std::io::{BufRead, BufReader, Write};
use std::process::{Command, Stdio};

use pi_tool::Value;

#[test]
fn weather_mcp_lists_get_weather_as_read_only() {
    let mut server = Command::new(env!("CARGO_BIN_EXE_weather-mcp"))
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::inherit())
        .spawn()
        .expect("weather-mcp starts");
    let mut stdin = server.stdin.take().expect("piped stdin");
    let mut stdout = BufReader::new(server.stdout.take().expect("piped stdout"));
    for line in [
        r#"{"jsonrpc":"2.0","id":0,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"annotations-test","version":"0"}}}"#,
        r#"{"jsonrpc":"2.0","method":"notifications/initialized"}"#,
        r#"{"jsonrpc":"2.0","id":1,"method":"tools/list"}"#,
    ] {
        writeln!(stdin, "{line}").expect("the server reads stdin");
    }
    let mut listing = None;
    while listing.is_none() {
        let mut line = String::new();
        let read = stdout
            .read_line(&mut line)
            .expect("the server writes stdout");
        assert!(
            read > 0,
            "the server closed stdout before tools/list answered"
        );
        let message: Value = line.parse().expect("one JSON-RPC message per line");
        if message["id"] == 1 {
            listing = Some(message);
        }
    }
    drop(stdin);
    assert!(server.wait().expect("the server exits").success());
    let listing = listing.unwrap_or_default();
    let tools = listing["result"]["tools"].as_array().expect("a tool list");
    let weather = tools
        .iter()
        .find(|t| t["name"] == "get_weather")
        .expect("get_weather is listed");
    let annotations = &weather["annotations"];
    assert_eq!(annotations["readOnlyHint"], Value::Bool(true), "{weather}");
    // Nothing else is declared, so nothing else is claimed.
    assert!(annotations.get("destructiveHint").is_none(), "{weather}");
    assert!(annotations.get("idempotentHint").is_none(), "{weather}");
}
