//! Side (d) of the MCP floor bench: the floor itself. Each JSON-RPC request is parsed
//! (one `serde_json::Value`) and answered with `get_weather`'s result as `weather-mcp`
//! sends it, serialised with the request's id; nothing else. No MCP handshake, no tool.
//!
//! `jsonrpc-echo` reads stdin and writes stdout with blocking calls on one thread (a
//! pipe round trip has nothing less); `jsonrpc-echo --http 127.0.0.1:0` answers POSTs
//! the same way on hyper (HTTP/1.1, as the MCP servers) and prints
//! `jsonrpc-echo: serving JSON-RPC over HTTP at http://ADDRESS/mcp` to stderr.

use std::io::{BufRead, Write};

use http_body_util::{BodyExt, Full};
use hyper::body::Bytes;
use mcp_floor_bench::WEATHER_RESULT;
use serde::Serialize;
use serde_json::Value;

#[derive(Serialize)]
struct Response<'a> {
    jsonrpc: &'static str,
    id: &'a Value,
    result: &'a Value,
}

/// The answer to one message, or `None` for a notification (or a line that is not JSON).
fn answer(message: &[u8], result: &Value) -> Option<Vec<u8>> {
    let message: Value = serde_json::from_slice(message).ok()?;
    let id = message.get("id")?;
    let mut out = Vec::with_capacity(256);
    serde_json::to_writer(
        &mut out,
        &Response {
            jsonrpc: "2.0",
            id,
            result,
        },
    )
    .ok()?;
    Some(out)
}

fn serve_stdio(result: &Value) -> std::io::Result<()> {
    let mut input = std::io::stdin().lock();
    let mut output = std::io::stdout().lock();
    let mut line = Vec::new();
    loop {
        line.clear();
        if input.read_until(b'\n', &mut line)? == 0 {
            return Ok(());
        }
        if let Some(mut answer) = answer(&line, result) {
            answer.push(b'\n');
            output.write_all(&answer)?;
            output.flush()?;
        }
    }
}

async fn serve_http(address: &str, result: Value) -> Result<(), String> {
    let listener = tokio::net::TcpListener::bind(address)
        .await
        .map_err(|error| format!("cannot listen on {address}: {error}"))?;
    let bound = listener.local_addr().map_err(|error| error.to_string())?;
    eprintln!("jsonrpc-echo: serving JSON-RPC over HTTP at http://{bound}/mcp");
    let result = std::sync::Arc::new(result);
    loop {
        let (stream, _) = listener.accept().await.map_err(|e| e.to_string())?;
        let _ = stream.set_nodelay(true);
        let result = result.clone();
        tokio::spawn(async move {
            let handler = hyper::service::service_fn(
                move |request: hyper::Request<hyper::body::Incoming>| {
                    let result = result.clone();
                    async move {
                        let body = request.into_body().collect().await?.to_bytes();
                        let answer = answer(&body, &result).unwrap_or_default();
                        let response = hyper::Response::builder()
                            .header("content-type", "application/json")
                            .body(Full::new(Bytes::from(answer)))
                            .unwrap_or_default();
                        Ok::<_, hyper::Error>(response)
                    }
                },
            );
            let _ = hyper::server::conn::http1::Builder::new()
                .serve_connection(hyper_util::rt::TokioIo::new(stream), handler)
                .await;
        });
    }
}

fn main() -> std::process::ExitCode {
    let result: Value = match serde_json::from_str(WEATHER_RESULT) {
        Ok(result) => result,
        Err(error) => {
            eprintln!("jsonrpc-echo: {error}");
            return std::process::ExitCode::FAILURE;
        }
    };
    let args: Vec<String> = std::env::args().skip(1).collect();
    let served = match args.as_slice() {
        [] => serve_stdio(&result).map_err(|e| e.to_string()),
        [flag, address] if flag == "--http" => tokio::runtime::Builder::new_multi_thread()
            .enable_all()
            .build()
            .map_err(|e| e.to_string())
            .and_then(|runtime| runtime.block_on(serve_http(address, result))),
        _ => Err("usage: jsonrpc-echo [--http <address:port>]".to_owned()),
    };
    match served {
        Ok(()) => std::process::ExitCode::SUCCESS,
        Err(error) => {
            eprintln!("jsonrpc-echo: {error}");
            std::process::ExitCode::FAILURE
        }
    }
}
