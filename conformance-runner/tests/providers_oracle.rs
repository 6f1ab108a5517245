//! Checks the provider harness itself against the real pi-ai 0.85.0: for every fixture,
//! pi-ai's `streamSimple` (`conformance/providers/pi-ai-against.mjs`) talks to the
//! harness's Rust mock server, and the output built from what that server received
//! (request normalisation, canonical writer) plus pi-ai's events must be pi-ai's own
//! recording, byte for byte. So a provider fixture that fails in `tests/providers.rs`
//! fails because of the provider, not because the harness serves or records differently
//! from `record.mjs`.
//!
//! Needs Node: the test installs pi-ai 0.85.0 from `conformance/providers/package-lock.json`
//! itself (`npm ci`, as the MCP client and Pi bridge tests do), skips with a loud message
//! without Node, and fails under CI without it. `PI_AI_NODE_MODULES` may name another
//! `node_modules` folder holding `@earendil-works/pi-ai` 0.85.0 instead; `NODE` names the
//! node binary, by default the recorder's pinned Node 22 from that folder's `.bin`, since
//! V8's error texts differ between Node versions.

use std::path::PathBuf;
use std::process::Stdio;

use pi_tool_conformance::canon::ecma_canonical_json;
use pi_tool_conformance::compare;
use pi_tool_conformance::providers::fixture::model_json;
use pi_tool_conformance::providers::server::{MockServer, ResponseSpec};
use pi_tool_conformance::providers::{Fixture, fixture_files, normalise, repo_providers_dir};
use serde_json::{Value, json};
use tokio::io::AsyncWriteExt;

#[path = "../../examples/weather-mcp/tests/npm/mod.rs"]
mod npm;

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn pi_ai_on_the_harness_server_reproduces_its_recordings() {
    let dir = repo_providers_dir();
    let node_modules = match std::env::var_os("PI_AI_NODE_MODULES") {
        Some(folder) => PathBuf::from(folder),
        None => match npm::installed("../conformance/providers", "the provider harness oracle") {
            Some(installed) => installed.join("node_modules"),
            None => return,
        },
    };
    assert!(
        node_modules.join("@earendil-works/pi-ai/dist/api").is_dir(),
        "pi-ai not found in {}: run `npm install` in conformance/providers or set PI_AI_NODE_MODULES",
        node_modules.display()
    );
    // The recorder's own Node (22.23.3, a devDependency): V8's JSON.parse messages, part
    // of some recordings, differ between Node versions.
    let pinned = node_modules.join(".bin/node");
    let node = std::env::var("NODE").unwrap_or_else(|_| {
        if pinned.exists() {
            pinned.display().to_string()
        } else {
            "node".to_owned()
        }
    });
    let files = fixture_files(&dir.join("fixtures"));
    assert!(files.len() >= 45, "fixtures missing");
    let mut failures = Vec::new();
    for file in &files {
        let fixture = Fixture::load(file).unwrap();
        let id = fixture.id();
        let spec = ResponseSpec::from_json(&fixture.json["response"]).unwrap();
        let server = MockServer::start(spec).await.unwrap();
        let port = server.port();
        let model = model_json(
            &fixture,
            &format!("http://127.0.0.1:{port}"),
            &mut Vec::new(),
        )
        .unwrap();
        let job = json!({
            "api": fixture.api,
            "model": model,
            "context": fixture.json["context"],
            "options": fixture.json.get("options").cloned().unwrap_or(json!({})),
            "port": port,
        });
        let mut child = tokio::process::Command::new(&node)
            .arg(dir.join("pi-ai-against.mjs"))
            .env("PI_AI_NODE_MODULES", &node_modules)
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .kill_on_drop(true)
            .spawn()
            .unwrap_or_else(|e| panic!("cannot run {node}: {e}"));
        let mut stdin = child.stdin.take().unwrap();
        stdin.write_all(job.to_string().as_bytes()).await.unwrap();
        drop(stdin);
        let out = child.wait_with_output().await.unwrap();
        let pi: Value = match serde_json::from_slice(&out.stdout) {
            Ok(v) => v,
            Err(e) => {
                failures.push(format!(
                    "{id}: pi-ai printed no result ({e}): {}",
                    String::from_utf8_lossy(&out.stderr)
                ));
                continue;
            }
        };
        let requests = server.requests();
        // The key pi-ai sent, as `record.mjs` replaces it: the fixture's own, else the
        // default one.
        let api_key = fixture.json["options"]["apiKey"]
            .as_str()
            .unwrap_or(pi_tool_conformance::providers::DEFAULT_API_KEY);
        let output = json!({
            "request": requests
                .first()
                .map(|r| normalise::request(r, Some(api_key), port))
                .unwrap_or(Value::Null),
            "requestCount": requests.len(),
            "events": pi["events"],
            "final": pi["final"],
        });
        let expected = std::fs::read_to_string(
            dir.join("expected")
                .join(&fixture.api)
                .join(format!("{}.json", fixture.name)),
        )
        .unwrap();
        if let Some(report) = compare::diff(&expected, &ecma_canonical_json(&output)) {
            failures.push(format!("{id}:\n{report}"));
        }
    }
    assert!(
        failures.is_empty(),
        "pi-ai through the harness's server differs from its own recording:\n{}",
        failures.join("\n")
    );
}
