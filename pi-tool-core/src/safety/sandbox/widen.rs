//! What a refusal asks for: a [`Widening`] of the profile for one call, and the rule that
//! bounds it.
//!
//! A write refused at a path asks for that path to be writable: the path itself when it
//! exists, else its nearest existing ancestor (a new file needs its directory), links
//! resolved, since the kernel grants physical paths. A refused read asks for the path
//! to be readable, a refused connection for the network. A Unix socket, a signal or a
//! system call asks for nothing: no profile allows them.
//!
//! **The rule.** A path is never widened when it is `/`, the host's home directory
//! (`$HOME`) or one of its ancestors (`/home`), or when it is, lies inside or contains a
//! path the host marked with [`Sandbox::never_widen`]. The rule is checked on the
//! physical path twice: when the widening is asked ([`Sandbox::widening_for`]) and when
//! it is applied to a re-run ([`Sandbox::for_current_call`]), so a host's approver cannot
//! grant past it.

use std::fmt;
use std::path::{Path, PathBuf};

use super::violation::{SandboxViolation, ViolationKind};
use super::{Sandbox, absolute};

/// One widening of a [`Sandbox`], asked for one call after the sandbox refused
/// something ([`Sandbox::widening_for`]).
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum Widening {
    /// Make this path (a directory with everything in it, or one file) writable, and
    /// readable.
    Write(PathBuf),
    /// Make this path readable (and its programs executable).
    Read(PathBuf),
    /// Turn the network on (TCP and UDP, IPv4 and IPv6; Unix sockets stay closed).
    Network,
}

impl fmt::Display for Widening {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Widening::Write(path) => write!(f, "make {} writable", path.display()),
            Widening::Read(path) => write!(f, "make {} readable", path.display()),
            Widening::Network => f.write_str("turn the network on"),
        }
    }
}

impl Sandbox {
    /// Marks `path` as never widened: no [`Widening`] is asked or applied for a path that
    /// is `path`, lies inside it or contains it (the module's rule, besides `/` and the
    /// host's home). For the host's secrets that sit next to the work: `~/.ssh`, a
    /// credentials directory, a sibling project.
    #[must_use]
    pub fn never_widen(mut self, path: impl AsRef<Path>) -> Self {
        let path = absolute(path.as_ref());
        if !self.never_widen.contains(&path) {
            self.never_widen.push(path);
        }
        self
    }

    /// The paths marked with [`never_widen`](Self::never_widen).
    pub fn never_widened(&self) -> &[PathBuf] {
        &self.never_widen
    }

    /// The widening `violation` asks for, within the rule (see [`Widening`]'s module):
    /// `None` when its kind cannot be widened, the rule refuses the path, or the
    /// profile already allows it.
    ///
    /// ```
    /// use pi_tool_core::safety::{Sandbox, SandboxViolation, Widening};
    ///
    /// let root = std::env::temp_dir().join("widening-doc/project");
    /// std::fs::create_dir_all(&root)?;
    /// let outside = root.parent().unwrap().to_path_buf();
    /// let sandbox = Sandbox::for_root(&root);
    /// let refused = SandboxViolation::find(
    ///     &format!("bash: {}/out.txt: Read-only file system", outside.display()),
    ///     None,
    ///     &sandbox,
    ///     &root,
    /// );
    /// // The file does not exist yet: its directory is what must become writable.
    /// let outside = std::fs::canonicalize(outside)?;
    /// assert_eq!(sandbox.widening_for(&refused[0]), Some(Widening::Write(outside.clone())));
    /// // A host that marked the directory never widened is never asked about it.
    /// assert_eq!(sandbox.never_widen(&outside).widening_for(&refused[0]), None);
    /// # Ok::<(), std::io::Error>(())
    /// ```
    pub fn widening_for(&self, violation: &SandboxViolation) -> Option<Widening> {
        match violation.kind {
            ViolationKind::Write => {
                let path = existing(violation.path.as_deref()?)?;
                (!self.writes(&path) && self.may_widen(&path)).then_some(Widening::Write(path))
            }
            ViolationKind::Read => {
                let path = existing(violation.path.as_deref()?)?;
                (!self.reads(&path) && self.may_widen(&path)).then_some(Widening::Read(path))
            }
            ViolationKind::Network => (!self.network).then_some(Widening::Network),
            _ => None,
        }
    }

    /// This profile with `widening` and nothing else, when the rule allows it; the
    /// profile unchanged when it does not.
    pub(super) fn widen(&self, widening: &Widening) -> Sandbox {
        match widening {
            Widening::Write(path) if self.may_widen(path) => self.clone().allow_write(path),
            Widening::Read(path) if self.may_widen(path) => self.clone().allow_read(path),
            Widening::Network => self.clone().network(true),
            _ => self.clone(),
        }
    }

    /// The rule: not `/`, not the host's home or an ancestor of it, nothing marked
    /// never widened (the path, what is inside it, what contains it).
    fn may_widen(&self, path: &Path) -> bool {
        let path = absolute(path);
        if path.parent().is_none() {
            return false;
        }
        if host_home().is_some_and(|home| home.starts_with(&path)) {
            return false;
        }
        !self
            .never_widen
            .iter()
            .any(|never| path.starts_with(never) || never.starts_with(&path))
    }
}

/// The host's home directory, physical; `None` when `$HOME` is unset or empty.
fn host_home() -> Option<PathBuf> {
    let home = std::env::var_os("HOME").filter(|home| !home.is_empty())?;
    Some(absolute(Path::new(&home)))
}

/// `path` when it exists, else its nearest existing ancestor; physical. `None` for a
/// relative path, which the classifier never gives.
fn existing(path: &Path) -> Option<PathBuf> {
    if !path.is_absolute() {
        return None;
    }
    path.ancestors()
        .find_map(|candidate| std::fs::canonicalize(candidate).ok())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn violation(kind: ViolationKind, path: Option<&Path>) -> SandboxViolation {
        SandboxViolation {
            kind,
            path: path.map(Path::to_path_buf),
        }
    }

    #[test]
    fn the_rule_bounds_what_a_refusal_may_ask() {
        let base = absolute(&std::env::temp_dir())
            .join(format!("pi-tool-widen-rule-{}", std::process::id()));
        let root = base.join("root");
        let outside = base.join("outside");
        std::fs::create_dir_all(&root).unwrap();
        std::fs::create_dir_all(outside.join("deep")).unwrap();
        std::fs::write(outside.join("file.txt"), "x").unwrap();
        let sandbox = Sandbox::for_root(&root);
        let write =
            |path: &Path| sandbox.widening_for(&violation(ViolationKind::Write, Some(path)));

        // A new file: its nearest existing directory. An existing file: the file.
        assert_eq!(
            write(&outside.join("new/dir/x.txt")),
            Some(Widening::Write(outside.clone()))
        );
        assert_eq!(
            write(&outside.join("file.txt")),
            Some(Widening::Write(outside.join("file.txt")))
        );
        // Already writable: nothing to ask.
        assert_eq!(write(&root.join("x")), None);
        // `/`, the home and its ancestors: never.
        assert_eq!(write(Path::new("/")), None);
        assert_eq!(write(Path::new("/no-such-top-level-dir/x")), None);
        if let Some(home) = host_home()
            && home.parent().is_some()
        {
            assert_eq!(write(&home), None);
            assert_eq!(write(home.parent().unwrap()), None);
        }
        // Marked: the path, what is inside it, what contains it.
        let marked = sandbox.clone().never_widen(outside.join("deep"));
        let asked = |path: &Path| marked.widening_for(&violation(ViolationKind::Write, Some(path)));
        assert_eq!(asked(&outside.join("deep")), None);
        assert_eq!(asked(&outside.join("deep/x")), None);
        assert_eq!(asked(&outside.join("new.txt")), None);
        assert_eq!(
            asked(&outside.join("file.txt")),
            Some(Widening::Write(outside.join("file.txt")))
        );
        // A link is judged by where it leads.
        let link = base.join("link-to-root-dir");
        let _ = std::fs::remove_file(&link);
        std::os::unix::fs::symlink("/", &link).unwrap();
        assert_eq!(write(&link.join("x")), None);

        // Reads, the network, and what no profile allows.
        assert_eq!(
            sandbox.widening_for(&violation(ViolationKind::Read, Some(&outside))),
            Some(Widening::Read(outside.clone()))
        );
        assert_eq!(
            sandbox.widening_for(&violation(ViolationKind::Read, Some(Path::new("/usr/bin")))),
            None
        );
        assert_eq!(
            sandbox.widening_for(&violation(ViolationKind::Network, None)),
            Some(Widening::Network)
        );
        assert_eq!(
            sandbox
                .clone()
                .network(true)
                .widening_for(&violation(ViolationKind::Network, None)),
            None
        );
        for kind in [
            ViolationKind::UnixSocket,
            ViolationKind::Signal,
            ViolationKind::SystemCall,
        ] {
            assert_eq!(sandbox.widening_for(&violation(kind, None)), None);
        }

        // Applying: exactly the widening, and never past the rule.
        let widened = sandbox.widen(&Widening::Write(outside.clone()));
        assert!(widened.writes(&outside.join("x")));
        assert!(!widened.allows_network());
        assert_eq!(widened.read_roots().len(), 2);
        assert_eq!(sandbox.widen(&Widening::Write("/".into())), sandbox);
        assert_eq!(marked.widen(&Widening::Read(outside.join("deep"))), marked);
        assert!(sandbox.widen(&Widening::Network).allows_network());
        assert_eq!(
            Widening::Write(outside.clone()).to_string(),
            format!("make {} writable", outside.display())
        );
        let _ = std::fs::remove_dir_all(base);
    }
}
