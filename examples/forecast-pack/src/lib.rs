//! An example tool pack: tools a library author ships as a crate, for hosts to mount.
//!
//! [`pack`] returns the crate's tools as a [`ToolPack`]: `convert_temperature` (a free
//! function) and `get_forecast` (a method of [`Almanac`], whose data the tools share).
//! The names are checked for uniqueness at compile time by [`tool_pack!`].

use std::collections::BTreeMap;

use pi_tool_core::pack::ToolPack;
use pi_tool_core::{AgentToolResult, ToolError, pi_tool, pi_tools, tool_pack};
use serde::Serialize;

/// A temperature scale.
#[pi_tool_core::params] // Deserialize + JsonSchema through the core
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum Scale {
    /// Degrees Celsius.
    Celsius,
    /// Degrees Fahrenheit.
    Fahrenheit,
}

/// Arguments of `convert_temperature`.
#[pi_tool_core::params]
#[derive(Debug)]
#[serde(deny_unknown_fields)]
pub struct ConvertParams {
    /// The temperature to convert.
    pub value: f64,
    /// The scale of `value`.
    pub from: Scale,
}

/// Convert a temperature between Celsius and Fahrenheit. Returns the value in the
/// other scale, rounded to one decimal.
#[pi_tool(name = "convert_temperature", label = "Convert temperature")]
pub async fn convert_temperature(params: ConvertParams) -> Result<String, ToolError> {
    let (value, unit) = match params.from {
        Scale::Celsius => (params.value * 9.0 / 5.0 + 32.0, "fahrenheit"),
        Scale::Fahrenheit => ((params.value - 32.0) * 5.0 / 9.0, "celsius"),
    };
    Ok(format!(
        "{:.1} degrees {unit}",
        (value * 10.0).round() / 10.0
    ))
}

/// Arguments of `get_forecast`.
#[pi_tool_core::params]
#[derive(Debug)]
#[serde(deny_unknown_fields)]
pub struct ForecastParams {
    /// City name, for example Paris.
    #[schemars(length(min = 1, max = 80))]
    pub city: String,
    /// How many days ahead, 1 to 3.
    #[schemars(range(min = 1, max = 3))]
    pub days: u8,
}

/// What hosts see of a forecast.
#[pi_tool_core::output] // Serialize + JsonSchema through the core
#[derive(Debug, Clone, PartialEq)]
pub struct ForecastDetails {
    /// The city, as the almanac spells it.
    pub city: String,
    /// Daily highs in °C.
    pub highs: Vec<i32>,
}

/// The shared state of the almanac tools: daily highs per city.
#[derive(Debug, Default)]
pub struct Almanac {
    highs: BTreeMap<String, Vec<i32>>,
}

impl Almanac {
    /// An almanac with demo data for Paris and Tokyo.
    pub fn demo() -> Self {
        let mut highs = BTreeMap::new();
        highs.insert("Paris".to_owned(), vec![18, 20, 17]);
        highs.insert("Tokyo".to_owned(), vec![24, 23, 26]);
        Almanac { highs }
    }
}

#[pi_tools]
impl Almanac {
    /// Return the demo daily highs for the next 1 to 3 days in Paris or Tokyo.
    #[pi_tool(name = "get_forecast", label = "Get forecast")]
    async fn get_forecast(
        &self,
        params: ForecastParams,
    ) -> Result<AgentToolResult<ForecastDetails>, ToolError> {
        let Some((city, highs)) = self
            .highs
            .iter()
            .find(|(name, _)| name.eq_ignore_ascii_case(params.city.trim()))
        else {
            return Err(ToolError::new(format!(
                "No forecast for {}",
                params.city.trim()
            )));
        };
        let highs: Vec<i32> = highs
            .iter()
            .take(usize::from(params.days))
            .copied()
            .collect();
        let list: Vec<String> = highs.iter().map(|h| format!("{h}°C")).collect();
        Ok(AgentToolResult::text(
            format!("{city}: {}", list.join(", ")),
            ForecastDetails {
                city: city.clone(),
                highs,
            },
        ))
    }
}

/// The crate's tools, ready to mount: names unique (checked at compile time), owner
/// recorded as this crate and module.
pub fn pack() -> ToolPack {
    tool_pack![ConvertTemperature, Almanac = Almanac::demo()]
}
