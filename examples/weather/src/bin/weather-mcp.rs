//! `cargo run -q --release --bin weather-mcp` at the repository root: starts the
//! weather pack's MCP server.
//!
//! The server lives in `pi-tool-mcp/`, a separate cargo workspace, because its MCP
//! library (rmcp) pulls syn 2 while this workspace keeps one syn major (see
//! `pi-tool-mcp/Cargo.toml`). Cargo can only run binaries of the current workspace, so
//! this root-workspace binary is a launcher: it replaces itself (`exec`) with
//! `cargo run -q [--release] --manifest-path pi-tool-mcp/Cargo.toml --bin weather-mcp`,
//! passing its arguments on. `cargo run` in turn execs the server, so after start-up the
//! client's child process *is* the server: stdin, stdout, stderr and signals reach it
//! directly. The first start builds the server (a few minutes in release mode); later
//! starts only check that it is fresh.
//!
//! It uses the cargo that runs it (`$CARGO`), and `--release` exactly when it was built
//! in release mode itself.

use std::ffi::OsString;
use std::path::PathBuf;
use std::process::{Command, ExitCode};

fn server_command() -> Command {
    let manifest: PathBuf = [
        env!("CARGO_MANIFEST_DIR"),
        "..",
        "..",
        "pi-tool-mcp",
        "Cargo.toml",
    ]
    .iter()
    .collect();
    let cargo = std::env::var_os("CARGO").unwrap_or_else(|| OsString::from("cargo"));
    let mut command = Command::new(cargo);
    command.args(["run", "-q"]);
    if !cfg!(debug_assertions) {
        command.arg("--release");
    }
    command
        .arg("--manifest-path")
        .arg(manifest)
        .args(["--bin", "weather-mcp", "--"])
        .args(std::env::args_os().skip(1));
    command
}

#[cfg(unix)]
fn main() -> ExitCode {
    use std::os::unix::process::CommandExt;
    let error = server_command().exec();
    eprintln!("weather-mcp: cannot start cargo for pi-tool-mcp: {error}");
    ExitCode::FAILURE
}

#[cfg(not(unix))]
fn main() -> ExitCode {
    match server_command().status() {
        Ok(status) if status.success() => ExitCode::SUCCESS,
        Ok(status) => ExitCode::from(status.code().map_or(1, |c| c.clamp(1, 255) as u8)),
        Err(error) => {
            eprintln!("weather-mcp: cannot start cargo for pi-tool-mcp: {error}");
            ExitCode::FAILURE
        }
    }
}
