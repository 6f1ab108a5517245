//! `coding-mcp`: Pi's built-in coding tools (`pi-tool-coding`) served over MCP for one
//! root directory.
//!
//! ```text
//! coding-mcp [--root DIR] [--confine [--sandbox-read DIR]... [--sandbox-write DIR]...] [--http ADDRESS:PORT]
//! ```
//!
//! - `--root DIR`: the working directory of every call (default: the current directory).
//! - `--confine`: refuse paths outside the root (`Path leaves the project root`) and run
//!   `bash` in the kernel sandbox: it writes only inside the root (and a private
//!   temporary directory), reads only those and the system's directories, has no
//!   network, and nothing it starts outlives the call (`docs/sandbox.md`). A kernel that
//!   cannot enforce that refuses each `bash` call, naming what it lacks. Off by default,
//!   as in Pi, whose tools take any path.
//! - `--sandbox-read DIR`, `--sandbox-write DIR` (repeatable, with `--confine`): widen
//!   `bash`'s sandbox: a toolchain outside the system's directories (`~/.cargo`,
//!   `~/.rustup`) to read, a cache to write.
//! - `--http ADDRESS:PORT`: streamable HTTP instead of stdio.
//!
//! Standard output is the MCP channel (stdio); standard error gets one line per finished
//! call.

use std::path::PathBuf;
use std::process::ExitCode;

use coding_mcp::{coding_pack, context_for};
use pi_tool_mcp::{CallEnd, PackServer};

const USAGE: &str = "usage: coding-mcp [--root DIR] [--confine [--sandbox-read DIR]... [--sandbox-write DIR]...] [--http ADDRESS:PORT]";

struct Settings {
    root: PathBuf,
    confine: bool,
    read: Vec<PathBuf>,
    write: Vec<PathBuf>,
    http: Option<String>,
}

fn settings() -> Result<Settings, String> {
    let mut root = None;
    let mut confine = false;
    let mut http = None;
    let mut read = Vec::new();
    let mut write = Vec::new();
    let mut args = std::env::args().skip(1);
    while let Some(arg) = args.next() {
        match arg.as_str() {
            "--root" => root = Some(args.next().ok_or(USAGE)?),
            "--confine" => confine = true,
            "--sandbox-read" => read.push(PathBuf::from(args.next().ok_or(USAGE)?)),
            "--sandbox-write" => write.push(PathBuf::from(args.next().ok_or(USAGE)?)),
            "--http" => http = Some(args.next().ok_or(USAGE)?),
            _ => return Err(USAGE.to_owned()),
        }
    }
    let root = match root {
        Some(root) => PathBuf::from(root),
        None => std::env::current_dir().map_err(|e| format!("no current directory: {e}"))?,
    };
    let root = std::fs::canonicalize(&root).map_err(|e| format!("root {}: {e}", root.display()))?;
    if !root.is_dir() {
        return Err(format!("root {} is not a directory", root.display()));
    }
    if !confine && (!read.is_empty() || !write.is_empty()) {
        return Err("--sandbox-read and --sandbox-write need --confine".to_owned());
    }
    Ok(Settings {
        root,
        confine,
        read,
        write,
        http,
    })
}

fn log_call_end(end: &CallEnd) {
    eprintln!(
        "coding-mcp: {} {} {:?} after {} ms",
        end.tool,
        end.call_id,
        end.outcome,
        end.elapsed.as_millis()
    );
}

/// Resolves on SIGTERM (a process manager's stop) or Ctrl-C: the HTTP server then stops
/// accepting, lets running calls finish up to its grace, aborts the rest and exits 0.
async fn stop_signal() {
    #[cfg(unix)]
    if let Ok(mut terminate) =
        tokio::signal::unix::signal(tokio::signal::unix::SignalKind::terminate())
    {
        tokio::select! {
            _ = terminate.recv() => {}
            _ = tokio::signal::ctrl_c() => {}
        }
        return;
    }
    let _ = tokio::signal::ctrl_c().await;
}

#[tokio::main]
async fn main() -> ExitCode {
    let settings = match settings() {
        Ok(s) => s,
        Err(message) => {
            eprintln!("coding-mcp: {message}");
            return ExitCode::FAILURE;
        }
    };
    let pack = coding_pack(
        &settings.root,
        settings.confine,
        &settings.read,
        &settings.write,
    );
    let server = PackServer::new_with_context(pack, context_for(&settings.root))
        .with_server_info("coding-mcp", env!("CARGO_PKG_VERSION"))
        .on_call_end(log_call_end);
    let served = match settings.http {
        None => server.serve_stdio().await.map_err(|e| e.to_string()),
        Some(address) => match tokio::net::TcpListener::bind(&address).await {
            Ok(listener) => {
                if let Ok(bound) = listener.local_addr() {
                    eprintln!("coding-mcp: serving MCP over streamable HTTP at http://{bound}/mcp");
                }
                server
                    .serve_http_until(listener, stop_signal())
                    .await
                    .map_err(|e| e.to_string())
            }
            Err(e) => Err(format!("cannot listen on {address}: {e}")),
        },
    };
    match served {
        Ok(()) => ExitCode::SUCCESS,
        Err(error) => {
            eprintln!("coding-mcp: {error}");
            ExitCode::FAILURE
        }
    }
}
