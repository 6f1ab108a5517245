//! The official MCP conformance suite (`@modelcontextprotocol/conformance`, pinned in
//! `suite/package-lock.json` with the Node 22 it needs) against the fixture server, at
//! both frozen requirement sets: `--requirements 2025-11-25` and
//! `--requirements 2026-07-28` (which also runs the tasks extension's scenarios, not
//! scored).
//!
//! The suite exits 1 when a scenario fails that `expected-failures.yaml` does not list,
//! or passes while listed; this test fails then, and when an entry of that file has no
//! written reason above it. The packages are installed from the lock file once per run
//! (`npm ci`, `npm/mod.rs`) and the server is started once. Without Node the test is
//! skipped with a loud message on a developer machine and fails under CI.

use std::io::{BufRead, BufReader};
use std::path::PathBuf;
use std::process::{Child, Command, Stdio};

#[path = "support/suite.rs"]
mod suite;

/// The fixture server, killed when the test ends however it ends.
struct Server(Child);

impl Drop for Server {
    fn drop(&mut self) {
        let _ = self.0.kill();
        let _ = self.0.wait();
    }
}

/// Starts `mcp-conformance-server --http 127.0.0.1:0` and reads the URL it prints.
fn start_server() -> (Server, String) {
    let child = Command::new(env!("CARGO_BIN_EXE_mcp-conformance-server"))
        .args(["--http", "127.0.0.1:0"])
        .stdout(Stdio::piped())
        .stderr(Stdio::inherit())
        .spawn()
        .expect("the fixture server starts");
    let mut server = Server(child);
    let stdout = server.0.stdout.take().expect("its standard output");
    let mut url = String::new();
    BufReader::new(stdout)
        .read_line(&mut url)
        .expect("the server prints its URL");
    let url = url.trim().to_owned();
    assert!(url.starts_with("http://127.0.0.1:"), "{url:?}");
    (server, url)
}

/// The suite's summary lines (`Total: …`, `✗ scenario: …`).
fn summary(line: &str) -> bool {
    line.starts_with("Total:")
        || line.starts_with('✗')
        || line.starts_with("Not scored")
        || line.starts_with("Running requirements")
}

#[test]
fn the_fixture_server_meets_both_revisions_but_the_listed_failures() {
    let Some(suite) = suite::installed("suite", "the MCP conformance suite") else {
        return;
    };
    let (_server, url) = start_server();
    let expected = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("expected-failures.yaml");
    suite.run_both_revisions(&["server", "--url", &url], &expected, summary);
}
