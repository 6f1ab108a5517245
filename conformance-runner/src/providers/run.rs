//! One fixture through `pi_tool::providers::Providers` (`conformance/providers/FORMAT.md`
//! §4), and its verdict against pi-ai's recording.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::time::Duration;

use futures::StreamExt;
use pi_tool::model::StreamFn;
use pi_tool::providers::Providers;
use serde_json::{Value, json};

use super::fixture::{Fixture, build_context, build_model, build_options};
use super::normalise;
use super::server::{MockServer, ResponseSpec};
use crate::canon::ecma_canonical_json;
use crate::compare;

/// The recorder's limit for one fixture (`FIXTURE_TIMEOUT_MS`).
const FIXTURE_TIMEOUT: Duration = Duration::from_secs(15);

/// What one fixture produced.
#[derive(Debug, Clone)]
pub struct FixtureOutput {
    /// The output file's content (canonical JSON).
    pub text: String,
    /// Fixture keys pi-tool's types have no place for (ignored); a mismatch report shows
    /// them.
    pub notes: Vec<String>,
}

/// Runs one fixture: a mock server with its response, the provider with its model,
/// context and options, every event recorded with its snapshot.
pub async fn run_fixture(fixture: &Fixture) -> Result<FixtureOutput, String> {
    if fixture.entry() != "streamSimple" {
        return Err(format!(
            "entry `{}`: pi-tool's StreamFn is pi-ai's streamSimple; there is no other entry",
            fixture.entry()
        ));
    }
    let response = ResponseSpec::from_json(fixture.json.get("response").unwrap_or(&Value::Null))?;
    let server = MockServer::start(response)
        .await
        .map_err(|e| format!("mock server: {e}"))?;
    let port = server.port();
    let origin = format!("http://127.0.0.1:{port}");
    let mut notes = Vec::new();
    let model = build_model(fixture, &origin, &mut notes)?;
    let context = build_context(fixture, &mut notes)?;
    let (options, api_key) = build_options(fixture)?;

    let providers = Providers::new();
    let mut stream = providers.stream(&model, &context, options);
    let mut events = Vec::new();
    let collect = async {
        while let Some(event) = stream.next().await {
            events.push(normalise::event(&event, port)?);
        }
        Ok::<(), String>(())
    };
    match tokio::time::timeout(FIXTURE_TIMEOUT, collect).await {
        Ok(result) => result?,
        Err(_) => {
            return Err(format!(
                "fixture timed out after {FIXTURE_TIMEOUT:?} ({} events)",
                events.len()
            ));
        }
    }
    let requests = server.requests();
    let final_message = normalise::final_message(&events);
    let out = json!({
        "request": requests
            .first()
            .map(|r| normalise::request(r, api_key.as_deref(), port))
            .unwrap_or(Value::Null),
        "requestCount": requests.len(),
        "events": events,
        "final": final_message,
    });
    Ok(FixtureOutput {
        text: ecma_canonical_json(&out),
        notes,
    })
}

/// A fixture's verdict.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum FixtureVerdict {
    /// Byte-identical to pi-ai's recording.
    Pass,
    /// Differs from pi-ai for a documented reason, and matches pi-tool's own recording.
    Documented(String),
    /// Differs, or could not run (the report says how).
    Fail(String),
}

/// The documented differences (`differences.json`: `"<api>/<name>": "reason"`) that
/// belong with an expected folder: the file beside it, else the repository's.
pub fn differences(expected_dir: &Path) -> Result<BTreeMap<String, String>, String> {
    let path = providers_file(expected_dir, "differences.json");
    let text = match std::fs::read_to_string(&path) {
        Ok(text) => text,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(BTreeMap::new()),
        Err(e) => return Err(format!("{}: {e}", path.display())),
    };
    serde_json::from_str(&text).map_err(|e| format!("{}: {e}", path.display()))
}

/// `name` beside the expected folder if it exists there, else in the repository's
/// `conformance/providers/` (so that checking against a pristine copy of pi-ai's
/// recordings still knows pi-tool's documented differences).
fn providers_file(expected_dir: &Path, name: &str) -> PathBuf {
    let beside = expected_dir.parent().unwrap_or(Path::new(".")).join(name);
    if beside.exists() {
        return beside;
    }
    repo_providers_dir().join(name)
}

/// The repository's `conformance/providers/`.
pub fn repo_providers_dir() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../conformance/providers")
}

/// Compares one output with `expected_dir/<api>/<name>.json`, or, for a documented
/// difference, with pi-tool's own `expected-pi-tool/<api>/<name>.json`.
pub fn judge(
    fixture: &Fixture,
    output: &FixtureOutput,
    expected_dir: &Path,
    differences: &BTreeMap<String, String>,
) -> FixtureVerdict {
    let id = fixture.id();
    let file = Path::new(&fixture.api).join(format!("{}.json", fixture.name));
    let (path, documented) = match differences.get(&id) {
        Some(reason) => (
            providers_file(expected_dir, "expected-pi-tool").join(&file),
            Some(reason.clone()),
        ),
        None => (expected_dir.join(&file), None),
    };
    let expected = match std::fs::read_to_string(&path) {
        Ok(text) => text,
        Err(e) => return FixtureVerdict::Fail(format!("cannot read {}: {e}", path.display())),
    };
    match (compare::diff(&expected, &output.text), documented) {
        (None, None) => FixtureVerdict::Pass,
        (None, Some(reason)) => FixtureVerdict::Documented(reason),
        (Some(report), _) => {
            let mut text = format!("differs from {}:\n{report}", path.display());
            for note in &output.notes {
                text.push_str(&format!("  harness note: {note}\n"));
            }
            FixtureVerdict::Fail(text)
        }
    }
}

/// Loads, runs and judges one fixture file: its id and verdict.
pub async fn check_fixture(
    path: &Path,
    expected_dir: &Path,
    differences: &BTreeMap<String, String>,
) -> (String, FixtureVerdict) {
    let fixture = match Fixture::load(path) {
        Ok(f) => f,
        Err(e) => return (path.display().to_string(), FixtureVerdict::Fail(e)),
    };
    let verdict = match run_fixture(&fixture).await {
        Ok(output) => judge(&fixture, &output, expected_dir, differences),
        Err(e) => FixtureVerdict::Fail(format!("did not run: {e}")),
    };
    (fixture.id(), verdict)
}
