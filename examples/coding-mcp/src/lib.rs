//! `coding-mcp`'s pack: Pi's coding tools for one root directory, and the opt-in
//! confinement that refuses paths outside it (`--confine`), which is
//! `pi_tool_coding::pack_confined`.
//!
//! Pi's tools take any path: absolute, `~/...`, `../..`; so does this server by default,
//! as Pi does. With confinement, every `path` argument must name a place inside the root
//! once resolved as the tool would resolve it and every existing symbolic link on the way
//! is followed, and `bash`, which cannot be confined by looking at its text, runs in the
//! kernel sandbox, confined to the root with no network
//! (`pi_tool_core::safety::Sandbox::for_root`).

use std::path::{Path, PathBuf};
use std::sync::Arc;

use pi_tool::context::ExtensionContext;
use pi_tool::pack::ToolPack;
use pi_tool::safety::Sandbox;
use pi_tool_coding::{BashSandbox, CodingOptions, CodingTools};

pub use pi_tool_coding::OUTSIDE_ROOT;

/// The tools for `root`, confined to it when `confine` is set; `bash` then runs in the
/// kernel sandbox of `root`, widened by `read` (readable directories: a toolchain in
/// the home) and `write` (writable ones: a build cache).
pub fn coding_pack(root: &Path, confine: bool, read: &[PathBuf], write: &[PathBuf]) -> ToolPack {
    if !confine {
        return Arc::new(CodingTools::new(CodingOptions::default())).pack();
    }
    let mut sandbox = Sandbox::for_root(root);
    for dir in read {
        sandbox = sandbox.allow_read(dir);
    }
    for dir in write {
        sandbox = sandbox.allow_write(dir);
    }
    let options = CodingOptions::default().sandbox(BashSandbox::Profile(sandbox));
    Arc::new(CodingTools::new(options)).pack_confined(root)
}

/// The context every call gets: the root as its working directory.
pub fn context_for(root: &Path) -> impl Fn() -> ExtensionContext + Clone + Send + Sync + 'static {
    let root = root.to_path_buf();
    move || ExtensionContext::builder(root.clone()).build()
}
