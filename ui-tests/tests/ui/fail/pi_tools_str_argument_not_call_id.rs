use pi_tool::{pi_tools, ToolError};

pub struct Notes;

#[pi_tools]
impl Notes {
    /// Search the notes.
    #[pi_tool]
    pub async fn search(&self, call_id: &str, query: &str) -> Result<String, ToolError> {
        Ok(format!("{call_id}: {query}"))
    }
}

fn main() {}
