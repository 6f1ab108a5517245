//! `#[pi_tools]`: methods sharing state behind an `Arc`.
use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};

use pi_tool::{ToolError, Tool, pi_tools};
use pi_tool::context::ExtensionContext;
use serde::Deserialize;

pub struct Counter {
    count: AtomicU64,
}

#[derive(Deserialize, pi_tool::JsonSchema)]
#[schemars(crate = "pi_tool::schemars")]
pub struct AddParams {
    pub by: u64,
}

#[pi_tools]
impl Counter {
    /// Adds to the counter.
    #[pi_tool]
    pub async fn add(&self, params: AddParams) -> Result<String, ToolError> {
        let now = self.count.fetch_add(params.by, Ordering::SeqCst) + params.by;
        Ok(now.to_string())
    }

    /// Reads the counter.
    #[pi_tool(name = "read_counter")]
    async fn read(&self) -> Result<String, ToolError> {
        Ok(self.count.load(Ordering::SeqCst).to_string())
    }

    /// A plain method stays as it is.
    pub fn current(&self) -> u64 {
        self.count.load(Ordering::SeqCst)
    }
}

pub struct Session;

#[pi_tools]
impl Session {
    /// Reports the working directory.
    #[pi_tool(reaches = ["read_counter"])]
    pub async fn where_am_i(&self, ctx: ExtensionContext) -> Result<String, ToolError> {
        Ok(ctx.cwd().display().to_string())
    }
}

fn main() {
    let counter = Arc::new(Counter { count: AtomicU64::new(0) });
    let tools = counter.tools();
    assert_eq!(tools.len(), 2);
    assert_eq!(tools[1].name(), "read_counter");
    assert_eq!(counter.tools().len(), 2);
    let _add: AddTool = counter.add_tool();
    assert_eq!(ReadTool::NAME, "read_counter");
    assert_eq!(counter.current(), 0);
    let session = Arc::new(Session);
    assert_eq!(session.tools().len(), 1);
    let _ = WhereAmITool::new(session.clone());
    assert_eq!(<WhereAmITool as pi_tool::Tool>::REACHES, ["read_counter"]);
}
