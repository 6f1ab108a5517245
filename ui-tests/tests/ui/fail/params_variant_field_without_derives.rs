// A field of a struct variant holding a user type without derives is one error too.
use pi_tool::{pi_tool, ToolError};

pub struct Location {
    pub city: String,
}

#[pi_tool::params]
#[serde(tag = "kind", rename_all = "snake_case")]
pub enum Target {
    /// Somewhere by name.
    Named {
        /// The place.
        place: Location,
    },
    /// Here.
    Here,
}

#[pi_tool::params]
pub struct Params {
    /// Where to look.
    pub target: Target,
}

/// Return the weather at a target.
#[pi_tool]
pub async fn get_weather(params: Params) -> Result<String, ToolError> {
    Ok(match params.target {
        Target::Named { place } => place.city,
        Target::Here => "here".to_owned(),
    })
}

fn main() {}
