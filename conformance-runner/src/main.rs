//! `pi-tool-conformance --out DIR [--check EXPECTED_DIR] FILE_OR_DIR...`
//!
//! Runs each scenario on pi-tool's Agent with the faux model and writes
//! `DIR/<id>.json`; with `--check`, compares each with `EXPECTED_DIR/<id>.json` (or
//! pi-tool's own trace for documented differences), prints a diff per mismatch and
//! exits non-zero if any scenario differs.
//!
//! `pi-tool-conformance --providers FIXTURE_DIR --out DIR [--check EXPECTED_DIR]`
//!
//! Runs each provider fixture (`FIXTURE_DIR/<api>/<name>.json`,
//! `conformance/providers/FORMAT.md`) through pi-tool's providers against a local HTTP
//! server and writes `DIR/<api>/<name>.json`; with `--check`, compares each with
//! `EXPECTED_DIR/<api>/<name>.json` byte for byte and prints `N passed, N failed`.
//!
//! `pi-tool-conformance --pi-tools SCENARIO_DIR --out DIR`
//!
//! Runs each scenario of Pi's built-in coding tools (`conformance/pi-tools/FORMAT.md`)
//! on `pi-tool-coding`'s pack, in the recorder's fixed environment, and writes
//! `DIR/<id>.json` in the recorder's format.

use std::path::{Path, PathBuf};
use std::process::ExitCode;

use pi_tool_conformance::providers::{
    self, Fixture, FixtureVerdict, differences, fixture_files, judge, run_fixture,
};
use pi_tool_conformance::{
    Outcome, Verdict, judge as judge_scenario, load, run_scenario, scenario_files,
};

fn usage() -> ExitCode {
    eprintln!(
        "usage: pi-tool-conformance --out DIR [--check EXPECTED_DIR] FILE_OR_DIR...\n       \
         pi-tool-conformance --providers FIXTURE_DIR --out DIR [--check EXPECTED_DIR]\n       \
         pi-tool-conformance --pi-tools SCENARIO_DIR --out DIR"
    );
    ExitCode::from(2)
}

fn main() -> ExitCode {
    let mut args = std::env::args().skip(1);
    let mut out = None;
    let mut check = None;
    let mut fixtures = None;
    let mut pi_tools = None;
    let mut inputs = Vec::new();
    while let Some(arg) = args.next() {
        match arg.as_str() {
            "--out" => out = args.next().map(PathBuf::from),
            "--check" => check = args.next().map(PathBuf::from),
            "--providers" => fixtures = args.next().map(PathBuf::from),
            "--pi-tools" => pi_tools = args.next().map(PathBuf::from),
            "-h" | "--help" => return usage(),
            _ => inputs.push(PathBuf::from(arg)),
        }
    }
    let Some(out) = out else { return usage() };
    if let Some(scenarios) = pi_tools {
        if !inputs.is_empty() || fixtures.is_some() {
            return usage();
        }
        return run_pi_tools(&scenarios, &out);
    }
    if let Some(fixtures) = fixtures {
        if !inputs.is_empty() {
            return usage();
        }
        // SAFETY: no other thread exists yet (the runtime is built below).
        unsafe { providers::scrub_environment() };
        let runtime = match tokio::runtime::Builder::new_multi_thread()
            .worker_threads(2)
            .enable_all()
            .build()
        {
            Ok(rt) => rt,
            Err(e) => {
                eprintln!("cannot start the runtime: {e}");
                return ExitCode::from(2);
            }
        };
        return runtime.block_on(run_providers(&fixtures, &out, check.as_deref()));
    }
    if inputs.is_empty() {
        return usage();
    }
    match tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
    {
        Ok(rt) => rt.block_on(run_scenarios(out, check, inputs)),
        Err(e) => {
            eprintln!("cannot start the runtime: {e}");
            ExitCode::from(2)
        }
    }
}

/// The provider fixtures, one after another (each has its own server and port).
async fn run_providers(fixture_dir: &Path, out: &Path, check: Option<&Path>) -> ExitCode {
    let files = fixture_files(fixture_dir);
    if files.is_empty() {
        eprintln!("no fixtures in {}", fixture_dir.display());
        return ExitCode::from(2);
    }
    let documented = match check.map(differences).transpose() {
        Ok(d) => d.unwrap_or_default(),
        Err(e) => {
            eprintln!("ERROR {e}");
            return ExitCode::from(2);
        }
    };
    // Per API: passed (identical or documented), failed.
    let mut tally: std::collections::BTreeMap<String, (usize, usize)> = Default::default();
    let (mut passed, mut failed) = (0, 0);
    for file in files {
        let fixture = match Fixture::load(&file) {
            Ok(f) => f,
            Err(e) => {
                println!("FAIL {e}");
                failed += 1;
                continue;
            }
        };
        let id = fixture.id();
        let entry = tally.entry(fixture.api.clone()).or_default();
        let output = match run_fixture(&fixture).await {
            Ok(output) => output,
            Err(e) => {
                println!("FAIL {id}: did not run: {e}");
                failed += 1;
                entry.1 += 1;
                continue;
            }
        };
        let dest = out
            .join(&fixture.api)
            .join(format!("{}.json", fixture.name));
        let written = dest
            .parent()
            .map_or(Ok(()), std::fs::create_dir_all)
            .and_then(|()| std::fs::write(&dest, &output.text));
        if let Err(e) = written {
            println!("FAIL {id}: cannot write {}: {e}", dest.display());
            failed += 1;
            entry.1 += 1;
            continue;
        }
        let Some(expected) = check else {
            println!("wrote {}", dest.display());
            continue;
        };
        match judge(&fixture, &output, expected, &documented) {
            FixtureVerdict::Pass => {
                println!("PASS {id}");
                passed += 1;
                entry.0 += 1;
            }
            FixtureVerdict::Documented(reason) => {
                println!("PASS {id} (documented difference from pi-ai: {reason})");
                passed += 1;
                entry.0 += 1;
            }
            FixtureVerdict::Fail(report) => {
                println!("FAIL {id} {report}");
                failed += 1;
                entry.1 += 1;
            }
        }
    }
    if check.is_some() {
        for (api, (p, f)) in &tally {
            println!("{api}: {p} passed, {f} failed");
        }
        println!("{passed} passed, {failed} failed");
    }
    if failed > 0 {
        ExitCode::FAILURE
    } else {
        ExitCode::SUCCESS
    }
}

async fn run_scenarios(out: PathBuf, check: Option<PathBuf>, inputs: Vec<PathBuf>) -> ExitCode {
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
        match judge_scenario(&id, &output, expected) {
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

fn run_pi_tools(scenarios: &Path, out: &Path) -> ExitCode {
    use pi_tool_conformance::pi_tools;
    let root = match pi_tools::make_root() {
        Ok(root) => root,
        Err(e) => {
            eprintln!("cannot make the run's directory: {e}");
            return ExitCode::from(2);
        }
    };
    // Relative paths are resolved before the environment (and the directory) change.
    let absolute = |p: &Path| {
        std::env::current_dir()
            .map(|d| d.join(p))
            .unwrap_or_else(|_| p.to_path_buf())
    };
    let (scenarios, out) = (absolute(scenarios), absolute(out));
    // SAFETY: no other thread exists yet (the runtime is built below).
    unsafe { pi_tools::prepare_environment(&root) };
    let runtime = match tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
    {
        Ok(rt) => rt,
        Err(e) => {
            eprintln!("cannot start the runtime: {e}");
            return ExitCode::from(2);
        }
    };
    let (written, failures) = runtime.block_on(pi_tools::run_all(&scenarios, &out, &root));
    let _ = std::fs::remove_dir_all(&root);
    for failure in &failures {
        println!("FAIL {failure}");
    }
    println!("{written} written, {} failed", failures.len());
    if failures.is_empty() {
        ExitCode::SUCCESS
    } else {
        ExitCode::FAILURE
    }
}
