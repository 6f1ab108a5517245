//! `PackServer::served_tools`: the handle that changes the served list (add, replace,
//! remove, names), its refusals, and `tools.listChanged` declared only once it has been
//! taken. The notifications themselves reach pi-tool-mcp's client over stdio and HTTP in
//! `examples/mcp-test-servers/tests/served_tools.rs`.

use pi_tool::{IntoAgentTool, ToolError, pi_tool, tool_pack};
use pi_tool_mcp::PackServer;
use pi_tool_mcp::rmcp::ServerHandler;

/// Says one.
#[pi_tool]
async fn one() -> Result<String, ToolError> {
    Ok("1".to_owned())
}

/// Says two.
#[pi_tool]
async fn two() -> Result<String, ToolError> {
    Ok("2".to_owned())
}

/// Says two, better.
#[pi_tool(name = "two")]
async fn two_again() -> Result<String, ToolError> {
    Ok("2!".to_owned())
}

/// A name MCP allows and pi-tool does not.
#[pi_tool]
async fn dotted() -> Result<String, ToolError> {
    Ok(String::new())
}

fn listed(server: &PackServer) -> Vec<(String, String)> {
    server
        .listed_tools()
        .into_iter()
        .map(|t| {
            (
                t.name.to_string(),
                t.description.unwrap_or_default().to_string(),
            )
        })
        .collect()
}

#[test]
fn list_changed_is_declared_once_the_handle_is_taken() {
    let server = PackServer::new(tool_pack![One]);
    let tools = server.get_info().capabilities.tools.expect("tools");
    assert_eq!(tools.list_changed, None);
    let _handle = server.served_tools();
    let tools = server.get_info().capabilities.tools.expect("tools");
    assert_eq!(tools.list_changed, Some(true));
}

#[test]
fn the_handle_adds_replaces_and_removes_tools() {
    let server = PackServer::new(tool_pack![One]);
    let served = server.served_tools();
    assert_eq!(served.names(), ["one"]);

    served.add(Two.into_agent_tool()).unwrap();
    assert_eq!(served.names(), ["one", "two"]);
    assert!(served.contains("two"));
    // Every clone of the server (each HTTP session) sees the same list.
    let session = server.clone();
    assert_eq!(
        listed(&session)[1],
        ("two".to_owned(), "Says two.".to_owned())
    );

    let error = served.add(TwoAgain.into_agent_tool()).unwrap_err();
    assert!(error.to_string().contains("served already"), "{error}");

    served.replace(TwoAgain.into_agent_tool()).unwrap();
    assert_eq!(
        listed(&session),
        [
            ("one".to_owned(), "Says one.".to_owned()),
            ("two".to_owned(), "Says two, better.".to_owned())
        ]
    );

    assert!(served.remove("one"));
    assert!(!served.remove("one"));
    assert_eq!(served.names(), ["two"]);
    let error = served.replace(One.into_agent_tool()).unwrap_err();
    assert!(error.to_string().contains("no tool named"), "{error}");
}

#[test]
fn a_name_that_breaks_the_rule_is_refused() {
    struct Renamed(pi_tool::ToolSpec, std::sync::Arc<dyn pi_tool::AgentTool>);
    #[pi_tool::async_trait]
    impl pi_tool::AgentTool for Renamed {
        fn spec(&self) -> &pi_tool::ToolSpec {
            &self.0
        }
        async fn execute(
            &self,
            call: pi_tool::ToolInvocation<'_>,
        ) -> Result<pi_tool::JsonToolResult, ToolError> {
            self.1.execute(call).await
        }
    }
    let inner = Dotted.into_agent_tool();
    let mut spec = inner.spec().clone();
    spec.name = "a.b".to_owned();
    let server = PackServer::new(tool_pack![One]);
    let error = server
        .served_tools()
        .add(std::sync::Arc::new(Renamed(spec, inner)))
        .unwrap_err();
    assert!(error.to_string().contains("a.b"), "{error}");
    assert_eq!(server.served_tools().names(), ["one"]);
}
