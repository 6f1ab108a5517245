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
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};

#[path = "../../weather-mcp/tests/npm/mod.rs"]
mod npm;

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

/// Every entry of the expected-failures file has a comment right above it (or above
/// the run of entries it belongs to).
fn check_reasons(file: &Path) {
    let text = std::fs::read_to_string(file).expect("expected-failures.yaml");
    let mut reason = false;
    for line in text.lines() {
        let line = line.trim();
        if line.starts_with('#') {
            reason = true;
        } else if let Some(entry) = line.strip_prefix("- ") {
            assert!(
                reason,
                "{}: `{entry}` has no written reason above it",
                file.display()
            );
        } else if line.is_empty() || line.ends_with(':') {
            reason = false;
        }
    }
}

/// The suite's summary lines (`Total: …`, `✗ scenario: …`) of one run.
fn summary(output: &str) -> String {
    output
        .lines()
        .filter(|line| {
            line.starts_with("Total:")
                || line.starts_with('✗')
                || line.starts_with("Not scored")
                || line.starts_with("Running requirements")
        })
        .collect::<Vec<_>>()
        .join("\n")
}

#[test]
fn the_fixture_server_meets_both_revisions_but_the_listed_failures() {
    let Some(suite) = npm::installed("suite", "the MCP conformance suite") else {
        return;
    };
    let here = PathBuf::from(env!("CARGO_MANIFEST_DIR"));
    let expected = here.join("expected-failures.yaml");
    check_reasons(&expected);
    let node = suite.join("node_modules/.bin/node");
    let cli = suite.join("node_modules/@modelcontextprotocol/conformance/dist/index.js");
    assert!(
        node.exists(),
        "npm ci did not install Node 22 at {}",
        node.display()
    );
    let (_server, url) = start_server();
    let results = std::env::temp_dir().join(format!("mcp-conformance-{}", std::process::id()));
    let mut failures = Vec::new();
    for revision in ["2025-11-25", "2026-07-28"] {
        let output = Command::new(&node)
            .arg(&cli)
            .args(["server", "--url", &url, "--requirements", revision])
            .arg("--expected-failures")
            .arg(&expected)
            .arg("-o")
            .arg(results.join(revision))
            .output()
            .expect("node runs the suite");
        let stdout = String::from_utf8_lossy(&output.stdout);
        let stderr = String::from_utf8_lossy(&output.stderr);
        eprintln!("--- {revision}\n{}", summary(&stdout));
        if !output.status.success() {
            failures.push(format!(
                "--requirements {revision} exited {}:\n{}\n{}",
                output.status,
                summary(&stdout),
                stderr
                    .lines()
                    .filter(|l| !l.trim().is_empty())
                    .collect::<Vec<_>>()
                    .join("\n")
            ));
        }
    }
    let _ = std::fs::remove_dir_all(&results);
    assert!(failures.is_empty(), "{}", failures.join("\n\n"));
}
