// A newtype params type derives, but a model sends a JSON object: refused, with the struct
// written with a named field.
#[pi_tool::params]
pub struct Query(pub String);

/// Search the notes.
#[pi_tool::pi_tool]
pub async fn search(params: Query) -> Result<String, pi_tool::ToolError> {
    Ok(params.0)
}

fn main() {}
