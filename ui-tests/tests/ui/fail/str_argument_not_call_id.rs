use pi_tool::{pi_tool, ToolError};

/// Count the words of a text.
#[pi_tool]
pub async fn word_count(text: &str) -> Result<String, ToolError> {
    Ok(text.split_whitespace().count().to_string())
}

fn main() {}
