//! A sandbox profile, and the one place that starts processes for tools: in their own
//! process group, optionally inside the profile, and killed with everything they
//! started when the call ends.
//!
//! A tool declares what it does to the world in its [`ToolAnnotations`]; a [`Sandbox`]
//! turns that declaration into rules the kernel enforces on the process the tool starts
//! and on everything that process starts in turn:
//!
//! - **Files.** The process may write only its *write roots* (the project root, unless
//!   the tool is `read_only`) and a private temporary directory and home created for the
//!   call (`TMPDIR`, `HOME`), and read only those, its *read roots*, and the system's
//!   program and library directories (`/usr`, `/bin`, `/lib*`, `/etc`, a few devices).
//! - **Network.** None unless the profile allows it (a tool that is `open_world`).
//!   Unix sockets are refused in both cases: a socket path reaches host services (a
//!   container daemon, an agent) that no file rule describes.
//! - **Processes.** The process sees only its own descendants, cannot signal or inspect
//!   any other, and none of them outlives the call.
//!
//! On Linux the profile is enforced with Landlock (files, TCP, signals, abstract
//! sockets), user, mount, PID, network and IPC namespaces (the rest of the file system
//! read-only, so that `chmod`, `chown` and `utime` on outside files fail too; a private
//! `/proc`; no network interface), seccomp (Unix sockets, mount and kernel-wide system
//! calls) and `PR_SET_NO_NEW_PRIVS`. `docs/sandbox.md` in the repository has the threat
//! model, what each mechanism covers and what stays open. On other platforms a call
//! with a profile is refused.
//!
//! Where the kernel lacks a mechanism a profile needs, the call is refused with a
//! [`SandboxError`] naming it, unless the host allowed running without it
//! ([`Sandbox::allow_missing`]).
//!
//! What the sandbox refuses is reported ([`SandboxViolation`]), and a host may turn a
//! refusal into a question: widen the profile for that one call ([`Widening`], within
//! the rule of [`Sandbox::widening_for`]) and run it again once ([`SandboxScope`]).

mod kernel;
mod process;
mod scope;
mod violation;
mod widen;

use std::path::{Path, PathBuf};
use std::time::Duration;

use crate::tool::ToolAnnotations;

pub use process::{ContainedChild, ProcessGroup, ProcessLeader, SpawnError, spawn_contained};
pub use scope::SandboxScope;
pub use violation::{SandboxViolation, ViolationKind};
pub use widen::Widening;

/// What a process started for a tool may do, enforced by the kernel (see the module
/// docs). Build one with [`Sandbox::for_root`] or [`Sandbox::from_annotations`], then
/// tighten or widen it explicitly.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Sandbox {
    write: Vec<PathBuf>,
    read: Vec<PathBuf>,
    network: bool,
    private_tmp: bool,
    wall_time: Option<Duration>,
    max_output_bytes: Option<u64>,
    missing_allowed: Vec<Mechanism>,
    never_widen: Vec<PathBuf>,
}

/// A kernel mechanism the Linux sandbox is built from.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum Mechanism {
    /// Landlock (Linux 5.13): which files may be read and written, TCP (ABI 4), signals
    /// and abstract Unix sockets (ABI 6).
    Landlock,
    /// User, mount, PID, network and IPC namespaces: the read-only rest of the file
    /// system, a private `/proc`, no network interface, no process outliving the call.
    Namespaces,
    /// A seccomp filter: Unix sockets, mounts, io_uring, kernel keyrings and the other
    /// system calls a tool's process has no business making.
    Seccomp,
}

impl Mechanism {
    /// The mechanism's name, as errors give it.
    pub fn name(self) -> &'static str {
        match self {
            Mechanism::Landlock => "Landlock",
            Mechanism::Namespaces => "user, mount, PID and network namespaces",
            Mechanism::Seccomp => "seccomp",
        }
    }
}

impl std::fmt::Display for Mechanism {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.name())
    }
}

/// Why a process could not be started inside a [`Sandbox`].
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub enum SandboxError {
    /// The kernel lacks a mechanism the profile needs (and the host did not allow
    /// running without it).
    Missing {
        /// The mechanism.
        mechanism: Mechanism,
        /// What the kernel said, or what is absent.
        detail: String,
    },
    /// This platform has no sandbox backend.
    Unsupported,
    /// A step of setting the sandbox up failed in the child.
    Setup {
        /// The step (`unshare`, `mount`, `landlock`, ...).
        step: &'static str,
        /// The OS error of that step.
        error: String,
    },
    /// The private temporary directory could not be created.
    PrivateDir(String),
}

impl std::fmt::Display for SandboxError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            SandboxError::Missing { mechanism, detail } => write!(
                f,
                "the sandbox cannot be enforced: the kernel lacks {mechanism} ({detail}); \
                 the call was refused"
            ),
            SandboxError::Unsupported => f.write_str(
                "the sandbox cannot be enforced on this platform (only Linux has a backend); \
                 the call was refused",
            ),
            SandboxError::Setup { step, error } => write!(
                f,
                "the sandbox could not be set up ({step}: {error}); the call was refused"
            ),
            SandboxError::PrivateDir(error) => write!(
                f,
                "the sandbox's private temporary directory could not be created ({error}); \
                 the call was refused"
            ),
        }
    }
}

impl std::error::Error for SandboxError {}

/// The system's program and library directories, readable (and executable) in every
/// profile, where they exist.
pub const SYSTEM_READ_DIRS: &[&str] = &[
    "/usr", "/bin", "/sbin", "/lib", "/lib32", "/lib64", "/libx32", "/etc", "/opt",
];

impl Sandbox {
    /// Write and read `root`, a private temporary directory and home, read the system
    /// directories, no network: what a command working on one project needs.
    pub fn for_root(root: impl AsRef<Path>) -> Self {
        let root = absolute(root.as_ref());
        Sandbox {
            write: vec![root.clone()],
            read: vec![root],
            network: false,
            private_tmp: true,
            wall_time: None,
            max_output_bytes: None,
            missing_allowed: Vec::new(),
            never_widen: Vec::new(),
        }
    }

    /// The profile a tool's declared effects call for, over the host's `root`: a
    /// `read_only` tool gets no write root (its private temporary directory stays
    /// writable: compilers and interpreters need one), an `open_world` tool gets the
    /// network, anything else is [`for_root`](Self::for_root). Undeclared effects are
    /// read as MCP reads them (`read_only` absent is `false`), except `open_world`:
    /// absent means no network, so that the network is always asked for.
    pub fn from_annotations(annotations: &ToolAnnotations, root: impl AsRef<Path>) -> Self {
        let mut sandbox = Sandbox::for_root(root);
        if annotations.read_only == Some(true) {
            sandbox.write.clear();
        }
        sandbox.network = annotations.open_world == Some(true);
        sandbox
    }

    /// Adds a directory (or file) the process may write, and read.
    #[must_use]
    pub fn allow_write(mut self, path: impl AsRef<Path>) -> Self {
        let path = absolute(path.as_ref());
        if !self.read.contains(&path) {
            self.read.push(path.clone());
        }
        if !self.write.contains(&path) {
            self.write.push(path);
        }
        self
    }

    /// Adds a directory (or file) the process may read and execute.
    #[must_use]
    pub fn allow_read(mut self, path: impl AsRef<Path>) -> Self {
        let path = absolute(path.as_ref());
        if !self.read.contains(&path) {
            self.read.push(path);
        }
        self
    }

    /// Takes every write root away: nothing but the private temporary directory can be
    /// written (what `read_only` means).
    #[must_use]
    pub fn read_only(mut self) -> Self {
        self.write.clear();
        self
    }

    /// Whether the process may use the network (TCP, UDP, IPv4 and IPv6; never Unix
    /// sockets).
    #[must_use]
    pub fn network(mut self, allowed: bool) -> Self {
        self.network = allowed;
        self
    }

    /// Whether the process gets a private temporary directory and home (`TMPDIR`,
    /// `HOME`), created for the call and removed after it (the default).
    #[must_use]
    pub fn private_tmp(mut self, enabled: bool) -> Self {
        self.private_tmp = enabled;
        self
    }

    /// The longest a call may run; the runner kills it after that (whatever shorter
    /// timeout the call itself asks for still applies).
    #[must_use]
    pub fn wall_time(mut self, limit: Duration) -> Self {
        self.wall_time = Some(limit);
        self
    }

    /// The most output (stdout and stderr together) a call may produce; the runner
    /// kills it past that.
    #[must_use]
    pub fn max_output_bytes(mut self, limit: u64) -> Self {
        self.max_output_bytes = Some(limit);
        self
    }

    /// Runs without `mechanism` where the kernel lacks it, instead of refusing the call:
    /// an explicit, weaker profile.
    #[must_use]
    pub fn allow_missing(mut self, mechanism: Mechanism) -> Self {
        if !self.missing_allowed.contains(&mechanism) {
            self.missing_allowed.push(mechanism);
        }
        self
    }

    /// The roots the process may write.
    pub fn write_roots(&self) -> &[PathBuf] {
        &self.write
    }

    /// The roots the process may read, besides [`SYSTEM_READ_DIRS`] and the private
    /// directory.
    pub fn read_roots(&self) -> &[PathBuf] {
        &self.read
    }

    /// Whether the process may use the network.
    pub fn allows_network(&self) -> bool {
        self.network
    }

    /// The wall-time limit, if any.
    pub fn wall_time_limit(&self) -> Option<Duration> {
        self.wall_time
    }

    /// The output limit, if any.
    pub fn output_limit(&self) -> Option<u64> {
        self.max_output_bytes
    }

    /// Whether the host allowed running without `mechanism`.
    pub fn allows_missing(&self, mechanism: Mechanism) -> bool {
        self.missing_allowed.contains(&mechanism)
    }

    /// Checks that this kernel can enforce the profile: `Ok` when every mechanism it
    /// needs is there or was allowed to be missing. Spawning checks this too.
    pub fn check(&self) -> Result<(), SandboxError> {
        kernel::check(self)
    }

    /// Whether `path` is inside a write root.
    fn writes(&self, path: &Path) -> bool {
        self.write.iter().any(|root| path.starts_with(root))
    }

    /// Whether `path` is inside a read root or a system directory.
    fn reads(&self, path: &Path) -> bool {
        self.read.iter().any(|root| path.starts_with(root))
            || SYSTEM_READ_DIRS.iter().any(|dir| path.starts_with(dir))
    }
}

/// The physical path of `path` (links resolved) when it exists, else its absolute form:
/// the kernel compares physical paths.
fn absolute(path: &Path) -> PathBuf {
    std::fs::canonicalize(path)
        .or_else(|_| std::path::absolute(path))
        .unwrap_or_else(|_| path.to_path_buf())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn declared_effects_give_the_profile() {
        let root = std::env::temp_dir();
        let root = absolute(&root);
        let plain = Sandbox::from_annotations(&ToolAnnotations::NONE, &root);
        assert_eq!(plain.write_roots(), std::slice::from_ref(&root));
        assert!(!plain.allows_network());
        let read_only = Sandbox::from_annotations(&ToolAnnotations::new().read_only(true), &root);
        assert!(read_only.write_roots().is_empty());
        assert_eq!(read_only.read_roots(), std::slice::from_ref(&root));
        let open = Sandbox::from_annotations(&ToolAnnotations::new().open_world(true), &root);
        assert!(open.allows_network());
        let widened = plain.clone().allow_write("/var/tmp").network(true);
        assert!(widened.writes(Path::new("/var/tmp/x")));
        assert!(widened.allows_network());
        assert!(plain.reads(Path::new("/usr/bin/env")));
        assert!(!plain.reads(Path::new("/root/.ssh/id_ed25519")));
    }
}
