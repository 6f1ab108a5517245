use pi_tool::pi_tool;

/// Not a function.
#[pi_tool]
pub struct GetWeather;

fn main() {}
