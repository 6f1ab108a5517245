// The same tool through its block and through its own item: one error, on the second.
use std::sync::Arc;

use pi_tool::{pi_tools, tool_pack, ToolError};

pub struct Counter;

#[pi_tools]
impl Counter {
    /// Read the counter.
    #[pi_tool]
    pub async fn read_counter(&self) -> Result<String, ToolError> {
        Ok(String::new())
    }
}

fn main() {
    let counter = Arc::new(Counter);
    let _pack = tool_pack![Counter = counter.clone(), ReadCounterTool = counter.read_counter_tool()];
}
