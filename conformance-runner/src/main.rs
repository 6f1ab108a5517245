//! `pi-tool-conformance --out DIR [--check EXPECTED_DIR] FILE_OR_DIR...`
//!
//! Runs each scenario on pi-tool's Agent with the faux model and writes
//! `DIR/<id>.json`; with `--check`, compares each with `EXPECTED_DIR/<id>.json` (or
//! pi-tool's own trace for documented differences), prints a diff per mismatch and
//! exits non-zero if any scenario differs.

use std::path::PathBuf;
use std::process::ExitCode;

use pi_tool_conformance::{Outcome, Verdict, judge, load, run_scenario, scenario_files};

fn usage() -> ExitCode {
    eprintln!("usage: pi-tool-conformance --out DIR [--check EXPECTED_DIR] FILE_OR_DIR...");
    ExitCode::from(2)
}

#[tokio::main(flavor = "current_thread")]
async fn main() -> ExitCode {
    let mut args = std::env::args().skip(1);
    let mut out = None;
    let mut check = None;
    let mut inputs = Vec::new();
    while let Some(arg) = args.next() {
        match arg.as_str() {
            "--out" => out = args.next().map(PathBuf::from),
            "--check" => check = args.next().map(PathBuf::from),
            "-h" | "--help" => return usage(),
            _ => inputs.push(PathBuf::from(arg)),
        }
    }
    let Some(out) = out else { return usage() };
    if inputs.is_empty() {
        return usage();
    }
    if let Err(e) = std::fs::create_dir_all(&out) {
        eprintln!("cannot create {}: {e}", out.display());
        return ExitCode::from(2);
    }
    let mut files = Vec::new();
    for input in inputs {
        if input.is_dir() {
            files.extend(scenario_files(&input));
        } else {
            files.push(input);
        }
    }
    let (mut pass, mut documented, mut skipped, mut failed) = (0, 0, 0, 0);
    for file in files {
        let scenario = match load(&file) {
            Ok(s) => s,
            Err(e) => {
                eprintln!("ERROR {e}");
                failed += 1;
                continue;
            }
        };
        let id = scenario
            .get("id")
            .and_then(|v| v.as_str())
            .unwrap_or("unknown")
            .to_owned();
        let output = match run_scenario(&scenario).await {
            Outcome::Skipped(reason) => {
                println!("SKIP {id}: {reason}");
                skipped += 1;
                continue;
            }
            Outcome::Output(output) => output,
        };
        let path = out.join(format!("{id}.json"));
        if let Err(e) = std::fs::write(&path, &output) {
            eprintln!("cannot write {}: {e}", path.display());
            failed += 1;
            continue;
        }
        let Some(expected) = &check else {
            println!("wrote {}", path.display());
            continue;
        };
        match judge(&id, &output, expected) {
            Verdict::Pass => {
                println!("PASS {id}");
                pass += 1;
            }
            Verdict::Documented(reason) => {
                println!("PASS {id} (documented difference from Pi: {reason})");
                documented += 1;
            }
            Verdict::Skipped(reason) => {
                println!("SKIP {id}: {reason}");
                skipped += 1;
            }
            Verdict::Fail(report) => {
                println!("FAIL {id} {report}");
                failed += 1;
            }
        }
    }
    if check.is_some() {
        println!(
            "{pass} identical to Pi, {documented} documented differences, {skipped} skipped, {failed} failed"
        );
    }
    if failed > 0 {
        ExitCode::FAILURE
    } else {
        ExitCode::SUCCESS
    }
}
