// `Option<AbortSignal>` is not a second params type: every call gets a signal.
use pi_tool::{AbortSignal, ToolError, pi_tool};

#[pi_tool::params]
pub struct EchoParams {
    /// The text to echo.
    pub text: String,
}

/// Echo the text.
#[pi_tool]
pub async fn echo(params: EchoParams, signal: Option<AbortSignal>) -> Result<String, ToolError> {
    if signal.is_some_and(|s| s.is_aborted()) {
        return Err(ToolError::new("aborted"));
    }
    Ok(params.text)
}

fn main() {}
