//! Mounting packs from other crates: names, owners, merge conflicts, and a real call.

use pi_tool::ToolInvocation;
use pi_tool::pack::{PackError, ToolPack};
use pi_tool::{AbortSignal, OnUpdate, json, tool_pack};
use weather_example::GetWeather;

#[test]
fn the_forecast_pack_records_its_crate_as_owner() {
    let pack = forecast_pack::pack();
    assert_eq!(
        pack.names().collect::<Vec<_>>(),
        ["convert_temperature", "get_forecast"]
    );
    assert!(
        pack.entries()
            .iter()
            .all(|e| e.owner.as_str() == "forecast-pack")
    );
}

#[test]
fn a_name_taken_twice_fails_naming_both_owners_and_a_prefix_resolves_it() {
    let weather: ToolPack = tool_pack![GetWeather];
    let again: ToolPack = tool_pack![GetWeather];
    let error = weather.clone().merge(again.clone()).unwrap_err();
    assert!(matches!(error, PackError::Duplicate { .. }));
    assert_eq!(
        error.to_string(),
        "tool name \"get_weather\" is registered twice: by mount (crate pack-app) and by mount (crate pack-app)"
    );
    let both = weather.merge(again.prefixed("backup_").unwrap()).unwrap();
    assert_eq!(
        both.names().collect::<Vec<_>>(),
        ["get_weather", "backup_get_weather"]
    );
}

#[test]
fn renaming_and_filtering_keep_names_valid_and_unique() {
    let pack = forecast_pack::pack();
    assert!(matches!(
        pack.clone().renamed("get_forecast", "convert_temperature"),
        Err(PackError::Duplicate { .. })
    ));
    assert!(matches!(
        pack.clone().renamed("get_forecast", "bad name"),
        Err(PackError::InvalidName(_))
    ));
    let only = pack
        .filter(|spec| spec.name == "get_forecast")
        .renamed("get_forecast", "forecast")
        .unwrap();
    assert_eq!(only.names().collect::<Vec<_>>(), ["forecast"]);
}

#[tokio::test]
async fn a_mounted_method_tool_shares_its_state_and_validates_arguments() {
    let tools = forecast_pack::pack().tools();
    let forecast = tools.iter().find(|t| t.name() == "get_forecast").unwrap();
    let args = json!({"city": "tokyo", "days": 2});
    let params = forecast.check_arguments(&args).unwrap();
    let result = forecast
        .execute(ToolInvocation::new(
            "c1",
            &params,
            AbortSignal::never(),
            OnUpdate::none(),
        ))
        .await
        .unwrap();
    assert_eq!(result.text_content(), "Tokyo: 24°C, 23°C");
    let error = forecast
        .check_arguments(&json!({"city": "Paris", "days": 9}))
        .unwrap_err();
    assert!(
        error.message().contains("  - days: must be <= 3"),
        "{error}"
    );
}

#[test]
fn every_mounted_tool_is_portable_to_every_provider() {
    use pi_tool::profiles::{Profile, assert_portable};
    let pack = tool_pack![GetWeather].merge(forecast_pack::pack()).unwrap();
    assert_portable(
        &pack.tools(),
        &[
            Profile::Mcp,
            Profile::Anthropic,
            Profile::AnthropicStrict,
            Profile::OpenAi,
            Profile::OpenAiStrict,
            Profile::Gemini,
            Profile::GeminiOpenApi,
            Profile::Ollama,
        ],
    );
}

#[tokio::test]
async fn every_mounted_tool_accepts_whatever_its_schema_allows() {
    // get_weather and both forecast-pack tools, called through the agent loop with
    // arguments generated from their schemas: bounds, enums, optional fields in and out.
    let pack = tool_pack![GetWeather].merge(forecast_pack::pack()).unwrap();
    let report = pi_tool::testing::check_schema(&pack).await;
    assert!(report.is_ok(), "{report}");
    for name in pack.names() {
        assert!(
            report.calls.iter().any(|o| o.call.tool == name),
            "{name} was called"
        );
    }
    pi_tool::testing::assert_pack_accepts_its_schema(pack).await;
}
