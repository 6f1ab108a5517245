//! Asking to widen the sandbox in a durable run (issue 32), on SQLite, with a tool that
//! runs its program through `pi_tool::safety::Command` in the kernel sandbox.
//!
//! The widening is asked after the call ran once, in the middle of its execution, where
//! a run cannot suspend: a deferring policy's `Ask` counts as unanswered (the run
//! finishes, the model reads the violation, nothing outside the root was written), and
//! a policy with a UI is answered in memory (the re-run writes the file). The question
//! and its answer are events in the call's `execute_tool` span. (A binary of its own: a
//! recorder installed by one test of a binary whose other tests record nothing races
//! `tracing`'s callsite cache.)
//!
//! Under `CI` a kernel that cannot enforce the sandbox fails the test; elsewhere it is
//! reported and the test returns.

use std::path::PathBuf;
use std::sync::{Arc, Mutex};

use pi_tool::agent::{Agent, AgentOptions, ApprovalPolicy, DurableRuns, RunOutcome, RunPolicy};
use pi_tool::context::ExtensionUi;
use pi_tool::model::{AssistantContent, Message};
use pi_tool::safety::{Command, Sandbox};
use pi_tool::testing::{FauxModel, FauxTurn};
use pi_tool::{AbortSignal, IntoAgentTool, ToolError, async_trait, json, pi_tool};
use tracing::field::{Field, Visit};
use tracing_subscriber::layer::{Context, SubscriberExt};
use tracing_subscriber::registry::LookupSpan;

#[pi_tool::params]
struct SaveParams {
    /// The project root the program may write.
    root: String,
    /// Where it writes (absolute).
    target: String,
}

/// Saves a line to a file, through `sh` in the project's sandbox.
#[pi_tool(destructive)]
async fn save(p: SaveParams, signal: AbortSignal) -> Result<String, ToolError> {
    let output = Command::new("sh")
        .arg("-c")
        .arg(format!("echo saved > '{}' && echo done", p.target))
        .current_dir(&p.root)
        .sandbox(Sandbox::for_root(&p.root))
        .run(&signal)
        .await?
        .error_if_failed()?;
    Ok(output.stdout.text)
}

struct Yes;

#[async_trait]
impl ExtensionUi for Yes {
    async fn confirm(&self, _title: &str, _message: &str) -> bool {
        true
    }
}

/// The `pi_tool::sandbox` events of the widening, each with its span's name.
type Seen = Arc<Mutex<Vec<(String, String)>>>;

struct Recorder(Seen);

struct Message_(String);

impl Visit for Message_ {
    fn record_debug(&mut self, field: &Field, value: &dyn std::fmt::Debug) {
        if field.name() == "message" {
            self.0 = format!("{value:?}");
        }
    }
}

impl<S: tracing::Subscriber + for<'a> LookupSpan<'a>> tracing_subscriber::Layer<S> for Recorder {
    fn on_event(&self, event: &tracing::Event<'_>, ctx: Context<'_, S>) {
        if event.metadata().target() != "pi_tool::sandbox" {
            return;
        }
        let mut message = Message_(String::new());
        event.record(&mut message);
        let span = ctx
            .event_span(event)
            .map(|span| span.name().to_owned())
            .unwrap_or_default();
        self.0.lock().unwrap().push((span, message.0));
    }
}

struct Fixture {
    base: PathBuf,
    root: PathBuf,
    target: PathBuf,
}

impl Fixture {
    fn new(name: &str) -> Option<Fixture> {
        let base =
            std::env::temp_dir().join(format!("pi-store-widen-{name}-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&base);
        std::fs::create_dir_all(base.join("root")).unwrap();
        std::fs::create_dir_all(base.join("outside")).unwrap();
        let base = std::fs::canonicalize(base).unwrap();
        if let Err(error) = Sandbox::for_root(base.join("root")).check() {
            assert!(
                std::env::var_os("CI").is_none(),
                "CI is set and the kernel cannot enforce the sandbox: {error}"
            );
            eprintln!("NOT RUN: the kernel cannot enforce the sandbox: {error}");
            return None;
        }
        Some(Fixture {
            root: base.join("root"),
            target: base.join("outside/saved.txt"),
            base,
        })
    }

    /// One durable run of one `save` call, widening asked to `approval`: whether it
    /// finished, and the text the model read.
    async fn run(&self, approval: ApprovalPolicy) -> (bool, String) {
        let store = pi_tool_store::open(&format!("sqlite:{}", self.base.join("s.db").display()))
            .await
            .unwrap();
        let call = AssistantContent::tool_call(
            "call-1",
            "save",
            json!({ "root": self.root, "target": self.target }),
        );
        let agent = Agent::new(
            AgentOptions::new(Arc::new(FauxModel::new(vec![
                FauxTurn::new(vec![call]),
                FauxTurn::text("done"),
            ])))
            .model(FauxModel::model())
            .tools(vec![Save.into_agent_tool()])
            .policy(RunPolicy::new().widen_sandbox(Arc::new(approval)))
            .durable(DurableRuns::new(store)),
        );
        let outcome = agent
            .run("run-1", vec![Message::user_text("save")])
            .await
            .unwrap();
        let text = agent
            .messages()
            .iter()
            .filter_map(Message::as_tool_result)
            .flat_map(|r| r.content.iter().filter_map(|c| c.as_text()))
            .collect();
        (matches!(outcome, RunOutcome::Finished { .. }), text)
    }
}

impl Drop for Fixture {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.base);
    }
}

#[tokio::test]
async fn a_durable_run_answers_the_widening_in_memory_or_not_at_all() {
    let seen: Seen = Arc::default();
    let _guard = tracing::subscriber::set_default(
        tracing_subscriber::registry().with(Recorder(seen.clone())),
    );

    // Deferred: nothing can wait for the answer once the call ran; the run does not
    // suspend, and the model reads the violation.
    let Some(f) = Fixture::new("deferred") else {
        return;
    };
    let (finished, text) = f.run(ApprovalPolicy::new().defer()).await;
    assert!(finished);
    assert!(!f.target.exists());
    assert!(
        text.contains(&format!(
            "[sandbox] the sandbox refused a write outside the project root: {}",
            f.target.display()
        )),
        "{text}"
    );
    let events = std::mem::take(&mut *seen.lock().unwrap());
    let asks: Vec<_> = events
        .iter()
        .filter(|(_, message)| message.starts_with("asking to widen the sandbox"))
        .collect();
    assert_eq!(asks.len(), 1, "{events:?}");
    assert_eq!(asks[0].0, "execute_tool");
    assert!(
        asks[0].1.contains(&format!(
            "make {} writable",
            f.target.parent().unwrap().display()
        )),
        "{events:?}"
    );
    assert!(
        events.contains(&(
            "execute_tool".to_owned(),
            "the widening of the sandbox was unanswered".to_owned()
        )),
        "{events:?}"
    );
    drop(f);

    // With a UI: answered in memory, the re-run writes the file.
    let Some(f) = Fixture::new("ui") else {
        return;
    };
    let (finished, text) = f.run(ApprovalPolicy::new().ui(Arc::new(Yes))).await;
    assert!(finished);
    assert_eq!(std::fs::read_to_string(&f.target).unwrap(), "saved\n");
    assert!(text.starts_with("done"), "{text}");
    assert!(
        text.contains("[sandbox] Approved for this call only"),
        "{text}"
    );
    let events = seen.lock().unwrap().clone();
    assert!(
        events.contains(&(
            "execute_tool".to_owned(),
            "the widening of the sandbox was approved".to_owned()
        )),
        "{events:?}"
    );
}
