//! Stdio with a client that stops reading (issue 11 §4): back-pressure, not unbounded
//! buffering. A server process (this test binary run again, `stdio_server_process`)
//! gets 4 000 calls whose results are 64 KiB each (250 MB in all) from a client that
//! reads none of them; the server's RSS stays bounded while the client's writes stall,
//! and once the client reads again every call is answered, once.

use std::collections::HashSet;
use std::time::{Duration, Instant};

use pi_tool::pack::{ToolOwner, ToolPack};
use pi_tool::{ToolError, pi_tool};
use pi_tool_mcp::PackServer;
use serde_json::{Value, json};
use tokio::io::{AsyncBufReadExt, AsyncWriteExt, BufReader};
use tokio::process::Command;

#[pi_tool::params]
struct BigParams {
    /// The size of the answer in KiB.
    kib: usize,
}

/// Answers `kib` KiB of text.
#[pi_tool(execution_mode = "parallel")]
async fn big(params: BigParams) -> Result<String, ToolError> {
    Ok("x".repeat(params.kib * 1024))
}

/// The server's entry point: does nothing unless the parent test started this binary
/// with `STDIO_BACKPRESSURE_SERVER` set; then serves stdio until its input ends.
#[test]
fn stdio_server_process() {
    if std::env::var_os("STDIO_BACKPRESSURE_SERVER").is_none() {
        return;
    }
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
        .unwrap();
    runtime.block_on(async {
        let mut pack = ToolPack::new();
        pack.push(ToolOwner::new("backpressure-test"), Big).unwrap();
        PackServer::new(pack).serve_stdio().await.unwrap();
    });
}

/// VmRSS of process `pid`, in MiB.
fn rss_mib(pid: u32) -> u64 {
    let status = std::fs::read_to_string(format!("/proc/{pid}/status")).unwrap_or_default();
    status
        .lines()
        .find_map(|line| line.strip_prefix("VmRSS:"))
        .and_then(|rest| {
            rest.trim()
                .trim_end_matches("kB")
                .trim()
                .parse::<u64>()
                .ok()
        })
        .map_or(0, |kib| kib / 1024)
}

const CALLS: u64 = 4000;
const KIB: usize = 64;

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_client_that_stops_reading_gets_back_pressure_then_every_answer() {
    let mut child = Command::new(std::env::current_exe().unwrap())
        .args([
            "--exact",
            "stdio_server_process",
            "--nocapture",
            "--test-threads=1",
        ])
        .env("STDIO_BACKPRESSURE_SERVER", "1")
        .stdin(std::process::Stdio::piped())
        .stdout(std::process::Stdio::piped())
        .kill_on_drop(true)
        .spawn()
        .unwrap();
    let pid = child.id().unwrap();
    let mut stdin = child.stdin.take().unwrap();
    let mut lines = BufReader::new(child.stdout.take().unwrap()).lines();
    let send = |message: Value| {
        let mut line = message.to_string().into_bytes();
        line.push(b'\n');
        line
    };
    stdin
        .write_all(&send(
            json!({"jsonrpc": "2.0", "id": 0, "method": "initialize",
            "params": {"protocolVersion": "2025-06-18", "capabilities": {},
            "clientInfo": {"name": "t", "version": "0"}}}),
        ))
        .await
        .unwrap();
    // libtest writes `running 1 test` and the like to the same stdout: skip non-JSON.
    loop {
        let line = lines.next_line().await.unwrap().unwrap();
        if let Some(json) = line.find('{').map(|at| &line[at..])
            && let Ok(message) = serde_json::from_str::<Value>(json)
        {
            assert_eq!(message["id"], json!(0), "{message}");
            break;
        }
    }
    stdin
        .write_all(&send(
            json!({"jsonrpc": "2.0", "method": "notifications/initialized"}),
        ))
        .await
        .unwrap();

    // The writer sends every call without waiting; it stalls once the server stops
    // reading. `written` counts the calls it got out.
    let written = std::sync::Arc::new(std::sync::atomic::AtomicU64::new(0));
    let count = written.clone();
    let writer = tokio::spawn(async move {
        for id in 1..=CALLS {
            let message = json!({"jsonrpc": "2.0", "id": id, "method": "tools/call",
                "params": {"name": "big", "arguments": {"kib": KIB}}});
            stdin.write_all(&send(message)).await.unwrap();
            count.store(id, std::sync::atomic::Ordering::SeqCst);
        }
        stdin
    });

    // Read nothing for 3 s and watch the server's memory.
    let mut peak = 0;
    let watch = Instant::now();
    while watch.elapsed() < Duration::from_secs(3) {
        peak = peak.max(rss_mib(pid));
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    let accepted = written.load(std::sync::atomic::Ordering::SeqCst);
    println!(
        "stdio back-pressure: the client wrote {accepted} of {CALLS} calls ({KIB} KiB \
         answers, {} MiB in all) before its writes stalled; server RSS peaked at {peak} MiB",
        CALLS as usize * KIB / 1024
    );
    assert!(
        accepted < CALLS,
        "the server kept reading although nobody read its answers"
    );
    assert!(
        peak < 160,
        "server RSS {peak} MiB while the client did not read"
    );

    // Read again: every call is answered, once.
    let started = Instant::now();
    let mut answered = HashSet::new();
    let read_all = async {
        while (answered.len() as u64) < CALLS {
            let line = lines
                .next_line()
                .await
                .unwrap()
                .expect("the server answers");
            let message: Value = serde_json::from_str(&line).unwrap();
            let id = message["id"].as_u64().unwrap();
            let text = message["result"]["content"][0]["text"].as_str().unwrap();
            assert_eq!(text.len(), KIB * 1024);
            assert!(answered.insert(id), "call {id} answered twice");
            peak = peak.max(rss_mib(pid));
        }
    };
    tokio::time::timeout(Duration::from_secs(120), read_all)
        .await
        .expect("every answer arrives within 120 s once the client reads");
    let stdin = writer.await.unwrap();
    println!(
        "stdio back-pressure: then all {CALLS} answers in {:.2} s; server RSS peaked at \
         {peak} MiB overall",
        started.elapsed().as_secs_f64()
    );
    assert!(peak < 160, "server RSS {peak} MiB");
    drop(stdin);
    let status = tokio::time::timeout(Duration::from_secs(20), child.wait())
        .await
        .expect("the server exits when its input ends")
        .unwrap();
    assert!(status.success(), "{status}");
}
