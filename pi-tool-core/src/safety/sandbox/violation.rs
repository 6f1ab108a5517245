//! What the sandbox refused, told to the model as what it is.
//!
//! The kernel refuses with an errno, which the program prints in its own words
//! (`bash: /tmp/x: Read-only file system`, `PermissionError: [Errno 13] Permission
//! denied: '/etc/x'`). A model that reads a bare "Permission denied" retries, or tries
//! `sudo`; one that reads "the sandbox refused a write outside the project root: /tmp/x"
//! writes inside the root or asks. [`SandboxViolation::find`] reads a sandboxed call's
//! output (and how it ended) for the errors only the sandbox produces there, each
//! classified by its errno's text and by where its path is relative to the profile:
//!
//! | the program says | with a path | the sandbox refused |
//! | --- | --- | --- |
//! | `Read-only file system` (EROFS, the read-only mount) | outside the write roots | a write |
//! | `Permission denied` (EACCES, Landlock) | outside the read roots | a read |
//! | `Permission denied` | readable, not writable | a write |
//! | `Network is unreachable` (no interface) or a refused TCP `connect` (Landlock's EACCES) | | a connection |
//! | `Address family not supported` (seccomp on `socket(AF_UNIX)`) | | a Unix socket |
//! | `kill` ... `No such process` (the PID namespace) | | a signal |
//! | killed by `SIGSYS` (seccomp) | | a system call |

use std::path::{Path, PathBuf};

use super::Sandbox;

/// What kind of action the sandbox refused.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum ViolationKind {
    /// A write, create, delete or metadata change outside the write roots.
    Write,
    /// A read outside the read roots and the system directories.
    Read,
    /// A network connection or datagram (the profile has no network).
    Network,
    /// A Unix socket (refused in every profile).
    UnixSocket,
    /// A signal to a process outside the sandbox.
    Signal,
    /// A system call the seccomp filter kills on.
    SystemCall,
}

/// One action the sandbox refused, as the model is told.
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub struct SandboxViolation {
    /// What was refused.
    pub kind: ViolationKind,
    /// The path involved, when there is one (as the program printed it, made absolute).
    pub path: Option<PathBuf>,
}

impl SandboxViolation {
    /// The sentence the model reads.
    pub fn message(&self) -> String {
        let path = self
            .path
            .as_ref()
            .map(|p| format!(": {}", p.display()))
            .unwrap_or_default();
        match self.kind {
            ViolationKind::Write => {
                format!("the sandbox refused a write outside the project root{path}")
            }
            ViolationKind::Read => format!(
                "the sandbox refused a read outside the project root and the system \
                 directories{path}"
            ),
            ViolationKind::Network => {
                "the sandbox refused a network connection: this call has no network".to_owned()
            }
            ViolationKind::UnixSocket => {
                "the sandbox refused a Unix socket: sockets are closed in the sandbox".to_owned()
            }
            ViolationKind::Signal => "the sandbox refused a signal: processes outside the \
                                      sandbox are not visible to it"
                .to_owned(),
            ViolationKind::SystemCall => {
                "the sandbox stopped a forbidden system call (SIGSYS)".to_owned()
            }
        }
    }
}

/// The violations `output` and the end `signal` show (what
/// [`SandboxViolation::find`] reports; `scope.rs` adds the reporting).
pub(super) fn classify(
    output: &str,
    signal: Option<i32>,
    sandbox: &Sandbox,
    cwd: &Path,
) -> Vec<SandboxViolation> {
    let mut found: Vec<SandboxViolation> = Vec::new();
    let mut push = |violation: SandboxViolation| {
        if !found.contains(&violation) {
            found.push(violation);
        }
    };
    for line in output.lines() {
        if line.contains("Read-only file system") {
            let path = path_in(line, cwd);
            if path.as_ref().is_none_or(|p| !sandbox.writes(p)) {
                push(SandboxViolation {
                    kind: ViolationKind::Write,
                    path,
                });
            }
        } else if line.contains("Permission denied") {
            if !sandbox.allows_network() && mentions_connect(line) {
                push(SandboxViolation {
                    kind: ViolationKind::Network,
                    path: None,
                });
            } else if let Some(path) = path_in(line, cwd) {
                let kind = if sandbox.reads(&path) {
                    if sandbox.writes(&path) {
                        continue;
                    }
                    ViolationKind::Write
                } else {
                    ViolationKind::Read
                };
                push(SandboxViolation {
                    kind,
                    path: Some(path),
                });
            }
        } else if !sandbox.allows_network()
            && (line.contains("Network is unreachable")
                || line.contains("Cannot assign requested address"))
        {
            push(SandboxViolation {
                kind: ViolationKind::Network,
                path: None,
            });
        } else if line.contains("Address family not supported") {
            push(SandboxViolation {
                kind: ViolationKind::UnixSocket,
                path: None,
            });
        } else if line.contains("kill") && line.contains("No such process") {
            push(SandboxViolation {
                kind: ViolationKind::Signal,
                path: None,
            });
        }
    }
    #[cfg(unix)]
    if signal == Some(libc::SIGSYS) {
        push(SandboxViolation {
            kind: ViolationKind::SystemCall,
            path: None,
        });
    }
    #[cfg(not(unix))]
    let _ = signal;
    found
}

impl std::fmt::Display for SandboxViolation {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.message())
    }
}

fn mentions_connect(line: &str) -> bool {
    let line = line.to_ascii_lowercase();
    ["connect", "socket", "network", "/dev/tcp", "/dev/udp"]
        .iter()
        .any(|word| line.contains(word))
}

/// The path an error line names: the first quoted one (`'/x'`, `"/x"`, `` `/x' ``), else
/// the `: `-separated field just before the error's text if it looks like a path, else
/// that field's last word if it is an absolute path.
fn path_in(line: &str, cwd: &Path) -> Option<PathBuf> {
    let quoted = ['\'', '"', '`', '‘', '“']
        .iter()
        .filter_map(|&open| {
            let start = line.find(open)? + open.len_utf8();
            let rest = &line[start..];
            let end = rest.find(['\'', '"', '’', '”'])?;
            Some(&rest[..end])
        })
        .find(|text| looks_like_path(text));
    let text = quoted.or_else(|| {
        let fields: Vec<&str> = line.split(": ").collect();
        let error = fields.iter().position(|field| {
            field.contains("Permission denied") || field.contains("Read-only file system")
        })?;
        let field = fields.get(error.checked_sub(1)?)?.trim();
        if looks_like_path(field) {
            return Some(field);
        }
        // dash and others put words first: `sh: 1: cannot create /tmp/x: ...`.
        let last = field.rsplit(' ').next()?;
        (last.starts_with('/') && looks_like_path(last)).then_some(last)
    })?;
    let path = Path::new(text);
    let joined = if path.is_absolute() {
        path.to_path_buf()
    } else {
        cwd.join(path)
    };
    // Lexically: `root/../x` is outside the root whatever the links say (the kernel
    // refused it, so it is not a link into the root).
    let mut normal = PathBuf::new();
    for component in joined.components() {
        match component {
            std::path::Component::ParentDir => {
                normal.pop();
            }
            std::path::Component::CurDir => {}
            other => normal.push(other),
        }
    }
    Some(normal)
}

fn looks_like_path(text: &str) -> bool {
    !text.is_empty()
        && !text.contains(' ')
        && (text.starts_with('/')
            || text.starts_with("./")
            || text.starts_with("../")
            || text.contains('/'))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn errors_are_classified_by_their_text_and_path() {
        let root = Path::new("/work/project");
        let sandbox = Sandbox::for_root(root);
        let find = |text: &str| SandboxViolation::find(text, None, &sandbox, root);
        let write = find("bash: /tmp/x: Read-only file system");
        assert_eq!(
            write[0].message(),
            "the sandbox refused a write outside the project root: /tmp/x"
        );
        let read = find("cat: /root/secret: Permission denied");
        assert_eq!(read[0].kind, ViolationKind::Read);
        let py = find("PermissionError: [Errno 13] Permission denied: '/usr/lib/x'");
        assert_eq!(py[0].kind, ViolationKind::Write);
        assert_eq!(py[0].path.as_deref(), Some(Path::new("/usr/lib/x")));
        let touch = find("touch: cannot touch '../x': Read-only file system");
        assert_eq!(touch[0].path.as_deref(), Some(Path::new("/work/x")));
        assert!(find("cat: ./own: Permission denied").is_empty());
        let dash = find("sh: 1: cannot create /tmp/x/y: Read-only file system");
        assert_eq!(dash[0].path.as_deref(), Some(Path::new("/tmp/x/y")));
        assert_eq!(
            find("curl: (7) Network is unreachable")[0].kind,
            ViolationKind::Network
        );
        let tcp = find(
            "/bin/bash: connect: Permission denied\n/bin/bash: line 1: /dev/tcp/127.0.0.1/80: Permission denied",
        );
        assert_eq!(tcp.len(), 1);
        assert_eq!(tcp[0].kind, ViolationKind::Network);
        assert_eq!(
            find("bash: kill: (123) - No such process")[0].kind,
            ViolationKind::Signal
        );
        assert!(find("all fine\n").is_empty());
    }
}
