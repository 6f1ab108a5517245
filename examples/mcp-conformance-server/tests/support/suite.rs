//! The official MCP conformance suite (`@modelcontextprotocol/conformance`, pinned in
//! `examples/mcp-conformance-server/suite/package-lock.json` with the Node 22 it needs),
//! as the fixture server's test (`server --url`) and the client's test
//! (`client --command`) both run it: installed from the lock file once per run, one Node
//! process per frozen requirement set, and a failure when the suite exits 1 (a scenario
//! fails that `expected-failures.yaml` does not list, or passes while listed) or when an
//! entry of that file has no written reason above it.

use std::path::{Path, PathBuf};
use std::process::Command;

#[path = "../../../weather-mcp/tests/npm/mod.rs"]
mod npm;

/// The requirement sets a server or client is scored against.
const REVISIONS: [&str; 2] = ["2025-11-25", "2026-07-28"];

/// The installed suite: Node 22 and the suite's command line.
pub struct Suite {
    node: PathBuf,
    cli: PathBuf,
}

/// Installs the suite of `dir` (relative to the calling package) from its lock file;
/// `None`, after a loud message, without Node on a developer machine (under CI it
/// panics instead).
pub fn installed(dir: &str, what: &str) -> Option<Suite> {
    let suite = npm::installed(dir, what)?;
    let node = suite.join("node_modules/.bin/node");
    let cli = suite.join("node_modules/@modelcontextprotocol/conformance/dist/index.js");
    assert!(
        node.exists(),
        "npm ci did not install Node 22 at {}",
        node.display()
    );
    Some(Suite { node, cli })
}

impl Suite {
    /// Runs `args` (the suite's mode and what it scores) at each requirement set against
    /// `expected`, printing the lines of its output that `summary` keeps, and fails with
    /// them and the suite's stderr when it exits with a failure.
    pub fn run_both_revisions(&self, args: &[&str], expected: &Path, summary: fn(&str) -> bool) {
        check_reasons(expected);
        let summary = |output: &str| {
            output
                .lines()
                .filter(|line| summary(line))
                .collect::<Vec<_>>()
                .join("\n")
        };
        let results = std::env::temp_dir().join(format!(
            "mcp-conformance-{}-{}",
            args.first().copied().unwrap_or("suite"),
            std::process::id()
        ));
        let mut failures = Vec::new();
        for revision in REVISIONS {
            let output = Command::new(&self.node)
                .arg(&self.cli)
                .args(args)
                .args(["--requirements", revision])
                .arg("--expected-failures")
                .arg(expected)
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
