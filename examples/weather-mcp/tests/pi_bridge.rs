//! The Pi bridge (`bridges/pi/`) end to end: the real Pi 0.85.0 packages from npm load
//! the bridge extension, which starts this crate's `weather-mcp` binary; Pi's faux
//! provider calls `get_weather`. The scenario is `bridges/pi/test/pi-e2e.test.mjs`
//! (with the bridge's conversion tests, `convert.test.mjs`); this test runs them under
//! the Node 22 that `bridges/pi`'s lock file installs (the `node` npm package:
//! pi-coding-agent needs Node >= 22.19), whatever Node runs npm.
//!
//! The tests install the bridge's packages from its lock file themselves (`npm ci`, see
//! `npm/mod.rs`). Without Node they are skipped with a loud message on a developer
//! machine, and fail under CI (`CI` set).

mod npm;

use std::path::PathBuf;
use std::process::Command;

/// The bridge folder and its Node 22, installed; `None` (after a loud message) when Node
/// is absent on a developer machine.
fn installed_bridge() -> Option<(PathBuf, PathBuf)> {
    let bridge = npm::installed("../../bridges/pi", "the Pi bridge tests")?;
    let node = bridge.join("node_modules/.bin/node");
    assert!(
        node.exists(),
        "npm ci did not install the bridge's Node 22 at {}",
        node.display()
    );
    Some((bridge, node))
}

/// `tsc --noEmit` on the extension, against Pi 0.85.0's and the MCP SDK's own types.
#[test]
fn the_bridge_type_checks_against_pi_and_the_mcp_sdk() {
    let Some((bridge, node)) = installed_bridge() else {
        return;
    };
    let output = Command::new(&node)
        .arg("node_modules/typescript/bin/tsc")
        .args(["-p", "."])
        .current_dir(&bridge)
        .output()
        .expect("tsc runs");
    assert!(
        output.status.success(),
        "tsc found type errors in the bridge:\n{}{}",
        String::from_utf8_lossy(&output.stdout),
        String::from_utf8_lossy(&output.stderr)
    );
}

#[test]
fn pi_runs_the_rust_get_weather_through_the_bridge() {
    let Some((bridge, node)) = installed_bridge() else {
        return;
    };

    let output = Command::new(&node)
        .arg("--test")
        .arg("--test-reporter=spec")
        .arg("test/convert.test.mjs")
        .arg("test/pi-e2e.test.mjs")
        .current_dir(&bridge)
        .env("WEATHER_MCP_BIN", env!("CARGO_BIN_EXE_weather-mcp"))
        .output()
        .expect("node --test runs");
    let stdout = String::from_utf8_lossy(&output.stdout);
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(
        output.status.success(),
        "the Pi bridge test failed ({}):\n{stdout}\n{stderr}",
        output.status
    );
    // `node --test` exits 0 on zero tests too: make sure the cases ran.
    assert!(
        stdout.contains("pass 10"),
        "expected 10 passing cases:\n{stdout}"
    );
    assert!(stdout.contains("fail 0"), "{stdout}");
}
