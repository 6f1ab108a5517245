//! `get_weather` as hosts see it: metadata and schema, the JSON-level contract, and the
//! five-argument form through `wrap_tool_definition`.

use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};

use pi_tool::ToolInvocation;
use pi_tool::context::{ExtensionContext, Mode};
use pi_tool::{
    AbortSignal, AgentToolResult, IntoAgentTool, JsonToolResult, OnUpdate, Tool, ToolError,
    ToolExecutionMode, json, pi_tool, wrap_tool_definition,
};
use weather_example::{GetWeather, WeatherDetails, WeatherParams, get_weather};

#[test]
fn metadata_and_schema_are_the_seeds() {
    let tool = GetWeather.into_agent_tool();
    let spec = tool.spec();
    let snapshot = json!({
        "name": spec.name,
        "label": spec.label,
        "description": spec.description,
        "executionMode": spec.execution_mode,
        "promptSnippet": spec.prompt_snippet,
        "parameters": spec.parameters.json(),
    });
    let expected = json!({
        "name": "get_weather",
        "label": "Get weather",
        "description": "Return the demo temperature for Paris or Tokyo. Use only for a weather or temperature question about one of those cities.",
        "executionMode": "parallel",
        "promptSnippet": "Look up the demo temperature for Paris or Tokyo",
        "parameters": {
            "type": "object",
            "properties": {
                "city": {
                    "description": "City name. This demo supports Paris and Tokyo.",
                    "type": "string",
                    "minLength": 1,
                    "maxLength": 80
                },
                "unit": {
                    "description": "Temperature unit; celsius when left out.",
                    "anyOf": [
                        {
                            "description": "The temperature unit of the answer.\ncelsius: Degrees Celsius (the default); fahrenheit: Degrees Fahrenheit, rounded to a whole degree",
                            "type": "string",
                            "enum": ["celsius", "fahrenheit"]
                        },
                        {"type": "null"}
                    ]
                }
            },
            "additionalProperties": false,
            "required": ["city"]
        }
    });
    assert_eq!(format!("{snapshot:#}"), format!("{expected:#}"));
    assert_eq!(GetWeather::NAME, "get_weather");
    assert_eq!(
        GetWeather::EXECUTION_MODE,
        Some(ToolExecutionMode::Parallel)
    );
}

fn recorder() -> (
    OnUpdate<Option<pi_tool::JsonDetails>>,
    Arc<Mutex<Vec<JsonToolResult>>>,
) {
    let seen = Arc::new(Mutex::new(Vec::new()));
    let sink = seen.clone();
    (OnUpdate::new(move |u| sink.lock().unwrap().push(u)), seen)
}

#[tokio::test]
async fn json_level_call_validates_runs_and_serialises() {
    let tool = GetWeather.into_agent_tool();
    let args = json!({"city": "Tokyo"});
    let params = tool.check_arguments(&args).unwrap();
    let (on_update, updates) = recorder();
    let result = tool
        .execute(ToolInvocation::new(
            "call_1",
            &params,
            AbortSignal::never(),
            on_update,
        ))
        .await
        .unwrap();
    assert_eq!(
        result.to_json(),
        json!({"content": [{"type": "text", "text": "Tokyo: 24 degrees celsius"}],
               "details": {"phase": "done", "city": "Tokyo", "unit": "celsius", "temperature": 24}})
    );
    assert_eq!(
        updates.lock().unwrap()[0].to_json(),
        json!({"content": [{"type": "text", "text": "Checking Tokyo..."}],
               "details": {"phase": "lookup", "city": "Tokyo", "unit": "celsius"}})
    );
}

#[test]
fn bad_arguments_get_pis_validation_text() {
    let tool = GetWeather.into_agent_tool();
    let error = tool
        .check_arguments(&json!({"city": "Paris", "unit": "kelvin"}))
        .unwrap_err();
    assert!(
        error
            .message()
            .starts_with("Validation failed for tool \"get_weather\":\n"),
        "{error}"
    );
    assert!(
        error
            .message()
            .ends_with("Received arguments:\n{\n  \"city\": \"Paris\",\n  \"unit\": \"kelvin\"\n}")
    );
    let error = tool.check_arguments(&json!({"country": "FR"})).unwrap_err();
    assert!(
        error
            .message()
            .contains("  - city: must have required properties city"),
        "{error}"
    );
}

/// Pi's custom-tool page's five-argument `getWeather` definition: it reuses the core tool and sees
/// the session context.
#[pi_tool(
    name = "get_weather",
    label = "Get weather",
    prompt_snippet = "Look up the demo temperature for Paris or Tokyo"
)]
/// Return the demo temperature for Paris or Tokyo. Use only for a weather or
/// temperature question about one of those cities.
async fn get_weather_session(
    call_id: &str,
    params: WeatherParams,
    signal: AbortSignal,
    on_update: OnUpdate<WeatherDetails>,
    ctx: ExtensionContext,
) -> Result<AgentToolResult<WeatherDetails>, ToolError> {
    assert_eq!(ctx.mode(), Mode::Rpc);
    get_weather(call_id, params, signal, on_update).await
}

#[tokio::test]
async fn five_argument_form_gets_a_fresh_context_per_call() {
    let built = Arc::new(AtomicUsize::new(0));
    let counter = built.clone();
    let tool = wrap_tool_definition(GetWeatherSession.into_agent_tool(), move || {
        counter.fetch_add(1, Ordering::SeqCst);
        ExtensionContext::builder("/tmp").mode(Mode::Rpc).build()
    });
    assert_eq!(tool.spec().name, "get_weather");
    assert_eq!(
        tool.spec().prompt_snippet.as_deref(),
        Some("Look up the demo temperature for Paris or Tokyo")
    );
    for city in ["Paris", "Tokyo"] {
        let args = json!({ "city": city });
        let params = tool.check_arguments(&args).unwrap();
        let result = tool
            .execute(ToolInvocation::new(
                "c",
                &params,
                AbortSignal::never(),
                OnUpdate::none(),
            ))
            .await
            .unwrap();
        assert!(result.text_content().starts_with(city));
    }
    assert_eq!(built.load(Ordering::SeqCst), 2);
}
