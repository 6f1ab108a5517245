//! pi-tool's side of bench/durable/compare-langgraph.sh: N approval cycles on a SQLite
//! store, each as a host runs it: a run that suspends at a destructive call, the
//! decision, a fresh agent that resumes and finishes (the store is opened once, as a
//! process would). Prints one JSON line: `{"impl": "pi-tool", "cycles", "median_us",
//! "mean_us"}`.

use std::sync::Arc;
use std::time::Instant;

use pi_tool::agent::{Agent, AgentOptions, ApprovalPolicy, DurableRuns, RunOutcome};
use pi_tool::durable::{Decision, DurableStore, Verdict};
use pi_tool::model::{AssistantContent, Message};
use pi_tool::testing::{FauxModel, FauxTurn};
use pi_tool::{IntoAgentTool, ToolError, json, pi_tool};

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

fn agent(store: Arc<dyn DurableStore>, turn: FauxTurn) -> Agent {
    Agent::new(
        AgentOptions::new(Arc::new(FauxModel::new(vec![turn]).without_recording()))
            .tools(vec![Pay.into_agent_tool()])
            .before_tool_call(Arc::new(ApprovalPolicy::new().defer()))
            .durable(DurableRuns::new(store)),
    )
}

#[tokio::main(flavor = "current_thread")]
async fn main() -> Result<(), Box<dyn std::error::Error>> {
    let cycles: usize = std::env::args().nth(1).map_or(Ok(200), |n| n.parse())?;
    let dir = std::env::temp_dir().join(format!("interrupt-cycles-{}", std::process::id()));
    std::fs::create_dir_all(&dir)?;
    let store = pi_tool_store::open(&format!("sqlite:{}", dir.join("runs.db").display())).await?;
    let mut times = Vec::with_capacity(cycles);
    for i in 0..cycles + 10 {
        let run = format!("run-{i}");
        let start = Instant::now();
        let call = AssistantContent::tool_call("call-1", "pay", json!({"to": "bob"}));
        let first = agent(store.clone(), FauxTurn::new(vec![call]));
        let RunOutcome::Suspended(s) = first.run(&run, vec![Message::user_text("pay")]).await?
        else {
            return Err("the run did not suspend".into());
        };
        let d = Decision::new(&run, "call-1", &s.pending[0].digest, Verdict::Approve);
        store.decide(&d, &d.audit_event()).await?;
        let second = agent(store.clone(), FauxTurn::text("done"));
        match second.resume_run(&run).await? {
            RunOutcome::Finished { .. } => {}
            other => return Err(format!("not finished: {other:?}").into()),
        }
        if i >= 10 {
            times.push(start.elapsed().as_secs_f64() * 1e6);
        }
    }
    std::fs::remove_dir_all(&dir)?;
    let mean = times.iter().sum::<f64>() / times.len() as f64;
    times.sort_by(f64::total_cmp);
    let median = times[times.len() / 2];
    println!(
        "{}",
        json!({"impl": "pi-tool", "cycles": cycles, "median_us": (median * 10.0).round() / 10.0, "mean_us": (mean * 10.0).round() / 10.0})
    );
    Ok(())
}
