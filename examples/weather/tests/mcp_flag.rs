//! The main example with `--mcp`: the agent gets the tools of
//! `@modelcontextprotocol/server-filesystem` (from npm, pinned in
//! `examples/mcp-test-servers/npm/package-lock.json` and installed by the test) and the
//! faux model calls one of them, as the README shows. Without Node the test is skipped
//! loudly on a developer machine and fails under CI.

#[path = "../../weather-mcp/tests/npm/mod.rs"]
mod npm;

use std::path::Path;
use std::process::Command;

#[test]
fn the_agent_lists_a_directory_with_the_filesystem_servers_tool() {
    let Some(packages) = npm::installed("../mcp-test-servers/npm", "the --mcp example test") else {
        return;
    };
    let server = packages.join("node_modules/.bin/mcp-server-filesystem");
    let dir = Path::new(env!("CARGO_MANIFEST_DIR"));
    let output = Command::new(env!("CARGO_BIN_EXE_weather-example"))
        .arg("--mcp")
        .arg(format!("fs={} {}", server.display(), dir.display()))
        .arg("mcp__fs__list_directory")
        .arg(format!("{{\"path\": \"{}\"}}", dir.display()))
        .output()
        .expect("weather-example runs");
    let stdout = String::from_utf8_lossy(&output.stdout);
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(
        output.status.success(),
        "{}\n{stdout}\n{stderr}",
        output.status
    );
    assert!(stdout.contains("mcp__fs__list_directory says:"), "{stdout}");
    assert!(stdout.contains("[FILE] Cargo.toml"), "{stdout}");
    assert!(stdout.contains("[DIR] src"), "{stdout}");
    assert!(stderr.contains("[mcp] fs: "), "{stderr}");
    assert!(stderr.contains("mcp__fs__read_text_file"), "{stderr}");
    assert!(
        stderr.contains("[tool done] mcp__fs__list_directory"),
        "{stderr}"
    );
}

/// `--mcp-sandbox ROOT`: the server runs in the kernel sandbox. The "server" here is
/// `touch` of a file outside ROOT (no MCP at all, so the connection fails either way):
/// sandboxed, the file is not created; without the flag it is.
#[cfg(target_os = "linux")]
#[test]
fn mcp_sandbox_confines_the_servers_to_the_root() {
    use pi_tool::safety::Sandbox;
    let base = std::env::temp_dir().join(format!("weather-mcp-sandbox-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&base);
    std::fs::create_dir_all(base.join("root")).unwrap();
    let base = std::fs::canonicalize(base).unwrap();
    let root = base.join("root");
    if let Err(error) = Sandbox::for_root(&root).check() {
        assert!(
            std::env::var_os("CI").is_none(),
            "CI is set and the kernel cannot enforce the sandbox: {error}"
        );
        eprintln!("NOT RUN: the kernel cannot enforce the sandbox: {error}");
        return;
    }
    let run = |sandboxed: bool, file: &Path| {
        let mut command = Command::new(env!("CARGO_BIN_EXE_weather-example"));
        command
            .arg("--mcp")
            .arg(format!("t=touch {}", file.display()));
        if sandboxed {
            command.arg("--mcp-sandbox").arg(&root);
        }
        command
            .arg("mcp__t__x")
            .output()
            .expect("weather-example runs")
    };
    let confined = base.join("sandboxed.txt");
    let output = run(true, &confined);
    assert!(!output.status.success());
    assert!(
        !confined.exists(),
        "{}",
        String::from_utf8_lossy(&output.stderr)
    );
    let open = base.join("open.txt");
    run(false, &open);
    assert!(open.exists(), "the control run did not touch its file");
    let _ = std::fs::remove_dir_all(&base);
}
