//! A stdio MCP server: a child process with a fixed program and argument array, its own
//! process group, and our own line framing on its pipes.
//!
//! Why not rmcp's `AsyncRwTransport`: it drops an oversized line and ignores a line
//! that is not JSON, so a call whose answer was one of those waits for its timeout. MCP
//! says a stdio server "MUST NOT write anything to its stdout that is not a valid MCP
//! message"; here a line that breaks that, or one longer than the limit, ends the
//! connection at once, and every call waiting on it fails with the reason.
//!
//! The child starts from an empty environment plus
//! [`DEFAULT_ENV_ALLOWLIST`](pi_tool_core::safety::DEFAULT_ENV_ALLOWLIST) and what the
//! host adds, so host secrets in variables do not reach a server nobody vetted. Its
//! stderr is read all along (a full pipe would block it); the last
//! [`STDERR_TAIL_BYTES`] are kept for error messages.
//!
//! Shutdown is MCP's: close stdin, wait, `SIGTERM`, wait, `SIGKILL` (to the whole process
//! group, so what the server started goes too). Dropping the connection kills the group
//! at once. The child is started, and its group killed, by
//! [`spawn_contained`](pi_tool_core::safety::spawn_contained), optionally inside a
//! [`Sandbox`](pi_tool_core::safety::Sandbox) (`McpServer::sandbox`): then the server is
//! PID 1 of its own PID namespace, which a `SIGTERM` from outside does not end unless it
//! handles it; the `SIGKILL` that follows does, with everything it started.

use std::collections::VecDeque;
use std::ffi::OsString;
use std::path::PathBuf;
use std::process::Stdio;
use std::sync::{Arc, Mutex, PoisonError};
use std::time::Duration;

use pi_tool_core::safety::{ProcessGroup, ProcessLeader, Sandbox, SpawnError, spawn_contained};
use rmcp::RoleClient;
use rmcp::service::{RxJsonRpcMessage, TxJsonRpcMessage};
use rmcp::transport::Transport;
use tokio::io::{AsyncBufReadExt, AsyncReadExt, AsyncWriteExt, BufReader};
use tokio::process::{Child, ChildStdin, ChildStdout};

use super::closed::CloseReason;
use super::handler::Shared;

/// Bytes of a server's stderr kept for error messages.
pub(crate) const STDERR_TAIL_BYTES: usize = 2048;

/// What starts a stdio server.
#[derive(Debug, Clone)]
pub(crate) struct StdioCommand {
    pub(crate) program: OsString,
    pub(crate) args: Vec<OsString>,
    pub(crate) env: Vec<(OsString, OsString)>,
    pub(crate) inherit: Vec<OsString>,
    pub(crate) inherit_all: bool,
    pub(crate) current_dir: Option<PathBuf>,
    pub(crate) sandbox: Option<Sandbox>,
}

impl StdioCommand {
    pub(crate) fn display(&self) -> String {
        std::iter::once(&self.program)
            .chain(&self.args)
            .map(|a| a.to_string_lossy().into_owned())
            .collect::<Vec<_>>()
            .join(" ")
    }
}

/// The running child: its process group is killed on drop.
pub(crate) struct StdioChild {
    child: tokio::sync::Mutex<Child>,
    group: ProcessGroup,
    stderr_tail: Arc<Mutex<VecDeque<u8>>>,
}

impl std::fmt::Debug for StdioChild {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("StdioChild")
            .field("pgid", &self.group.id())
            .finish()
    }
}

/// Starts the server; the transport speaks on its pipes.
pub(crate) fn spawn(
    command: &StdioCommand,
    max_message_bytes: usize,
    reason: CloseReason,
    shared: Arc<Shared>,
) -> Result<(Arc<StdioChild>, StdioTransport), SpawnError> {
    let mut cmd = tokio::process::Command::new(&command.program);
    cmd.args(&command.args)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped());
    if !command.inherit_all {
        cmd.env_clear();
        let allowed = pi_tool_core::safety::DEFAULT_ENV_ALLOWLIST
            .iter()
            .map(OsString::from)
            .chain(command.inherit.iter().cloned());
        for key in allowed {
            if let Some(value) = std::env::var_os(&key) {
                cmd.env(key, value);
            }
        }
    }
    for (key, value) in &command.env {
        cmd.env(key, value);
    }
    if let Some(dir) = &command.current_dir {
        cmd.current_dir(dir);
    }
    let contained = spawn_contained(cmd, ProcessLeader::Group, command.sandbox.as_ref())?;
    let (mut child, group) = (contained.child, contained.group);
    let missing = || SpawnError::Io(std::io::Error::other("the child's pipes were not created"));
    let stdin = child.stdin.take().ok_or_else(missing)?;
    let stdout = child.stdout.take().ok_or_else(missing)?;
    let stderr = child.stderr.take().ok_or_else(missing)?;
    let stderr_tail = Arc::new(Mutex::new(VecDeque::with_capacity(STDERR_TAIL_BYTES)));
    let tail = stderr_tail.clone();
    tokio::spawn(async move {
        let mut stderr = stderr;
        let mut chunk = [0u8; 4096];
        while let Ok(n) = stderr.read(&mut chunk).await {
            if n == 0 {
                break;
            }
            tracing::debug!(
                target: "pi_tool_mcp::client",
                "server stderr: {}",
                String::from_utf8_lossy(&chunk[..n]).trim_end()
            );
            let mut tail = tail.lock().unwrap_or_else(PoisonError::into_inner);
            tail.extend(&chunk[..n]);
            let excess = tail.len().saturating_sub(STDERR_TAIL_BYTES);
            tail.drain(..excess);
        }
    });
    let child = Arc::new(StdioChild {
        child: tokio::sync::Mutex::new(child),
        group,
        stderr_tail,
    });
    let transport = StdioTransport {
        stdin: Arc::new(tokio::sync::Mutex::new(Some(stdin))),
        stdout: BufReader::with_capacity(64 * 1024, stdout),
        line: Vec::new(),
        max_message_bytes,
        reason,
        child: child.clone(),
        shared,
    };
    Ok((child, transport))
}

impl StdioChild {
    /// The process id.
    pub(crate) fn pid(&self) -> Option<u32> {
        self.group.id()
    }

    /// The end of the server's stderr, for error messages (empty when it wrote none).
    pub(crate) fn stderr_tail(&self) -> String {
        let tail = self
            .stderr_tail
            .lock()
            .unwrap_or_else(PoisonError::into_inner);
        let bytes: Vec<u8> = tail.iter().copied().collect();
        String::from_utf8_lossy(&bytes).trim().to_owned()
    }

    /// How the process ended, waiting up to `wait` for it; `None` while it runs.
    pub(crate) async fn exit_status(&self, wait: Duration) -> Option<std::process::ExitStatus> {
        let mut child = self.child.lock().await;
        tokio::time::timeout(wait, child.wait())
            .await
            .ok()
            .and_then(Result::ok)
    }

    /// MCP's shutdown after stdin was closed: wait `grace` for the server to exit, then
    /// `SIGTERM`, wait `grace`, then `SIGKILL` (always, to the group: the server's own
    /// children go too).
    pub(crate) async fn shutdown(&self, grace: Duration) {
        if self.exit_status(grace).await.is_none() {
            #[cfg(unix)]
            self.group.signal(libc::SIGTERM);
            let _ = self.exit_status(grace).await;
        }
        self.kill();
        let _ = self.exit_status(grace).await;
    }

    /// Kills the process group now.
    pub(crate) fn kill(&self) {
        self.group.kill();
        if let Ok(mut child) = self.child.try_lock() {
            let _ = child.start_kill();
        }
    }
}

impl Drop for StdioChild {
    fn drop(&mut self) {
        self.kill();
    }
}

/// JSON-RPC over the child's pipes, one message a line (see the module docs).
pub(crate) struct StdioTransport {
    stdin: Arc<tokio::sync::Mutex<Option<ChildStdin>>>,
    stdout: BufReader<ChildStdout>,
    line: Vec<u8>,
    max_message_bytes: usize,
    reason: CloseReason,
    child: Arc<StdioChild>,
    shared: Arc<Shared>,
}

/// The one message read here rather than by rmcp: a progress notification goes
/// straight to its call. A server may send thousands a second; through rmcp each would
/// be parsed as any server message and handled on a task of its own.
#[derive(serde::Deserialize)]
struct Progress {
    method: String,
    params: rmcp::model::ProgressNotificationParam,
}

/// A progress notification, if `line` is one.
fn progress(line: &[u8]) -> Option<rmcp::model::ProgressNotificationParam> {
    const METHOD: &[u8] = b"notifications/progress";
    if !line.windows(METHOD.len()).any(|w| w == METHOD) {
        return None;
    }
    serde_json::from_slice::<Progress>(line)
        .ok()
        .filter(|p| p.method == "notifications/progress")
        .map(|p| p.params)
}

/// What reading one line gave.
enum Line {
    Complete,
    Eof,
    TooLong,
    Failed(std::io::Error),
}

impl StdioTransport {
    /// Reads one line into `self.line` (without its newline), never buffering more than
    /// the limit. Cancel safe: a partial line stays in `self.line`.
    async fn read_line(&mut self) -> Line {
        loop {
            let available = match self.stdout.fill_buf().await {
                Ok([]) => return Line::Eof,
                Ok(available) => available,
                Err(error) => return Line::Failed(error),
            };
            let (taken, complete) = match available.iter().position(|&b| b == b'\n') {
                Some(at) => (at, true),
                None => (available.len(), false),
            };
            if self.line.len() + taken > self.max_message_bytes {
                return Line::TooLong;
            }
            self.line.extend_from_slice(&available[..taken]);
            self.stdout.consume(taken + usize::from(complete));
            if complete {
                return Line::Complete;
            }
        }
    }

    async fn exited(&self) -> String {
        let status = match self.child.exit_status(Duration::from_millis(500)).await {
            Some(status) => format!("the server process exited ({status})"),
            None => "the server closed its stdout".to_owned(),
        };
        let stderr = self.child.stderr_tail();
        if stderr.is_empty() {
            status
        } else {
            format!("{status}; the end of its stderr: {stderr}")
        }
    }
}

impl Transport<RoleClient> for StdioTransport {
    type Error = std::io::Error;

    fn send(
        &mut self,
        item: TxJsonRpcMessage<RoleClient>,
    ) -> impl Future<Output = Result<(), Self::Error>> + Send + 'static {
        let stdin = self.stdin.clone();
        async move {
            let mut line = serde_json::to_vec(&item)?;
            line.push(b'\n');
            let mut stdin = stdin.lock().await;
            let Some(pipe) = stdin.as_mut() else {
                return Err(std::io::Error::new(
                    std::io::ErrorKind::NotConnected,
                    "the server's stdin is closed",
                ));
            };
            pipe.write_all(&line).await?;
            pipe.flush().await
        }
    }

    async fn receive(&mut self) -> Option<RxJsonRpcMessage<RoleClient>> {
        loop {
            match self.read_line().await {
                Line::Complete => {}
                Line::Eof => {
                    let why = self.exited().await;
                    self.reason.set(why);
                    return None;
                }
                Line::TooLong => {
                    self.reason.set(format!(
                        "the server sent a message longer than {} bytes (the client's \
                         max_message_bytes); the connection was closed",
                        self.max_message_bytes
                    ));
                    self.child.kill();
                    // Reaped now, not left a zombie until the connection drops.
                    let _ = self.child.exit_status(Duration::from_millis(500)).await;
                    return None;
                }
                Line::Failed(error) => {
                    self.reason
                        .set(format!("reading the server's stdout failed: {error}"));
                    return None;
                }
            }
            let text = self.line.strip_suffix(b"\r").unwrap_or(&self.line);
            if text.iter().all(u8::is_ascii_whitespace) {
                self.line.clear();
                continue;
            }
            if let Some(params) = progress(text) {
                self.line.clear();
                self.shared.deliver_progress(params);
                continue;
            }
            let parsed =
                serde_json::from_slice::<RxJsonRpcMessage<RoleClient>>(text).map_err(|error| {
                    let start: String = String::from_utf8_lossy(text).chars().take(80).collect();
                    (error, start)
                });
            self.line.clear();
            match parsed {
                Ok(message) => return Some(message),
                Err((error, start)) => {
                    self.reason.set(format!(
                        "the server wrote a line to stdout that is not a JSON-RPC message \
                         ({error}; it starts {start:?}); the connection was closed"
                    ));
                    self.child.kill();
                    let _ = self.child.exit_status(Duration::from_millis(500)).await;
                    return None;
                }
            }
        }
    }

    async fn close(&mut self) -> Result<(), Self::Error> {
        drop(self.stdin.lock().await.take());
        Ok(())
    }
}
