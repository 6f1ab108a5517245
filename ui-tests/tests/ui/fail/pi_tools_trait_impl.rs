use pi_tool::pi_tools;
use serde::Deserialize;

#[derive(Deserialize, pi_tool::JsonSchema)]
#[schemars(crate = "pi_tool::schemars")]
pub struct Params {
    pub city: String,
}

pub struct Weather;

pub trait Lookup {
    fn lookup(&self) -> String;
}

#[pi_tools]
impl Lookup for Weather {
    fn lookup(&self) -> String {
        String::new()
    }
}

fn main() {}
