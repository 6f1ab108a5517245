//! `weather-mcp`: Pi's custom-tool page's weather pack served over MCP on stdio: the
//! `#[pi_tool]` tool `weather_example::GetWeather`, unchanged.
//!
//! Run with `cargo run -q --release -p weather-mcp` (or `--bin weather-mcp`) anywhere in
//! the repository, or start the built `target/release/weather-mcp` directly.
//!
//! Standard output is the MCP channel. Standard error gets one line per finished call
//! (`weather-mcp: get_weather mcp-3 aborted after 12 ms`), which is how a human, or a
//! test, sees that a cancelled call really stopped: the protocol sends no response for
//! a cancelled request.
//!
//! `weather-mcp --http 127.0.0.1:8080` serves MCP's streamable HTTP transport instead
//! (port 0 picks a free port); the address is printed to standard error as
//! `weather-mcp: serving MCP over streamable HTTP at http://127.0.0.1:8080/mcp`.
//!
//! `WEATHER_MCP_SESSION_IDLE_SECS` sets how long an HTTP session may go without a request
//! before it ends (the default is `HttpLimits`' 5 minutes; the memory bench uses a short
//! one to measure what expired sessions give back).
//!
//! `WEATHER_MCP_LOOKUP_DELAY_MS` replaces Pi's custom-tool page's 200 ms lookup delay (tests use a
//! long one to cancel a call mid-lookup without racing the clock); the tool is then
//! the same body with the same metadata and schema, and another delay.

use std::io::Write as _;
use std::time::Duration;

use pi_tool::pack::{ToolOwner, ToolPack};
use pi_tool::{AgentToolResult, Tool, ToolError, ToolErrorKind, ToolExecutionMode, ToolInvocation};
use pi_tool_mcp::{CallEnd, CallOutcome, HttpLimits, PackServer};
use weather_example::{GetWeather, LOOKUP_DELAY, WeatherDetails, WeatherParams, lookup_weather};

/// `get_weather` from Pi's custom-tool page with another lookup delay, for tests that cancel mid-lookup.
/// Everything the client sees (name, label, description, schema, snippet, mode) is the
/// `#[pi_tool]` tool's own: the constants are `GetWeather`'s.
struct GetWeatherWithDelay {
    delay: Duration,
}

impl Tool for GetWeatherWithDelay {
    type Params = <GetWeather as Tool>::Params;
    type Details = <GetWeather as Tool>::Details;
    const NAME: &'static str = GetWeather::NAME;
    const LABEL: &'static str = GetWeather::LABEL;
    const DESCRIPTION: &'static str = GetWeather::DESCRIPTION;
    const EXECUTION_MODE: Option<ToolExecutionMode> = GetWeather::EXECUTION_MODE;
    const TIMEOUT: Option<Duration> = GetWeather::TIMEOUT;
    const PROMPT_SNIPPET: Option<&'static str> = GetWeather::PROMPT_SNIPPET;
    const PROMPT_GUIDELINES: &'static [&'static str] = GetWeather::PROMPT_GUIDELINES;

    async fn execute(
        &self,
        call: ToolInvocation<'_, WeatherParams, WeatherDetails>,
    ) -> Result<AgentToolResult<WeatherDetails>, ToolError> {
        lookup_weather(call.params, call.signal, call.on_update, self.delay).await
    }
}

/// The weather pack: `get_weather` from Pi's custom-tool page, or the same tool with the delay asked for.
fn weather_pack(delay: Option<Duration>) -> Result<ToolPack, String> {
    let owner = ToolOwner::new("weather-example");
    let mut pack = ToolPack::new();
    let pushed = match delay {
        None => pack.push(owner, GetWeather),
        Some(delay) => pack.push(owner, GetWeatherWithDelay { delay }),
    };
    pushed.map_err(|error| error.to_string())?;
    Ok(pack)
}

fn lookup_delay() -> Result<Option<Duration>, String> {
    match std::env::var("WEATHER_MCP_LOOKUP_DELAY_MS") {
        Err(_) => Ok(None),
        Ok(ms) => ms
            .trim()
            .parse::<u64>()
            .map(|ms| Some(Duration::from_millis(ms)).filter(|d| *d != LOOKUP_DELAY))
            .map_err(|_| {
                format!("WEATHER_MCP_LOOKUP_DELAY_MS must be whole milliseconds, got {ms:?}")
            }),
    }
}

/// The HTTP limits: the defaults, with `WEATHER_MCP_SESSION_IDLE_SECS` when set.
fn http_limits() -> Result<HttpLimits, String> {
    let mut limits = HttpLimits::default();
    if let Ok(secs) = std::env::var("WEATHER_MCP_SESSION_IDLE_SECS") {
        let secs = secs.trim().parse::<u64>().map_err(|_| {
            format!("WEATHER_MCP_SESSION_IDLE_SECS must be whole seconds, got {secs:?}")
        })?;
        limits.session_idle_timeout = Duration::from_secs(secs);
    }
    Ok(limits)
}

fn log_call_end(end: &CallEnd) {
    let outcome = match end.outcome {
        CallOutcome::Success => "succeeded",
        CallOutcome::Error(ToolErrorKind::Aborted) => "aborted",
        CallOutcome::Error(ToolErrorKind::InvalidArguments) => "rejected its arguments",
        CallOutcome::Error(ToolErrorKind::Panicked) => "panicked",
        CallOutcome::Error(ToolErrorKind::Timeout) => "timed out",
        CallOutcome::Error(_) => "failed",
    };
    // One write: standard error is unbuffered, and `eprintln!` writes each piece of its
    // format on its own (eight system calls a call, each waking the client's reader).
    let line = format!(
        "weather-mcp: {} {} {outcome} after {} ms\n",
        end.tool,
        end.call_id,
        end.elapsed.as_millis()
    );
    let _ = std::io::stderr().write_all(line.as_bytes());
}

const USAGE: &str = "usage: weather-mcp [--http <address:port>]";

/// Where to serve: stdio, or streamable HTTP on an address.
fn http_address() -> Result<Option<String>, String> {
    let args: Vec<String> = std::env::args().skip(1).collect();
    match args.as_slice() {
        [] => Ok(None),
        [flag, address] if flag == "--http" => Ok(Some(address.clone())),
        _ => Err(USAGE.to_owned()),
    }
}

async fn serve(server: PackServer, http: Option<String>) -> Result<(), String> {
    let Some(address) = http else {
        return server.serve_stdio().await.map_err(|e| e.to_string());
    };
    let listener = tokio::net::TcpListener::bind(&address)
        .await
        .map_err(|error| format!("cannot listen on {address}: {error}"))?;
    let bound = listener.local_addr().map_err(|error| error.to_string())?;
    eprintln!("weather-mcp: serving MCP over streamable HTTP at http://{bound}/mcp");
    server
        .serve_http_until(listener, stop_signal())
        .await
        .map_err(|e| e.to_string())
}

/// Resolves on SIGTERM (a process manager's stop) or Ctrl-C: the HTTP server then stops
/// accepting, lets running calls finish up to its grace, aborts the rest and exits 0.
async fn stop_signal() {
    #[cfg(unix)]
    if let Ok(mut terminate) =
        tokio::signal::unix::signal(tokio::signal::unix::SignalKind::terminate())
    {
        tokio::select! {
            _ = terminate.recv() => {}
            _ = tokio::signal::ctrl_c() => {}
        }
        return;
    }
    let _ = tokio::signal::ctrl_c().await;
}

#[tokio::main]
async fn main() -> std::process::ExitCode {
    let settings = lookup_delay().and_then(|delay| Ok((delay, http_address()?, http_limits()?)));
    let (delay, http, limits) = match settings {
        Ok(settings) => settings,
        Err(message) => {
            eprintln!("weather-mcp: {message}");
            return std::process::ExitCode::FAILURE;
        }
    };
    let pack = match weather_pack(delay) {
        Ok(pack) => pack,
        Err(error) => {
            eprintln!("weather-mcp: {error}");
            return std::process::ExitCode::FAILURE;
        }
    };
    let server = PackServer::new(pack)
        .with_server_info("weather-mcp", env!("CARGO_PKG_VERSION"))
        .with_http_limits(limits)
        .on_call_end(log_call_end);
    for line in server.schema_report() {
        eprintln!("weather-mcp: {line}");
    }
    match serve(server, http).await {
        Ok(()) => std::process::ExitCode::SUCCESS,
        Err(error) => {
            eprintln!("weather-mcp: {error}");
            std::process::ExitCode::FAILURE
        }
    }
}
