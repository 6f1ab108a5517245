//! Runs every scenario of `conformance/session-scenarios/` on pi-tool's `AgentSession`
//! and compares the trace with Pi's recording in `conformance/expected-session/` byte for
//! byte (documented differences: with `conformance/expected-pi-tool/`). Scenarios tagged
//! `builtins` run with `pi_tool_coding`'s built-ins, as Pi's session has its own; no
//! scenario is skipped. A differing scenario is re-run alone (twice at most) so that load
//! on a shared machine is not reported as a semantic difference.

use std::path::{Path, PathBuf};

use pi_tool_conformance::{Verdict, check_file, scenario_files};
use serde_json::Value;

fn conformance_dir() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../conformance")
}

async fn verdict(file: &Path, expected: &Path) -> (String, Verdict) {
    check_file(file, expected).await
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn every_session_scenario_matches_pi() {
    let dir = conformance_dir();
    let expected = dir.join("expected-session");
    let files = scenario_files(&dir.join("session-scenarios"));
    assert!(
        files.len() >= 17,
        "session scenarios missing in {}",
        dir.display()
    );
    let mut results = Vec::new();
    for file in &files {
        let (id, mut v) = verdict(file, &expected).await;
        for _ in 0..2 {
            if !matches!(v, Verdict::Fail(_)) {
                break;
            }
            v = verdict(file, &expected).await.1;
        }
        results.push((id, v));
    }
    let (mut pass, mut documented, mut skipped, mut failed) = (0, 0, Vec::new(), Vec::new());
    for (id, v) in &results {
        match v {
            Verdict::Pass => pass += 1,
            Verdict::Documented(_) => documented += 1,
            Verdict::Skipped(reason) => skipped.push(format!("{id}: {reason}")),
            Verdict::Fail(report) => failed.push(format!("{id} {report}")),
        }
    }
    println!(
        "{pass} identical to Pi, {documented} documented differences, {} skipped:",
        skipped.len()
    );
    for s in &skipped {
        println!("  SKIPPED {s}");
    }
    assert!(
        failed.is_empty(),
        "{} scenario(s) differ:\n{}",
        failed.len(),
        failed.join("\n")
    );
    assert!(skipped.is_empty(), "no session scenario may be skipped");
    assert_eq!(pass + documented, files.len());
    assert!(pass >= 15, "only {pass} session scenarios identical to Pi");
}

/// pi-tool's own traces of the session differences exist, and each is exactly what the
/// difference says: S07a is a build error naming the tool and both owners; S08a is Pi's
/// trace with the repeated name kept once in every list.
#[test]
fn documented_session_differences_are_what_the_docs_say() {
    let dir = conformance_dir();
    let own = |id: &str| {
        std::fs::read_to_string(dir.join("expected-pi-tool").join(format!("{id}.json"))).unwrap()
    };
    let s07a: serde_json::Value = serde_json::from_str(&own("S07a-duplicate-names")).unwrap();
    let error = s07a["error"].as_str().unwrap();
    assert!(
        error.contains("\"dup_ext\" is registered twice: by <inline:ext-a> and by <inline:ext-b>")
    );
    assert!(
        error.contains("\"dup_custom\" is registered twice: by <inline:ext-a> and by custom tools")
    );
    let id = "S08a-set-active-tools-unknown-and-duplicates";
    let pi: Value = serde_json::from_str(
        &std::fs::read_to_string(dir.join("expected-session").join(format!("{id}.json"))).unwrap(),
    )
    .unwrap();
    let ours: Value = serde_json::from_str(&own(id)).unwrap();
    assert_ne!(pi, ours);
    assert_eq!(
        dedupe_string_lists(pi),
        ours,
        "{id}: more than the repeated name differs"
    );
}

/// Keeps the first occurrence of every string in every list of strings (tool lists,
/// active tools, prompt sections).
fn dedupe_string_lists(value: Value) -> Value {
    match value {
        Value::Array(items) if items.iter().all(Value::is_string) => {
            let mut seen = Vec::new();
            Value::Array(
                items
                    .into_iter()
                    .filter(|v| {
                        let fresh = !seen.contains(v);
                        seen.push(v.clone());
                        fresh
                    })
                    .collect(),
            )
        }
        Value::Array(items) => Value::Array(items.into_iter().map(dedupe_string_lists).collect()),
        Value::Object(map) => Value::Object(
            map.into_iter()
                .map(|(k, v)| (k, dedupe_string_lists(v)))
                .collect(),
        ),
        other => other,
    }
}
