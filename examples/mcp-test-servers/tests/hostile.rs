//! McpToolset against servers that misbehave (`hostile-mcp MODE`): each call ends with a
//! clear error result within a bound, memory stays bounded, and nothing is left running.

use std::sync::Arc;
use std::time::{Duration, Instant};

use pi_tool::testing::call_tool;
use pi_tool::{AbortController, AgentTool, json};
use pi_tool_mcp::client::{McpServer, McpToolset};

const HOSTILE: &str = env!("CARGO_BIN_EXE_hostile-mcp");

fn server(mode: &str) -> McpServer {
    McpServer::stdio("hostile", HOSTILE, [mode])
        .call_timeout(Some(Duration::from_secs(3)))
        .shutdown_grace(Duration::from_millis(300))
}

async fn connect(mode: &str) -> (McpToolset, Arc<dyn AgentTool>) {
    let toolset = McpToolset::connect(server(mode)).await.expect("connects");
    let tools = toolset.tools();
    assert_eq!(tools.len(), 1);
    (toolset, tools[0].clone())
}

/// Whether a process (or, with a negative id, a process group) still exists.
fn alive(pid: i32) -> bool {
    // SAFETY: kill(2) with signal 0 only checks that the target exists.
    unsafe { libc::kill(pid, 0) == 0 }
}

/// The processes of group `pgid` that are not zombies (a killed child not yet reaped
/// runs nothing), from /proc.
fn running_in_group(pgid: u32) -> Vec<String> {
    let mut running = Vec::new();
    for entry in std::fs::read_dir("/proc").expect("/proc").flatten() {
        let Ok(stat) = std::fs::read_to_string(entry.path().join("stat")) else {
            continue;
        };
        // pid (comm) state ppid pgrp ...: comm may hold spaces, so split after ')'.
        let Some((head, rest)) = stat.rsplit_once(") ") else {
            continue;
        };
        let fields: Vec<&str> = rest.split_whitespace().collect();
        if fields.len() > 2 && fields[2] == pgid.to_string() && fields[0] != "Z" {
            running.push(format!("{head})"));
        }
    }
    running
}

async fn assert_gone(pid: u32) {
    let deadline = Instant::now() + Duration::from_secs(5);
    loop {
        let running = running_in_group(pid);
        if running.is_empty() {
            return;
        }
        assert!(
            Instant::now() < deadline,
            "still running in group {pid}: {running:?}"
        );
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
}

#[tokio::test]
async fn a_server_that_dies_mid_call_gives_its_exit_and_stderr() {
    let (toolset, tool) = connect("dies").await;
    let pid = toolset.server_pid().expect("a child");
    let started = Instant::now();
    let run = call_tool(tool.clone(), json!({})).await;
    assert!(started.elapsed() < Duration::from_secs(3));
    let error = run.error_text();
    assert!(
        error.starts_with("MCP server `hostile`: the connection ended during the call of mcp__hostile__poke: the server process exited (exit status: 3)"),
        "{error}"
    );
    assert!(
        error.contains("hostile-mcp: dying in the middle of a call"),
        "{error}"
    );
    // Later calls fail at once with the same reason.
    let again = call_tool(tool, json!({})).await;
    assert!(
        again
            .error_text()
            .contains("not connected: the server process exited"),
        "{}",
        again.error_text()
    );
    assert_gone(pid).await;
}

#[tokio::test]
async fn a_server_that_hangs_is_cut_off_by_the_timeout_and_cancelled() {
    let (toolset, tool) = connect("hangs").await;
    let started = Instant::now();
    let run = call_tool(tool, json!({})).await;
    let took = started.elapsed();
    assert!(
        took >= Duration::from_secs(3) && took < Duration::from_secs(5),
        "{took:?}"
    );
    assert_eq!(
        run.error_text(),
        "Tool mcp__hostile__poke timed out after 3s"
    );
    let pid = toolset.server_pid().expect("a child");
    toolset.close().await;
    assert_gone(pid).await;
}

#[tokio::test]
async fn an_aborted_call_ends_at_once() {
    let (toolset, tool) = connect("hangs").await;
    let controller = AbortController::new();
    let signal = controller.signal();
    tokio::spawn(async move {
        tokio::time::sleep(Duration::from_millis(200)).await;
        controller.abort();
    });
    let started = Instant::now();
    let run = call_tool(tool, json!({})).signal(signal).await;
    assert!(started.elapsed() < Duration::from_secs(1));
    assert!(run.error().is_abort(), "{:?}", run.error());
    toolset.close().await;
}

fn rss_kib() -> u64 {
    std::fs::read_to_string("/proc/self/status")
        .ok()
        .and_then(|status| {
            status
                .lines()
                .find(|l| l.starts_with("VmRSS:"))
                .and_then(|l| l.split_whitespace().nth(1)?.parse().ok())
        })
        .unwrap_or(0)
}

#[tokio::test]
async fn a_flood_of_progress_costs_one_slot_and_the_call_completes() {
    let toolset = McpToolset::connect(server("floods").call_timeout(Some(Duration::from_secs(10))))
        .await
        .expect("connects");
    let tool = toolset.tools()[0].clone();
    let before = rss_kib();
    let started = Instant::now();
    let run = call_tool(tool, json!({})).await;
    assert!(
        started.elapsed() < Duration::from_secs(10),
        "{:?}",
        started.elapsed()
    );
    assert_eq!(run.text(), "flooded");
    let updates = run.json_updates();
    assert!(!updates.is_empty());
    // The latest progress wins: what the tool reports is a subset, in order.
    assert!(updates.len() <= 100_000);
    let grown = rss_kib().saturating_sub(before);
    assert!(grown < 100 * 1024, "the test process grew by {grown} KiB");
    toolset.close().await;
}

#[tokio::test]
async fn a_50_mb_answer_ends_the_connection_with_the_limit_in_the_error() {
    let toolset = McpToolset::connect(
        server("huge")
            .max_message_bytes(1024 * 1024)
            .call_timeout(Some(Duration::from_secs(10))),
    )
    .await
    .expect("connects");
    let pid = toolset.server_pid().expect("a child");
    let tool = toolset.tools()[0].clone();
    let before = rss_kib();
    let started = Instant::now();
    let run = call_tool(tool, json!({})).await;
    assert!(
        started.elapsed() < Duration::from_secs(10),
        "{:?}",
        started.elapsed()
    );
    assert!(
        run.error_text()
            .contains("the server sent a message longer than 1048576 bytes"),
        "{}",
        run.error_text()
    );
    let grown = rss_kib().saturating_sub(before);
    assert!(grown < 20 * 1024, "the test process grew by {grown} KiB");
    assert_gone(pid).await;
}

#[tokio::test]
async fn structured_content_that_breaks_the_output_schema_is_an_error() {
    let (toolset, tool) = connect("bad-output").await;
    let run = call_tool(tool, json!({})).await;
    let error = run.error_text();
    assert!(
        error.starts_with("MCP server `hostile`: the structuredContent of tool mcp__hostile__poke does not match its output schema:"),
        "{error}"
    );
    assert!(error.contains("temperature"), "{error}");
    toolset.close().await;
}

#[tokio::test]
async fn malformed_json_rpc_ends_the_connection_with_a_clear_error() {
    let (toolset, tool) = connect("malformed").await;
    let pid = toolset.server_pid().expect("a child");
    let started = Instant::now();
    let run = call_tool(tool, json!({})).await;
    assert!(started.elapsed() < Duration::from_secs(3));
    let error = run.error_text();
    assert!(
        error.contains("the server wrote a line to stdout that is not a JSON-RPC message"),
        "{error}"
    );
    assert_gone(pid).await;
}

#[tokio::test]
async fn a_server_that_ignores_sigterm_is_killed_with_its_process_group() {
    let (toolset, tool) = connect("ignores-sigterm").await;
    let pid = toolset.server_pid().expect("a child");
    let run = call_tool(tool, json!({})).await;
    assert_eq!(run.text(), "still here");
    let started = Instant::now();
    toolset.close().await;
    // stdin closed (ignored), SIGTERM (ignored), SIGKILL: three grace periods at most.
    assert!(
        started.elapsed() < Duration::from_secs(2),
        "{:?}",
        started.elapsed()
    );
    assert_gone(pid).await;
}

#[tokio::test]
async fn dropping_everything_kills_the_server() {
    let (toolset, tool) = connect("ignores-sigterm").await;
    let pid = toolset.server_pid().expect("a child");
    drop(toolset);
    // A tool handed out keeps the connection.
    assert!(alive(i32::try_from(pid).expect("a pid")));
    assert_eq!(
        call_tool(tool.clone(), json!({})).await.text(),
        "still here"
    );
    drop(tool);
    assert_gone(pid).await;
}

#[tokio::test]
async fn invalid_arguments_get_pis_text_and_are_never_sent() {
    let (toolset, tool) = connect("dies").await;
    // The server would die on any call that reached it.
    let run = call_tool(tool.clone(), json!({"how": 3, "extra": true})).await;
    assert!(
        run.error_text()
            .starts_with("Validation failed for tool \"mcp__hostile__poke\":"),
        "{}",
        run.error_text()
    );
    assert!(
        toolset
            .server_pid()
            .is_some_and(|pid| alive(i32::try_from(pid).expect("a pid")))
    );
    toolset.close().await;
}

#[tokio::test]
async fn a_changed_definition_is_refused_until_the_host_accepts_it() {
    let toolset = McpToolset::connect(server("changes"))
        .await
        .expect("connects");
    let mut changes = toolset.changes();
    changes.borrow_and_update();
    let tool = toolset.tools()[0].clone();
    assert_eq!(
        tool.spec().description,
        "Pokes the hostile server (version 1)."
    );
    assert_eq!(call_tool(tool.clone(), json!({})).await.text(), "poked");
    // The server changed the description and said so: the refresh runs in the background.
    tokio::time::timeout(Duration::from_secs(3), changes.changed())
        .await
        .expect("a refresh")
        .expect("the toolset lives");
    let refused = call_tool(tool.clone(), json!({})).await;
    assert!(
        refused
            .error_text()
            .contains("changed its description or schema since it was approved"),
        "{}",
        refused.error_text()
    );
    let pending = toolset.pending_changes();
    assert_eq!(pending.len(), 1);
    assert_eq!(pending[0].name, "mcp__hostile__poke");
    assert_eq!(
        pending[0].description,
        "Pokes the hostile server (version 2)."
    );
    // The toolset still offers the approved definition.
    assert_eq!(
        toolset.tools()[0].spec().description,
        "Pokes the hostile server (version 1)."
    );
    assert!(toolset.accept_change("mcp__hostile__poke"));
    assert!(toolset.pending_changes().is_empty());
    let accepted = toolset.tools()[0].clone();
    assert_eq!(
        accepted.spec().description,
        "Pokes the hostile server (version 2)."
    );
    assert_eq!(call_tool(accepted, json!({})).await.text(), "poked");
    // The old tool object stays refused.
    assert!(call_tool(tool, json!({})).await.is_error());
    toolset.close().await;
}

#[tokio::test]
async fn untrusted_annotations_are_not_believed_and_trusted_ones_are() {
    let (untrusted, tool) = connect("well").await;
    let effects = &tool.spec().annotations;
    assert!(effects.needs_approval());
    assert!(effects.effective_destructive() && effects.effective_open_world());
    untrusted.close().await;

    let trusted = McpToolset::connect(server("well").trusted(true))
        .await
        .expect("connects");
    let tool = trusted.tools()[0].clone();
    assert!(tool.spec().annotations.is_read_only());
    assert!(!tool.spec().annotations.needs_approval());
    trusted.close().await;
}

#[tokio::test]
async fn a_program_that_does_not_exist_is_a_clear_connect_error() {
    let error = McpToolset::connect(McpServer::stdio(
        "nothing",
        "/nonexistent/mcp-server",
        ["x"],
    ))
    .await
    .expect_err("no such program");
    assert_eq!(error.server(), "nothing");
    assert!(
        error
            .to_string()
            .starts_with("MCP server `nothing`: cannot start `/nonexistent/mcp-server x`:"),
        "{error}"
    );
}

#[tokio::test]
async fn filters_and_prefixes_name_the_tools() {
    let only = McpToolset::connect(server("well").include(["poke"]).prefix("h_"))
        .await
        .expect("connects");
    assert_eq!(only.tools()[0].name(), "h_poke");
    only.close().await;
    let none = McpToolset::connect(server("well").exclude(["poke"]))
        .await
        .expect("connects");
    assert!(none.tools().is_empty());
    none.close().await;
}

/// At 2026-07-28 a list change arrives on the `subscriptions/listen` stream the toolset
/// opened (this server sends it nowhere else), and refreshes the toolset as
/// `notifications/tools/list_changed` does at 2025-11-25.
#[tokio::test]
async fn a_stateless_servers_list_change_arrives_on_subscriptions_listen() {
    let toolset = McpToolset::connect(server("grows-stateless"))
        .await
        .expect("connects");
    assert_eq!(toolset.protocol_version(), "2026-07-28");
    let names = |toolset: &McpToolset| {
        let mut names: Vec<String> = toolset
            .tools()
            .iter()
            .map(|tool| tool.name().to_owned())
            .collect();
        names.sort();
        names
    };
    assert_eq!(names(&toolset), ["mcp__hostile__poke"]);
    let mut changes = toolset.changes();
    changes.borrow_and_update();
    let poke = toolset.tools()[0].clone();
    assert_eq!(call_tool(poke, json!({})).await.text(), "poked");
    tokio::time::timeout(Duration::from_secs(3), changes.changed())
        .await
        .expect("a refresh, woken by the subscription's notification")
        .expect("the toolset lives");
    assert_eq!(
        names(&toolset),
        ["mcp__hostile__grown", "mcp__hostile__poke"]
    );
    let grown = toolset
        .tools()
        .into_iter()
        .find(|tool| tool.name() == "mcp__hostile__grown")
        .expect("grown is offered");
    assert_eq!(call_tool(grown, json!({})).await.text(), "grown");
    toolset.close().await;
}
