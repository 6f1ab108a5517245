//! The MCP server's workspace (`pi-tool-mcp/`), checked from the root workspace so that
//! the README's one test command, `cargo test --workspace`, covers it.
//!
//! `pi-tool-mcp` is a separate cargo workspace (rmcp pulls syn 2; see its Cargo.toml),
//! so root-level `cargo fmt`, `cargo clippy --workspace` and `cargo test --workspace` do
//! not reach it. These tests run them on its manifest, as subprocesses with its own
//! target directory, and fail when they fail. The last test runs the documented command
//! `cargo run -q --release --bin weather-mcp` from the repository root and talks MCP to it.

use std::io::{BufRead, BufReader, Write};
use std::path::{Path, PathBuf};
use std::process::{Command, Output, Stdio};
use std::time::{Duration, Instant};

fn repo_root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../..")
}

fn cargo() -> Command {
    let mut command = Command::new(env!("CARGO"));
    command.current_dir(repo_root());
    command
}

fn check(what: &str, output: Output) {
    assert!(
        output.status.success(),
        "{what} failed ({}):\n--- stdout\n{}\n--- stderr\n{}",
        output.status,
        String::from_utf8_lossy(&output.stdout),
        String::from_utf8_lossy(&output.stderr)
    );
}

#[test]
fn pi_tool_mcp_passes_its_tests() {
    let output = cargo()
        .args(["test", "--manifest-path", "pi-tool-mcp/Cargo.toml"])
        .output()
        .expect("cargo runs");
    check("cargo test --manifest-path pi-tool-mcp/Cargo.toml", output);
}

#[test]
fn pi_tool_mcp_is_formatted_and_lint_free() {
    let output = cargo()
        .args([
            "fmt",
            "--manifest-path",
            "pi-tool-mcp/Cargo.toml",
            "--",
            "--check",
        ])
        .output()
        .expect("cargo fmt runs");
    check("cargo fmt --check on pi-tool-mcp", output);
    let output = cargo()
        .args([
            "clippy",
            "--manifest-path",
            "pi-tool-mcp/Cargo.toml",
            "--all-targets",
            "--all-features",
            "--",
            "-D",
            "warnings",
        ])
        .output()
        .expect("cargo clippy runs");
    check("cargo clippy -D warnings on pi-tool-mcp", output);
}

/// The documented way to start the weather MCP server, from the repository root.
#[test]
fn weather_mcp_runs_from_the_repository_root() {
    // Build first (a release build of both workspaces can take minutes), so that the
    // protocol exchange below is timed on its own.
    let output = cargo()
        .args(["build", "-q", "--release", "--bin", "weather-mcp"])
        .output()
        .expect("cargo build runs");
    check("cargo build --release --bin weather-mcp", output);
    let output = cargo()
        .args([
            "build",
            "-q",
            "--release",
            "--manifest-path",
            "pi-tool-mcp/Cargo.toml",
        ])
        .args(["--bin", "weather-mcp"])
        .output()
        .expect("cargo build runs");
    check("cargo build --release of pi-tool-mcp's weather-mcp", output);

    let mut server = cargo()
        .args(["run", "-q", "--release", "--bin", "weather-mcp"])
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::inherit())
        .spawn()
        .expect("cargo run starts");
    let mut stdin = server.stdin.take().expect("piped stdin");
    let mut stdout = BufReader::new(server.stdout.take().expect("piped stdout"));
    let started = Instant::now();
    for line in [
        r#"{"jsonrpc":"2.0","id":0,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"root-test","version":"0"}}}"#,
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
