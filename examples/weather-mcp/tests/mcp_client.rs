//! The `weather-mcp` binary under a real MCP client we did not write: the official
//! TypeScript SDK (`@modelcontextprotocol/sdk`, pinned in `tests/client/package.json`).
//! The client script, `tests/client/weather.test.mjs`, covers list, call, progress, bad
//! arguments, an unknown tool and cancellation, over stdio and over streamable HTTP
//! (`weather-mcp --http 127.0.0.1:0`); this test runs it under `node --test`.
//!
//! The test installs the client from its lock file itself (`npm ci`, see `npm/mod.rs`).
//! Without Node it is skipped with a loud message on a developer machine, and fails
//! under CI (`CI` set), so that a missing Node cannot pass as green.

mod npm;

use std::process::Command;

#[test]
fn the_official_typescript_client_drives_weather_mcp() {
    let Some(client_dir) = npm::installed("tests/client", "the MCP client test") else {
        return;
    };

    let output = Command::new("node")
        .arg("--test")
        .arg("--test-reporter=spec")
        .arg(client_dir.join("weather.test.mjs"))
        .current_dir(&client_dir)
        .env("WEATHER_MCP_BIN", env!("CARGO_BIN_EXE_weather-mcp"))
        .output()
        .expect("node --test runs");
    let stdout = String::from_utf8_lossy(&output.stdout);
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(
        output.status.success(),
        "the MCP client test failed ({}):\n{stdout}\n{stderr}",
        output.status
    );
    // `node --test` exits 0 on zero tests too: make sure the cases ran.
    assert!(
        stdout.contains("pass 20"),
        "expected 20 passing cases:\n{stdout}"
    );
    assert!(stdout.contains("fail 0"), "{stdout}");
}
