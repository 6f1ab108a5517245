//! `#[pi_tool::params]`: a params type in one line, with serde and schemars attributes
//! still honoured, and with a renamed pi-tool.
extern crate pi_tool as pt;

use pi_tool::{ToolError, Tool, pi_tool};

/// The arguments.
#[pi_tool::params]
#[serde(deny_unknown_fields)]
pub struct WeatherParams {
    /// City name.
    #[schemars(length(min = 1, max = 80))]
    pub city: String,
    /// Unit.
    pub unit: Option<Unit>,
}

/// A unit.
#[pi_tool::params]
#[serde(rename_all = "lowercase")]
#[derive(Debug, Clone, Copy)]
pub enum Unit {
    Celsius,
    Fahrenheit,
}

/// Through a renamed dependency; `unit` and `units` are read through the renamed
/// crate's `ParamsFieldOf` (a field of a type pi-tool does not know).
#[pt::params(crate = "pt")]
pub struct Renamed {
    pub n: u32,
    pub unit: Unit,
    pub units: Vec<Unit>,
}

/// Returns the city.
#[pi_tool(name = "get_weather")]
pub async fn get_weather(params: WeatherParams) -> Result<String, ToolError> {
    Ok(params.city)
}

fn main() {
    let schema = pi_tool::schema::ToolSchema::for_type::<WeatherParams>();
    let json = schema.json();
    assert_eq!(json["additionalProperties"], false);
    assert_eq!(json["properties"]["city"]["maxLength"], 80);
    assert_eq!(json["properties"]["city"]["description"], "City name.");
    let params: WeatherParams =
        pi_tool::__private::serde_json::from_value(pi_tool::json!({"city": "Paris", "unit": "fahrenheit"}))
            .unwrap();
    assert!(matches!(params.unit, Some(Unit::Fahrenheit)));
    let renamed: Renamed = pi_tool::__private::serde_json::from_value(
        pi_tool::json!({"n": 1, "unit": "celsius", "units": ["fahrenheit"]}),
    )
    .unwrap();
    assert!(matches!(renamed.unit, Unit::Celsius));
    assert!(matches!(renamed.units[..], [Unit::Fahrenheit]));
    assert_eq!(GetWeather::NAME, "get_weather");
}
