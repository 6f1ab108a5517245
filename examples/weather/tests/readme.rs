//! The README's main example, `cargo run -p weather-example`, offline on the embedded faux
//! model: the package's binary prints what the README shows. (`.ci/run` also runs the
//! command as written; a test does not start cargo.)

use std::process::Command;

#[test]
fn the_readme_main_command_runs_the_seed_offline() {
    let output = Command::new(env!("CARGO_BIN_EXE_weather-example"))
        .output()
        .expect("weather-example runs");
    let stdout = String::from_utf8_lossy(&output.stdout);
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(
        output.status.success(),
        "weather-example failed ({}):\n--- stdout\n{stdout}\n--- stderr\n{stderr}",
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
