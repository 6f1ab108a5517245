//! An `AgentSession` takes an MCP server as a source of tools
//! (`AgentSessionBuilder::toolset` with an `McpToolset`), next to its custom tools: the
//! tools are registered under their prefixed names, `all_tools` reports the server, the
//! allowlist and `exclude_tools` name them, and a `notifications/tools/list_changed`
//! registers the server's new list by Pi's rules for a tool registered at run time.
//! The server is `hostile-mcp grows`: after the first call of `poke` it also offers
//! `grown` and says its list changed.

use std::sync::Arc;
use std::time::{Duration, Instant};

use pi_tool::model::AssistantContent;
use pi_tool::session::{AgentSession, ToolSource};
use pi_tool::testing::{FauxModel, FauxTurn};
use pi_tool::{ToolError, json, pi_tool};
use pi_tool_mcp::client::{McpServer, McpToolset};

const HOSTILE: &str = env!("CARGO_BIN_EXE_hostile-mcp");

/// A local tool next to the server's.
#[pi_tool]
async fn local() -> Result<String, ToolError> {
    Ok("local".to_owned())
}

async fn growing() -> McpToolset {
    McpToolset::connect(McpServer::stdio("hostile", HOSTILE, ["grows"]))
        .await
        .expect("hostile-mcp connects")
}

fn call(id: &str, name: &str) -> FauxTurn {
    FauxTurn::new(vec![AssistantContent::tool_call(id, name, json!({}))])
}

/// The text and error flag of each tool result, in order.
fn results(session: &AgentSession) -> Vec<(String, bool)> {
    session
        .agent()
        .messages()
        .iter()
        .filter_map(|m| m.as_tool_result())
        .map(|r| {
            let text = r
                .content
                .iter()
                .filter_map(|c| c.as_text())
                .collect::<String>();
            (text, r.is_error)
        })
        .collect()
}

/// Waits (at most 10 s) until `done` holds: the refresh after `list_changed` runs in the
/// background.
async fn until(what: &str, done: impl Fn() -> bool) {
    let start = Instant::now();
    while !done() {
        assert!(
            start.elapsed() < Duration::from_secs(10),
            "{what} did not happen within 10 s"
        );
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
}

#[tokio::test]
async fn the_servers_tools_are_a_source_and_a_new_one_becomes_active() {
    let toolset = growing().await;
    let model = Arc::new(FauxModel::new(vec![
        call("c1", "mcp__hostile__poke"),
        FauxTurn::text("poked"),
        call("c2", "mcp__hostile__grown"),
        FauxTurn::text("grown"),
    ]));
    let session = AgentSession::builder(model)
        .custom_tool(Local)
        .toolset(Arc::new(toolset.clone()))
        .build()
        .expect("the session builds");
    assert_eq!(session.active_tool_names(), ["local", "mcp__hostile__poke"]);
    let poke = session
        .all_tools()
        .into_iter()
        .find(|t| t.name() == "mcp__hostile__poke")
        .expect("registered");
    assert_eq!(poke.source, ToolSource::Toolset);
    assert_eq!(poke.source_path(), "<mcp:hostile>");
    assert_eq!(poke.owner.to_string(), "<mcp:hostile>");

    session.prompt("poke it").await.expect("the run ends");
    until("the new tool's registration", || {
        session.active_tool_names().len() == 3
    })
    .await;
    // Pi's run-time registration: the previous active names, then the new one.
    assert_eq!(
        session.active_tool_names(),
        ["local", "mcp__hostile__poke", "mcp__hostile__grown"]
    );
    session
        .prompt("now the new one")
        .await
        .expect("the run ends");
    assert_eq!(
        results(&session),
        [("poked".to_owned(), false), ("grown".to_owned(), false)]
    );
    toolset.close().await;
}

#[tokio::test]
async fn the_allowlist_and_exclude_tools_name_mcp_tools_by_their_prefixed_names() {
    // An allowlist without the new tool: it never exists in the session.
    let toolset = growing().await;
    let session = AgentSession::builder(Arc::new(FauxModel::new(vec![
        call("c1", "mcp__hostile__poke"),
        FauxTurn::text("poked"),
    ])))
    .custom_tool(Local)
    .toolset(Arc::new(toolset.clone()))
    .tools(["mcp__hostile__poke"])
    .build()
    .expect("the session builds");
    assert_eq!(session.active_tool_names(), ["mcp__hostile__poke"]);
    let mut changes = toolset.changes();
    changes.borrow_and_update();
    session.prompt("poke it").await.expect("the run ends");
    tokio::time::timeout(Duration::from_secs(10), changes.changed())
        .await
        .expect("the server's list changed")
        .expect("the toolset lives");
    assert_eq!(toolset.tools().len(), 2, "the toolset has both");
    let names: Vec<String> = session
        .all_tools()
        .iter()
        .map(|t| t.name().to_owned())
        .collect();
    assert_eq!(names, ["mcp__hostile__poke"]);
    assert_eq!(session.active_tool_names(), ["mcp__hostile__poke"]);
    toolset.close().await;

    // An allowlist that names the tool before the server offers it: active once offered.
    // `exclude_tools` removes the first tool for good.
    let toolset = growing().await;
    let session = AgentSession::builder(Arc::new(FauxModel::new(vec![])))
        .toolset(Arc::new(toolset.clone()))
        .tools(["mcp__hostile__poke", "mcp__hostile__grown"])
        .exclude_tools(["mcp__hostile__poke"])
        .build()
        .expect("the session builds");
    assert!(session.active_tool_names().is_empty());
    assert!(session.all_tools().is_empty());
    // The host calls the excluded tool itself, so that the server grows.
    let poke = toolset.tools()[0].clone();
    assert_eq!(
        pi_tool::testing::call_tool(poke, json!({})).await.text(),
        "poked"
    );
    until("the allowed tool's registration", || {
        !session.active_tool_names().is_empty()
    })
    .await;
    assert_eq!(session.active_tool_names(), ["mcp__hostile__grown"]);
    toolset.close().await;
}

#[tokio::test]
async fn a_server_tool_named_like_a_custom_tool_is_refused_at_build() {
    let toolset = McpToolset::connect(McpServer::stdio("hostile", HOSTILE, ["well"]).prefix(""))
        .await
        .expect("hostile-mcp connects");
    /// Named like the server's tool.
    #[pi_tool]
    async fn poke() -> Result<String, ToolError> {
        Ok("local poke".to_owned())
    }
    let error = AgentSession::builder(Arc::new(FauxModel::default()))
        .custom_tool(Poke)
        .toolset(Arc::new(toolset.clone()))
        .build()
        .expect_err("two owners of `poke`");
    assert_eq!(
        error.to_string(),
        "tool name \"poke\" is registered twice: by custom tools and by <mcp:hostile>"
    );
    toolset.close().await;
}
