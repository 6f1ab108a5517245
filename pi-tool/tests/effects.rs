//! Declared effects drive the runtime: the approval policy asks before destructive or
//! open-world calls and never for read-only ones (with and without a UI, as an agent
//! hook and as a session handler), and a read-only tool never forces its batch to run
//! sequentially (docs/differences-from-pi.md §"read-only calls").

use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use pi_tool::agent::{Agent, AgentOptions, ApprovalPolicy, WithoutUi};
use pi_tool::context::ExtensionUi;
use pi_tool::model::{AssistantContent, Message};
use pi_tool::session::{AgentSession, FnExtension};
use pi_tool::testing::{FauxModel, FauxTurn};
use pi_tool::{IntoAgentTool, Tool, ToolAnnotations, ToolError, async_trait, json, pi_tool};

static RUNNING: AtomicUsize = AtomicUsize::new(0);
static PEAK: AtomicUsize = AtomicUsize::new(0);

async fn overlap_probe() {
    let now = RUNNING.fetch_add(1, Ordering::SeqCst) + 1;
    PEAK.fetch_max(now, Ordering::SeqCst);
    tokio::time::sleep(Duration::from_millis(30)).await;
    RUNNING.fetch_sub(1, Ordering::SeqCst);
}

/// Reads the forecast.
#[pi_tool(read_only, open_world, title = "Forecast")]
async fn forecast() -> Result<String, ToolError> {
    Ok("sunny".to_owned())
}

/// Deletes a file.
#[pi_tool(destructive, open_world = false)]
async fn delete_file() -> Result<String, ToolError> {
    Ok("deleted".to_owned())
}

/// Appends a line to a local log.
#[pi_tool(destructive = false, idempotent, open_world = false)]
async fn append_log() -> Result<String, ToolError> {
    Ok("appended".to_owned())
}

/// Does something undeclared.
#[pi_tool]
async fn mystery() -> Result<String, ToolError> {
    Ok("done".to_owned())
}

/// Reads a rate-limited index; sequential, but read-only.
#[pi_tool(read_only, execution_mode = "sequential")]
async fn read_index() -> Result<String, ToolError> {
    overlap_probe().await;
    Ok("read".to_owned())
}

/// Writes the index; sequential and not read-only.
#[pi_tool(execution_mode = "sequential")]
async fn write_index() -> Result<String, ToolError> {
    overlap_probe().await;
    Ok("written".to_owned())
}

#[test]
fn the_macro_declares_effects_as_constants() {
    assert_eq!(
        Forecast::ANNOTATIONS,
        ToolAnnotations::new()
            .read_only(true)
            .open_world(true)
            .title("Forecast")
    );
    assert_eq!(
        DeleteFile::ANNOTATIONS,
        ToolAnnotations::new().destructive(true).open_world(false)
    );
    assert_eq!(Mystery::ANNOTATIONS, ToolAnnotations::NONE);
    let tool = Forecast.into_agent_tool();
    assert!(tool.spec().annotations.is_read_only());
}

fn turn(names: &[&str]) -> FauxTurn {
    FauxTurn::new(
        names
            .iter()
            .enumerate()
            .map(|(i, n)| AssistantContent::tool_call(format!("call_{i}"), *n, json!({})))
            .collect(),
    )
}

fn results(messages: &[Message]) -> Vec<(String, String, bool)> {
    messages
        .iter()
        .filter_map(Message::as_tool_result)
        .map(|r| {
            let text = r.content.iter().filter_map(|c| c.as_text()).collect();
            (r.tool_name.to_string(), text, r.is_error)
        })
        .collect()
}

fn all_tools() -> Vec<Arc<dyn pi_tool::AgentTool>> {
    vec![
        Forecast.into_agent_tool(),
        DeleteFile.into_agent_tool(),
        AppendLog.into_agent_tool(),
        Mystery.into_agent_tool(),
    ]
}

const ALL: &[&str] = &["forecast", "delete_file", "append_log", "mystery"];

/// A UI that records what it was asked and answers `answer`.
struct Recorder {
    asked: Mutex<Vec<(String, String)>>,
    answer: bool,
}

#[async_trait]
impl ExtensionUi for Recorder {
    async fn confirm(&self, title: &str, message: &str) -> bool {
        self.asked
            .lock()
            .unwrap()
            .push((title.to_owned(), message.to_owned()));
        self.answer
    }
}

async fn run_agent(policy: ApprovalPolicy) -> Vec<(String, String, bool)> {
    let agent = Agent::new(
        AgentOptions::new(Arc::new(FauxModel::new(vec![turn(ALL)])))
            .tools(all_tools())
            .before_tool_call(Arc::new(policy)),
    );
    agent.prompt("go").await.unwrap();
    results(&agent.messages())
}

#[tokio::test]
async fn without_a_ui_the_policy_blocks_what_needs_approval_and_runs_read_only_tools() {
    let results = run_agent(ApprovalPolicy::new()).await;
    assert_eq!(
        results,
        vec![
            ("forecast".into(), "sunny".into(), false),
            (
                "delete_file".into(),
                "delete_file requires interactive approval".into(),
                true
            ),
            // Not destructive, not open world: nothing to ask.
            ("append_log".into(), "appended".into(), false),
            // Declares nothing: MCP's defaults (destructive, open world) ask.
            (
                "mystery".into(),
                "mystery requires interactive approval".into(),
                true
            ),
        ]
    );
}

#[tokio::test]
async fn without_a_ui_the_policy_can_allow_by_configuration() {
    let results = run_agent(ApprovalPolicy::new().without_ui(WithoutUi::Allow)).await;
    assert!(
        results.iter().all(|(_, _, is_error)| !is_error),
        "{results:?}"
    );
}

#[tokio::test]
async fn with_a_ui_the_policy_asks_only_for_calls_that_need_approval() {
    let ui = Arc::new(Recorder {
        asked: Mutex::new(Vec::new()),
        answer: false,
    });
    let results = run_agent(ApprovalPolicy::new().ui(ui.clone())).await;
    let asked = ui.asked.lock().unwrap().clone();
    let titles: Vec<&str> = asked.iter().map(|(t, _)| t.as_str()).collect();
    assert_eq!(titles, ["Run delete_file?", "Run mystery?"]);
    assert_eq!(
        asked[0].1,
        "delete_file may change or delete data.\nArguments: {}"
    );
    assert!(asked[1].1.contains("declares no effects"), "{}", asked[1].1);
    assert_eq!(results[1].1, "User denied delete_file");
    assert!(results[1].2);
    assert!(!results[0].2 && !results[2].2);
}

#[tokio::test]
async fn a_session_handler_asks_the_sessions_ui() {
    let ui = Arc::new(Recorder {
        asked: Mutex::new(Vec::new()),
        answer: true,
    });
    let policy = ApprovalPolicy::new().tools(&all_tools());
    let session = AgentSession::builder(Arc::new(FauxModel::new(vec![turn(ALL)])))
        .agent_tool(Forecast.into_agent_tool())
        .agent_tool(DeleteFile.into_agent_tool())
        .agent_tool(AppendLog.into_agent_tool())
        .agent_tool(Mystery.into_agent_tool())
        .ui(ui.clone())
        .extension(FnExtension::new("approval", move |api| {
            api.on_tool_call(policy.clone())
        }))
        .build()
        .unwrap();
    session.prompt("go").await.unwrap();
    let asked = ui.asked.lock().unwrap().len();
    assert_eq!(asked, 2);
    let results = results(&session.agent().messages());
    assert!(
        results.iter().all(|(_, _, is_error)| !is_error),
        "{results:?}"
    );

    // The same session without a UI blocks, as Pi's custom-tool page's gate does.
    let policy = ApprovalPolicy::new().tools(&all_tools());
    let session = AgentSession::builder(Arc::new(FauxModel::new(vec![turn(ALL)])))
        .agent_tool(Forecast.into_agent_tool())
        .agent_tool(DeleteFile.into_agent_tool())
        .agent_tool(AppendLog.into_agent_tool())
        .agent_tool(Mystery.into_agent_tool())
        .extension(FnExtension::new("approval", move |api| {
            api.on_tool_call(policy.clone())
        }))
        .build()
        .unwrap();
    session.prompt("go").await.unwrap();
    let blocked: Vec<String> = results_of(&session)
        .into_iter()
        .filter(|r| r.2)
        .map(|r| r.1)
        .collect();
    assert_eq!(
        blocked,
        [
            "delete_file requires interactive approval",
            "mystery requires interactive approval"
        ]
    );
}

fn results_of(session: &AgentSession) -> Vec<(String, String, bool)> {
    results(&session.agent().messages())
}

/// Scheduling: one test, since both halves share the overlap probe.
#[tokio::test]
async fn read_only_calls_never_force_a_batch_to_run_sequentially() {
    let run = |names: &'static [&'static str]| async move {
        RUNNING.store(0, Ordering::SeqCst);
        PEAK.store(0, Ordering::SeqCst);
        let agent = Agent::new(
            AgentOptions::new(Arc::new(FauxModel::new(vec![turn(names)]))).tools(vec![
                ReadIndex.into_agent_tool(),
                WriteIndex.into_agent_tool(),
            ]),
        );
        agent.prompt("go").await.unwrap();
        assert_eq!(results(&agent.messages()).len(), names.len());
        PEAK.load(Ordering::SeqCst)
    };
    // Sequential-mode but read-only: the batch runs in parallel.
    assert_eq!(run(&["read_index", "read_index", "read_index"]).await, 3);
    // Pi's rule is kept for a tool that is not read-only: one of it serialises all.
    assert_eq!(run(&["read_index", "write_index", "read_index"]).await, 1);
    assert_eq!(run(&["write_index", "write_index"]).await, 1);
}

#[test]
fn pack_exports_carry_effects_where_the_shape_has_a_slot() {
    use pi_tool::profiles::{ApiShape, Profile, export};
    let tools = vec![Forecast.into_agent_tool(), Mystery.into_agent_tool()];
    let mcp = export(&tools, Profile::Mcp, ApiShape::Mcp).to_json();
    assert_eq!(
        mcp[0]["annotations"],
        json!({"title": "Forecast", "readOnlyHint": true, "openWorldHint": true})
    );
    assert!(mcp[1].get("annotations").is_none(), "{}", mcp[1]);
    // Anthropic's tool entries have no slot for effects: unchanged.
    let anthropic = export(&tools, Profile::Anthropic, ApiShape::AnthropicMessages).to_json();
    assert!(anthropic[0].get("annotations").is_none());
}

/// A hook that asks about every call: the one shape of a pending decision.
struct AskAll;

#[async_trait]
impl pi_tool::agent::BeforeToolCall for AskAll {
    async fn before_tool_call(
        &self,
        ctx: pi_tool::agent::BeforeToolCallContext<'_>,
        _signal: &pi_tool::AbortSignal,
    ) -> Result<pi_tool::agent::BeforeToolCallResult, ToolError> {
        Ok(pi_tool::agent::BeforeToolCallResult::ask(
            pi_tool::agent::ApprovalRequest::new(
                format!("Run {}?", ctx.tool_call.name),
                "it changes things",
            ),
        ))
    }
}

#[tokio::test]
async fn a_question_nobody_can_wait_for_blocks_the_call_and_says_so() {
    let agent = Agent::new(
        AgentOptions::new(Arc::new(FauxModel::new(vec![turn(&["delete_file"])])))
            .tools(all_tools())
            .before_tool_call(Arc::new(AskAll)),
    );
    agent.prompt("go").await.unwrap();
    assert_eq!(
        results(&agent.messages()),
        vec![(
            "delete_file".into(),
            "delete_file needs approval (Run delete_file?), and nothing here can wait for the decision"
                .into(),
            true
        )]
    );
}
