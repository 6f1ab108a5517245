//! Paths a tool is about to create or overwrite: the write side of [`super::path`].
//!
//! A path that does not exist yet cannot be resolved with `realpath`, so the check is
//! split: the parent directory must exist, and is resolved through every symlink and `..`
//! and checked inside the root, exactly as an existing path is; the last component is
//! checked on its own, as text (a plain name, not `.`, `..` or empty, at most 255 bytes);
//! and whatever already stands at the target is looked at without following it. A
//! symlink there is refused by default, since writing through it would write wherever it
//! points; [`FinalSymlink::FollowInside`] follows it instead, when its target exists and is
//! inside the root.
//!
//! To create missing directories, resolve and create each level in turn: the checked
//! parent of `notes/2026` is `notes`, so `create_dir` on the result creates one level
//! inside the root.
//!
//! The same time-of-check/time-of-use caveat holds as for existing paths (see
//! [`super::path`]). For a new file, open the result with
//! `OpenOptions::new().write(true).create_new(true)`: `O_EXCL` fails on anything that
//! appeared at the target since the check, a symlink included.

use std::io;
use std::path::{Component, Path, PathBuf};

use super::path::{
    DENIED, MISSING, PathRoot, ResolvedPath, UNRESOLVABLE, deepest_resolvable_ancestor_escapes,
};
use crate::error::ToolError;

/// The longest file name most filesystems accept (Linux `NAME_MAX`, NTFS, APFS).
const MAX_NAME_BYTES: usize = 255;

const NO_NAME: &str = "Path must end in a file name";
const NAME_TOO_LONG: &str = "File name is too long";
const PARENT_MISSING: &str = "Parent directory does not exist";
const PARENT_NOT_DIR: &str = "Parent path is not a directory";
const IS_SYMLINK: &str = "Path is a symbolic link";
const DANGLING: &str = "Path is a symbolic link to nothing";

/// What to do when the target already is a symbolic link.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
#[non_exhaustive]
pub enum FinalSymlink {
    /// Refuse it (`Path is a symbolic link`): writing through a link writes to its target.
    #[default]
    Refuse,
    /// Follow it when its target exists and lies inside the root; the result is that
    /// target. A link to nothing is refused: following it would create its target.
    FollowInside,
}

impl PathRoot {
    /// Resolves `input` to a path inside this root that may not exist yet, for a tool
    /// that creates or overwrites it: the parent directory exists and is inside the root,
    /// the last component is a plain name, and a symlink at the target is treated as
    /// `symlinks` says. The parent is resolved through every symlink and `..` and must be
    /// an existing directory inside the root; to create missing directories, resolve and
    /// create one level at a time. The same time-of-check caveat holds as for
    /// [`resolve_existing`](Self::resolve_existing): open a new file with
    /// `OpenOptions::new().write(true).create_new(true)`, which fails on anything that
    /// appeared at the target since the check, a symlink included.
    ///
    /// The filesystem work runs on tokio's blocking pool.
    pub async fn resolve_new(
        &self,
        input: &str,
        symlinks: FinalSymlink,
    ) -> Result<ResolvedPath, ToolError> {
        self.check_input(input)?;
        let root = self.clone();
        let input = input.to_owned();
        tokio::task::spawn_blocking(move || root.resolve_new_checked(&input, symlinks))
            .await
            .map_err(|_| ToolError::new(UNRESOLVABLE))?
    }

    /// The blocking variant of [`resolve_new`](Self::resolve_new).
    pub fn resolve_new_sync(
        &self,
        input: &str,
        symlinks: FinalSymlink,
    ) -> Result<ResolvedPath, ToolError> {
        self.check_input(input)?;
        self.resolve_new_checked(input, symlinks)
    }

    fn resolve_new_checked(
        &self,
        input: &str,
        symlinks: FinalSymlink,
    ) -> Result<ResolvedPath, ToolError> {
        let (parent, name) = split_last(input)?;
        let root = self.canonical()?;
        let joined_parent = root.join(parent);
        let parent = match std::fs::canonicalize(&joined_parent) {
            Ok(parent) if parent.starts_with(&root) => parent,
            Ok(_) => return Err(self.escapes()),
            Err(error) => return Err(self.parent_unresolved(&root, &joined_parent, &error)),
        };
        if !parent.is_dir() {
            return Err(ToolError::new(PARENT_NOT_DIR));
        }
        let target = parent.join(name);
        match std::fs::symlink_metadata(&target) {
            Err(error) if error.kind() == io::ErrorKind::NotFound => {}
            Err(error) if error.kind() == io::ErrorKind::PermissionDenied => {
                return Err(ToolError::new(DENIED));
            }
            Err(_) => return Err(ToolError::new(UNRESOLVABLE)),
            Ok(meta) if meta.file_type().is_symlink() => {
                return match symlinks {
                    FinalSymlink::Refuse => Err(ToolError::new(IS_SYMLINK)),
                    FinalSymlink::FollowInside => self.follow(&root, &target),
                };
            }
            Ok(_) => {}
        }
        Ok(ResolvedPath { root, path: target })
    }

    /// The target of the symlink at `target`, if it exists inside the root.
    fn follow(&self, root: &Path, target: &Path) -> Result<ResolvedPath, ToolError> {
        match std::fs::canonicalize(target) {
            Ok(path) if path.starts_with(root) => Ok(ResolvedPath {
                root: root.to_path_buf(),
                path,
            }),
            Ok(_) => Err(self.escapes()),
            Err(error) if error.kind() == io::ErrorKind::NotFound => {
                // A link to nothing: say "leaves" when where it points is outside, so the
                // answer does not tell what exists out there.
                if deepest_resolvable_ancestor_escapes(root, &link_destination(target)) {
                    Err(self.escapes())
                } else {
                    Err(ToolError::new(DANGLING))
                }
            }
            Err(_) => Err(ToolError::new(UNRESOLVABLE)),
        }
    }

    /// The error for a parent directory that could not be resolved: as for an existing
    /// path, but a missing parent says so.
    fn parent_unresolved(&self, root: &Path, joined: &Path, error: &io::Error) -> ToolError {
        let error = self.unresolved(root, joined, error);
        if error.message() == MISSING {
            ToolError::new(PARENT_MISSING)
        } else {
            error
        }
    }
}

/// [`PathRoot::resolve_new`] against an unnamed root (errors say "project root"), with
/// symlinks at the target refused: the write-side twin of
/// [`resolve_existing_path_inside_root`](super::resolve_existing_path_inside_root).
pub async fn resolve_new_path_inside_root(
    cwd: impl AsRef<Path>,
    input: &str,
) -> Result<ResolvedPath, ToolError> {
    PathRoot::new(cwd.as_ref())
        .resolve_new(input, FinalSymlink::Refuse)
        .await
}

/// The blocking variant of [`resolve_new_path_inside_root`].
pub fn resolve_new_path_inside_root_sync(
    cwd: impl AsRef<Path>,
    input: &str,
) -> Result<ResolvedPath, ToolError> {
    PathRoot::new(cwd.as_ref()).resolve_new_sync(input, FinalSymlink::Refuse)
}

/// Splits the input into its parent (possibly empty) and its last component, which must
/// be a plain name. Read from the text as written, so `a/.`, `a/..` and `a/` are refused
/// rather than normalised into another name.
fn split_last(input: &str) -> Result<(&Path, &str), ToolError> {
    let cut = input.rfind(is_separator).map_or(0, |at| at + 1);
    let (parent, name) = input.split_at(cut);
    let plain = matches!(
        Path::new(name).components().collect::<Vec<_>>().as_slice(),
        [Component::Normal(_)]
    );
    if name.is_empty() || name == "." || name == ".." || !plain {
        return Err(ToolError::new(NO_NAME));
    }
    if name.len() > MAX_NAME_BYTES {
        return Err(ToolError::new(NAME_TOO_LONG));
    }
    Ok((Path::new(parent), name))
}

fn is_separator(c: char) -> bool {
    c == '/' || (cfg!(windows) && c == '\\')
}

/// Where a symlink points, as an absolute path (a relative link is read from its directory).
fn link_destination(link: &Path) -> PathBuf {
    match std::fs::read_link(link) {
        Ok(dest) => match link.parent() {
            Some(dir) => dir.join(dest),
            None => dest,
        },
        Err(_) => link.to_path_buf(),
    }
}

#[cfg(test)]
mod tests {
    use super::super::path::{ESCAPES, NOT_RELATIVE};
    use super::*;
    use std::fs;
    use std::sync::atomic::{AtomicUsize, Ordering};

    /// A fresh directory under the system temp dir, removed on drop.
    struct TempDir(PathBuf);

    impl TempDir {
        fn new() -> TempDir {
            static COUNTER: AtomicUsize = AtomicUsize::new(0);
            let unique = format!(
                "pi-tool-new-path-{}-{}",
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

    /// `<tmp>/root` (with `a/b/file.txt`, `top.txt`) next to `<tmp>/outside` (with
    /// `secret.txt`) and `<tmp>/root-evil`, the root's prefix twin.
    fn layout() -> (TempDir, PathBuf) {
        let tmp = TempDir::new();
        let root = tmp.0.join("root");
        fs::create_dir_all(root.join("a/b")).unwrap();
        fs::write(root.join("a/b/file.txt"), "in").unwrap();
        fs::write(root.join("top.txt"), "top").unwrap();
        fs::create_dir_all(tmp.0.join("outside")).unwrap();
        fs::write(tmp.0.join("outside/secret.txt"), "secret").unwrap();
        fs::create_dir_all(tmp.0.join("root-evil")).unwrap();
        (tmp, root)
    }

    fn with(root: &Path, input: &str, symlinks: FinalSymlink) -> Result<ResolvedPath, String> {
        PathRoot::new(root)
            .resolve_new_sync(input, symlinks)
            .map_err(|error| {
                let message = error.message().to_owned();
                assert!(
                    !message.contains(root.to_string_lossy().as_ref()),
                    "leaks the root: {message}"
                );
                message
            })
    }

    fn err(root: &Path, input: &str) -> String {
        with(root, input, FinalSymlink::Refuse).expect_err(input)
    }

    fn ok(root: &Path, input: &str) -> ResolvedPath {
        with(root, input, FinalSymlink::Refuse).unwrap_or_else(|e| panic!("{input}: {e}"))
    }

    #[test]
    fn new_and_existing_files_inside_resolve() {
        let (_tmp, root) = layout();
        let new = ok(&root, "a/b/new.txt");
        assert_eq!(new.relative(), Path::new("a/b/new.txt"));
        assert!(!new.exists());
        fs::write(&*new, "written").unwrap();
        assert_eq!(
            fs::read_to_string(root.join("a/b/new.txt")).unwrap(),
            "written"
        );
        assert_eq!(ok(&root, "top.txt").relative(), Path::new("top.txt"));
        assert_eq!(ok(&root, "new.txt").relative(), Path::new("new.txt"));
        assert_eq!(ok(&root, "./a/../fresh").relative(), Path::new("fresh"));
        // Leaving and coming back is fine: the parent's physical path is what counts.
        assert_eq!(ok(&root, "../root/x.txt").relative(), Path::new("x.txt"));
    }

    #[test]
    fn the_last_component_must_be_a_plain_name() {
        let (_tmp, root) = layout();
        for input in [".", "..", "a/.", "a/..", "a/", "a/b/", "./"] {
            assert_eq!(err(&root, input), NO_NAME, "{input}");
        }
        assert_eq!(err(&root, &"n".repeat(256)), NAME_TOO_LONG);
        assert_eq!(
            ok(&root, &"n".repeat(255)).relative(),
            Path::new(&"n".repeat(255))
        );
    }

    #[test]
    fn absolute_nul_and_empty_inputs_are_refused() {
        let (_tmp, root) = layout();
        assert_eq!(err(&root, "/etc/passwd"), NOT_RELATIVE);
        assert_eq!(
            err(&root, root.join("new.txt").to_str().unwrap()),
            NOT_RELATIVE
        );
        assert_eq!(err(&root, "a\0b"), "Path must not contain NUL bytes");
        assert_eq!(err(&root, ""), "Path must not be empty");
    }

    #[test]
    fn parents_outside_or_missing_are_refused() {
        let (_tmp, root) = layout();
        assert_eq!(err(&root, "../outside/new.txt"), ESCAPES);
        assert_eq!(err(&root, "../new.txt"), ESCAPES);
        // The prefix twin: `<tmp>/root-evil` starts with the root's text, not its path.
        assert_eq!(err(&root, "../root-evil/new.txt"), ESCAPES);
        // A missing parent outside says "leaves", as for an existing path.
        assert_eq!(err(&root, "../nowhere/deeper/new.txt"), ESCAPES);
        assert_eq!(err(&root, "nope/new.txt"), PARENT_MISSING);
        assert_eq!(err(&root, "top.txt/new.txt"), PARENT_MISSING);
    }

    #[test]
    fn a_named_root_says_its_name() {
        let (_tmp, root) = layout();
        let notes = PathRoot::new(&root).named("notes directory");
        let message = |r: Result<ResolvedPath, ToolError>| r.unwrap_err().message().to_owned();
        assert_eq!(
            message(notes.resolve_new_sync("../x", FinalSymlink::Refuse)),
            "Path leaves the notes directory"
        );
        assert_eq!(
            message(notes.resolve_new_sync("/x", FinalSymlink::Refuse)),
            "Path must be relative to the notes directory"
        );
        assert_eq!(
            message(notes.resolve_existing_sync("../outside/secret.txt")),
            "Path leaves the notes directory"
        );
        let gone = PathRoot::new(root.join("gone")).named("notes directory");
        assert_eq!(
            message(gone.resolve_new_sync("x", FinalSymlink::Refuse)),
            "The notes directory is not accessible"
        );
    }

    #[cfg(unix)]
    mod symlinks {
        use super::*;
        use std::os::unix::fs::symlink;

        #[test]
        fn a_symlink_at_the_target_is_refused_by_default() {
            let (tmp, root) = layout();
            symlink(tmp.0.join("outside/secret.txt"), root.join("out.txt")).unwrap();
            symlink("top.txt", root.join("in.txt")).unwrap();
            symlink(tmp.0.join("outside/new.txt"), root.join("dangling")).unwrap();
            for input in ["out.txt", "in.txt", "dangling"] {
                assert_eq!(err(&root, input), IS_SYMLINK, "{input}");
            }
        }

        #[test]
        fn following_keeps_to_targets_inside() {
            let (tmp, root) = layout();
            let follow = |input| with(&root, input, FinalSymlink::FollowInside);
            symlink("top.txt", root.join("in.txt")).unwrap();
            assert_eq!(follow("in.txt").unwrap().relative(), Path::new("top.txt"));
            symlink(tmp.0.join("outside/secret.txt"), root.join("out.txt")).unwrap();
            assert_eq!(follow("out.txt").unwrap_err(), ESCAPES);
            // A link to nothing would create its target: refused, and outside says so.
            symlink("missing.txt", root.join("to-nothing")).unwrap();
            assert_eq!(follow("to-nothing").unwrap_err(), DANGLING);
            symlink(tmp.0.join("outside/new.txt"), root.join("out-new")).unwrap();
            assert_eq!(follow("out-new").unwrap_err(), ESCAPES);
            symlink("loop2", root.join("loop1")).unwrap();
            symlink("loop1", root.join("loop2")).unwrap();
            assert_eq!(follow("loop1").unwrap_err(), UNRESOLVABLE);
        }

        #[test]
        fn parents_through_symlinks_are_checked_physically() {
            let (tmp, root) = layout();
            symlink(tmp.0.join("outside"), root.join("out")).unwrap();
            assert_eq!(err(&root, "out/new.txt"), ESCAPES);
            // `..` after a symlink is physical: `out/..` is the temp dir, not the root.
            assert_eq!(err(&root, "out/../root-evil/new.txt"), ESCAPES);
            assert_eq!(err(&root, "out/../new.txt"), ESCAPES);
            symlink("a/b", root.join("short")).unwrap();
            assert_eq!(
                ok(&root, "short/new.txt").relative(),
                Path::new("a/b/new.txt")
            );
            symlink("../../../outside", root.join("a/b/climb")).unwrap();
            assert_eq!(err(&root, "a/b/climb/new.txt"), ESCAPES);
        }

        #[test]
        fn parent_loops_fail_cleanly() {
            let (_tmp, root) = layout();
            symlink("loop2", root.join("loop1")).unwrap();
            symlink("loop1", root.join("loop2")).unwrap();
            assert_eq!(err(&root, "loop1/new.txt"), UNRESOLVABLE);
        }

        #[test]
        fn a_root_behind_a_symlink_is_resolved() {
            let (tmp, root) = layout();
            let alias = tmp.0.join("alias");
            symlink(&root, &alias).unwrap();
            let new = ok(&alias, "a/new.txt");
            assert_eq!(new.relative(), Path::new("a/new.txt"));
            assert!(new.path().starts_with(fs::canonicalize(&root).unwrap()));
            assert_eq!(err(&alias, "../outside/new.txt"), ESCAPES);
            assert_eq!(err(&alias, "../root-evil/new.txt"), ESCAPES);
        }
    }

    #[tokio::test]
    async fn async_variant_agrees_with_the_sync_one() {
        let (_tmp, root) = layout();
        let new = resolve_new_path_inside_root(&root, "a/new.txt")
            .await
            .unwrap();
        assert_eq!(
            new,
            resolve_new_path_inside_root_sync(&root, "a/new.txt").unwrap()
        );
        let error = resolve_new_path_inside_root(&root, "../x")
            .await
            .unwrap_err();
        assert_eq!(error.message(), ESCAPES);
    }
}
