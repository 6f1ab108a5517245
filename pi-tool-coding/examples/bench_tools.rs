//! One side of `bench/compare-coding-tools-with-pi.mjs`: runs one tool of the pack the
//! given number of times and prints one JSON line with the time per call, the process's
//! peak memory and the first call's text (for the script to compare with Pi's).
//!
//! ```text
//! bench_tools CWD ITERATIONS TOOL ARGS_JSON
//! ```

use std::path::PathBuf;
use std::time::Instant;

use pi_tool::context::ExtensionContext;
use pi_tool::{AbortSignal, OnUpdate, ToolInvocation, Value};

/// The process's peak resident memory (`VmHWM`). Not `getrusage`'s `ru_maxrss`: Linux
/// keeps that across `execve`, so a process started by Node would report Node's.
fn max_rss_kb() -> i64 {
    std::fs::read_to_string("/proc/self/status")
        .ok()
        .and_then(|s| {
            s.lines()
                .find_map(|l| l.strip_prefix("VmHWM:"))
                .and_then(|v| v.trim().trim_end_matches("kB").trim().parse().ok())
        })
        .unwrap_or(-1)
}

#[tokio::main(flavor = "multi_thread", worker_threads = 2)]
async fn main() -> Result<(), String> {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let [cwd, iterations, tool, json] = args.as_slice() else {
        return Err("usage: bench_tools CWD ITERATIONS TOOL ARGS_JSON".to_owned());
    };
    let cwd = PathBuf::from(cwd);
    let iterations: usize = iterations.parse().map_err(|e| format!("iterations: {e}"))?;
    let args: Value = serde_json::from_str(json).map_err(|e| format!("args: {e}"))?;
    let pack = pi_tool_coding::pack();
    let tool = pack.get(tool).ok_or("no such tool")?;
    let args = tool
        .check_arguments(&args)
        .map_err(|e| e.to_string())?
        .into_owned();
    let mut first = None;
    let started = Instant::now();
    for _ in 0..iterations {
        let call = ToolInvocation::new("bench", &args, AbortSignal::never(), OnUpdate::none())
            .with_context(ExtensionContext::builder(&cwd).build());
        let text = match tool.execute(call).await {
            Ok(result) => result.text_content(),
            Err(error) => error.message().to_owned(),
        };
        first.get_or_insert(text);
    }
    let per_call_ms = started.elapsed().as_secs_f64() * 1000.0 / iterations.max(1) as f64;
    let line = serde_json::json!({
        "perCallMs": per_call_ms,
        "maxRssKb": max_rss_kb(),
        "text": first.unwrap_or_default(),
    });
    println!("{line}");
    Ok(())
}
