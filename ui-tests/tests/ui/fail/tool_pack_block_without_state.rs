// A #[pi_tools] block listed by its name alone: it needs its state.
use pi_tool::{pi_tools, tool_pack, ToolError};

#[derive(Default)]
pub struct Counter {
    count: u32,
}

#[pi_tools]
impl Counter {
    /// Read the counter.
    #[pi_tool]
    pub async fn read_counter(&self) -> Result<String, ToolError> {
        Ok(self.count.to_string())
    }
}

fn main() {
    let _pack = tool_pack![Counter];
}
