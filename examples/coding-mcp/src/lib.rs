//! `coding-mcp`'s pack: Pi's coding tools for one root directory, and the opt-in
//! confinement that refuses paths outside it (`--confine`).
//!
//! Pi's tools take any path: absolute, `~/...`, `../..`; so does this server by default,
//! as Pi does. With confinement, every `path` argument must name a place inside the root
//! once resolved as the tool would resolve it and every existing symbolic link on the way
//! is followed (`pi_tool::safety`'s containment check on the deepest existing part), and
//! `bash` is left out: a shell command cannot be confined by looking at its text.

use std::borrow::Cow;
use std::path::{Path, PathBuf};
use std::sync::Arc;

use async_trait::async_trait;
use pi_tool::context::ExtensionContext;
use pi_tool::pack::{ToolOwner, ToolPack};
use pi_tool::safety::resolve_existing_path_inside_root_sync;
use pi_tool::{AgentTool, JsonToolResult, ToolError, ToolInvocation, ToolSpec};
use pi_tool_coding::{CodingOptions, CodingTools};
use serde_json::Value;

/// The text of a refused path (Pi's custom-tool page's, as `pi_tool::safety` words it). It never
/// names the root.
pub const OUTSIDE_ROOT: &str = "Path leaves the project root";

/// The tools for `root`, confined to it when `confine` is set.
pub fn coding_pack(root: &Path, confine: bool) -> ToolPack {
    let tools = Arc::new(CodingTools::new(CodingOptions::default())).pack();
    if !confine {
        return tools;
    }
    let owner = ToolOwner::new("coding-mcp");
    let mut pack = ToolPack::new();
    for tool in tools.tools() {
        if tool.name() == "bash" {
            continue;
        }
        let confined: Arc<dyn AgentTool> = Arc::new(Confined {
            inner: tool,
            root: root.to_path_buf(),
        });
        if let Err(error) = pack.push(owner.clone(), confined) {
            eprintln!("coding-mcp: {error}");
        }
    }
    pack
}

/// The context every call gets: the root as its working directory.
pub fn context_for(root: &Path) -> impl Fn() -> ExtensionContext + Clone + Send + Sync + 'static {
    let root = root.to_path_buf();
    move || ExtensionContext::builder(root.clone()).build()
}

struct Confined {
    inner: Arc<dyn AgentTool>,
    root: PathBuf,
}

/// Refuses `path` (as the tools resolve it against `root`) unless it stays inside `root`.
pub fn check_inside(root: &Path, path: &str) -> Result<(), ToolError> {
    let resolved = pi_tool_coding::resolve_to_cwd(if path.is_empty() { "." } else { path }, root);
    let Ok(relative) = resolved.strip_prefix(root) else {
        return Err(ToolError::new(OUTSIDE_ROOT));
    };
    // The deepest part that exists is resolved through its links and checked; what
    // does not exist yet (a file `write` creates) cannot be a link.
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
        Err(error) if error.message() == "Path does not exist" => {
            // A dangling link: the tool reports the missing file itself.
            Ok(())
        }
        Err(error) => Err(error),
    }
}

#[async_trait]
impl AgentTool for Confined {
    fn spec(&self) -> &ToolSpec {
        self.inner.spec()
    }

    fn prepare_arguments<'a>(&self, arguments: &'a Value) -> Result<Cow<'a, Value>, ToolError> {
        self.inner.prepare_arguments(arguments)
    }

    async fn execute(&self, call: ToolInvocation<'_>) -> Result<JsonToolResult, ToolError> {
        let path = call
            .params
            .get("path")
            .and_then(Value::as_str)
            .unwrap_or(".");
        let root = self.root.clone();
        let path = path.to_owned();
        tokio::task::spawn_blocking(move || check_inside(&root, &path))
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
        let base = std::env::temp_dir().join(format!("coding-mcp-check-{}", std::process::id()));
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
            assert!(check_inside(&root, inside).is_ok(), "{inside}");
        }
        let abs = root.join("sub").to_string_lossy().into_owned();
        assert!(check_inside(&root, &abs).is_ok());
        for outside in [
            "..",
            "../elsewhere",
            "/etc/passwd",
            "~",
            "escape/x.txt",
            "escape",
            "sub/../../x",
        ] {
            let err = check_inside(&root, outside).unwrap_err();
            assert!(
                err.message().starts_with("Path"),
                "{outside}: {}",
                err.message()
            );
            assert!(!err.message().contains(&*root.to_string_lossy()));
        }
        let _ = std::fs::remove_dir_all(base);
    }
}
