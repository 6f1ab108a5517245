use pi_tool::pi_tools;
use serde::Deserialize;

#[derive(Deserialize, pi_tool::JsonSchema)]
#[schemars(crate = "pi_tool::schemars")]
pub struct Params {
    pub city: String,
}

pub struct Weather;

#[pi_tools]
impl Weather {
    pub fn city(&self) -> String {
        String::new()
    }
}

fn main() {
    let _ = Params { city: String::new() }.city;
}
