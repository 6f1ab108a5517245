//! The directories the sandbox tests start from, and the rule that a test which cannot
//! be enforced says so (and fails under `CI`) instead of passing.

use std::path::PathBuf;

use pi_tool_core::safety::Sandbox;

/// A fresh, canonical `<tmp>/<prefix>-<name>-<pid>` holding `root/` (the sandbox's root)
/// and `outside/` (what the sandbox must not touch).
pub struct Dirs {
    pub base: PathBuf,
    pub root: PathBuf,
    pub outside: PathBuf,
}

/// The directories, or `None` (said on stderr) when the kernel cannot enforce the
/// sandbox; under `CI` that fails the test instead.
pub fn sandbox_dirs(prefix: &str, name: &str) -> Option<Dirs> {
    let base = std::env::temp_dir().join(format!("{prefix}-{name}-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&base);
    std::fs::create_dir_all(base.join("root")).unwrap();
    std::fs::create_dir_all(base.join("outside")).unwrap();
    let base = std::fs::canonicalize(base).unwrap();
    let root = base.join("root");
    if let Err(error) = Sandbox::for_root(&root).check() {
        let _ = std::fs::remove_dir_all(&base);
        assert!(
            std::env::var_os("CI").is_none(),
            "CI is set and the kernel cannot enforce the sandbox: {error}"
        );
        eprintln!("NOT RUN: the kernel cannot enforce the sandbox: {error}");
        return None;
    }
    Some(Dirs {
        outside: base.join("outside"),
        base,
        root,
    })
}
