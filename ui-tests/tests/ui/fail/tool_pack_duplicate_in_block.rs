// A #[pi_tools] block in a pack brings every tool of the block: a name it shares with an
// earlier item is one error, on the block's item.
use std::sync::Arc;

use pi_tool::{pi_tool, pi_tools, tool_pack, ToolError};

/// Read a note.
#[pi_tool(name = "read_note")]
pub async fn read_note() -> Result<String, ToolError> {
    Ok(String::new())
}

pub struct Notes;

#[pi_tools]
impl Notes {
    /// Save a note.
    #[pi_tool]
    pub async fn save_note(&self) -> Result<String, ToolError> {
        Ok(String::new())
    }

    /// Read a note.
    #[pi_tool]
    pub async fn read_note(&self) -> Result<String, ToolError> {
        Ok(String::new())
    }
}

fn main() {
    let notes = Arc::new(Notes);
    let _pack = tool_pack![ReadNote, Notes = notes];
}
