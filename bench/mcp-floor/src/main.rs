//! The MCP floor bench's driver: the same `get_weather` call (Tokyo, celsius, no lookup
//! delay) four ways, alternated within one run, over stdio and over streamable HTTP on
//! loopback, then 100 calls at once on one connection.
//!
//! - (a) in process: a `#[pi_tool]` tool through `CallPolicy::call`;
//! - (b) `McpToolset` → `weather-mcp`: the tool of the MCP client, through the same
//!   `CallPolicy::call`;
//! - (c) rmcp's own client → `rmcp-weather` (rmcp's macros alone, the same tool);
//! - (d) a bare JSON-RPC client → `jsonrpc-echo`: a pipe (or HTTP) round trip and two
//!   JSON parses, nothing else.
//!
//! `mcp-floor [CALLS] [ROUNDS] [BURSTS]` (defaults 200, 10, 30): each round runs CALLS
//! sequential calls of every side, the order of the sides rotating from round to round;
//! medians are over every call of every round. Each concurrency row is BURSTS bursts of
//! 100 calls started at once, alternated the same way. The last line is JSON.
//!
//! `mcp-floor --only SIDE CALLS` (SIDE: `a`, `b-stdio`, `c-stdio`, `d-stdio`, `b-http`,
//! `c-http`, `d-http`, and the clients swapped: `b-client-c-server`, `c-client-b-server`)
//! runs one side alone, for a profiler.

use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::process::Stdio;
use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::{Duration, Instant};

use futures::future::BoxFuture;
use mcp_floor_bench::ANSWER;
#[cfg(test)]
use mcp_floor_bench::WEATHER_RESULT;
use pi_tool::{
    AbortSignal, AgentTool, AgentToolResult, CallPolicy, IntoAgentTool, OnUpdate, ToolError,
    ToolInvocation, Value, pi_tool,
};
use pi_tool_mcp::client::{McpServer, McpToolset};
use rmcp::model::CallToolRequestParams;
use rmcp::service::RunningService;
use rmcp::{RoleClient, ServiceExt};
use tokio::io::{AsyncBufReadExt, AsyncWriteExt, BufReader};
use tokio::process::{Child, ChildStdin, ChildStdout, Command};
use tokio::sync::{Mutex, oneshot};
use weather_example::{WeatherDetails, WeatherParams, lookup_weather};

type Error = Box<dyn std::error::Error + Send + Sync>;

/// Return the demo temperature for Paris or Tokyo, without the demo delay.
#[pi_tool(name = "get_weather")]
async fn get_weather_instant(
    params: WeatherParams,
    signal: AbortSignal,
    on_update: OnUpdate<WeatherDetails>,
) -> Result<AgentToolResult<WeatherDetails>, ToolError> {
    lookup_weather(params, signal, on_update, Duration::ZERO).await
}

fn arguments() -> serde_json::Map<String, Value> {
    let mut map = serde_json::Map::new();
    map.insert("city".into(), "Tokyo".into());
    map.insert("unit".into(), "celsius".into());
    map
}

/// One way of calling `get_weather`.
trait Side: Send + Sync {
    /// One call, checked: `Err` unless it answered Tokyo's temperature.
    fn call(self: Arc<Self>) -> BoxFuture<'static, Result<(), Error>>;
}

/// (a) and (b): a pi-tool `AgentTool` through the call path.
struct PolicyCall {
    tool: Arc<dyn AgentTool>,
    policy: CallPolicy,
    args: Value,
    /// Keeps the MCP connection of (b) open.
    _toolset: Option<McpToolset>,
}

impl Side for PolicyCall {
    fn call(self: Arc<Self>) -> BoxFuture<'static, Result<(), Error>> {
        Box::pin(async move {
            let invocation =
                ToolInvocation::new("call_1", &self.args, AbortSignal::never(), OnUpdate::none());
            let result = self.policy.call(self.tool.as_ref(), invocation).await?;
            check(&result.text_content())
        })
    }
}

/// (c): rmcp's client.
struct RmcpCall {
    client: RunningService<RoleClient, ()>,
    /// The stdio server, or the HTTP one.
    _child: Option<Child>,
    _server: Option<Server>,
}

impl Side for RmcpCall {
    fn call(self: Arc<Self>) -> BoxFuture<'static, Result<(), Error>> {
        Box::pin(async move {
            let params = CallToolRequestParams::new("get_weather").with_arguments(arguments());
            let result = self.client.peer().call_tool(params).await?;
            let text = result
                .content
                .first()
                .and_then(|block| block.as_text())
                .map(|text| text.text.clone())
                .unwrap_or_default();
            check(&text)
        })
    }
}

fn check(text: &str) -> Result<(), Error> {
    if text == ANSWER {
        Ok(())
    } else {
        Err(format!("the answer was {text:?}, not {ANSWER:?}").into())
    }
}

/// The request (d) sends, and its answer checked.
fn echo_request(id: u64) -> Result<Vec<u8>, Error> {
    let request = serde_json::json!({
        "jsonrpc": "2.0",
        "id": id,
        "method": "tools/call",
        "params": {"name": "get_weather", "arguments": arguments()},
    });
    Ok(serde_json::to_vec(&request)?)
}

fn check_echo(answer: &Value) -> Result<(), Error> {
    let text = answer
        .pointer("/result/content/0/text")
        .and_then(Value::as_str)
        .unwrap_or_default();
    check(text)
}

/// (d) over stdio, one call at a time: the caller writes its line and reads the answer
/// itself (no reader task).
struct EchoStdio {
    pipes: Mutex<(ChildStdin, BufReader<ChildStdout>)>,
    next: AtomicU64,
    _child: Child,
}

impl Side for EchoStdio {
    fn call(self: Arc<Self>) -> BoxFuture<'static, Result<(), Error>> {
        Box::pin(async move {
            let id = self.next.fetch_add(1, Ordering::Relaxed);
            let mut line = echo_request(id)?;
            line.push(b'\n');
            let mut pipes = self.pipes.lock().await;
            pipes.0.write_all(&line).await?;
            let mut answer = Vec::new();
            pipes.1.read_until(b'\n', &mut answer).await?;
            check_echo(&serde_json::from_slice(&answer)?)
        })
    }
}

/// (d) over stdio, many calls at once: a reader task hands each answer to its caller.
struct EchoStdioConcurrent {
    stdin: Mutex<ChildStdin>,
    pending: Arc<std::sync::Mutex<HashMap<u64, oneshot::Sender<Value>>>>,
    next: AtomicU64,
    _child: Child,
}

impl EchoStdioConcurrent {
    fn new(mut child: Child) -> Result<Self, Error> {
        let stdin = child.stdin.take().ok_or("no stdin")?;
        let stdout = child.stdout.take().ok_or("no stdout")?;
        let pending: Arc<std::sync::Mutex<HashMap<u64, oneshot::Sender<Value>>>> = Arc::default();
        let routes = pending.clone();
        tokio::spawn(async move {
            let mut lines = BufReader::new(stdout);
            let mut line = Vec::new();
            loop {
                line.clear();
                match lines.read_until(b'\n', &mut line).await {
                    Ok(0) | Err(_) => return,
                    Ok(_) => {}
                }
                let Ok(answer) = serde_json::from_slice::<Value>(&line) else {
                    continue;
                };
                let id = answer.get("id").and_then(Value::as_u64).unwrap_or(0);
                let waiting = routes.lock().ok().and_then(|mut map| map.remove(&id));
                if let Some(waiting) = waiting {
                    let _ = waiting.send(answer);
                }
            }
        });
        Ok(EchoStdioConcurrent {
            stdin: Mutex::new(stdin),
            pending,
            next: AtomicU64::new(1),
            _child: child,
        })
    }
}

impl Side for EchoStdioConcurrent {
    fn call(self: Arc<Self>) -> BoxFuture<'static, Result<(), Error>> {
        Box::pin(async move {
            let id = self.next.fetch_add(1, Ordering::Relaxed);
            let mut line = echo_request(id)?;
            line.push(b'\n');
            let (tx, rx) = oneshot::channel();
            self.pending.lock().map_err(|_| "poisoned")?.insert(id, tx);
            self.stdin.lock().await.write_all(&line).await?;
            check_echo(&rx.await?)
        })
    }
}

/// (d) over HTTP: a POST per call on a kept-alive connection.
struct EchoHttp {
    client: reqwest::Client,
    url: String,
    next: AtomicU64,
    _server: Server,
}

impl Side for EchoHttp {
    fn call(self: Arc<Self>) -> BoxFuture<'static, Result<(), Error>> {
        Box::pin(async move {
            let id = self.next.fetch_add(1, Ordering::Relaxed);
            let body = echo_request(id)?;
            let response = self
                .client
                .post(&self.url)
                .header("content-type", "application/json")
                .body(body)
                .send()
                .await?;
            let bytes = response.bytes().await?;
            check_echo(&serde_json::from_slice(&bytes)?)
        })
    }
}

/// A server process listening on loopback; killed when dropped.
struct Server {
    url: String,
    _child: Child,
}

/// Starts `program --http 127.0.0.1:0` and waits for the line naming its address.
async fn start_http(program: &Path, env: &[(&str, &str)]) -> Result<Server, Error> {
    let mut command = Command::new(program);
    command
        .args(["--http", "127.0.0.1:0"])
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .kill_on_drop(true);
    for (key, value) in env {
        command.env(key, value);
    }
    let mut child = command.spawn()?;
    let stderr = child.stderr.take().ok_or("no stderr")?;
    let mut lines = BufReader::new(stderr).lines();
    let url = loop {
        let Some(line) = lines.next_line().await? else {
            return Err(format!("{} exited before listening", program.display()).into());
        };
        if let Some(at) = line.find("http://") {
            break line[at..].trim().to_owned();
        }
    };
    // weather-mcp logs each call on stderr: read it all along, so its pipe never fills.
    tokio::spawn(async move { while let Ok(Some(_)) = lines.next_line().await {} });
    Ok(Server { url, _child: child })
}

fn spawn_stdio(program: &Path, env: &[(&str, &str)]) -> Result<Child, Error> {
    Ok(Command::new(program)
        .envs(env.iter().copied())
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .kill_on_drop(true)
        .spawn()?)
}

/// The binaries beside this one (`target/release`).
struct Binaries {
    weather_mcp: PathBuf,
    rmcp_weather: PathBuf,
    echo: PathBuf,
}

impl Binaries {
    fn find() -> Result<Self, Error> {
        let here = std::env::current_exe()?;
        let dir = here.parent().ok_or("no directory")?;
        let binaries = Binaries {
            weather_mcp: dir.join("weather-mcp"),
            rmcp_weather: dir.join("rmcp-weather"),
            echo: dir.join("jsonrpc-echo"),
        };
        for path in [
            &binaries.weather_mcp,
            &binaries.rmcp_weather,
            &binaries.echo,
        ] {
            if !path.exists() {
                return Err(format!(
                    "{} is missing: build with `cargo build --release -p weather-mcp -p mcp-floor-bench`",
                    path.display()
                )
                .into());
            }
        }
        Ok(binaries)
    }
}

const NO_DELAY: (&str, &str) = ("WEATHER_MCP_LOOKUP_DELAY_MS", "0");

fn in_process() -> Arc<dyn Side> {
    Arc::new(PolicyCall {
        tool: GetWeatherInstant.into_agent_tool(),
        policy: CallPolicy::default(),
        args: Value::Object(arguments()),
        _toolset: None,
    })
}

async fn toolset(server: McpServer) -> Result<Arc<dyn Side>, Error> {
    let toolset = McpToolset::connect(server.trusted(true)).await?;
    eprintln!(
        "McpToolset speaks MCP {} with weather-mcp",
        toolset.protocol_version()
    );
    let tool = toolset
        .tools()
        .into_iter()
        .next()
        .ok_or("weather-mcp lists no tool")?;
    Ok(Arc::new(PolicyCall {
        tool,
        policy: CallPolicy::default(),
        args: Value::Object(arguments()),
        _toolset: Some(toolset),
    }))
}

async fn toolset_stdio(bin: &Binaries) -> Result<Arc<dyn Side>, Error> {
    toolset(
        McpServer::stdio("weather", &bin.weather_mcp, [] as [&str; 0]).env(NO_DELAY.0, NO_DELAY.1),
    )
    .await
}

async fn toolset_http(bin: &Binaries) -> Result<(Arc<dyn Side>, Server), Error> {
    let server = start_http(&bin.weather_mcp, &[NO_DELAY]).await?;
    let side = toolset(McpServer::http("weather", &server.url)).await?;
    Ok((side, server))
}

async fn rmcp_stdio(bin: &Binaries) -> Result<Arc<dyn Side>, Error> {
    rmcp_client_stdio(&bin.rmcp_weather, &[]).await
}

/// rmcp's client on a stdio server.
async fn rmcp_client_stdio(program: &Path, env: &[(&str, &str)]) -> Result<Arc<dyn Side>, Error> {
    let mut child = spawn_stdio(program, env)?;
    let stdin = child.stdin.take().ok_or("no stdin")?;
    let stdout = child.stdout.take().ok_or("no stdout")?;
    let client = ().serve((stdout, stdin)).await?;
    eprintln!(
        "rmcp's client speaks MCP {:?} with rmcp-weather over stdio",
        client
            .peer()
            .peer_info()
            .map(|info| info.protocol_version.to_string())
    );
    Ok(Arc::new(RmcpCall {
        client,
        _child: Some(child),
        _server: None,
    }))
}

async fn rmcp_http(bin: &Binaries) -> Result<Arc<dyn Side>, Error> {
    let server = start_http(&bin.rmcp_weather, &[]).await?;
    let transport = rmcp::transport::StreamableHttpClientTransport::from_uri(server.url.as_str());
    let client = ().serve(transport).await?;
    eprintln!(
        "rmcp's client speaks MCP {:?} with rmcp-weather over HTTP",
        client
            .peer()
            .peer_info()
            .map(|info| info.protocol_version.to_string())
    );
    Ok(Arc::new(RmcpCall {
        client,
        _child: None,
        _server: Some(server),
    }))
}

fn echo_stdio(bin: &Binaries) -> Result<Arc<dyn Side>, Error> {
    let mut child = spawn_stdio(&bin.echo, &[])?;
    let stdin = child.stdin.take().ok_or("no stdin")?;
    let stdout = child.stdout.take().ok_or("no stdout")?;
    Ok(Arc::new(EchoStdio {
        pipes: Mutex::new((stdin, BufReader::new(stdout))),
        next: AtomicU64::new(1),
        _child: child,
    }))
}

fn echo_stdio_concurrent(bin: &Binaries) -> Result<Arc<dyn Side>, Error> {
    Ok(Arc::new(EchoStdioConcurrent::new(spawn_stdio(
        &bin.echo,
        &[],
    )?)?))
}

async fn echo_http(bin: &Binaries) -> Result<Arc<dyn Side>, Error> {
    let server = start_http(&bin.echo, &[]).await?;
    Ok(Arc::new(EchoHttp {
        client: reqwest::Client::new(),
        url: server.url.clone(),
        next: AtomicU64::new(1),
        _server: server,
    }))
}

fn median(values: &mut [f64]) -> f64 {
    values.sort_by(f64::total_cmp);
    match values.len() {
        0 => f64::NAN,
        n if n % 2 == 1 => values[n / 2],
        n => (values[n / 2 - 1] + values[n / 2]) / 2.0,
    }
}

/// Sequential calls of each side, alternated: the median per side, in microseconds.
async fn latencies(
    sides: &[Arc<dyn Side>],
    calls: usize,
    rounds: usize,
) -> Result<Vec<f64>, Error> {
    for side in sides {
        for _ in 0..calls.min(100) {
            side.clone().call().await?;
        }
    }
    let mut samples = vec![Vec::with_capacity(calls * rounds); sides.len()];
    for round in 0..rounds {
        for k in 0..sides.len() {
            let index = (round + k) % sides.len();
            for _ in 0..calls {
                let started = Instant::now();
                sides[index].clone().call().await?;
                samples[index].push(started.elapsed().as_secs_f64() * 1e6);
            }
        }
    }
    Ok(samples.iter_mut().map(|s| median(s)).collect())
}

/// Bursts of `width` calls at once on each side, alternated: the median calls per second.
async fn throughput(
    sides: &[Arc<dyn Side>],
    width: usize,
    bursts: usize,
) -> Result<Vec<f64>, Error> {
    async fn burst(side: &Arc<dyn Side>, width: usize) -> Result<f64, Error> {
        let started = Instant::now();
        let calls: Vec<_> = (0..width)
            .map(|_| tokio::spawn(side.clone().call()))
            .collect();
        for call in calls {
            call.await??;
        }
        Ok(width as f64 / started.elapsed().as_secs_f64())
    }
    for side in sides {
        burst(side, width).await?;
    }
    let mut samples = vec![Vec::with_capacity(bursts); sides.len()];
    for round in 0..bursts {
        for k in 0..sides.len() {
            let index = (round + k) % sides.len();
            samples[index].push(burst(&sides[index], width).await?);
        }
    }
    Ok(samples.iter_mut().map(|s| median(s)).collect())
}

fn ratio(a: f64, b: f64) -> f64 {
    (a / b * 100.0).round() / 100.0
}

async fn run(calls: usize, rounds: usize, bursts: usize) -> Result<(), Error> {
    let bin = Binaries::find()?;
    let cores = std::thread::available_parallelism().map_or(1, |n| n.get());
    println!(
        "mcp-floor: {calls} calls x {rounds} rounds per side, {bursts} bursts of 100; {cores} cores"
    );

    let stdio = [
        in_process(),
        toolset_stdio(&bin).await?,
        rmcp_stdio(&bin).await?,
        echo_stdio(&bin)?,
    ];
    let s = latencies(&stdio, calls, rounds).await?;
    println!(
        "stdio, median per call: (a) in process {:.1} us, (b) McpToolset -> weather-mcp {:.1} us, \
         (c) rmcp -> rmcp-weather {:.1} us, (d) echo {:.1} us; b/d {:.2}, c/d {:.2}, b/c {:.2}",
        s[0],
        s[1],
        s[2],
        s[3],
        s[1] / s[3],
        s[2] / s[3],
        s[1] / s[2]
    );

    let (toolset_http, _weather_http) = toolset_http(&bin).await?;
    let http = [
        in_process(),
        toolset_http,
        rmcp_http(&bin).await?,
        echo_http(&bin).await?,
    ];
    let h = latencies(&http, calls, rounds).await?;
    println!(
        "http, median per call: (a) in process {:.1} us, (b) McpToolset -> weather-mcp {:.1} us, \
         (c) rmcp -> rmcp-weather {:.1} us, (d) echo {:.1} us; b/d {:.2}, c/d {:.2}, b/c {:.2}",
        h[0],
        h[1],
        h[2],
        h[3],
        h[1] / h[3],
        h[2] / h[3],
        h[1] / h[2]
    );

    let concurrent = [
        http[0].clone(),
        stdio[1].clone(),
        stdio[2].clone(),
        echo_stdio_concurrent(&bin)?,
        http[1].clone(),
        http[2].clone(),
        http[3].clone(),
    ];
    let t = throughput(&concurrent, 100, bursts).await?;
    println!(
        "100 calls at once, calls/s: (a) {:.0}; stdio (b) {:.0}, (c) {:.0}, (d) {:.0}; \
         http (b) {:.0}, (c) {:.0}, (d) {:.0}",
        t[0], t[1], t[2], t[3], t[4], t[5], t[6]
    );
    // One call at a time over the same connection, for the gain from concurrency.
    let single = |us: f64| 1e6 / us;
    let summary = serde_json::json!({
        "cores": cores,
        "stdio_us": {"a": s[0], "b": s[1], "c": s[2], "d": s[3]},
        "stdio_ratios": {"b_over_d": ratio(s[1], s[3]), "c_over_d": ratio(s[2], s[3]), "b_over_c": ratio(s[1], s[2]), "b_over_a": ratio(s[1], s[0])},
        "http_us": {"a": h[0], "b": h[1], "c": h[2], "d": h[3]},
        "http_ratios": {"b_over_d": ratio(h[1], h[3]), "c_over_d": ratio(h[2], h[3]), "b_over_c": ratio(h[1], h[2])},
        "concurrent_calls_per_s": {"a": t[0], "stdio_b": t[1], "stdio_c": t[2], "stdio_d": t[3], "http_b": t[4], "http_c": t[5], "http_d": t[6]},
        "concurrency_gain": {"stdio_b": ratio(t[1], single(s[1])), "stdio_c": ratio(t[2], single(s[2])), "http_b": ratio(t[4], single(h[1])), "http_c": ratio(t[5], single(h[2]))},
    });
    println!("{summary}");
    Ok(())
}

/// One side alone, for perf or callgrind.
async fn only(side: &str, calls: usize) -> Result<(), Error> {
    let bin = Binaries::find()?;
    let (side, _server): (Arc<dyn Side>, Option<Server>) = match side {
        "a" => (in_process(), None),
        "b-stdio" => (toolset_stdio(&bin).await?, None),
        "c-stdio" => (rmcp_stdio(&bin).await?, None),
        // The two clients swapped: which side of (b) costs what.
        "b-client-c-server" => (
            toolset(McpServer::stdio(
                "weather",
                &bin.rmcp_weather,
                [] as [&str; 0],
            ))
            .await?,
            None,
        ),
        "c-client-b-server" => (
            rmcp_client_stdio(&bin.weather_mcp, &[NO_DELAY]).await?,
            None,
        ),
        "d-stdio" => (echo_stdio(&bin)?, None),
        "b-http" => {
            let (side, server) = toolset_http(&bin).await?;
            (side, Some(server))
        }
        "c-http" => (rmcp_http(&bin).await?, None),
        "d-http" => (echo_http(&bin).await?, None),
        other => return Err(format!("unknown side {other:?}").into()),
    };
    let started = Instant::now();
    for _ in 0..calls {
        side.clone().call().await?;
    }
    let per_call = started.elapsed().as_secs_f64() * 1e6 / calls as f64;
    println!("{per_call:.1} us per call over {calls} calls");
    Ok(())
}

fn main() -> std::process::ExitCode {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let runtime = match tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()
    {
        Ok(runtime) => runtime,
        Err(error) => {
            eprintln!("mcp-floor: {error}");
            return std::process::ExitCode::FAILURE;
        }
    };
    let number =
        |at: usize, default: usize| args.get(at).and_then(|n| n.parse().ok()).unwrap_or(default);
    let outcome = if args.first().map(String::as_str) == Some("--only") {
        let side = args.get(1).cloned().unwrap_or_default();
        runtime.block_on(only(&side, number(2, 10_000)))
    } else {
        runtime.block_on(run(number(0, 200), number(1, 10), number(2, 30)))
    };
    // The children are killed as their handles drop with the runtime.
    drop(runtime);
    match outcome {
        Ok(()) => std::process::ExitCode::SUCCESS,
        Err(error) => {
            eprintln!("mcp-floor: {error}");
            std::process::ExitCode::FAILURE
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_echo_answers_with_weather_mcps_result() {
        let result: Value = serde_json::from_str(WEATHER_RESULT).expect("valid JSON");
        check_echo(&serde_json::json!({"jsonrpc": "2.0", "id": 1, "result": result}))
            .expect("the answer");
    }

    #[test]
    fn the_median_of_an_even_count_is_the_mean_of_the_middle_two() {
        assert_eq!(median(&mut [4.0, 1.0, 3.0, 2.0]), 2.5);
        assert_eq!(median(&mut [5.0, 1.0, 3.0]), 3.0);
    }
}
