//! The official MCP conformance suite (`@modelcontextprotocol/conformance`, pinned in
//! `examples/mcp-conformance-server/suite/package-lock.json` with the Node 22 it needs:
//! the server fixture's suite, the same version) in its client mode against
//! `mcp-conformance-client`, at both frozen requirement sets: `--requirements 2025-11-25`
//! and `--requirements 2026-07-28`. Each set runs every client scenario it names in one
//! Node process (the server scenarios of the set are the server fixture's test's).
//!
//! The suite exits 1 when a scenario fails that `expected-failures.yaml` does not list,
//! or passes while listed; this test fails then, and when an entry of that file has no
//! written reason above it. It prints the suite's tallies of each revision. Without Node
//! the test is skipped with a loud message on a developer machine and fails under CI.

use std::path::{Path, PathBuf};
use std::process::Command;

#[path = "../../weather-mcp/tests/npm/mod.rs"]
mod npm;

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
            let line = line.trim_start();
            line.starts_with("Total:")
                || line.starts_with('✗')
                || line.starts_with("Not scored")
                || line.starts_with("Running requirements")
                || line.contains("passed")
                || line.contains("failed")
        })
        .collect::<Vec<_>>()
        .join("\n")
}

#[test]
fn the_client_meets_both_revisions_but_the_listed_failures() {
    let Some(suite) = npm::installed(
        "../mcp-conformance-server/suite",
        "the MCP conformance suite (client mode)",
    ) else {
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
    let client = env!("CARGO_BIN_EXE_mcp-conformance-client");
    let results =
        std::env::temp_dir().join(format!("mcp-conformance-client-{}", std::process::id()));
    let mut failures = Vec::new();
    for revision in ["2025-11-25", "2026-07-28"] {
        let output = Command::new(&node)
            .arg(&cli)
            .args(["client", "--command", client, "--requirements", revision])
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
