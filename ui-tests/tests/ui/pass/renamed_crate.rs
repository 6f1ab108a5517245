//! `crate = "..."`: tools whose generated code reaches pi-tool through another path.
//!
//! A renamed dependency (`pt = { package = "pi-tool", ... }` in Cargo.toml) puts `pt` in
//! the extern prelude; Cargo refuses a second name for a package this crate already
//! depends on as `pi-tool`, so the case renames it the way Rust itself does, which puts
//! `pt` in the extern prelude in the same way. This file names pi-tool only as `pt`.
//! `::pi_tool` still resolves here, so the `shim` below is what proves that the macro
//! follows the key; pi-tool-macros' unit tests check that no path to `::pi_tool` is left.
extern crate pi_tool as pt;

use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};

use pt::{IntoAgentTool, ToolError, Tool, pi_tool, pi_tools};
use serde::Deserialize;

/// A crate re-exporting pi-tool, as a framework built on it would.
mod my {
    pub mod reexport {
        pub mod pi_tool {
            pub use pt::*;
        }
    }
}

/// A stand-in for pi-tool that changes one helper of the generated code: a tool whose
/// `crate` points here gets this `trim_doc`, so its description shows which path was used.
mod shim {
    pub mod __private {
        pub use pt::__private::*;

        pub const fn trim_doc(_: &'static str) -> &'static str {
            "reached through the shim"
        }
    }
}

#[derive(Deserialize, pt::JsonSchema)]
#[schemars(crate = "pt::schemars")]
pub struct AddParams {
    pub a: i64,
    pub b: i64,
}

/// Adds two integers.
#[pi_tool(crate = "pt", execution_mode = "parallel", timeout = "5s")]
pub async fn add(params: AddParams) -> Result<String, ToolError> {
    Ok((params.a + params.b).to_string())
}

/// Echoes nothing.
#[pi_tool(name = "echo", crate = "my::reexport::pi_tool")]
pub async fn echo() -> Result<String, ToolError> {
    Ok(String::new())
}

#[doc = concat!("Reports ", "nothing.")]
#[pi_tool(crate = "shim")]
pub async fn report() -> Result<String, ToolError> {
    Ok(String::new())
}

pub struct Counter {
    count: AtomicU64,
}

#[derive(Deserialize, pt::JsonSchema)]
#[schemars(crate = "pt::schemars")]
pub struct BumpParams {
    pub by: u64,
}

#[pi_tools(crate = "::pt")]
impl Counter {
    /// Adds to the counter.
    #[pi_tool]
    pub async fn bump(&self, params: BumpParams) -> Result<String, ToolError> {
        let now = self.count.fetch_add(params.by, Ordering::SeqCst) + params.by;
        Ok(now.to_string())
    }

    /// Reads the counter.
    #[doc = concat!("Never changes it.")]
    #[pi_tool(name = "read_counter")]
    async fn read(&self, ctx: pt::context::ExtensionContext) -> Result<String, ToolError> {
        let _ = ctx.cwd();
        Ok(self.count.load(Ordering::SeqCst).to_string())
    }
}

fn main() {
    assert_eq!(Add::NAME, "add");
    assert_eq!(Add::TIMEOUT, Some(std::time::Duration::from_secs(5)));
    let add = Add.into_agent_tool();
    assert_eq!(add.spec().parameters.json()["required"], pt::json!(["a", "b"]));
    assert_eq!(Echo::NAME, "echo");
    let _ = Echo.into_agent_tool();
    assert_eq!(Report::DESCRIPTION, "reached through the shim");

    let counter = Arc::new(Counter { count: AtomicU64::new(0) });
    let definitions = counter.tools();
    assert_eq!(definitions.len(), 2);
    assert_eq!(definitions[1].spec().name, "read_counter");
    assert_eq!(ReadTool::DESCRIPTION, "Reads the counter.\nNever changes it.");
    let _bump: BumpTool = counter.bump_tool();

    // `tool_pack!` reaches the core through `$crate`, whatever the dependency is called.
    let pack = pt::tool_pack![Add, Echo, Counter = counter];
    assert_eq!(pack.names().collect::<Vec<_>>(), ["add", "echo", "bump", "read_counter"]);
    let pack = my::reexport::pi_tool::tool_pack![Report];
    assert_eq!(pack.names().collect::<Vec<_>>(), ["report"]);
}
