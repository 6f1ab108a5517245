//! A description from a Markdown file, with doc lines around it.
use pi_tool::{ToolError, Tool, pi_tool};

/// Searches the notes.
///
#[doc = include_str!("search_notes.md")]
#[pi_tool]
pub async fn search_notes() -> Result<String, ToolError> {
    Ok(String::new())
}

fn main() {
    assert_eq!(
        SearchNotes::DESCRIPTION,
        "Searches the notes.\n\nUse for questions about the user's notes.\n\n```text\nquery: words\n```"
    );
}
