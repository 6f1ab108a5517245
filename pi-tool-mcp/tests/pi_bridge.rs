//! The Pi bridge (`bridges/pi/`) end to end: the real Pi 0.85.0 packages from npm load
//! the bridge extension, which starts this crate's `weather-mcp` binary; Pi's faux
//! provider calls `get_weather`. The scenario is `bridges/pi/test/pi-e2e.test.mjs`
//! (with the bridge's conversion tests, `convert.test.mjs`); this test runs them under
//! the Node 22 that `bridges/pi`'s lock file installs (the `node` npm package:
//! pi-coding-agent needs Node >= 22.19).
//!
//! `.ci/run` installs it (`npm ci --prefix bridges/pi`). Without it the test is skipped
//! with a loud message on a developer machine, and fails under CI (`CI` set).

use std::path::{Path, PathBuf};
use std::process::Command;

/// The bridge folder and its Node 22, or `None` (after a loud message) when they are
/// not installed on a developer machine; under CI a missing install fails.
fn installed_bridge() -> Option<(PathBuf, PathBuf)> {
    let bridge = Path::new(env!("CARGO_MANIFEST_DIR")).join("../bridges/pi");
    let node = bridge.join("node_modules/.bin/node");
    let pi = bridge.join("node_modules/@earendil-works/pi-coding-agent/package.json");
    if node.exists() && pi.exists() {
        return Some((bridge, node));
    }
    let missing = format!(
        "Pi 0.85.0 and Node 22 are not installed for the bridge (run `npm ci --prefix {}`)",
        bridge.display()
    );
    if std::env::var_os("CI").is_some() {
        panic!("{missing}; .ci/run must install them");
    }
    eprintln!("\n!!! SKIPPED a Pi bridge test: {missing} !!!\n");
    None
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
