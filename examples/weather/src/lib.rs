//! The seed guide's `get_weather` tool, in Rust.
//!
//! Demo data for two cities (Paris 18 °C, Tokyo 24 °C), a progress update before the
//! lookup, a 200 ms delay that honours the abort signal, and a business-rule error for
//! any other city.
//!
//! [`get_weather`] is the tool body as the seed writes it; `#[pi_tool]` turns it into
//! [`GetWeather`], a typed tool whose schema comes from [`WeatherParams`], ready for an
//! `Agent` (`into_agent_tool`) or a session (`custom_tool`). [`gate`] is the seed's
//! permission gate: an extension that registers `get_weather` and asks the user before
//! every call.

pub mod gate;

use std::time::Duration;

use pi_tool::{AbortSignal, AgentToolResult, JsonSchema, OnUpdate, ToolError, pi_tool};
use serde::{Deserialize, Serialize};

/// The temperature unit of the answer.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "lowercase")]
#[schemars(crate = "pi_tool::schemars")]
pub enum Unit {
    /// Degrees Celsius (the default).
    #[default]
    Celsius,
    /// Degrees Fahrenheit, rounded to a whole degree.
    Fahrenheit,
}

impl Unit {
    fn as_str(self) -> &'static str {
        match self {
            Unit::Celsius => "celsius",
            Unit::Fahrenheit => "fahrenheit",
        }
    }
}

/// The arguments the model sends.
#[derive(Debug, Clone, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
#[schemars(crate = "pi_tool::schemars")]
pub struct WeatherParams {
    /// City name. This demo supports Paris and Tokyo.
    #[schemars(length(min = 1, max = 80))]
    pub city: String,
    /// Temperature unit; celsius when left out.
    pub unit: Option<Unit>,
}

/// Where a weather lookup is.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Phase {
    /// The lookup has started.
    Lookup,
    /// The temperature is known.
    Done,
}

/// Structured details for hosts and UIs (never shown to the model).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct WeatherDetails {
    /// Where the lookup is.
    pub phase: Phase,
    /// The city as the model gave it, trimmed.
    pub city: String,
    /// The unit of `temperature`.
    pub unit: Unit,
    /// The temperature, once known.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub temperature: Option<i64>,
}

fn celsius_by_city(city: &str) -> Option<i64> {
    match city.to_lowercase().as_str() {
        "paris" => Some(18),
        "tokyo" => Some(24),
        _ => None,
    }
}

/// How long the demo lookup pretends to take.
pub const LOOKUP_DELAY: Duration = Duration::from_millis(200);

/// Return the demo temperature for Paris or Tokyo. Use only for a weather or
/// temperature question about one of those cities.
#[pi_tool(
    name = "get_weather",
    label = "Get weather",
    execution_mode = "parallel",
    prompt_snippet = "Look up the demo temperature for Paris or Tokyo"
)]
pub async fn get_weather(
    _call_id: &str,
    params: WeatherParams,
    signal: AbortSignal,
    on_update: OnUpdate<WeatherDetails>,
) -> Result<AgentToolResult<WeatherDetails>, ToolError> {
    lookup_weather(params, signal, on_update, LOOKUP_DELAY).await
}

/// The body of `get_weather` with the delay as a parameter (benchmarks use zero).
pub async fn lookup_weather(
    params: WeatherParams,
    signal: AbortSignal,
    on_update: OnUpdate<WeatherDetails>,
    delay: Duration,
) -> Result<AgentToolResult<WeatherDetails>, ToolError> {
    signal.throw_if_aborted()?;

    let city = params.city.trim().to_owned();
    let unit = params.unit.unwrap_or_default();
    let Some(celsius) = celsius_by_city(&city) else {
        return Err(ToolError::new(format!("Unsupported city: {city}")));
    };

    on_update.call(AgentToolResult::text(
        format!("Checking {city}..."),
        WeatherDetails {
            phase: Phase::Lookup,
            city: city.clone(),
            unit,
            temperature: None,
        },
    ));

    if !delay.is_zero() {
        signal.sleep(delay).await?;
    }
    let temperature = match unit {
        Unit::Celsius => celsius,
        // JS Math.round and f64::round agree for the positive values of this demo.
        Unit::Fahrenheit => ((celsius as f64) * 9.0 / 5.0 + 32.0).round() as i64,
    };

    Ok(AgentToolResult::text(
        format!("{city}: {temperature} degrees {}", unit.as_str()),
        WeatherDetails {
            phase: Phase::Done,
            city,
            unit,
            temperature: Some(temperature),
        },
    ))
}
