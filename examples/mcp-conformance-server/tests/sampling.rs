//! Sampling end to end between pi-tool's own server and client: the fixture's
//! `test_sampling` (a `#[pi_tool]` tool that asks the calling client's model) called
//! through `McpToolset` over streamable HTTP, with a host model
//! (`McpServer::sampling_handler`). At 2025-11-25 the server sends
//! `sampling/createMessage`; at 2026-07-28 the call answers with an input-required result
//! whose `createMessage` the client answers and resumes. Without a handler the client does
//! not announce sampling, and the tool says so.

use std::sync::{Arc, Mutex};

use pi_tool::testing::call_tool;
use pi_tool::{AgentTool, async_trait, json};
use pi_tool_mcp::client::{McpServer, McpToolset, Revision, SamplingHandler};
#[allow(deprecated)] // SEP-2577 deprecates sampling later; both revisions served have it.
use pi_tool_mcp::rmcp::model::{CreateMessageRequestParams, CreateMessageResult, SamplingMessage};

/// The host's model: one fixed answer, and the prompts it was given.
#[derive(Default)]
struct HostModel(Mutex<Vec<String>>);

#[allow(deprecated)]
#[async_trait]
impl SamplingHandler for HostModel {
    async fn create_message(
        &self,
        server: &str,
        request: CreateMessageRequestParams,
    ) -> Result<CreateMessageResult, String> {
        assert_eq!(server, "fixture");
        let prompt = request
            .messages
            .iter()
            .flat_map(|m| m.content.clone().into_vec())
            .filter_map(|block| block.as_text().map(|t| t.text.clone()))
            .collect::<Vec<_>>()
            .join("\n");
        self.0.lock().expect("not poisoned").push(prompt);
        Ok(CreateMessageResult::new(
            SamplingMessage::assistant_text("Hello from the host."),
            "host-model".to_owned(),
        ))
    }
}

/// The fixture server on a free loopback port, served by this test's runtime.
async fn fixture() -> String {
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0")
        .await
        .expect("a free port");
    let url = format!("http://{}/mcp", listener.local_addr().expect("bound"));
    tokio::spawn(mcp_conformance_server::server().serve_http(listener));
    url
}

async fn test_sampling(
    url: &str,
    revision: Revision,
    model: Option<Arc<HostModel>>,
) -> (McpToolset, Arc<dyn AgentTool>) {
    let mut server = McpServer::http("fixture", url).revision(revision);
    if let Some(model) = model {
        server = server.sampling_handler(model);
    }
    let toolset = McpToolset::connect(server)
        .await
        .expect("the fixture connects");
    let tool = toolset
        .tools()
        .into_iter()
        .find(|t| t.name() == "mcp__fixture__test_sampling")
        .expect("the fixture offers test_sampling");
    (toolset, tool)
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_hosts_model_answers_the_servers_sampling_at_both_revisions() {
    let url = fixture().await;
    for (revision, version) in [
        (Revision::Initialize, "2025-11-25"),
        (Revision::Stateless, "2026-07-28"),
    ] {
        let model = Arc::new(HostModel::default());
        let (toolset, tool) = test_sampling(&url, revision, Some(model.clone())).await;
        assert_eq!(toolset.protocol_version(), version);
        let result = call_tool(tool, json!({"prompt": "Say hello."})).await;
        assert!(!result.is_error(), "{version}: {}", result.error_text());
        assert_eq!(
            result.text(),
            "LLM response: Hello from the host.",
            "{version}"
        );
        assert_eq!(
            *model.0.lock().expect("not poisoned"),
            ["Say hello."],
            "{version}: the prompt reached the host's model once"
        );
        toolset.close().await;
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn without_a_host_model_sampling_is_declined_at_both_revisions() {
    let url = fixture().await;
    for revision in [Revision::Initialize, Revision::Stateless] {
        let (toolset, tool) = test_sampling(&url, revision, None).await;
        let result = call_tool(tool, json!({"prompt": "Say hello."})).await;
        assert!(result.is_error(), "{revision:?}: {}", result.text());
        // The server checks the capability first: the tool's own text at 2025-11-25,
        // -32021 (missing client capability) at 2026-07-28.
        let why = result.error_text();
        assert!(
            why.contains("`sampling` capability") || why.contains("-32021"),
            "{revision:?}: {why}"
        );
        toolset.close().await;
    }
}
