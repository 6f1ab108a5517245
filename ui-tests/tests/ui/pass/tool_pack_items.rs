// Every form of a `tool_pack!` item: a tool by its name, a tool with state, and a
// #[pi_tools] block from an `Arc` of its state or from the state itself.
use std::sync::Arc;

use pi_tool::{pi_tool, pi_tools, tool_pack, ToolError};

/// Say hello.
#[pi_tool]
pub async fn hello() -> Result<String, ToolError> {
    Ok("hello".to_owned())
}

pub struct Counter {
    start: u32,
}

#[pi_tools]
impl Counter {
    /// Read the counter.
    #[pi_tool]
    pub async fn read_counter(&self) -> Result<String, ToolError> {
        Ok(self.start.to_string())
    }

    /// Reset the counter.
    #[pi_tool(destructive)]
    pub async fn reset_counter(&self) -> Result<String, ToolError> {
        Ok("0".to_owned())
    }
}

pub struct Clock;

#[pi_tools]
impl Clock {
    /// Tell the time.
    #[pi_tool]
    pub async fn tell_time(&self) -> Result<String, ToolError> {
        Ok("noon".to_owned())
    }
}

fn main() {
    let counter = Arc::new(Counter { start: 1 });
    let pack = tool_pack![Hello, Counter = counter.clone(), Clock = Clock];
    assert_eq!(
        pack.names().collect::<Vec<_>>(),
        ["hello", "read_counter", "reset_counter", "tell_time"]
    );
    let one = tool_pack![ReadCounterTool = counter.read_counter_tool()];
    assert_eq!(one.names().collect::<Vec<_>>(), ["read_counter"]);
    let empty = tool_pack![];
    assert!(empty.is_empty());
}
