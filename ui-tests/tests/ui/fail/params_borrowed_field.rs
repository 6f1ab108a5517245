use pi_tool::{pi_tool, ToolError};

/// The note to append.
#[pi_tool::params]
pub struct AppendParams<'a> {
    /// The text to append.
    pub text: &'a str,
}

/// Append a line to the notes.
#[pi_tool]
pub async fn append(params: AppendParams) -> Result<String, ToolError> {
    Ok(format!("appended {} bytes", params.text.len()))
}

fn main() {}
