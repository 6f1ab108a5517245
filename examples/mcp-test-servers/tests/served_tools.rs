//! `PackServer::served_tools`: a pack server whose tool list changes while it serves
//! (`growing-pack-mcp`) tells pi-tool-mcp's own client, which refreshes (`McpToolset`),
//! over stdio and streamable HTTP, at 2025-11-25 (`notifications/tools/list_changed`)
//! and 2026-07-28 (`subscriptions/listen`).

use std::io::{BufRead, BufReader};
use std::process::{Child, Command, Stdio};
use std::time::Duration;

use pi_tool::json;
use pi_tool::testing::call_tool;
use pi_tool_mcp::client::{McpServer, McpToolset, Revision};

const GROWING: &str = env!("CARGO_BIN_EXE_growing-pack-mcp");

/// The HTTP server process, killed when the test ends.
struct Server(Child);

impl Drop for Server {
    fn drop(&mut self) {
        let _ = self.0.kill();
        let _ = self.0.wait();
    }
}

fn start_http() -> (Server, String) {
    let mut child = Command::new(GROWING)
        .args(["--http", "127.0.0.1:0"])
        .stdout(Stdio::piped())
        .spawn()
        .expect("growing-pack-mcp starts");
    let mut url = String::new();
    BufReader::new(child.stdout.take().expect("stdout"))
        .read_line(&mut url)
        .expect("it prints its URL");
    (Server(child), url.trim().to_owned())
}

fn names(toolset: &McpToolset) -> Vec<String> {
    let mut names: Vec<String> = toolset
        .tools()
        .iter()
        .map(|tool| tool.name().to_owned())
        .collect();
    names.sort();
    names
}

/// Calls the tool `name` of `toolset`, then waits for the refresh its change causes.
async fn call_and_wait_for_refresh(toolset: &McpToolset, name: &str, answer: &str) {
    let mut changes = toolset.changes();
    changes.borrow_and_update();
    let tool = toolset
        .tools()
        .into_iter()
        .find(|tool| tool.name() == name)
        .unwrap_or_else(|| panic!("{name} is offered"));
    assert_eq!(call_tool(tool, json!({})).await.text(), answer);
    tokio::time::timeout(Duration::from_secs(5), changes.changed())
        .await
        .unwrap_or_else(|_| panic!("a refresh after {name}"))
        .expect("the toolset lives");
}

async fn grows_and_shrinks(server: McpServer, revision: &str) {
    let toolset = McpToolset::connect(server.trusted(true))
        .await
        .expect("connects");
    assert_eq!(toolset.protocol_version(), revision);
    assert_eq!(names(&toolset), ["mcp__pack__grow", "mcp__pack__shrink"]);

    call_and_wait_for_refresh(&toolset, "mcp__pack__grow", "grew").await;
    assert_eq!(
        names(&toolset),
        ["mcp__pack__grow", "mcp__pack__grown", "mcp__pack__shrink"],
        "{revision}"
    );
    let grown = toolset
        .tools()
        .into_iter()
        .find(|tool| tool.name() == "mcp__pack__grown")
        .expect("grown is offered");
    assert_eq!(call_tool(grown, json!({})).await.text(), "grown");

    call_and_wait_for_refresh(&toolset, "mcp__pack__shrink", "shrank").await;
    assert_eq!(
        names(&toolset),
        ["mcp__pack__grow", "mcp__pack__shrink"],
        "{revision}"
    );
    toolset.close().await;
}

#[tokio::test]
async fn a_changed_list_refreshes_the_client_over_stdio() {
    for (revision, version) in [
        (Revision::Initialize, "2025-11-25"),
        (Revision::Stateless, "2026-07-28"),
    ] {
        let server = McpServer::stdio("pack", GROWING, Vec::<String>::new()).revision(revision);
        grows_and_shrinks(server, version).await;
    }
}

#[tokio::test]
async fn a_changed_list_refreshes_the_client_over_http() {
    for (revision, version) in [
        (Revision::Initialize, "2025-11-25"),
        (Revision::Stateless, "2026-07-28"),
    ] {
        // A server per revision: each test starts from the pack's own list.
        let (_server, url) = start_http();
        let server = McpServer::http("pack", url.as_str()).revision(revision);
        grows_and_shrinks(server, version).await;
    }
}
