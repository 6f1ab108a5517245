// An anyhow-style boxed error type: one error on it, with the fix (`ToolError`, into which
// `?` converts any `std::error::Error + Send + Sync + 'static`).
use pi_tool::pi_tool;

#[pi_tool::params]
pub struct ReadParams {
    /// The file to read.
    pub path: String,
}

/// Read a file.
#[pi_tool]
pub async fn read_file(
    params: ReadParams,
) -> Result<String, Box<dyn std::error::Error + Send + Sync>> {
    Ok(std::fs::read_to_string(&params.path)?)
}

fn main() {}
