//! `bash`: one shell command in its own process group, its output streamed as progress,
//! kept to the last 2000 lines / 50 KB, with the whole output in a temporary file when cut.

use std::path::{Path, PathBuf};
use std::process::Stdio;
use std::time::Duration;

use std::os::unix::process::ExitStatusExt;

use pi_tool_core::safety::{
    DEFAULT_ENV_ALLOWLIST, ProcessLeader, Sandbox, SandboxViolation, SpawnError, spawn_contained,
};
use pi_tool_core::{AbortSignal, AgentToolResult, Content, JsonSchema, OnUpdate, ToolError};
use serde::{Deserialize, Serialize};
use tokio::io::AsyncReadExt;
use tokio::sync::mpsc;
use tokio::time::Instant;

use crate::js;
use crate::output::{OutputAccumulator, Snapshot};
use crate::truncate::{DEFAULT_MAX_BYTES, DEFAULT_MAX_LINES, TruncatedOutput, format_size};

/// Pi's `BASH_UPDATE_THROTTLE_MS`.
const UPDATE_THROTTLE: Duration = Duration::from_millis(100);
/// How long the pipes may stay quiet after the shell exits before the call ends (Pi's
/// `EXIT_STDIO_GRACE_MS`): a background child holding them does not hold the call.
const EXIT_STDIO_GRACE: Duration = Duration::from_millis(100);
const MAX_TIMEOUT_MS: f64 = 2_147_483_647.0;

/// Arguments of `bash`.
#[derive(Debug, Clone, Deserialize, JsonSchema)]
#[schemars(crate = "pi_tool_core::schemars")]
#[non_exhaustive]
pub struct BashParams {
    /// Shell command to execute
    pub command: String,
    /// Timeout in seconds (optional, no default timeout)
    #[serde(default)]
    #[schemars(with = "f64", transform = crate::js::no_default)]
    pub timeout: Option<f64>,
}

/// `bash`'s details: the truncation and the full-output file, when the output was cut.
#[derive(Debug, Clone, Default, Serialize)]
#[serde(rename_all = "camelCase")]
#[non_exhaustive]
pub struct BashDetails {
    /// What the tail truncation did.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub truncation: Option<TruncatedOutput>,
    /// The temporary file holding every byte of the output.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub full_output_path: Option<PathBuf>,
    /// What the sandbox refused during the call, as the model reads it (sandboxed calls
    /// only; also appended to the text).
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub sandbox_violations: Vec<String>,
}

/// How `bash` runs commands.
pub(crate) struct ShellConfig<'a> {
    pub command_prefix: Option<&'a str>,
    pub shell: Option<&'a Path>,
    pub agent_dir: Option<&'a Path>,
    /// The `powershell` tool: Pi's shell tool with PowerShell's configuration, which Pi
    /// resolves only on Windows.
    pub powershell: bool,
    /// The kernel sandbox every command runs in (`None`: Pi's unconfined shell).
    pub sandbox: Option<Sandbox>,
}

/// Pi's `getPowerShellConfig()` on any other platform than Windows (this crate runs on
/// Unix only).
pub(crate) const POWERSHELL_UNAVAILABLE: &str = "The powershell tool is only available on Windows.";

/// Pi's `getAgentDir()`: `$PI_CODING_AGENT_DIR` (with `~` expanded), else `~/.pi/agent`.
pub(crate) fn agent_dir() -> PathBuf {
    match std::env::var("PI_CODING_AGENT_DIR") {
        Ok(dir) if !dir.is_empty() => {
            let home = crate::paths::home_dir();
            if dir == "~" {
                home
            } else if let Some(rest) = dir.strip_prefix("~/") {
                home.join(rest)
            } else {
                PathBuf::from(dir)
            }
        }
        _ => crate::paths::home_dir().join(".pi").join("agent"),
    }
}

/// Pi's `getShellEnv()` minus its session variables: `PATH` gains the agent's `bin`.
fn shell_env(agent: &Path) -> Vec<(std::ffi::OsString, std::ffi::OsString)> {
    let bin = agent.join("bin");
    let bin = bin.to_string_lossy().into_owned();
    let mut env: Vec<(std::ffi::OsString, std::ffi::OsString)> = std::env::vars_os()
        .filter(|(k, _)| {
            !matches!(
                k.to_str(),
                Some(
                    "PI_SESSION_ID"
                        | "PI_SESSION_FILE"
                        | "PI_PROVIDER"
                        | "PI_MODEL"
                        | "PI_REASONING_LEVEL"
                )
            )
        })
        .collect();
    let key = env
        .iter()
        .map(|(k, _)| k.clone())
        .find(|k| k.to_str().is_some_and(|k| k.eq_ignore_ascii_case("path")))
        .unwrap_or_else(|| "PATH".into());
    let current = std::env::var_os(&key)
        .map(|v| v.to_string_lossy().into_owned())
        .unwrap_or_default();
    let has = current
        .split(':')
        .filter(|s| !s.is_empty())
        .any(|s| s == bin);
    let updated = if has {
        current
    } else {
        [bin.as_str(), current.as_str()]
            .iter()
            .filter(|s| !s.is_empty())
            .copied()
            .collect::<Vec<_>>()
            .join(":")
    };
    env.retain(|(k, _)| *k != key);
    env.push((key, updated.into()));
    env
}

enum ExecEnd {
    /// The exit code (`None` when a signal ended the shell) and the signal.
    Exited(Option<i32>, Option<i32>),
    Aborted,
    TimedOut,
    /// The sandbox's wall-time limit ended the call.
    WallTime(Duration),
    /// The sandbox's output limit ended the call.
    OutputLimit(u64),
}

fn emit(on_update: &OnUpdate<Option<BashDetails>>, snapshot: Snapshot) {
    let details = BashDetails {
        truncation: snapshot.truncation.truncated.then_some(snapshot.truncation),
        full_output_path: snapshot.full_output_path,
        sandbox_violations: Vec::new(),
    };
    on_update.send(AgentToolResult::new(
        vec![Content::text(snapshot.content)],
        Some(details),
    ));
}

/// Runs `bash`.
pub(crate) async fn run(
    params: BashParams,
    cwd: &Path,
    config: ShellConfig<'_>,
    signal: AbortSignal,
    on_update: OnUpdate<Option<BashDetails>>,
) -> Result<AgentToolResult<Option<BashDetails>>, ToolError> {
    let command = match config.command_prefix {
        Some(prefix) => format!("{prefix}\n{}", params.command),
        None => params.command.clone(),
    };
    let mut output = OutputAccumulator::new(DEFAULT_MAX_LINES, DEFAULT_MAX_BYTES, "pi-bash");
    on_update.send(AgentToolResult::new(Vec::new(), None));

    let end = exec(
        &command,
        cwd,
        &config,
        params.timeout,
        &signal,
        &mut output,
        &on_update,
    )
    .await;

    // Pi's finishOutput: flush the decoder, send the update still owed, then the final
    // snapshot.
    output.finish();
    let end = match end {
        Ok((end, update_owed)) => {
            if update_owed {
                emit(&on_update, output.snapshot(true));
            }
            Ok(end)
        }
        Err(error) => Err(error),
    };
    let snapshot = output.snapshot(true);
    let closed = output.close_temp_file();
    // What the sandbox refused, found in the output the model sees, said as what it is.
    let violations: Vec<String> = match (&config.sandbox, &end) {
        (Some(sandbox), Ok(ExecEnd::Exited(_, signal))) => {
            SandboxViolation::find(&snapshot.content, *signal, sandbox, cwd)
        }
        (Some(sandbox), Ok(_)) => SandboxViolation::find(&snapshot.content, None, sandbox, cwd),
        _ => Vec::new(),
    }
    .iter()
    .map(SandboxViolation::message)
    .collect();
    let format = |snapshot: &Snapshot, empty: &str| -> (String, Option<BashDetails>) {
        let t = &snapshot.truncation;
        let mut text = if snapshot.content.is_empty() {
            empty.to_owned()
        } else {
            snapshot.content.clone()
        };
        if !t.truncated {
            return (text, None);
        }
        let path = snapshot
            .full_output_path
            .as_ref()
            .map(|p| p.display().to_string())
            .unwrap_or_else(|| "undefined".to_owned());
        let start = t.total_lines as i64 - t.output_lines as i64 + 1;
        let end = t.total_lines;
        if t.last_line_partial {
            text.push_str(&format!(
                "\n\n[Showing last {} of line {end} (line is {}). Full output: {path}]",
                format_size(t.output_bytes),
                format_size(output.last_line_bytes())
            ));
        } else if t.truncated_by == Some("lines") {
            text.push_str(&format!(
                "\n\n[Showing lines {start}-{end} of {}. Full output: {path}]",
                t.total_lines
            ));
        } else {
            text.push_str(&format!(
                "\n\n[Showing lines {start}-{end} of {} ({} limit). Full output: {path}]",
                t.total_lines,
                format_size(DEFAULT_MAX_BYTES)
            ));
        }
        (
            text,
            Some(BashDetails {
                truncation: Some(t.clone()),
                full_output_path: snapshot.full_output_path.clone(),
                sandbox_violations: Vec::new(),
            }),
        )
    };
    let append_status = |text: String, status: String| -> String {
        if text.is_empty() {
            status
        } else {
            format!("{text}\n\n{status}")
        }
    };
    let end = match end {
        Ok(end) => end,
        Err(error) => return Err(error),
    };
    if let Err(e) = closed {
        return Err(ToolError::new(js::fs_error(&e, "write", None)));
    }
    let result = match end {
        ExecEnd::Aborted => Err(ToolError::new(append_status(
            format(&snapshot, "").0,
            "Command aborted".to_owned(),
        ))),
        ExecEnd::TimedOut => Err(ToolError::new(append_status(
            format(&snapshot, "").0,
            format!(
                "Command timed out after {} seconds",
                params.timeout.map_or("undefined".to_owned(), js::num)
            ),
        ))),
        ExecEnd::WallTime(limit) => Err(ToolError::new(append_status(
            format(&snapshot, "").0,
            format!(
                "Command killed after {} seconds (the sandbox's wall-time limit)",
                js::num(limit.as_secs_f64())
            ),
        ))),
        ExecEnd::OutputLimit(limit) => Err(ToolError::new(append_status(
            format(&snapshot, "").0,
            format!("Command killed after {limit} bytes of output (the sandbox's output limit)"),
        ))),
        ExecEnd::Exited(code, _) => {
            let (text, details) = format(&snapshot, "(no output)");
            match code {
                Some(code) if code != 0 => Err(ToolError::new(append_status(
                    text,
                    format!("Command exited with code {code}"),
                ))),
                _ => Ok(AgentToolResult::new(vec![Content::text(text)], details)),
            }
        }
    };
    if violations.is_empty() {
        return result;
    }
    let note: String = violations
        .iter()
        .map(|violation| format!("\n[sandbox] {violation}"))
        .collect();
    match result {
        Ok(mut result) => {
            if let Some(Content::Text { text }) = result.content.first_mut() {
                text.push('\n');
                text.push_str(&note);
            }
            result
                .details
                .get_or_insert_with(BashDetails::default)
                .sandbox_violations = violations;
            Ok(result)
        }
        Err(error) => Err(ToolError::new(format!("{}\n{note}", error.message()))),
    }
}

/// Pi's `exec`: the command's end, or the error that ends the call before it runs
/// (`Invalid timeout`, a missing cwd). Progress updates are emitted from here.
async fn exec(
    command: &str,
    cwd: &Path,
    config: &ShellConfig<'_>,
    timeout: Option<f64>,
    signal: &AbortSignal,
    output: &mut OutputAccumulator,
    on_update: &OnUpdate<Option<BashDetails>>,
) -> Result<(ExecEnd, bool), ToolError> {
    let timeout = match timeout {
        None => None,
        Some(t) if !t.is_finite() || t <= 0.0 => {
            return Err(ToolError::new(
                "Invalid timeout: must be a finite number of seconds",
            ));
        }
        Some(t) if t * 1000.0 > MAX_TIMEOUT_MS => {
            return Err(ToolError::new(format!(
                "Invalid timeout: maximum is {} seconds",
                js::num(MAX_TIMEOUT_MS / 1000.0)
            )));
        }
        Some(t) => Some(Duration::from_secs_f64(t)),
    };
    if signal.is_aborted() {
        return Ok((ExecEnd::Aborted, false));
    }
    if config.powershell {
        return Err(ToolError::new(POWERSHELL_UNAVAILABLE));
    }
    if !cwd.exists() {
        return Err(ToolError::new(format!(
            "Working directory does not exist: {}\nCannot execute bash commands.",
            cwd.display()
        )));
    }
    let shell: PathBuf = match config.shell {
        Some(path) if path.exists() => path.to_path_buf(),
        Some(path) => {
            return Err(ToolError::new(format!(
                "Custom shell path not found: {}",
                path.display()
            )));
        }
        None if Path::new("/bin/bash").exists() => PathBuf::from("/bin/bash"),
        None => PathBuf::from("sh"),
    };
    let agent = config.agent_dir.map_or_else(agent_dir, Path::to_path_buf);
    let mut cmd = tokio::process::Command::new(&shell);
    cmd.arg("-c")
        .arg(command)
        .current_dir(cwd)
        .env_clear()
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped());
    if config.sandbox.is_some() {
        // The host's environment holds its secrets; a sandboxed shell gets what programs
        // need (`spawn_contained` adds the private `HOME` and `TMPDIR`).
        for key in DEFAULT_ENV_ALLOWLIST {
            if let Some(value) = std::env::var_os(key) {
                cmd.env(key, value);
            }
        }
    } else {
        cmd.envs(shell_env(&agent));
    }
    // The shell leads a new session and process group (Node's `detached: true`), so that
    // one `kill(-pid)` reaches everything it starts.
    let contained =
        spawn_contained(cmd, ProcessLeader::Session, config.sandbox.as_ref()).map_err(|error| {
            match error {
                SpawnError::Io(e) => ToolError::new(js::fs_error(
                    &e,
                    &format!("spawn {}", shell.display()),
                    None,
                )),
                SpawnError::Sandbox(e) => ToolError::new(e.to_string()),
                other => ToolError::new(other.to_string()),
            }
        })?;
    let (mut child, group) = (contained.child, contained.group);

    // Both pipes feed one channel, in arrival order; its bound keeps a flood's memory small.
    let (tx, mut rx) = mpsc::channel::<Vec<u8>>(8);
    let mut readers = Vec::new();
    if let Some(mut out) = child.stdout.take() {
        let tx = tx.clone();
        readers.push(tokio::spawn(async move { pump(&mut out, tx).await }));
    }
    if let Some(mut err) = child.stderr.take() {
        let tx = tx.clone();
        readers.push(tokio::spawn(async move { pump(&mut err, tx).await }));
    }
    drop(tx);

    let deadline = timeout.map(|t| Instant::now() + t);
    let wall_time = config.sandbox.as_ref().and_then(Sandbox::wall_time_limit);
    let wall_deadline = wall_time.map(|t| Instant::now() + t);
    let output_limit = config.sandbox.as_ref().and_then(Sandbox::output_limit);
    let mut output_bytes: u64 = 0;
    let mut limit_hit: Option<ExecEnd> = None;
    let mut timed_out = false;
    let mut aborted = false;
    let mut exit: Option<Option<i32>> = None;
    let mut exit_signal: Option<i32> = None;
    let mut pipes_closed = false;
    let mut idle_deadline: Option<Instant> = None;
    let mut last_update: Option<Instant> = None;
    let mut update_at: Option<Instant> = None;
    let far = || Instant::now() + Duration::from_secs(86_400 * 365);
    loop {
        if exit.is_some() && pipes_closed {
            break;
        }
        tokio::select! {
            chunk = rx.recv(), if !pipes_closed => match chunk {
                Some(data) => {
                    output_bytes += data.len() as u64;
                    if let Some(limit) = output_limit
                        && output_bytes > limit
                        && limit_hit.is_none()
                    {
                        limit_hit = Some(ExecEnd::OutputLimit(limit));
                        group.kill();
                    }
                    output.append(&data);
                    let now = Instant::now();
                    let due = last_update.map_or(now, |t| t + UPDATE_THROTTLE);
                    if due <= now {
                        update_at = None;
                        last_update = Some(now);
                        emit(on_update, output.snapshot(true));
                    } else if update_at.is_none() {
                        update_at = Some(due);
                    }
                    if exit.is_some() {
                        idle_deadline = Some(now + EXIT_STDIO_GRACE);
                    }
                }
                None => pipes_closed = true,
            },
            status = child.wait(), if exit.is_none() => {
                let status = status.ok();
                exit = Some(status.and_then(|s| s.code()));
                exit_signal = status.and_then(|s| s.signal());
                idle_deadline = Some(Instant::now() + EXIT_STDIO_GRACE);
            },
            () = tokio::time::sleep_until(idle_deadline.unwrap_or_else(far)), if exit.is_some() && idle_deadline.is_some() => break,
            () = tokio::time::sleep_until(update_at.unwrap_or_else(far)), if update_at.is_some() => {
                update_at = None;
                last_update = Some(Instant::now());
                emit(on_update, output.snapshot(true));
            },
            () = signal.token().cancelled(), if !aborted => {
                aborted = true;
                group.kill();
            },
            () = tokio::time::sleep_until(deadline.unwrap_or_else(far)), if deadline.is_some() && !timed_out => {
                timed_out = true;
                group.kill();
            },
            () = tokio::time::sleep_until(wall_deadline.unwrap_or_else(far)), if wall_deadline.is_some() && limit_hit.is_none() => {
                limit_hit = wall_time.map(ExecEnd::WallTime);
                group.kill();
            },
        }
    }
    for reader in readers {
        reader.abort();
    }
    // The shell is reaped; a background child keeps running, as in Pi. In the sandbox
    // it has already ended with the shell (its PID namespace), and the private
    // directory goes now.
    if config.sandbox.is_none() {
        group.release();
    }
    drop(child);
    let owed = update_at.is_some();
    if signal.is_aborted() || aborted {
        return Ok((ExecEnd::Aborted, owed));
    }
    if timed_out {
        return Ok((ExecEnd::TimedOut, owed));
    }
    if let Some(end) = limit_hit {
        return Ok((end, owed));
    }
    Ok((ExecEnd::Exited(exit.flatten(), exit_signal), owed))
}

async fn pump(pipe: &mut (impl tokio::io::AsyncRead + Unpin), tx: mpsc::Sender<Vec<u8>>) {
    let mut buf = vec![0u8; 64 * 1024];
    loop {
        match pipe.read(&mut buf).await {
            Ok(0) | Err(_) => return,
            Ok(n) => {
                if tx.send(buf[..n].to_vec()).await.is_err() {
                    return;
                }
            }
        }
    }
}
