//! Runs every provider fixture of `conformance/providers/fixtures/` (found at run time:
//! a new file runs without code changes) through `pi_tool::providers::Providers` against
//! a local HTTP server, and compares the request and events with pi-ai 0.85.0's
//! recording in `conformance/providers/expected/` byte for byte (documented differences,
//! listed in `differences.json`: with `expected-pi-tool/`).
//!
//! This binary holds one test: it scrubs the provider environment variables as the
//! recorder does, which is only sound while no other thread runs.

use std::collections::BTreeMap;
use std::path::Path;

use pi_tool_conformance::providers::{
    self, FixtureVerdict, check_fixture, differences, fixture_files, repo_providers_dir,
};

#[test]
fn every_provider_fixture_matches_pi_ai() {
    // SAFETY: the only test of this binary, before any runtime thread is started.
    unsafe { providers::scrub_environment() };
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
        .expect("runtime");
    runtime.block_on(run_all());
}

async fn run_all() {
    let dir = repo_providers_dir();
    let expected = dir.join("expected");
    let files = fixture_files(&dir.join("fixtures"));
    assert!(files.len() >= 45, "fixtures missing in {}", dir.display());
    let documented = differences(&expected).expect("differences.json");
    check_documented_files(&dir, &documented);

    let mut tally: BTreeMap<String, (usize, usize, usize)> = BTreeMap::new();
    let mut failures = Vec::new();
    for file in &files {
        let (id, mut verdict) = check_fixture(file, &expected, &documented).await;
        // A mismatch is re-run alone (twice at most), so that a burst of load on a
        // shared machine is not reported as a difference; the chunk pauses are real.
        for _ in 0..2 {
            if !matches!(verdict, FixtureVerdict::Fail(_)) {
                break;
            }
            verdict = check_fixture(file, &expected, &documented).await.1;
        }
        let api = id.split('/').next().unwrap_or_default().to_owned();
        let entry = tally.entry(api).or_default();
        match verdict {
            FixtureVerdict::Pass => entry.0 += 1,
            FixtureVerdict::Documented(_) => entry.1 += 1,
            FixtureVerdict::Fail(report) => {
                entry.2 += 1;
                failures.push(format!("FAIL {id} {}", shorten(&report)));
            }
        }
    }
    for (api, (pass, doc, fail)) in &tally {
        println!("{api}: {pass} identical to pi-ai, {doc} documented differences, {fail} failed");
    }
    assert!(
        failures.is_empty(),
        "{} of {} provider fixtures differ from pi-ai:\n{}",
        failures.len(),
        files.len(),
        failures.join("\n")
    );
}

/// Every documented difference names a fixture and has pi-tool's own recording, which
/// differs from pi-ai's.
fn check_documented_files(dir: &Path, documented: &BTreeMap<String, String>) {
    for (id, reason) in documented {
        assert!(!reason.trim().is_empty(), "{id}: no reason given");
        assert!(
            dir.join("fixtures").join(format!("{id}.json")).is_file(),
            "differences.json names {id}, which is no fixture"
        );
        let ours = dir.join("expected-pi-tool").join(format!("{id}.json"));
        assert!(ours.is_file(), "{id}: {} missing", ours.display());
        let pi = dir.join("expected").join(format!("{id}.json"));
        assert_ne!(
            std::fs::read(&ours).ok(),
            std::fs::read(&pi).ok(),
            "{id}: pi-tool's own recording is pi-ai's, nothing to document"
        );
    }
}

/// A report cut to its first lines, so that 45 failures stay readable.
fn shorten(report: &str) -> String {
    const LINES: usize = 12;
    let lines: Vec<&str> = report.lines().collect();
    if lines.len() <= LINES {
        return report.to_owned();
    }
    format!(
        "{}\n  … ({} more lines)",
        lines[..LINES].join("\n"),
        lines.len() - LINES
    )
}
