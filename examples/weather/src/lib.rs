//! The `get_weather` tool of Pi's custom-tool page (`docs/pi-custom-tools.md`), in Rust.
//!
//! Demo data for two cities (Paris 18 °C, Tokyo 24 °C), a progress update before the
//! lookup, a 200 ms delay that honours the abort signal, and a business-rule error for
//! any other city.
//!
//! [`get_weather`] is the tool body as Pi's custom-tool page writes it; `#[pi_tool]` turns it into
//! [`GetWeather`], a typed tool whose schema comes from [`WeatherParams`], ready for an
//! `Agent` (`into_agent_tool`) or a session (`custom_tool`). [`gate`] is Pi's custom-tool page's
//! permission gate: an extension that registers `get_weather` and asks the user before
//! every call.

pub mod gate;

use std::fmt::Write as _;
use std::time::Duration;

use pi_tool::{AbortSignal, AgentToolResult, OnUpdate, ToolError, pi_tool};
use serde::{Deserialize, Serialize};

/// The temperature unit of the answer.
#[pi_tool::params]
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize)]
#[serde(rename_all = "lowercase")]
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

/// The arguments the model sends (`Serialize` too, so that tests can pass them typed:
/// `pi_tool::testing::call`).
#[pi_tool::params]
#[derive(Debug, Clone, Serialize)]
#[serde(deny_unknown_fields)]
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
    // The seed lower-cases the city (`toLowerCase`) before its lookup. For an ASCII name an
    // ASCII case-insensitive comparison is the same test without a new string; other names
    // take Pi's custom-tool page's path, since Unicode lower-casing can produce ASCII (the Kelvin sign
    // lower-cases to `k`).
    let known = |name: &str| match name {
        "paris" => Some(18),
        "tokyo" => Some(24),
        _ => None,
    };
    if !city.is_ascii() {
        return known(&city.to_lowercase());
    }
    ["paris", "tokyo"]
        .into_iter()
        .find(|name| city.eq_ignore_ascii_case(name))
        .and_then(known)
}

/// How long the demo lookup pretends to take.
pub const LOOKUP_DELAY: Duration = Duration::from_millis(200);

/// Return the demo temperature for Paris or Tokyo. Use only for a weather or
/// temperature question about one of those cities.
#[pi_tool(
    name = "get_weather",
    label = "Get weather",
    execution_mode = "parallel",
    prompt_snippet = "Look up the demo temperature for Paris or Tokyo",
    // It changes nothing: approval never asks, MCP lists `readOnlyHint: true`.
    read_only
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
    signal.check()?;

    // The model's string is reused when it has nothing to trim (the usual case).
    let city = match params.city.trim() {
        trimmed if trimmed.len() == params.city.len() => params.city,
        trimmed => trimmed.to_owned(),
    };
    let unit = params.unit.unwrap_or_default();
    let Some(celsius) = celsius_by_city(&city) else {
        return Err(ToolError::new(format!("Unsupported city: {city}")));
    };

    // The seed writes `onUpdate?.(...)`: without a listener the update is never built.
    if on_update.is_listening() {
        on_update.send(AgentToolResult::text(
            format!("Checking {city}..."),
            WeatherDetails {
                phase: Phase::Lookup,
                city: city.clone(),
                unit,
                temperature: None,
            },
        ));
    }

    if !delay.is_zero() {
        signal.sleep(delay).await?;
    }
    let temperature = match unit {
        Unit::Celsius => celsius,
        // JS Math.round and f64::round agree for the positive values of this demo.
        Unit::Fahrenheit => ((celsius as f64) * 9.0 / 5.0 + 32.0).round() as i64,
    };

    // "{city}: {temperature} degrees {unit}", sized once and formatted piece by piece:
    // `format!` guesses low for a leading argument and grows the string twice, and its
    // machinery costs more than this whole answer.
    let mut text = String::with_capacity(city.len() + 32);
    text.push_str(&city);
    text.push_str(": ");
    let _ = write!(text, "{temperature}");
    text.push_str(" degrees ");
    text.push_str(unit.as_str());
    Ok(AgentToolResult::text(
        text,
        WeatherDetails {
            phase: Phase::Done,
            city,
            unit,
            temperature: Some(temperature),
        },
    ))
}
