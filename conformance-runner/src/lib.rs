//! The conformance runner: runs Pi 0.85.0's recorded scenarios (`conformance/`) on
//! pi-tool's `Agent` and loop with the faux model, and compares the normalised traces
//! with Pi's byte for byte (FORMAT.md).
//!
//! Scenarios are data: tools with step lists, hooks, triggers and a scripted model. A
//! new scenario file dropped into the folder runs without code changes. Scenarios whose
//! trace differs from Pi's because pi-tool deliberately does better are listed in
//! [`DOCUMENTED_DIFFERENCES`] and compared with pi-tool's own expected trace
//! (`conformance/expected-pi-tool/`); scenarios with a tag in [`SKIPPED_TAGS`] are
//! reported as skipped, never as passed. Session scenarios (`driver: "session"`,
//! `conformance/session-scenarios/`) run on `AgentSession` ([`session`]).
//!
//! [`providers`] is the provider harness: pi-ai 0.85.0's recorded SSE fixtures
//! (`conformance/providers/`) through `pi_tool::providers::Providers`, compared with
//! pi-ai's recordings byte for byte.

#![warn(missing_docs)]

pub mod canon;
pub mod compare;
pub mod data;
pub mod pi_tools;
pub mod providers;
pub mod record;
pub mod scenario;
pub mod session;
pub mod tools;

use std::path::{Path, PathBuf};

pub use scenario::{Outcome, SKIPPED_TAGS, run_scenario, skip_reason};

/// Agent-layer scenarios whose trace deliberately differs from Pi's, with the reason.
/// For these (and [`DOCUMENTED_SESSION_DIFFERENCES`]) the runner compares with
/// `expected-pi-tool/<id>.json` next to the expected folder.
pub const DOCUMENTED_DIFFERENCES: &[(&str, &str)] = &[
    (
        "10b-abort-sequential",
        "no orphaned tool calls: the calls after the aborted one get `Operation aborted` results instead of none",
    ),
    (
        "10c-abort-in-beforeToolCall",
        "no orphaned tool calls: the calls not yet prepared when the abort happened get `Operation aborted` results instead of none",
    ),
    (
        "10e-abort-after-assistant-message-parallel",
        "no orphaned tool calls: the calls not yet prepared when the abort happened get `Operation aborted` results instead of none",
    ),
    (
        "10i-abort-at-tool-start-sequential",
        "no orphaned tool calls: the calls after the aborted one get `Operation aborted` results instead of none",
    ),
];

/// Session scenarios whose trace deliberately differs from Pi's. Unlike the agent-layer
/// differences these do not only add lines: S07a's session refuses to build (output
/// `{"id", "error"}`) and S08a's active list loses its repeated name.
pub const DOCUMENTED_SESSION_DIFFERENCES: &[(&str, &str)] = &[
    (
        "S07a-duplicate-names",
        "duplicate tool names are an error: the session refuses to build and names the tool and both owners",
    ),
    (
        "S08a-set-active-tools-unknown-and-duplicates",
        "set_active_tools removes duplicate names (and reports them) instead of sending a tool twice",
    ),
];

/// The documented reason a scenario differs from Pi, if it does.
pub fn documented_difference(id: &str) -> Option<&'static str> {
    DOCUMENTED_DIFFERENCES
        .iter()
        .chain(DOCUMENTED_SESSION_DIFFERENCES)
        .find(|(i, _)| *i == id)
        .map(|(_, reason)| *reason)
}

/// Where pi-tool's own expected trace of a documented difference lives: an
/// `expected-pi-tool/` folder beside the expected folder, else the repository's own
/// (so that checking against a pristine copy of Pi's suite still knows our traces).
pub fn own_expected_path(expected_dir: &Path, id: &str) -> PathBuf {
    let file = format!("{id}.json");
    let beside = expected_dir
        .parent()
        .unwrap_or(Path::new("."))
        .join("expected-pi-tool");
    if beside.is_dir() {
        return beside.join(file);
    }
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../conformance/expected-pi-tool")
        .join(file)
}

/// The verdict for one scenario.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Verdict {
    /// Byte-identical to Pi's trace.
    Pass,
    /// Differs from Pi's trace for a documented reason and matches pi-tool's own trace.
    Documented(&'static str),
    /// Not run.
    Skipped(String),
    /// Differs (the report says where).
    Fail(String),
}

/// Compares an output with the expected folder.
pub fn judge(id: &str, output: &str, expected_dir: &Path) -> Verdict {
    if let Some(reason) = documented_difference(id) {
        let path = own_expected_path(expected_dir, id);
        return match std::fs::read_to_string(&path) {
            Ok(ours) => match compare::diff(&ours, output) {
                None => Verdict::Documented(reason),
                Some(report) => {
                    Verdict::Fail(format!("differs from {}:\n{report}", path.display()))
                }
            },
            Err(e) => Verdict::Fail(format!("cannot read {}: {e}", path.display())),
        };
    }
    let path = expected_dir.join(format!("{id}.json"));
    match std::fs::read_to_string(&path) {
        Ok(expected) => match compare::diff(&expected, output) {
            None => Verdict::Pass,
            Some(report) => Verdict::Fail(format!("differs from {}:\n{report}", path.display())),
        },
        Err(e) => Verdict::Fail(format!("cannot read {}: {e}", path.display())),
    }
}

/// Loads, runs and judges one scenario file: its id (the file name when it cannot be
/// read) and the verdict.
pub async fn check_file(file: &Path, expected_dir: &Path) -> (String, Verdict) {
    let scenario = match load(file) {
        Ok(s) => s,
        Err(e) => return (file.display().to_string(), Verdict::Fail(e)),
    };
    let id = scenario
        .get("id")
        .and_then(|v| v.as_str())
        .unwrap_or_default()
        .to_owned();
    let verdict = match run_scenario(&scenario).await {
        Outcome::Skipped(reason) => Verdict::Skipped(reason),
        Outcome::Output(output) => judge(&id, &output, expected_dir),
    };
    (id, verdict)
}

/// Reads a scenario file.
pub fn load(path: &Path) -> Result<serde_json::Value, String> {
    let text = std::fs::read_to_string(path).map_err(|e| format!("{}: {e}", path.display()))?;
    serde_json::from_str(&text).map_err(|e| format!("{}: {e}", path.display()))
}

/// The scenario files of a folder, sorted.
pub fn scenario_files(dir: &Path) -> Vec<PathBuf> {
    let mut files: Vec<PathBuf> = std::fs::read_dir(dir)
        .into_iter()
        .flatten()
        .flatten()
        .map(|e| e.path())
        .filter(|p| p.extension().is_some_and(|e| e == "json"))
        .collect();
    files.sort();
    files
}
