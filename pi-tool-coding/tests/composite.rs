//! A composite tool over the coding pack (issue 30): `refactor` reaches `grep`, `read`
//! and `edit`, and calls them through its context, so each of its steps is a call of the
//! agent, under the same approval policy as the model's own calls: the read-only `grep`
//! and `read` run unasked, the `edit` is asked about, and a refusal reaches `refactor` as
//! the text the model would have read.

use std::path::PathBuf;
use std::sync::{Arc, Mutex};

use pi_tool::agent::{Agent, AgentOptions, ApprovalPolicy, RunPolicy};
use pi_tool::context::{ExtensionContext, ExtensionUi};
use pi_tool::model::{AssistantContent, Message};
use pi_tool::testing::{FauxModel, FauxTurn};
use pi_tool::{ToolError, async_trait, json, pi_tool};

#[pi_tool::params]
pub struct RefactorParams {
    /// The file to change (absolute).
    pub path: String,
    /// The exact text to replace.
    pub old: String,
    /// What to put in its place.
    pub new: String,
}

/// Replace a text in a file after finding it with grep and reading the file.
#[pi_tool(reaches = ["grep", "read", "edit"])]
async fn refactor(params: RefactorParams, ctx: ExtensionContext) -> Result<String, ToolError> {
    let found = ctx
        .call_tool(
            "grep",
            json!({ "pattern": params.old, "path": params.path, "literal": true }),
        )
        .await?;
    let matches = found.text_content().lines().count();
    let before = ctx
        .call_tool("read", json!({ "path": params.path }))
        .await?;
    if !before.text_content().contains(&params.old) {
        return Err(ToolError::new(format!(
            "{} does not contain the text",
            params.path
        )));
    }
    let edited = ctx
        .call_tool(
            "edit",
            json!({ "path": params.path, "edits": [{ "oldText": params.old, "newText": params.new }] }),
        )
        .await
        .map_err(|e| ToolError::new(format!("edit refused: {}", e.message())))?;
    Ok(format!(
        "{matches} match(es); {}",
        edited.text_content().lines().next().unwrap_or_default()
    ))
}

/// Says yes to `refactor`, and to `edit` only if allowed; records what it was asked.
struct Ui {
    allow_edit: bool,
    asked: Mutex<Vec<String>>,
}

#[async_trait]
impl ExtensionUi for Ui {
    async fn confirm(&self, title: &str, _message: &str) -> bool {
        if let Ok(mut asked) = self.asked.lock() {
            asked.push(title.to_owned());
        }
        title != "Run edit?" || self.allow_edit
    }
}

struct Dir(PathBuf);

impl Drop for Dir {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.0);
    }
}

async fn run(allow_edit: bool) -> (Vec<String>, String, String) {
    let dir = std::env::temp_dir().join(format!(
        "pi-tool-coding-composite-{allow_edit}-{}",
        std::process::id()
    ));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    let dir = Dir(std::fs::canonicalize(dir).unwrap());
    let file = dir.0.join("lib.rs");
    std::fs::write(&file, "fn old_name() {}\nfn main() { old_name() }\n").unwrap();
    let mut tools = pi_tool_coding::pack().tools();
    tools.push(pi_tool::IntoAgentTool::into_agent_tool(Refactor));
    let ui = Arc::new(Ui {
        allow_edit,
        asked: Mutex::new(Vec::new()),
    });
    let approval = ApprovalPolicy::new().ui(ui.clone());
    let agent = Agent::new(
        AgentOptions::new(Arc::new(FauxModel::new(vec![
            FauxTurn::new(vec![AssistantContent::tool_call(
                "call_1",
                "refactor",
                json!({ "path": file.display().to_string(), "old": "fn old_name() {}", "new": "fn new_name() {}" }),
            )]),
            FauxTurn::text("done"),
        ])))
        .model(FauxModel::model())
        .tools(tools)
        .policy(RunPolicy::new().before_tool_call(Arc::new(approval))),
    );
    agent.prompt("rename old_name").await.unwrap();
    let result: String = agent
        .messages()
        .iter()
        .filter_map(Message::as_tool_result)
        .flat_map(|r| {
            r.content
                .iter()
                .filter_map(|c| c.as_text())
                .map(str::to_owned)
        })
        .collect();
    let asked = ui.asked.lock().map(|a| a.clone()).unwrap_or_default();
    let text = std::fs::read_to_string(&file).unwrap();
    (asked, result, text)
}

#[tokio::test]
async fn refactor_runs_its_steps_under_the_approval_policy() {
    let (asked, result, text) = run(true).await;
    // `refactor` (declares nothing) and its `edit` were asked about; `grep` and `read`
    // are read-only and were not.
    assert_eq!(asked, ["Run refactor?", "Run edit?"]);
    assert!(
        result.starts_with("1 match(es); Successfully replaced"),
        "{result}"
    );
    assert_eq!(text, "fn new_name() {}\nfn main() { old_name() }\n");
}

#[tokio::test]
async fn a_refused_edit_reaches_the_composite_tool_and_nothing_changes() {
    let (asked, result, text) = run(false).await;
    assert_eq!(asked, ["Run refactor?", "Run edit?"]);
    assert!(result.starts_with("edit refused: "), "{result}");
    assert_eq!(text, "fn old_name() {}\nfn main() { old_name() }\n");
}
