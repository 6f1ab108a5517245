//! Paths the model names: resolve an existing file or directory inside a project root.
//!
//! The model's `path` argument is text it chose. Joining it to the working directory and
//! opening the result lets it read `/etc/passwd` (absolute input), `../../.ssh/id_rsa`
//! (`..` chains) or anything a symlink inside the project points at. Pi's custom-tool page's
//! `resolveExistingPathInsideRoot` answers this by resolving *both* the root and the
//! target with `realpath` and checking containment of the physical paths; this module is
//! that function in Rust, plus the checks a byte-level language needs (empty input, NUL
//! bytes, a length cap) and one more protection: a failed resolution never tells the
//! model whether a path *outside* the root exists.
//!
//! The error texts are Pi's custom-tool page's (`Path must be project-relative`, `Path leaves the
//! project root`) and never contain the absolute root: the model learns nothing about
//! the host's filesystem layout from them.
//!
//! # Time of check, time of use
//!
//! As Pi's custom-tool page says, this handles symlinks to existing targets but does not remove the
//! race between the check and the later open on a filesystem shared with a hostile
//! actor: someone who can write inside the root can swap a checked directory for a
//! symlink after the check. Against that threat model use an OS sandbox or
//! descriptor-relative filesystem APIs (`openat2` with `RESOLVE_BENEATH`); this helper is
//! the right tool when the model is the untrusted party and the filesystem is not.

use std::io;
use std::ops::Deref;
use std::path::{Component, Path, PathBuf};

use crate::error::ToolError;

/// Inputs longer than this are refused before touching the filesystem (Linux `PATH_MAX`
/// is 4096 bytes; nothing legitimate is longer, and the cap bounds the work per call).
pub const MAX_PATH_INPUT_BYTES: usize = 4096;

/// The model-visible texts, mirroring Pi's custom-tool page's `Error` messages. The three that name
/// the root are these for an unnamed [`PathRoot`], and say the caller's name otherwise.
pub(super) const NOT_RELATIVE: &str = "Path must be project-relative";
pub(super) const ESCAPES: &str = "Path leaves the project root";
pub(super) const MISSING: &str = "Path does not exist";
const EMPTY: &str = "Path must not be empty";
const NUL: &str = "Path must not contain NUL bytes";
const TOO_LONG: &str = "Path is too long";
pub(super) const UNRESOLVABLE: &str = "Path could not be resolved";
pub(super) const DENIED: &str = "Permission denied for path";
const ROOT_UNAVAILABLE: &str = "Project root is not accessible";

/// The directory a tool's paths must stay in, and the name its errors give it.
///
/// The free functions of this module check against an unnamed root, whose errors say
/// "project root" (`Path leaves the project root`). A tool whose root is something else
/// names it, and the model reads that name: `PathRoot::new(dir).named("notes directory")`
/// answers `Path leaves the notes directory`, `Path must be relative to the notes
/// directory` and `The notes directory is not accessible`. The name is shown to the model;
/// the directory never is.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PathRoot {
    dir: PathBuf,
    name: Option<String>,
}

impl PathRoot {
    /// The root `dir` (resolved through its symlinks at each check), unnamed.
    pub fn new(dir: impl Into<PathBuf>) -> PathRoot {
        PathRoot {
            dir: dir.into(),
            name: None,
        }
    }

    /// Names the root in error texts: a noun phrase read after "the", such as
    /// `"notes directory"` or `"workspace"`.
    pub fn named(mut self, name: impl Into<String>) -> PathRoot {
        self.name = Some(name.into());
        self
    }

    /// The directory as given.
    pub fn dir(&self) -> &Path {
        &self.dir
    }

    /// [`resolve_existing_path_inside_root`] against this root, with its name in errors.
    pub async fn resolve_existing(&self, input: &str) -> Result<ResolvedPath, ToolError> {
        self.check_input(input)?;
        let root = self.clone();
        let input = input.to_owned();
        tokio::task::spawn_blocking(move || root.resolve_checked(&input))
            .await
            .map_err(|_| ToolError::new(UNRESOLVABLE))?
    }

    /// [`resolve_existing_path_inside_root_sync`] against this root, with its name in errors.
    pub fn resolve_existing_sync(&self, input: &str) -> Result<ResolvedPath, ToolError> {
        self.check_input(input)?;
        self.resolve_checked(input)
    }

    pub(super) fn not_relative(&self) -> ToolError {
        match &self.name {
            None => ToolError::new(NOT_RELATIVE),
            Some(name) => ToolError::new(format!("Path must be relative to the {name}")),
        }
    }

    pub(super) fn escapes(&self) -> ToolError {
        match &self.name {
            None => ToolError::new(ESCAPES),
            Some(name) => ToolError::new(format!("Path leaves the {name}")),
        }
    }

    fn root_unavailable(&self) -> ToolError {
        match &self.name {
            None => ToolError::new(ROOT_UNAVAILABLE),
            Some(name) => ToolError::new(format!("The {name} is not accessible")),
        }
    }

    /// The root's physical path.
    pub(super) fn canonical(&self) -> Result<PathBuf, ToolError> {
        std::fs::canonicalize(&self.dir).map_err(|_| self.root_unavailable())
    }

    /// The checks that need no filesystem access.
    pub(super) fn check_input(&self, input: &str) -> Result<(), ToolError> {
        if input.is_empty() {
            return Err(ToolError::new(EMPTY));
        }
        if input.len() > MAX_PATH_INPUT_BYTES {
            return Err(ToolError::new(TOO_LONG));
        }
        if input.contains('\0') {
            return Err(ToolError::new(NUL));
        }
        let path = Path::new(input);
        // `has_root` also catches Windows' `\x` (rooted, not absolute); a prefix catches
        // `C:x` (drive-relative, not absolute either, but not project-relative).
        let prefixed = path
            .components()
            .any(|component| matches!(component, Component::Prefix(_)));
        if path.is_absolute() || path.has_root() || prefixed {
            return Err(self.not_relative());
        }
        Ok(())
    }

    fn resolve_checked(&self, input: &str) -> Result<ResolvedPath, ToolError> {
        let root = self.canonical()?;
        let joined = root.join(input);
        match std::fs::canonicalize(&joined) {
            Ok(path) if path.starts_with(&root) => Ok(ResolvedPath { root, path }),
            Ok(_) => Err(self.escapes()),
            Err(error) => Err(self.unresolved(&root, &joined, &error)),
        }
    }

    /// The error for a target that could not be resolved. When the deepest resolvable
    /// ancestor of the target is outside the root, the answer is "leaves the project root"
    /// whatever the error was, so that `../../etc/x` cannot be used to probe which files
    /// exist outside the project. (A dangling symlink the host placed inside the root still
    /// answers "does not exist": its target is not followed, since the kernel cannot.)
    pub(super) fn unresolved(&self, root: &Path, joined: &Path, error: &io::Error) -> ToolError {
        if deepest_resolvable_ancestor_escapes(root, joined) {
            return self.escapes();
        }
        let message = match error.kind() {
            io::ErrorKind::NotFound => MISSING,
            io::ErrorKind::PermissionDenied => DENIED,
            // ENOTDIR (`file.txt/x`) names no existing path either.
            _ if is_not_a_directory(error) => MISSING,
            _ => UNRESOLVABLE,
        };
        ToolError::new(message)
    }
}

/// An existing path, resolved through every symlink, that lies inside its root.
///
/// Dereferences to the absolute physical [`Path`], so it can be handed to `std::fs` or
/// `tokio::fs` directly. Show the model [`relative`](Self::relative), never the absolute
/// path: the root is host information.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ResolvedPath {
    pub(super) root: PathBuf,
    pub(super) path: PathBuf,
}

impl ResolvedPath {
    /// The absolute physical path of the target.
    pub fn path(&self) -> &Path {
        &self.path
    }

    /// The physical (canonical) root the target was checked against.
    pub fn root(&self) -> &Path {
        &self.root
    }

    /// The target relative to the root (empty for the root itself); safe to show the model.
    pub fn relative(&self) -> &Path {
        // Containment was checked when the value was built, so the prefix is there.
        self.path.strip_prefix(&self.root).unwrap_or(Path::new(""))
    }

    /// The absolute physical path, by value.
    pub fn into_path_buf(self) -> PathBuf {
        self.path
    }
}

impl Deref for ResolvedPath {
    type Target = Path;
    fn deref(&self) -> &Path {
        &self.path
    }
}

impl AsRef<Path> for ResolvedPath {
    fn as_ref(&self) -> &Path {
        &self.path
    }
}

/// Resolves `input`, a path the model gave, to an existing path inside `cwd`
/// (Pi's custom-tool page's `resolveExistingPathInsideRoot`).
///
/// Refuses empty input, NUL bytes, inputs over [`MAX_PATH_INPUT_BYTES`], absolute or
/// rooted input (`/x`, `C:\x`, `\x`, `C:x`), targets that do not exist, and targets whose
/// physical path (after every symlink and `..`) is outside the physical root. Errors are
/// [`ToolError`]s with model-safe messages. See the module docs for the TOCTOU caveat.
/// [`PathRoot`] does the same with the root's name of your choice in the errors.
///
/// The filesystem work runs on tokio's blocking pool.
pub async fn resolve_existing_path_inside_root(
    cwd: impl AsRef<Path>,
    input: &str,
) -> Result<ResolvedPath, ToolError> {
    // One blocking task for the whole walk instead of one per canonicalize call.
    PathRoot::new(cwd.as_ref()).resolve_existing(input).await
}

/// The blocking variant of [`resolve_existing_path_inside_root`], for synchronous code.
pub fn resolve_existing_path_inside_root_sync(
    cwd: impl AsRef<Path>,
    input: &str,
) -> Result<ResolvedPath, ToolError> {
    PathRoot::new(cwd.as_ref()).resolve_existing_sync(input)
}

pub(super) fn deepest_resolvable_ancestor_escapes(root: &Path, joined: &Path) -> bool {
    // `ancestors` pops one component at a time; `..` components are kept as written, so
    // each candidate is resolved physically by the kernel, as the full path would be.
    for ancestor in joined.ancestors().skip(1) {
        if let Ok(resolved) = std::fs::canonicalize(ancestor) {
            return !resolved.starts_with(root);
        }
    }
    // Not even `/` resolved: nothing can be said, and nothing was found.
    false
}

fn is_not_a_directory(error: &io::Error) -> bool {
    // `io::ErrorKind::NotADirectory` is stable since 1.83, within our 1.88 floor.
    error.kind() == io::ErrorKind::NotADirectory
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::fs;
    use std::sync::atomic::{AtomicUsize, Ordering};

    /// A fresh directory under the system temp dir, removed on drop. Small on purpose:
    /// the tests need nothing `tempfile` offers beyond this.
    struct TempDir(PathBuf);

    impl TempDir {
        fn new() -> TempDir {
            static COUNTER: AtomicUsize = AtomicUsize::new(0);
            let unique = format!(
                "pi-tool-safety-{}-{}",
                std::process::id(),
                COUNTER.fetch_add(1, Ordering::Relaxed)
            );
            let path = std::env::temp_dir().join(unique);
            let _ = fs::remove_dir_all(&path);
            fs::create_dir_all(&path).unwrap();
            TempDir(path)
        }
    }

    impl Drop for TempDir {
        fn drop(&mut self) {
            let _ = fs::remove_dir_all(&self.0);
        }
    }

    /// `<tmp>/root` (the project, with `a/b/file.txt`, `top.txt`) next to
    /// `<tmp>/outside` (with `secret.txt`) and `<tmp>/root-evil` (a sibling whose name
    /// starts with the root's).
    fn layout() -> (TempDir, PathBuf) {
        let tmp = TempDir::new();
        let root = tmp.0.join("root");
        fs::create_dir_all(root.join("a/b")).unwrap();
        fs::write(root.join("a/b/file.txt"), "in").unwrap();
        fs::write(root.join("top.txt"), "top").unwrap();
        fs::create_dir_all(tmp.0.join("outside")).unwrap();
        fs::write(tmp.0.join("outside/secret.txt"), "secret").unwrap();
        fs::create_dir_all(tmp.0.join("root-evil")).unwrap();
        fs::write(tmp.0.join("root-evil/x.txt"), "evil").unwrap();
        (tmp, root)
    }

    fn err(root: &Path, input: &str) -> String {
        let error = resolve_existing_path_inside_root_sync(root, input).unwrap_err();
        let message = error.message().to_owned();
        let root_text = root.to_string_lossy();
        assert!(
            !message.contains(root_text.as_ref()),
            "leaks the root: {message}"
        );
        message
    }

    fn ok(root: &Path, input: &str) -> ResolvedPath {
        resolve_existing_path_inside_root_sync(root, input)
            .unwrap_or_else(|e| panic!("{input}: {e}"))
    }

    #[test]
    fn plain_and_dotted_relative_paths_resolve() {
        let (_tmp, root) = layout();
        let file = ok(&root, "./a/./b/file.txt");
        assert_eq!(file.relative(), Path::new("a/b/file.txt"));
        assert_eq!(fs::read_to_string(&*file).unwrap(), "in");
        assert_eq!(
            ok(&root, "a/b/../../top.txt").relative(),
            Path::new("top.txt")
        );
        assert_eq!(ok(&root, ".").relative(), Path::new(""));
        assert_eq!(ok(&root, "a/").relative(), Path::new("a"));
    }

    #[test]
    fn absolute_input_is_refused_even_inside_the_root() {
        let (_tmp, root) = layout();
        assert_eq!(err(&root, "/etc/passwd"), NOT_RELATIVE);
        let inside = root.join("top.txt");
        assert_eq!(err(&root, inside.to_str().unwrap()), NOT_RELATIVE);
    }

    #[test]
    fn dot_dot_chains_that_leave_are_refused() {
        let (_tmp, root) = layout();
        assert_eq!(err(&root, "a/../../x"), ESCAPES);
        assert_eq!(err(&root, "a/../../outside/secret.txt"), ESCAPES);
        assert_eq!(err(&root, ".."), ESCAPES);
        assert_eq!(err(&root, "a/b/../../../root-evil/x.txt"), ESCAPES);
        assert_eq!(err(&root, "../root/../outside"), ESCAPES);
        // Leaving and coming back is fine: containment is of the physical result.
        assert_eq!(
            ok(&root, "../root/top.txt").relative(),
            Path::new("top.txt")
        );
    }

    #[test]
    fn missing_paths_outside_do_not_reveal_existence() {
        let (_tmp, root) = layout();
        assert_eq!(err(&root, "a/nope.txt"), MISSING);
        assert_eq!(err(&root, "nope/deeper/x"), MISSING);
        assert_eq!(err(&root, "top.txt/x"), MISSING);
        // Outside, existing or not, the answer is the same.
        assert_eq!(err(&root, "../outside/secret.txt"), ESCAPES);
        assert_eq!(err(&root, "../outside/nope.txt"), ESCAPES);
        assert_eq!(err(&root, "../../../../no/such/dir"), ESCAPES);
    }

    #[test]
    fn empty_nul_and_long_inputs_are_refused_before_any_io() {
        // The root does not even exist: the input checks come first.
        let root = Path::new("/definitely/not/a/root");
        assert_eq!(err(root, ""), EMPTY);
        assert_eq!(err(root, "a\0b"), NUL);
        assert_eq!(err(root, &"a/".repeat(3000)), TOO_LONG);
        assert_eq!(err(root, "x"), ROOT_UNAVAILABLE);
    }

    #[cfg(unix)]
    mod symlinks {
        use super::*;
        use std::os::unix::fs::symlink;

        #[test]
        fn file_symlink_to_outside_is_refused() {
            let (tmp, root) = layout();
            symlink(tmp.0.join("outside/secret.txt"), root.join("link.txt")).unwrap();
            assert_eq!(err(&root, "link.txt"), ESCAPES);
        }

        #[test]
        fn dir_symlink_to_outside_is_refused_for_itself_and_below() {
            let (tmp, root) = layout();
            symlink(tmp.0.join("outside"), root.join("out")).unwrap();
            assert_eq!(err(&root, "out"), ESCAPES);
            assert_eq!(err(&root, "out/secret.txt"), ESCAPES);
            assert_eq!(err(&root, "out/nope.txt"), ESCAPES);
            // `..` after a symlink is physical: `out/..` is the temp dir, not the root.
            assert_eq!(err(&root, "out/../root-evil/x.txt"), ESCAPES);
        }

        #[test]
        fn relative_symlink_climbing_out_is_refused() {
            let (_tmp, root) = layout();
            symlink("../../../outside/secret.txt", root.join("a/b/climb")).unwrap();
            assert_eq!(err(&root, "a/b/climb"), ESCAPES);
        }

        #[test]
        fn symlinks_inside_the_root_resolve_to_their_target() {
            let (_tmp, root) = layout();
            symlink("a/b", root.join("short")).unwrap();
            symlink("../../top.txt", root.join("a/b/up")).unwrap();
            let file = ok(&root, "short/file.txt");
            assert_eq!(file.relative(), Path::new("a/b/file.txt"));
            assert_eq!(ok(&root, "a/b/up").relative(), Path::new("top.txt"));
        }

        #[test]
        fn a_symlinked_root_is_resolved_too() {
            let (tmp, root) = layout();
            let alias = tmp.0.join("alias");
            symlink(&root, &alias).unwrap();
            let file = ok(&alias, "a/b/file.txt");
            assert_eq!(file.relative(), Path::new("a/b/file.txt"));
            assert!(file.path().starts_with(fs::canonicalize(&root).unwrap()));
            assert_eq!(err(&alias, "../outside/secret.txt"), ESCAPES);
        }

        #[test]
        fn symlink_loops_and_dangling_links_fail_cleanly() {
            let (tmp, root) = layout();
            symlink("loop2", root.join("loop1")).unwrap();
            symlink("loop1", root.join("loop2")).unwrap();
            assert_eq!(err(&root, "loop1"), UNRESOLVABLE);
            symlink("nowhere", root.join("dangling")).unwrap();
            assert_eq!(err(&root, "dangling"), MISSING);
            // Through an existing link pointing outside, a missing name says "leaves".
            symlink(tmp.0.join("outside"), root.join("out")).unwrap();
            assert_eq!(err(&root, "out/nope/deeper"), ESCAPES);
        }
    }

    #[tokio::test]
    async fn async_variant_agrees_with_the_sync_one() {
        let (_tmp, root) = layout();
        let file = resolve_existing_path_inside_root(&root, "a/b/file.txt")
            .await
            .unwrap();
        assert_eq!(file, ok(&root, "a/b/file.txt"));
        let error = resolve_existing_path_inside_root(&root, "../outside/secret.txt")
            .await
            .unwrap_err();
        assert_eq!(error.message(), ESCAPES);
        let error = resolve_existing_path_inside_root(&root, "/abs")
            .await
            .unwrap_err();
        assert_eq!(error.message(), NOT_RELATIVE);
    }
}
