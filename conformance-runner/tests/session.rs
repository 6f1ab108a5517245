//! Runs every scenario of `conformance/session-scenarios/` on pi-tool's `AgentSession`
//! and compares the trace with Pi's recording in `conformance/expected-session/` byte for
//! byte (documented differences: with `conformance/expected-pi-tool/`). Scenarios tagged
//! `builtins` are skipped (pi-tool ships no built-in coding tools), never counted as
//! passed. A differing scenario is re-run alone (twice at most) so that load on a shared
//! machine is not reported as a semantic difference.

use std::path::{Path, PathBuf};

use pi_tool_conformance::{Outcome, Verdict, judge, load, run_scenario, scenario_files};

fn conformance_dir() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../conformance")
}

async fn verdict(file: &Path, expected: &Path) -> (String, Verdict) {
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
        Outcome::Output(output) => judge(&id, &output, expected),
    };
    (id, verdict)
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
            Verdict::Skipped(reason) => {
                assert!(reason.contains("builtins"), "{id} skipped: {reason}");
                skipped.push(format!("{id}: {reason}"));
            }
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
    assert_eq!(pass + documented, files.len() - skipped.len());
    assert!(pass >= 8, "only {pass} session scenarios identical to Pi");
}
