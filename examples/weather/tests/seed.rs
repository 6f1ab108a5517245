//! The seed guide's three tests, translated, plus the unit conversion.

use std::sync::{Arc, Mutex};

use pi_tool::{AbortController, AbortSignal, AgentToolResult, OnUpdate};
use weather_example::{Phase, Unit, WeatherDetails, WeatherParams, get_weather};

fn params(city: &str, unit: Option<Unit>) -> WeatherParams {
    WeatherParams {
        city: city.to_owned(),
        unit,
    }
}

#[tokio::test]
async fn reports_progress_and_returns_a_typed_result() {
    let updates = Arc::new(Mutex::new(Vec::new()));
    let sink = updates.clone();
    let on_update = OnUpdate::new(move |update: AgentToolResult<WeatherDetails>| {
        sink.lock()
            .unwrap()
            .push((update.text_content(), update.details));
    });
    let result = get_weather(
        "test-call",
        params("Paris", Some(Unit::Celsius)),
        AbortSignal::never(),
        on_update,
    )
    .await
    .unwrap();

    let updates = updates.lock().unwrap();
    assert_eq!(updates.len(), 1);
    assert_eq!(updates[0].0, "Checking Paris...");
    assert_eq!(updates[0].1.phase, Phase::Lookup);
    assert_eq!(result.details.temperature, Some(18));
    assert_eq!(result.details.phase, Phase::Done);
    assert_eq!(result.text_content(), "Paris: 18 degrees celsius");
}

#[tokio::test]
async fn rejects_an_unsupported_city() {
    let error = get_weather(
        "test-call",
        params("Oslo", None),
        AbortSignal::never(),
        OnUpdate::none(),
    )
    .await
    .unwrap_err();
    assert_eq!(error.message(), "Unsupported city: Oslo");
    assert!(!error.is_abort());
}

#[tokio::test]
async fn observes_cancellation() {
    let controller = AbortController::new();
    controller.abort();
    let error = get_weather(
        "test-call",
        params("Tokyo", None),
        controller.signal(),
        OnUpdate::none(),
    )
    .await
    .unwrap_err();
    assert!(error.is_abort(), "{error:?}");
}

#[tokio::test]
async fn cancellation_during_the_delay_ends_the_call_early() {
    let controller = AbortController::new();
    let signal = controller.signal();
    let started = std::time::Instant::now();
    let call = tokio::spawn(async move {
        get_weather("c", params("Tokyo", None), signal, OnUpdate::none()).await
    });
    tokio::time::sleep(std::time::Duration::from_millis(20)).await;
    controller.abort();
    let error = call.await.unwrap().unwrap_err();
    assert!(error.is_abort());
    assert!(started.elapsed() < std::time::Duration::from_millis(190));
}

#[tokio::test]
async fn fahrenheit_is_rounded_and_city_is_trimmed() {
    let tokyo = get_weather(
        "c",
        params("  Tokyo ", Some(Unit::Fahrenheit)),
        AbortSignal::never(),
        OnUpdate::none(),
    )
    .await
    .unwrap();
    assert_eq!(tokyo.text_content(), "Tokyo: 75 degrees fahrenheit");
    let paris = get_weather(
        "c",
        params("paris", Some(Unit::Fahrenheit)),
        AbortSignal::never(),
        OnUpdate::none(),
    )
    .await
    .unwrap();
    assert_eq!(paris.text_content(), "paris: 64 degrees fahrenheit");
    assert_eq!(paris.details.temperature, Some(64));
}
