//! Pi's custom-tool page's three tests, translated, plus cancellation mid-call and the unit
//! conversion. Each call goes through the real call path (`pi_tool::testing::call`:
//! validation, serde, execute, contained), as a host would make it.

use std::time::{Duration, Instant};

use pi_tool::AbortController;
use pi_tool::testing;
use weather_example::{GetWeather, Phase, Unit, WeatherParams};

fn params(city: &str, unit: Option<Unit>) -> WeatherParams {
    WeatherParams {
        city: city.to_owned(),
        unit,
    }
}

#[tokio::test]
async fn reports_progress_and_returns_a_typed_result() {
    let run = testing::call(GetWeather, params("Paris", Some(Unit::Celsius))).await;
    assert_eq!(run.update_texts(), ["Checking Paris..."]);
    assert_eq!(run.updates()[0].details.phase, Phase::Lookup);
    let result = run.result();
    assert_eq!(result.details.temperature, Some(18));
    assert_eq!(result.details.phase, Phase::Done);
    assert_eq!(result.text_content(), "Paris: 18 degrees celsius");
}

#[tokio::test]
async fn rejects_an_unsupported_city() {
    let run = testing::call(GetWeather, params("Oslo", None)).await;
    assert_eq!(run.error_text(), "Unsupported city: Oslo");
    assert!(!run.error().is_abort());
}

#[tokio::test]
async fn observes_cancellation() {
    let controller = AbortController::new();
    controller.abort();
    let run = testing::call(GetWeather, params("Tokyo", None))
        .signal(controller.signal())
        .await;
    assert!(run.error().is_abort(), "{:?}", run.error());
}

#[tokio::test]
async fn cancellation_during_the_delay_ends_the_call_early() {
    let controller = AbortController::new();
    let call = testing::call(GetWeather, params("Tokyo", None)).signal(controller.signal());
    let started = Instant::now();
    let run = tokio::spawn(call.into_future());
    tokio::time::sleep(Duration::from_millis(20)).await;
    controller.abort();
    let run = run.await.unwrap();
    assert!(run.error().is_abort());
    assert!(started.elapsed() < Duration::from_millis(190));
}

#[tokio::test]
async fn fahrenheit_is_rounded_and_city_is_trimmed() {
    let tokyo = testing::call(GetWeather, params("  Tokyo ", Some(Unit::Fahrenheit))).await;
    assert_eq!(tokyo.text(), "Tokyo: 75 degrees fahrenheit");
    let paris = testing::call(GetWeather, params("paris", Some(Unit::Fahrenheit))).await;
    assert_eq!(paris.text(), "paris: 64 degrees fahrenheit");
    assert_eq!(paris.result().details.temperature, Some(64));
}

#[tokio::test]
async fn get_weather_accepts_whatever_its_schema_allows() {
    testing::assert_pack_accepts_its_schema(pi_tool::tool_pack![GetWeather]).await;
}
