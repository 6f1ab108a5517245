//! The call id is the `&str` named as one, or the `&str` right before the params.
use pi_tool::{pi_tool, ToolError, Tool};

#[pi_tool::params]
pub struct Params {
    pub text: String,
}

/// Echo with the call id first.
#[pi_tool]
pub async fn positional(id: &str, params: Params) -> Result<String, ToolError> {
    Ok(format!("{id}: {}", params.text))
}

/// The call id alone, named as one.
#[pi_tool]
pub async fn named(call_id: &str) -> Result<String, ToolError> {
    Ok(call_id.to_owned())
}

/// Named with Pi's name.
#[pi_tool]
pub async fn pi_named(_tool_call_id: &str, signal: pi_tool::AbortSignal) -> Result<String, ToolError> {
    signal.check()?;
    Ok(String::new())
}

fn main() {
    assert_eq!(Positional::NAME, "positional");
    assert_eq!(Named::NAME, "named");
    assert_eq!(PiNamed::NAME, "pi_named");
}
