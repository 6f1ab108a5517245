// A field holding a user type without derives inside a std container is one error too.
use pi_tool::{pi_tool, ToolError};

pub struct Stop {
    pub city: String,
}

#[pi_tool::params]
pub struct Params {
    /// The stops on the way.
    pub stops: Vec<Stop>,
}

/// Plan a trip.
#[pi_tool]
pub async fn plan(params: Params) -> Result<String, ToolError> {
    Ok(params.stops.len().to_string())
}

fn main() {}
