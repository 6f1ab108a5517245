//! Plain text results, with call id and signal, and `?` on a std error.
use pi_tool::{AbortSignal, ToolError, pi_tool};
use serde::Deserialize;

#[derive(Deserialize, pi_tool::JsonSchema)]
#[schemars(crate = "pi_tool::schemars")]
pub struct Params {
    pub number: String,
}

/// Parses a number.
#[pi_tool]
pub async fn parse_number(call_id: &str, params: Params, signal: AbortSignal) -> Result<String, ToolError> {
    if signal.is_aborted() {
        return Err(ToolError::aborted());
    }
    let n: i64 = params.number.trim().parse()?;
    Ok(format!("{call_id}: {n}"))
}

/// Echoes through an alias of `Result`.
#[pi_tool]
pub async fn echo(params: Params) -> std::io::Result<String> {
    Ok(params.number)
}

fn main() {
    let _ = (ParseNumber, Echo);
}
