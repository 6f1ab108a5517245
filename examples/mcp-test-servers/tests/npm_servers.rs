//! McpToolset against MCP servers nobody here wrote: `@modelcontextprotocol/server-everything`
//! and `@modelcontextprotocol/server-filesystem`, pinned in `npm/package-lock.json` and
//! installed by the test (`npm ci`, see weather-mcp's `tests/npm/mod.rs`, reused here).
//! Their tools are called through an `Agent` on the faux model, as a model would call
//! them. Each server starts once for this test binary (one shared runtime holds the
//! connections). Without Node the tests are skipped loudly on a developer machine and
//! fail under CI.

#[path = "../../weather-mcp/tests/npm/mod.rs"]
mod npm;

use std::path::PathBuf;
use std::sync::{Arc, Mutex, OnceLock};
use std::time::{Duration, Instant};

use pi_tool::agent::{Agent, AgentEvent, AgentOptions};
use pi_tool::model::{AssistantContent, Message, ToolResultMessage};
use pi_tool::testing::{FauxModel, FauxTurn, call_tool};
use pi_tool::{AbortController, AgentTool, Content, Value, async_trait, json};
use pi_tool_mcp::client::{
    InputHandler, InputRequest, InputResponse, McpServer, McpToolset, SamplingHandler,
};
#[allow(deprecated)] // SEP-2577 deprecates sampling later; these servers still send it.
use pi_tool_mcp::rmcp::model::{CreateMessageRequestParams, CreateMessageResult, SamplingMessage};
use tokio::runtime::Runtime;
use tokio::sync::OnceCell;

fn runtime() -> &'static Runtime {
    static RUNTIME: OnceLock<Runtime> = OnceLock::new();
    RUNTIME.get_or_init(|| {
        tokio::runtime::Builder::new_multi_thread()
            .worker_threads(2)
            .enable_all()
            .build()
            .expect("a runtime")
    })
}

fn packages() -> Option<PathBuf> {
    npm::installed("npm", "the MCP client tests against npm servers")
}

/// Answers the everything server's elicitation form: the name only.
struct Answers;

#[async_trait]
impl InputHandler for Answers {
    async fn elicit(&self, request: InputRequest) -> InputResponse {
        assert_eq!(request.server, "everything");
        if request.message.contains("decline") {
            return InputResponse::Decline;
        }
        InputResponse::Accept(json!({"name": "Ada Lovelace"}))
    }
}

async fn everything() -> Option<&'static McpToolset> {
    static TOOLSET: OnceCell<Option<McpToolset>> = OnceCell::const_new();
    TOOLSET
        .get_or_init(|| async {
            let dir = packages()?;
            let bin = dir.join("node_modules/.bin/mcp-server-everything");
            let toolset = McpToolset::connect(
                McpServer::stdio("everything", bin, ["stdio"])
                    .input_handler(Arc::new(Answers))
                    .call_timeout(Some(Duration::from_secs(20))),
            )
            .await
            .expect("the everything server connects");
            Some(toolset)
        })
        .await
        .as_ref()
}

fn tool(toolset: &McpToolset, name: &str) -> Arc<dyn AgentTool> {
    toolset
        .tools()
        .into_iter()
        .find(|t| t.name() == name)
        .unwrap_or_else(|| {
            let names: Vec<String> = toolset
                .tools()
                .iter()
                .map(|t| t.name().to_owned())
                .collect();
            panic!("no tool {name} in {names:?}")
        })
}

/// One exchange through an Agent on the faux model: it calls `tool` with `args`, then
/// ends; returns the tool result message and the progress texts seen.
async fn agent_call(
    tools: Vec<Arc<dyn AgentTool>>,
    tool: &str,
    args: Value,
) -> (Arc<ToolResultMessage>, Vec<String>) {
    let model = Arc::new(FauxModel::new(vec![
        FauxTurn::new(vec![AssistantContent::tool_call("call-1", tool, args)]),
        FauxTurn::text("done"),
    ]));
    let agent = Agent::new(
        AgentOptions::new(model)
            .model(FauxModel::model())
            .tools(tools),
    );
    let progress = Arc::new(Mutex::new(Vec::new()));
    let seen = progress.clone();
    agent.subscribe(move |event, _signal| {
        if let AgentEvent::ToolExecutionUpdate { partial_result, .. } = event {
            seen.lock()
                .expect("not poisoned")
                .push(partial_result.text_content());
        }
        Ok(())
    });
    agent.prompt("go").await.expect("the run ends");
    let result = agent
        .messages()
        .into_iter()
        .find_map(|m| match m {
            Message::ToolResult(r) => Some(r),
            _ => None,
        })
        .expect("a tool result");
    let progress = progress.lock().expect("not poisoned").clone();
    (result, progress)
}

fn text(result: &ToolResultMessage) -> String {
    result
        .content
        .iter()
        .filter_map(Content::as_text)
        .collect::<Vec<_>>()
        .join("\n")
}

#[test]
fn everything_echo_and_sum_through_an_agent_with_coercion() {
    runtime().block_on(async {
        let Some(everything) = everything().await else {
            return;
        };
        let (result, _) = agent_call(
            everything.tools(),
            "mcp__everything__echo",
            json!({"message": "hello"}),
        )
        .await;
        assert!(!result.is_error);
        assert_eq!(text(&result), "Echo: hello");
        // Pi's coercion: "2" for a number becomes 2 before the server sees it.
        let (result, _) = agent_call(
            everything.tools(),
            "mcp__everything__get-sum",
            json!({"a": "2", "b": 3}),
        )
        .await;
        assert!(!result.is_error, "{}", text(&result));
        assert!(text(&result).contains('5'), "{}", text(&result));
    });
}

#[test]
fn everything_invalid_arguments_get_pis_text() {
    runtime().block_on(async {
        let Some(everything) = everything().await else {
            return;
        };
        let (result, _) = agent_call(
            everything.tools(),
            "mcp__everything__get-sum",
            json!({"a": "two"}),
        )
        .await;
        assert!(result.is_error);
        assert!(
            text(&result).starts_with("Validation failed for tool \"mcp__everything__get-sum\":"),
            "{}",
            text(&result)
        );
    });
}

#[test]
fn everything_progress_reaches_on_update() {
    runtime().block_on(async {
        let Some(everything) = everything().await else {
            return;
        };
        let (result, progress) = agent_call(
            everything.tools(),
            "mcp__everything__trigger-long-running-operation",
            json!({"duration": 1, "steps": 4}),
        )
        .await;
        assert!(!result.is_error, "{}", text(&result));
        assert!(text(&result).contains("Long running operation completed"));
        assert!(progress.iter().any(|p| p == "progress 4/4"), "{progress:?}");
    });
}

#[test]
fn everything_cancellation_ends_the_call_and_the_connection_stays() {
    runtime().block_on(async {
        let Some(everything) = everything().await else {
            return;
        };
        let long = tool(
            everything,
            "mcp__everything__trigger-long-running-operation",
        );
        let controller = AbortController::new();
        let signal = controller.signal();
        tokio::spawn(async move {
            tokio::time::sleep(Duration::from_millis(300)).await;
            controller.abort();
        });
        let started = Instant::now();
        let run = call_tool(long.clone(), json!({"duration": 30, "steps": 30}))
            .signal(signal)
            .await;
        assert!(run.error().is_abort());
        assert!(started.elapsed() < Duration::from_secs(2));
        let again = call_tool(long, json!({"duration": 0.1, "steps": 1})).await;
        assert!(again.text().contains("completed"), "{}", again.text());
    });
}

#[test]
fn everything_errors_images_structured_content_and_resources() {
    runtime().block_on(async {
        let Some(everything) = everything().await else {
            return;
        };
        // isError: the server's own text.
        let run = call_tool(
            tool(everything, "mcp__everything__gzip-file-as-resource"),
            json!({"name": "x", "data": "ftp://example.com/file"}),
        )
        .await;
        assert!(
            run.error_text().contains("Unsupported URL protocol"),
            "{}",
            run.error_text()
        );

        let image = call_tool(
            tool(everything, "mcp__everything__get-tiny-image"),
            json!({}),
        )
        .await;
        let blocks = &image.json_result().content;
        assert!(
            blocks
                .iter()
                .any(|b| matches!(b, Content::Image { mime_type, .. } if mime_type == "image/png")),
            "{blocks:?}"
        );

        let structured = call_tool(
            tool(everything, "mcp__everything__get-structured-content"),
            json!({"location": "Chicago"}),
        )
        .await;
        let details = structured.json_result().details.as_ref().expect("details");
        assert!(details.as_value()["temperature"].is_number(), "{details:?}");

        let reference = call_tool(
            tool(everything, "mcp__everything__get-resource-reference"),
            json!({"resourceType": "Text", "resourceId": 1}),
        )
        .await;
        assert!(
            reference
                .json_result()
                .content
                .iter()
                .any(|b| matches!(b, Content::Resource { .. })),
            "{:?}",
            reference.json_result().content
        );
        let links = call_tool(
            tool(everything, "mcp__everything__get-resource-links"),
            json!({"count": 2}),
        )
        .await;
        assert!(
            links
                .json_result()
                .content
                .iter()
                .any(|b| matches!(b, Content::ResourceLink(_))),
            "{:?}",
            links.json_result().content
        );
    });
}

#[test]
fn everything_annotations_of_an_untrusted_server_are_not_believed() {
    runtime().block_on(async {
        let Some(everything) = everything().await else {
            return;
        };
        // It claims read-only, not destructive, closed world.
        let long = tool(
            everything,
            "mcp__everything__trigger-long-running-operation",
        );
        let effects = &long.spec().annotations;
        assert!(!effects.is_read_only());
        assert!(effects.effective_destructive() && effects.effective_open_world());
        assert_eq!(long.spec().label, "Trigger Long Running Operation Tool");
    });
}

#[test]
fn everything_elicitation_arrives_by_list_changed_and_the_host_answers() {
    runtime().block_on(async {
        let Some(everything) = everything().await else {
            return;
        };
        // Registered after the handshake, announced by notifications/tools/list_changed.
        let deadline = Instant::now() + Duration::from_secs(10);
        let mut changes = everything.changes();
        while !everything
            .tools()
            .iter()
            .any(|t| t.name() == "mcp__everything__trigger-elicitation-request")
        {
            assert!(
                Instant::now() < deadline,
                "the conditional tools never appeared"
            );
            let _ = tokio::time::timeout(Duration::from_millis(500), changes.changed()).await;
        }
        let run = call_tool(
            tool(everything, "mcp__everything__trigger-elicitation-request"),
            json!({}),
        )
        .await;
        assert!(run.text().contains("Name: Ada Lovelace"), "{}", run.text());
    });
}

#[test]
fn filesystem_tools_list_and_read_through_an_agent() {
    runtime().block_on(async {
        let Some(dir) = packages() else { return };
        let root = std::env::temp_dir().join(format!("pi-tool-mcp-fs-{}", std::process::id()));
        std::fs::create_dir_all(&root).expect("a temp dir");
        std::fs::write(root.join("notes.txt"), "MCP works.\n").expect("a file");
        let root = root.canonicalize().expect("canonical");
        let fs = McpToolset::connect(
            McpServer::stdio(
                "fs",
                dir.join("node_modules/.bin/mcp-server-filesystem"),
                [root.as_os_str()],
            )
            .exclude(["write_file", "edit_file", "move_file", "create_directory"]),
        )
        .await
        .expect("the filesystem server connects");
        let names: Vec<String> = fs.tools().iter().map(|t| t.name().to_owned()).collect();
        assert!(
            names.contains(&"mcp__fs__read_text_file".to_owned()),
            "{names:?}"
        );
        assert!(
            !names.contains(&"mcp__fs__write_file".to_owned()),
            "{names:?}"
        );

        let (listing, _) = agent_call(
            fs.tools(),
            "mcp__fs__list_directory",
            json!({"path": root.to_string_lossy()}),
        )
        .await;
        assert!(!listing.is_error, "{}", text(&listing));
        assert!(
            text(&listing).contains("[FILE] notes.txt"),
            "{}",
            text(&listing)
        );

        let (read, _) = agent_call(
            fs.tools(),
            "mcp__fs__read_text_file",
            json!({"path": root.join("notes.txt").to_string_lossy()}),
        )
        .await;
        assert_eq!(text(&read), "MCP works.\n");

        // Outside the allowed directory: the server's own error text.
        let (outside, _) = agent_call(
            fs.tools(),
            "mcp__fs__read_text_file",
            json!({"path": "/etc/hostname"}),
        )
        .await;
        assert!(outside.is_error);
        assert!(
            text(&outside).contains("Access denied"),
            "{}",
            text(&outside)
        );
        fs.close().await;
        let _ = std::fs::remove_dir_all(&root);
    });
}

/// The host's model for the everything server's sampling requests: a fixed answer, and
/// a record of who asked what.
#[derive(Default)]
struct HostModel(Mutex<Vec<(String, String, Option<String>)>>);

#[allow(deprecated)]
#[async_trait]
impl SamplingHandler for HostModel {
    async fn create_message(
        &self,
        server: &str,
        request: CreateMessageRequestParams,
    ) -> Result<CreateMessageResult, String> {
        let prompt = request
            .messages
            .iter()
            .flat_map(|m| m.content.clone().into_vec())
            .filter_map(|block| block.as_text().map(|t| t.text.clone()))
            .collect::<Vec<_>>()
            .join("\n");
        self.0.lock().expect("not poisoned").push((
            server.to_owned(),
            prompt,
            request.system_prompt.clone(),
        ));
        Ok(CreateMessageResult::new(
            SamplingMessage::assistant_text("Sampled by the host's model."),
            "host-model".to_owned(),
        ))
    }
}

/// Sampling is the host's to give: without a handler the client does not announce it
/// (and the everything server then offers no sampling tool); with one, the server's
/// `sampling/createMessage` reaches it, and its answer reaches the tool's result.
#[test]
fn everything_sampling_reaches_the_hosts_model_only_when_it_gave_one() {
    runtime().block_on(async {
        let Some(everything) = everything().await else {
            return;
        };
        assert!(
            !everything
                .tools()
                .iter()
                .any(|t| t.name() == "mcp__everything__trigger-sampling-request"),
            "no sampling tool without the capability"
        );
        let Some(dir) = packages() else { return };
        let model = Arc::new(HostModel::default());
        let sampling = McpToolset::connect(
            McpServer::stdio(
                "everything",
                dir.join("node_modules/.bin/mcp-server-everything"),
                ["stdio"],
            )
            .sampling_handler(model.clone())
            .call_timeout(Some(Duration::from_secs(20))),
        )
        .await
        .expect("the everything server connects");
        let (result, _) = agent_call(
            sampling.tools(),
            "mcp__everything__trigger-sampling-request",
            json!({"prompt": "Say hello.", "maxTokens": 20}),
        )
        .await;
        assert!(!result.is_error, "{}", text(&result));
        assert!(
            text(&result).contains("Sampled by the host's model."),
            "{}",
            text(&result)
        );
        assert!(text(&result).contains("host-model"), "{}", text(&result));
        let asked = model.0.lock().expect("not poisoned").clone();
        assert_eq!(asked.len(), 1, "{asked:?}");
        assert_eq!(asked[0].0, "everything");
        assert!(asked[0].1.contains("Say hello."), "{asked:?}");
        assert_eq!(
            asked[0].2.as_deref(),
            Some("You are a helpful test server.")
        );
        sampling.close().await;
    });
}
