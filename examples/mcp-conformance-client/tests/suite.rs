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

use std::path::PathBuf;

#[path = "../../mcp-conformance-server/tests/support/suite.rs"]
mod suite;

/// The suite's summary lines (`Total: …`, `✗ scenario: …`, and the client mode's
/// per-scenario `passed`/`failed` lines).
fn summary(line: &str) -> bool {
    let line = line.trim_start();
    line.starts_with("Total:")
        || line.starts_with('✗')
        || line.starts_with("Not scored")
        || line.starts_with("Running requirements")
        || line.contains("passed")
        || line.contains("failed")
}

#[test]
fn the_client_meets_both_revisions_but_the_listed_failures() {
    let Some(suite) = suite::installed(
        "../mcp-conformance-server/suite",
        "the MCP conformance suite (client mode)",
    ) else {
        return;
    };
    let client = env!("CARGO_BIN_EXE_mcp-conformance-client");
    let expected = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("expected-failures.yaml");
    suite.run_both_revisions(&["client", "--command", client], &expected, summary);
}
