//! The tools confined to one root directory: every `path` argument must name a place
//! inside the root once resolved as the tool resolves it, every existing symbolic link
//! on the way followed. `bash` cannot be confined by looking at its text: it keeps its
//! place only when it runs in the kernel sandbox (`CodingOptions::sandbox`, which
//! `CodingTools::pack_confined` sets), and is left out otherwise.
//!
//! Pi's own tools take any path (absolute, `~/...`, `../..`), and so does [`crate::pack`];
//! this is the pack for an agent or a server that hands the tools to a model it does not
//! trust with the whole file system.

use std::borrow::Cow;
use std::path::{Path, PathBuf};
use std::sync::Arc;

use pi_tool_core::context::ExtensionContext;
use pi_tool_core::pack::{ToolOwner, ToolPack};
use pi_tool_core::safety::resolve_existing_path_inside_root_sync;
use pi_tool_core::{AgentTool, JsonToolResult, ToolError, ToolInvocation, ToolSpec, Value};

use crate::paths::resolve_to_cwd;

/// The error text of a path outside the root (Pi's custom-tool page's wording, as
/// `pi_tool_core::safety` has it). It never names the root.
pub const OUTSIDE_ROOT: &str = "Path leaves the project root";

/// `tools` (`bash` only when `bash_sandboxed`), each refusing a path outside `root`.
pub(crate) fn confine(tools: &ToolPack, root: &Path, bash_sandboxed: bool) -> ToolPack {
    // The physical root, so that a root reached through a link (`/tmp` on some systems)
    // compares with the physical paths the check resolves.
    let root = std::fs::canonicalize(root)
        .or_else(|_| std::path::absolute(root))
        .unwrap_or_else(|_| root.to_path_buf());
    let owner = ToolOwner::module(env!("CARGO_PKG_NAME"), module_path!());
    let mut pack = ToolPack::new();
    for tool in tools.tools() {
        if (tool.name() == "bash" && !bash_sandboxed) || tool.name() == "powershell" {
            continue;
        }
        let confined: Arc<dyn AgentTool> = Arc::new(Confined {
            inner: tool,
            root: root.clone(),
        });
        // Distinct names from a pack: a push cannot fail.
        if let Err(error) = pack.push(owner.clone(), confined) {
            debug_assert!(false, "{error}");
        }
    }
    pack
}

struct Confined {
    inner: Arc<dyn AgentTool>,
    root: PathBuf,
}

/// Refuses `path` (as the tools resolve it against `cwd`) unless it stays inside `root`.
fn check_inside(root: &Path, cwd: &Path, path: &str) -> Result<(), ToolError> {
    let resolved = resolve_to_cwd(if path.is_empty() { "." } else { path }, cwd);
    let Ok(relative) = resolved.strip_prefix(root) else {
        return Err(ToolError::new(OUTSIDE_ROOT));
    };
    // The deepest part that exists is resolved through its links and checked; what does
    // not exist yet (a file `write` creates) cannot be a link.
    let mut existing = relative.to_path_buf();
    loop {
        if existing.as_os_str().is_empty() {
            return Ok(());
        }
        if std::fs::symlink_metadata(root.join(&existing)).is_ok() {
            break;
        }
        if !existing.pop() {
            return Ok(());
        }
    }
    match resolve_existing_path_inside_root_sync(root, &existing.to_string_lossy()) {
        Ok(_) => Ok(()),
        // A dangling link: the tool reports the missing file itself.
        Err(error) if error.message() == "Path does not exist" => Ok(()),
        Err(error) => Err(error),
    }
}

#[pi_tool_core::async_trait]
impl AgentTool for Confined {
    fn spec(&self) -> &ToolSpec {
        self.inner.spec()
    }

    fn prepare_arguments<'a>(&self, arguments: &'a Value) -> Result<Cow<'a, Value>, ToolError> {
        self.inner.prepare_arguments(arguments)
    }

    async fn execute(&self, mut call: ToolInvocation<'_>) -> Result<JsonToolResult, ToolError> {
        // A call without a session's context runs in the root; one with a context runs in
        // its directory, as the tool would, and is checked there.
        let context = call
            .context
            .take()
            .unwrap_or_else(|| ExtensionContext::builder(self.root.clone()).build());
        let cwd = context.cwd().to_path_buf();
        let call = call.with_context(context);
        let path = call
            .params
            .get("path")
            .and_then(Value::as_str)
            .unwrap_or(".")
            .to_owned();
        let root = self.root.clone();
        tokio::task::spawn_blocking(move || check_inside(&root, &cwd, &path))
            .await
            .map_err(|e| ToolError::new(format!("Tool task failed: {e}")))??;
        self.inner.execute(call).await
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn paths_outside_the_root_are_refused_inside_ones_pass() {
        let base =
            std::env::temp_dir().join(format!("pi-tool-coding-confine-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&base);
        std::fs::create_dir_all(base.join("root/sub")).unwrap();
        std::fs::create_dir_all(base.join("elsewhere")).unwrap();
        let base = std::fs::canonicalize(&base).unwrap();
        let root = base.join("root");
        std::os::unix::fs::symlink(base.join("elsewhere"), root.join("escape")).unwrap();
        for inside in [
            ".",
            "",
            "sub",
            "sub/new/file.txt",
            "new.txt",
            "@sub",
            "./sub/../sub",
        ] {
            assert!(check_inside(&root, &root, inside).is_ok(), "{inside}");
        }
        let abs = root.join("sub").to_string_lossy().into_owned();
        assert!(check_inside(&root, &root, &abs).is_ok());
        // From a working directory inside the root, `..` may still stay inside.
        assert!(check_inside(&root, &root.join("sub"), "../new.txt").is_ok());
        for outside in [
            "..",
            "../elsewhere",
            "/etc/passwd",
            "~",
            "escape/x.txt",
            "escape",
            "sub/../../x",
        ] {
            let err = check_inside(&root, &root, outside).unwrap_err();
            assert!(
                err.message().starts_with("Path"),
                "{outside}: {}",
                err.message()
            );
            assert!(!err.message().contains(&*root.to_string_lossy()));
        }
        // A working directory outside the root: its relative paths are outside too.
        let err = check_inside(&root, &base.join("elsewhere"), "x.txt").unwrap_err();
        assert_eq!(err.message(), OUTSIDE_ROOT);
        let _ = std::fs::remove_dir_all(base);
    }
}
