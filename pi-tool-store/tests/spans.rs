//! The call spans of a durable run carry the approval's digest and decision: `pending`
//! where the run suspends, `approve` where the resumed call runs. (A binary of its own:
//! a recorder installed by one test of a binary whose other tests record nothing races
//! `tracing`'s callsite cache.)

use std::sync::{Arc, Mutex};

use pi_tool::agent::{Agent, AgentOptions, ApprovalPolicy, DurableRuns, RunOutcome};
use pi_tool::durable::{Decision, Verdict};
use pi_tool::model::{AssistantContent, Message};
use pi_tool::testing::{FauxModel, FauxTurn};
use pi_tool::{IntoAgentTool, ToolError, json, pi_tool};
use tracing::field::{Field, Visit};
use tracing_subscriber::layer::{Context, SubscriberExt};
use tracing_subscriber::registry::LookupSpan;

#[pi_tool::params]
struct PayParams {
    /// Who is paid.
    to: String,
}

/// Pays.
#[pi_tool(destructive)]
async fn pay(p: PayParams) -> Result<String, ToolError> {
    Ok(format!("paid {}", p.to))
}

type Seen = Arc<Mutex<Vec<(String, String)>>>;

struct Recorder(Seen);

struct Fields<'a>(&'a Seen);

impl Visit for Fields<'_> {
    fn record_str(&mut self, field: &Field, value: &str) {
        if field.name().starts_with("pi_tool.approval.") {
            self.0
                .lock()
                .unwrap()
                .push((field.name().to_owned(), value.to_owned()));
        }
    }

    fn record_debug(&mut self, _: &Field, _: &dyn std::fmt::Debug) {}
}

impl<S: tracing::Subscriber + for<'a> LookupSpan<'a>> tracing_subscriber::Layer<S> for Recorder {
    fn on_record(
        &self,
        _: &tracing::span::Id,
        values: &tracing::span::Record<'_>,
        _: Context<'_, S>,
    ) {
        values.record(&mut Fields(&self.0));
    }
}

fn agent(store: Arc<dyn pi_tool::durable::DurableStore>, turn: FauxTurn) -> Agent {
    Agent::new(
        AgentOptions::new(Arc::new(FauxModel::new(vec![turn])))
            .tools(vec![Pay.into_agent_tool()])
            .before_tool_call(Arc::new(ApprovalPolicy::new().defer()))
            .durable(DurableRuns::new(store)),
    )
}

#[tokio::test]
async fn the_call_spans_carry_the_digest_and_the_decision() {
    let seen: Seen = Arc::default();
    let _guard = tracing::subscriber::set_default(
        tracing_subscriber::registry().with(Recorder(seen.clone())),
    );
    let dir = std::env::temp_dir().join(format!("pi-tool-store-spans-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let store = pi_tool_store::open(&format!("sqlite:{}", dir.join("s.db").display()))
        .await
        .unwrap();
    let call = AssistantContent::tool_call("call-1", "pay", json!({"to": "bob"}));
    let first = agent(store.clone(), FauxTurn::new(vec![call]));
    let RunOutcome::Suspended(s) = first
        .run("r", vec![Message::user_text("pay")])
        .await
        .unwrap()
    else {
        panic!("not suspended")
    };
    let digest = s.pending[0].digest.clone();
    let d = Decision::new("r", "call-1", &digest, Verdict::Approve);
    store.decide(&d, &d.audit_event()).await.unwrap();
    agent(store.clone(), FauxTurn::text("done"))
        .resume_run("r")
        .await
        .unwrap();
    let seen = seen.lock().unwrap().clone();
    let expected: Vec<(String, String)> = [
        ("pi_tool.approval.digest", digest.as_str()),
        ("pi_tool.approval.decision", "pending"),
        ("pi_tool.approval.digest", digest.as_str()),
        ("pi_tool.approval.decision", "approve"),
    ]
    .iter()
    .map(|(k, v)| ((*k).to_owned(), (*v).to_owned()))
    .collect();
    assert_eq!(seen, expected);
    let _ = std::fs::remove_dir_all(&dir);
}
