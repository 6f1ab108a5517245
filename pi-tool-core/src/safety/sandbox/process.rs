//! The one way pi-tool starts a process for a tool: [`Command`](crate::safety::Command),
//! `pi-tool-coding`'s `bash` and `pi-tool-mcp`'s stdio servers all spawn through
//! [`spawn_contained`], which puts the child at the head of its own process group (or
//! session), optionally inside a [`Sandbox`], and returns the [`ProcessGroup`] that kills
//! all of it.

use std::io;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU64, Ordering};

use super::kernel::{self, Prepared};
use super::{Sandbox, SandboxError};

/// What the child leads.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[non_exhaustive]
pub enum ProcessLeader {
    /// A new process group (`setpgid(0, 0)`): the child stays in the caller's session.
    Group,
    /// A new session, and so a new group (`setsid()`, Node's `detached: true`): the
    /// child also leaves the caller's controlling terminal.
    Session,
}

/// Why [`spawn_contained`] failed.
#[derive(Debug)]
#[non_exhaustive]
pub enum SpawnError {
    /// The program could not be started (not found, not executable, ...).
    Io(io::Error),
    /// The sandbox could not be enforced; nothing ran.
    Sandbox(SandboxError),
}

impl std::fmt::Display for SpawnError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            SpawnError::Io(error) => error.fmt(f),
            SpawnError::Sandbox(error) => error.fmt(f),
        }
    }
}

impl std::error::Error for SpawnError {}

/// A started child and the group it leads.
#[derive(Debug)]
#[non_exhaustive]
pub struct ContainedChild {
    /// The child.
    pub child: tokio::process::Child,
    /// Its process group: dropping it kills the group (and removes a sandbox's private
    /// directory), so keep it as long as the child may run.
    pub group: ProcessGroup,
}

/// A process group; [`kill`](Self::kill)ed on drop unless [`release`](Self::release)d.
///
/// Killing the group reaches every process that did not leave it. A sandboxed child
/// runs in its own PID namespace, and its end (or this kill) ends every process in that
/// namespace, including those that left the group with `setsid`. The group of a
/// sandboxed child also owns the sandbox's private directory, removed on drop.
#[derive(Debug)]
pub struct ProcessGroup {
    pgid: Option<i32>,
    private: Option<PrivateDir>,
}

impl ProcessGroup {
    /// The group led by the process `pid` (its pgid is its pid).
    pub fn led_by(pid: Option<u32>) -> Self {
        ProcessGroup {
            pgid: pid
                .and_then(|pid| i32::try_from(pid).ok())
                .filter(|&p| p > 0),
            private: None,
        }
    }

    /// The private temporary directory of a sandboxed child (its `TMPDIR`; `HOME` is
    /// `home` inside it).
    pub fn private_dir(&self) -> Option<&Path> {
        self.private.as_ref().map(|dir| dir.0.as_path())
    }

    /// The group's id.
    pub fn id(&self) -> Option<u32> {
        self.pgid.and_then(|pgid| u32::try_from(pgid).ok())
    }

    /// Sends `signal` (a `libc::SIG*` number) to every process of the group; a group
    /// that is already gone is not an error.
    pub fn signal(&self, signal: i32) {
        #[cfg(unix)]
        if let Some(pgid) = self.pgid {
            // SAFETY: kill(2) takes plain integers and touches no memory of ours. A
            // negative pid addresses the group `pgid`, which the child leads; ESRCH
            // (the group is gone) is fine.
            unsafe {
                libc::kill(-pgid, signal);
            }
        }
        #[cfg(not(unix))]
        let _ = signal;
    }

    /// Kills every process of the group (`SIGKILL`).
    pub fn kill(&self) {
        #[cfg(unix)]
        self.signal(libc::SIGKILL);
    }

    /// Gives up the group without killing it (what an unsandboxed `bash` does with its
    /// background jobs, as Pi's does).
    pub fn release(mut self) {
        self.pgid = None;
    }
}

impl Drop for ProcessGroup {
    fn drop(&mut self) {
        self.kill();
    }
}

/// The sandbox's private directory: `tmp` (`TMPDIR`) and `home` (`HOME`), removed with
/// everything in it when the call ends.
#[derive(Debug)]
struct PrivateDir(PathBuf);

impl PrivateDir {
    fn create() -> io::Result<Self> {
        static NEXT: AtomicU64 = AtomicU64::new(0);
        let base = std::fs::canonicalize(std::env::temp_dir())?;
        let mut builder = std::fs::DirBuilder::new();
        #[cfg(unix)]
        std::os::unix::fs::DirBuilderExt::mode(&mut builder, 0o700);
        // A directory of that name left by an earlier process with our pid (one that
        // crashed) is skipped, not reused: it is not ours to empty.
        let mut attempts = 0;
        let dir = loop {
            let n = NEXT.fetch_add(1, Ordering::Relaxed);
            let dir = base.join(format!("pi-sandbox-{}-{n}", std::process::id()));
            match builder.create(&dir) {
                Ok(()) => break dir,
                Err(error) if error.kind() == io::ErrorKind::AlreadyExists && attempts < 64 => {
                    attempts += 1;
                }
                Err(error) => return Err(error),
            }
        };
        let private = PrivateDir(dir);
        builder.create(private.0.join("tmp"))?;
        builder.create(private.0.join("home"))?;
        Ok(private)
    }
}

impl Drop for PrivateDir {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.0);
    }
}

/// Starts `command` as the leader of its own process group or session, inside
/// `sandbox` when one is given.
///
/// The caller sets up the program, arguments, environment, pipes and working directory;
/// with a sandbox, `TMPDIR`, `TMP`, `TEMP` and `HOME` are set to the private directory
/// and `PATH` keeps only the directories the sandbox can read.
/// `kill_on_drop` is turned on. The returned [`ProcessGroup`] kills the group when
/// dropped.
pub fn spawn_contained(
    mut command: tokio::process::Command,
    leader: ProcessLeader,
    sandbox: Option<&Sandbox>,
) -> Result<ContainedChild, SpawnError> {
    command.kill_on_drop(true);
    let mut private = None;
    let mut prepared = None;
    if let Some(sandbox) = sandbox {
        kernel::check(sandbox).map_err(SpawnError::Sandbox)?;
        let dir = if sandbox.private_tmp {
            let dir = PrivateDir::create()
                .map_err(|e| SpawnError::Sandbox(SandboxError::PrivateDir(e.to_string())))?;
            let tmp = dir.0.join("tmp");
            for key in ["TMPDIR", "TMP", "TEMP"] {
                command.env(key, &tmp);
            }
            command.env("HOME", dir.0.join("home"));
            Some(dir)
        } else {
            None
        };
        restrict_path(&mut command, sandbox);
        let cwd = match command.as_std().get_current_dir() {
            Some(dir) => std::path::absolute(dir),
            None => std::env::current_dir(),
        }
        .map_err(SpawnError::Io)?;
        prepared = Some(
            Prepared::new(sandbox, &cwd, dir.as_ref().map(|d| d.0.as_path()))
                .map_err(SpawnError::Sandbox)?,
        );
        private = dir;
    }
    apply(&mut command, leader, prepared);
    let child = command
        .spawn()
        .map_err(|error| match kernel::decode_spawn_error(&error) {
            Some(sandbox) => SpawnError::Sandbox(sandbox),
            None => SpawnError::Io(error),
        })?;
    let mut group = ProcessGroup::led_by(child.id());
    group.private = private;
    Ok(ContainedChild { child, group })
}

/// Keeps only the `PATH` entries the sandbox can read: a program found in another one
/// (a version manager's shims in the host's home) could not run, while the system's
/// copy can.
fn restrict_path(command: &mut tokio::process::Command, sandbox: &Sandbox) {
    let set = command
        .as_std()
        .get_envs()
        .find(|(key, _)| *key == "PATH")
        .map(|(_, value)| value.map(std::ffi::OsStr::to_os_string));
    let path = match set {
        Some(Some(path)) => path,
        Some(None) => return,
        None => match std::env::var_os("PATH") {
            Some(path) => path,
            None => return,
        },
    };
    let kept: Vec<PathBuf> = std::env::split_paths(&path)
        .filter(|dir| sandbox.reads(dir))
        .collect();
    if let Ok(joined) = std::env::join_paths(kept) {
        command.env("PATH", joined);
    }
}

#[cfg(unix)]
fn apply(command: &mut tokio::process::Command, leader: ProcessLeader, prepared: Option<Prepared>) {
    match leader {
        ProcessLeader::Group => {
            command.process_group(0);
        }
        ProcessLeader::Session => {
            // SAFETY: `setsid` is async-signal-safe and touches no memory of the parent.
            unsafe {
                command.pre_exec(|| {
                    if libc::setsid() == -1 {
                        return Err(io::Error::last_os_error());
                    }
                    Ok(())
                });
            }
        }
    }
    #[cfg(target_os = "linux")]
    if let Some(prepared) = prepared {
        // SAFETY: `enter` is async-signal-safe (system calls on what `Prepared` holds)
        // and meant for exactly this hook; it runs after the group or session above.
        unsafe {
            command.pre_exec(move || prepared.enter());
        }
    }
    #[cfg(not(target_os = "linux"))]
    let _ = prepared;
}

#[cfg(not(unix))]
fn apply(
    _command: &mut tokio::process::Command,
    _leader: ProcessLeader,
    _prepared: Option<Prepared>,
) {
}
