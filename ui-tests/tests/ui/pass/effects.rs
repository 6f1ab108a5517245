//! Every effect key: bare flags, `= false`, and a title.
use pi_tool::{Tool, ToolAnnotations, ToolError, pi_tool};

/// Deletes a note.
#[pi_tool(destructive, idempotent, open_world = false, title = "Delete note")]
pub async fn delete_note() -> Result<String, ToolError> {
    Ok(String::new())
}

/// Searches the web.
#[pi_tool(read_only, open_world)]
pub async fn search() -> Result<String, ToolError> {
    Ok(String::new())
}

/// Undeclared.
#[pi_tool]
pub async fn other() -> Result<String, ToolError> {
    Ok(String::new())
}

fn main() {
    assert_eq!(
        DeleteNote::ANNOTATIONS,
        ToolAnnotations::new()
            .destructive(true)
            .idempotent(true)
            .open_world(false)
            .title("Delete note")
    );
    assert!(Search::ANNOTATIONS.is_read_only());
    assert!(!Search::ANNOTATIONS.needs_approval());
    assert!(Other::ANNOTATIONS.is_empty());
}
