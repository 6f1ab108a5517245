//! The README's set-up command for the main example, run as written: `cargo run -p
//! weather-example` from the repository root, offline on the embedded faux model.

use std::path::Path;
use std::process::Command;

#[test]
fn the_readme_main_command_runs_the_seed_offline() {
    let output = Command::new(env!("CARGO"))
        .current_dir(Path::new(env!("CARGO_MANIFEST_DIR")).join("../.."))
        .args(["run", "-q", "-p", "weather-example"])
        .output()
        .expect("cargo runs");
    let stdout = String::from_utf8_lossy(&output.stdout);
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(
        output.status.success(),
        "`cargo run -p weather-example` failed ({}):\n--- stdout\n{stdout}\n--- stderr\n{stderr}",
        output.status,
    );
    // The model's text on stdout, the tool's progress and end on stderr.
    assert!(
        stdout.contains("According to the demo weather service: Tokyo: 24 degrees celsius."),
        "{stdout}"
    );
    for line in ["[progress] Checking Tokyo...", "[tool done] get_weather"] {
        assert!(stderr.contains(line), "missing {line:?} in:\n{stderr}");
    }
}
