//! Side (c) of the MCP floor bench: `get_weather` written with rmcp's macros alone
//! (`#[tool_router]`, `#[tool]`, `#[tool_handler]`), no pi-tool. The same parameters
//! (a city of 1 to 80 characters, an optional `celsius`/`fahrenheit` unit, no other
//! field) and the same answer, byte for byte, as `weather-mcp` with no lookup delay: the
//! text `Tokyo: 24 degrees celsius` and the details under `_meta["pi-tool/details"]`;
//! and, as `weather-mcp`'s tool reports its lookup, the same progress notification
//! (`Checking Tokyo...`, with the partial result in `_meta`) to a request with a progress
//! token (rmcp's clients give every request one).
//!
//! `rmcp-weather` serves stdio (rmcp's `stdio_pipes`, its non-blocking transport for a
//! server started with pipes); `rmcp-weather --http 127.0.0.1:0` serves rmcp's
//! streamable HTTP service on hyper and prints
//! `rmcp-weather: serving MCP over streamable HTTP at http://ADDRESS/mcp` to stderr.

use std::sync::Arc;

use rmcp::handler::server::wrapper::Parameters;
use rmcp::model::{
    CallToolResult, ContentBlock, ErrorData, JsonObject, MetaObject, NotificationMetaObject,
    ProgressNotificationParam,
};
use rmcp::service::{RequestContext, RoleServer};
use rmcp::{ServerHandler, ServiceExt, schemars, tool, tool_handler, tool_router};
use serde::Deserialize;

/// The temperature unit of the answer.
#[derive(Debug, Clone, Copy, Deserialize, schemars::JsonSchema)]
#[serde(rename_all = "lowercase")]
enum Unit {
    /// Degrees Celsius (the default).
    Celsius,
    /// Degrees Fahrenheit, rounded to a whole degree.
    Fahrenheit,
}

/// The arguments of `get_weather`.
#[derive(Debug, Deserialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields)]
struct WeatherParams {
    /// City name. This demo supports Paris and Tokyo.
    #[schemars(length(min = 1, max = 80))]
    city: String,
    /// Temperature unit; celsius when left out.
    unit: Option<Unit>,
}

#[derive(Debug, Clone, Default)]
struct Weather;

#[tool_router]
impl Weather {
    /// The body of `weather_example::lookup_weather` without its delay.
    #[tool(
        name = "get_weather",
        description = "Return the demo temperature for Paris or Tokyo. Use only for a weather or temperature question about one of those cities."
    )]
    async fn get_weather(
        &self,
        Parameters(params): Parameters<WeatherParams>,
        context: RequestContext<RoleServer>,
    ) -> Result<CallToolResult, ErrorData> {
        let city = params.city.trim();
        if city.chars().count() > 80 || city.is_empty() {
            return Ok(CallToolResult::error(vec![ContentBlock::text(
                "city must be 1 to 80 characters",
            )]));
        }
        let celsius = match city.to_lowercase().as_str() {
            "paris" => 18,
            "tokyo" => 24,
            _ => {
                return Ok(CallToolResult::error(vec![ContentBlock::text(format!(
                    "Unsupported city: {city}"
                ))]));
            }
        };
        let unit = params.unit.unwrap_or(Unit::Celsius);
        let unit_name = match unit {
            Unit::Celsius => "celsius",
            Unit::Fahrenheit => "fahrenheit",
        };
        if let Some(token) = context.meta.get_progress_token() {
            let text = format!("Checking {city}...");
            let mut meta = JsonObject::new();
            meta.insert(
                "pi-tool/partialResult".to_owned(),
                serde_json::json!({
                    "content": [{"type": "text", "text": text}],
                    "details": {"phase": "lookup", "city": city, "unit": unit_name},
                }),
            );
            let mut progress = ProgressNotificationParam::new(token, 1.0).with_message(text);
            progress.meta = Some(NotificationMetaObject(MetaObject(meta)));
            let _ = context.peer.notify_progress(progress).await;
        }
        let (temperature, unit) = match unit {
            Unit::Celsius => (celsius, "celsius"),
            Unit::Fahrenheit => (
                ((celsius as f64) * 9.0 / 5.0 + 32.0).round() as i64,
                "fahrenheit",
            ),
        };
        let mut result = CallToolResult::success(vec![ContentBlock::text(format!(
            "{city}: {temperature} degrees {unit}"
        ))]);
        let mut meta = JsonObject::new();
        meta.insert(
            "pi-tool/details".to_owned(),
            serde_json::json!({"phase": "done", "city": city, "unit": unit, "temperature": temperature}),
        );
        result.meta = Some(MetaObject(meta));
        Ok(result)
    }
}

#[tool_handler]
impl ServerHandler for Weather {}

async fn serve_http(address: &str) -> Result<(), String> {
    use rmcp::transport::streamable_http_server::{
        StreamableHttpServerConfig, StreamableHttpService, session::local::LocalSessionManager,
    };
    let listener = tokio::net::TcpListener::bind(address)
        .await
        .map_err(|error| format!("cannot listen on {address}: {error}"))?;
    let bound = listener.local_addr().map_err(|error| error.to_string())?;
    eprintln!("rmcp-weather: serving MCP over streamable HTTP at http://{bound}/mcp");
    let service = Arc::new(StreamableHttpService::new(
        || Ok(Weather),
        Arc::new(LocalSessionManager::default()),
        StreamableHttpServerConfig::default(),
    ));
    loop {
        let (stream, _) = listener.accept().await.map_err(|e| e.to_string())?;
        let _ = stream.set_nodelay(true);
        let service = service.clone();
        tokio::spawn(async move {
            let handler = hyper::service::service_fn(
                move |request: hyper::Request<hyper::body::Incoming>| {
                    let service = service.clone();
                    async move { Ok::<_, std::convert::Infallible>(service.handle(request).await) }
                },
            );
            let _ = hyper::server::conn::http1::Builder::new()
                .serve_connection(hyper_util::rt::TokioIo::new(stream), handler)
                .await;
        });
    }
}

#[tokio::main]
async fn main() -> std::process::ExitCode {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let served = match args.as_slice() {
        [] => match Weather.serve(rmcp::transport::stdio_pipes()).await {
            Ok(running) => running
                .waiting()
                .await
                .map(|_| ())
                .map_err(|e| e.to_string()),
            Err(error) => Err(error.to_string()),
        },
        [flag, address] if flag == "--http" => serve_http(address).await,
        _ => Err("usage: rmcp-weather [--http <address:port>]".to_owned()),
    };
    match served {
        Ok(()) => std::process::ExitCode::SUCCESS,
        Err(error) => {
            eprintln!("rmcp-weather: {error}");
            std::process::ExitCode::FAILURE
        }
    }
}
